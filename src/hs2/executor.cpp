#include "hs2/executor.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <system_error>
#include <thread>

#include "hs2/phase_schedule.h"
#include "util/resident_memory.h"
#include "util/stop.h"

namespace atlas2kudu {

// One phase of one window, shared by the worker threads.
struct Hs2Executor::Phase {
  Phase(const CompiledWindow& w, const std::vector<Statement>& s, const char* n,
        std::size_t sessions)
      : window(w), statements(s), name(n), schedule(s, sessions) {}
  const CompiledWindow& window;
  const std::vector<Statement>& statements;
  const char* name;        // "delete" or "upsert"
  PhaseSchedule schedule;  // which statement a free session takes next; stop() ends the phase
  std::mutex mu;           // guards the two vectors below
  std::vector<RefusedRow> refused;
  std::vector<RowErrorReport> row_errors;
};

Hs2Executor::Hs2Executor(const Hs2Settings& settings, SessionFactory sessions)
    : make_session_(std::move(sessions)),
      session_count_(settings.options().sessions),
      max_row_errors_(settings.options().max_row_errors),
      retry_(settings.options().max_retries,
             std::chrono::milliseconds(settings.options().retry_backoff_ms)) {}

Hs2Executor::~Hs2Executor() {
  for (auto& s : sessions_) s->close();
}

void Hs2Executor::start(std::string_view) {
  // Open every session now: a wrong password or an untrusted certificate should stop the run
  // before the first statement, not in the middle of a window.
  for (int i = 0; i < session_count_; ++i) {
    throw_if_stopped();
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

WindowRun Hs2Executor::run_window(const CompiledWindow& window) {
  if (sessions_.empty()) throw Hs2Error(Hs2ErrorKind::kInternal, "Hs2Executor: start() not called");
  // Every delete of the window before any upsert: a key deleted and re-created within
  // one window must end up present.
  WindowRun run;
  std::vector<RowErrorReport> row_errors;
  run_phase(window, window.deletes, "delete", run.refused, row_errors);
  run_phase(window, window.upserts, "upsert", run.refused, row_errors);
  std::unique_lock lock(mu_);
  if (stats_.row_errors > max_row_errors_) {
    const std::int64_t total = stats_.row_errors;
    const auto by_table = stats_.row_errors_by_table;
    lock.unlock();
    throw TooManyRowErrors(
        fmt::format("{}: {} row errors over the run, more than --max-row-errors {}",
                    window_name(window.index, window.first_event, window.last_event, window.span),
                    total, max_row_errors_),
        pin_row_errors(row_errors), by_table, max_row_errors_);
  }
  ++stats_.windows;
  return run;
}

std::vector<RowErrorReport> Hs2Executor::pin_row_errors(
    const std::vector<RowErrorReport>& reports) {
  constexpr int kBudget = 64;  // extra statements at most: this only serves the error message
  int budget = kBudget;
  std::vector<RowErrorReport> out;
  // Rows [first, last) of `r` reported `errors` row errors: narrow them down by halves.
  std::function<void(const RowErrorReport&, std::size_t, std::size_t, std::int64_t)> narrow =
      [&](const RowErrorReport& r, std::size_t first, std::size_t last, std::int64_t errors) {
        if (errors <= 0) return;
        if (errors >= static_cast<std::int64_t>(last - first) || last - first == 1 || budget <= 0) {
          out.push_back(RowErrorReport{r.statement, r.phase, r.position, first, last, errors});
          return;
        }
        const std::size_t middle = first + (last - first) / 2;
        budget -= 2;
        const auto run = [&](std::size_t a, std::size_t b) {
          const Statement part = r.statement->part(a, b);
          return retry_
              .run(
                  // Not execute(): these re-run rows already applied, to name them; one cut
                  // short is no statement that may have run.
                  *sessions_[0], [&](SqlSession& s) { return s.execute(part.sql); },
                  [](const RetryFailure&) {})
              .row_errors;
        };
        const std::int64_t low = run(first, middle);
        narrow(r, first, middle, low);
        narrow(r, middle, last, run(middle, last));
      };
  for (const RowErrorReport& r : reports) {
    try {
      if (r.statement->row_spans.empty()) throw Error(ErrorCategory::kInternal, "not splittable");
      narrow(r, r.first_row, r.last_row, r.row_errors);
    } catch (const StopError&) {
      throw;  // stopping wins over the diagnosis
    } catch (const Error&) {
      out.push_back(r);  // as reported: the message says less, but nothing wrong
    }
  }
  return out;
}

void Hs2Executor::run_phase(const CompiledWindow& window, const std::vector<Statement>& statements,
                            const char* name, std::vector<RefusedRow>& refused,
                            std::vector<RowErrorReport>& row_errors) {
  if (statements.empty()) return;
  Phase phase(window, statements, name, sessions_.size());
  std::mutex error_mu;
  std::optional<Hs2ExecutionError> first_error;
  std::exception_ptr other_error;

  auto worker = [&](SqlSession& session) {
    while (const std::optional<std::size_t> i = phase.schedule.next()) {
      try {
        run_statement(session, phase, *i);
      } catch (const Hs2ExecutionError& e) {
        std::lock_guard lock(error_mu);
        // Keep the earliest statement's error so the report does not depend on thread timing.
        if (!first_error || e.position < first_error->position) first_error = e;
        phase.schedule.stop();
      } catch (...) {
        std::lock_guard lock(error_mu);
        if (!other_error) other_error = std::current_exception();
        phase.schedule.stop();
      }
      phase.schedule.done(*i);
      // Each session's thread frees what it sent and received into its own arena, where the
      // allocator keeps it for that thread alone: the pages go back once the resident set is over
      // its ceiling (util/resident_memory.h), as between windows. Without this check, `apply` of
      // 200 MB of entities with 20 KB props peaked at 304 MB under the default budget.
      keep_resident_memory_under_ceiling(true);
    }
  };

  const std::size_t workers = std::min(sessions_.size(), statements.size());
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) {
    try {
      threads.emplace_back(worker, std::ref(*sessions_[w]));
    } catch (const std::system_error&) {
      break;  // no thread to spare (`ulimit -u`): the running ones take the other statements
    }
  }
  worker(*sessions_[0]);  // the calling thread is worker 0
  for (auto& t : threads) t.join();
  if (other_error) std::rethrow_exception(other_error);  // a stop request first of all
  if (first_error) throw *first_error;
  std::sort(phase.refused.begin(), phase.refused.end(), [](const auto& a, const auto& b) {
    return std::tie(a.position, a.row) < std::tie(b.position, b.row);
  });
  row_errors.insert(row_errors.end(), phase.row_errors.begin(), phase.row_errors.end());
  if (!phase.refused.empty() && !set_aside_) {
    throw RowsRefused(
        fmt::format("window {}: the server refused {} rows", window.index, phase.refused.size()),
        std::move(phase.refused));
  }
  refused.insert(refused.end(), std::make_move_iterator(phase.refused.begin()),
                 std::make_move_iterator(phase.refused.end()));
}

void Hs2Executor::run_statement(SqlSession& session, Phase& phase, std::size_t index) {
  const Statement& statement = phase.statements[index];
  try {
    run_part(session, phase, index, statement, 0, statement.row_spans.size());
  } catch (const Hs2ExecutionError& e) {
    if (e.kind() != Hs2ErrorKind::kDefinite || statement.row_spans.empty() ||
        !refused_because_of_rows(e.server_message)) {
      throw;
    }
    isolate(session, phase, index, 0, statement.row_spans.size(), e.server_message);
    std::lock_guard lock(mu_);
    ++stats_.statements;  // done: every row applied or isolated
  }
}

void Hs2Executor::isolate(SqlSession& session, Phase& phase, std::size_t index, std::size_t first,
                          std::size_t last, const std::string& reason) {
  const Statement& statement = phase.statements[index];
  if (last - first == 1) {
    std::lock_guard lock(phase.mu);
    phase.refused.push_back(RefusedRow{&statement, phase.name, index + 1, first, reason});
    if (!set_aside_) phase.schedule.stop();  // no more statements: the run stops naming the row
    std::lock_guard stats_lock(mu_);
    ++stats_.rows_refused;
    return;
  }
  const std::size_t middle = first + (last - first) / 2;
  for (const auto& [a, b] : {std::pair{first, middle}, std::pair{middle, last}}) {
    const Statement part = statement.part(a, b);
    try {
      run_part(session, phase, index, part, a, b);
    } catch (const Hs2ExecutionError& e) {
      if (e.kind() != Hs2ErrorKind::kDefinite || !refused_because_of_rows(e.server_message)) {
        throw;
      }
      isolate(session, phase, index, a, b, e.server_message);
    }
  }
}

Hs2DmlResult Hs2Executor::execute(SqlSession& session, std::string_view sql) {
  try {
    return session.execute(sql);
  } catch (const StopError& e) {
    if (e.statement_may_have_run()) {
      std::lock_guard lock(mu_);
      ++stats_.statements_cut_short;
    }
    throw;
  } catch (const Hs2Error& e) {
    if (e.kind() == Hs2ErrorKind::kTimeout) {
      std::lock_guard lock(mu_);
      ++stats_.statements_timed_out;
    }
    throw;
  }
}

void Hs2Executor::run_part(SqlSession& session, Phase& phase, std::size_t index,
                           const Statement& statement, std::size_t first, std::size_t last) {
  const Statement& whole = phase.statements[index];
  const bool is_part = &statement != &whole;
  const std::size_t position = index + 1;
  const CompiledWindow& window = phase.window;
  const ObservedStatement observed(
      observer_, {window.index, phase.name, position, phase.statements.size(), statement.table});
  const auto where = [&](bool before = false) {
    std::string name = statement_name(window, phase.name, position, statement, before);
    if (is_part) name += fmt::format(", rows {}-{} of {}", first + 1, last, whole.rows);
    return name;
  };
  Hs2DmlResult r;
  bool sent = false;  // a try reached ExecuteStatement: the server may have run the statement
  try {
    r = retry_.run(
        session,
        [&](SqlSession& s) {
          sent = true;
          return execute(s, statement.sql);
        },
        [&](const RetryFailure& f) {
          const std::string message = f.exhausted ? fmt::format("{}: {}", where(), f.giving_up())
                                                  : fmt::format("{}: {}", where(), f.error.what());
          throw Hs2ExecutionError(f.error.kind(), message, window.index, phase.name, position,
                                  statement.table, f.error.what());
        },
        observed.retries());
  } catch (StopError& e) {
    if (sent && !e.statement_may_have_run()) {
      // Stopped while waiting to try again (back-off, reconnect) after a try that failed once
      // sent: a connection lost after the statement ran leaves its rows written.
      e.set_statement_may_have_run();
      std::lock_guard lock(mu_);
      ++stats_.statements_cut_short;
    }
    // Which statement the stop cut short, or which one it came before (nothing of it was sent).
    e.add_context(where(!e.statement_may_have_run()) + ": ");
    throw;
  }
  const bool deleting = std::string_view(phase.name) == "delete";
  if (r.row_errors > 0 && !deleting) {
    std::lock_guard lock(phase.mu);
    phase.row_errors.push_back(
        RowErrorReport{&whole, phase.name, position, first, last, r.row_errors});
  }
  std::lock_guard lock(mu_);
  if (is_part) {
    ++stats_.split_statements;
  } else {
    ++stats_.statements;
  }
  stats_.rows_modified += r.rows_modified;
  (deleting ? stats_.rows_deleted : stats_.rows_upserted) += r.rows_modified;
  stats_.rows_by_table[statement.table] += r.rows_modified;
  if (deleting) {
    if (r.row_errors > 0) {
      stats_.rows_already_deleted += static_cast<std::uint64_t>(r.row_errors);
      stats_.rows_already_deleted_by_table[statement.table] +=
          static_cast<std::uint64_t>(r.row_errors);
    }
  } else {
    stats_.row_errors += r.row_errors;
    if (r.row_errors > 0) stats_.row_errors_by_table[statement.table] += r.row_errors;
  }
  if (on_statement_) {
    on_statement_(
        StatementDone{window, statement, phase.name, position, phase.statements.size(), r});
  }
}

}  // namespace atlas2kudu
