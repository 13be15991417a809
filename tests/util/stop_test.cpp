// The run's stop request: first reason wins, waits end at once, StopError's category, deadline.
#include "util/stop.h"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

TEST_SUITE_BEGIN("stop");

using namespace atlas2kudu;
using std::chrono::milliseconds;

TEST_CASE("the first stop reason wins and wakes every waiter") {
  reset_stop();
  CHECK_FALSE(stop_requested());
  CHECK_FALSE(wait_for_stop(milliseconds(1)));
  std::thread waiter([] { CHECK(wait_for_stop(std::chrono::minutes(10))); });  // ends early
  request_stop(StopReason::kTerminate);
  request_stop(StopReason::kInterrupt);
  waiter.join();
  CHECK(stop_reason() == StopReason::kTerminate);
  CHECK(wait_for_stop(std::chrono::minutes(10)));
  try {
    throw_if_stopped();
    FAIL("expected StopError");
  } catch (const StopError& e) {
    CHECK(e.category() == ErrorCategory::kTerminated);
    CHECK(std::string(e.what()) == "stopped by SIGTERM");
  }
  reset_stop();
  CHECK_NOTHROW(throw_if_stopped());
  CHECK(StopError(StopReason::kInterrupt).category() == ErrorCategory::kInterrupted);
}

TEST_CASE("a deadline requests a stop once it has passed, and not after it is gone") {
  reset_stop();
  {
    StopDeadline never(milliseconds(0), "--deadline 0");
    StopDeadline later(std::chrono::hours(1), "--deadline 1h");
    CHECK_FALSE(wait_for_stop(milliseconds(5)));
  }
  {
    StopDeadline soon(milliseconds(10), "--deadline 10ms");
    CHECK(wait_for_stop(std::chrono::minutes(1)));
  }
  CHECK(stop_reason() == StopReason::kDeadline);
  const StopError e(StopReason::kDeadline);
  CHECK(e.category() == ErrorCategory::kUnavailable);
  CHECK(std::string(e.what()) == "--deadline 10ms reached");
  reset_stop();
}

TEST_SUITE_END();
