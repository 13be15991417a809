// Strings and member names read from the document's text when they have no escape, unescaped by
// simdjson when they do: the same text either way, whatever the length and wherever the escape.
#include "input/json_path.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>

#include "input/json_text.h"
#include "util/utf8.h"

TEST_SUITE_BEGIN("json_path");

using namespace atlas2kudu;
namespace od = simdjson::ondemand;

namespace {

// `len` letters, with an escape in JSON at `escape_at` (none if it is past the end): returns the
// JSON text and sets `value` to what it decodes to.
std::string json_text(std::size_t len, std::size_t escape_at, const char* escape,
                      const char* decoded, std::string& value) {
  std::string json;
  value.clear();
  for (std::size_t i = 0; i < len; ++i) {
    if (i == escape_at) {
      json += escape;
      value += decoded;
    }
    json += static_cast<char>('a' + i % 26);
    value += static_cast<char>('a' + i % 26);
  }
  if (escape_at == len) {
    json += escape;
    value += decoded;
  }
  return json;
}

}  // namespace

TEST_CASE("member names and strings, with and without escapes, of every length to 40") {
  od::parser parser;
  const std::pair<const char*, const char*> escapes[] = {
      {"\\n", "\n"}, {"\\\"", "\""}, {"\\\\", "\\"}, {"\\u00e9", "\xc3\xa9"}};
  for (std::size_t len = 0; len <= 40; ++len) {
    for (std::size_t at = 0; at <= len + 1; ++at) {  // len + 1: no escape
      for (const auto& pair : escapes) {
        // Not a structured binding: CAPTURE's lambda cannot capture one under clang.
        const char* const escape = pair.first;
        const char* const decoded = pair.second;
        CAPTURE(len);
        CAPTURE(at);
        CAPTURE(escape);
        std::string name, text;
        const std::string json_name = json_text(len, at, escape, decoded, name);
        const std::string json_value = json_text(len + 3, at, escape, decoded, text);
        // A multi-byte character after the value, and a second member, as in real records.
        const simdjson::padded_string doc("{\"" + json_name + "\":\"" + json_value +
                                          "\xc3\xa9\" ,\"k\":\"v\"}");
        od::document d = parser.iterate(doc);
        std::size_t members = 0;
        for (auto field : d.get_object()) {
          const std::string got_name(member_name(field));
          const std::string got_value(get_string(member_value(field), Path("x")));
          if (members++ == 0) {
            CHECK(got_name == name);
            CHECK(got_value == text + "\xc3\xa9");
          } else {
            CHECK(got_name == "k");
            CHECK(got_value == "v");
          }
        }
        CHECK(members == 2);
      }
    }
  }
}

TEST_CASE("canonical JSON keeps a string without escapes as written, and normalizes the rest") {
  od::parser parser;
  const simdjson::padded_string doc(
      std::string(R"({"a" : "plain text"  , "b":"\u0041\/\"" , "c\u0064":["x" , "y"] })"));
  od::document d = parser.iterate(doc);
  std::string out;
  od::value whole = d.get_value();
  write_canonical_json(whole, out, Path("x"), Nesting{0, 10});
  CHECK(out == R"({"a":"plain text","b":"A/\"","cd":["x","y"]})");
}

TEST_CASE("where invalid UTF-8 starts: the longest valid prefix") {
  CHECK(valid_utf8_prefix("") == 0);
  CHECK(valid_utf8_prefix("caf\xc3\xa9 ok") == 8);
  CHECK(valid_utf8_prefix("caf\xc3\xa9 \xff!") == 6);
  CHECK(valid_utf8_prefix("ab\xc3") == 2);  // a sequence cut short
  CHECK(valid_utf8_prefix("a\xed\xa0\x80"
                          "b") == 1);  // a surrogate
}

TEST_CASE("excerpts in messages show what the bytes are") {
  // A byte order mark, NULs, UTF-16 and invalid UTF-8 are told apart; text in UTF-8 stays text.
  CHECK(printable_excerpt("\xef\xbb\xbf{\"a\":1}", 40) == R"(\xef\xbb\xbf{"a":1})");
  CHECK(printable_excerpt(std::string("{\0\"\0", 4), 40) == R"({\x00"\x00)");
  CHECK(printable_excerpt("caf\xc3\xa9 \xff\xfe", 40) == "caf\xc3\xa9 \\xff\\xfe");
  CHECK(printable_excerpt("a\nb\te\xe2\x80\xa8", 40) == R"(a\x0ab\x09e\xe2\x80\xa8)");
  // A C1 control (U+009B starts a terminal escape) and a right-to-left override are shown too.
  CHECK(printable_excerpt("x\xc2\x9b"
                          "2J\xe2\x80\xae",
                          40) == R"(x\xc2\x9b2J\xe2\x80\xae)");
  // Cut at `max` bytes, a character cut in two shows its bytes.
  CHECK(printable_excerpt("ab\xc3\xa9"
                          "cd",
                          3) == R"(ab\xc3...)");
}

TEST_SUITE_END();
