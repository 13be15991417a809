#include "util/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>
#include <random>
#include <set>
#include <string_view>
#include <utility>

#include "atlas2kudu/error.h"
#include "util/os_error.h"
#include "util/utf8.h"

namespace atlas2kudu {

namespace {

[[noreturn]] void io_error(const std::string& what, int err) {
  throw Error(ErrorCategory::kIo, fmt::format("{}: {}", what, os_error_text(err)));
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Temporary files that a killed run (SIGKILL, a crash, a power cut) left beside `path`:
// "<name>.tmp-<pid>-<random>" whose process is gone and which nobody has written for ten minutes
// (a run on another host sharing the directory still writes its own). Removed, once per target,
// so that an hourly cron job does not pile them up. Best effort: nothing here fails the run.
void remove_stale_temporaries(const std::string& path) {
  // Once per target and process: a checkpoint saved after every window need not scan its
  // directory every time.
  static std::mutex mu;
  static std::set<std::string> swept;
  {
    const std::lock_guard lock(mu);
    if (!swept.insert(path).second) return;
  }
  const std::string dir = directory_of(path);
  const auto slash = path.rfind('/');
  const std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp-";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const std::time_t now = std::time(nullptr);
  while (const dirent* entry = ::readdir(d)) {
    const std::string_view name = entry->d_name;
    if (!name.starts_with(prefix)) continue;
    const std::string_view rest = name.substr(prefix.size());
    const auto dash = rest.find('-');
    if (dash == 0 || dash == std::string_view::npos ||
        rest.substr(0, dash).find_first_not_of("0123456789") != std::string_view::npos ||
        dash > 9) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(std::string(rest.substr(0, dash))));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode) || now - st.st_mtime < 600) {
      continue;
    }
    ::unlinkat(::dirfd(d), entry->d_name, 0);
  }
  ::closedir(d);
}

}  // namespace

void require_regular_or_absent(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    io_error(path, errno);
  }
  if (!S_ISREG(st.st_mode)) {
    throw Error(ErrorCategory::kIo,
                fmt::format("{}: not a regular file ({}); refusing to replace it", one_line(path),
                            S_ISLNK(st.st_mode)    ? "a symbolic link"
                            : S_ISDIR(st.st_mode)  ? "a directory"
                            : S_ISFIFO(st.st_mode) ? "a FIFO"
                                                   : "a device or socket"));
  }
}

AtomicFile::AtomicFile(std::string path, mode_t mode, Umask umask) : path_(std::move(path)) {
  // "" is no file: its temporary file would land in the current directory, renamed to nothing.
  if (path_.empty()) throw Error(ErrorCategory::kInternal, "an output file without a name");
  require_regular_or_absent(path_);
  remove_stale_temporaries(path_);
  std::random_device random;
  for (int attempt = 0;; ++attempt) {
    temp_ = fmt::format("{}.tmp-{}-{:08x}", path_, ::getpid(), random());
    const int fd =
        ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) {
      if (umask == Umask::kIgnored && ::fchmod(fd, mode) != 0) {
        const int err = errno;
        ::close(fd);
        ::unlink(temp_.c_str());
        io_error(temp_, err);
      }
      file_ = ::fdopen(fd, "w");
      if (file_ == nullptr) {
        const int err = errno;
        ::close(fd);
        ::unlink(temp_.c_str());
        io_error(temp_, err);
      }
      return;
    }
    if (errno != EEXIST || attempt >= 16)
      io_error(
          fmt::format("{}: cannot create its temporary file {}", one_line(path_), one_line(temp_)),
          errno);
  }
}

AtomicFile::~AtomicFile() {
  discard();
}

void AtomicFile::discard() noexcept {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  ::unlink(temp_.c_str());
}

void AtomicFile::commit() {
  if (file_ == nullptr) throw Error(ErrorCategory::kInternal, path_ + ": committed twice");
  int err = 0;
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) err = errno;
  if (std::fclose(std::exchange(file_, nullptr)) != 0 && err == 0) err = errno;
  if (err == 0) {
    // Checked again right before the rename: the target may have changed since we started.
    try {
      require_regular_or_absent(path_);
    } catch (...) {
      ::unlink(temp_.c_str());
      throw;
    }
    if (std::rename(temp_.c_str(), path_.c_str()) != 0) err = errno;
  }
  if (err != 0) {
    ::unlink(temp_.c_str());
    io_error(fmt::format("{}: cannot write", one_line(path_)), err);
  }
  const int dir = ::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::string& path, std::string_view text, mode_t mode,
                           Umask umask) {
  AtomicFile file(path, mode, umask);
  if (std::fwrite(text.data(), 1, text.size(), file.stream()) != text.size()) {
    io_error(fmt::format("{}: cannot write", one_line(path)), errno);
  }
  file.commit();
}

}  // namespace atlas2kudu
