#include "hs2/executor.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

namespace atlas2kudu {

Hs2Executor::Hs2Executor(const Hs2Settings& settings, SessionFactory sessions)
    : make_session_(std::move(sessions)),
      session_count_(settings.options().sessions),
      retry_(settings.options().max_retries,
             std::chrono::milliseconds(settings.options().retry_backoff_ms)) {}

Hs2Executor::~Hs2Executor() {
  for (auto& s : sessions_) s->close();
}

void Hs2Executor::start(std::string_view) {
  // Open every session now: a wrong password or an untrusted certificate should stop the run
  // before the first statement, not in the middle of a window.
  for (int i = 0; i < session_count_; ++i) {
    std::unique_ptr<SqlSession> session = make_session_();
    session->connect();
    sessions_.push_back(std::move(session));
  }
}

void Hs2Executor::finish() {
  for (auto& s : sessions_) s->close();
  sessions_.clear();
}

Hs2RunStats Hs2Executor::stats() const {
  std::lock_guard lock(mu_);
  Hs2RunStats stats = stats_;
  const RetryCounters counters = retry_.counters();
  stats.retries = counters.retries;
  stats.reconnects = counters.reconnects;
  return stats;
}

void Hs2Executor::run_window(const CompiledWindow& window) {
  if (sessions_.empty()) throw Hs2Error(Hs2ErrorKind::kInternal, "Hs2Executor: start() not called");
  // Every delete of the window before any upsert (SPEC §5): a key deleted and re-created within
  // one window must end up present.
  run_phase(window, window.deletes, "delete");
  run_phase(window, window.upserts, "upsert");
  std::lock_guard lock(mu_);
  ++stats_.windows;
}

void Hs2Executor::run_phase(const CompiledWindow& window, const std::vector<Statement>& statements,
                            const char* phase) {
  if (statements.empty()) return;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex error_mu;
  std::optional<Hs2ExecutionError> first_error;
  std::exception_ptr other_error;

  auto worker = [&](SqlSession& session) {
    for (;;) {
      if (stop) return;
      std::size_t i = next.fetch_add(1);
      if (i >= statements.size()) return;
      try {
        run_statement(session, window, statements[i], phase, i + 1, statements.size());
      } catch (const Hs2ExecutionError& e) {
        std::lock_guard lock(error_mu);
        // Keep the earliest statement's error so the report does not depend on thread timing.
        if (!first_error || e.position < first_error->position) first_error = e;
        stop = true;
      } catch (...) {
        std::lock_guard lock(error_mu);
        if (!other_error) other_error = std::current_exception();
        stop = true;
      }
    }
  };

  const std::size_t workers = std::min(sessions_.size(), statements.size());
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(worker, std::ref(*sessions_[w]));
  worker(*sessions_[0]);  // the calling thread is worker 0
  for (auto& t : threads) t.join();
  if (first_error) throw *first_error;
  if (other_error) std::rethrow_exception(other_error);
}

void Hs2Executor::run_statement(SqlSession& session, const CompiledWindow& window,
                                const Statement& statement, const char* phase, std::size_t position,
                                std::size_t count) {
  const Hs2DmlResult r = retry_.run(
      session, [&](SqlSession& s) { return s.execute(statement.sql); },
      [&](const RetryFailure& f) {
        const std::string where = fmt::format(
            "window {} (events {}-{}), {} phase, statement {} of {} (table {})", window.index,
            window.first_event, window.last_event, phase, position, count, statement.table);
        const std::string message = f.exhausted ? fmt::format("{}: giving up after {} retries: {}",
                                                              where, f.retries, f.error.what())
                                                : fmt::format("{}: {}", where, f.error.what());
        throw Hs2ExecutionError(f.error.kind(), message, window.index, phase, position,
                                statement.table, f.error.what());
      });
  std::lock_guard lock(mu_);
  ++stats_.statements;
  stats_.rows_modified += r.rows_modified;
  (std::string_view(phase) == "delete" ? stats_.rows_deleted : stats_.rows_upserted) +=
      r.rows_modified;
  stats_.row_errors += r.row_errors;
  stats_.rows_by_table[statement.table] += r.rows_modified;
  if (on_statement_) on_statement_(statement, r);
}

}  // namespace atlas2kudu
