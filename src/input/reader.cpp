#include "atlas2kudu/reader.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "input/byte_source.h"
#include "input/framer.h"
#include "input/input_error.h"
#include "input/json_text.h"
#include "input/notification.h"
#include "input/offset_set.h"
#include "input/split_assembler.h"
#include "util/base64.h"
#include "util/diagnostic.h"
#include "util/digest.h"
#include "util/json_writer.h"
#include "util/os_error.h"
#include "util/stop.h"
#include "util/utf8.h"

namespace atlas2kudu {

std::string_view intern_source_name(const std::string& name) {
  static std::mutex mu;
  static std::set<std::string, std::less<>> names;
  std::lock_guard lock(mu);
  return *names.insert(name).first;
}

namespace {

// An input's name as the match by name compares it (a file under 64 KiB that grew): s.jsonl,
// ./s.jsonl, its absolute path and a link to it are one file. A name that does not resolve is
// compared as given. A match is only a candidate: its records still tell whether it is the file.
std::string path_key(const std::string& name) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(name, error);
  if (error) return name;
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(absolute, error);
  return error ? name : resolved.string();
}

// Bytes written verbatim under `key`, or as KEY_base64 when they are no UTF-8 (a JSON string
// cannot hold them as they are).
void write_bytes(JsonWriter& w, std::string_view key, std::string_view bytes) {
  if (is_valid_utf8(bytes)) {
    w.key(key).value(bytes);
  } else {
    w.key(std::string(key) + "_base64").value(base64_encode(bytes));
  }
}

void write_position(JsonWriter& w, const SourcePosition& pos) {
  w.key("source").value(pos.source);
  // A file name that is no UTF-8 is written with U+FFFD in place of its bad bytes: the exact name
  // too, so that the file can be found from the line.
  if (!is_valid_utf8(pos.source)) w.key("source_base64").value(base64_encode(pos.source));
  w.key("line").value(pos.line).key("offset").value(pos.offset);
  w.key("record_index").value(pos.record);
  if (pos.kafka) {
    w.key("kafka").begin_object();
    // kafka-console-consumer prints no topic: none is written rather than an empty one.
    if (!pos.kafka->topic.empty()) w.key("topic").value(pos.kafka->topic);
    w.key("partition").value(pos.kafka->partition).key("offset").value(pos.kafka->offset);
    w.end_object();
  }
}

// A reject file that a failed run left ending in part of a line (its disk filled up mid-line) is
// cut back to its last whole line before lines are appended, so that every line stays one JSON
// object. The record of that line is rejected again by the run that appends: the failed run's
// window was not checkpointed, so it is read again.
void drop_partial_last_line(int fd, off_t size) {
  char last = '\n';
  if (::pread(fd, &last, 1, size - 1) != 1 || last == '\n') return;
  std::array<char, 65536> chunk{};
  off_t end = size - 1;  // bytes before `end` are still to look at
  while (end > 0) {
    const off_t from = std::max<off_t>(0, end - static_cast<off_t>(chunk.size()));
    const ssize_t n = ::pread(fd, chunk.data(), static_cast<std::size_t>(end - from), from);
    if (n != end - from) return;  // unreadable: leave the file as it is
    const void* nl = ::memrchr(chunk.data(), '\n', static_cast<std::size_t>(n));
    if (nl != nullptr) {
      end = from + (static_cast<const char*>(nl) - chunk.data()) + 1;
      break;
    }
    end = from;
  }
  // Should this fail, appending after the fragment is no worse than before.
  [[maybe_unused]] const int truncated = ::ftruncate(fd, end);
}

// Opens the reject file without following a symbolic link, refusing anything but a regular file
// (a FIFO or device at the path is not opened for writing at all), new files mode 0600.
std::FILE* open_reject_file(const std::string& path, bool append) {
  const auto fail = [&](const std::string& why) {
    return SourceError(false,
                       fmt::format("{}: cannot create reject file: {}", one_line(path), why));
  };
  struct stat before {};
  if (::lstat(path.c_str(), &before) == 0 && !S_ISREG(before.st_mode)) {
    throw fail("not a regular file; refusing to write to it");
  }
  const int fd = ::open(path.c_str(),
                        // Appending reads the last line too (drop_partial_last_line).
                        (append ? O_RDWR | O_APPEND : O_WRONLY | O_TRUNC) | O_CREAT | O_NOFOLLOW |
                            O_CLOEXEC | O_NONBLOCK,
                        0600);
  if (fd < 0)
    throw fail(errno == ELOOP ? "a symbolic link; refusing to follow it" : std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw fail("not a regular file; refusing to write to it");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (append && st.st_size > 0) drop_partial_last_line(fd, st.st_size);
  std::FILE* file = ::fdopen(fd, append ? "a" : "w");
  if (file == nullptr) {
    ::close(fd);
    throw fail(std::strerror(errno));
  }
  return file;
}

}  // namespace

std::string rejection_json(const Rejection& r) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  write_position(w, r.pos);
  w.key("code").value(to_string(r.code));
  w.key("reason").value(r.reason);
  if (!r.console_prefix.empty()) write_bytes(w, "console_prefix", r.console_prefix);
  write_bytes(w, "record", r.record);
  if (r.record_bytes > r.record.size()) {
    w.key("record_truncated").value(true).key("record_bytes").value(r.record_bytes);
  }
  w.end_object();
  out += '\n';
  return out;
}

std::string refusal_json(const RowRefusal& r) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  if (!r.events.empty()) write_position(w, r.events.front()->pos);
  w.key("code").value("server-refused");
  w.key("reason").value(r.reason);
  w.key("table").value(r.table);
  w.key("where").value(r.where);
  if (is_valid_utf8(r.row)) {
    w.key("row").value(r.row);
  } else {
    w.key("row_base64").value(base64_encode(r.row));
  }
  w.key("events").begin_array();
  for (const Event* e : r.events) {
    w.begin_object();
    write_position(w, e->pos);
    w.key("op").value(to_string(e->op));
    w.key("guid").value(e->guid.dashed());
    w.key("type_name").value(e->type_name);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out += '\n';
  return out;
}

namespace {
constexpr std::string_view kMalformedRecord = "malformed record";
}  // namespace

RejectSink::RejectSink(RejectPolicy policy, std::FILE* diagnostics, bool over_progress_line)
    : policy_(std::move(policy)),
      diagnostics_(diagnostics),
      over_progress_line_(over_progress_line) {
  if (!policy_.reject_file.empty()) file_ = open_reject_file(policy_.reject_file, policy_.append);
}

RejectSink::~RejectSink() {
  if (file_ != nullptr) std::fclose(file_);
}

void RejectSink::write_line(const std::string& line) {
  if (file_ == nullptr) return;
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    throw SourceError(false, fmt::format("{}: cannot write reject file: {}",
                                         one_line(policy_.reject_file), os_error_text(errno)));
  }
}

void RejectSink::count_one(const std::string& where, std::string_view what) {
  ++count_;
  if (count_ > policy_.max_rejects) {
    throw TooManyRejects(
        policy_.max_rejects == 0
            ? fmt::format("stopped at the first {} ({}); use --max-rejects N{} to set bad "
                          "records aside and go on",
                          what, where, policy_.reject_file.empty() ? " --reject-file FILE" : "")
        : what == kMalformedRecord
            ? fmt::format("more than {} record{} rejected (--max-rejects); stopped at {}",
                          policy_.max_rejects, policy_.max_rejects == 1 ? "" : "s", where)
            // A row the server refused: the summary's "rejected" counts only records.
            : fmt::format("more than {} rejected (--max-rejects counts malformed records and "
                          "rows the server refused); stopped at the {} ({})",
                          policy_.max_rejects, what, where));
  }
}

void RejectSink::print(std::string_view line) {
  if (diagnostics_ == nullptr) return;
  const std::string_view clear = over_progress_line_ ? "\r\x1b[K" : "";
  if (file_ == nullptr || printed_ < kRejectionsOnStderr) {
    print_diagnostic(diagnostics_, "{}{}\n", clear, line);
  } else if (printed_ == kRejectionsOnStderr) {
    print_diagnostic(diagnostics_,
                     "{}atlas2kudu: more rejections: only in {} from here on (the first {} are "
                     "above; the summary counts them all)\n",
                     clear, one_line(policy_.reject_file), kRejectionsOnStderr);
  }
  ++printed_;
}

void RejectSink::reject(const Rejection& r) {
  print(fmt::format("{}: {}", format_position(r.pos), r.reason));
  write_line(rejection_json(r));
  count_one(format_position(r.pos), kMalformedRecord);
}

void RejectSink::refused_rows(const std::vector<RowRefusal>& rows, std::string_view window) {
  const std::uint64_t before = count_;
  for (const RowRefusal& r : rows) {
    const std::string at = r.events.empty() ? r.where : format_position(r.events.front()->pos);
    print(fmt::format("{}: the server refused the {} row written here ({}): {}", at, r.table,
                      r.where, r.reason));
    write_line(refusal_json(r));
    ++count_;
  }
  if (count_ <= policy_.max_rejects) return;
  throw TooManyRejects(fmt::format(
      "more than {} rejected (--max-rejects counts malformed records and rows the server "
      "refused): the server refused {} row{} of {} ({} rejected before it), all written to {}; "
      "the window's other rows were applied, but the window is not recorded as done, and the "
      "server refuses the same rows when it runs again: give --max-rejects {} or more to set "
      "them aside and go on",
      policy_.max_rejects, rows.size(), rows.size() == 1 ? "" : "s", window, before,
      one_line(policy_.reject_file), count_));
}

struct Reader::Impl {
  Impl(RejectSink& rejects, ReaderLimits limits)
      : rejects_(rejects),
        max_record_bytes_(limits.max_record_bytes),
        record_limit_source_(limits.record_limit_source),
        split_wait_records_(limits.split_wait_records),
        splits_(SplitLimits{limits.max_split_messages, limits.max_split_chunks,
                            limits.max_split_bytes, limits.split_limit_source}),
        decoder_(splits_, DecodeLimits{limits.max_inflated_bytes, limits.max_json_depth,
                                       limits.max_cell_bytes, limits.message_limit_source}) {
    decoder_.pass_over([this](const SourcePosition::Kafka& k) { return passed_over(k); });
  }

  bool next(Event& out);
  bool kafka_applied(const SourcePosition::Kafka& k) const;  // by an earlier run (--checkpoint)
  // Counts and passes over a record an earlier run applied (skipped) or this run has read already
  // (replayed: an export that overlaps another). Records are checked as they come, before their
  // payload, so a replayed chunk of a split message never reaches the assembler.
  bool passed_over(const SourcePosition::Kafka& k);
  // The accepted event's Kafka position (and its split message's other records'): read.
  void mark_read(const Event& event);
  bool open_next_source();
  // The inputs are either opened ahead (`opened_`) or named (`paths_`): one of the two is empty.
  std::size_t input_count() const { return std::max(opened_.size(), paths_.size()); }
  std::string input_name(std::size_t i) const {
    return i < opened_.size() ? opened_[i]->name() : paths_[i];
  }
  bool remaining_inputs_can_wait() const;
  void reject(const SourcePosition& pos, RejectCode code, std::string reason,
              std::string_view record, std::uint64_t record_bytes = 0,
              std::string_view console_prefix = {});
  InputProgress progress() const;

  std::vector<std::string> paths_;
  std::vector<std::unique_ptr<ByteSource>> opened_;
  std::size_t next_path_ = 0;
  RejectSink& rejects_;
  std::size_t max_record_bytes_;
  std::string record_limit_source_;
  std::uint64_t split_wait_records_;
  std::string_view source_name_;  // of the current source, interned
  std::unique_ptr<ByteSource> source_;
  std::unique_ptr<Framer> framer_;
  SplitAssembler splits_;  // split chunks held by decoder_, until their message completes
  NotificationDecoder decoder_;
  FramedRecord record_;
  ReadStats stats_;
  bool finished_ = false;
  bool holds_back_after_cut_ = false;  // resume_from was called
  std::vector<SourceMark> marks_;      // one per opened source; next_record = records framed
  // Per opened source: its last record was malformed and ran to the end of the input with no line
  // end (Framer::ended_at_record_end): not counted as read, and the source not complete.
  std::vector<bool> cut_at_end_;
  std::map<KafkaPartition, std::int64_t> kafka_next_;  // next offset after those read
  // Offsets of records rejected, by earlier runs (InputProgress::kafka_rejected) or this one, and
  // not read since.
  std::map<KafkaPartition, std::set<std::int64_t>> kafka_rejected_;
  // The offsets this run has read, per partition: exact, so that only records read already are
  // passed over (an older export read after a newer one that does not overlap it is applied, in
  // input order, and counted as out_of_order).
  std::map<KafkaPartition, OffsetSet> kafka_read_;
  // What splits_ held when the input ended (it is then emptied into rejections): progress() keeps
  // the resume point before those records.
  SplitAssembler::Hold incomplete_at_end_;
  // The messages a resume must read again: those still waiting (or, at the end of the input,
  // those with a chunk in the last input that had records), unless their first record is more
  // than split_wait_records_ back (ReaderLimits::split_wait_records).
  SplitAssembler::Hold resume_hold(bool at_end) const;
  InputProgress resume_;
  Reader::ResumeNotice on_resumed_;
  std::vector<bool> resume_used_;          // the entries an input of this run turned out to be
  std::vector<std::string> resume_paths_;  // path_key of each entry's name
  std::uint64_t skip_records_ = 0;         // of the current source
  std::uint32_t skip_framing_ = kFraming;  // how skip_records_ was counted
  // The entries of resume_.sources the current source may be, in the order they are tried, and
  // the one being tried (resumed_entry_, candidates_[candidate_]).
  std::vector<std::size_t> candidates_;
  std::size_t candidate_ = 0;
  std::size_t resumed_entry_ = 0;
  std::string first_mismatch_;  // how the first candidate tried differed
  void take_candidate(std::size_t k);
  std::uint64_t skipped_here_ = 0;  // records of the current source skipped so far
  // With a resume point: SHA-256 of the current source's records framed so far, and of those
  // before its last (a record cut short at the end is read again: not among those applied). The
  // digest before each record a split message holds, by its position, for a resume point that
  // pulls back to one (progress()).
  bool digest_records_ = false;
  Sha256Stream records_digest_;
  Sha256Stream records_digest_before_last_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::string> held_digests_;
  std::size_t prune_held_digests_at_ = 1024;
  void digest_record();
  std::string current_records_digest() const;
  // Once the records before the resume point were framed (or the source ended before): whether
  // they are those the checkpoint recorded. Either tells the resume notice, or reads the source
  // again from its start.
  void resume_or_read_again();
  // Throws when lines before the record being skipped were counted otherwise by the framing of
  // the resume point (an earlier release's checkpoint): skipping by count could pass over records
  // never applied.
  void check_skip_framing() const;
  std::uint64_t bytes_done_ = 0;  // consumed() of the sources closed
  std::uint64_t framed_end_ = 0;  // offset of the end of the source's last record framed
};

Reader::Reader(std::vector<std::string> paths, RejectSink& rejects, ReaderLimits limits)
    : impl_(std::make_unique<Impl>(rejects, limits)) {
  impl_->paths_ = std::move(paths);
  if (impl_->paths_.empty()) impl_->paths_.push_back("-");
}

Reader::Reader(std::vector<std::unique_ptr<ByteSource>> sources, RejectSink& rejects,
               ReaderLimits limits)
    : impl_(std::make_unique<Impl>(rejects, limits)) {
  impl_->opened_ = std::move(sources);
}

Reader::~Reader() = default;

bool Reader::next(Event& out) {
  return impl_->next(out);
}

const ReadStats& Reader::stats() const {
  return impl_->stats_;
}

void Reader::validation_only() {
  impl_->decoder_.validation_only();
}

std::uint64_t Reader::bytes_read() const {
  const Impl& r = *impl_;
  if (!r.source_) return r.bytes_done_;
  // The framer reads ahead of the records it hands out (a buffer of up to a few MiB): up to the
  // end of the last record framed, when that is a position in the stored input.
  if (!r.source_->inflates() && r.framed_end_ > 0) {
    return r.bytes_done_ + std::min(r.framed_end_, r.source_->consumed());
  }
  return r.bytes_done_ + r.source_->consumed();
}

InputProgress Reader::progress() const {
  return impl_->progress();
}

std::vector<bool> Reader::resumed_sources() const {
  return impl_->resume_used_;
}

void Reader::resume_from(InputProgress applied, ResumeNotice on_source_resumed) {
  impl_->on_resumed_ = std::move(on_source_resumed);
  impl_->resume_ = std::move(applied);
  impl_->resume_used_.assign(impl_->resume_.sources.size(), false);
  impl_->resume_paths_.clear();
  for (const SourceMark& m : impl_->resume_.sources)
    impl_->resume_paths_.push_back(path_key(m.name));
  impl_->holds_back_after_cut_ = true;
  impl_->digest_records_ = true;
  impl_->kafka_next_ = impl_->resume_.kafka_next_offset;
  impl_->kafka_rejected_.clear();
  for (const auto& [partition, offsets] : impl_->resume_.kafka_rejected) {
    // The highest kMaxRejectedOffsets, as reject() keeps them (a checkpoint edited by hand may
    // list more).
    const auto from = offsets.size() > kMaxRejectedOffsets ? offsets.end() - kMaxRejectedOffsets
                                                           : offsets.begin();
    impl_->kafka_rejected_[partition].insert(from, offsets.end());
  }
}

// Whether the inputs not opened yet can be read by a later run: files, not standard input or a
// pipe, whose records would be gone (a rerun reads such an input again from its start anyway).
bool Reader::Impl::remaining_inputs_can_wait() const {
  for (std::size_t i = next_path_; i < input_count(); ++i) {
    if (i < opened_.size()) {
      if (opened_[i]->identity().empty()) return false;
      continue;
    }
    if (!names_a_regular_file(paths_[i])) return false;
  }
  return true;
}

bool Reader::Impl::open_next_source() {
  if (framer_) {
    stats_.ignored_lines += framer_->ignored_lines();
    if (framer_->error_lines() != 0 && stats_.consumer_errors == 0) {
      stats_.first_consumer_error =
          fmt::format("{}:{}: {}", one_line(source_name_), framer_->first_error_line(),
                      framer_->first_error_text());
    }
    stats_.consumer_errors += framer_->error_lines();
    if (digest_records_) marks_.back().records_digest = current_records_digest();
    framer_.reset();
    bytes_done_ += source_->consumed();
    source_.reset();
    framed_end_ = 0;
  }
  const std::size_t inputs = input_count();
  if (holds_back_after_cut_ && !cut_at_end_.empty() && cut_at_end_.back() && next_path_ < inputs &&
      remaining_inputs_can_wait()) {
    // The rest of the record cut short, when it comes, goes before them (resume_from).
    stats_.inputs_held_back = inputs - next_path_;
    stats_.first_held_back = input_name(next_path_);
    stats_.held_back_behind = marks_.back().name;
    return false;
  }
  if (next_path_ < opened_.size()) {
    source_ = std::move(opened_[next_path_++]);
  } else if (next_path_ < paths_.size()) {
    source_ = open_byte_source(paths_[next_path_++]);
  } else {
    return false;
  }
  source_name_ = intern_source_name(source_->name());
  framer_ = std::make_unique<Framer>(*source_, max_record_bytes_, record_limit_source_);
  ++stats_.sources;
  marks_.push_back(SourceMark{source_->name(), source_->identity(), 0, false});
  cut_at_end_.push_back(false);
  skip_records_ = 0;
  skip_framing_ = kFraming;
  skipped_here_ = 0;
  records_digest_ = {};
  records_digest_before_last_ = {};
  candidates_.clear();
  candidate_ = 0;
  first_mismatch_.clear();
  if (!marks_.back().identity.empty()) {
    // By identity, else by name (a file under 64 KiB that has grown since has another identity):
    // each is tried in turn as its records are skipped (resume_or_read_again), the one with the
    // most records applied first (two exports may start alike, one may be a prefix of another:
    // the longest that fits is what was applied of this one), then the most recently read. An
    // entry another input of this run fitted may fit this one too (a copy).
    const SourceMark& mine = marks_.back();
    const std::string my_path = path_key(mine.name);
    for (std::size_t i = 0; i < resume_.sources.size(); ++i) {
      const SourceMark& m = resume_.sources[i];
      if (m.identity == mine.identity ||
          (resume_paths_[i] == my_path && !m.records_digest.empty() && m.next_record > 0)) {
        candidates_.push_back(i);
      }
    }
    std::stable_sort(candidates_.begin(), candidates_.end(), [&](std::size_t x, std::size_t y) {
      return resume_.sources[x].next_record > resume_.sources[y].next_record;
    });
    if (!candidates_.empty()) take_candidate(0);
  }
  return true;
}

void Reader::Impl::take_candidate(std::size_t k) {
  candidate_ = k;
  resumed_entry_ = candidates_[k];
  const SourceMark& applied = resume_.sources[resumed_entry_];
  skip_records_ = applied.next_record;
  skip_framing_ = applied.framing;
  if (skip_records_ == 0) {  // nothing to skip, nothing to check
    resume_used_[resumed_entry_] = true;
    if (on_resumed_) on_resumed_(source_name_, applied);
  }
}

namespace {

// SourceMark::records_digest of the records `fed` was fed: 32 hex digits of their SHA-256.
std::string mark_digest(const Sha256Stream& fed) {
  return to_hex(fed.digest()).substr(0, 32);
}

// ... of no records.
const std::string& no_records_digest() {
  static const std::string digest = mark_digest(Sha256Stream());
  return digest;
}

}  // namespace

void Reader::Impl::digest_record() {
  records_digest_before_last_ = records_digest_;
  // Lengths first: records "ab","c" and "a","bc" differ.
  const auto feed = [&](std::string_view bytes) {
    const std::uint64_t size = bytes.size();
    records_digest_.update(std::string_view(reinterpret_cast<const char*>(&size), sizeof size));
    records_digest_.update(bytes);
  };
  feed(record_.console_prefix);
  feed(record_.text);
}

std::string Reader::Impl::current_records_digest() const {
  const Sha256Stream& d = cut_at_end_.back() ? records_digest_before_last_ : records_digest_;
  return mark_digest(d);
}

void Reader::Impl::resume_or_read_again() {
  const SourceMark& applied = resume_.sources[resumed_entry_];
  const std::uint64_t expected = skip_records_;
  skip_records_ = 0;  // done either way
  if (skipped_here_ == expected &&
      (applied.records_digest.empty() || mark_digest(records_digest_) == applied.records_digest)) {
    resume_used_[resumed_entry_] = true;  // superseded by this input's mark
    if (on_resumed_) on_resumed_(source_name_, applied);
    return;
  }
  std::unique_ptr<ByteSource> again = source_->reopen();
  if (!again) {
    throw Error(ErrorCategory::kCheckpoint,
                fmt::format("{}: its first {} record{} are not those an earlier run applied, and "
                            "it cannot be read again from its start",
                            one_line(source_name_), expected, expected == 1 ? "" : "s"));
  }
  if (first_mismatch_.empty()) {
    first_mismatch_ =
        skipped_here_ < expected
            ? fmt::format(
                  "{}, taken for {}: it has {} record{}, fewer than the {} an earlier "
                  "run applied",
                  one_line(source_name_), one_line(applied.name), skipped_here_,
                  skipped_here_ == 1 ? "" : "s", expected)
            : fmt::format(
                  "{}, taken for {}: its first {} record{} are not those an earlier run "
                  "applied",
                  one_line(source_name_), one_line(applied.name), expected,
                  expected == 1 ? "" : "s");
  }
  const bool another = candidate_ + 1 < candidates_.size();
  if (!another) {
    ++stats_.resume_mismatches;
    if (stats_.first_resume_mismatch.empty()) stats_.first_resume_mismatch = first_mismatch_;
  }
  stats_.records -= skipped_here_;
  stats_.skipped -= skipped_here_;
  skipped_here_ = 0;
  skip_framing_ = kFraming;
  source_ = std::move(again);
  framer_ = std::make_unique<Framer>(*source_, max_record_bytes_, record_limit_source_);
  framed_end_ = 0;
  marks_.back().next_record = 0;
  cut_at_end_.back() = false;
  records_digest_ = {};
  records_digest_before_last_ = {};
  if (another) take_candidate(candidate_ + 1);  // read again from the start, skipping as that says
}

void Reader::Impl::check_skip_framing() const {
  if (skip_framing_ >= kFraming || framer_->counted_differently_from(skip_framing_) == 0) return;
  throw Error(
      ErrorCategory::kCheckpoint,
      fmt::format("{}: the checkpoint's resume point, after {} record{}, was counted by an "
                  "earlier atlas2kudu, and this input has lines it counted otherwise before "
                  "that point ({}): skipping by that count "
                  "could pass over records never applied. Finish this input with the "
                  "release that wrote the checkpoint, or apply it again from its start "
                  "with a new --checkpoint (what was applied already changes nothing when "
                  "applied again)",
                  one_line(source_name_), skip_records_, skip_records_ == 1 ? "" : "s",
                  skip_framing_ == 1   ? "a Kafka tool's log line, a line starting with '[' that "
                                         "opens no array, an array element cut short, a console "
                                         "line of prefixes alone, or a console key that is JSON"
                  : skip_framing_ == 2 ? "a console line of prefixes alone, or a console key that "
                                         "is JSON"
                                       : "a console key that is JSON"));
}

bool Reader::Impl::kafka_applied(const SourcePosition::Kafka& k) const {
  const auto it = resume_.kafka_next_offset.find({k.topic, k.partition});
  return it != resume_.kafka_next_offset.end() && k.offset < it->second &&
         !holds_offset(kafka_rejected_, k);
}

bool Reader::Impl::passed_over(const SourcePosition::Kafka& k) {
  if (kafka_applied(k)) {
    ++stats_.skipped;
    ++stats_.skipped_by_offset;
    return true;
  }
  if (!holds_offset(kafka_read_, k) && !splits_.holds(k)) return false;
  if (stats_.replayed++ == 0) {
    // The record being read: passed_over is asked before its payload is decoded.
    SourcePosition at;
    at.source = source_name_;
    at.line = record_.line;
    at.offset = record_.offset;
    at.kafka = k;
    stats_.first_replayed = format_position(at);
  }
  return true;
}

void Reader::Impl::mark_read(const Event& event) {
  if (!event.pos.kafka) return;
  const SourcePosition::Kafka& k = *event.pos.kafka;
  // A record rejected before, read again (fixed from the reject file), is out of order like any
  // other record after later offsets of its partition: it can take rows back to older states.
  // (One applied before never comes here: passed_over passed it over.)
  erase_offset(kafka_rejected_, k);
  std::int64_t& next = kafka_next_[{k.topic, k.partition}];
  if (k.offset < next) ++stats_.out_of_order;
  next = std::max(next, k.offset + 1);  // offsets are below INT64_MAX
  kafka_read_[{k.topic, k.partition}].insert(k.offset);
  // The other chunks of a split message it completed are read and applied with it, in their
  // own partitions.
  for (const HeldRecord& held : decoder_.completed_records()) {
    if (!held.pos.kafka) continue;
    const SourcePosition::Kafka& at = *held.pos.kafka;
    erase_offset(kafka_rejected_, at);
    std::int64_t& chunk_next = kafka_next_[{at.topic, at.partition}];
    chunk_next = std::max(chunk_next, at.offset + 1);
    kafka_read_[{at.topic, at.partition}].insert(at.offset);
  }
}

SplitAssembler::Hold Reader::Impl::resume_hold(bool at_end) const {
  // Records framed before each source, to tell how far back a held record was read.
  std::vector<std::uint64_t> before(marks_.size() + 1, 0);
  std::size_t last_with_records = 0;
  for (std::size_t i = 0; i < marks_.size(); ++i) {
    before[i + 1] = before[i] + marks_[i].next_record;
    if (marks_[i].next_record > 0) last_with_records = i;
  }
  const std::uint64_t now = before[marks_.size()];
  return splits_.hold([&](std::span<const HeldRecord> records) {
    const SourcePosition& first = records.front().pos;  // records are in arrival order
    if (before[first.source_index] + first.record + split_wait_records_ < now) return false;
    // At the end: a message whose chunks were still arriving in the last input may go on in the
    // next one; one whose last chunk came in an earlier input had the inputs after it.
    return !at_end || records.back().pos.source_index == last_with_records;
  });
}

// The input layer's one resume point: every record framed so far and every Kafka offset
// delivered, except that the records held for split messages (those resume_hold keeps) pull their
// source back to the earliest of them, and each Kafka partition back to the smallest offset held
// in it, since after a restart those records must be read again. (Chunks of one message may sit
// in different partitions, so the earliest record alone is not enough.)
InputProgress Reader::Impl::progress() const {
  InputProgress p;
  p.sources = marks_;
  for (std::size_t i = 0; i < p.sources.size(); ++i) {
    p.sources[i].complete = (i + 1 < p.sources.size() || finished_) && !cut_at_end_[i];
  }
  p.kafka_next_offset = kafka_next_;
  if (digest_records_ && framer_) p.sources.back().records_digest = current_records_digest();
  const SplitAssembler::Hold hold = finished_ ? incomplete_at_end_ : resume_hold(false);
  if (const auto& pending = hold.earliest) {
    const std::size_t s = pending->source_index;
    for (std::size_t i = s; i < p.sources.size(); ++i) {
      p.sources[i].complete = false;
      p.sources[i].next_record = i == s ? pending->record : 0;
      if (digest_records_) {
        const auto held = held_digests_.find({pending->source_index, pending->record});
        p.sources[i].records_digest = i > s                         ? no_records_digest()
                                      : held != held_digests_.end() ? held->second
                                                                    : std::string();
      }
    }
  }
  for (const auto& [partition, offset] : hold.kafka_offsets) {
    // A partition with no entry skips nothing on resume: leave it so.
    const auto it = p.kafka_next_offset.find(partition);
    if (it != p.kafka_next_offset.end()) it->second = std::min(it->second, offset);
  }
  // Also those at or past the next offset, or in a partition nothing was read from yet: a later
  // run's records may take the next offset past them.
  for (const auto& [partition, offsets] : kafka_rejected_) {
    p.kafka_next_offset.try_emplace(partition, 0);  // 0: nothing applied there
    p.kafka_rejected[partition].assign(offsets.begin(), offsets.end());
  }
  return p;
}

void Reader::Impl::reject(const SourcePosition& pos, RejectCode code, std::string reason,
                          std::string_view record, std::uint64_t record_bytes,
                          std::string_view console_prefix) {
  ++stats_.rejected;
  ++stats_.per_reason[static_cast<std::size_t>(code)];
  if (pos.kafka) {
    std::set<std::int64_t>& offsets = kafka_rejected_[{pos.kafka->topic, pos.kafka->partition}];
    offsets.insert(pos.kafka->offset);
    if (offsets.size() > kMaxRejectedOffsets) offsets.erase(offsets.begin());  // the lowest goes
  }
  rejects_.reject(Rejection{pos, code, std::move(reason), record, record_bytes, console_prefix});
}

bool Reader::Impl::next(Event& out) {
  while (!finished_) {
    // Here too, not only in the caller's loop: rejected and skipped records never reach it, and
    // an input of nothing but bad records would otherwise be read to its end after SIGTERM.
    throw_if_stopped();
    if (!framer_ || !framer_->next(record_)) {
      if (framer_ && skip_records_ > 0) {  // it ended before the records applied did
        resume_or_read_again();
        continue;
      }
      if (open_next_source()) continue;
      finished_ = true;
      // Each record of a message that never completed is rejected, verbatim, in input order.
      // When a chunk of the message came in the last input, the resume point still stops before
      // its records: a rerun whose input holds the rest (the file grown, a later Kafka export)
      // must read them again, or the message is lost for good. One whose chunks all came in
      // earlier inputs had the inputs after them to complete in, and did not: holding it back
      // would have every later run read (and apply again) all that follows it (resume_hold).
      incomplete_at_end_ = resume_hold(true);
      for (const IncompleteRecord& held : splits_.take_incomplete()) {
        std::string reason =
            fmt::format("split message {} incomplete at end of input: {} of {} chunks arrived",
                        printable_excerpt(held.msg_id, 80), held.received, held.expected);
        if (!held.completed_earlier_at.empty()) {
          reason += fmt::format(
              "; a message with this msgId was completed earlier, at {} (copies of some of its "
              "chunks, from exports that overlap? or a msgId used again)",
              held.completed_earlier_at);
        }
        reject(held.record.pos, RejectCode::kBadSplit, std::move(reason), held.record.text, 0,
               held.record.console_prefix);
      }
      return false;
    }
    ++stats_.records;
    framed_end_ = record_.offset + record_.size;
    marks_.back().next_record = record_.index + 1;
    if (digest_records_) digest_record();
    SourcePosition pos;
    pos.source = source_name_;
    pos.source_index = static_cast<std::uint32_t>(marks_.size() - 1);
    pos.line = record_.line;
    pos.offset = record_.offset;
    pos.record = record_.index;
    pos.first_record = record_.index;
    // Both, or the position is unknown: an offset without its partition (or the reverse) could
    // match another partition's records, and records matched are passed over.
    if (record_.console_partition && record_.console_offset) {
      pos.kafka = SourcePosition::Kafka{"", *record_.console_partition, *record_.console_offset};
    }
    if (record_.index < skip_records_) {
      // Lines counted otherwise before a record the count skips shift the resume point; after
      // the last one skipped, they do not.
      check_skip_framing();
      ++stats_.skipped;
      ++skipped_here_;
      if (record_.index + 1 == skip_records_) resume_or_read_again();
      continue;
    }
    if (pos.kafka && passed_over(*pos.kafka)) continue;
    if (record_.error) {
      if (framer_->ended_at_record_end()) {
        // Perhaps only cut short by reading a file still being written: the next run reads it
        // again (rejected again if it is still bad).
        marks_.back().next_record = record_.index;
        cut_at_end_.back() = true;
        record_.reason +=
            " (the last record, cut short by the end of the input: was the input still being "
            "written?)";
      }
      reject(pos, *record_.error, record_.reason, record_.text, record_.size,
             record_.console_prefix);
      continue;
    }
    try {
      // nullopt: a split chunk, held (or a redelivered copy of one), or a kcat record passed over
      // (passed_over, asked by the decoder once it has read the record's Kafka position).
      std::optional<Event> event = decoder_.decode(
          record_.text, pos, record_.compact, record_.console_timestamp_ms, record_.console_prefix);
      if (!event) {
        // Perhaps held for a split message: the resume point may pull back to it.
        if (digest_records_) {
          held_digests_.emplace(std::pair{pos.source_index, pos.record},
                                mark_digest(records_digest_before_last_));
          // Those before every point a resume could pull back to go, now and then: finding that
          // point looks at every message completed while others waited.
          if (held_digests_.size() >= prune_held_digests_at_) {
            const auto earliest = splits_.earliest_pending();
            held_digests_.erase(
                held_digests_.begin(),
                earliest ? held_digests_.lower_bound({earliest->source_index, earliest->record})
                         : held_digests_.end());
            prune_held_digests_at_ = std::max<std::size_t>(1024, 2 * held_digests_.size());
          }
        }
        continue;
      }
      mark_read(*event);
      // The other records of a completed split message count once its event is accepted.
      stats_.split_chunks += decoder_.completed_records().size();
      out = std::move(*event);
    } catch (const InputError& e) {
      // A completed split message that turns out bad is rejected as all of its records.
      for (const HeldRecord& held : decoder_.completed_records()) {
        reject(held.pos, e.code(), e.what(), held.text, 0, held.console_prefix);
      }
      if (!pos.kafka)
        pos.kafka = decoder_.record_kafka();  // a kcat record's, read before it failed
      reject(pos, e.code(), e.what(), record_.text, 0, record_.console_prefix);
      continue;
    }
    ++stats_.events;
    ++stats_.per_operation[static_cast<std::size_t>(out.op)];
    if (out.legacy_v1) ++stats_.legacy_v1;
    return true;
  }
  return false;
}

std::vector<Event> read_all_events(const std::vector<std::string>& paths) {
  RejectSink rejects(RejectPolicy{}, nullptr);
  Reader reader(paths, rejects);
  std::vector<Event> events;
  for (Event e; reader.next(e);) events.push_back(std::move(e));
  return events;
}

}  // namespace atlas2kudu
