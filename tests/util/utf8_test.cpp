#include "util/utf8.h"

#include <doctest/doctest.h>

#include <string>

using atlas2kudu::joined_lines;
using atlas2kudu::one_line;

TEST_SUITE("utf8") {
  TEST_CASE("one_line escapes what could end or forge a line of diagnostics") {
    CHECK(one_line("a\nb\\c\xff") == R"(a\nb\\c\xff)");
    CHECK(one_line("tab\there\r") == R"(tab\there\r)");
    CHECK(one_line("\x1b[2Jclear") == R"(\x1b[2Jclear)");
    CHECK(one_line("caf\xc3\xa9") == "caf\xc3\xa9");  // valid UTF-8 passes through
    CHECK(one_line("\xe2\x80\xae"
                   "evil") == R"(\u202eevil)");  // a direction mark is shown
  }

  TEST_CASE("joined_lines: a server message's lines, joined by spaces, then escaped") {
    // Impala: "Query <id> failed:\n<cause>"; the cause stays on the line a log search finds.
    CHECK(joined_lines("Query 4a:0 failed:\nAnalysisException: boom") ==
          "Query 4a:0 failed: AnalysisException: boom");
    CHECK(joined_lines("a\r\nb\rc\nd") == "a b c d");  // CRLF is one break, CR and LF one each
    CHECK(joined_lines("a\n\nb") == "a  b");           // an empty line stays a space
    CHECK(joined_lines("ends\n") == "ends ");
    CHECK(joined_lines("") == "");
    CHECK(joined_lines("x\x1b[2J\ty\\") == R"(x\x1b[2J\ty\\)");
  }

  TEST_CASE("first_control_byte: below 0x20 or DEL, nothing else") {
    CHECK(atlas2kudu::first_control_byte("eyJ.a\r\nX: 1") == 5);
    CHECK(atlas2kudu::first_control_byte("tab\there") == 3);
    CHECK(atlas2kudu::first_control_byte(std::string_view("\0", 1)) == 0);
    CHECK(atlas2kudu::first_control_byte("del\x7f") == 3);
    CHECK(atlas2kudu::first_control_byte("caf\xc3\xa9 \xff") ==
          std::string_view::npos);  // not ASCII controls
    CHECK(atlas2kudu::first_control_byte("") == std::string_view::npos);
  }
}
