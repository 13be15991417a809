// Runs compiled windows over HS2 (SPEC §6): per window, the delete phase, then the upsert phase;
// the statements of one phase spread over --sessions N sessions (they never name the same row
// twice, so order within a phase does not matter). A statement that fails retryably (transport
// trouble, lost session, admission, Kudu "Timed out"/"Service unavailable"/"Network error") is
// re-run after reconnecting if needed, up to --max_retries times with exponential back-off
// (RetryPolicy, retry.h) — statements are idempotent. Anything else stops the run: the other
// sessions finish the statement they are running and take no more, and run_window throws
// Hs2ExecutionError naming the window, phase, statement position and the server's message.
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
//   // e.what(): "window 3 (events 101-150), upsert phase, statement 2 of 5 (table entity_flat):
//   //            ExecuteStatement: Query 5c4...:0 failed: AnalysisException: ..."
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
#include "hs2/options.h"
#include "hs2/retry.h"
#include "hs2/session.h"

namespace atlas2kudu {

struct Hs2RunStats {
  std::uint64_t windows = 0;
  std::uint64_t statements = 0;    // applied (each counted once, however many tries it took)
  std::uint64_t retries = 0;       // re-runs after retryable failures
  std::uint64_t reconnects = 0;    // sessions reopened after a failure
  std::int64_t rows_modified = 0;  // = rows_deleted + rows_upserted
  std::int64_t rows_deleted = 0;   // reported by delete-phase statements
  std::int64_t rows_upserted = 0;  // reported by upsert-phase statements
  std::int64_t row_errors = 0;     // Kudu row errors (conflicts), reported, not failures
  std::map<std::string, std::int64_t> rows_by_table;
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
  void run_window(const CompiledWindow& window) override;
  void finish() override;

  Hs2RunStats stats() const;

  // Called after each applied statement (from worker threads, serialised by the executor),
  // e.g. for progress on a terminal.
  using StatementCallback = std::function<void(const Statement&, const Hs2DmlResult&)>;
  void on_statement(StatementCallback callback) { on_statement_ = std::move(callback); }

  // Test hook: replaces the back-off sleep. Called from the worker threads.
  void set_sleeper(Sleeper sleeper) { retry_.set_sleeper(std::move(sleeper)); }

 private:
  void run_phase(const CompiledWindow& window, const std::vector<Statement>& statements,
                 const char* phase);
  void run_statement(SqlSession& session, const CompiledWindow& window, const Statement& statement,
                     const char* phase, std::size_t position, std::size_t count);

  SessionFactory make_session_;
  int session_count_;
  RetryPolicy retry_;
  std::vector<std::unique_ptr<SqlSession>> sessions_;
  mutable std::mutex mu_;
  Hs2RunStats stats_;  // retries and reconnects are the RetryPolicy's
  StatementCallback on_statement_;
};

}  // namespace atlas2kudu
