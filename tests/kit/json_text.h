// Small JSON text helpers shared by the store dump, the comparisons and the projector's props
// merge. Parsing is simdjson's; this file only quotes, splits objects into members and
// canonicalises.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace atlas2kudu::testkit {

class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `utf8` as a JSON string literal with the minimal escaping of RFC 8259 (as JSON.stringify):
// `"` and `\` escaped, \b \f \n \r \t short forms, other controls as \u00xx (lowercase hex),
// everything else (including non-ASCII UTF-8) passed through. This is the one key escaping the
// reference projector uses for props_json keys.
std::string json_quote(std::string_view utf8);

// The members of a JSON object text, in order: decoded key and the value's JSON text with
// insignificant whitespace removed (numbers and strings exactly as written). Throws JsonError when
// `object_text` is not a JSON object.
std::vector<std::pair<std::string, std::string>> json_object_members(std::string_view object_text);

// The decoded strings of a JSON array of strings; throws JsonError for anything else.
std::vector<std::string> json_string_array(std::string_view array_text);

// True when `text` is one valid JSON value (RFC 8259, valid UTF-8), integers of any size included.
bool json_valid(std::string_view text);

// `text` with insignificant whitespace removed; throws JsonError when `text` is not valid JSON.
std::string json_minify(std::string_view text);

// A canonical text of any JSON value for structural comparison: objects keep member order,
// numbers go through simdjson's DOM (so `1.0` and `1` differ, `0.9` equals `0.90`), strings are
// re-quoted with json_quote. Throws JsonError on invalid JSON.
std::string json_canonical(std::string_view text);

}  // namespace atlas2kudu::testkit
