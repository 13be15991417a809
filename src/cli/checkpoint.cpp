#include "cli/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "atlas2kudu/error.h"
#include "util/ascii_case.h"
#include "util/atomic_file.h"
#include "util/digest.h"
#include "util/json_writer.h"
#include "util/os_error.h"
#include "util/unique_fd.h"
#include "util/utf8.h"

namespace atlas2kudu {

namespace od = simdjson::ondemand;

namespace {

// Format 3 adds each source's framing (reader.h, kFraming): the resume points of formats 1 and 2
// were counted by framing 1.
constexpr std::string_view kFormat = "atlas2kudu-checkpoint/3";
constexpr std::string_view kFormatV2 = "atlas2kudu-checkpoint/2";  // read, never written
constexpr std::string_view kFormatV1 = "atlas2kudu-checkpoint/1";  // read, never written

}  // namespace

std::string checkpoint_json(const Checkpoint& c) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("format").value(kFormat);
  if (!c.target.endpoint.empty()) {
    w.key("target").begin_object();
    w.key("endpoint").value(c.target.endpoint).key("database").value(c.target.database);
    w.end_object();
  }
  w.key("runs").value(c.runs);
  w.key("windows_applied").value(c.windows_applied);
  w.key("events_applied").value(c.events_applied);
  w.key("sources").begin_array();
  for (const SourceMark& s : c.progress.sources) {
    w.begin_object();
    w.key("name").value(s.name);
    w.key("identity").value(s.identity);
    w.key("next_record").value(s.next_record);
    w.key("complete").value(s.complete);
    w.key("framing").value(s.framing);
    if (!s.records_digest.empty()) w.key("records_digest").value(s.records_digest);
    if (const auto it = c.last_run.find(remembered_key(s));
        !s.identity.empty() && it != c.last_run.end()) {
      w.key("last_run").value(it->second);
    }
    w.end_object();
  }
  w.end_array();
  w.key("kafka").begin_array();
  for (const auto& [partition, offset] : c.progress.kafka_next_offset) {
    w.begin_object();
    w.key("topic").value(partition.first);
    w.key("partition").value(partition.second);
    w.key("next_offset").value(offset);
    if (const auto rejected = c.progress.kafka_rejected.find(partition);
        rejected != c.progress.kafka_rejected.end()) {
      w.key("rejected").begin_array();
      for (const std::int64_t o : rejected->second) w.value(o);
      w.end_array();
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out += '\n';
  return out;
}

Checkpoint load_checkpoint(const std::string& path) {
  Checkpoint c;
  if (::access(path.c_str(), F_OK) != 0) return c;
  c.found = true;
  // Every refusal says what an operator can do: the file is only ever replaced whole, so a bad one
  // was not written by atlas2kudu, and starting over is always safe, only slower.
  simdjson::padded_string text;
  // A file that names no checkpoint format at all is most often an input that became the value of
  // --checkpoint (its own value left out): moving it away would lose the user's file.
  bool names_a_format = true;
  const auto refuse = [&](const std::string& what) {
    return Error(
        ErrorCategory::kCheckpoint,
        names_a_format
            ? fmt::format("{}: {}; move it away to start over (every input is then applied again)",
                          one_line(path), what)
            : fmt::format("{}: not an atlas2kudu checkpoint (it names no "
                          "atlas2kudu-checkpoint format): if it is an input, the value of "
                          "--checkpoint was left out (nothing was applied; give the checkpoint's "
                          "own path); if it is a checkpoint something else wrote over, move it "
                          "away to start over (every input is then applied again)",
                          one_line(path)));
  };
  errno = 0;
  if (const auto error = simdjson::padded_string::load(path).get(text)) {
    throw refuse(fmt::format("cannot read checkpoint: {}",
                             errno != 0 ? std::strerror(errno) : simdjson::error_message(error)));
  }
  if (text.size() == 0) throw refuse("the checkpoint is empty");
  names_a_format =
      std::string_view(text).find("\"atlas2kudu-checkpoint/") != std::string_view::npos;
  std::string at = "the document";  // where the parser is, for a malformed file's message
  try {
    od::parser parser;
    od::document doc = parser.iterate(text);
    od::json_type top;
    if (doc.type().get(top) != simdjson::SUCCESS || top != od::json_type::object) {
      throw refuse("not a JSON object, so not an atlas2kudu checkpoint");
    }
    // Every member checkpoint_json writes for a source or a Kafka partition must be there: an
    // entry without one would read as "nothing applied yet" and be overwritten silently.
    const auto require = [&](bool seen, std::string_view entry, std::string_view member) {
      if (!seen)
        throw refuse(fmt::format("malformed checkpoint at {}: \"{}\" missing", entry, member));
    };
    bool format_ok = false;
    bool older_format = false;
    // Members every release wrote: a file without one was cut or edited, and read as it is it
    // would say that nothing was applied.
    bool windows_seen = false, events_seen = false, sources_seen = false, kafka_seen = false;
    std::vector<bool> framings_seen;  // per source
    for (auto field : doc.get_object()) {
      const std::string_view key = field.unescaped_key();
      at = std::string(key);
      if (key == "format") {
        const std::string_view format = field.value().get_string();
        format_ok = format == kFormat || format == kFormatV2 || format == kFormatV1;
        older_format = format != kFormat;
      } else if (key == "target") {
        // Both, as checkpoint_json writes them: a target without its endpoint would read as one
        // not recorded (an older file), and the next run's target would be taken unchecked.
        bool endpoint = false, database = false;
        for (auto f : field.value().get_object()) {
          const std::string_view k = f.unescaped_key();
          at = fmt::format("target.{}", k);
          if (k == "endpoint") {
            c.target.endpoint = std::string(std::string_view(f.value().get_string()));
            if (c.target.endpoint.empty()) {
              throw refuse("malformed checkpoint at target.endpoint: empty");
            }
            endpoint = true;
          } else if (k == "database") {
            c.target.database = std::string(std::string_view(f.value().get_string()));
            database = true;
          }
        }
        require(endpoint, "target", "endpoint");
        require(database, "target", "database");
      } else if (key == "runs") {
        c.runs = field.value().get_uint64();
      } else if (key == "windows_applied") {
        c.windows_applied = field.value().get_uint64();
        windows_seen = true;
      } else if (key == "events_applied") {
        c.events_applied = field.value().get_uint64();
        events_seen = true;
      } else if (key == "sources") {
        sources_seen = true;
        std::size_t i = 0;
        for (auto item : field.value().get_array()) {
          SourceMark mark;
          std::uint64_t last_run = 0;
          bool name = false, identity = false, next_record = false, complete = false;
          bool framing = false;
          const std::string entry = fmt::format("sources[{}]", i);
          at = entry;
          for (auto f : item.get_object()) {
            const std::string_view k = f.unescaped_key();
            at = fmt::format("sources[{}].{}", i, k);
            if (k == "name") {
              mark.name = std::string(std::string_view(f.value().get_string()));
              name = true;
            } else if (k == "identity") {
              mark.identity = std::string(std::string_view(f.value().get_string()));
              identity = true;
            } else if (k == "next_record") {
              mark.next_record = f.value().get_uint64();
              next_record = true;
            } else if (k == "complete") {
              mark.complete = f.value().get_bool();
              complete = true;
            } else if (k == "framing") {
              const std::uint64_t n = f.value().get_uint64();
              if (n < 1 || n > kFraming)
                throw refuse(fmt::format("malformed checkpoint at {}: framing {} (1 to {})", at, n,
                                         kFraming));
              mark.framing = static_cast<std::uint32_t>(n);
              framing = true;
            } else if (k == "last_run") {
              last_run = f.value().get_uint64();
            } else if (k == "records_digest") {
              mark.records_digest = std::string(std::string_view(f.value().get_string()));
              if (mark.records_digest.size() != 32 ||
                  mark.records_digest.find_first_not_of("0123456789abcdef") != std::string::npos) {
                throw refuse(
                    fmt::format("malformed checkpoint at {}: not 32 lowercase hex digits", at));
              }
            }
          }
          require(name, entry, "name");
          require(identity, entry, "identity");
          require(next_record, entry, "next_record");
          require(complete, entry, "complete");
          framings_seen.push_back(framing);
          if (!mark.identity.empty()) c.last_run.emplace(remembered_key(mark), last_run);
          c.progress.sources.push_back(std::move(mark));
          ++i;
        }
      } else if (key == "kafka") {
        kafka_seen = true;
        std::size_t i = 0;
        for (auto item : field.value().get_array()) {
          std::string topic;
          std::int64_t partition = 0, next = 0;
          std::vector<std::int64_t> rejected;  // offsets rejected and not applied since
          bool has_topic = false, has_partition = false, has_next = false;
          const std::string entry = fmt::format("kafka[{}]", i);
          at = entry;
          for (auto f : item.get_object()) {
            const std::string_view k = f.unescaped_key();
            at = fmt::format("kafka[{}].{}", i, k);
            if (k == "topic") {
              topic = std::string(std::string_view(f.value().get_string()));
              has_topic = true;
            } else if (k == "partition") {
              partition = f.value().get_int64();
              if (partition != static_cast<std::int32_t>(partition))  // as the reader keeps it
                throw refuse(
                    fmt::format("malformed checkpoint at {}: partition {} (a 32-bit "
                                "integer)",
                                at, partition));
              has_partition = true;
            } else if (k == "next_offset") {
              next = f.value().get_int64();
              has_next = true;
            } else if (k == "rejected") {
              for (auto o : f.value().get_array()) rejected.push_back(o.get_int64());
            }
          }
          require(has_topic, entry, "topic");
          require(has_partition, entry, "partition");
          require(has_next, entry, "next_offset");
          const KafkaPartition key{topic, static_cast<std::int32_t>(partition)};
          c.progress.kafka_next_offset[key] = next;
          std::sort(rejected.begin(), rejected.end());
          rejected.erase(std::unique(rejected.begin(), rejected.end()), rejected.end());
          if (!rejected.empty()) c.progress.kafka_rejected[key] = std::move(rejected);
          ++i;
        }
      }
      at = "the document";
    }
    if (!format_ok) {
      throw refuse(fmt::format("not an atlas2kudu checkpoint ({}, {} or {} expected)", kFormat,
                               kFormatV2, kFormatV1));
    }
    // A second document after it (a file appended to, or two joined) is no checkpoint this
    // release wrote: which of the two would be meant?
    if (const char* more = nullptr; doc.current_location().get(more) == simdjson::SUCCESS)
      throw refuse("malformed checkpoint: more after its JSON object");
    require(windows_seen, "the document", "windows_applied");
    require(events_seen, "the document", "events_applied");
    require(sources_seen, "the document", "sources");
    require(kafka_seen, "the document", "kafka");
    for (std::size_t i = 0; i < c.progress.sources.size(); ++i) {
      if (older_format) {
        c.progress.sources[i].framing = 1;  // counted by the releases that wrote them
      } else {
        require(framings_seen[i], fmt::format("sources[{}]", i), "framing");
      }
    }
  } catch (const simdjson::simdjson_error& e) {
    std::string_view why = e.what();
    if (why.ends_with('.')) why.remove_suffix(1);
    throw refuse(fmt::format("malformed checkpoint at {}: {}", at, why));
  }
  return c;
}

void save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  write_file_atomically(path, checkpoint_json(checkpoint), 0600);
}

std::string remembered_key(const SourceMark& mark) {
  return mark.identity + "/" + mark.records_digest;
}

void remember_inputs(const Checkpoint& previous, const InputProgress& current, std::uint64_t run,
                     Checkpoint& out, const std::vector<bool>& superseded) {
  std::vector<SourceMark> sources = current.sources;
  std::map<std::string, std::uint64_t> last_run;
  for (const SourceMark& m : current.sources) {
    if (!m.identity.empty()) last_run[remembered_key(m)] = run;
  }
  // Earlier runs' inputs this run did not read, most recently read first (stable: file order).
  std::vector<const SourceMark*> older;
  for (std::size_t i = 0; i < previous.progress.sources.size(); ++i) {
    const SourceMark& m = previous.progress.sources[i];
    const bool read_now = i < superseded.size() ? superseded[i] : false;
    const std::string key = remembered_key(m);
    if (m.identity.empty() || read_now || last_run.count(key)) continue;
    const auto it = previous.last_run.find(key);
    last_run[key] = it == previous.last_run.end() ? 0 : it->second;
    older.push_back(&m);
  }
  std::stable_sort(older.begin(), older.end(), [&](const SourceMark* a, const SourceMark* b) {
    return last_run[remembered_key(*a)] > last_run[remembered_key(*b)];
  });
  for (const SourceMark* m : older) {
    if (sources.size() >= kMaxRememberedInputs) {
      last_run.erase(remembered_key(*m));  // forgotten: read longest ago
      continue;
    }
    sources.push_back(*m);
  }
  out.progress.sources = std::move(sources);
  out.progress.kafka_next_offset = current.kafka_next_offset;
  out.progress.kafka_rejected = current.kafka_rejected;
  out.last_run = std::move(last_run);
}

CheckpointLock::CheckpointLock(const std::string& checkpoint_path) {
  const std::string path = checkpoint_lock_path(checkpoint_path);
  fd_.reset(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd_) {
    throw Error(ErrorCategory::kIo,
                fmt::format("{}: cannot open the checkpoint lock: {}", path, std::strerror(errno)));
  }
  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char pid[32] = {0};
    const ssize_t n = ::pread(fd_.get(), pid, sizeof pid - 1, 0);
    std::string owner = n > 0 ? std::string(pid, static_cast<std::size_t>(n)) : "";
    while (!owner.empty() && (owner.back() == '\n' || owner.back() == ' ')) owner.pop_back();
    if (err != EWOULDBLOCK) {
      throw Error(ErrorCategory::kIo, fmt::format("{}: cannot lock: {}", path, std::strerror(err)));
    }
    // The pid an earlier run left in the file, when another process holds the lock (flock(1)
    // around a cron job): not named as the holder.
    int owner_pid = 0;
    const bool stale =
        std::from_chars(owner.data(), owner.data() + owner.size(), owner_pid).ec == std::errc() &&
        owner_pid > 0 && ::kill(owner_pid, 0) != 0 && errno == ESRCH;
    if (stale) {
      throw Error(ErrorCategory::kLocked,
                  fmt::format("{}: another process holds its lock {} (not the atlas2kudu run "
                              "whose pid the file names, {}, which has ended: flock(1) on the "
                              "lock file?); nothing was done. Run again once it has let go.",
                              checkpoint_path, path, owner));
    }
    throw Error(ErrorCategory::kLocked,
                fmt::format("{}: another atlas2kudu run{} is applying with this checkpoint (it "
                            "holds {}); nothing was done. Run again once it has finished.",
                            checkpoint_path, owner.empty() ? "" : " (pid " + owner + ")", path));
  }
  // The owner's pid, for the next run's message. A disk too full for these few bytes could not
  // take the checkpoint either: fail now, before a window is applied that could not be recorded.
  const std::string pid = std::to_string(::getpid()) + "\n";
  errno = ENOSPC;  // what a short write without an error means here
  if (::ftruncate(fd_.get(), 0) != 0 ||
      ::pwrite(fd_.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    throw Error(ErrorCategory::kIo,
                fmt::format("{}: cannot write: {}; nothing was applied: the checkpoint "
                            "beside it could not be saved either",
                            path, os_error_text(err)));
  }
}

}  // namespace atlas2kudu

namespace atlas2kudu {

CheckpointFile::CheckpointFile(std::string path, Reader& reader,
                               Reader::ResumeNotice on_source_resumed, CheckpointTarget target)
    : path_(std::move(path)) {
  require_regular_or_absent(path_);  // before anything is applied: it will be replaced
  previous_ = load_checkpoint(path_);
  existed_ = previous_.found;
  const CheckpointTarget& recorded = previous_.target;
  // Impala's database names and host names (DNS) know no case: "impala-A" is "impala-a".
  // Another name for the same cluster is refused, with the remedy in the message.
  if (!target.endpoint.empty() && !recorded.endpoint.empty() &&
      (!equals_ignoring_ascii_case(recorded.endpoint, target.endpoint) ||
       !equals_ignoring_ascii_case(recorded.database, target.database))) {
    // Another host name can be the same cluster; another database never holds what was applied.
    const bool same_database = equals_ignoring_ascii_case(recorded.database, target.database);
    throw Error(ErrorCategory::kCheckpoint,
                fmt::format("{}: records what was applied to database {} on {}, and this run "
                            "writes to database {} on {}: its inputs would be skipped there. "
                            "Give each target its own --checkpoint{}",
                            one_line(path_), recorded.database, one_line(recorded.endpoint),
                            target.database, one_line(target.endpoint),
                            same_database ? fmt::format(" (if {} is the same cluster under "
                                                        "another name, delete the file's "
                                                        "\"target\" member)",
                                                        one_line(target.endpoint))
                                          : std::string()));
  }
  file_digest_ = digest_of_file(path_);
  // The target FILE.window was written for: the recorded one, else this run's (a first run).
  const CheckpointTarget& tied = recorded.endpoint.empty() ? target : recorded;
  target_ = tied.endpoint + "\t" + to_lower_ascii(tied.database);
  load_window_knowledge();
  checkpoint_ = previous_;
  // Recorded once, as first given (a later run may spell the database in another case).
  if (recorded.endpoint.empty()) checkpoint_.target = std::move(target);
  checkpoint_.runs = previous_.runs + 1;  // this run's number, recorded when it saves
  reader.resume_from(previous_.progress, std::move(on_source_resumed));
}

void CheckpointFile::record(Checkpoint next, const Reader& reader) {
  InputProgress progress = reader.progress();
  remember_inputs(previous_, progress, next.runs, next, reader.resumed_sources());
  const std::string text = checkpoint_json(next);
  const std::string next_digest = to_hex(sha256(text));
  // What an earlier run left and the recorded window did not fold stays, for the checkpoint
  // after this record: written before the checkpoint, with a section for each of the two.
  const std::uint64_t remaining = assumed_ ? assumed_->size_without(folding_) : 0;
  std::shared_ptr<const SnapshotFile> left;  // the section for the checkpoint after
  if (remaining > 0) {
    const std::vector<std::uint64_t> at = write_window_knowledge(
        {{file_digest_, window_events_, window_end_, window_knowledge_->size(),
          [&](const auto& out) { window_knowledge_->write(out); }},
         {next_digest, 0, {}, remaining, [&](const auto& out) {
            assumed_->write_without(folding_, out);
          }}});
    left = std::make_shared<const SnapshotFile>(window_knowledge_path(), at[1], remaining, false);
  }
  write_file_atomically(path_, text, 0600);
  file_digest_ = next_digest;
  window_knowledge_ = std::move(left);
  if (window_knowledge_) {
    folded_ = folding_;
  } else {
    assumed_.reset();
    folded_.clear();
    folding_.clear();
  }
  // Only once the file holds it: a save that fails leaves state() and resume_point() saying what
  // the file still holds (--stats and the stopped run's message report them).
  checkpoint_ = std::move(next);
  recorded_ = std::move(progress);
  written_ = true;
  // The window it records is applied: nothing of it is left to fold again (a FILE.window left
  // by a failure here is tied to the checkpoint before, and ignored).
  if (!assumed_) remove_window_knowledge();
}

void CheckpointFile::window_applied(const WindowInfo& window, const Reader& reader) {
  Checkpoint next = checkpoint_;
  next.windows_applied += 1 + parts_pending_;
  next.events_applied += part_events_pending_ + window.last_event - window.first_event + 1;
  record(std::move(next), reader);
  windows_recorded_ += 1 + parts_pending_;
  parts_pending_ = 0;
  part_events_pending_ = 0;
}

void CheckpointFile::part_applied(const WindowInfo& part) {
  ++parts_pending_;
  part_events_pending_ += part.last_event - part.first_event + 1;
}

void CheckpointFile::run_completed(const Reader& reader) {
  // Every window is applied, so all that was read is: the last window was recorded before the
  // reader saw its input end (`complete`), and a run that applied no window still records how
  // far it read (the marks of inputs it skipped entirely stay current).
  if (written_ && reader.progress() == recorded_) return;
  record(checkpoint_, reader);
}

namespace {

// Version 2 adds each section's number of events (the window's, so that a rerun's first window
// covers it); a version 1 file's sections have none (0: no least length).
constexpr std::string_view kWindowKnowledgeMagic = "atlas2kudu-window-knowledge/2\n";
constexpr std::string_view kWindowKnowledgeMagicV1 = "atlas2kudu-window-knowledge/1\n";

// The bytes of `path`, or nullopt if it does not exist. Throws Error(kCheckpoint) if it cannot be
// read.
std::optional<std::string> read_whole_file(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return std::nullopt;
    throw Error(ErrorCategory::kCheckpoint,
                fmt::format("{}: cannot be read: {}", one_line(path), std::strerror(errno)));
  }
  std::string out;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw Error(ErrorCategory::kCheckpoint,
                  fmt::format("{}: cannot be read: {}", one_line(path), std::strerror(errno)));
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace

std::string CheckpointFile::digest_of_file(const std::string& path) {
  const std::optional<std::string> bytes = read_whole_file(path);
  return bytes ? to_hex(sha256(*bytes)) : std::string();
}

void CheckpointFile::load_window_knowledge() {
  const std::string path = window_knowledge_path();
  require_regular_or_absent(path);  // a FIFO there would hold the run in open(2)
  const UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) {
    if (errno == ENOENT) return;
    throw Error(ErrorCategory::kCheckpoint,
                fmt::format("{}: cannot be read: {}", one_line(path), std::strerror(errno)));
  }
  const int fd = file.get();
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    throw Error(ErrorCategory::kCheckpoint,
                fmt::format("{}: cannot be read: {}", one_line(path), std::strerror(errno)));
  }
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  // magic, target line, then sections: digest line, events line (not in version 1), end line (not
  // in version 1), size line, that many bytes of knowledge. Only the lines are read here: the
  // knowledge stays in the file (SnapshotFile).
  std::uint64_t at = 0;
  const auto corrupt = [&] {
    return Error(ErrorCategory::kCheckpoint,
                 fmt::format("{}: not what atlas2kudu writes there; move it and {} away to "
                             "start over (every input is then applied again)",
                             one_line(path), one_line(path_)));
  };
  const auto line = [&]() -> std::optional<std::string> {
    std::string text;
    char chunk[4096];
    for (;;) {
      ssize_t n;
      do {
        n = ::pread(fd, chunk, sizeof chunk, static_cast<off_t>(at + text.size()));
      } while (n < 0 && errno == EINTR);
      if (n < 0) {
        throw Error(ErrorCategory::kCheckpoint,
                    fmt::format("{}: cannot be read: {}", one_line(path), std::strerror(errno)));
      }
      if (n == 0) return std::nullopt;  // no newline before the end
      const std::string_view read(chunk, static_cast<std::size_t>(n));
      const std::size_t end = read.find('\n');
      text.append(read.substr(0, end));
      if (end != std::string_view::npos) break;
    }
    at += text.size() + 1;
    return text;
  };
  const std::optional<std::string> magic = line();
  const auto is = [&](std::string_view m) { return magic == m.substr(0, m.size() - 1); };
  const bool with_events = is(kWindowKnowledgeMagic);
  if (!with_events && !is(kWindowKnowledgeMagicV1)) throw corrupt();
  const auto number = [&](std::string_view text) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) throw corrupt();
    return n;
  };
  const std::optional<std::string> target = line();
  if (!target) throw corrupt();
  if (*target != target_) {
    // Written for another target (the same path given to runs against two clusters): of no use.
    discarded_ = "it was written for another target";
    remove_window_knowledge();
    return;
  }
  // "identity:record": the input and record of the window's last event, or "" (standard input;
  // an identity holds no space, and may hold ':': the number is read from the right).
  const auto window_end = [&](std::string_view text) {
    WindowEnd end;
    if (text.empty()) return end;
    const std::size_t colon = text.rfind(':');
    if (colon == 0 || colon == std::string_view::npos) throw corrupt();
    end.identity = std::string(text.substr(0, colon));
    end.record = number(text.substr(colon + 1));
    return end;
  };
  while (at < file_size) {
    const std::optional<std::string> digest = line();
    const std::optional<std::string> events_text =
        with_events ? line() : std::optional<std::string>("0");
    const std::optional<std::string> end_text =
        with_events ? line() : std::optional<std::string>("");
    const std::optional<std::string> size_text = line();
    if (!digest || !events_text || !end_text || !size_text) throw corrupt();
    const std::uint64_t events = number(*events_text);
    WindowEnd end = window_end(*end_text);
    const std::uint64_t size = number(*size_text);
    if (size > file_size - at) throw corrupt();
    if (*digest == file_digest_) {
      stopped_window_events_ = static_cast<std::size_t>(events);
      stopped_window_end_ = std::move(end);
      if (size > 0) {
        try {
          // Checked now, before anything runs; then read an entity at a time.
          assumed_ = std::make_shared<const SnapshotFile>(path, at, size);
        } catch (const Error& e) {
          if (e.category() == ErrorCategory::kCheckpoint) throw corrupt();
          throw Error(ErrorCategory::kCheckpoint, e.what());  // a read that failed: exit 65
        }
        window_knowledge_ = assumed_;
        folded_.assign(assumed_->entries(), false);
        folding_ = folded_;
      }
      return;
    }
    at += size;
  }
  // Left for another state of the checkpoint (it was replaced or removed since): of no use.
  // Also left by a run that stopped between recording its window and removing it: harmless.
  discarded_ = fmt::format(
      "it was written when {} held another state (by a run stopped right after recording its "
      "last window, or before {} was replaced)",
      one_line(path_), one_line(path_));
  remove_window_knowledge();
}

void CheckpointFile::forget_window_knowledge() {
  const bool loaded = assumed_ || stopped_window_events_ > 0;
  stopped_window_events_ = 0;
  stopped_window_end_ = {};
  if (!loaded) return;
  discarded_ = "this run does not read the prior state from the tables (--prior none)";
  window_knowledge_.reset();
  assumed_.reset();
  folded_.clear();
  folding_.clear();
  remove_window_knowledge();
}

std::vector<std::uint64_t> CheckpointFile::write_window_knowledge(
    const std::vector<WindowSection>& sections) const {
  AtomicFile file(window_knowledge_path(), 0600);
  std::FILE* out = file.stream();
  int error = 0;  // errno of the first write that failed; nothing is written after it
  std::uint64_t written = 0;
  const auto put = [&](std::string_view bytes) {
    if (error == 0 && std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size()) {
      error = errno != 0 ? errno : EIO;
    }
    written += bytes.size();
  };
  std::vector<std::uint64_t> starts;
  put(kWindowKnowledgeMagic);
  put(fmt::format("{}\n", target_));
  for (const WindowSection& section : sections) {
    put(fmt::format("{}\n{}\n", section.digest, section.events));
    if (!section.end.identity.empty()) {
      put(fmt::format("{}:{}", section.end.identity, section.end.record));
    }
    put(fmt::format("\n{}\n", section.size));
    starts.push_back(written);
    section.knowledge(put);
    if (error == 0 && written - starts.back() != section.size) {
      throw Error(
          ErrorCategory::kInternal,
          fmt::format("{}: {} bytes of knowledge written where {} were announced",
                      one_line(window_knowledge_path()), written - starts.back(), section.size));
    }
  }
  if (error != 0) {
    throw Error(ErrorCategory::kIo,
                fmt::format("{}: cannot write: {}", one_line(window_knowledge_path()),
                            os_error_text(error)));
  }
  file.commit();
  return starts;
}

void CheckpointFile::note_window(std::span<const Event> window, const Reader& reader) {
  window_events_ = window.size();
  // The window's last event: its input, recognised by its identity (not standard input, which is
  // never resumed at a record), and the record that made it (the last chunk of a split message).
  window_end_ = {};
  if (!window.empty()) {
    const SourcePosition& last = window.back().pos;
    const InputProgress progress = reader.progress();
    if (last.source_index < progress.sources.size()) {
      window_end_.identity = progress.sources[last.source_index].identity;
      if (!window_end_.identity.empty()) window_end_.record = last.record;
    }
  }
}

void CheckpointFile::window_starting(const KnowledgeSnapshot& knowledge,
                                     std::span<const Event> window, const Reader& reader) {
  start_window([&](const auto& out) { knowledge.write(out); }, window, reader);
}

void CheckpointFile::window_starting(std::string_view knowledge, std::span<const Event> window,
                                     const Reader& reader) {
  const SnapshotFile entries{std::string(knowledge)};
  start_window([&](const auto& out) { entries.write_without({}, out); }, window, reader);
}

void CheckpointFile::start_window(const MergedSnapshot::Entries& knowledge,
                                  std::span<const Event> window, const Reader& reader) {
  note_window(window, reader);
  if (!assumed_) {
    window_knowledge_.reset();  // written out, never read again
    std::uint64_t size = 0;
    knowledge([&](std::string_view entry) { size += entry.size(); });
    write_window_knowledge({{file_digest_, window_events_, window_end_, size, knowledge}});
    return;
  }
  // What an earlier run knew before the window it stopped in comes first: it may have written
  // rows of entities this window does not name (it was cut longer), and of those it does, it
  // knew them before any of their rows were written. The window's own entities are noted only
  // to tell its knowledge from the earlier run's (record()).
  const MergedSnapshot merged(*assumed_, folded_, knowledge);
  std::vector<Guid> entities;
  const std::uint64_t size = merged.size(&entities);
  folding_ = folded_;
  for (const Guid& g : entities) {
    if (const std::size_t i = assumed_->find(g); i != SnapshotFile::npos) folding_[i] = true;
  }
  const std::vector<std::uint64_t> at =
      write_window_knowledge({{file_digest_, window_events_, window_end_, size,
                               [&](const auto& out) { merged.write(out); }}});
  window_knowledge_ =
      std::make_shared<const SnapshotFile>(window_knowledge_path(), at[0], size, false);
}

bool CheckpointFile::first_window_may_close(const Reader& reader,
                                            std::span<const Event> window) const {
  // At least as many events as the stopped window had; then on until the event of its last
  // record is read again (a rerun with other record limits accepts or rejects other records),
  // or its input is read to its end; but never past twice as many events (the inputs changed,
  // or that record is rejected now): the window must end within a bounded size.
  if (window.size() < stopped_window_events_) return false;
  if (stopped_window_end_.identity.empty() || window.size() >= 2 * stopped_window_events_) {
    return true;
  }
  const InputProgress progress = reader.progress();
  const SourcePosition& last = window.back().pos;
  if (last.source_index < progress.sources.size()) {
    const SourceMark& source = progress.sources[last.source_index];
    if (source.identity == stopped_window_end_.identity &&
        last.record >= stopped_window_end_.record) {
      return true;
    }
  }
  // Its input read to its end (its last records rejected this time, say).
  return std::any_of(progress.sources.begin(), progress.sources.end(), [&](const SourceMark& m) {
    return m.identity == stopped_window_end_.identity && m.complete;
  });
}

bool CheckpointFile::assume_window_knowledge(Compiler& compiler) const {
  if (!assumed_) return false;
  compiler.assume(assumed_);  // checked when it was loaded
  return true;
}

std::string CheckpointFile::window_knowledge() const {
  return window_knowledge_ ? window_knowledge_->str() : std::string();
}

void CheckpointFile::remove_window_knowledge() {
  const std::string path = window_knowledge_path();
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw Error(ErrorCategory::kIo,
                fmt::format("{}: cannot be removed: {}", one_line(path), std::strerror(errno)));
  }
}

std::string CheckpointFile::resume_point() const {
  // Inputs are read in order, so the rerun starts in the first one not complete.
  for (const SourceMark& mark : recorded_.sources) {
    if (mark.complete) continue;
    if (mark.identity.empty()) {
      return recorded_.kafka_next_offset.empty()
                 ? "standard input from its start (records read from a pipe cannot be "
                   "recognised again; only Kafka offsets, as kcat -J gives them, let a rerun "
                   "skip them)"
                 : "standard input past the Kafka offsets it records";
    }
    if (mark.next_record == 0) return fmt::format("{} from its start", one_line(mark.name));
    return fmt::format("{} after its first {} record{}", one_line(mark.name), mark.next_record,
                       mark.next_record == 1 ? "" : "s");
  }
  return "nothing of these inputs (all of them are applied)";
}

}  // namespace atlas2kudu
