#include "kit_select.h"

#include <cctype>
#include <set>

#include "sql_interpreter.h"

namespace atlas2kudu::testing {

namespace {

struct Token {
  enum class Kind { kWord, kQuoted, kString, kPunct, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;  // word as written; identifier without backticks; raw literal between quotes
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t skip_space_and_comments(std::string_view sql, std::size_t i) {
  for (;;) {
    while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
    if (sql.substr(i, 2) != "--") return i;
    while (i < sql.size() && sql[i] != '\n') ++i;
  }
}

std::vector<Token> lex(std::string_view sql) {
  std::vector<Token> out;
  for (std::size_t i = skip_space_and_comments(sql, 0); i < sql.size();
       i = skip_space_and_comments(sql, i)) {
    const char c = sql[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[j])) || sql[j] == '_'))
        ++j;
      out.push_back({Token::Kind::kWord, std::string(sql.substr(i, j - i))});
      i = j;
    } else if (c == '`') {
      const std::size_t j = sql.find('`', i + 1);
      if (j == std::string_view::npos) throw SelectError("unterminated quoted identifier");
      out.push_back({Token::Kind::kQuoted, std::string(sql.substr(i + 1, j - i - 1))});
      i = j + 1;
    } else if (c == '\'') {
      // Impala's scanner: a backslash escapes the next character, the first bare quote ends it.
      std::size_t j = i + 1;
      while (j < sql.size() && sql[j] != '\'') j += sql[j] == '\\' ? 2 : 1;
      if (j >= sql.size()) throw SelectError("unterminated string literal");
      out.push_back({Token::Kind::kString, std::string(sql.substr(i + 1, j - i - 1))});
      i = j + 1;
    } else if (c == '(' || c == ')' || c == ',' || c == '.' || c == ';') {
      out.push_back({Token::Kind::kPunct, std::string(1, c)});
      ++i;
    } else {
      throw SelectError("unsupported character '" + std::string(1, c) + "' in SELECT");
    }
  }
  out.push_back({Token::Kind::kEnd, ""});
  return out;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  const Token& peek() const { return t_[i_]; }
  bool at_word(std::string_view w) const {
    return peek().kind == Token::Kind::kWord && lower(peek().text) == w;
  }
  bool at_punct(char p) const { return peek().kind == Token::Kind::kPunct && peek().text[0] == p; }
  [[noreturn]] void fail(std::string_view expected) const {
    const Token& t = peek();
    throw SelectError(
        "unsupported SELECT shape: expected " + std::string(expected) + " at " +
        (t.kind == Token::Kind::kEnd ? std::string("end of statement") : "`" + t.text + "`") +
        " (the test server answers only SELECT cols FROM `db`.`table` WHERE `col` "
        "IN (values))");
  }
  void word(std::string_view w) {
    if (!at_word(w)) fail(lower(w));
    ++i_;
  }
  void punct(char p) {
    if (!at_punct(p)) fail(std::string("'") + p + "'");
    ++i_;
  }
  std::string identifier() {
    if (peek().kind != Token::Kind::kQuoted) fail("a backtick-quoted identifier");
    return t_[i_++].text;
  }
  std::string string_literal() {
    if (peek().kind != Token::Kind::kString) fail("a string literal");
    return t_[i_++].text;
  }

 private:
  std::vector<Token> t_;
  std::size_t i_ = 0;
};

struct Item {
  std::string column;
  bool hex = false;  // lower(hex(column))
};

std::string lower_hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

std::optional<std::string> render(const testkit::Cell& c, bool hex) {
  using Kind = testkit::Cell::Kind;
  switch (c.kind) {
    case Kind::kNull:
      return std::nullopt;
    case Kind::kString:
    case Kind::kBinary:
      return hex ? lower_hex(c.bytes) : c.bytes;
    case Kind::kInt64:
      if (hex) throw SelectError("hex() of a BIGINT column is not supported by the test server");
      return std::to_string(c.int64);
    case Kind::kBool:
      if (hex) throw SelectError("hex() of a BOOLEAN column is not supported by the test server");
      return std::string(c.boolean ? "true" : "false");
  }
  return std::nullopt;
}

}  // namespace

bool is_select_statement(std::string_view sql) {
  const std::size_t i = skip_space_and_comments(sql, 0);
  return sql.size() - i >= 6 && lower(sql.substr(i, 6)) == "select" &&
         (sql.size() - i == 6 || !std::isalnum(static_cast<unsigned char>(sql[i + 6])));
}

KitSelectResult run_kit_select(std::string_view sql, const testkit::KuduStore& store,
                               std::string_view database) {
  Parser p(lex(sql));
  p.word("select");
  std::vector<Item> items;
  do {
    if (!items.empty()) p.punct(',');
    Item item;
    if (p.at_word("lower")) {
      p.word("lower");
      p.punct('(');
      p.word("hex");
      p.punct('(');
      item.column = p.identifier();
      item.hex = true;
      p.punct(')');
      p.punct(')');
    } else {
      item.column = p.identifier();
    }
    items.push_back(std::move(item));
  } while (p.at_punct(','));
  p.word("from");
  const std::string db = p.identifier();
  p.punct('.');
  const std::string table_name = p.identifier();
  p.word("where");
  const std::string where_column = p.identifier();
  p.word("in");
  p.punct('(');
  std::vector<testkit::Cell> values;
  do {
    if (!values.empty()) p.punct(',');
    if (p.at_word("cast")) {
      p.word("cast");
      p.punct('(');
      p.word("unhex");
      p.punct('(');
      values.push_back(testkit::Cell::binary(
          testkit::impala_unhex(testkit::impala_unescape(p.string_literal()))));
      p.punct(')');
      p.word("as");
      p.word("binary");
      p.punct(')');
    } else {
      values.push_back(testkit::Cell::string(testkit::impala_unescape(p.string_literal())));
    }
  } while (p.at_punct(','));
  if (values.size() > testkit::kImpalaMaxInListValues) {
    throw SelectError(std::string(testkit::kInListTooLong));
  }
  p.punct(')');
  if (p.at_punct(';')) p.punct(';');
  if (p.peek().kind != Token::Kind::kEnd) p.fail("end of statement");

  const std::string unresolved = testkit::unresolved_table_reference(db, table_name);
  if (db != database) throw SelectError(unresolved);
  const testkit::Table* table = nullptr;
  try {
    table = &store.table(table_name);
  } catch (const testkit::StoreError&) {
    throw SelectError(unresolved);
  }
  const testkit::TableSchema& schema = table->schema();
  auto column_index = [&](const std::string& name) {
    const auto i = schema.find(name);
    if (!i) throw SelectError("unknown column `" + name + "` in table `" + table_name + "`");
    return *i;
  };
  std::vector<std::size_t> selected;
  KitSelectResult out;
  for (const Item& item : items) {
    selected.push_back(column_index(item.column));
    out.columns.push_back(item.hex ? "lower(hex(" + item.column + "))" : item.column);
  }
  const std::size_t where_index = column_index(where_column);
  for (const testkit::Cell& v : values) {
    try {
      store.check_cell(schema, where_index, v);
    } catch (const testkit::StoreError& e) {
      throw SelectError(e.what());
    }
  }
  const std::set<testkit::Cell> wanted(values.begin(), values.end());
  const auto add = [&](const testkit::Row& row) {
    std::vector<std::optional<std::string>> r;
    for (std::size_t k = 0; k < items.size(); ++k)
      r.push_back(render(row[selected[k]], items[k].hex));
    out.rows.push_back(std::move(r));
  };
  if (schema.key_count == 1 && where_index == 0) {
    // The whole primary key (entity_flat's guid): a point lookup per value, as Kudu does, in key
    // order as a scan would return them. Any other column is scanned, every row checked.
    for (const testkit::Cell& v : wanted) {
      if (const testkit::Row* row = table->find(testkit::Key{v})) add(*row);
    }
    return out;
  }
  for (const auto& [key, row] : table->rows()) {
    if (wanted.contains(row[where_index])) add(row);
  }
  return out;
}

}  // namespace atlas2kudu::testing
