// Small JSON text helpers shared by the decoder, the reject file and the --stats writers.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "util/json_writer.h"

namespace atlas2kudu {

// True if `token` is one JSON number (RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?),
// of any size: "123456789012345678901234567890" is one, "01", "1." and "-" are not.
bool is_json_number(std::string_view token);

// Where a JSON text that the parser refused first breaks JSON's grammar (RFC 8259, and simdjson's
// rule that a \u escape of a surrogate comes in a high-low pair), and what was expected there;
// nullopt if nothing does (the parser refused it for another reason: depth, a number's range).
// For messages only, after the parser failed: simdjson's errors say what, never where, and a
// record may be a megabyte long.
//   find_json_syntax_error(R"({"a":1 "b":2})")   // {7, "expected ',' or '}' after a member"}
//   find_json_syntax_error(R"({"a":[1,]})")      // {8, "expected a value"}
//   find_json_syntax_error(R"({"a":"x)")         // {5, "a string not closed before the end"}
struct JsonSyntaxError {
  std::size_t at = 0;  // byte offset in the text
  std::string what;
};
std::optional<JsonSyntaxError> find_json_syntax_error(std::string_view text);

// A number or literal token without the whitespace simdjson may leave after it.
std::string_view trim_json_token(std::string_view token);

// `text` without the JSON whitespace (space, tab, CR, LF) before and after it.
std::string_view trim_json_space(std::string_view text);

// Up to `max` bytes of `text` for a message, on one line and showing what is there: printable
// ASCII and characters of valid UTF-8 kept; control bytes, bytes of invalid UTF-8 and the
// characters of shown_escaped() (util/utf8.h: a byte order mark, C1 controls, direction marks)
// as \xHH each, so that a BOM in the middle of a file, a NUL or UTF-16 text can be told apart:
//   printable_excerpt("\xef\xbb\xbf{\"a\":\"\xc3\xa9\"}", 40)   // \xef\xbb\xbf{"a":"é"}
//   printable_excerpt("{\x00\"\x00", 40)                         // {\x00"\x00
std::string printable_excerpt(std::string_view text, std::size_t max);

// True if `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// The simdjson kernel the input layer's On-Demand parsing was compiled for: "westmere" (SSE4.2 +
// PCLMUL), "haswell" (AVX2), "icelake" (AVX-512), "arm64", ... or "fallback" (scalar). On-Demand
// fixes it at compile time from the build's CPU flags (meson option cpu_baseline); simdjson's own
// builtin_implementation() names the kernel of the shared library instead, which is not the one
// our inlined parsing code runs.
std::string_view json_kernel();

}  // namespace atlas2kudu
