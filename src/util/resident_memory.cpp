#include "util/resident_memory.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <charconv>

namespace atlas2kudu {

namespace {

std::atomic<void (*)()> g_release{nullptr};
std::atomic<std::size_t> g_ceiling{0};
std::atomic<std::uint32_t> g_calls{0};
std::atomic<std::uint64_t> g_releases{0};
std::atomic<bool> g_huge_pages_off_by_parent{false};

// Kept open: one pread per check instead of open, read and close.
int statm_fd() {
  static const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  return fd;
}

}  // namespace

void set_unused_memory_release(void (*release)()) {
  g_release.store(release, std::memory_order_relaxed);
}

void set_resident_memory_ceiling(std::size_t bytes) {
  g_ceiling.store(bytes, std::memory_order_relaxed);
}

std::optional<std::size_t> resident_memory_bytes() {
  const int fd = statm_fd();
  if (fd < 0) return std::nullopt;
  // "size resident shared text lib data dt", in pages.
  char text[128];
  const ssize_t n = ::pread(fd, text, sizeof text, 0);
  if (n <= 0) return std::nullopt;
  const char* p = text;
  const char* const end = text + n;
  while (p < end && *p != ' ') ++p;  // size
  if (p == end) return std::nullopt;
  std::size_t pages = 0;
  const auto [ptr, ec] = std::from_chars(p + 1, end, pages);
  if (ec != std::errc() || ptr == p + 1) return std::nullopt;
  static const long page_size = ::sysconf(_SC_PAGESIZE);
  return pages * static_cast<std::size_t>(page_size > 0 ? page_size : 4096);
}

void keep_resident_memory_under_ceiling(bool now) {
  void (*const release)() = g_release.load(std::memory_order_relaxed);
  const std::size_t ceiling = g_ceiling.load(std::memory_order_relaxed);
  if (release == nullptr || ceiling == 0) return;
  if (!now && g_calls.fetch_add(1, std::memory_order_relaxed) % kResidentCheckInterval != 0) return;
  const std::optional<std::size_t> resident = resident_memory_bytes();
  if (!resident || *resident <= ceiling) return;
  release();
  g_releases.fetch_add(1, std::memory_order_relaxed);
}

bool allow_transparent_huge_pages(bool allow) {
  if (allow && g_huge_pages_off_by_parent.load(std::memory_order_relaxed)) return false;
  return ::prctl(PR_SET_THP_DISABLE, allow ? 0 : 1, 0, 0, 0) == 0;
}

void defer_transparent_huge_pages() {
  // Any flags set (a plain disable reads 1; with PR_THP_DISABLE_EXCEPT_ADVISED, 3): the
  // parent's setting is left as it is.
  const int inherited = ::prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
  g_huge_pages_off_by_parent.store(inherited > 0, std::memory_order_relaxed);
  if (inherited == 0) allow_transparent_huge_pages(false);
}

bool transparent_huge_pages_allowed() {
  return ::prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 0;
}

std::uint64_t unused_memory_releases() {
  return g_releases.load(std::memory_order_relaxed);
}

}  // namespace atlas2kudu
