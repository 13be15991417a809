#include "cli/report.h"

#include <fmt/core.h>

#include "util/json_writer.h"

namespace atlas2kudu {

namespace {

void write_read_stats(JsonWriter& w, const ReadStats& s) {
  w.key("sources").value(s.sources);
  w.key("records").value(s.records);
  w.key("events").value(s.events);
  w.key("rejected").value(s.rejected);
  w.key("split_chunks").value(s.split_chunks);
  w.key("skipped").value(s.skipped);
  w.key("ignored_lines").value(s.ignored_lines);
  w.key("legacy_v1").value(s.legacy_v1);
  w.key("operations").begin_object();
  for (std::size_t i = 0; i < kOperationCount; ++i) {
    w.key(to_string(static_cast<Operation>(i))).value(s.per_operation[i]);
  }
  w.end_object();
  w.key("rejections").begin_object();
  for (std::size_t i = 0; i < kRejectCodeCount; ++i) {
    w.key(to_string(static_cast<RejectCode>(i))).value(s.per_reason[i]);
  }
  w.end_object();
}

void write_write_stats(JsonWriter& w, const SqlWriteStats& run) {
  w.key("windows").value(run.windows);
  w.key("statements").value(run.statements);
  w.key("sql_bytes").value(run.sql_bytes);
  w.key("tables").begin_object();
  for (const auto& [name, t] : run.tables) {
    w.key(name).begin_object();
    w.key("delete_statements").value(t.delete_statements);
    w.key("delete_keys").value(t.delete_rows);
    w.key("upsert_statements").value(t.upsert_statements);
    w.key("upsert_rows").value(t.upsert_rows);
    w.end_object();
  }
  w.end_object();
}

void write_execution_stats(JsonWriter& w, const Hs2RunStats& hs2) {
  w.key("applied_windows").value(hs2.windows);
  w.key("applied_statements").value(hs2.statements);
  w.key("rows_modified").value(hs2.rows_modified);
  w.key("row_errors").value(hs2.row_errors);
  w.key("retries").value(hs2.retries);
  w.key("reconnects").value(hs2.reconnects);
  w.key("rows_modified_by_table").begin_object();
  for (const auto& [table, rows] : hs2.rows_by_table) w.key(table).value(rows);
  w.end_object();
}

}  // namespace

std::string stats_json(const RunReport& r) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("command").value(r.command);
  w.key("completed").value(r.completed);
  w.key("elapsed_seconds").fixed(r.seconds, 3);
  if (r.read) write_read_stats(w, *r.read);
  if (r.write) write_write_stats(w, *r.write);
  if (r.execution) write_execution_stats(w, *r.execution);
  w.end_object();
  out += '\n';
  return out;
}

void print_read_summary(std::FILE* out, const ReadStats& s) {
  fmt::print(out, "records read      {:>12}\n", s.records);
  fmt::print(out, "events accepted   {:>12}\n", s.events);
  fmt::print(out, "records rejected  {:>12}\n", s.rejected);
  if (s.split_chunks)
    fmt::print(out, "split chunks      {:>12}  (records joined into split-message events)\n",
               s.split_chunks);
  if (s.ignored_lines) {
    fmt::print(out, "ignored lines     {:>12}  (kafka-console-consumer/kcat diagnostics)\n",
               s.ignored_lines);
  }
  if (s.legacy_v1) fmt::print(out, "legacy V1 events  {:>12}\n", s.legacy_v1);
  fmt::print(out, "\n{:<24}{:>12}\n", "operation", "events");
  for (std::size_t i = 0; i < kOperationCount; ++i) {
    fmt::print(out, "{:<24}{:>12}\n", to_string(static_cast<Operation>(i)), s.per_operation[i]);
  }
  if (s.rejected) {
    fmt::print(out, "\n{:<24}{:>12}\n", "rejection reason", "records");
    for (std::size_t i = 0; i < kRejectCodeCount; ++i) {
      if (s.per_reason[i]) {
        fmt::print(out, "{:<24}{:>12}\n", to_string(static_cast<RejectCode>(i)), s.per_reason[i]);
      }
    }
  }
}

}  // namespace atlas2kudu
