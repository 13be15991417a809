// Executors run the statements of compiled windows. Dry run (`compile`) and execution (`apply`)
// differ only in the executor the SQL writer hands the same windows to (ninja's pattern: no
// `if (dry_run)` below main): the print executor (compile/print_executor.h) writes them as an
// impala-shell script, the HS2 executor (hs2/executor.h) runs them on Impala.
//
// Besides failing outright, running a window can end in two ways the SQL writer explains with
// what only it knows (the window's rows and the events behind them, compile/refusals.h):
//
//   - rows the server refused: a statement failed because of some of its rows (a cell over
//     Kudu's size limit, a value Kudu will not store); the executor ran parts of it until the
//     rows at fault were found (bisection; statements are idempotent, so re-running parts is
//     safe) and applied the statement's other rows. Set aside, they come back in
//     WindowRun::refused and the rest of the window runs; otherwise run_window throws RowsRefused
//     naming them, and no statement of the window starts after the refusal.
//   - row errors: rows the server skipped and only counted (Kudu row errors: a key in no range
//     partition). Past the run's limit, run_window throws TooManyRowErrors.
//
// Example (the SQL writer):
//   try {
//     WindowRun run = executor.run_window(window);
//     for (const RefusedRow& r : run.refused) ... r.statement->row_spans[r.row] ...
//   } catch (const TooManyRowErrors& e) { ... e.statements, e.run_row_errors ... }
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/error.h"

namespace atlas2kudu {

// A row the server refused, isolated by running parts of its statement.
struct RefusedRow {
  const Statement* statement = nullptr;  // the window's statement it was in
  std::string_view phase;                // "delete" or "upsert"
  std::size_t position = 0;              // the statement's 1-based position in its phase
  std::size_t row = 0;                   // index into statement->row_spans
  std::string reason;                    // the server's message for this row alone
};

// Rows [first_row, last_row) of a statement for which the server reported row errors.
struct RowErrorReport {
  const Statement* statement = nullptr;
  std::string_view phase;
  std::size_t position = 0;
  std::size_t first_row = 0, last_row = 0;
  std::int64_t row_errors = 0;
};

// What running a window found besides rows applied.
struct WindowRun {
  std::vector<RefusedRow> refused;  // set aside: the rest of the window was applied
};

// The server refused rows and the executor was not told to set them aside. The rows' statements
// are the window's (valid while the CompiledWindow is).
class RowsRefused : public Error {
 public:
  RowsRefused(const std::string& message, std::vector<RefusedRow> rows)
      : Error(ErrorCategory::kServerRejected, message), rows(std::move(rows)) {}
  std::vector<RefusedRow> rows;
};

// The run's row errors passed the limit in this window (which therefore did not complete).
class TooManyRowErrors : public Error {
 public:
  TooManyRowErrors(const std::string& message, std::vector<RowErrorReport> statements,
                   std::map<std::string, std::int64_t> run_row_errors, std::int64_t limit)
      : Error(ErrorCategory::kServerRejected, message),
        statements(std::move(statements)),
        run_row_errors(std::move(run_row_errors)),
        limit(limit) {}
  std::vector<RowErrorReport> statements;              // of this window
  std::map<std::string, std::int64_t> run_row_errors;  // per table, over the run so far
  std::int64_t limit;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Called once before the first window with the script header (comment lines, each "-- ...\n").
  virtual void start(std::string_view header) = 0;
  // Runs (or prints) one window: every delete, then every upsert. Returns only when the whole
  // window is applied, but for the rows set aside in the result. Throws Error on failure.
  virtual WindowRun run_window(const CompiledWindow& window) = 0;
  // Called once after the last window.
  virtual void finish() = 0;
};

}  // namespace atlas2kudu
