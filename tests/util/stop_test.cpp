// The run's stop request: first reason wins, waits end at once, StopError's category, deadline.
#include "util/stop.h"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
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

TEST_CASE("signals: the first stops, the same one again at once is the first, a second ends") {
  // In a child process each time, since a second signal ends the process: its exit status tells
  // what the handlers did. 0: still running after the signals sent, with the stop requested.
  const auto exit_status_after = [](auto send) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      install_stop_signals();
      send();
      ::_exit(stop_requested() ? 0 : 99);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
  };
  CHECK(exit_status_after([] { ::raise(SIGTERM); }) == 0);
  // timeout(1): the same signal to the process and then to its group.
  CHECK(exit_status_after([] {
          ::raise(SIGTERM);
          ::raise(SIGTERM);
        }) == 0);
  CHECK(exit_status_after([] {
          ::raise(SIGHUP);
          ::raise(SIGHUP);
        }) == 0);
  // Another signal, or the same one after the grace: the second signal, at once.
  CHECK(exit_status_after([] {
          ::raise(SIGTERM);
          ::raise(SIGINT);
        }) == 128 + SIGINT);
  CHECK(exit_status_after([] {
          ::raise(SIGTERM);
          std::this_thread::sleep_for(kRepeatedSignalGrace + milliseconds(50));
          ::raise(SIGTERM);
        }) == 128 + SIGTERM);
  // From another thread while the first is still handled there (the handler runs in any thread).
  CHECK(exit_status_after([] {
          std::thread other([] { ::raise(SIGTERM); });
          ::raise(SIGTERM);
          other.join();
        }) == 0);
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

TEST_CASE("a stop shuts down the armed sockets after its grace: a blocked recv returns") {
  reset_stop();
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
  {
    // Armed, and blocked in recv on another thread: the stop ends the recv with end of file.
    SocketStopGuard guard(pair[0]);
    CHECK(guard.armed());
    ssize_t got = -2;
    std::thread reader([&] {
      char c;
      got = ::recv(pair[0], &c, 1, 0);
    });
    std::this_thread::sleep_for(milliseconds(50));
    const auto stopped = std::chrono::steady_clock::now();
    request_stop(StopReason::kDeadline);
    reader.join();
    CHECK(got == 0);
    // Not before the grace, in which a reply on its way could still arrive.
    CHECK(std::chrono::steady_clock::now() - stopped >= kSocketStopGrace);
  }
  reset_stop();
  // A reply within the grace ends the call as usual.
  int answered[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, answered) == 0);
  {
    SocketStopGuard guard(answered[0]);
    ssize_t got = -2;
    char c = 0;
    std::thread reader([&] { got = ::recv(answered[0], &c, 1, 0); });
    std::this_thread::sleep_for(milliseconds(50));
    request_stop(StopReason::kTerminate);
    CHECK(::send(answered[1], "y", 1, 0) == 1);
    reader.join();
    CHECK(got == 1);
    CHECK(c == 'y');
    // Armed again within the grace (the next piece of the same reply): not cut either.
    SocketStopGuard again(answered[0]);
    CHECK(::send(answered[1], "z", 1, 0) == 1);
    CHECK(::recv(answered[0], &c, 1, 0) == 1);
    CHECK(c == 'z');
  }
  reset_stop();
  request_stop(StopReason::kDeadline);
  // Armed after the grace: shut down at once.
  std::this_thread::sleep_for(kSocketStopGrace + milliseconds(500));
  int later[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, later) == 0);
  {
    SocketStopGuard guard(later[0]);
    char c;
    CHECK(::recv(later[0], &c, 1, 0) == 0);
  }
  reset_stop();
  // Disarmed: a stop leaves the socket alone.
  int kept[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, kept) == 0);
  {
    SocketStopGuard guard(kept[0]);
    guard.disarm();
    CHECK_FALSE(guard.armed());
  }
  request_stop(StopReason::kTerminate);
  CHECK(::send(kept[1], "x", 1, 0) == 1);
  char c = 0;
  CHECK(::recv(kept[0], &c, 1, 0) == 1);
  CHECK(c == 'x');
  reset_stop();
  for (int fd : {pair[0], pair[1], answered[0], answered[1], later[0], later[1], kept[0], kept[1]})
    ::close(fd);
}

TEST_SUITE_END();
