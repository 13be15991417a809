// What the HS2 test server does with a statement: the server speaks the protocol, a
// StatementHandler decides the outcome. Tests plug in KeySetHandler (below) or, later, the
// testkit's Kudu-semantics SQL interpreter.
//
// Example:
//   class Always2 : public StatementHandler {
//     StatementOutcome execute(const std::string&) override { return {.rows_modified = 2}; }
//   };
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace atlas2kudu::testing {

struct StatementOutcome {
  std::int64_t rows_modified = 0;
  std::int64_t row_errors = 0;
  // Set when the statement fails: `at_execute` fails the ExecuteStatement RPC itself (how Impala
  // reports parse/analysis errors), otherwise the operation ends in ERROR_STATE.
  std::optional<std::string> error;
  bool at_execute = false;
  // SELECT results; `is_query` makes the operation have a result set and no DML result.
  bool is_query = false;
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

class StatementHandler {
 public:
  virtual ~StatementHandler() = default;
  // Called concurrently from several connections.
  virtual StatementOutcome execute(const std::string& sql) = 0;
};

// A tiny model of Kudu tables keyed by one STRING column, enough to check that statements reach
// the server exactly as intended and that concurrent runs converge on the same state:
//   UPSERT INTO <t> VALUES ('k1', ...), ('k2', ...)   → keys added; rows_modified = tuples
//   DELETE FROM <t> WHERE ... IN ('k1', 'k2')         → keys removed; rows_modified = present keys,
//                                                        absent keys counted as row_errors = 0
//   SELECT * FROM <t>                                 → one STRING column "key", sorted
//   anything containing "syntax error"                → fails at ExecuteStatement
//   (AnalysisException)
// Every statement is also recorded in order of arrival.
class KeySetHandler : public StatementHandler {
 public:
  StatementOutcome execute(const std::string& sql) override;
  std::map<std::string, std::set<std::string>> tables() const;
  std::vector<std::string> statements() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::set<std::string>> tables_;
  std::vector<std::string> statements_;
};

}  // namespace atlas2kudu::testing
