// Time as the HS2 layer sees it: reading a monotonic clock and waiting. Every wait of the layer
// (retry back-off, connect back-off, HTTP Retry-After, GetOperationStatus polling) goes through a
// Sleeper or a Clock, so tests replace them and assert what was waited for instead of measuring
// wall-clock time; production uses the system clock.
//
// Example (a test clock that advances only when slept on):
//   class ManualClock final : public Clock {
//    public:
//     std::chrono::steady_clock::time_point now() override { return t_; }
//     void sleep_for(std::chrono::milliseconds d) override { slept.push_back(d); t_ += d; }
//     std::vector<std::chrono::milliseconds> slept;
//    private:
//     std::chrono::steady_clock::time_point t_{};
//   };
//   auto clock = std::make_shared<ManualClock>();
//   Hs2Session session(settings, authenticator, {.clock = clock});
//   session.execute(sql);   // the server answered RUNNING 3 times:
//                           // clock->slept == {10ms, 10ms, 10ms}
#pragma once

#include <chrono>
#include <functional>
#include <memory>

namespace atlas2kudu {

// Waits for the given time (or pretends to). May be called from several threads at once.
using Sleeper = std::function<void(std::chrono::milliseconds)>;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point now() = 0;
  virtual void sleep_for(std::chrono::milliseconds duration) = 0;

  // This clock's sleep_for as a Sleeper that keeps the clock alive.
  static Sleeper sleeper(std::shared_ptr<Clock> clock);
};

// steady_clock; sleep_for waits until the time has passed or the run is asked to stop
// (util/stop.h), whichever comes first.
std::shared_ptr<Clock> system_clock();

}  // namespace atlas2kudu
