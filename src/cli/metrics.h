// --metrics-textfile FILE: the run's figures in Prometheus text exposition format (0.0.4), for
// node_exporter's textfile collector, written atomically (a scrape never sees half a file) at the
// end of every run, whether it succeeded or failed. Every sample has a `command` label, the
// per-table ones a `table` label too:
//
//   # HELP atlas2kudu_last_success_timestamp_seconds When the last successful run ended, ...
//   # TYPE atlas2kudu_last_success_timestamp_seconds gauge
//   atlas2kudu_last_success_timestamp_seconds{command="apply"} 1764546067.123
//   ...
//   # TYPE atlas2kudu_rows_total counter
//   atlas2kudu_rows_total{command="apply",table="entity_flat"} 61234
//
// The *_total counters add up over the runs that write FILE: each run adds its own figures to the
// values FILE held for its command (read back, as the last success is), so that Prometheus's
// increase() and rate() see every run, also two runs that count the same. A series this run does
// not write (a run that failed before reading, fewer tables, no lookups) keeps the value FILE
// held: a counter never goes down while FILE stays. A file removed (or edited) starts them again
// from zero, which Prometheus takes as a counter reset; the last run's own figures are those of
// --stats. A failed run keeps the previous
// run's atlas2kudu_last_success_timestamp_seconds (read back from FILE), so that an alert on
// `time() - atlas2kudu_last_success_timestamp_seconds > 2 * 3600` fires however the runs fail; a
// file that never saw a success has no such sample (alert on its absence too). The full list is in
// man atlas2kudu, METRICS.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cli/report.h"

namespace atlas2kudu {

// The text of the metrics file for `report`; `previous`: FILE's text before this run (empty when
// there was none), for the last success time of a failed run.
std::string metrics_text(const RunReport& report, std::string_view previous);

// The value of `metric{command="COMMAND"}` (with `table`: `metric{command=...,table="TABLE"}`)
// in a metrics text, if there is one.
std::optional<double> metric_value(std::string_view text, std::string_view metric,
                                   std::string_view command, std::string_view table = {});

// Replaces `path` atomically with metrics_text(report, <path's current text>).
void write_metrics_textfile(const std::string& path, const RunReport& report);

}  // namespace atlas2kudu
