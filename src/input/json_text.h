// Small JSON text helpers shared by the decoder, the reject file and the --stats writers.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

namespace atlas2kudu {

// Appends `value` to `out` as compact JSON, validating it completely on the way: strings are
// unescaped and re-escaped canonically (see append_json_string), numbers keep the exact digits
// they were written with (no precision loss: 12345678901234567890 and 1.0 stay as written), and
// object keys keep their order. Throws simdjson_error on malformed JSON.
//   {"a" : [1.50, "x\u0041"] }  ->  {"a":[1.50,"xA"]}
void write_canonical_json(simdjson::ondemand::value value, std::string& out);

// Appends `text` as a JSON string literal: `"` and `\` escaped, control characters as \n, \r, \t,
// \b, \f or \u00XX, everything else (all valid UTF-8) as is.
void append_json_string(std::string_view text, std::string& out);

// A number or literal token without the whitespace simdjson may leave after it.
std::string_view trim_json_token(std::string_view token);

// Up to `max` bytes of `text` for a message: printable ASCII kept, other bytes as '?'.
std::string printable_excerpt(std::string_view text, std::size_t max);

// True if `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

}  // namespace atlas2kudu
