#include "hs2/clock.h"

#include "util/stop.h"

namespace atlas2kudu {

namespace {

class SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() override { return std::chrono::steady_clock::now(); }
  // Ends early when the run is asked to stop (util/stop.h): the caller checks and stops.
  void sleep_for(std::chrono::milliseconds duration) override { wait_for_stop(duration); }
};

}  // namespace

Sleeper Clock::sleeper(std::shared_ptr<Clock> clock) {
  return [clock = std::move(clock)](std::chrono::milliseconds d) { clock->sleep_for(d); };
}

std::shared_ptr<Clock> system_clock() {
  static const std::shared_ptr<Clock> clock = std::make_shared<SystemClock>();
  return clock;
}

}  // namespace atlas2kudu
