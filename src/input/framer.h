// The framer cuts a byte stream into records, one JSON document each, without parsing them.
//
// Accepted framings, detected per record (man page, INPUT):
//   - one document per line (kafka-console-consumer), also with the console's `print.timestamp`,
//     `print.partition`, `print.offset`, `print.headers` and `print.key` prefixes, each ending in
//     a tab: "CreateTime:1619751228672\tPartition:0\tOffset:42\t{...}";
//   - documents concatenated or separated by any whitespace, including pretty-printed ones;
//   - one top-level JSON array whose elements are the documents ("[{...},\n{...}]").
// Lines that kafka-console-consumer and kcat print about themselves ("Processed a total of 6
// messages", "% Reached end of topic ...") are counted and skipped, since terminal captures mix
// them into exports. A UTF-8 byte order mark at the very start of an input is skipped (RFC 8259
// allows a reader to ignore it; editors add one), and so is one at the start of a line, where
// `cat a.jsonl b.jsonl` leaves b's. Anything else that is not a JSON object is a
// malformed record: to its line end, or in a top-level array to the next element, so that one bad
// element never takes the valid ones after it along.
//
// Truncation is found at the line where it happens, not at end of input: Atlas (Jackson) never
// writes a raw newline inside a message, so in a document whose first line carries content after
// its opening brace, a newline before the closing brace means the line was cut short. A
// pretty-printed document (opening brace alone on its line) may span lines freely; a raw newline
// inside a string is always a truncation. Example, one envelope per line where line 2 was cut:
//   line 1: {"version":...,"message":{...}}        -> document
//   line 2: {"version":...,"message":{"type":"EN  -> malformed: unterminated string at end of line
//   line 3: {"version":...,"message":{...}}        -> document
//
// Memory stays bounded by the largest record (at most max_record_bytes), not the input size. A
// record over the limit is still scanned to its end (or its line end, when it is not a document),
// counting its bytes without holding them: it is reported with its first kExcerptBytes and its
// full size, and the next record starts right after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "input/byte_source.h"
#include "input/input_error.h"

namespace atlas2kudu {

struct FramedRecord {
  // The record's bytes. For a document, at least kRecordPadding readable bytes follow `text` (as
  // simdjson requires); their content is unspecified. Valid until the next call to next().
  std::string_view text;
  std::uint64_t line = 0;    // 1-based line of the record's first byte
  std::uint64_t offset = 0;  // 0-based byte offset of the record's first byte
  std::uint64_t index = 0;   // 0-based record number within the source

  // The record's size in bytes. Larger than text.size() only for a record over the size limit,
  // whose `text` is then its first kExcerptBytes (or max_record_bytes, if smaller).
  std::uint64_t size = 0;

  // A document with no JSON whitespace outside its strings: its minified form is its text, so its
  // audit seq is hashed without minifying a copy (payload.h, message_audit_seq). Exports from
  // Kafka are written by Jackson without whitespace, so nearly every record is compact.
  bool compact = false;

  // Set when the record is malformed; `text` then holds the bytes that were skipped.
  std::optional<RejectCode> error;
  std::string reason;

  // kafka-console-consumer prefixes, when the export was made with print.partition/print.offset.
  std::optional<std::int32_t> console_partition;
  std::optional<std::int64_t> console_offset;
  // ... and print.timestamp: the record's CreateTime or LogAppendTime (milliseconds), the event
  // time of last resort as kcat's "ts" is (a value that is no such number is left out).
  std::optional<std::int64_t> console_timestamp_ms;
  // The console prefixes verbatim, each with its tab ("CreateTime:1619751228672\tPartition:0\t"),
  // and any blanks after them, or empty: console_prefix + text is the line as the consumer
  // printed it (up to blanks after the record), which is what a reject file must keep for the
  // record to be fixed and read again with its position and time.
  std::string console_prefix;
};

inline constexpr std::size_t kRecordPadding = 64;   // == SIMDJSON_PADDING
inline constexpr std::size_t kExcerptBytes = 4096;  // of a record over the limit, for the report

class Framer {
 public:
  // `limit_source` is named in the reason of a record past the limit (ReaderLimits).
  explicit Framer(ByteSource& source, std::size_t max_record_bytes = kDefaultMaxRecordBytes,
                  std::string limit_source = "--max-record-bytes");
  ~Framer();
  Framer(const Framer&) = delete;
  Framer& operator=(const Framer&) = delete;

  // Fills `out` with the next record; false at end of input. Throws SourceError on I/O errors.
  bool next(FramedRecord& out);

  // Tool diagnostics skipped so far ("Processed a total of ...", "% ..." lines).
  std::uint64_t ignored_lines() const { return ignored_lines_; }
  // Of them, the consumer's errors (librdkafka's log levels 0-3 "%3|...", kcat's "% ERROR: ..."
  // and "% Fatal ...", log4j ERROR and FATAL lines): the export may miss messages. The first one's
  // line number and text (its first 160 bytes, printable).
  std::uint64_t error_lines() const { return error_lines_; }
  std::uint64_t first_error_line() const { return first_error_line_; }
  const std::string& first_error_text() const { return first_error_text_; }
  // Places so far where an earlier framing (reader.h, kFraming) counted records otherwise. Framing
  // 1: a consumer's log line skipped, a '[' that opens no array, a ',' not missed after an element
  // cut short; framings 1 and 2: a console line of prefixes alone (no record then); framings 1 to
  // 3: a console key that is JSON (a record of its own then).
  std::uint64_t counted_differently_from(std::uint32_t framing) const {
    return framing == 1   ? counted_differently_ + empty_console_records_ + json_keys_
           : framing == 2 ? empty_console_records_ + json_keys_
           : framing == 3 ? json_keys_
                          : 0;
  }

  // True when the record last returned ran to the end of the input: nothing follows it, not even a
  // line end (a document never closed takes in the line ends after it).
  // A malformed record there may only be cut short by a reader that came while the input was
  // still being written (a file being copied or appended to): the reader does not count it as
  // read for --checkpoint, so the next run reads it again.
  bool ended_at_record_end() const { return eof_ && pos_ == end_; }

  // How documents are scanned: 64 bytes at a time with AVX2 or SSE2, or a byte at a time. They
  // frame exactly alike; tests compare them, and benchmarks time them. The default is the first
  // this CPU and build can run (AVX2 is chosen at run time; SSE2 is in every x86-64 build), and
  // use_kernel() takes the one asked for or, if this CPU cannot run it, that default.
  enum class Kernel { kAvx2, kSse2, kBytes };  // from the most demanding to the least
  static Kernel default_kernel();
  void use_kernel(Kernel kernel);
  Kernel kernel() const { return kernel_; }
  static bool cpu_has_avx2();
  // "avx2", "sse2" or "bytes" (--version names the default).
  static std::string_view kernel_name(Kernel kernel);

 private:
  enum class Scan { kComplete, kTruncated };
  enum class StringStep { kOpen, kClosed, kNewline };

  // Makes at least `want` bytes available from pos_ unless the input ends first; may move the
  // buffer contents so that the byte at `keep` lands at index 0. Returns bytes available.
  std::size_t fill(std::size_t keep, std::size_t want);
  // fill() for a record that starts at `start`: keeps it in the buffer, or, once the record is
  // over the limit, drops (and counts) everything before pos_. Updates `start`.
  std::size_t refill(std::size_t& start, std::size_t want);
  // Starts dropping the record once it is longer than the limit, keeping its first bytes. Called
  // for every byte the scanners step over, so the test is inline and the rest out of line.
  void check_size(std::size_t start) {
    if (pos_ - start > size_check_) [[unlikely]]
      start_dropping(start);
  }
  [[gnu::cold]] void start_dropping(std::size_t start);
  bool skip_prefixes_and_diagnostics(FramedRecord& out);
  // The document just scanned (from `start`) is followed by a tab and a message on its line.
  bool tab_and_message_follow(std::size_t& start);
  // Inside a string, from pos_: past its closing quote (kClosed); to a raw newline, or one after
  // a backslash, which ends the line and so the string (kNewline, pos_ on the newline); or as far
  // as the bytes read so far, or two bytes of an escape, go (kOpen).
  StringStep step_in_string(std::size_t& start);
  // A document's scan so far.
  struct DocumentState {
    std::uint64_t depth = 0;  // brackets open
    bool in_string = false;
    bool content_on_first_line = false;  // decides whether a newline is a truncation
    bool spaced = false;                 // whitespace outside strings: not compact
  };
  // Scans a document from its '{' (at pos_) to its end.
  Scan scan_document(std::size_t& start, std::string& reason, DocumentState& state);
  // At a newline (pos_) of a document spread over lines, at its top level: when the line before
  // ends where a member name belongs ('{' or ',') and the next line starts with neither the '"'
  // of a member name nor a '}', which no JSON has there, that first byte; 0 otherwise (also for
  // a blank line). Reads ahead (refill) to see the next line. scan_document ends the document
  // there, as a stray line, when that byte is '{' (a record), or when the line before is the
  // document's lone '{' (a console or log line after it); a bad line further into a document is
  // the document's own error:
  //   {                                  <- a stray line: rejected alone,
  //   {"version":...}                    <- and this record framed as usual ('{'),
  //   CreateTime:1700000000000\t{...}    <- or this console line ('C'), or a log line ('[')
  char next_line_cannot_hold_member(std::size_t& start);
  // Advances a document's scan by the 64 bytes at pos_ (which must be in the buffer), classified
  // at once: quotes, brackets and whitespace as bit masks, the bytes inside strings as the prefix
  // XOR of the quotes. It stops before the first backslash or newline (kStopped, possibly
  // without moving), which scan_document takes a byte at a time, and after the brace that ends
  // the document (kDocumentEnd). Same results as the byte-at-a-time scan, byte for byte.
  // Example, a block inside {"a":{"b":"x}"}} from its first byte:
  //   bytes   {"a":{"b":"x}"}}
  //   quotes  .1.1..1.1.1..1..
  //   inside  .11...11..111...   (prefix XOR: the '}' inside "x}" is not a bracket)
  //   depth   1    2        10   -> kDocumentEnd, pos_ after the last '}'
  // The 64 bytes at pos_ are in the buffer, and scanning them cannot take the record that starts
  // at `start` over the size limit: the condition for scan_block.
  bool whole_block_ahead(std::size_t start) const {
    return end_ - pos_ >= 64 && pos_ + 64 - start <= size_check_;
  }
  // Isa classifies the block (framer.cpp: Sse2, or Avx2 where the CPU has it).
  enum class Block { kWhole, kStopped, kDocumentEnd };
  template <typename Isa>
  Block scan_block(std::size_t start, std::uint64_t start_line, DocumentState& state);
  // scan_block while blocks are whole and whole_block_ahead() (kWhole: no more is). One call per
  // stretch rather than per block, and the AVX2 one is compiled for AVX2 (with everything it
  // calls).
  template <typename Isa>
  Block scan_blocks(std::size_t start, std::uint64_t start_line, DocumentState& state);
  Block scan_blocks_sse2(std::size_t start, std::uint64_t start_line, DocumentState& state);
  Block scan_blocks_avx2(std::size_t start, std::uint64_t start_line, DocumentState& state);
  // Scans a top-level array's element that is not an object, up to the ',' or ']' after it (or
  // its line end).
  void scan_array_element(std::size_t& start);
  // Whether the '[' at pos_ opens a top-level array of records: its first element is an object,
  // or it is empty (or a ',' comes first, reported as out of place in the array). A line such as
  // "[Consumer clientId=c1] ..." is one record that is no JSON object, not an array whose every
  // later record would miss its ','.
  bool opens_array_of_records();
  // Makes `out` a rejected record of no bytes at the read position (reject_here) or at a given
  // one: an array never closed (at its '['), or one of its separators out of place (a trailing
  // comma at the comma).
  void reject_here(FramedRecord& out, std::string_view reason);
  void reject_at(FramedRecord& out, std::uint64_t line, std::uint64_t offset,
                 std::string_view reason);
  // Moves pos_ to the end of the line.
  void take_rest_of_line(std::size_t& start);
  // Skips spaces, tabs and carriage returns from pos_, appending them to `skipped`; true when the
  // line (or the input) ends there, as after console prefixes that hold an empty message.
  bool only_blanks_to_line_end(std::string& skipped);
  // Skips the line from pos_ to its line end (kept), counted in ignored_lines_.
  void drop_line();
  // Fills out.text and out.size for the record that started at `start` and ends at pos_.
  void finish_record(std::size_t start, FramedRecord& out);
  // Parses a console prefix's number; false (with prefix_error_ set) when it is out of range.
  template <typename T>
  void read_prefix_number(std::string_view name, std::string_view value, T high,
                          std::optional<T>& out);

  ByteSource& source_;
  std::size_t max_record_bytes_;
  std::string limit_source_;
  std::unique_ptr<char[]> buf_;
  std::size_t capacity_ = 0;       // usable bytes; kRecordPadding more are allocated
  std::size_t pos_ = 0;            // next byte to look at
  std::size_t end_ = 0;            // end of valid data
  std::uint64_t base_offset_ = 0;  // source offset of buf_[0]
  std::uint64_t line_ = 1;         // line of buf_[pos_]
  bool eof_ = false;
  bool line_start_ = true;  // pos_ is at the start of a line
  bool in_array_ = false;   // inside a top-level array of documents
  // In the array, an element must come next (after '[' or ','), not ',' or ']': RFC 8259 has no
  // empty elements and no trailing comma. `array_opened_`: right after '[', where ']' may close
  // an empty array.
  bool array_wants_element_ = false;
  bool array_opened_ = false;
  // The last element was cut short at its line end: a ',' may follow, or the next element
  // without one (the cut took it).
  bool array_resync_ = false;
  std::uint64_t array_line_ = 0;  // where the array's '[' and its last ',' stand
  std::uint64_t array_offset_ = 0;
  std::uint64_t comma_line_ = 0;
  std::uint64_t comma_offset_ = 0;
  bool at_source_start_ = true;  // nothing read yet: a byte order mark may come
  // The record being scanned is over the limit: its first bytes are in overflow_excerpt_, and
  // dropped_ bytes of it were let go.
  bool over_limit_ = false;
  std::size_t size_check_ = max_record_bytes_;  // or "never" while dropping
  std::uint64_t dropped_ = 0;
  std::string overflow_excerpt_;
  std::string prefix_error_;  // a console prefix of the record being framed that is out of range
  std::uint64_t records_ = 0;
  std::uint64_t ignored_lines_ = 0;
  std::uint64_t counted_differently_ = 0;    // by framing 1 only
  std::uint64_t empty_console_records_ = 0;  // counted by neither framing 1 nor 2
  std::uint64_t json_keys_ = 0;              // counted as records by framings 1 to 3
  std::uint64_t error_lines_ = 0;
  std::uint64_t first_error_line_ = 0;
  std::string first_error_text_;
  // After a console line's timestamp, partition or offset, with no key read yet: a JSON document
  // followed by a tab and more on its line is the record's key (print.key), not a record.
  bool key_may_follow_ = false;
  bool after_position_ = false;  // the record's line had a timestamp, partition or offset prefix
  // The last line skipped was a log4j line: the lines of the exception it logged may follow.
  bool in_log_event_ = false;
  Kernel kernel_ = default_kernel();
};

}  // namespace atlas2kudu
