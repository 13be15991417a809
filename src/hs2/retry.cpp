#include "hs2/retry.h"

#include <algorithm>
#include <random>

#include "util/stop.h"

namespace atlas2kudu {

RetryPolicy::RetryPolicy(int max_retries, std::chrono::milliseconds first_backoff, Sleeper sleeper)
    : max_retries_(std::max(0, max_retries)), first_backoff_(first_backoff) {
  set_sleeper(std::move(sleeper));
}

void RetryPolicy::set_sleeper(Sleeper sleeper) {
  sleeper_ = sleeper ? std::move(sleeper) : Clock::sleeper(system_clock());
}

std::chrono::milliseconds RetryPolicy::backoff(int retry) const {
  thread_local std::mt19937 jitter_rng{std::random_device{}()};
  const int doublings = std::clamp(retry - 1, 0, 16);
  const long base =
      std::min<long>(kMaxBackoff.count(), static_cast<long>(first_backoff_.count()) << doublings);
  const long jitter = base > 0 ? std::uniform_int_distribution<long>(0, base / 4)(jitter_rng) : 0;
  return std::chrono::milliseconds(base + jitter);
}

void RetryPolicy::loop(SqlSession* session, const std::function<void(SqlSession*)>& attempt,
                       const std::function<void(const RetryFailure&)>& on_failure,
                       const RetryObserver& observer) {
  for (int retries = 0;; ++retries) {
    throw_if_stopped();  // no new try once the run is asked to stop (also ends the back-off)
    try {
      if (session && !session->connected()) {
        session->connect();
        if (retries > 0) {
          ++reconnects_;
          if (observer) {
            observer(RetryNotice{RetryNotice::Kind::kReconnected, retries, max_retries_});
          }
        }
      }
      attempt(session);
      return;
    } catch (const Hs2Error& e) {
      if (!e.retryable() || retries >= max_retries_) {
        on_failure(RetryFailure{e, retries, e.retryable()});
        throw;
      }
      if (session && e.kind() == Hs2ErrorKind::kSessionLost) session->drop();
      const std::chrono::milliseconds wait = backoff(retries + 1);
      ++retries_;
      if (observer) {
        observer(RetryNotice{RetryNotice::Kind::kRetrying, retries + 1, max_retries_, wait, &e});
      }
      sleeper_(wait);
    }
  }
}

}  // namespace atlas2kudu
