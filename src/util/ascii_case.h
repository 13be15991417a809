// Case folding and word characters for protocol words, option values and Impala names, which are
// ASCII: Impala's database names and config-file booleans compare without case, server error
// texts are matched as substrings in any case, and a database or query option name is letters,
// digits and '_'. Unlike std::tolower, the result never depends on the process locale (a Turkish
// locale folds 'I' to a dotless i), and bytes >= 0x80 are left alone:
//
//   to_lower_ascii("Sales_DB")                          // "sales_db"
//   equals_ignoring_ascii_case("Sales_DB", "sales_db")  // true
//   contains_ignoring_ascii_case("Query 1 failed: TIMED OUT", "Timed out")  // true
//   is_ascii_word("mem_limit")                          // true ("mem-limit": false)
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace atlas2kudu {

constexpr char lower_ascii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

// Letters, digits and '_': the characters of Impala's database and query option names.
constexpr bool is_ascii_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

inline bool is_ascii_word(std::string_view text) {
  return std::all_of(text.begin(), text.end(), is_ascii_word_char);
}

inline std::string to_lower_ascii(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), lower_ascii);
  return out;
}

inline bool equals_ignoring_ascii_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](char x, char y) { return lower_ascii(x) == lower_ascii(y); });
}

inline bool contains_ignoring_ascii_case(std::string_view haystack, std::string_view needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                     [](char x, char y) { return lower_ascii(x) == lower_ascii(y); }) !=
         haystack.end();
}

}  // namespace atlas2kudu
