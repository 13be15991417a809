#include "sql_interpreter.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <set>

namespace atlas2kudu::testkit {

// ---------------------------------------------------------------------------------------------
// String literals

namespace {

// UTF-8 -> UTF-16 code units, as Java holds the statement text. nullopt on invalid UTF-8.
std::optional<std::u16string> utf8_to_utf16(std::string_view s) {
  std::u16string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::uint32_t cp = 0;
    std::size_t n = 0;
    if (c < 0x80) {
      cp = c;
      n = 1;
    } else if ((c & 0xE0) == 0xC0) {
      cp = c & 0x1F;
      n = 2;
    } else if ((c & 0xF0) == 0xE0) {
      cp = c & 0x0F;
      n = 3;
    } else if ((c & 0xF8) == 0xF0) {
      cp = c & 0x07;
      n = 4;
    } else {
      return std::nullopt;
    }
    if (i + n > s.size()) return std::nullopt;
    for (std::size_t k = 1; k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Reject overlong forms, surrogates and values past U+10FFFF, as a strict decoder does.
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return std::nullopt;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out += static_cast<char16_t>(0xD800 + (cp >> 10));
      out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
    } else {
      out += static_cast<char16_t>(cp);
    }
    i += n;
  }
  return out;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Java's String.getBytes(UTF_8): pairs become one code point, an unpaired surrogate becomes '?'.
std::string utf16_to_utf8(const std::u16string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char16_t c = s[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 &&
        s[i + 1] <= 0xDFFF) {
      append_utf8(out, 0x10000 + ((static_cast<std::uint32_t>(c) - 0xD800) << 10) +
                           (static_cast<std::uint32_t>(s[i + 1]) - 0xDC00));
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      out += '?';
    } else {
      append_utf8(out, c);
    }
  }
  return out;
}

// java.lang.Character.digit(c, 16) for the characters it accepts that matter here: ASCII digits
// and letters, and their fullwidth forms (U+FF10-FF19, U+FF21-FF26, U+FF41-FF46). Other Unicode
// decimal digits (which Java also accepts) are not modelled; the compiler never writes \u.
int java_hex_digit(char16_t c) {
  if (c >= u'0' && c <= u'9') return c - u'0';
  if (c >= u'a' && c <= u'f') return c - u'a' + 10;
  if (c >= u'A' && c <= u'F') return c - u'A' + 10;
  if (c >= 0xFF10 && c <= 0xFF19) return c - 0xFF10;
  if (c >= 0xFF21 && c <= 0xFF26) return c - 0xFF21 + 10;
  if (c >= 0xFF41 && c <= 0xFF46) return c - 0xFF41 + 10;
  return -1;
}

}  // namespace

std::string impala_unescape(std::string_view raw) {
  // Without a backslash neither normalisation nor unescaping changes anything (a bare quote cannot
  // occur: it would have ended the literal), and valid UTF-8 holds no unpaired surrogate.
  if (raw.find('\\') == std::string_view::npos) {
    if (!simdjson::validate_utf8(raw.data(), raw.size())) {
      throw SqlError("string literal is not valid UTF-8");
    }
    return std::string(raw);
  }
  const auto value = utf8_to_utf16(raw);
  if (!value) throw SqlError("string literal is not valid UTF-8");

  // Impala StringLiteral.getNormalizedValue(): `\"` -> `"`, `\'` and `\\` kept, bare `'` -> `\'`.
  std::u16string norm;
  const std::size_t len = value->size();
  for (std::size_t i = 0; i < len; ++i) {
    const char16_t c = (*value)[i];
    if (c == u'\\' && i + 1 < len) {
      const char16_t next = (*value)[i + 1];
      if (next == u'"' || next == u'\'' || next == u'\\') {
        if (next != u'"') norm += c;
        norm += next;
        ++i;
        continue;
      }
      norm += c;
    } else if (c == u'\'') {
      norm += u"\\'";
    } else {
      norm += c;
    }
  }

  // Hive BaseSemanticAnalyzer.unescapeSQLString("'" + norm + "'"), transcribed from its logic
  // (index arithmetic included, since it decides what happens near the closing quote).
  const std::u16string b = u"'" + norm + u"'";
  std::u16string sb;
  std::optional<char16_t> enclosure;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const char16_t current = b[i];
    if (!enclosure) {
      if (current == u'\'' || current == u'"') enclosure = current;
      continue;  // characters outside the enclosure are ignored
    }
    if (current == *enclosure) {
      enclosure.reset();
      continue;
    }
    if (current == u'\\' && i + 6 < b.size() && b[i + 1] == u'u') {
      std::int32_t code = 0;
      for (std::size_t j = 0; j < 4; ++j) code = (code << 4) + java_hex_digit(b[i + 2 + j]);
      sb += static_cast<char16_t>(static_cast<std::uint32_t>(code) & 0xFFFF);
      i += 5;
      continue;
    }
    if (current == u'\\' && i + 4 < b.size()) {
      const char16_t i1 = b[i + 1], i2 = b[i + 2], i3 = b[i + 3];
      if (i1 >= u'0' && i1 <= u'1' && i2 >= u'0' && i2 <= u'7' && i3 >= u'0' && i3 <= u'7') {
        sb += static_cast<char16_t>((i1 - u'0') * 64 + (i2 - u'0') * 8 + (i3 - u'0'));
        i += 3;
        continue;
      }
    }
    if (current == u'\\' && i + 2 < b.size()) {
      const char16_t n = b[i + 1];
      switch (n) {
        case u'0':
          sb += u'\0';
          break;
        case u'\'':
          sb += u'\'';
          break;
        case u'"':
          sb += u'"';
          break;
        case u'b':
          sb += u'\b';
          break;
        case u'n':
          sb += u'\n';
          break;
        case u'r':
          sb += u'\r';
          break;
        case u't':
          sb += u'\t';
          break;
        case u'Z':
          sb += char16_t{0x1A};
          break;
        case u'\\':
          sb += u'\\';
          break;
        case u'%':
          sb += u"\\%";
          break;  // kept for LIKE patterns
        case u'_':
          sb += u"\\_";
          break;
        default:
          sb += n;
          break;
      }
      ++i;
    } else {
      sb += current;
    }
  }
  return utf16_to_utf8(sb);
}

std::string impala_quote(std::string_view utf8) {
  std::string out = "'";
  for (const char ch : utf8) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += fmt::format("\\{:03o}", c);
        } else {
          out += ch;
        }
    }
  }
  out += '\'';
  return out;
}

std::string statement_too_long(std::size_t bytes) {
  return fmt::format("Statement length of {} bytes exceeds the maximum statement length ({} bytes)",
                     bytes, kImpalaMaxStatementBytes);
}

std::string unresolved_table_reference(std::string_view database, std::string_view table) {
  return fmt::format("Could not resolve table reference: '{}.{}'", database, table);
}

std::string impala_unhex(std::string_view hex) {
  if (hex.size() % 2 != 0) return {};
  std::string out;
  out.reserve(hex.size() / 2);
  const auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]);
    const int lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return {};
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Lexer

namespace {

struct Token {
  enum class Kind { kIdent, kString, kNumber, kWord, kPunct, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;  // identifier name, raw literal text, digits, upper-cased word, punctuation
  std::string_view shown;  // as written (a view into the script), for messages
  std::size_t line = 0;
  std::size_t statement = 0;          // 1-based statement the token belongs to
  std::size_t offset = 0;             // byte offset of the token in the script
  bool after_window_comment = false;  // a `-- window ...` comment precedes it (phase boundary)
};

const std::set<std::string, std::less<>>& keywords() {
  static const std::set<std::string, std::less<>> k = {
      "UPSERT", "INTO",  "VALUES", "DELETE", "FROM",   "WHERE", "AND",  "IN",   "NOT",  "NULL",
      "TRUE",   "FALSE", "CAST",   "AS",     "BINARY", "UNHEX", "CASE", "WHEN", "THEN", "END"};
  return k;
}

std::string shorten(std::string_view s) {
  if (s.size() <= 60) return std::string(s);
  return std::string(s.substr(0, 57)) + "...";
}

std::vector<Token> lex(std::string_view sql) {
  std::vector<Token> out;
  std::size_t line = 1;
  std::size_t statement = 1;
  std::size_t i = 0;
  bool window_comment = false;
  const auto fail = [&](std::string_view why, std::string_view token) {
    throw SqlError(
        fmt::format("statement {} (line {}): {} at `{}`", statement, line, why, shorten(token)));
  };
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      ++i;
      continue;
    }
    if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      const std::size_t start = i;
      while (i < sql.size() && sql[i] != '\n') ++i;
      // docs/sql-subset.md script layout: "-- window N ..." comments open windows and phases.
      if (sql.substr(start, i - start).starts_with("-- window ")) window_comment = true;
      continue;
    }
    if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      fail("block comments are outside the subset", sql.substr(i, 2));
    }
    Token t;
    t.line = line;
    t.statement = statement;
    t.offset = i;
    t.after_window_comment = window_comment;
    window_comment = false;
    if (c == '`') {
      const std::size_t end = sql.find('`', i + 1);
      if (end == std::string_view::npos) fail("unterminated quoted identifier", sql.substr(i));
      std::string_view name = sql.substr(i + 1, end - i - 1);
      if (name.find('\\') != std::string_view::npos || name.find('\n') != std::string_view::npos) {
        fail("backslash or newline inside a quoted identifier", sql.substr(i, end - i + 1));
      }
      // Impala trims the name of whitespace.
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.front()))) {
        name.remove_prefix(1);
      }
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) {
        name.remove_suffix(1);
      }
      if (name.empty()) fail("empty identifier", sql.substr(i, end - i + 1));
      t.kind = Token::Kind::kIdent;
      t.text = std::string(name);
      t.shown = sql.substr(i, end - i + 1);
      i = end + 1;
    } else if (c == '\'') {
      // SingleQuoteStringLiteral = \'(\\.|[^\\\'])*\'   (JFlex `.` excludes line terminators)
      std::size_t j = i + 1;
      const std::size_t start_line = line;
      for (;;) {
        if (j >= sql.size()) fail("unterminated string literal", sql.substr(i));
        if (sql[j] == '\\') {
          if (j + 1 >= sql.size()) fail("unterminated string literal", sql.substr(i));
          if (sql[j + 1] == '\n' || sql[j + 1] == '\r') {
            fail("backslash before a line break in a string literal", sql.substr(i, j + 2 - i));
          }
          j += 2;
          continue;
        }
        if (sql[j] == '\n') ++line;
        if (sql[j] == '\'') break;
        ++j;
      }
      t.kind = Token::Kind::kString;
      t.text = std::string(sql.substr(i + 1, j - i - 1));
      t.shown = sql.substr(i, j - i + 1);
      t.line = start_line;
      i = j + 1;
    } else if (c == '"') {
      fail("double-quoted literals are outside the subset", sql.substr(i, 1));
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) ++j;
      if (j < sql.size() &&
          (std::isalpha(static_cast<unsigned char>(sql[j])) || sql[j] == '.' || sql[j] == '_')) {
        fail("only decimal integers are allowed", sql.substr(i, j + 1 - i));
      }
      t.kind = Token::Kind::kNumber;
      t.shown = sql.substr(i, j - i);
      t.text = std::string(t.shown);
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < sql.size() &&
             (std::isalnum(static_cast<unsigned char>(sql[j])) || sql[j] == '_')) {
        ++j;
      }
      t.shown = sql.substr(i, j - i);
      std::string upper(t.shown);
      for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (upper == "OR") fail("OR is not allowed (no OR-of-ANDs; use IN-lists)", t.shown);
      if (!keywords().count(upper)) {
        fail("unquoted identifier or keyword outside the subset", t.shown);
      }
      t.kind = Token::Kind::kWord;
      t.text = upper;
      i = j;
    } else if (c == '(' || c == ')' || c == ',' || c == '.' || c == ';' || c == '=' || c == '-') {
      t.kind = Token::Kind::kPunct;
      t.shown = sql.substr(i, 1);
      t.text = std::string(1, c);
      ++i;
      if (c == ';') {
        out.push_back(std::move(t));
        ++statement;
        continue;
      }
    } else {
      fail("unexpected character", sql.substr(i, 1));
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.kind = Token::Kind::kEnd;
  end.shown = "end of input";
  end.line = line;
  end.statement = statement;
  out.push_back(std::move(end));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parser

class Parser {
 public:
  Parser(std::vector<Token> tokens, const KuduStore& store, const InterpreterOptions& options)
      : tokens_(std::move(tokens)), store_(store), options_(options) {}

  std::vector<ParsedStatement> parse() {
    std::vector<ParsedStatement> out;
    while (peek().kind != Token::Kind::kEnd) out.push_back(statement());
    return out;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }

  [[noreturn]] void fail(const Token& at, std::string_view why) const {
    throw SqlError(fmt::format("statement {} (line {}): {} at `{}`", at.statement, at.line, why,
                               shorten(at.shown)));
  }
  bool is_word(const Token& t, std::string_view w) const {
    return t.kind == Token::Kind::kWord && t.text == w;
  }
  bool is_punct(const Token& t, std::string_view p) const {
    return t.kind == Token::Kind::kPunct && t.text == p;
  }
  void expect_word(std::string_view w) {
    const Token& t = next();
    if (!is_word(t, w)) fail(t, fmt::format("expected {}", w));
  }
  void expect_punct(std::string_view p) {
    const Token& t = next();
    if (!is_punct(t, p)) fail(t, fmt::format("expected `{}`", p));
  }
  std::string ident(std::string_view what) {
    const Token& t = next();
    if (t.kind != Token::Kind::kIdent) fail(t, fmt::format("expected a backtick-quoted {}", what));
    return t.text;
  }

  const TableSchema& table_ref(ParsedStatement& st) {
    const Token& at = peek();
    const std::string db = ident("database name");
    expect_punct(".");
    const Token& table_token = peek();
    st.table = ident("table name");
    const std::string unresolved = unresolved_table_reference(db, st.table);
    if (db != options_.database) fail(at, unresolved);
    try {
      return store_.table(st.table).schema();
    } catch (const StoreError&) {
      fail(table_token, unresolved);
    }
  }

  Cell literal() {
    const Token& t = next();
    if (is_punct(t, "-")) {
      const Token& n = next();
      if (n.kind != Token::Kind::kNumber) fail(n, "expected an integer after `-`");
      return integer(n, true);
    }
    if (t.kind == Token::Kind::kNumber) return integer(t, false);
    if (t.kind == Token::Kind::kString) {
      try {
        return Cell::string(impala_unescape(t.text));
      } catch (const SqlError& e) {
        fail(t, e.what());
      }
    }
    if (is_word(t, "NULL")) return Cell::null();
    if (is_word(t, "TRUE")) return Cell::boolean_value(true);
    if (is_word(t, "FALSE")) return Cell::boolean_value(false);
    if (is_word(t, "CAST")) {
      expect_punct("(");
      expect_word("UNHEX");
      expect_punct("(");
      const Token& s = next();
      if (s.kind != Token::Kind::kString) fail(s, "unhex() takes a string literal");
      std::string bytes;
      try {
        bytes = impala_unhex(impala_unescape(s.text));
      } catch (const SqlError& e) {
        fail(s, e.what());
      }
      expect_punct(")");
      expect_word("AS");
      expect_word("BINARY");
      expect_punct(")");
      return Cell::binary(std::move(bytes));
    }
    fail(t, "expected a literal");
  }

  Cell integer(const Token& t, bool negative) {
    // Parse as unsigned magnitude so that -9223372036854775808 is accepted (Impala folds the sign).
    std::uint64_t magnitude = 0;
    const auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), magnitude);
    const std::uint64_t limit =
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
    if (ec != std::errc() || magnitude > limit) fail(t, "integer outside BIGINT range");
    if (negative) return Cell::i64(static_cast<std::int64_t>(0 - magnitude));
    return Cell::i64(static_cast<std::int64_t>(magnitude));
  }

  void check(const TableSchema& schema, std::size_t column, const Cell& cell, const Token& at) {
    try {
      store_.check_cell(schema, column, cell);
    } catch (const StoreError& e) {
      fail(at, e.what());
    }
  }

  // `col` of `schema`: its name into `name`, its index returned.
  std::size_t column_ref(const TableSchema& schema, std::string& name) {
    const Token& at = peek();
    name = ident("column name");
    const auto column = schema.find(name);
    if (!column) fail(at, fmt::format("unknown column of `{}`", schema.name));
    return *column;
  }

  // `col` = lit | `col` IN (lit, ...) | `col` NOT IN (lit, ...)
  Condition condition(const TableSchema& schema) {
    Condition cond;
    const std::size_t column = column_ref(schema, cond.column);
    const Token& op = next();
    if (is_punct(op, "=")) {
      cond.op = Condition::Op::kEq;
      const Token& lit_at = peek();
      cond.values.push_back(literal());
      if (cond.values.back().is_null()) fail(lit_at, "NULL in a condition never matches");
      check(schema, column, cond.values.back(), lit_at);
    } else if (is_word(op, "IN") || is_word(op, "NOT")) {
      cond.op = Condition::Op::kIn;
      if (is_word(op, "NOT")) {
        expect_word("IN");
        cond.op = Condition::Op::kNotIn;
      }
      expect_punct("(");
      std::set<Cell> seen;
      for (;;) {
        const Token& lit_at = peek();
        Cell v = literal();
        if (v.is_null()) fail(lit_at, "NULL in an IN-list (never matches; KUDU-1595)");
        check(schema, column, v, lit_at);
        if (!seen.insert(v).second) fail(lit_at, "value listed twice in one IN-list");
        cond.values.push_back(std::move(v));
        if (cond.values.size() > kImpalaMaxInListValues) fail(lit_at, kInListTooLong);
        if (is_punct(peek(), ",")) {
          next();
          continue;
        }
        break;
      }
      expect_punct(")");
    } else {
      fail(op, "expected =, IN or NOT IN");
    }
    return cond;
  }

  // CASE `col` WHEN lit THEN `other` IN (lit, ...) [WHEN ...] END: the exact keys of a keyed
  // delete whose IN-lists name a product. `col` must be a key column already constrained by an
  // IN-list (what Kudu filters with); each WHEN value is listed there, once; each THEN is = or IN
  // on another key column.
  Condition case_condition(const TableSchema& schema) {
    next();  // CASE
    Condition cond;
    cond.op = Condition::Op::kCase;
    const Token& col_at = peek();
    const std::size_t column = column_ref(schema, cond.column);
    if (!schema.is_key(column)) fail(col_at, "CASE on a column outside the primary key");
    std::set<Cell> seen;
    do {
      expect_word("WHEN");
      const Token& lit_at = peek();
      Cell v = literal();
      if (v.is_null()) fail(lit_at, "NULL after WHEN never matches");
      check(schema, column, v, lit_at);
      if (!seen.insert(v).second) fail(lit_at, "value listed twice in one CASE");
      cond.values.push_back(std::move(v));
      expect_word("THEN");
      const Token& then_at = peek();
      Condition then = condition(schema);
      if (then.op == Condition::Op::kNotIn) fail(then_at, "NOT IN after THEN");
      if (then.column == cond.column) fail(then_at, "THEN on the CASE's own column");
      if (!schema.is_key(*schema.find(then.column))) {
        fail(then_at, "THEN on a column outside the primary key");
      }
      cond.then.push_back(std::move(then));
    } while (is_word(peek(), "WHEN"));
    if (cond.values.size() > 4999) {
      fail(col_at, "a CASE of more than 4999 WHENs (Impala: at most 10000 child expressions)");
    }
    expect_word("END");
    return cond;
  }

  // A CASE narrows a product the statement's IN-lists name, so that Kudu still prunes with them:
  // its column and every THEN's column have an IN-list, the CASE names every value of its column's
  // list, and each THEN's values are in their column's list.
  void check_case_is_pruned(const std::vector<Condition>& conditions, const Token& at) {
    const auto in_list = [&](const std::string& column) -> const Condition* {
      for (const Condition& c : conditions) {
        if (c.column == column && c.op == Condition::Op::kIn) return &c;
      }
      return nullptr;
    };
    for (const Condition& c : conditions) {
      if (c.op != Condition::Op::kCase) continue;
      const Condition* outer = in_list(c.column);
      if (!outer) fail(at, fmt::format("CASE on `{}` without an IN-list on it", c.column));
      const std::set<Cell> listed(outer->values.begin(), outer->values.end());
      if (listed != std::set<Cell>(c.values.begin(), c.values.end())) {
        fail(at, fmt::format("the CASE on `{}` and its IN-list name different values", c.column));
      }
      for (const Condition& then : c.then) {
        const Condition* list = in_list(then.column);
        if (!list) fail(at, fmt::format("THEN on `{}` without an IN-list on it", then.column));
        const std::set<Cell> allowed(list->values.begin(), list->values.end());
        for (const Cell& v : then.values) {
          if (!allowed.count(v)) {
            fail(at, fmt::format("a THEN value of `{}` missing from its IN-list", then.column));
          }
        }
      }
    }
  }

  ParsedStatement statement() {
    ParsedStatement st;
    const Token& first = peek();
    st.number = first.statement;
    st.line = first.line;
    st.starts_phase = first.after_window_comment;
    if (is_word(first, "UPSERT")) {
      next();
      st.kind = ParsedStatement::Kind::kUpsert;
      expect_word("INTO");
      const TableSchema& schema = table_ref(st);
      expect_punct("(");
      std::vector<std::size_t> index;
      for (;;) {
        const Token& at = peek();
        std::string column = ident("column name");
        const auto i = schema.find(column);
        if (!i) fail(at, fmt::format("unknown column of `{}`", schema.name));
        if (std::find(index.begin(), index.end(), *i) != index.end()) {
          fail(at, "column listed twice");
        }
        index.push_back(*i);
        st.columns.push_back(std::move(column));
        if (is_punct(peek(), ",")) {
          next();
          continue;
        }
        expect_punct(")");
        break;
      }
      for (std::size_t k = 0; k < schema.key_count; ++k) {
        if (std::find(index.begin(), index.end(), k) == index.end()) {
          fail(first,
               fmt::format("UPSERT must list primary-key column `{}`", schema.columns[k].name));
        }
      }
      expect_word("VALUES");
      for (;;) {
        const Token& open = peek();
        expect_punct("(");
        std::vector<Cell> row;
        for (;;) {
          const Token& at = peek();
          Cell cell = literal();
          if (row.size() >= index.size()) fail(at, "more values than columns");
          check(schema, index[row.size()], cell, at);
          row.push_back(std::move(cell));
          if (is_punct(peek(), ",")) {
            next();
            continue;
          }
          break;
        }
        if (row.size() != index.size()) fail(open, "fewer values than columns");
        expect_punct(")");
        st.rows.push_back(std::move(row));
        if (is_punct(peek(), ",")) {
          next();
          continue;
        }
        break;
      }
    } else if (is_word(first, "DELETE")) {
      next();
      st.kind = ParsedStatement::Kind::kDelete;
      expect_word("FROM");
      const TableSchema& schema = table_ref(st);
      expect_word("WHERE");
      const Token* case_at = nullptr;
      for (;;) {
        const Token& at = peek();
        if (is_punct(at, "(")) fail(at, "parentheses around conditions are not allowed");
        if (is_word(at, "CASE")) {
          if (case_at) fail(at, "a second CASE in one statement");
          case_at = &at;
          st.conditions.push_back(case_condition(schema));
        } else {
          st.conditions.push_back(condition(schema));
        }
        if (is_word(peek(), "AND")) {
          next();
          continue;
        }
        break;
      }
      if (case_at) check_case_is_pruned(st.conditions, *case_at);
    } else {
      fail(first, "expected UPSERT or DELETE");
    }
    const Token& end = next();
    if (!is_punct(end, ";")) fail(end, "expected `;` ending the statement");
    st.bytes = end.offset - first.offset;
    const bool single_row = st.kind == ParsedStatement::Kind::kUpsert && st.rows.size() == 1;
    if (st.bytes > kImpalaMaxStatementBytes) {
      fail(first, statement_too_long(st.bytes));
    }
    if (options_.max_bytes && st.bytes > options_.max_bytes && !single_row) {
      fail(first, fmt::format("statement of {} bytes exceeds --batch-bytes {}", st.bytes,
                              options_.max_bytes));
    }
    if (options_.max_rows && st.rows.size() > options_.max_rows) {
      fail(first, fmt::format("UPSERT of {} rows exceeds --batch-rows {}", st.rows.size(),
                              options_.max_rows));
    }
    return st;
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  const KuduStore& store_;
  const InterpreterOptions& options_;
};

// How many keys of the product of `lists` (one per key column) `table` lacks; 0 for a product of
// more than a million keys (not counted).
std::size_t absent_keys(const Table& table, const std::vector<const std::vector<Cell>*>& lists) {
  std::size_t combos = 1;
  for (auto list : lists) combos *= list->size();
  if (combos > 1'000'000) return 0;
  std::size_t absent = 0;
  Key key(lists.size());
  for (std::size_t k = 0; k < combos; ++k) {
    std::size_t rest = k;
    for (std::size_t c = 0; c < lists.size(); ++c) {
      key[c] = (*lists[c])[rest % lists[c]->size()];
      rest /= lists[c]->size();
    }
    if (!table.find(key)) ++absent;
  }
  return absent;
}

std::string show_key(const Key& key) {
  std::string out;
  for (const auto& c : key) out += (out.empty() ? "" : ", ") + c.to_display();
  return out;
}

}  // namespace

std::vector<ParsedStatement> parse_script(std::string_view sql, const KuduStore& store,
                                          const InterpreterOptions& options) {
  return Parser(lex(sql), store, options).parse();
}

ExecutionStats execute_script(std::string_view sql, KuduStore& store,
                              const InterpreterOptions& options) {
  return execute_statements(parse_script(sql, store, options), store, options);
}

ExecutionStats execute_statements(const std::vector<ParsedStatement>& statements, KuduStore& store,
                                  const InterpreterOptions& options) {
  ExecutionStats stats;
  store.reset_counters();

  // Split into phases: maximal runs of statements of one kind; a phase comment opens a new one.
  std::vector<std::pair<std::size_t, std::size_t>> phases;  // [begin, end)
  for (std::size_t i = 0; i < statements.size();) {
    std::size_t j = i + 1;  // a statement that opens a phase belongs to it
    while (j < statements.size() && statements[j].kind == statements[i].kind &&
           !statements[j].starts_phase) {
      ++j;
    }
    phases.emplace_back(i, j);
    i = j;
  }
  stats.phases = phases.size();

  for (const auto& [begin, end] : phases) {
    if (options.check_phase_conflicts && statements[begin].kind == ParsedStatement::Kind::kUpsert) {
      // Two UPSERTs of one phase naming the same row make the result depend on statement order.
      std::map<std::pair<std::string, Key>, std::size_t> writer;
      for (std::size_t s = begin; s < end; ++s) {
        const auto& st = statements[s];
        const TableSchema& schema = store.table(st.table).schema();
        for (const auto& row : st.rows) {
          Key key(schema.key_count);
          for (std::size_t c = 0; c < st.columns.size(); ++c) {
            const auto i = *schema.find(st.columns[c]);
            if (schema.is_key(i)) key[i] = row[c];
          }
          const auto [it, fresh] = writer.emplace(std::make_pair(st.table, key), st.number);
          if (!fresh && it->second != st.number) {
            throw SqlError(fmt::format(
                "statements {} and {} of one phase both UPSERT `{}` row ({}); statements of a "
                "phase must be order-independent",
                it->second, st.number, st.table, show_key(key)));
          }
        }
      }
    }
    for (std::size_t n = 0; n < end - begin; ++n) {
      const auto& st = statements[options.reverse_phases ? end - 1 - n : begin + n];
      ++stats.statements;
      try {
        if (st.kind == ParsedStatement::Kind::kUpsert) {
          ++stats.upsert_statements;
          store.upsert(st.table, st.columns, st.rows);
          continue;
        }
        ++stats.delete_statements;
        const TableSchema& schema = store.table(st.table).schema();
        // Keyed delete: every condition is = / IN on a key column and every key column is
        // constrained. Keys it names that are absent count as row errors (as Kudu reports them).
        // A CASE narrows the keys the IN-lists name to the ones it accepts.
        std::vector<const Condition*> per_key(schema.key_count, nullptr);
        const Condition* narrowing = nullptr;
        bool keyed = true;
        bool leading = false;
        for (const auto& c : st.conditions) {
          const auto i = *schema.find(c.column);
          if (c.op == Condition::Op::kCase) {
            narrowing = &c;
            continue;
          }
          if (i == 0 && c.op != Condition::Op::kNotIn) leading = true;
          if (!schema.is_key(i) || c.op == Condition::Op::kNotIn || per_key[i]) {
            keyed = false;
          } else {
            per_key[i] = &c;
          }
        }
        if (!leading) ++stats.scanning_deletes;
        std::size_t absent = 0;
        if (keyed && std::all_of(per_key.begin(), per_key.end(), [](auto p) { return p; })) {
          std::vector<const std::vector<Cell>*> lists;
          for (auto p : per_key) lists.push_back(&p->values);
          if (!narrowing) {
            absent = absent_keys(store.table(st.table), lists);
          } else {
            // Per WHEN: its value on the CASE's column, its THEN's values on theirs.
            const std::size_t case_column = *schema.find(narrowing->column);
            for (std::size_t w = 0; w < narrowing->values.size(); ++w) {
              const std::vector<Cell> value{narrowing->values[w]};
              const Condition& then = narrowing->then[w];
              std::vector<const std::vector<Cell>*> narrowed = lists;
              narrowed[case_column] = &value;
              narrowed[*schema.find(then.column)] = &then.values;
              absent += absent_keys(store.table(st.table), narrowed);
            }
          }
        }
        store.delete_where(st.table, st.conditions);
        if (absent) store.count_row_errors(st.table, absent);
      } catch (const StoreError& e) {
        throw SqlError(fmt::format("statement {} (line {}): {}", st.number, st.line, e.what()));
      }
    }
  }
  stats.tables = store.counters();
  return stats;
}

}  // namespace atlas2kudu::testkit
