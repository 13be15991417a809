// SQL text: string literal escaping (Hive's unescapeSQLString rules, as Impala uses them), keys,
// identifiers.
#include <doctest/doctest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "atlas2kudu/error.h"
#include "compile/impala_sql.h"

TEST_SUITE_BEGIN("compiler_sql");

using namespace atlas2kudu;

namespace {

// Impala's lexer (SingleQuoteStringLiteral = '(\\.|[^\\'])*') followed by Hive's
// unescapeSQLString, written from its rules (docs/sql-subset.md). Returns the literal's value and
// fails the test if the lexer would end the literal anywhere but at the last character.
std::string impala_unescape(const std::string& literal) {
  REQUIRE(literal.size() >= 2);
  REQUIRE(literal.front() == '\'');
  std::size_t end = 1;
  while (end < literal.size() && literal[end] != '\'') end += literal[end] == '\\' ? 2 : 1;
  REQUIRE(end == literal.size() - 1);
  const std::string s = literal.substr(1, literal.size() - 2);
  std::string out;
  const auto octal = [](char c) { return c >= '0' && c <= '7'; };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out.push_back(s[i]);
      continue;
    }
    const char n = s[i + 1];
    if (n == 'u' && i + 5 < s.size()) {
      FAIL("the compiler never writes \\u escapes");
    }
    if (i + 3 < s.size() && (n == '0' || n == '1') && octal(s[i + 2]) && octal(s[i + 3])) {
      out.push_back(static_cast<char>((n - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
      continue;
    }
    switch (n) {
      case '0':
        out.push_back('\0');
        break;
      case '\'':
        out.push_back('\'');
        break;
      case '"':
        out.push_back('"');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'Z':
        out.push_back('\x1a');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '%':
        out.append("\\%");
        break;
      case '_':
        out.append("\\_");
        break;
      default:
        out.push_back(n);
    }
    ++i;
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string literal(std::string_view text) {
  std::string s;
  append_string_literal(s, text);
  return s;
}

}  // namespace

TEST_CASE("string literals escape exactly the characters Impala's unescaper needs") {
  CHECK(literal("plain") == "'plain'");
  CHECK(literal("it's") == R"('it\'s')");
  CHECK(literal("a\\b") == R"('a\\b')");
  CHECK(literal("l1\nl2\r\t") == R"('l1\nl2\r\t')");
  CHECK(literal(std::string("nul\0"
                            "12",
                            6)) == R"('nul\00012')");
  CHECK(literal("\x01\x1f\x7f") == R"('\001\037\177')");
  CHECK(literal("100% a_b \"q\"") == R"('100% a_b "q"')");
  CHECK(literal("caf\xc3\xa9 \xf0\x9f\x98\x80") == "'caf\xc3\xa9 \xf0\x9f\x98\x80'");
  CHECK(literal("") == "''");
}

TEST_CASE("string literals: a character to escape at every position of the 16- and 8-byte scans") {
  // The scan reads 16 bytes, then 8, then one at a time: put each byte that needs an escape (and
  // bytes >= 0x80 that must not be escaped, next to the 0x7F and 0x1F edges) at every position of
  // texts of every length past two blocks, alone and after another one.
  const char to_escape[] = {'\0', '\x01', '\x1f', '\x7f', '\'', '\\', '\n', '\r', '\t'};
  const char plain[] = {' ', '~', '"', '\x80', '\x9f', '\xc3', '\xff'};
  for (std::size_t len = 1; len <= 40; ++len) {
    for (std::size_t at = 0; at < len; ++at) {
      for (const char c : to_escape) {
        std::string text(len, 'a');
        text[at] = c;
        if (at >= 3) text[at - 3] = '\'';
        const std::string lit = literal(text);
        CAPTURE(len);
        CAPTURE(at);
        CAPTURE(lit);
        for (const char b : lit) REQUIRE(static_cast<unsigned char>(b) >= 0x20);
        REQUIRE(lit.size() >= text.size() + 3);  // two quotes and at least one escape
        REQUIRE(impala_unescape(lit) == text);
      }
      for (const char c : plain) {
        std::string text(len, 'a');
        text[at] = c;
        CHECK(literal(text) == "'" + text + "'");
      }
    }
  }
}

TEST_CASE("random valid UTF-8 round-trips through Impala's unescaping") {
  std::mt19937_64 rng(20261130);
  // Weighted towards the characters that matter: controls, quotes, backslashes, digits after a
  // NUL, Hive's special \% and \_, and multi-byte sequences of every length.
  const char32_t specials[] = {0,    1,   '\n', '\r', '\t',  0x1a,  0x1f,   0x7f,
                               '\'', '"', '\\', '%',  '_',   '0',   '1',    '7',
                               'u',  'n', 'Z',  0xe9, 0x7ff, 0x800, 0xfffd, 0x10ffff};
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    const int len = static_cast<int>(rng() % 24);
    for (int i = 0; i < len; ++i) {
      char32_t cp;
      switch (rng() % 4) {
        case 0:
          cp = specials[rng() % std::size(specials)];
          break;
        case 1:
          cp = static_cast<char32_t>(rng() % 0x80);
          break;
        case 2:
          cp = static_cast<char32_t>(0x80 + rng() % 0x780);
          break;
        default: {
          do cp = static_cast<char32_t>(rng() % 0x110000);
          while (cp >= 0xD800 && cp <= 0xDFFF);
        }
      }
      append_utf8(text, cp);
    }
    const std::string lit = literal(text);
    CAPTURE(lit);
    for (const char c : lit) REQUIRE(static_cast<unsigned char>(c) >= 0x20);
    REQUIRE(impala_unescape(lit) == text);
  }
}

TEST_CASE("comment text: nothing in it can end the comment line") {
  CHECK(comment_text("plain name.jsonl") == "plain name.jsonl");
  CHECK(comment_text("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(comment_text("back\\slash") == "back\\\\slash");
  CHECK(comment_text(std::string("nul\0del\x7f\x01", 9)) == "nul\\x00del\\x7f\\x01");
  // Valid UTF-8 passes, except the code points other tools end lines at; invalid bytes are hex.
  CHECK(comment_text("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");
  CHECK(comment_text("\xc2\x85|\xe2\x80\xa8|\xe2\x80\xa9") == "\\u0085|\\u2028|\\u2029");
  // Nor can a C1 control start a terminal escape, nor a direction mark reorder what follows.
  CHECK(comment_text("\xc2\x9b"
                     "2J|\xe2\x80\xae|\xe2\x81\xa6|\xe2\x80\x8b|\xef\xbb\xbf") ==
        "\\u009b2J|\\u202e|\\u2066|\\u200b|\\ufeff");
  CHECK(comment_text("\xff\xc3(\xed\xa0\x80\xc0\xaf") == "\\xff\\xc3(\\xed\\xa0\\x80\\xc0\\xaf");
  // No output byte is a control character or a line end of any kind.
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string text(static_cast<std::size_t>(rng() % 20), '\0');
    for (char& c : text) c = static_cast<char>(rng() & 0xff);
    const std::string out = comment_text(text);
    for (unsigned char c : out) CHECK((c >= 0x20 && c != 0x7f));
    CHECK(out.find("\xc2\x85") == std::string::npos);
    CHECK(out.find("\xe2\x80\xa8") == std::string::npos);
    CHECK(out.find("\xe2\x80\xa9") == std::string::npos);
  }
}

TEST_CASE("keys in both encodings, integers and identifiers") {
  std::array<std::uint8_t, 16> key{};
  key[0] = 0xab;
  key[15] = 0x01;
  std::string s;
  append_key(s, key, KeyEncoding::kHex);
  CHECK(s == "'ab000000000000000000000000000001'");
  s.clear();
  append_key(s, key, KeyEncoding::kBinary);
  CHECK(s == "CAST(unhex('ab000000000000000000000000000001') AS BINARY)");
  s.clear();
  append_int(s, INT64_MIN);
  CHECK(s == "-9223372036854775808");
  CHECK(qualified_table("data", "entity_flat") == "`data`.`entity_flat`");
  CHECK_THROWS_AS(qualified_table("a`b", "t"), Error);
  CHECK_THROWS_AS(qualified_table("a\\b", "t"), Error);
  CHECK_THROWS_AS(qualified_table("", "t"), Error);
  CHECK_THROWS_AS(qualified_table(" db", "t"), Error);
  // Impala's names: 1 to 128 ASCII letters, digits and underscores, quoted or not.
  CHECK(qualified_table("Db_2", "t") == "`Db_2`.`t`");
  CHECK(qualified_table(std::string(128, 'a'), "t").size() == 128 + 6);
  for (const std::string& bad :
       std::vector<std::string>{"a.b", "x y", "a;b", "a-b", "\xd0\xb0", std::string(129, 'a')}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(
        check_identifier(bad),
        ("--database '" + bad +
         "': not a name Impala accepts for a database: 1 to 128 ASCII letters, digits and "
         "underscores")
            .c_str(),
        Error);
  }
}

TEST_SUITE_END();
