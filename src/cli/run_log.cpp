#include "cli/run_log.h"

#include <fmt/core.h>

#include <algorithm>
#include <system_error>

#include "atlas2kudu/compiler.h"
#include "cli/progress.h"
#include "util/iso8601.h"
#include "util/json_writer.h"

namespace atlas2kudu {

namespace {

std::string now_utc() {
  return format_iso8601_seconds(wall_clock_micros());
}

// "upsert statement 17 of 400 (table entity_flat)", "prior-state lookup 2 (table entity_flat)"
std::string statement_text(const StatementAt& at) {
  if (at.count == 0) {
    return fmt::format("prior-state {} {} (table {})", at.phase, at.position, at.table);
  }
  return fmt::format("{} statement {} of {} (table {})", at.phase, at.position, at.count, at.table);
}

void statement_json(JsonWriter& w, const StatementAt& at) {
  w.key("window").value(at.window);
  w.key("phase").value(at.phase);
  w.key("statement").value(at.position);
  w.key("statements").value(at.count);
  w.key("table").value(at.table);
}

}  // namespace

RunLog::RunLog(std::string_view command, LogFormat format, bool enabled, bool windows,
               std::FILE* out, bool over_progress_line)
    : command_(command),
      format_(format),
      enabled_(enabled),
      windows_(windows),
      out_(out),
      over_progress_line_(over_progress_line) {}

void RunLog::write(std::string_view event, std::string_view text,
                   const std::function<void(JsonWriter&)>& members) {
  std::string line;
  if (format_ == LogFormat::kJson) {
    JsonWriter w(line);
    w.begin_object().key("time").value(now_utc()).key("command").value(command_);
    w.key("event").value(event);
    members(w);
    w.end_object();
    line += '\n';
  } else {
    line = fmt::format("{} atlas2kudu {}: {}\n", now_utc(), command_, text);
    // One line per event, whatever the server's message holds (Impala's start with
    // "Query ... failed:\n"): a log reader splits on newlines.
    std::replace_if(
        line.begin(), line.end() - 1, [](char c) { return c == '\n' || c == '\r'; }, ' ');
  }
  if (over_progress_line_) line.insert(0, "\r\x1b[K");
  std::lock_guard lock(mu_);
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

void RunLog::http_wait(const HttpWait& wait) {
  ++http_waits_;
  if (!enabled_) return;
  write("http-wait", wait.text(), [&](JsonWriter& w) {
    w.key("status").value(wait.status).key("endpoint").value(wait.endpoint);
    w.key("try").value(wait.next_try).key("max_tries").value(wait.max_tries);
    w.key("wait_seconds").value(wait.wait_seconds).key("retry_after").value(wait.retry_after);
  });
}

void RunLog::window(const WindowLogLine& l) {
  if (!enabled_ || !windows_) return;
  const std::string server_counts =
      l.executed ? fmt::format(", {}, {}{}", counted(l.row_errors, "row error", "row errors"),
                               counted(l.retries, "retry", "retries"),
                               l.rows_already_deleted == 0
                                   ? std::string()
                                   : fmt::format(", {} already deleted",
                                                 counted(l.rows_already_deleted, "row", "rows")))
                 : std::string();
  write("window",
        fmt::format(
            "window {}: {}, {}, {}{}, {:.2f} s{}", l.index, counted(l.events, "event", "events"),
            counted(l.statements, "statement", "statements"), counted(l.rows, "row", "rows"),
            server_counts, l.seconds, l.closed_early ? kClosedEarlyComment : std::string_view()),
        [&](JsonWriter& w) {
          w.key("window").value(l.index).key("events").value(l.events);
          w.key("closed_early").value(l.closed_early);
          w.key("statements").value(l.statements).key("rows").value(l.rows);
          if (l.executed) {
            w.key("row_errors").value(l.row_errors).key("retries").value(l.retries);
            w.key("rows_already_deleted").value(l.rows_already_deleted);
          }
          w.key("elapsed_seconds").fixed(l.seconds, 2);
        });
}

void RunLog::already_deleted(const StatementAt& at, std::uint64_t rows, int sessions) {
  if (!enabled_ || !windows_) return;
  write("already-deleted",
        fmt::format("window {}: {}: {} already deleted when the delete reached {} ({}); not "
                    "counted as {}",
                    at.window, statement_text(at), counted(rows, "row", "rows"),
                    rows == 1 ? "it" : "them",
                    sessions > 1 ? "by another statement: one of this run's other sessions, or "
                                   "another writer's"
                                 : "by another writer's statement",
                    rows == 1 ? "a row error" : "row errors"),
        [&](JsonWriter& w) {
          statement_json(w, at);
          w.key("rows").value(rows);
        });
}

void RunLog::retry(const StatementAt& at, const RetryNotice& n) {
  if (!enabled_) return;
  const bool reconnect = n.kind == RetryNotice::Kind::kReconnected;
  const std::string text =
      reconnect ? fmt::format("window {}: reconnected for retry {} of {}: {}", at.window, n.retry,
                              n.max_retries, statement_text(at))
                : fmt::format("window {}: retry {} of {} in {:.1f} s: {}: {}", at.window, n.retry,
                              n.max_retries, n.backoff.count() / 1000.0, statement_text(at),
                              n.error->what());
  write(reconnect ? "reconnect" : "retry", text, [&](JsonWriter& w) {
    statement_json(w, at);
    w.key("retry").value(n.retry).key("max_retries").value(n.max_retries);
    if (!reconnect) {
      w.key("backoff_seconds").fixed(n.backoff.count() / 1000.0, 3);
      w.key("error").value(n.error->what());
    }
  });
}

void RunLog::waiting(const StatementAt& at, std::chrono::seconds waited) {
  if (!enabled_) return;
  write("waiting",
        fmt::format("window {}: still waiting on the server after {} s: {}", at.window,
                    waited.count(), statement_text(at)),
        [&](JsonWriter& w) {
          statement_json(w, at);
          w.key("waited_seconds").value(static_cast<std::int64_t>(waited.count()));
        });
}

ServerWatch::ServerWatch(RunLog& log, std::chrono::seconds interval)
    : log_(log), interval_(interval) {
  try {
    thread_ = std::thread([this] { watch(); });
  } catch (const std::system_error&) {
    // No thread to spare (`ulimit -u`): the run goes on without the "still waiting" lines.
  }
}

ServerWatch::~ServerWatch() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

StatementAt ServerWatch::placed(StatementAt at) const {
  if (at.window == 0) at.window = reading_;
  return at;
}

void ServerWatch::started(const StatementAt& at) {
  std::lock_guard lock(mu_);
  running_[&at] = Running{std::chrono::steady_clock::now()};
}

void ServerWatch::retry(const StatementAt& at, const RetryNotice& notice) {
  log_.retry(placed(at), notice);
  // The waiting lines time the try under way, from its start: not the back-off before it (the
  // retry line says how long that is), which once read "still waiting on the server" while no
  // connection was even open.
  const auto backoff = notice.kind == RetryNotice::Kind::kRetrying
                           ? std::chrono::steady_clock::duration(notice.backoff)
                           : std::chrono::steady_clock::duration::zero();
  std::lock_guard lock(mu_);
  if (const auto it = running_.find(&at); it != running_.end()) {
    it->second = Running{std::chrono::steady_clock::now() + backoff};
  }
}

void ServerWatch::finished(const StatementAt& at) {
  std::lock_guard lock(mu_);
  running_.erase(&at);
}

void ServerWatch::watch() {
  std::unique_lock lock(mu_);
  while (!done_) {
    wake_.wait_for(lock, std::chrono::milliseconds(250));
    const auto now = std::chrono::steady_clock::now();
    for (auto& [at, running] : running_) {
      const auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - running.since);
      if (waited >= interval_ * (running.reported + 1)) {
        ++running.reported;
        // The statement cannot finish meanwhile: finished() waits for the lock.
        log_.waiting(placed(*at), interval_ * running.reported);
      }
    }
  }
}

}  // namespace atlas2kudu
