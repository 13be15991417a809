// The words for errno: the file size limit named where it, not the disk, failed a write.
#include "util/os_error.h"

#include <doctest/doctest.h>
#include <sys/resource.h>

#include <cerrno>
#include <string>

TEST_SUITE_BEGIN("os_error");

using namespace atlas2kudu;

TEST_CASE("errno reads as strerror, and EFBIG names the limit of `ulimit -f`") {
  CHECK(os_error_text(ENOSPC) == "No space left on device");
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  if (saved.rlim_cur == RLIM_INFINITY) CHECK(os_error_text(EFBIG) == "File too large");
  // Lowered for the test process and raised back (the hard limit is not touched): this process
  // writes no file meanwhile.
  const auto limited = [&](rlim_t bytes) {
    rlimit lower = saved;
    lower.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lower) == 0);
    const std::string text = os_error_text(EFBIG);
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &saved) == 0);
    return text;
  };
  if (saved.rlim_max == RLIM_INFINITY || saved.rlim_max >= 8192) {
    CHECK(limited(4096) == "File too large (`ulimit -f` allows 4 KiB per file)");
    CHECK(limited(1536) == "File too large (`ulimit -f` allows 1536 bytes per file)");  // sh's 3
    CHECK(limited(0) == "File too large (`ulimit -f` allows 0 KiB per file)");
  }
}

TEST_SUITE_END();
