// --checkpoint FILE: how far the input has been applied, so that a rerun after a failure (or the
// next cron run over the same files) skips what is already in the tables.
//
// After each fully applied window, apply records for every source the index of the first record
// not yet fully applied, and for Kafka inputs (kcat -J, or console output with print.partition and
// print.offset) the next offset per topic/partition. The file is replaced atomically (written
// beside under a unique name, fsynced, renamed), so a kill at any moment leaves either the previous
// or the new checkpoint:
//
//   {"format":"atlas2kudu-checkpoint/3","target":{"endpoint":"impala-a:21050","database":"atlas"},
//    "runs":4,"windows_applied":3,"events_applied":150,
//    "sources":[{"name":"a.jsonl","identity":"9f2c…","next_record":150,"complete":false,
//                "framing":4,"records_digest":"07be…","last_run":4}, …],
//    "kafka":[{"topic":"ATLAS_ENTITIES","partition":0,"next_offset":1204,"rejected":[1190]}]}
//
// `rejected` (InputProgress::kafka_rejected): offsets whose records were rejected and not applied
// since, so that a record fixed from the reject file and read again is applied, not skipped.
// An earlier release ignores the key (and skips such a record).
// A source is recognised on the rerun by its identity (a hash of its first 64 KiB), not its name,
// so a renamed file still resumes and a different file under the same name is read from the start;
// or, when no identity matches, by its name (a file under 64 KiB that has grown). Its records
// before the resume point are then skipped only if they are those applied (`records_digest`,
// SourceMark): a file that starts as another did but goes on differently, or is shorter now, is
// read from its start, and said (ReadStats::resume_mismatches). A checkpoint of an earlier
// release has no `records_digest`: its inputs are recognised by identity alone, as it did.
// Several remembered inputs may fit a file (two exports that start alike, one renamed, one a
// prefix of another): each is tried in turn, the one with the most records applied first, then
// the most recently read; the entry the file turns out to be is superseded by its new mark, and
// the others stay remembered. (So a file given again after a grown copy of it was applied has
// fewer records than the entry left, and is applied again whole.)
// Records before a split message's first chunk are kept as a resume point until the message
// completes. Resuming is exact when each window's stored state is read before it is compiled
// (--prior impala); with --prior none the resumed run knows only what it reads itself.
//
// Memory: the checkpoint remembers every input any run applied, not only those of the latest run
// (A, then B, then A again: the third run skips A). `last_run` is the number of the run that last
// read the input. At most kMaxRememberedInputs inputs are kept; past that, those read longest ago
// are forgotten first (a forgotten input named again is applied again: idempotent, so the tables
// stay right; only time is lost). Files in format atlas2kudu-checkpoint/1 are read as well.
//
// One run at a time: CheckpointLock holds an exclusive flock(2) on FILE.lock for the whole run;
// a second run on the same checkpoint fails at once with Error(kLocked) (exit 75) naming the pid.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/reader.h"
#include "util/unique_fd.h"

namespace atlas2kudu {

// The tables a checkpoint's windows were applied to. A checkpoint describes one target: the same
// file against another (a new cluster, another --database) would skip inputs that target never
// received, so CheckpointFile refuses it.
struct CheckpointTarget {
  std::string endpoint;  // "impala-a.example.com:21050"; empty: not recorded (an older file)
  std::string database;  // --database

  friend bool operator==(const CheckpointTarget&, const CheckpointTarget&) = default;
};

struct Checkpoint {
  bool found = false;  // the file existed when load_checkpoint read it
  CheckpointTarget target;
  InputProgress progress;  // every input remembered: the latest run's first
  std::uint64_t windows_applied = 0;
  std::uint64_t events_applied = 0;
  std::uint64_t runs = 0;                         // runs that saved this checkpoint
  std::map<std::string, std::uint64_t> last_run;  // remembered_key -> the run that last read it
};

// The inputs a checkpoint remembers at most.
inline constexpr std::size_t kMaxRememberedInputs = 10000;

// What tells remembered inputs apart: a file's identity and its records' digest, since two files
// may start alike (A, then B that starts with A's first 64 KiB, are two inputs to remember).
std::string remembered_key(const SourceMark& mark);

// The sources to record after run number `run` read `current`: current's marks (this run's
// inputs, in order), then the inputs `previous` remembers that this run did not read, most
// recently read first, up to kMaxRememberedInputs in all. Updates `last_run` to match. An input
// this run read is one `superseded` marks (Reader::resumed_sources: the entries of `previous`
// it recognised) or one with the remembered_key of a mark of this run.
void remember_inputs(const Checkpoint& previous, const InputProgress& current, std::uint64_t run,
                     Checkpoint& out, const std::vector<bool>& superseded = {});

// The files kept beside a checkpoint: "<path>.window" (Checkpoint::window_knowledge_path) and
// "<path>.lock" (CheckpointLock). No other output of a run may be one of them.
inline std::string checkpoint_window_path(const std::string& checkpoint_path) {
  return checkpoint_path + ".window";
}
inline std::string checkpoint_lock_path(const std::string& checkpoint_path) {
  return checkpoint_path + ".lock";
}

// Exclusive lock of a checkpoint for one run: flock(LOCK_EX|LOCK_NB) on "<path>.lock" (created
// mode 0600, never through a symbolic link, never removed; it holds the owner's pid for the
// message of the next run). Throws Error(kLocked) at once when another run holds it.
class CheckpointLock {
 public:
  explicit CheckpointLock(const std::string& checkpoint_path);

 private:
  UniqueFd fd_;  // closing it releases the lock; the file stays (removing it would race)
};

// Reads a checkpoint; a missing file is an empty checkpoint (a first run). Throws
// Error(kCheckpoint) naming the file for anything unreadable or malformed.
Checkpoint load_checkpoint(const std::string& path);

// Replaces `path` atomically with `checkpoint`. Throws Error(kIo) on I/O failure.
void save_checkpoint(const std::string& path, const Checkpoint& checkpoint);

std::string checkpoint_json(const Checkpoint& checkpoint);

// The checkpoint of one `apply --checkpoint FILE` run: the one place that wires a checkpoint file
// to the reader and the pipeline (the CLI and the resume tests both use it).
//
//   Reader reader(files, rejects);
//   CheckpointFile checkpoint(path, reader);      // loads FILE, reader skips what it records
//   run_pipeline(reader, compiler, prior, writer, nullptr,
//                [&](const WindowInfo& w, const Reader* r) {
//                  if (r) checkpoint.window_applied(w, *r);   // not after a part of a window
//                });
//   checkpoint.run_completed(reader);
class CheckpointFile {
 public:
  // Loads `path` (missing: a first run) and makes `reader` resume from it (telling
  // `on_source_resumed` of each input it recognises). Call before the reader's first next().
  // `target`: the tables this run writes, recorded in the file; a file that records another
  // target throws Error(kCheckpoint) naming both (an empty `target` checks nothing: tests).
  CheckpointFile(std::string path, Reader& reader, Reader::ResumeNotice on_source_resumed = {},
                 CheckpointTarget target = {});

  // Records the reader's progress after a fully applied window, with the parts of it applied
  // before (part_applied).
  void window_applied(const WindowInfo& window, const Reader& reader);
  // Counts a part of a window that was applied (WindowParts, compiler.h) towards the window's
  // record; nothing is written until the window's last part is: a rerun applies the whole window
  // again.
  void part_applied(const WindowInfo& part);
  // Parts of the window being applied that ran but are not recorded yet (they run again on a
  // rerun if this run stops).
  std::uint64_t parts_not_recorded() const { return parts_pending_; }
  // At the end of a run that completed: records everything read as applied (the inputs now
  // `complete`; the last window was recorded before the reader saw their end). A run that applied
  // no window records how far it read too (the marks of inputs it skipped entirely stay current).
  void run_completed(const Reader& reader);

  // What the file holds (as loaded, or as this run last wrote it: a failed write changes nothing).
  const Checkpoint& state() const { return checkpoint_; }
  const std::string& path() const { return path_; }
  // Whether this run wrote the file (state() is then what it holds).
  bool written() const { return written_; }
  // Whether the file was there when the run started (else this is a first run).
  bool existed() const { return existed_; }
  // The windows this run recorded: a window the executor ran but whose rows then stopped the run
  // (refused past --max-rejects, say) is not among them.
  std::uint64_t windows_recorded() const { return windows_recorded_; }
  // FILE.window, beside the checkpoint: what the compiler knew of a window's entities before
  // folding it (Compiler::knowledge_snapshot), saved before the window's first statement runs. A
  // run stopped inside a window leaves it, tied to the checkpoint as the file then holds it (a
  // SHA-256 of its bytes; an absent checkpoint too) and to the target; the same command run again
  // finds both unchanged, folds that window again from the same knowledge (Compiler::assume), not
  // from tables that hold part of it, and so writes what an uninterrupted run writes. A file tied
  // to another state of the checkpoint or another target is ignored (and removed).
  // The file also holds the window's number of events and the input and record of its last
  // event: the rerun's first window holds at least as many events and goes on until that record's
  // event is read again (first_window_may_close), however its --window-events and --memory-budget
  // would cut it, since the run it resumes may have written cells of any of those events; a
  // shorter window would fold the entities of the rest from tables that hold them. (A count
  // alone would not do: a rerun with other record limits rejects other records.) What a run
  // assumed and a recorded window has not folded stays in the file, tied to each checkpoint it
  // records (only a file of version 1, without them, leaves any). Each record of the checkpoint
  // writes the file first with a section for the checkpoint before and one for the checkpoint
  // after (crash-safe: whichever the checkpoint file holds finds its own), and it is removed once
  // nothing is left.
  // None of it is held in memory: it may be many times the memory budget (10,000 entities with
  // 20 KB of stored props: 200 MB). What a run assumes stays in the file (SnapshotFile, which
  // the compiler reads an entity at a time), and each rewrite of FILE.window copies it across.
  //   checkpoint.window_knowledge();         // what an earlier run left, or "" (read: tests)
  //   checkpoint.window_starting(snapshot, window, reader);  // before each window runs
  //   checkpoint.window_applied(w, reader);  // records the window; FILE.window keeps the rest
  std::string window_knowledge() const;
  // Saves FILE.window (mode 0600), with the window's number of events and the position of its
  // last event (`reader` tells its input's identity). Throws Error(kIo). The snapshot is written
  // out an entry at a time, merged with an earlier run's knowledge if the file holds any
  // (window_knowledge() is then both).
  void window_starting(const KnowledgeSnapshot& knowledge, std::span<const Event> window,
                       const Reader& reader);
  void window_starting(std::string_view knowledge, std::span<const Event> window,
                       const Reader& reader);  // tests
  // The number of events of the window an earlier run stopped in (FILE.window), or 0.
  std::size_t stopped_window_events() const { return stopped_window_events_; }
  // Whether this run's first window, `window` so far, may close (FirstWindowEnd in
  // cli/pipeline.h): once it holds as many events as the window an earlier run stopped in, and
  // the event of that window's last record (or its input's end), or twice as many events. Always
  // true without FILE.window.
  //   stopped in a window of 4 events, the last from record 9 of a.jsonl:
  //   4 events read, the 4th from record 8 (record 5 was rejected then, accepted now) -> false
  //   5 events read, the 5th from record 9                                            -> true
  bool first_window_may_close(const Reader& reader, std::span<const Event> window) const;
  // Hands window_knowledge() to `compiler` (Compiler::assume): true if there was any. Throws
  // Error(kCheckpoint) naming FILE.window if it is not what window_starting() writes.
  bool assume_window_knowledge(Compiler& compiler) const;
  // For a run that will not assume it (--prior none): removes FILE.window, so that it is never
  // tied to a checkpoint recorded without it.
  void forget_window_knowledge();
  // Why a FILE.window found at the start was removed unused, or "" (for the run's message).
  const std::string& discarded_window_knowledge() const { return discarded_; }
  std::string window_knowledge_path() const { return checkpoint_window_path(path_); }

  // Where the same command run again would start, from this run's inputs as last recorded (once
  // it recorded a window): "a.jsonl after its first 5000 records", "standard input from its start
  // (...)", or "nothing of these inputs (all of them are applied)".
  std::string resume_point() const;

 private:
  // Saves `next` with the reader's progress; state() becomes it once the file holds it.
  void record(Checkpoint next, const Reader& reader);
  static std::string digest_of_file(const std::string& path);
  void load_window_knowledge();
  // The input (by identity; empty for standard input) and record of a window's last event.
  struct WindowEnd {
    std::string identity;
    std::uint64_t record = 0;
  };
  // One section of FILE.window: the checkpoint's digest, the window's number of events, and what
  // was known before it (`size` bytes, handed over by `knowledge`).
  struct WindowSection {
    std::string digest;
    std::size_t events = 0;
    WindowEnd end;
    std::uint64_t size = 0;
    MergedSnapshot::Entries knowledge;
  };
  // Sets window_events_ and window_end_ for `window`.
  void note_window(std::span<const Event> window, const Reader& reader);
  // window_starting() of the snapshot `knowledge` hands over.
  void start_window(const MergedSnapshot::Entries& knowledge, std::span<const Event> window,
                    const Reader& reader);
  // Replaces FILE.window with these sections; returns where each one's knowledge starts.
  std::vector<std::uint64_t> write_window_knowledge(
      const std::vector<WindowSection>& sections) const;
  void remove_window_knowledge();

  std::string path_;
  Checkpoint previous_;  // as loaded
  Checkpoint checkpoint_;
  InputProgress recorded_;  // this run's inputs, as last recorded
  std::uint64_t windows_recorded_ = 0;
  std::uint64_t parts_pending_ = 0;        // part_applied since the last record
  std::uint64_t part_events_pending_ = 0;  // ... and their events
  std::string target_;                     // endpoint and database, as FILE.window names them
  std::string file_digest_;  // hex SHA-256 of what the checkpoint file holds ("" if absent)
  // What FILE.window holds for file_digest_, when it holds knowledge from an earlier run (null
  // when it holds none: then nothing of it is needed again).
  std::shared_ptr<const SnapshotFile> window_knowledge_;
  // The earlier run's knowledge as loaded (the compiler reads the same file), with the entries
  // recorded windows folded, which FILE.window no longer keeps. It stays the file loaded, so the
  // disk holds it and FILE.window, not every generation of FILE.window the run wrote.
  std::shared_ptr<const SnapshotFile> assumed_;
  std::vector<bool> folded_;               // per entry of assumed_
  std::vector<bool> folding_;              // ... with those of the window now running
  std::size_t window_events_ = 0;          // the events of the window now running
  WindowEnd window_end_;                   // ... and its last event's position
  std::size_t stopped_window_events_ = 0;  // of the window an earlier run stopped in
  WindowEnd stopped_window_end_;
  std::string discarded_;  // discarded_window_knowledge()
  bool written_ = false;   // the file was replaced by this run
  bool existed_ = false;   // when the run started
};

}  // namespace atlas2kudu
