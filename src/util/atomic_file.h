// Files replaced atomically: SQL output (-o), checkpoints, --stats and metrics files.
//
// The content is written to a new temporary file beside the target, created with
// O_CREAT|O_EXCL|O_NOFOLLOW under a unique name (so neither a planted symlink nor a concurrent
// run can redirect it), flushed and fsynced, renamed over the target, and the directory is
// fsynced so the rename survives a crash. A reader of the target sees the old content or the new,
// never a mix. Until commit() the target is untouched; an AtomicFile destroyed without commit()
// removes its temporary file.
//
// The target must be a regular file or not exist: a symlink, FIFO, device or directory at the
// path is refused rather than replaced.
//
// A killed run (SIGKILL, a crash) cannot remove its temporary file. Each new AtomicFile removes
// those of earlier runs for the same target: "<target>.tmp-<pid>-<random>" whose process no longer
// exists and that nobody wrote for ten minutes (a run elsewhere sharing the directory keeps its
// own).
//
//   AtomicFile out("run.sql", 0644);      // run.sql.tmp-<pid>-<random> created
//   std::fputs("...", out.stream());
//   out.commit();                          // run.sql replaced
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace atlas2kudu {

// Whether the process's umask may take permissions off `mode` (as for every file a user asks for),
// or the file gets exactly `mode`: a metrics textfile is read by node_exporter, another user, so a
// service's private umask (077) must not make it unreadable.
enum class Umask { kApplies, kIgnored };

class AtomicFile {
 public:
  // Throws Error(kIo) if the target is not a regular file or the temporary cannot be created.
  AtomicFile(std::string path, mode_t mode, Umask umask = Umask::kApplies);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::FILE* stream() const { return file_; }
  const std::string& path() const { return path_; }

  // Flushes, fsyncs, renames over the target, fsyncs the directory. Throws Error(kIo).
  void commit();
  // Removes the temporary file; the target stays as it was. Safe to call more than once.
  void discard() noexcept;

 private:
  std::string path_;
  std::string temp_;
  std::FILE* file_ = nullptr;
};

// One-shot: the whole of `text` as the new content of `path`.
void write_file_atomically(const std::string& path, std::string_view text, mode_t mode,
                           Umask umask = Umask::kApplies);

// Throws Error(kIo) unless `path` names a regular file or nothing.
void require_regular_or_absent(const std::string& path);

}  // namespace atlas2kudu
