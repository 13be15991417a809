#include "hs2/executor.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <random>
#include <thread>

namespace atlas2kudu {

Hs2Executor::Hs2Executor(Hs2Settings settings, std::shared_ptr<const Hs2Credentials> credentials)
    : settings_(std::move(settings)),
      authenticator_(make_authenticator(settings_, std::move(credentials))) {
  sleep_ms_ = [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
}

Hs2Executor::~Hs2Executor() {
  for (auto& c : clients_) c->close();
}

void Hs2Executor::start(std::string_view) {
  // Open every session now: a wrong password or an untrusted certificate should stop the run
  // before the first statement, not in the middle of a window.
  for (int i = 0; i < settings_.options().sessions; ++i) {
    auto client = std::make_unique<Hs2Client>(settings_, authenticator_);
    client->connect();
    clients_.push_back(std::move(client));
  }
}

void Hs2Executor::finish() {
  for (auto& c : clients_) c->close();
  clients_.clear();
}

Hs2RunStats Hs2Executor::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Hs2Executor::run_window(const CompiledWindow& window) {
  if (clients_.empty()) throw Hs2Error(Hs2ErrorKind::kInternal, "Hs2Executor: start() not called");
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

  auto worker = [&](Hs2Client& client) {
    for (;;) {
      if (stop) return;
      std::size_t i = next.fetch_add(1);
      if (i >= statements.size()) return;
      try {
        run_statement(client, window, statements[i], phase, i + 1, statements.size());
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

  const std::size_t workers = std::min(clients_.size(), statements.size());
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(worker, std::ref(*clients_[w]));
  worker(*clients_[0]);  // the calling thread is worker 0
  for (auto& t : threads) t.join();
  if (first_error) throw *first_error;
  if (other_error) std::rethrow_exception(other_error);
}

void Hs2Executor::run_statement(Hs2Client& client, const CompiledWindow& window,
                                const Statement& statement, const char* phase, std::size_t position,
                                std::size_t count) {
  auto where = [&] {
    return fmt::format("window {} (events {}-{}), {} phase, statement {} of {} (table {})",
                       window.index, window.first_event, window.last_event, phase, position, count,
                       statement.table);
  };
  thread_local std::mt19937 jitter_rng{std::random_device{}()};
  for (int attempt = 0;; ++attempt) {
    try {
      if (!client.connected()) {
        client.connect();
        if (attempt > 0) {
          std::lock_guard lock(mu_);
          ++stats_.reconnects;
        }
      }
      Hs2DmlResult r = client.execute(statement.sql);
      std::lock_guard lock(mu_);
      ++stats_.statements;
      stats_.rows_modified += r.rows_modified;
      (std::string_view(phase) == "delete" ? stats_.rows_deleted : stats_.rows_upserted) +=
          r.rows_modified;
      stats_.row_errors += r.row_errors;
      stats_.rows_by_table[statement.table] += r.rows_modified;
      if (on_statement_) on_statement_(statement, r);
      return;
    } catch (const Hs2Error& e) {
      if (!e.retryable())
        throw Hs2ExecutionError(e.kind(), fmt::format("{}: {}", where(), e.what()), window.index,
                                phase, position, statement.table, e.what());
      if (attempt >= settings_.options().max_retries)
        throw Hs2ExecutionError(
            e.kind(), fmt::format("{}: giving up after {} retries: {}", where(), attempt, e.what()),
            window.index, phase, position, statement.table, e.what());
      // A lost session must be reopened; a transport failure has already dropped the
      // connection; a transient server error (admission, Kudu timeout) leaves the session usable.
      if (e.kind() == Hs2ErrorKind::kSessionLost) client.drop();
      {
        std::lock_guard lock(mu_);
        ++stats_.retries;
      }
      long base = std::min<long>(30000, static_cast<long>(settings_.options().retry_backoff_ms)
                                            << std::min(attempt, 16));
      long jitter = base > 0 ? std::uniform_int_distribution<long>(0, base / 4)(jitter_rng) : 0;
      sleep_ms_(static_cast<int>(base + jitter));
    }
  }
}

}  // namespace atlas2kudu
