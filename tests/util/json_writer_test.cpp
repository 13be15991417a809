// JsonWriter and append_json_string: every JSON the tool writes (stats, reject file, checkpoint,
// JSON log lines) is valid JSON whatever bytes it is given.
#include "util/json_writer.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>

TEST_SUITE_BEGIN("json_writer");

using namespace atlas2kudu;

namespace {

std::string literal_of(std::string_view text) {
  std::string out;
  append_json_string(text, out);
  return out;
}

// What a strict reader gets back from the literal, or "INVALID".
std::string read_back(const std::string& literal) {
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  if (parser.parse(literal).get(element) != simdjson::SUCCESS) return "INVALID";
  std::string_view text;
  if (element.get(text) != simdjson::SUCCESS) return "INVALID";
  return std::string(text);
}

}  // namespace

TEST_CASE("escapes quotes, backslashes and control characters; keeps valid UTF-8 as it is") {
  CHECK(literal_of("a\"b\\c") == R"("a\"b\\c")");
  CHECK(literal_of("\n\r\t\b\f\x01") == R"("\n\r\t\b\f\u0001")");
  const std::string utf8 =
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xEF\xBF\xBF \xF4\x8F\xBF\xBF";
  CHECK(literal_of(utf8) == "\"" + utf8 + "\"");
  CHECK(read_back(literal_of(utf8)) == utf8);
}

TEST_CASE("a byte of no valid UTF-8 sequence becomes U+FFFD, so the JSON stays valid") {
  const std::string replacement = "\xEF\xBF\xBD";
  struct Case {
    std::string bytes;
    std::string read;
  };
  for (const Case& c : {
           Case{"caf\xE9.jsonl", "caf" + replacement + ".jsonl"},          // Latin-1 file name
           Case{"\xFF", replacement}, Case{"\xC3", replacement},           // cut short at the end
           Case{"\xC3(", replacement + "("},                               // bad continuation
           Case{"\xC0\xAF", replacement + replacement},                    // overlong '/'
           Case{"\xE0\x80\xAF", replacement + replacement + replacement},  // overlong
           Case{"\xED\xA0\x80", replacement + replacement + replacement},  // a surrogate
           Case{"\xF4\x90\x80\x80", replacement + replacement + replacement + replacement},
           Case{"\x80", replacement},  // a lone continuation byte
       }) {
    CAPTURE(c.bytes);
    const std::string literal = literal_of(c.bytes);
    CHECK(read_back(literal) == c.read);
  }
  CHECK(literal_of("a\xFF\"") == "\"a\\ufffd\\\"\"");
}
