// Runs compiled windows over HS2: windows in order; per window, the delete phase, then the upsert
// phase, each ending only when all its statements have. The upserts of a phase never name the
// same row twice and deletes commute, so they run in any order and concurrently: one worker
// thread per session (--sessions N) takes the next statement from the phase's PhaseSchedule
// (phase_schedule.h), which keeps the sessions on different tables and hands out the long
// statements first. Between two statements a worker does not wait: it takes the next one at
// once. A statement that fails retryably (transport trouble, lost session, admission, Kudu
// "Timed out"/"Service unavailable"/"Network error") is re-run after reconnecting if needed, up
// to --max_retries times with exponential back-off (RetryPolicy, retry.h) — statements are
// idempotent. Anything else stops the run: the other sessions finish the statement they are
// running and take no more, and run_window throws Hs2ExecutionError naming the window, phase,
// statement position and the server's message.
//
// Rows at fault: when an UPSERT fails definitely because of some of its rows
// (refused_because_of_rows, error.h: a cell over Kudu's size limit, a value Kudu refuses), the
// statement is split in halves (Statement::part), each half run, and a failing half split again,
// until the single rows that fail alone are found; everything else of the statement is applied.
// With set_aside_refused_rows(true) (apply --reject-file) the window goes on and run_window
// returns those rows; otherwise the phase stops and run_window throws RowsRefused.
//
// Row errors (rows the server skipped and counted, Hs2DmlResult::row_errors) are counted per
// table, those of upserts only: a delete's are rows already gone when it reached them
// (Hs2RunStats::rows_already_deleted), which is what it wants. Once the run's total passes
// --max-row-errors (default 0), run_window throws TooManyRowErrors at the end of the window, which
// therefore is not checkpointed. Before that it narrows each statement's row errors down to the
// rows concerned by re-running halves (at most 64 extra statements), so the message can name the
// exact event_ts of entity_audit rows.
//
// A stop request (util/stop.h) cancels the statements running on the server and throws
// StopError.
//
// Sessions come from a SessionFactory (session.h): HS2 sessions in production, an in-memory fake
// in tests.
//
// Example (what `apply` does):
//   const Hs2Settings settings = validate_hs2_options(options);
//   SessionFactory sessions = hs2_session_factory(settings, resolve_hs2_credentials(settings));
//   Hs2Executor executor(settings, sessions);
//   executor.start(header);                      // opens the sessions; throws Hs2Error on failure
//   for (const CompiledWindow& w : windows) executor.run_window(w);
//   executor.finish();                           // closes the sessions
//   executor.stats().rows_by_table.at("entity_flat");   // rows modified, summed
// On failure:
//   catch (const Hs2ExecutionError& e) { ... e.category() ... }  // the CLI maps it to an exit code
//   // e.what(): "window 3 (events 101-150; a.jsonl:101 .. a.jsonl:150), upsert phase, statement 2
//   //            of 5 (table entity_flat): ExecuteStatement: Query 5c4...:0 failed:
//   AnalysisException: ..."
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "atlas2kudu/executor.h"
#include "hs2/clock.h"
#include "hs2/error.h"
#include "hs2/observer.h"
#include "hs2/options.h"
#include "hs2/retry.h"
#include "hs2/session.h"
#include "util/stop.h"

namespace atlas2kudu {

struct Hs2RunStats {
  std::uint64_t windows = 0;
  std::uint64_t statements = 0;    // applied (each counted once, however many tries it took)
  std::uint64_t retries = 0;       // re-runs after retryable failures
  std::uint64_t reconnects = 0;    // sessions reopened after a failure
  std::int64_t rows_modified = 0;  // = rows_deleted + rows_upserted
  std::int64_t rows_deleted = 0;   // reported by delete-phase statements
  std::int64_t rows_upserted = 0;  // reported by upsert-phase statements
  std::int64_t row_errors = 0;  // Kudu row errors of upserts: rows the server skipped and counted
  std::map<std::string, std::int64_t> rows_by_table;
  std::map<std::string, std::int64_t> row_errors_by_table;
  // A delete's "row errors": rows its scan found and Kudu no longer had when the delete reached
  // them (NotFound, which Impala ignores and counts in num_row_errors), because another statement
  // deleted them first (another session's delete naming the same row, or another writer). The
  // row is gone, as the delete wants: not a row error, and not against --max-row-errors.
  std::uint64_t rows_already_deleted = 0;
  std::map<std::string, std::uint64_t> rows_already_deleted_by_table;
  std::uint64_t rows_refused = 0;      // rows isolated as refused (set aside or stopping the run)
  std::uint64_t split_statements = 0;  // parts of statements run to isolate refused rows
  // Statements (or parts) a stop ended before the server finished them (cut short before it
  // answered ExecuteStatement, or cancelled while running): not in `statements`, yet the server
  // may have run them, in whole or in part.
  std::uint64_t statements_cut_short = 0;
  // Statements (or parts) cancelled at --statement_timeout_ms while they ran: the run fails, and
  // the rows they wrote before the cancel stay, as a stop's.
  std::uint64_t statements_timed_out = 0;
};

// One statement the executor finished, for StatementCallback.
struct StatementDone {
  const CompiledWindow& window;
  const Statement& statement;  // a part of a window's statement while isolating refused rows
  std::string_view phase;
  std::size_t position;  // 1-based within the phase
  std::size_t count;     // statements in the phase
  const Hs2DmlResult& result;
};

class Hs2ExecutionError : public Hs2Error {
 public:
  Hs2ExecutionError(Hs2ErrorKind kind, const std::string& message, std::uint64_t window,
                    std::string phase, std::size_t position, std::string table,
                    std::string server_message)
      : Hs2Error(kind, message),
        window(window),
        phase(std::move(phase)),
        position(position),
        table(std::move(table)),
        server_message(std::move(server_message)) {}

  std::uint64_t window;  // CompiledWindow::index
  std::string phase;     // "delete" or "upsert"
  std::size_t position;  // 1-based within the phase
  std::string table;
  std::string server_message;  // the underlying Hs2Error text
};

class Hs2Executor : public Executor {
 public:
  // Of the settings, --sessions, --max_retries and --retry_backoff_ms are used; the sessions
  // (HS2 ones from hs2_session_factory) are made by start().
  Hs2Executor(const Hs2Settings& settings, SessionFactory sessions);
  ~Hs2Executor() override;

  void start(std::string_view header) override;
  WindowRun run_window(const CompiledWindow& window) override;
  void finish() override;

  Hs2RunStats stats() const;

  // Rows the server refuses are returned by run_window (true) or stop the run (false, default).
  void set_aside_refused_rows(bool set_aside) { set_aside_ = set_aside; }

  // Called after each applied statement (from worker threads, serialised by the executor),
  // e.g. for progress on a terminal or a log line about row errors.
  using StatementCallback = std::function<void(const StatementDone&)>;
  void on_statement(StatementCallback callback) { on_statement_ = std::move(callback); }

  // Retries, reconnects and statements started and finished; null: none. Not owned.
  void observe(ExecutionObserver* observer) { observer_ = observer; }

  // Test hook: replaces the back-off sleep. Called from the worker threads.
  void set_sleeper(Sleeper sleeper) { retry_.set_sleeper(std::move(sleeper)); }

 private:
  struct Phase;  // one phase of one window, shared by the worker threads

  void run_phase(const CompiledWindow& window, const std::vector<Statement>& statements,
                 const char* phase, std::vector<RefusedRow>& refused,
                 std::vector<RowErrorReport>& row_errors);
  void run_statement(SqlSession& session, Phase& phase, std::size_t index);
  // Every statement (and part of one) of a window goes through here, which counts those a stop
  // cut short; pin_row_errors' re-runs, of rows already applied, do not.
  Hs2DmlResult execute(SqlSession& session, std::string_view sql);
  // Runs `statement` (the phase's statement `index`, or rows [first, last) of it) with retries.
  void run_part(SqlSession& session, Phase& phase, std::size_t index, const Statement& statement,
                std::size_t first, std::size_t last);
  // Narrows the rows of each report down to those with row errors, by running halves (UPSERTs
  // are idempotent) within a small budget of statements, for the message of TooManyRowErrors.
  std::vector<RowErrorReport> pin_row_errors(const std::vector<RowErrorReport>& reports);
  // Rows [first, last) of statement `index` failed together with `reason`: finds the rows that
  // fail alone, running the others.
  void isolate(SqlSession& session, Phase& phase, std::size_t index, std::size_t first,
               std::size_t last, const std::string& reason);

  SessionFactory make_session_;
  int session_count_;
  std::int64_t max_row_errors_;
  bool set_aside_ = false;
  RetryPolicy retry_;
  std::vector<std::unique_ptr<SqlSession>> sessions_;
  mutable std::mutex mu_;
  Hs2RunStats stats_;  // retries and reconnects are the RetryPolicy's
  StatementCallback on_statement_;
  ExecutionObserver* observer_ = nullptr;
};

}  // namespace atlas2kudu
