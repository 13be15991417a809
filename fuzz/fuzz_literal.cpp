// libFuzzer target: the encoders that put input text into SQL (compile/impala_sql): string
// literals, comment text and identifiers.
//
// What must hold for any bytes: a literal is one token for Impala's lexer (it ends at its last
// quote) and, for valid UTF-8, unescapes (Hive's rules, as the test kit implements them) to the
// exact text; comment text holds no control byte and no character other tools end a line at; an
// identifier that check_identifier accepts is one backtick-quoted token.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "atlas2kudu/error.h"
#include "compile/impala_sql.h"
#include "input/json_text.h"
#include "sql_interpreter.h"

using namespace atlas2kudu;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  std::string literal;
  append_string_literal(literal, text);
  if (literal.size() < 2 || literal.front() != '\'' || literal.back() != '\'') std::abort();
  // Impala's lexer: '(\\.|[^\\'])*'
  std::size_t end = 1;
  while (end < literal.size() && literal[end] != '\'') end += literal[end] == '\\' ? 2 : 1;
  if (end != literal.size() - 1) std::abort();
  for (const char c : literal) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) std::abort();
  }
  if (is_valid_utf8(text) &&
      testkit::impala_unescape(std::string_view(literal).substr(1, literal.size() - 2)) != text) {
    std::abort();
  }

  const std::string comment = comment_text(text);
  for (const char c : comment) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) std::abort();
  }
  if (comment.find("\xc2\x85") != std::string::npos ||
      comment.find("\xe2\x80\xa8") != std::string::npos ||
      comment.find("\xe2\x80\xa9") != std::string::npos) {
    std::abort();
  }

  try {
    check_identifier(text);
    std::string quoted;
    append_identifier(quoted, text);
    if (quoted.size() != text.size() + 2 || quoted.find('`', 1) != quoted.size() - 1) std::abort();
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::kUsage) std::abort();
  }
  return 0;
}
