#include "cli/progress.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "atlas2kudu/reader.h"
#include "util/diagnostic.h"

namespace atlas2kudu {

bool Progress::default_enabled() {
  // TERM=dumb (Emacs' shell, some CI consoles) cannot erase a line: the redrawn line and its
  // escape sequence would show as garbage, so it is logged to as a file is.
  const char* term = std::getenv("TERM");
  return isatty(STDERR_FILENO) == 1 && !(term != nullptr && std::string_view(term) == "dumb");
}

namespace {

// CLOCK_MONOTONIC_COARSE: read from the vDSO in about 4 ns (steady_clock: about 26 ns on this
// project's VMs), to the kernel's tick (1 to 10 ms), fine for a line drawn four times a second.
std::chrono::nanoseconds coarse_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

}  // namespace

Progress::Progress(std::string label, Counts counts, bool enabled, std::FILE* out)
    : label_(std::move(label)),
      counts_(counts),
      enabled_(enabled),
      out_(out),
      start_(coarse_now()),
      last_(start_) {}

void Progress::tick(const Reader& reader) {
  if (!enabled_) return;
  const auto now = coarse_now();
  if (now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const ReadStats& stats = reader.stats();
  std::string share;
  const std::uint64_t read = reader.bytes_read();
  if (input_size_ && *input_size_ > 0 && read > 0) {
    const double fraction = std::min(1.0, static_cast<double>(read) / *input_size_);
    share =
        fmt::format(", {:.0f}% of {}, ETA {}", std::floor(fraction * 100),
                    human_bytes(*input_size_), human_duration(seconds * (1 - fraction) / fraction));
  }
  const std::string statements =
      counts_ == Counts::kRecordsAndStatements
          ? fmt::format(
                ", {}, {}",
                counted(statements_.load(std::memory_order_relaxed), "statement", "statements"),
                counted(rows_.load(std::memory_order_relaxed), "row", "rows"))
          : std::string();
  print_diagnostic(out_, "\r{}: {}, {}{}, {:.0f} records/s{}\x1b[K", label_,
                   counted(stats.records, "record", "records"),
                   counted(stats.events, "event", "events"), statements,
                   seconds > 0 ? stats.records / seconds : 0.0, share);
  shown_ = true;
}

void Progress::done() {
  if (shown_) {
    print_diagnostic(out_, "\r\x1b[K");
    shown_ = false;
  }
}

std::optional<std::uint64_t> input_size(const std::vector<std::string>& files) {
  if (files.empty()) return std::nullopt;
  std::uint64_t total = 0;
  for (const std::string& f : files) {
    struct stat st {};
    if (f == "-" || ::stat(f.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    total += static_cast<std::uint64_t>(st.st_size);
  }
  return total;
}

std::string human_bytes(std::uint64_t n) {
  if (n < 1024) return fmt::format("{} byte{}", n, n == 1 ? "" : "s");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double x = static_cast<double>(n) / 1024;
  std::size_t u = 0;
  while (x >= 1024 && u + 1 < std::size(units)) {
    x /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", x, units[u]);
}

std::string counted(std::uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string human_duration(double seconds) {
  const auto s = static_cast<std::uint64_t>(std::llround(std::max(0.0, seconds)));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

}  // namespace atlas2kudu
