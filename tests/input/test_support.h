// Helpers shared by the reader tests: run the real Reader over in-memory sources.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "atlas2kudu/reader.h"
#include "input/byte_source.h"

namespace atlas2kudu::testing {

// Whether this build runs under AddressSanitizer: its shadow memory needs more address space than
// a test's `ulimit -v` leaves, and its quarantine keeps freed memory resident.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitized = true;
#else
inline constexpr bool kAddressSanitized = false;
#endif
#else
inline constexpr bool kAddressSanitized = false;
#endif

struct ReadOutcome {
  std::vector<Event> events;
  std::vector<std::string> diagnostics;  // "SOURCE:LINE:OFFSET: reason", one per rejection
  ReadStats stats;
  std::string reject_file;  // contents of the reject file
};

// Reads `text` as source "t.jsonl", handing the framer at most `max_read` bytes per read, with
// --max-rejects unlimited and a reject file.
ReadOutcome read_text(const std::string& text, std::size_t max_read = static_cast<std::size_t>(-1),
                      std::size_t max_record_bytes = ReaderLimits{}.max_record_bytes);
// The same with every reader limit given; `validation_only` reads as `check` does
// (Reader::validation_only).
ReadOutcome read_text(const std::string& text, ReaderLimits limits,
                      std::size_t max_read = static_cast<std::size_t>(-1),
                      bool validation_only = false);

std::string slurp(const std::string& path);

// A fresh, empty file with the given suffix, in a directory under /tmp that the test process
// removes, with what runs added to it, when it exits (throws if none can be made).
std::string tmp_path(const std::string& suffix);

// The limits fuzz/fuzz_reader reads with: small enough for the fuzzer to reach and pass them.
ReaderLimits fuzz_reader_limits();
// Reads the file at `path` as fuzz/fuzz_reader does (and tests/data/fuzz is read again): to its
// end, or to a SourceError (a damaged gzip file); then again as `check` reads it, for validation
// only (no audit seq, no attribute values), which must accept and reject the same records.
// Returns what went wrong, or "" when every invariant held; anything else thrown propagates.
std::string read_as_fuzzer(const std::string& path);

// `text` as a JSON string literal, escaped as the reject file writes it.
std::string json_quote(std::string_view text);

// A V2 envelope around `message`, one line, msgCreationTime 1700000000000.
std::string envelope(const std::string& message);
// A V2 ENTITY_* payload for guid 00000001-0000-4000-8000-000000000001.
std::string entity_message(const std::string& op,
                           const std::string& attributes = "{\"qualifiedName\":\"q\"}",
                           const std::string& extra = ",\"eventTime\":1000");
// One line: an ENTITY_CREATE of hive_table number `n` (guid 00000001-0000-4000-8000-<n, 12
// digits>, qualifiedName db.t<n>@c) with `more_attributes` (",\"k\":v" ...) at `event_ms`.
std::string create_table_line(int n, const std::string& more_attributes, long long event_ms);

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The lines of `text`, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl - at));
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return lines;
}

}  // namespace atlas2kudu::testing
