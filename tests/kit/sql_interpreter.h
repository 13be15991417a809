// Executes the SQL subset of docs/sql-subset.md on a KuduStore.
//
// The interpreter is the half of the oracle that reads what the compiler wrote. It lexes exactly as
// Impala does for the constructs of the subset (its sql-scanner.flex) and unescapes
// string literals exactly as Impala's StringLiteral.getUnescapedValue() + Hive's
// unescapeSQLString do, so a literal means here what it would mean on a real cluster. Anything
// outside the subset is rejected with SqlError naming the statement number and the offending token.
//
// Phases: statements of one kind that follow each other (a run of DELETEs, a run of UPSERTs) form a
// phase, which may run in any order or in parallel. A comment line starting with
// "-- window " (the layout of docs/sql-subset.md: "-- window 2 phase 2: upserts") also ends the
// current phase, so the upserts of window 1 and those of window 2 are never mixed. The interpreter
// can run each phase in reverse order, and rejects an UPSERT phase in which two statements name the
// same row (that would make the result depend on statement order).
#pragma once

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kudu_store.h"

namespace atlas2kudu::testkit {

// A rejected script. what() reads "statement N (line L): <reason> at `token`".
class SqlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Hive's unescapeSQLString applied to the raw text between the quotes of a single-quoted literal,
// after Impala's normalisation (`\"` -> `"`). Works on UTF-16 code units like the Java original:
//   \uXXXX -> that code unit (non-hex digits give Java's garbage, since Character.digit is -1);
//   \[0-1][0-7][0-7] -> one byte 0x00-0x7F;  \0 NUL, \' \" \b \n \r \t, \Z (0x1A), \\;
//   \% and \_ keep their backslash; any other \x -> x.
// The result is UTF-8; an unpaired surrogate becomes '?' (Java's String.getBytes(UTF_8)).
// Throws SqlError when `raw` is not valid UTF-8.
std::string impala_unescape(std::string_view raw);

// The escaping the compiler must use (the safe encoder for Impala's literal rules): `\\ \' \n \r
// \t`, `\ooo` for other controls (NUL as \000), everything else as is. Returns the quoted literal.
// Provided so that tests can round-trip impala_unescape(); the compiler must write its own.
std::string impala_quote(std::string_view utf8);

// unhex() as Impala implements it: upper/lower-case hex; odd length or a non-hex character gives
// an empty string (not NULL).
std::string impala_unhex(std::string_view hex);

// Impala's MAX_STATEMENT_LENGTH_BYTES default, 16 MiB: longer statements are refused.
inline constexpr std::size_t kImpalaMaxStatementBytes = std::size_t{16} << 20;

// Impala's words for a statement longer than kImpalaMaxStatementBytes (no AnalysisException: it
// checks the text before parsing it), which the client takes for a statement to split:
//   statement_too_long(16777217) == "Statement length of 16777217 bytes exceeds the maximum
//   statement length (16777216 bytes)"
std::string statement_too_long(std::size_t bytes);

// Impala's words for a database or table it does not know:
//   unresolved_table_reference("atlas", "nope") == "Could not resolve table reference:
//   'atlas.nope'"
std::string unresolved_table_reference(std::string_view database, std::string_view table);

// Impala refuses an expression of more than 10000 children (Expr.EXPR_CHILDREN_LIMIT), and an IN
// predicate has one for its column and one per value: the interpreter and the test server's
// SELECT refuse a longer IN-list, for this reason.
inline constexpr std::size_t kImpalaMaxInListValues = 9999;
inline constexpr std::string_view kInListTooLong =
    "an IN-list of more than 9999 values (Impala: at most 10000 child expressions)";

struct InterpreterOptions {
  std::string database = "atlas";     // every table must be `database`.`table`
  bool reverse_phases = false;        // run the statements of each phase in reverse order
  bool check_phase_conflicts = true;  // reject two UPSERTs of one phase naming the same row
  // Batch limits, --batch-rows and --batch-bytes (0: unchecked). max_rows bounds the rows of an
  // UPSERT; max_bytes bounds the text of every statement (first keyword to the character before
  // ";") except a single-row UPSERT, which cannot be split further. Every statement must stay
  // within Impala's 16 MiB.
  std::size_t max_rows = 0;
  std::size_t max_bytes = 0;
};

// What a run did, per table (like HS2's rows_modified / num_row_errors) and overall.
struct ExecutionStats {
  std::size_t statements = 0;
  std::size_t upsert_statements = 0;
  std::size_t delete_statements = 0;
  std::size_t phases = 0;
  // DELETEs whose conditions do not constrain the table's leading key column with = or IN: Kudu
  // cannot prune them, they scan the table (allowed only as clean-up predicates).
  std::size_t scanning_deletes = 0;
  std::map<std::string, TableCounters, std::less<>> tables;
};

// One parsed statement (exposed for tests and diagnostics).
struct ParsedStatement {
  enum class Kind { kUpsert, kDelete };
  Kind kind = Kind::kUpsert;
  std::size_t number = 0;     // 1-based position in the script
  std::size_t line = 0;       // line of its first token
  std::size_t bytes = 0;      // text length from the first keyword to the character before ";"
  bool starts_phase = false;  // preceded by a "-- window ..." comment
  std::string table;          // unqualified
  std::vector<std::string> columns;     // UPSERT
  std::vector<std::vector<Cell>> rows;  // UPSERT
  std::vector<Condition> conditions;    // DELETE
};

// Parses a whole script (no execution). Types are checked against the schema of `store` (which
// fixes the key encoding). Throws SqlError.
std::vector<ParsedStatement> parse_script(std::string_view sql, const KuduStore& store,
                                          const InterpreterOptions& options = {});

// Parses and executes `sql` on `store`. Parsing is complete before the first statement runs, so a
// syntax error leaves the store untouched; a StoreError raised by a statement is rethrown as
// SqlError naming the statement (earlier statements stay applied, as on Kudu).
ExecutionStats execute_script(std::string_view sql, KuduStore& store,
                              const InterpreterOptions& options = {});

// The second half of execute_script: runs statements parse_script returned. Parsing reads only
// the store's schemas and key encoding, which never change, so a server may parse its sessions'
// statements concurrently and hold its store's lock only for this part, as Impala plans
// statements of different sessions in parallel.
ExecutionStats execute_statements(const std::vector<ParsedStatement>& statements, KuduStore& store,
                                  const InterpreterOptions& options = {});

}  // namespace atlas2kudu::testkit
