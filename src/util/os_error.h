// The words for a failed system call's errno, with the limit behind it where that is the process's
// own and not the disk's: a file past `ulimit -f` fails with EFBIG, which strerror calls "File too
// large" though the disk has room, and a user would look for the cause in the wrong place.
//
//   os_error_text(ENOSPC) == "No space left on device"
//   os_error_text(EFBIG)  == "File too large (`ulimit -f` allows 4 KiB per file)"
//                                                      // under bash's `ulimit -f 4`
#pragma once

#include <fmt/format.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace atlas2kudu {

inline std::string os_error_text(int err) {
  std::string text = std::strerror(err);
  rlimit limit{};
  if (err == EFBIG && ::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    text += limit.rlim_cur % 1024 == 0
                ? fmt::format(" (`ulimit -f` allows {} KiB per file)", limit.rlim_cur / 1024)
                : fmt::format(" (`ulimit -f` allows {} bytes per file)", limit.rlim_cur);
  }
  return text;
}

}  // namespace atlas2kudu
