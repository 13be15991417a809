#include "cli/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>

namespace atlas2kudu {

bool Progress::default_enabled() {
  return isatty(STDERR_FILENO) == 1;
}

Progress::Progress(std::string label, bool enabled)
    : label_(std::move(label)),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void Progress::tick(std::uint64_t records, std::uint64_t events) {
  if (!enabled_ || (++calls_ & 4095) != 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  fmt::print(stderr, "\r{}: {} records, {} events, {} statements, {:.0f} records/s\x1b[K", label_,
             records, events, statements_, seconds > 0 ? records / seconds : 0.0);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::done() {
  if (shown_) {
    fmt::print(stderr, "\r\x1b[K");
    std::fflush(stderr);
    shown_ = false;
  }
}

}  // namespace atlas2kudu
