// The framer cuts a byte stream into records, one JSON document each, without parsing them.
//
// Accepted framings, detected per record (SPEC §1):
//   - one document per line (kafka-console-consumer), also with the console's `print.timestamp`,
//     `print.partition`, `print.offset`, `print.headers` and `print.key` prefixes, each ending in
//     a tab: "CreateTime:1619751228672\tPartition:0\tOffset:42\t{...}";
//   - documents concatenated or separated by any whitespace, including pretty-printed ones;
//   - one top-level JSON array whose elements are the documents ("[{...},\n{...}]").
// Lines that kafka-console-consumer and kcat print about themselves ("Processed a total of 6
// messages", "% Reached end of topic ...") are counted and skipped, since terminal captures mix
// them into exports. Anything else that is not a JSON object is a malformed record.
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
// Memory stays bounded by the largest record (at most max_record_bytes), not the input size.
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

  // Set when the record is malformed; `text` then holds the bytes that were skipped.
  std::optional<RejectCode> error;
  std::string reason;

  // kafka-console-consumer prefixes, when the export was made with print.partition/print.offset.
  std::optional<std::int32_t> console_partition;
  std::optional<std::int64_t> console_offset;
};

inline constexpr std::size_t kRecordPadding = 64;  // == SIMDJSON_PADDING
inline constexpr std::size_t kDefaultMaxRecordBytes = std::size_t{256} << 20;

class Framer {
 public:
  explicit Framer(ByteSource& source, std::size_t max_record_bytes = kDefaultMaxRecordBytes);
  ~Framer();
  Framer(const Framer&) = delete;
  Framer& operator=(const Framer&) = delete;

  // Fills `out` with the next record; false at end of input. Throws SourceError on I/O errors.
  bool next(FramedRecord& out);

  // Tool diagnostics skipped so far ("Processed a total of ...", "% ..." lines).
  std::uint64_t ignored_lines() const { return ignored_lines_; }

 private:
  enum class Scan { kComplete, kTruncated, kTooLarge };

  // Makes at least `want` bytes available from pos_ unless the input ends first; may move the
  // buffer contents so that the byte at `keep` lands at index 0. Returns bytes available.
  std::size_t fill(std::size_t keep, std::size_t want);
  bool at_line_start() const;
  bool skip_prefixes_and_diagnostics(FramedRecord& out);
  Scan scan_document(std::size_t& start, std::string& reason);
  // Moves pos_ to the end of the line. Returns false if the line was longer than the limit: then
  // only its first bytes are kept, in overflow_excerpt_.
  bool take_rest_of_line(std::size_t& start);

  ByteSource& source_;
  std::size_t max_record_bytes_;
  std::unique_ptr<char[]> buf_;
  std::size_t capacity_ = 0;       // usable bytes; kRecordPadding more are allocated
  std::size_t pos_ = 0;            // next byte to look at
  std::size_t end_ = 0;            // end of valid data
  std::uint64_t base_offset_ = 0;  // source offset of buf_[0]
  std::uint64_t line_ = 1;         // line of buf_[pos_]
  bool eof_ = false;
  bool line_start_ = true;  // pos_ is at the start of a line
  bool in_array_ = false;   // inside a top-level array of documents
  std::string overflow_excerpt_;
  std::uint64_t records_ = 0;
  std::uint64_t ignored_lines_ = 0;
};

}  // namespace atlas2kudu
