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
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "atlas2kudu/event.h"
#include "atlas2kudu/framer.h"
#include "atlas2kudu/input_error.h"
#include "atlas2kudu/notification.h"

namespace atlas2kudu {

struct ReadStats {
  std::uint64_t sources = 0;        // inputs opened
  std::uint64_t records = 0;        // records framed (events, rejects and split chunks alike)
  std::uint64_t events = 0;         // accepted events
  std::uint64_t rejected = 0;       // rejected records (an incomplete split message counts once)
  std::uint64_t split_chunks = 0;   // chunk records held for reassembly (not events themselves)
  std::uint64_t ignored_lines = 0;  // kafka-console-consumer / kcat diagnostics skipped
  std::uint64_t legacy_v1 = 0;      // events from V1 payloads
  std::array<std::uint64_t, kOperationCount> per_operation{};
  std::array<std::uint64_t, kRejectCodeCount> per_reason{};
};

struct RejectPolicy {
  std::uint64_t max_rejects = 0;  // the run fails once more than this many were rejected
  std::string reject_file;        // JSON lines of rejected records; empty = none
};

// Thrown once more than max_rejects records were rejected.
class TooManyRejects : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Rejection {
  SourcePosition pos;
  RejectCode code;
  std::string reason;
  std::string_view record;  // the record's bytes, verbatim
};

// Reports each rejection on stderr as "SOURCE:LINE:OFFSET: reason", appends it to the reject file,
// and enforces --max-rejects.
class RejectSink {
 public:
  explicit RejectSink(RejectPolicy policy, std::FILE* diagnostics = stderr);
  ~RejectSink();
  void reject(const Rejection& r);
  std::uint64_t count() const { return count_; }

 private:
  RejectPolicy policy_;
  std::FILE* diagnostics_;
  std::FILE* file_ = nullptr;
  std::uint64_t count_ = 0;
};

// One reject-file line: {"source":..,"line":..,"offset":..,"record_index":..,["kafka":{..},]
// "code":..,"reason":..,"record":"<verbatim>"} ("record_base64" instead when not UTF-8).
std::string rejection_json(const Rejection& r);

class Reader {
 public:
  Reader(std::vector<std::string> paths, RejectSink& rejects, DecodeLimits limits = {},
         std::size_t max_record_bytes = kDefaultMaxRecordBytes);
  // Reads already opened sources (in-memory fakes in tests), in order.
  Reader(std::vector<std::unique_ptr<ByteSource>> sources, RejectSink& rejects,
         DecodeLimits limits = {}, std::size_t max_record_bytes = kDefaultMaxRecordBytes);
  ~Reader();

  // The next accepted event; false at the end of all inputs. Throws SourceError for unreadable
  // inputs and TooManyRejects from the sink.
  bool next(Event& out);

  const ReadStats& stats() const { return stats_; }

 private:
  bool open_next_source();
  void reject(const SourcePosition& pos, RejectCode code, std::string reason,
              std::string_view record);

  std::vector<std::string> paths_;
  std::vector<std::unique_ptr<ByteSource>> opened_;
  std::size_t next_path_ = 0;
  RejectSink& rejects_;
  std::size_t max_record_bytes_;
  std::deque<std::string> names_;  // stable storage for SourcePosition::source
  std::unique_ptr<ByteSource> source_;
  std::unique_ptr<Framer> framer_;
  NotificationDecoder decoder_;
  FramedRecord record_;
  ReadStats stats_;
  bool finished_ = false;
};

// Appends the reader's counts as JSON object members (no braces), as --stats writes them:
// "sources":1,"records":..,"events":..,"rejected":..,..,"operations":{..},"rejections":{..}
void append_read_stats_json(const ReadStats& stats, std::string& out);

// Convenience for tests and tools: reads every record of `paths` in order and returns the
// events. Throws InputError-derived TooManyRejects on the first malformed record.
std::vector<Event> read_all_events(const std::vector<std::string>& paths);

}  // namespace atlas2kudu
