#include "cli/output_guard.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "atlas2kudu/error.h"
#include "util/atomic_file.h"
#include "util/utf8.h"
#include "util/version.h"

namespace atlas2kudu {

namespace {

struct Kind {
  std::string_view what;       // in the message: "... is not {what} written by atlas2kudu"
  std::string_view signature;  // what the writer writes first
};

Kind describe(OutputKind kind) {
  switch (kind) {
    case OutputKind::kSql:
      return {"SQL", kSqlSignature};
    case OutputKind::kStats:
      return {"a --stats summary", "{\"schema\":"};
    case OutputKind::kMetrics:
      return {"a metrics textfile", "# HELP atlas2kudu_"};
    case OutputKind::kRejects:
      return {"a reject file", "{\"source\":"};
  }
  return {};
}

// What makes two paths one file: device and inode when it exists, else the absolute path.
struct FileIdentity {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  std::string path;

  bool same(const FileIdentity& o) const {
    return exists == o.exists && (exists ? device == o.device && inode == o.inode : path == o.path);
  }
};

FileIdentity identity_of(const std::string& path) {
  FileIdentity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.device = st.st_dev;
    id.inode = st.st_ino;
    return id;
  }
  std::error_code ec;
  const std::filesystem::path resolved =
      std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  id.path = ec ? path : resolved.lexically_normal().string();
  return id;
}

[[noreturn]] void cannot_open_input(const std::string& path, const char* why) {
  throw Error(ErrorCategory::kNoInput, fmt::format("{}: cannot open: {}", one_line(path), why));
}

void require_input_opens(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) cannot_open_input(path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) cannot_open_input(path, "Is a directory");
  if (!S_ISREG(st.st_mode)) return;  // a FIFO or /dev/stdin: opening it here could consume it
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) cannot_open_input(path, std::strerror(errno));
  ::close(fd);
}

void require_creatable(const RunOutput& out) {
  try {
    require_regular_or_absent(out.path);  // a directory, FIFO, device or symbolic link
  } catch (const Error& e) {
    // /dev/stdout, /dev/fd/1, a terminal or a FIFO: the SQL gets there through standard output.
    struct stat st {};
    const bool stream = out.path.rfind("/dev/", 0) == 0 ||
                        (::stat(out.path.c_str(), &st) == 0 &&
                         (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)));
    const std::string_view hint =
        out.kind == OutputKind::kSql && stream
            ? " (-o - writes to standard output, which may be a terminal or a pipe)"
            : "";
    throw Error(e.category(), fmt::format("{} {}{}", out.option, e.what(), hint));
  }
  struct stat st {};
  if (::stat(out.path.c_str(), &st) == 0) {
    // It exists: writable in place is enough for the reject file, which is opened where it is
    // (the files replaced through a temporary one also need the directory: their writer says so).
    if (::access(out.path.c_str(), W_OK) == 0) return;
    throw Error(ErrorCategory::kIo, fmt::format("{} {}: cannot write it: {}", out.option,
                                                one_line(out.path), std::strerror(errno)));
  }
  const std::filesystem::path parent = std::filesystem::path(out.path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  const char* why = nullptr;
  if (::stat(dir.c_str(), &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISDIR(st.st_mode)) {
    why = "Not a directory";
  } else if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    why = std::strerror(errno);
  }
  if (why != nullptr) {
    throw Error(ErrorCategory::kIo, fmt::format("{} {}: cannot create it in {}: {}", out.option,
                                                one_line(out.path), one_line(dir), why));
  }
}

bool writes_a_file(const RunOutput& out) {
  return !out.path.empty() && !(out.option == "-o" && out.path == "-");
}

// Throws Error(kUsage) if `out` is one of `inputs` or the file of another option in `others`.
void refuse_same_file(const RunOutput& out, const FileIdentity& id,
                      const std::vector<std::pair<const std::string*, FileIdentity>>& inputs,
                      const std::vector<std::pair<const RunOutput*, FileIdentity>>& others) {
  for (const auto& [input, input_id] : inputs) {
    if (!id.same(input_id)) continue;
    throw Error(ErrorCategory::kUsage,
                fmt::format("{} {}: the same file as the input {}; it would be replaced while "
                            "it is read. Write to another path.",
                            out.option, one_line(out.path), one_line(*input)));
  }
  for (const auto& [other, other_id] : others) {
    if (other->option == out.option || !id.same(other_id)) continue;
    throw Error(ErrorCategory::kUsage,
                fmt::format("{} {} and {} {} are the same file; one would replace the other. "
                            "Give each its own path.",
                            other->option, one_line(other->path), out.option, one_line(out.path)));
  }
}

// How the messages name standard input when it is a file (`check - < rej.jsonl`).
const std::string kStandardInput = "- (standard input)";

std::vector<std::pair<const std::string*, FileIdentity>> input_identities(
    const std::vector<std::string>& inputs, bool require_open) {
  std::vector<std::pair<const std::string*, FileIdentity>> ids;
  bool reads_stdin = inputs.empty();
  for (const std::string& input : inputs) {
    if (input == "-") {
      reads_stdin = true;
      continue;
    }
    if (require_open) require_input_opens(input);
    ids.emplace_back(&input, identity_of(input));
  }
  // Standard input redirected from a file is that file, as a named input is: `check
  // --reject-file rej.jsonl - < rej.jsonl` truncated the file it was about to read, and reported
  // success with 0 records. So is a FIFO: `check ff - < ff` waited for ever for a second writer.
  struct stat st {};
  if (reads_stdin && ::fstat(STDIN_FILENO, &st) == 0 &&
      (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
    FileIdentity id;
    id.exists = true;
    id.device = st.st_dev;
    id.inode = st.st_ino;
    ids.emplace_back(&kStandardInput, id);
  }
  return ids;
}

[[noreturn]] void throw_read_twice(std::string_view which) {
  throw Error(ErrorCategory::kUsage,
              fmt::format("{}: it would be read twice (its records with Kafka offsets passed "
                          "over as replays the second time, those without applied twice). Give "
                          "each input once.",
                          which));
}

// Throws Error(kUsage) if two inputs are one file (every input exists here), or standard input
// is given twice (the second '-' read nothing, whatever standard input was).
void refuse_repeated_inputs(const std::vector<std::string>& inputs,
                            const std::vector<std::pair<const std::string*, FileIdentity>>& ids) {
  if (std::count(inputs.begin(), inputs.end(), "-") > 1)
    throw_read_twice(kStandardInput + " is given twice");
  std::map<std::pair<dev_t, ino_t>, const std::string*> seen;
  for (const auto& [input, id] : ids) {
    const auto [first, inserted] = seen.try_emplace({id.device, id.inode}, input);
    if (inserted) continue;
    throw_read_twice(*first->second == *input
                         ? fmt::format("{} is given twice", one_line(*input))
                         : fmt::format("{} and {} are the same file", one_line(*first->second),
                                       one_line(*input)));
  }
}

}  // namespace

void check_run_paths(const std::vector<std::string>& inputs,
                     const std::vector<RunOutput>& outputs) {
  // An existing file given as both an output and an input is said to be so before it is judged
  // foreign: `compile -o a.jsonl a.jsonl` is one mistake, and "not SQL written by atlas2kudu"
  // would not name it. (Only such a file can be judged foreign; the other cases keep their order
  // below: an input that does not open is exit 66, a device or directory as output exit 74.)
  const auto inputs_as_given = input_identities(inputs, /*require_open=*/false);
  for (const RunOutput& out : outputs) {
    struct stat st {};
    if (!writes_a_file(out) || ::stat(out.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    refuse_same_file(out, identity_of(out.path), inputs_as_given, {});
  }
  for (const RunOutput& out : outputs) {
    if (out.kind) refuse_foreign_output(out.option, out.path, *out.kind);
  }
  const auto input_ids = input_identities(inputs, /*require_open=*/true);
  refuse_repeated_inputs(inputs, input_ids);
  std::vector<std::pair<const RunOutput*, FileIdentity>> output_ids;
  for (const RunOutput& out : outputs) {
    if (!writes_a_file(out)) continue;
    require_creatable(out);
    const FileIdentity id = identity_of(out.path);
    refuse_same_file(out, id, input_ids, output_ids);
    output_ids.emplace_back(&out, id);
  }
}

void check_single_output(const RunOutput& out) {
  if (out.kind) refuse_foreign_output(out.option, out.path, *out.kind);
  if (writes_a_file(out)) require_creatable(out);
}

bool safe_to_write_alone(const std::vector<std::string>& inputs,
                         const std::vector<RunOutput>& outputs, const RunOutput& out) {
  if (!writes_a_file(out)) return false;
  try {
    if (out.kind) refuse_foreign_output(out.option, out.path, *out.kind);
    require_creatable(out);
    std::vector<std::pair<const RunOutput*, FileIdentity>> output_ids;
    for (const RunOutput& other : outputs) {
      if (writes_a_file(other)) output_ids.emplace_back(&other, identity_of(other.path));
    }
    refuse_same_file(out, identity_of(out.path), input_identities(inputs, false), output_ids);
  } catch (const Error&) {
    return false;
  }
  return true;
}

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
                          option, one_line(path), k.what, k.signature));
}

}  // namespace atlas2kudu
