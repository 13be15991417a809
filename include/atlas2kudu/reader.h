// The reader: any real Atlas notification export in, a clean ordered stream of Events out.
//
// Files are read in the order given ("-" is stdin; gzip is detected and inflated). Each record
// is framed (framer.h), decoded (notification.h) and either becomes the next Event or is handed
// to the RejectSink with its position. Events come out in input order; a split message comes out
// where its last chunk was read. Nothing is dropped silently: every framed record is an event, a
// rejection, or a chunk of a split message (which at end of input is either complete or rejected).
//
//   RejectSink rejects(RejectPolicy{.max_rejects = 10, .reject_file = "bad.jsonl"});
//   Reader reader({"a.jsonl", "b.jsonl.gz"}, rejects);
//   for (Event e; reader.next(e);) { ... }   // throws TooManyRejects on the 11th bad record
//   reader.stats().events, reader.stats().rejected, ...
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/error.h"
#include "atlas2kudu/event.h"

namespace atlas2kudu {

// Why a record was rejected. The names (to_string) are stable: they key `check`'s per-reason
// counts and the --stats JSON, so scripts can rely on them.
enum class RejectCode : std::uint8_t {
  kNotJson,             // not-json: the record is not a JSON document at all
  kInvalidJson,         // invalid-json: JSON syntax error, invalid UTF-8, truncated document
  kTooLarge,            // too-large: over a limit: record or decompressed size, nesting depth,
                        // a string cell (--max-cell-bytes), split reassembly caps
  kWrongType,           // wrong-type: a field has the wrong JSON type
  kMissingField,        // missing-field: a required field is absent
  kBadGuid,             // bad-guid: a guid that is not a UUID
  kUnknownOperation,    // unknown-operation: operationType outside the V1/V2 sets
  kUnknownType,         // unknown-type: message.type is neither a V1 nor a V2 notification
  kHookTopic,           // hook-topic: an ATLAS_HOOK message; the wrong topic was exported
  kBadEncoding,         // bad-encoding: GZIP/Base64 payload that does not decode
  kBadSplit,            // bad-split: inconsistent or incomplete split message
  kBadRelationship,     // bad-relationship: relationship without both ends and a label
  kDuplicateKey,        // duplicate-key: a member name twice in an envelope, message, entity,
                        // relationship or classification object
  kUnsupportedVersion,  // unsupported-version: an envelope's version newer than 1.0.0, which
                        // Atlas's own consumer refuses too (IncompatibleVersionException)
};
inline constexpr std::size_t kRejectCodeCount = 14;

std::string_view to_string(RejectCode code);

// How far the input has been read or applied, per source and per Kafka partition: what a
// --checkpoint file records (cli/checkpoint.h) and Reader::resume_from() takes back.
// How records are counted (next_record), for resume points written by one release and read by
// another. Framing 1 (checkpoints of format 1 and 2) counted a Kafka tool's log line as one or
// more records (and the exception lines after it one each), opened an array at any '[' and
// counted a ',' missing after an array element cut short as a record; framing 2 skips such log
// and exception lines, takes a '[' with no object after it as one record, and counts no missing
// ','. Framing 3 counts a kafka-console-consumer line of prefixes with no message after them (an
// empty Kafka message) as a record, where 1 and 2 read on into the next line. Framing 4 reads a
// console key that is JSON (`Offset:5\t{"id":1}\t{...message...}`) as one of the message's
// prefixes, where 1 to 3 counted it as a record of its own. Everything else is counted alike.
inline constexpr std::uint32_t kFraming = 4;

struct SourceMark {
  std::string name;
  std::string identity;  // empty for stdin: it is skipped by Kafka offsets only
  std::uint64_t next_record = 0;
  bool complete = false;
  std::uint32_t framing = kFraming;  // how next_record was counted
  // 32 lowercase hex digits of SHA-256 over the records before next_record (each one's length
  // and bytes, its console prefix too): a rerun skips them only if they are the same records,
  // not merely in a file that starts with the same 64 KiB. Empty: not recorded (standard input,
  // a checkpoint of an earlier release, or a reader not resuming).
  std::string records_digest = {};

  friend bool operator==(const SourceMark&, const SourceMark&) = default;
};

using KafkaPartition = std::pair<std::string, std::int32_t>;  // topic, partition
inline constexpr std::size_t kMaxRejectedOffsets = 10000;

struct InputProgress {
  std::vector<SourceMark> sources;
  std::map<KafkaPartition, std::int64_t> kafka_next_offset;
  // Offsets below a partition's next offset whose records were rejected and not read since, in
  // increasing order: a resumed reader reads a record there (one fixed from the reject file)
  // rather than skip it as applied. At most kMaxRejectedOffsets per partition, the highest.
  //   offsets 4..8 read, 6 rejected: kafka_next_offset {p, 9}, kafka_rejected {p, [6]}
  std::map<KafkaPartition, std::vector<std::int64_t>> kafka_rejected;

  friend bool operator==(const InputProgress&, const InputProgress&) = default;
};

struct ReadStats {
  std::uint64_t sources = 0;   // inputs opened
  std::uint64_t records = 0;   // records framed (events, rejects and split chunks alike)
  std::uint64_t events = 0;    // accepted events
  std::uint64_t rejected = 0;  // rejected records (each chunk of a bad split message too)
  // Records of split messages that became accepted events, other than the record that completed
  // each (which counts as the event): records == events + rejected + split_chunks + skipped +
  // replayed once the input is read to its end.
  std::uint64_t split_chunks = 0;
  std::uint64_t ignored_lines = 0;  // kafka-console-consumer / kcat diagnostics skipped
  // Of them, the consumer's errors ("% ERROR: ... Offset out of range", "%3|...|FAIL|...", a log4j
  // ERROR line): the export may miss messages. The first, as FILE:LINE: its text.
  std::uint64_t consumer_errors = 0;
  std::string first_consumer_error;
  std::uint64_t legacy_v1 = 0;  // events from V1 payloads
  std::uint64_t skipped = 0;    // records an earlier run applied (--checkpoint)
  // ... of which skipped by their Kafka offset: below the next offset the checkpoint records for
  // their partition. That includes the records of an older export given after a newer one,
  // which no run applied: the checkpoint keeps one offset per partition, not every range.
  std::uint64_t skipped_by_offset = 0;
  // Records whose Kafka topic, partition and offset this run had read already (exports that
  // overlap): read again, their events would take rows back to older states.
  std::uint64_t replayed = 0;
  // The first of them, as FILE:LINE:OFFSET (TOPIC/PARTITION@OFFSET): where to look.
  std::string first_replayed;
  // Accepted events whose Kafka offset came after a later one of their partition in this run (an
  // older export read after a newer one): applied in input order, which can take rows back to
  // older states. Not a kind of record: these are among the events.
  std::uint64_t out_of_order = 0;
  // With a resume point (resume_from), inputs not read because an earlier one ended in a record
  // cut short; the first such input's name, and that earlier input's.
  std::uint64_t inputs_held_back = 0;
  std::string first_held_back;
  std::string held_back_behind;
  // With a resume point, inputs recognised as one an earlier run applied whose records before
  // its resume point are others (SourceMark::records_digest): read again from their start, all
  // their records applied. The first such input's name.
  std::uint64_t resume_mismatches = 0;
  std::string first_resume_mismatch;
  std::array<std::uint64_t, kOperationCount> per_operation{};
  std::array<std::uint64_t, kRejectCodeCount> per_reason{};

  friend bool operator==(const ReadStats&, const ReadStats&) = default;
};

struct RejectPolicy {
  std::uint64_t max_rejects = 0;  // the run fails once more than this many were rejected
  std::string reject_file;        // JSON lines of rejected records; empty = none
  // Append to an existing reject file instead of replacing it (a resumed run: the lines of the
  // run it resumes describe records this run skips).
  bool append = false;
};

// Thrown once more than max_rejects records were rejected.
class TooManyRejects : public Error {
 public:
  explicit TooManyRejects(const std::string& what) : Error(ErrorCategory::kBadInput, what) {}
};

struct Rejection {
  SourcePosition pos;
  RejectCode code;
  std::string reason;
  std::string_view record;  // the record's bytes, verbatim
  // The record's full size when `record` holds only its first bytes (a record over the size
  // limit, which is never held whole); 0 when `record` is all of it.
  std::uint64_t record_bytes = 0;
  // kafka-console-consumer's prefixes before the record on its line and the blanks after them,
  // verbatim ("Partition:0\tOffset:7\t"), or empty: console_prefix + record is the line (up to
  // blanks after the record), to fix and read again.
  std::string_view console_prefix;
};

// A row the server refused while applying (`apply`: isolated by running parts of its statement),
// with the events that wrote it.
struct RowRefusal {
  std::string table;
  std::string where;   // "window 2 (events 5-9), upsert phase, statement 1 of 3, row 2 of 4"
  std::string reason;  // the server's message for the row
  std::string row;     // the row as sent, "('…', …)"
  std::vector<const Event*> events;  // the window's events that wrote it, input order
};

// Reports each rejection on stderr as "SOURCE:LINE:OFFSET: reason", appends it to the reject file,
// and enforces --max-rejects (refused rows count too).
//
// With a reject file, which holds every one of them, stderr gets only the first
// kRejectionsOnStderr and then one line saying where the rest go: an unattended run with
// --max-rejects 1000000 would otherwise mail a million lines. Without one, stderr is the only
// record, so every rejection is printed.
//
// The reject file is created mode 0600 (it holds input data), never through a symbolic link, and
// only as a regular file: Error(kIo) for anything else at the path.
//
// `over_progress_line`: each message first clears the terminal's line, where the progress line
// is drawn (cli/progress.h), so that "SOURCE:LINE:OFFSET: reason" starts its own line.
class RejectSink {
 public:
  explicit RejectSink(RejectPolicy policy, std::FILE* diagnostics = stderr,
                      bool over_progress_line = false);
  ~RejectSink();
  void reject(const Rejection& r);
  // The rows the server refused in one window (`window`: "window 3"): needs a reject file (the
  // caller stops the run without one). Every row is written before the limit is looked at, so
  // that each row counted is in the file; past --max-rejects, TooManyRejects says that the
  // window's other rows were applied but the window is not done, and gives the --max-rejects
  // that sets these rows aside (the server refuses them again when the window runs again).
  void refused_rows(const std::vector<RowRefusal>& rows, std::string_view window);
  std::uint64_t count() const { return count_; }
  const RejectPolicy& policy() const { return policy_; }

 private:
  void write_line(const std::string& line);
  void count_one(const std::string& where, std::string_view what);

  void print(std::string_view line);

  RejectPolicy policy_;
  std::FILE* diagnostics_;
  bool over_progress_line_;
  std::FILE* file_ = nullptr;
  std::uint64_t count_ = 0;
  std::uint64_t printed_ = 0;
};

inline constexpr std::uint64_t kRejectionsOnStderr = 20;

// Source names live for the whole process, so that an Event's SourcePosition::source stays valid
// after the Reader that produced it is gone (a few short strings per run).
std::string_view intern_source_name(const std::string& name);

// One reject-file line: {"source":..,"line":..,"offset":..,"record_index":..,["kafka":{..},]
// "code":..,"reason":..,["console_prefix":"<verbatim>",]"record":"<verbatim>"} ("record_base64",
// "console_prefix_base64" instead when not UTF-8; "kafka" has a "topic" only when one is known,
// which a console line never tells). A record kept only in part ends with
// "record_truncated":true,"record_bytes":<its full size>. A console line rejected:
//   {"source":"a.txt","line":2,"offset":58,"record_index":1,"kafka":{"partition":0,"offset":6},
//    "code":"not-json","reason":"no message after kafka-console-consumer's prefixes (an empty
//    record value)","console_prefix":"CreateTime:1700000001555\tPartition:0\tOffset:6\t",
//    "record":""}
std::string rejection_json(const Rejection& r);

// The reject-file line of a refused row: the position of its first event, then
//   "code":"server-refused","reason":..,"table":..,"where":..,"row":"(…)",
//   "events":[{"source":..,"line":..,"offset":..,"record_index":..,["kafka":{..},]
//              "op":"ENTITY_UPDATE","guid":"…","type_name":"…"}, …]
std::string refusal_json(const RowRefusal& r);

class ByteSource;  // input/byte_source.h: files, stdin, in-memory fakes

// A framed record, as read (--max-record-bytes), and a GZIP or split message once decompressed
// and joined (--max-message-bytes). Parsing a JSON text takes about six times its size in
// memory, and a few kilobytes of gzip can inflate to the message limit, so that one is lower.
inline constexpr std::size_t kDefaultMaxRecordBytes = std::size_t{256} << 20;
inline constexpr std::size_t kDefaultMaxMessageBytes = std::size_t{64} << 20;

// Nested objects and arrays allowed in one JSON text (--max-json-depth), and the most that
// option takes.
inline constexpr std::uint32_t kDefaultMaxJsonDepth = 512;
inline constexpr std::uint32_t kLargestMaxJsonDepth = 1000;

// Kudu's default max_cell_size_bytes: a string cell longer than this makes Kudu refuse the row.
inline constexpr std::size_t kDefaultMaxCellBytes = 65536;

// Split reassembly (--max-split-messages, --max-split-chunks, --max-split-bytes). Atlas cuts a
// message into chunks of about 1 MB, so 1000 chunks is past what the bytes bound allows anyway.
inline constexpr std::size_t kDefaultMaxSplitMessages = 1000;
inline constexpr std::size_t kDefaultMaxSplitChunks = 1000;
inline constexpr std::size_t kDefaultMaxSplitBytes = std::size_t{256} << 20;
// How many records after its first chunk a split message is still waited for by a resume. Atlas
// sends a message's chunks one after another, so in an export they normally come within a few
// records of each other; a message this far from complete has most likely lost a chunk, and
// waiting for it would pin every later window's checkpoint to it. (Exports cut one per partition
// can put a message's chunks further apart: a run stopped between them then loses the message.)
inline constexpr std::uint64_t kDefaultSplitWaitRecords = 100000;

// What the reader holds or accepts at most. Every one bounds memory or time against a hostile or
// damaged input; what goes past one is rejected (kTooLarge) with its position, never allocated.
// The command line sets them (--max-json-depth, --max-cell-bytes, --max-split-*).
struct ReaderLimits {
  std::size_t max_record_bytes = kDefaultMaxRecordBytes;     // a framed record, as read
  std::size_t max_inflated_bytes = kDefaultMaxMessageBytes;  // a GZIP/split message, decoded
  std::uint32_t max_json_depth = kDefaultMaxJsonDepth;       // nesting levels in one JSON text
  // A string bound for one Kudu cell (type, qualifiedName and name, tag names and attributes,
  // edge labels): longer rejects the event rather than send a row Kudu refuses.
  std::size_t max_cell_bytes = kDefaultMaxCellBytes;
  // Split messages waiting for chunks, chunks per message, and bytes held for all of them.
  std::size_t max_split_messages = kDefaultMaxSplitMessages;
  std::size_t max_split_chunks = kDefaultMaxSplitChunks;
  std::size_t max_split_bytes = kDefaultMaxSplitBytes;
  std::uint64_t split_wait_records = kDefaultSplitWaitRecords;  // no option: tests set it
  // What set each byte limit, named in the reason of a record past it: the option, or what
  // lowered its default ("--max-record-bytes, 1/32 of --memory-budget 256.0 MiB"), so that a user
  // who never gave the option learns which one to raise.
  std::string record_limit_source = "--max-record-bytes";
  std::string message_limit_source = "--max-message-bytes";
  std::string split_limit_source = "--max-split-bytes";
};

class Reader {
 public:
  Reader(std::vector<std::string> paths, RejectSink& rejects, ReaderLimits limits = {});
  // Reads already opened sources (in-memory fakes in tests), in order.
  Reader(std::vector<std::unique_ptr<ByteSource>> sources, RejectSink& rejects,
         ReaderLimits limits = {});
  ~Reader();

  // The next accepted event; false at the end of all inputs. Throws SourceError for unreadable
  // inputs and TooManyRejects from the sink.
  bool next(Event& out);

  // For a reader whose events become no rows (check): from now on, events come with audit_seq 0
  // (the SHA-256 of each message is not computed) and Event::attributes empty (each entity
  // attribute value is validated, its JSON text not written). Everything else is as before,
  // classification attributes included, since --max-cell-bytes checks their size. Call it before
  // the first next(). What is accepted and rejected, and why, is the same as without it.
  void validation_only();

  const ReadStats& stats() const;

  // Bytes of the inputs as stored (gzip still compressed) read so far, over all sources: against
  // the files' sizes, how far the run is (the live progress line's percent and ETA). In a plain
  // input, up to the end of the last record read, not what the framer has buffered ahead of it.
  std::uint64_t bytes_read() const;

  // How far the input has been read, as a resume point: every record read so far counts as done
  // except the chunks of split messages still waiting for their other chunks, and a malformed
  // last record that runs to the end of its input with no line end (a file read while still
  // being written cuts its last record short: it is read again next time, and its input is not
  // complete). Right after next() returned the last event of a window, this is exactly what
  // applying the window completes.
  InputProgress progress() const;

  // Skips what an earlier run applied: records before a source's mark (the source recognised by
  // its identity, else by its name) and Kafka records below the applied offsets. Call before the
  // first next(); a reader that is to record a resume point calls it too, with no progress, so
  // that its marks carry records_digest. The records skipped are digested as they are framed; if
  // they are not those the mark's records_digest says were applied (or the source ends first),
  // the source is opened again (ByteSource::reopen) and read whole, and counted in
  // ReadStats::resume_mismatches:
  //
  //   run 1: a.jsonl (records r0-r599)                      ->  mark {next_record 600, digest D}
  //   run 2: b.jsonl (r0-r499, then x0-x99; same 64 KiB)    ->  600 framed, digest != D: b read
  //                                                             again from its start, all applied
  //
  // `on_source_resumed`, when given, is told as each source it recognises is found to be what
  // was applied, with the source's name and the records of it skipped (the operator sees the run
  // resume as it happens, not only in the summary).
  //
  // With a resume point, an input whose last record is cut short by its end (a file still being
  // written) ends what this run reads: the inputs after it are left for a later run, so that the
  // rest of that record and whatever follows it in its file are applied before them. Read on,
  // they would be applied first, and the next run, reading on from the record cut short, would
  // take rows back to older states:
  //
  //   run 1: a.jsonl (records 1-65, record 66 cut short), b.jsonl  ->  a's 1-65; b not read
  //   run 2: a.jsonl (grown to 120 records), b.jsonl                ->  a's 66-120, then b
  //
  // Unless an input after it is standard input or a pipe, whose records could not be read again:
  // the inputs are then read on, as without a resume point.
  using ResumeNotice = std::function<void(std::string_view source, const SourceMark& applied)>;
  void resume_from(InputProgress applied, ResumeNotice on_source_resumed = {});

  // Which of the sources given to resume_from this run recognised (an input found to be what was
  // applied there), by their index: a checkpoint forgets those, superseded by the input's new
  // mark, and keeps the others, also one with the same identity that turned out to be another
  // file (A, then B that starts as A does, then A again: A's entry is still there).
  std::vector<bool> resumed_sources() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Convenience for tests and tools: reads every record of `paths` in order and returns the
// events. Throws InputError-derived TooManyRejects on the first malformed record.
std::vector<Event> read_all_events(const std::vector<std::string>& paths);

}  // namespace atlas2kudu
