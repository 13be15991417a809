#include "cli/output_guard.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>

#include "atlas2kudu/error.h"

namespace atlas2kudu {

namespace {

struct Kind {
  std::string_view what;       // in the message: "... is not {what} written by atlas2kudu"
  std::string_view signature;  // what the writer writes first
};

Kind describe(OutputKind kind) {
  switch (kind) {
    case OutputKind::kSql:
      return {"SQL", "-- atlas2kudu "};
    case OutputKind::kStats:
      return {"a --stats summary", "{\"schema\":"};
    case OutputKind::kMetrics:
      return {"a metrics textfile", "# HELP atlas2kudu_"};
    case OutputKind::kRejects:
      return {"a reject file", "{\"source\":"};
  }
  return {};
}

}  // namespace

void refuse_foreign_output(std::string_view option, const std::string& path, OutputKind kind) {
  if (path.empty() || (kind == OutputKind::kSql && path == "-")) return;  // -o -: stdout
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return;  // missing, or not ours to judge (the writer reports what it cannot open)
  struct stat st {};
  std::array<char, 32> head{};
  ssize_t n = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    n = ::pread(fd, head.data(), head.size(), 0);
  }
  ::close(fd);
  if (n < 0) return;
  const Kind k = describe(kind);
  if (std::string_view(head.data(), static_cast<std::size_t>(n)).starts_with(k.signature)) return;
  throw Error(ErrorCategory::kUsage,
              fmt::format("{} {}: the file exists and is not {} written by atlas2kudu (which "
                          "begins with '{}'); refusing to replace it. Remove it or choose another "
                          "path.",
                          option, path, k.what, k.signature));
}

}  // namespace atlas2kudu
