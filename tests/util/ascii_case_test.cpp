// ASCII case folding: database names, config-file booleans and server error texts.
#include "util/ascii_case.h"

#include <doctest/doctest.h>

#include <clocale>
#include <string>

TEST_SUITE_BEGIN("ascii_case");

using namespace atlas2kudu;

TEST_CASE("only A-Z are folded; other bytes, UTF-8 included, are kept") {
  CHECK(to_lower_ascii("Sales_DB.Q3") == "sales_db.q3");
  CHECK(to_lower_ascii("@[`{") == "@[`{");                  // the neighbours of A-Z and a-z
  CHECK(to_lower_ascii("\xC3\x84RGER") == "\xC3\x84rger");  // "ÄRGER": the Ä stays
  CHECK(to_lower_ascii("") == "");
}

TEST_CASE("equality without case needs the same length") {
  CHECK(equals_ignoring_ascii_case("Sales_DB", "sales_db"));
  CHECK(equals_ignoring_ascii_case("", ""));
  CHECK_FALSE(equals_ignoring_ascii_case("sales", "sales_db"));
  CHECK_FALSE(equals_ignoring_ascii_case("sales_db", "sales"));
  CHECK_FALSE(equals_ignoring_ascii_case("a@", "a`"));  // '@' + 32 is '`', not a case pair
}

TEST_CASE("a substring is found in any case, wherever it sits") {
  CHECK(contains_ignoring_ascii_case("Query 1 failed:\nTIMED OUT after 5s", "Timed out"));
  CHECK(contains_ignoring_ascii_case("timed out", "Timed out"));
  CHECK(contains_ignoring_ascii_case("anything", ""));
  CHECK_FALSE(contains_ignoring_ascii_case("Timed ou", "Timed out"));
  CHECK_FALSE(contains_ignoring_ascii_case("", "x"));
}

TEST_CASE("a word of Impala names is ASCII letters, digits and underscores") {
  CHECK(is_ascii_word("mem_limit"));
  CHECK(is_ascii_word("LONG_POLLING_TIME_MS"));
  CHECK(is_ascii_word("atlas2"));
  CHECK(is_ascii_word(""));  // callers check emptiness themselves, with their own message
  CHECK_FALSE(is_ascii_word("mem-limit"));
  CHECK_FALSE(is_ascii_word("mem limit"));
  CHECK_FALSE(is_ascii_word("db.table"));
  CHECK_FALSE(is_ascii_word("caf\xc3\xa9"));  // a letter, but not an ASCII one
  CHECK_FALSE(is_ascii_word(std::string_view("a\0b", 3)));
}

TEST_CASE("the process locale does not change the folding") {
  // In a Turkish locale, tolower('I') is not 'i'; Impala's names are ASCII regardless. The
  // locale may be missing on this machine, in which case "C" is tested twice.
  const std::string previous = std::setlocale(LC_CTYPE, nullptr);
  std::setlocale(LC_CTYPE, "tr_TR.UTF-8");
  CHECK(to_lower_ascii("INVALID SESSION ID") == "invalid session id");
  CHECK(equals_ignoring_ascii_case("DIM", "dim"));
  std::setlocale(LC_CTYPE, previous.c_str());
}

TEST_SUITE_END();
