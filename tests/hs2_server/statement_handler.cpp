#include "statement_handler.h"

#include <regex>

namespace atlas2kudu::testing {
namespace {

std::string unquote_ident(std::string s) {
  std::string out;
  for (char c : s)
    if (c != '`') out += c;
  return out;
}

// String literals of `text`, with \\ and \' unescaped (the forms our compiler writes).
std::vector<std::string> literals(const std::string& text, bool first_in_tuple_only) {
  std::vector<std::string> out;
  bool in_str = false, at_tuple_start = false;
  std::string cur;
  int depth = 0;
  bool tuple_first_taken = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_str) {
      if (c == '\\' && i + 1 < text.size()) {
        cur += text[++i];
      } else if (c == '\'') {
        in_str = false;
        if (!first_in_tuple_only || (depth == 1 && !tuple_first_taken && at_tuple_start))
          out.push_back(cur);
        tuple_first_taken = true;
      } else {
        cur += c;
      }
      continue;
    }
    if (c == '\'') {
      in_str = true;
      cur.clear();
    } else if (c == '(') {
      ++depth;
      at_tuple_start = true;
      tuple_first_taken = false;
    } else if (c == ')') {
      --depth;
    } else if (c != ' ' && c != '\n') {
      at_tuple_start = false;
    }
  }
  return out;
}

}  // namespace

StatementOutcome KeySetHandler::execute(const std::string& sql) {
  static const std::regex upsert(
      R"(^\s*UPSERT\s+INTO\s+(\S+)\s+(?:\([^)]*\)\s+)?VALUES\s*([\s\S]*)$)", std::regex::icase);
  static const std::regex del(
      R"(^\s*DELETE\s+FROM\s+(\S+)\s+WHERE\s+[\s\S]*?\bIN\s*\(([\s\S]*)\)\s*$)", std::regex::icase);
  static const std::regex select(R"(^\s*SELECT\s+[\s\S]*?\s+FROM\s+(\S+)[\s\S]*$)",
                                 std::regex::icase);
  std::lock_guard lock(mu_);
  statements_.push_back(sql);
  StatementOutcome out;
  std::smatch m;
  if (sql.find("syntax error") != std::string::npos) {
    out.error = "AnalysisException: Syntax error in line 1: " + sql.substr(0, 40);
    out.at_execute = true;
  } else if (std::regex_match(sql, m, upsert)) {
    auto& t = tables_[unquote_ident(m[1])];
    for (auto& k : literals(m[2], true)) {
      t.insert(k);
      ++out.rows_modified;
    }
  } else if (std::regex_match(sql, m, del)) {
    auto& t = tables_[unquote_ident(m[1])];
    for (auto& k : literals(m[2], false))
      out.rows_modified += static_cast<std::int64_t>(t.erase(k));
  } else if (std::regex_match(sql, m, select)) {
    out.is_query = true;
    out.columns = {"key"};
    for (const auto& k : tables_[unquote_ident(m[1])]) out.rows.push_back({k});
  } else {
    out.error = "AnalysisException: KeySetHandler does not understand: " + sql.substr(0, 60);
    out.at_execute = true;
  }
  return out;
}

std::map<std::string, std::set<std::string>> KeySetHandler::tables() const {
  std::lock_guard lock(mu_);
  return tables_;
}

std::vector<std::string> KeySetHandler::statements() const {
  std::lock_guard lock(mu_);
  return statements_;
}

}  // namespace atlas2kudu::testing
