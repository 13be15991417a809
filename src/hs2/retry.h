// The one way the HS2 layer re-runs work that failed retryably, shared by the executor's
// statements, the prior state's SELECTs and a session's connect attempts. Re-running is safe for
// all three: statements are idempotent, SELECTs read-only, and a failed connect sent nothing.
//
// Rules:
//  * Retryable means Hs2Error::retryable(): transport trouble, a lost session, admission control,
//    Kudu "Timed out" / "Service unavailable" / "Network error". Anything else is passed to
//    on_failure and rethrown at once.
//  * Up to max_retries re-runs after the first try. Before re-run n (1-based) it sleeps
//    first_backoff * 2^(n-1), capped at 30 s, plus 0-25 % jitter so that sessions that failed
//    together do not come back together. When the re-runs are used up, the last error goes to
//    on_failure with `exhausted` set, and is rethrown.
//  * on_failure sees every error that ends the run and may throw a replacement carrying context
//    (window, table, ...); if it returns, the original exception is rethrown unchanged.
//  * With a session, run(session, work, on_failure) also keeps the session usable: a session that
//    is not connected is connected before the try (on a re-run that counts as a reconnect); after
//    a lost session (kSessionLost) it is dropped, so that the re-run opens a new one; transport
//    trouble has already dropped the connection (the session does that itself); a transient
//    server error (admission, Kudu timeout) keeps the session.
//  * A stop request (util/stop.h: SIGINT, SIGTERM, --deadline) ends the back-off early and
//    throws StopError before the next try.
//  * Thread-safe: the executor's workers share one policy, and its counters sum over all of them.
//
// Worked example (what the executor does per statement, --max_retries 5, --retry_backoff_ms 500):
//   RetryPolicy retry(5, std::chrono::milliseconds(500));
//   Hs2DmlResult r = retry.run(
//       session, [&](SqlSession& s) { return s.execute(sql); },
//       [&](const RetryFailure& f) {
//         throw Hs2Error(f.error.kind(), f.exhausted ? "giving up after ... retries: ..." : ...);
//       });
//   // try 1: "Invalid session id" (kSessionLost): session dropped, sleep 500-625 ms
//   // try 2: connection reset (kTransient, already dropped): sleep 1000-1250 ms
//   // try 3: session reconnected, statement runs: r returned
//   // retry.counters() == {.retries = 2, .reconnects = 2}
#pragma once

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "hs2/clock.h"
#include "hs2/error.h"
#include "hs2/session.h"

namespace atlas2kudu {

struct RetryCounters {
  std::uint64_t retries = 0;     // re-runs after retryable failures
  std::uint64_t reconnects = 0;  // sessions connected for a re-run
};

// What the policy does about a retryable failure, for an observer (e.g. a log line per retry):
// about to wait `backoff` before re-run `retry` after `error` (kRetrying), or a session connected
// again for re-run `retry` (kReconnected; `error` is null).
struct RetryNotice {
  enum class Kind { kRetrying, kReconnected };
  Kind kind = Kind::kRetrying;
  int retry = 0;  // 1-based
  int max_retries = 0;
  std::chrono::milliseconds backoff{0};
  const Hs2Error* error = nullptr;
};
using RetryObserver = std::function<void(const RetryNotice&)>;

// How a run ended without success, for on_failure.
struct RetryFailure {
  const Hs2Error& error;  // the last try's error
  int retries;            // re-runs made before it
  bool exhausted;         // retryable, but no re-run was left

  // How an exhausted failure starts its message: "giving up after 1 retry: <error>",
  // "giving up after 5 retries: <error>", "giving up (--max_retries 0): <error>".
  std::string giving_up() const {
    if (retries == 0) return fmt::format("giving up (--max_retries 0): {}", error.what());
    return fmt::format("giving up after {} {}: {}", retries, retries == 1 ? "retry" : "retries",
                       error.what());
  }
};

class RetryPolicy {
 public:
  static constexpr std::chrono::milliseconds kMaxBackoff{30000};

  // `sleeper` empty: really sleeps.
  RetryPolicy(int max_retries, std::chrono::milliseconds first_backoff, Sleeper sleeper = {});
  RetryPolicy(const RetryPolicy&) = delete;
  RetryPolicy& operator=(const RetryPolicy&) = delete;

  // Replaces the sleeper; not while a run is in progress.
  void set_sleeper(Sleeper sleeper);

  int max_retries() const { return max_retries_; }
  // The wait before re-run `retry` (1-based), jitter included.
  std::chrono::milliseconds backoff(int retry) const;
  RetryCounters counters() const { return {retries_.load(), reconnects_.load()}; }

  // Runs attempt() until it returns; returns what it returns.
  template <class Attempt, class OnFailure>
  std::invoke_result_t<Attempt&> run(Attempt&& attempt, OnFailure&& on_failure) {
    return run_with(
        nullptr, [&](SqlSession*) { return attempt(); }, on_failure);
  }

  // Runs work(session) until it returns, keeping the session connected (see above).
  // `observer`, if set, hears of each retry and reconnect (from the calling thread).
  template <class Work, class OnFailure>
  std::invoke_result_t<Work&, SqlSession&> run(SqlSession& session, Work&& work,
                                               OnFailure&& on_failure,
                                               const RetryObserver& observer = {}) {
    return run_with(
        &session, [&](SqlSession* s) { return work(*s); }, on_failure, observer);
  }

 private:
  template <class Attempt, class OnFailure>
  auto run_with(SqlSession* session, Attempt&& attempt, OnFailure& on_failure,
                const RetryObserver& observer = {}) {
    using Result = std::invoke_result_t<Attempt&, SqlSession*>;
    if constexpr (std::is_void_v<Result>) {
      loop(
          session, [&](SqlSession* s) { attempt(s); }, on_failure, observer);
    } else {
      std::optional<Result> result;
      loop(
          session, [&](SqlSession* s) { result.emplace(attempt(s)); }, on_failure, observer);
      return std::move(*result);
    }
  }

  // The loop itself, written once.
  void loop(SqlSession* session, const std::function<void(SqlSession*)>& attempt,
            const std::function<void(const RetryFailure&)>& on_failure,
            const RetryObserver& observer);

  int max_retries_;
  std::chrono::milliseconds first_backoff_;
  Sleeper sleeper_;
  std::atomic<std::uint64_t> retries_{0};
  std::atomic<std::uint64_t> reconnects_{0};
};

}  // namespace atlas2kudu
