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

TEST_CASE("where a JSON text the parser refused breaks the grammar, and what was expected") {
  struct Case {
    std::string text;
    std::size_t at;
    const char* what;
  };
  const Case cases[] = {
      {R"({"a":1 "b":2})", 7, "expected ',' or '}' after a member"},
      {R"({"a":[1,]})", 8, "expected a value"},
      {R"({"a":[1 2]})", 8, "expected ',' or ']' after an element"},
      {R"({"a":[,1]})", 6, "expected a value or ']'"},
      {R"({"a",1})", 4, "expected ':' after a member name"},
      {R"({"a":1,})", 7, "expected a member name (a string)"},
      {R"({'a':1})", 1, "expected a member name (a string) or '}'"},
      {R"({"a":"x)", 5, "a string not closed before the end"},
      {R"({"a":{"b":1})", 12, "the end of the text inside an object"},
      {R"([1,[2])", 6, "the end of the text inside an array"},
      {"", 0, "no JSON value"},
      {" \n", 2, "no JSON value"},
      {R"({"a":1}})", 7, "more after the end of the JSON value"},
      {R"({"a":1} x)", 8, "more after the end of the JSON value"},
      {R"({"a":tru})", 5,
       "not a JSON value (true, false, null, a number, a string, an object or an array)"},
      {R"({"a":nul})", 5,
       "not a JSON value (true, false, null, a number, a string, an object or an array)"},
      {R"({"a":01})", 5, "a number JSON does not allow"},
      {R"({"a":1.})", 5, "a number JSON does not allow"},
      {R"({"a":-})", 5, "a number JSON does not allow"},
      {R"({"a":+1})", 5,
       "not a JSON value (true, false, null, a number, a string, an object or an array)"},
      {R"({"a":"\q"})", 6, "an escape JSON does not allow"},
      {R"({"a":"\u12G4"})", 6, "a \\u escape without four hex digits"},
      {R"({"a":"\ud800"})", 6, "a \\u escape of a high surrogate without a low one after it"},
      {R"({"a":"\ud800\u0041"})", 6, "a \\u escape of a high surrogate without a low one after it"},
      {R"({"a":"\udc00"})", 6, "a \\u escape of a low surrogate without a high one before it"},
      {std::string("{\"a\":\"x\ty\"}"), 7,
       "a control character (U+0009) in a string, where JSON needs it escaped"},
      {std::string("{\"a\":1,\0}", 9), 7, "expected a member name (a string)"},
  };
  simdjson::dom::parser parser;
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const auto bad = find_json_syntax_error(c.text);
    REQUIRE(bad);
    CHECK(bad->at == c.at);
    CHECK(bad->what == c.what);
    // simdjson refuses every one of them too: the message is never about a text it accepts.
    CHECK(parser.parse(simdjson::padded_string(c.text)).error() != simdjson::SUCCESS);
  }
  for (const char* fine : {R"({})", R"([])", R"({"a":[1,-2.5e+3,0,true,false,null,"s",{"b":[]}]})",
                           R"( {"a" : "\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"} )", "\"x\"", "0",
                           "[[[[]]]]", "{\"caf\xc3\xa9\":\"\xe2\x82\xac\"}"}) {
    CAPTURE(fine);
    CHECK_FALSE(find_json_syntax_error(fine));
  }
}

TEST_CASE("each byte taken out of a record: a syntax error is found wherever simdjson finds one") {
  // The other way round: where the locator finds nothing, simdjson accepts the text, so that a
  // refused record never falls back to a message without a position for a syntax error.
  const std::string record =
      R"({"version":{"version":"1.0.0","versionParts":[1]},"msgCreationTime":1700000000000,)"
      R"("message":{"type":"ENTITY_NOTIFICATION_V2","entity":{"typeName":"hive_table",)"
      R"("attributes":{"owner":"a\"b","n":-12.5e3,"ok":true,"x":null,"l":["p","\u00e9"]},)"
      R"("guid":"00000001-0000-4000-8000-000000000001"},"operationType":"ENTITY_CREATE"}})";
  simdjson::dom::parser parser;
  REQUIRE(parser.parse(simdjson::padded_string(record)).error() == simdjson::SUCCESS);
  for (std::size_t i = 0; i < record.size(); ++i) {
    for (const std::string& text :
         {record.substr(0, i) + record.substr(i + 1), record.substr(0, i) + "," + record.substr(i),
          record.substr(0, i) + "}" + record.substr(i)}) {
      CAPTURE(text);
      const bool refused = parser.parse(simdjson::padded_string(text)).error() != simdjson::SUCCESS;
      CHECK(refused == find_json_syntax_error(text).has_value());
    }
  }
}

TEST_SUITE_END();
