#include "cli/metrics.h"

#include <fmt/core.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/output_guard.h"
#include "util/atomic_file.h"

namespace atlas2kudu {

namespace {

// A label value as the format wants it: backslash, double quote and newline escaped.
std::string label_value(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// One metric family: HELP, TYPE, then its samples, each `{command="...",extra} value`.
class Family {
 public:
  Family(std::string& out, std::string_view name, std::string_view type, std::string_view help,
         std::string_view command)
      : out_(out), name_(name), command_(label_value(command)) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(std::uint64_t value) { line("", std::to_string(value)); }
  void sample(std::int64_t value) { line("", std::to_string(value)); }
  void seconds(double value) { line("", fmt::format("{:.3f}", value)); }
  void per_table(std::string_view table, std::int64_t value) {
    line(fmt::format(",table=\"{}\"", label_value(table)), std::to_string(value));
  }

 private:
  void line(const std::string& labels, const std::string& value) {
    out_ += fmt::format("{}{{command=\"{}\"{}}} {}\n", name_, command_, labels, value);
  }
  std::string& out_;
  std::string_view name_;
  std::string command_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<double> metric_value(std::string_view text, std::string_view metric,
                                   std::string_view command) {
  const std::string prefix = fmt::format("{}{{command=\"{}\"}} ", metric, label_value(command));
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (line.starts_with(prefix)) {
      const std::string value(line.substr(prefix.size()));
      char* rest = nullptr;
      const double x = std::strtod(value.c_str(), &rest);
      if (rest != value.c_str() && *rest == '\0') return x;
    }
    at = end + 1;
  }
  return std::nullopt;
}

std::string metrics_text(const RunReport& r, std::string_view previous) {
  std::string out;
  const auto family = [&](std::string_view name, std::string_view type, std::string_view help) {
    return Family(out, name, type, help, r.command);
  };
  const double ended = static_cast<double>(r.end_micros) / 1e6;
  const std::optional<double> last_success =
      r.exit_status == 0
          ? std::optional<double>(ended)
          : metric_value(previous, "atlas2kudu_last_success_timestamp_seconds", r.command);
  if (last_success) {
    family("atlas2kudu_last_success_timestamp_seconds", "gauge",
           "When the last successful run ended, in seconds since 1970.")
        .seconds(*last_success);
  }
  // A long backfill whose runs each stop at --deadline (exit 4) never succeeds until its last run,
  // yet moves on every time: alert on progress for it, not on success.
  const bool progressed = r.exit_status == 0 || (r.execution && r.execution->windows > 0);
  const std::optional<double> last_progress =
      progressed ? std::optional<double>(ended)
                 : metric_value(previous, "atlas2kudu_last_progress_timestamp_seconds", r.command);
  if (last_progress) {
    family("atlas2kudu_last_progress_timestamp_seconds", "gauge",
           "When the last run ended that succeeded or applied at least one window, in seconds "
           "since 1970.")
        .seconds(*last_progress);
  }
  family("atlas2kudu_last_run_timestamp_seconds", "gauge",
         "When the last run ended, in seconds since 1970, whether it succeeded or not.")
      .seconds(ended);
  family("atlas2kudu_last_exit_status", "gauge",
         "The last run's exit status (0: success; see man atlas2kudu, EXIT STATUS).")
      .sample(static_cast<std::int64_t>(r.exit_status));
  family("atlas2kudu_duration_seconds", "gauge", "How long the last run took.").seconds(r.seconds);
  if (r.read) {
    family("atlas2kudu_records_total", "counter", "Records the last run read.")
        .sample(r.read->records);
    family("atlas2kudu_events_total", "counter", "Events the last run accepted.")
        .sample(r.read->events);
    family("atlas2kudu_rejected_total", "counter", "Records the last run rejected.")
        .sample(r.read->rejected);
  }
  if (r.write) {
    family("atlas2kudu_windows_total", "counter",
           "Windows the last run wrote (compile) or applied in full (apply).")
        .sample(r.write->windows);
    Family statements =
        family("atlas2kudu_statements_total", "counter",
               "Statements of the windows the last run wrote or applied, per table.");
    for (const auto& [table, t] : r.write->tables) {
      statements.per_table(table,
                           static_cast<std::int64_t>(t.delete_statements + t.upsert_statements));
    }
  }
  if (r.execution) {
    Family rows = family("atlas2kudu_rows_total", "counter",
                         "Rows the server reported modified by the last run, per table.");
    for (const auto& [table, n] : r.execution->rows_by_table) rows.per_table(table, n);
    Family errors = family("atlas2kudu_row_errors_total", "counter",
                           "Rows the server skipped and only counted (Kudu row errors) in the "
                           "last run, per table.");
    for (const auto& [table, n] : r.execution->rows_by_table) {
      const auto it = r.execution->row_errors_by_table.find(table);
      errors.per_table(table, it == r.execution->row_errors_by_table.end() ? 0 : it->second);
    }
    family("atlas2kudu_retries_total", "counter",
           "Statements the last run re-ran after a retryable failure.")
        .sample(r.execution->retries);
    family("atlas2kudu_reconnects_total", "counter",
           "Sessions the last run opened again after a failure.")
        .sample(r.execution->reconnects);
  } else if (r.write) {
    Family rows = family("atlas2kudu_rows_total", "counter",
                         "Rows and keys in the statements the last run wrote, per table.");
    for (const auto& [table, t] : r.write->tables) {
      rows.per_table(table, static_cast<std::int64_t>(t.delete_rows + t.upsert_rows));
    }
  }
  if (r.lookups) {
    family("atlas2kudu_lookup_queries_total", "counter",
           "SELECTs the last run's prior-state lookups (--prior impala) ran.")
        .sample(r.lookups->queries);
    family("atlas2kudu_lookup_retries_total", "counter",
           "Prior-state lookup SELECTs the last run re-ran after a retryable failure.")
        .sample(r.lookups->retries);
  }
  if (r.http_waits) {
    family("atlas2kudu_http_waits_total", "counter",
           "HTTP 502, 503 and 504 replies the last run waited out and sent again (hs2-http).")
        .sample(*r.http_waits);
  }
  return out;
}

void write_metrics_textfile(const std::string& path, const RunReport& report) {
  // Also when a run fails before its start checked it (reporting_early_failures).
  refuse_foreign_output("--metrics-textfile", path, OutputKind::kMetrics);
  // Readable by node_exporter whatever the service's umask (examples/cron runs under 077).
  write_file_atomically(path, metrics_text(report, read_text(path)), 0644, Umask::kIgnored);
}

}  // namespace atlas2kudu
