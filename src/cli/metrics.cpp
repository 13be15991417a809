#include "cli/metrics.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "cli/output_guard.h"
#include "util/atomic_file.h"
#include "util/unique_fd.h"

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

// The series `metric{command="COMMAND"[,table="TABLE"]}` as it appears in the text.
std::string series(std::string_view metric, std::string_view command, std::string_view table) {
  return fmt::format("{}{{command=\"{}\"{}}}", metric, label_value(command),
                     table.empty() ? "" : fmt::format(",table=\"{}\"", label_value(table)));
}

// One sample line of a metrics text: "name{labels} value" and an optional timestamp.
struct MetricSample {
  std::string_view name;    // atlas2kudu_rows_total
  std::string_view series;  // atlas2kudu_rows_total{command="apply",table="edge_in"}
  double value = 0;
};

std::optional<MetricSample> parse_sample(std::string_view line) {
  // name{label="value",...} VALUE [TIMESTAMP]: a label value may hold '}' and escaped quotes.
  const std::size_t brace = line.find_first_of("{ ");
  if (brace == 0 || brace == std::string_view::npos) return std::nullopt;
  std::size_t end = brace;
  if (line[brace] == '{') {
    bool quoted = false;
    for (++end; end < line.size(); ++end) {
      if (quoted && line[end] == '\\') {
        ++end;
      } else if (line[end] == '"') {
        quoted = !quoted;
      } else if (!quoted && line[end] == '}') {
        break;
      }
    }
    if (end >= line.size()) return std::nullopt;
    ++end;
  }
  std::string_view rest = line.substr(end);
  const auto skip_spaces = [&] {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  };
  if (rest.empty() || (rest.front() != ' ' && rest.front() != '\t')) return std::nullopt;
  skip_spaces();
  const std::string value(rest.substr(0, rest.find_first_of(" \t")));
  rest.remove_prefix(value.size());
  char* parsed_to = nullptr;
  const double x = std::strtod(value.c_str(), &parsed_to);
  if (value.empty() || *parsed_to != '\0') return std::nullopt;
  skip_spaces();
  // A timestamp, which the file may hold if edited by hand (atlas2kudu writes none), then blanks.
  const std::size_t timestamp = std::min(rest.find_first_not_of("-0123456789"), rest.size());
  rest.remove_prefix(timestamp);
  skip_spaces();
  if (!rest.empty() && rest != "\r") return std::nullopt;
  return MetricSample{line.substr(0, brace), line.substr(0, end), x};
}

// The value of the series written exactly as `series` (name and labels), if there is one.
std::optional<double> series_value(std::string_view text, std::string_view series) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(series)) continue;
    const std::optional<MetricSample> sample = parse_sample(line);
    if (sample && sample->series == series) return sample->value;
  }
  return std::nullopt;
}

// A counter's value as the file holds it: a whole number a double holds exactly, else 0 (a file
// edited by hand starts the counter again, which Prometheus takes as a reset).
std::uint64_t count_value(std::optional<double> value) {
  if (!value || !(*value >= 0 && *value <= 9007199254740992.0) || *value != std::floor(*value))
    return 0;
  return static_cast<std::uint64_t>(*value);
}

// A metric family as the file shows it: HELP, TYPE, then its samples ("series value").
struct FamilyText {
  std::string name, type, help;
  std::vector<std::pair<std::string, std::string>> samples;
};

// Adds the samples of one family, each `{command="...",extra} value`. A counter's sample adds this
// run's figure to the value the file held for the same series (`previous`).
class Family {
 public:
  Family(FamilyText& text, std::string_view command, std::string_view previous)
      : text_(text), command_(command), counter_(text.type == "counter"), previous_(previous) {}
  void sample(std::uint64_t value) { count("", value); }
  void sample(std::int64_t value) { line("", std::to_string(value)); }
  void seconds(double value) { line("", fmt::format("{:.3f}", value)); }
  void per_table(std::string_view table, std::uint64_t value) { count(table, value); }

 private:
  void count(std::string_view table, std::uint64_t value) {
    if (counter_)
      value += count_value(series_value(previous_, series(text_.name, command_, table)));
    line(table, std::to_string(value));
  }
  void line(std::string_view table, std::string value) {
    text_.samples.emplace_back(series(text_.name, command_, table), std::move(value));
  }
  FamilyText& text_;
  std::string_view command_;
  bool counter_;
  std::string_view previous_;
};

// The counter series of `command` the file held that this run did not write (a run that failed
// before reading, one that touched fewer tables, one without lookups): kept with their values, so
// that a counter never goes down while the file stays.
void carry_over_counters(std::deque<FamilyText>& families, std::string_view previous,
                         std::string_view command) {
  std::set<std::string, std::less<>> written;
  for (const FamilyText& f : families) {
    for (const auto& [series, value] : f.samples) written.insert(series);
  }
  std::map<std::string, std::pair<std::string, std::string>, std::less<>> declared;  // type, help
  const std::string label = fmt::format("{{command=\"{}\"", label_value(command));
  for (std::size_t at = 0; at < previous.size();) {
    const std::size_t end = std::min(previous.find('\n', at), previous.size());
    const std::string_view line = previous.substr(at, end - at);
    at = end + 1;
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
      const std::string_view rest = line.substr(7);
      const std::size_t space = rest.find(' ');
      if (space == std::string_view::npos) continue;
      auto& [type, help] = declared[std::string(rest.substr(0, space))];
      (line[2] == 'T' ? type : help) = std::string(rest.substr(space + 1));
      continue;
    }
    const std::optional<MetricSample> sample = parse_sample(line);
    if (!sample) continue;
    const std::string_view name = sample->name;
    const std::string_view series = sample->series;
    const std::size_t brace = name.size();
    const auto it = declared.find(name);
    if (it == declared.end() || it->second.first != "counter" || written.contains(series) ||
        !series.substr(brace).starts_with(label) || series.size() <= brace + label.size() ||
        (series[brace + label.size()] != '}' && series[brace + label.size()] != ',')) {
      continue;
    }
    const std::uint64_t value = count_value(sample->value);
    auto family = std::find_if(families.begin(), families.end(),
                               [&](const FamilyText& f) { return f.name == name; });
    if (family == families.end()) {
      families.push_back(FamilyText{std::string(name), "counter", it->second.second, {}});
      family = families.end() - 1;
    }
    family->samples.emplace_back(std::string(series), std::to_string(value));
    written.insert(std::string(series));
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<double> metric_value(std::string_view text, std::string_view metric,
                                   std::string_view command, std::string_view table) {
  return series_value(text, series(metric, command, table));
}

std::string metrics_text(const RunReport& r, std::string_view previous) {
  std::deque<FamilyText> families;  // never moves an element: Family holds one
  const auto family = [&](std::string_view name, std::string_view type, std::string_view help) {
    families.push_back(FamilyText{std::string(name), std::string(type), std::string(help), {}});
    return Family(families.back(), r.command, previous);
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
    family("atlas2kudu_records_total", "counter", "Records read.").sample(r.read->records);
    family("atlas2kudu_events_total", "counter", "Events accepted.").sample(r.read->events);
    family("atlas2kudu_rejected_total", "counter", "Records rejected.").sample(r.read->rejected);
  }
  if (r.write) {
    family("atlas2kudu_windows_total", "counter",
           "Windows written (compile) or applied in full (apply).")
        .sample(r.write->windows);
    Family statements = family("atlas2kudu_statements_total", "counter",
                               "Statements of the windows written or applied, per table.");
    for (const auto& [table, t] : r.write->tables) {
      statements.per_table(table, t.delete_statements + t.upsert_statements);
    }
  }
  // One HELP text for every command: a collector (node_exporter) that reads compile's and apply's
  // files side by side drops the samples of a family whose HELP differs from the first it read.
  constexpr std::string_view kRowsHelp =
      "Rows per table: apply, those the server reported modified; compile, the rows and keys its "
      "statements name.";
  if (r.execution) {
    Family rows = family("atlas2kudu_rows_total", "counter", kRowsHelp);
    for (const auto& [table, n] : r.execution->rows_by_table) rows.per_table(table, n);
    Family errors =
        family("atlas2kudu_row_errors_total", "counter",
               "Rows the server skipped and only counted (Kudu row errors), per table.");
    for (const auto& [table, n] : r.execution->rows_by_table) {
      const auto it = r.execution->row_errors_by_table.find(table);
      errors.per_table(table, it == r.execution->row_errors_by_table.end() ? 0 : it->second);
    }
    family("atlas2kudu_rows_already_deleted_total", "counter",
           "Rows a delete found already deleted by another statement (not row errors).")
        .sample(r.execution->rows_already_deleted);
    family("atlas2kudu_rows_refused_total", "counter",
           "Rows the server refused (set aside in --reject-file, or stopping the run).")
        .sample(r.execution->rows_refused);
    family("atlas2kudu_retries_total", "counter", "Statements re-run after a retryable failure.")
        .sample(r.execution->retries);
    family("atlas2kudu_reconnects_total", "counter", "Sessions opened again after a failure.")
        .sample(r.execution->reconnects);
  } else if (r.write) {
    Family rows = family("atlas2kudu_rows_total", "counter", kRowsHelp);
    for (const auto& [table, t] : r.write->tables) {
      rows.per_table(table, t.delete_rows + t.upsert_rows);
    }
  }
  if (r.lookups) {
    family("atlas2kudu_lookup_queries_total", "counter",
           "SELECTs the prior-state lookups (--prior impala) ran.")
        .sample(r.lookups->queries);
    family("atlas2kudu_lookup_retries_total", "counter",
           "Prior-state lookup SELECTs re-run after a retryable failure.")
        .sample(r.lookups->retries);
    family("atlas2kudu_unreadable_props_total", "counter",
           "Stored props_json cells looked up that were not JSON objects (merged onto {}).")
        .sample(r.unreadable_props ? r.unreadable_props->cells : 0);
  }
  if (r.http_waits) {
    family("atlas2kudu_http_waits_total", "counter",
           "HTTP 502, 503 and 504 replies waited out and sent again (hs2-http).")
        .sample(*r.http_waits);
  }
  carry_over_counters(families, previous, r.command);
  std::string out;
  for (const FamilyText& f : families) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, f.help, f.name, f.type);
    for (const auto& [series, value] : f.samples) out += fmt::format("{} {}\n", series, value);
  }
  return out;
}

void write_metrics_textfile(const std::string& path, const RunReport& report) {
  // Also when a run fails before its start checked it (reporting_early_failures).
  refuse_foreign_output("--metrics-textfile", path, OutputKind::kMetrics);
  // Runs that end together (cron jobs started on the same minute) each read FILE, add their
  // figures and replace it: without a lock, one's replacement loses the other's figures, and a
  // counter that goes down reads as a reset. FILE itself is replaced, so the lock is on its
  // directory, held only for the read and the write. Where the directory cannot be opened or
  // locked (search permission only, a file system without flock), the file is written as before.
  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  const UniqueFd lock(
      ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (lock) {
    while (::flock(lock.get(), LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  // Readable by node_exporter whatever the service's umask (examples/cron runs under 077).
  write_file_atomically(path, metrics_text(report, read_text(path)), 0644, Umask::kIgnored);
}

}  // namespace atlas2kudu
