#include "cli/report.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <iterator>
#include <map>
#include <string_view>

#include "cli/progress.h"
#include "util/diagnostic.h"
#include "util/iso8601.h"
#include "util/json_writer.h"
#include "util/utf8.h"
#include "util/version.h"

namespace atlas2kudu {

namespace {

void write_read_stats(JsonWriter& w, const ReadStats& s, std::uint64_t input_bytes) {
  w.key("sources").value(s.sources);
  w.key("records").value(s.records);
  w.key("events").value(s.events);
  w.key("rejected").value(s.rejected);
  w.key("split_chunks").value(s.split_chunks);
  w.key("ignored_lines").value(s.ignored_lines);
  w.key("consumer_errors").value(s.consumer_errors);  // of them, the consumer's error lines
  w.key("legacy_v1").value(s.legacy_v1);
  w.key("skipped").value(s.skipped);            // records an earlier run applied (--checkpoint)
  w.key("replayed").value(s.replayed);          // Kafka offsets this run had read already
  w.key("out_of_order").value(s.out_of_order);  // events after later offsets of their partition
  w.key("inputs_held_back").value(s.inputs_held_back);  // behind one cut short (--checkpoint)
  // recognised from the checkpoint, but with other records than it says were applied
  w.key("resume_mismatches").value(s.resume_mismatches);
  w.key("input_bytes").value(input_bytes);
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

void write_memory_stats(JsonWriter& w, const MemoryReport& m) {
  w.key("memory").begin_object();
  w.key("budget").value(m.budget);
  w.key("windows_closed_early").value(m.windows_closed_early);
  w.key("knowledge_entries").value(m.knowledge.entries);
  w.key("knowledge_bytes").value(m.knowledge.memory_bytes);
  w.key("knowledge_evicted").value(m.knowledge.evicted);
  w.key("knowledge_spilled").value(m.knowledge.spilled);
  w.key("knowledge_spill_reads").value(m.knowledge.spill_reads);
  w.key("knowledge_window_file_reads").value(m.knowledge.window_file_reads);
  w.key("unused_memory_releases").value(m.unused_memory_releases);
  w.key("transparent_huge_pages").value(m.transparent_huge_pages);
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
  w.key("row_errors_by_table").begin_object();
  for (const auto& [table, rows] : hs2.rows_by_table) {
    const auto it = hs2.row_errors_by_table.find(table);
    w.key(table).value(it == hs2.row_errors_by_table.end() ? std::int64_t{0} : it->second);
  }
  w.end_object();
  w.key("rows_refused").value(hs2.rows_refused);
  w.key("split_statements").value(hs2.split_statements);
  w.key("statements_cut_short").value(hs2.statements_cut_short);
  w.key("statements_timed_out").value(hs2.statements_timed_out);
  w.key("rows_already_deleted").value(hs2.rows_already_deleted);
}

void write_lookup_stats(JsonWriter& w, const Hs2PriorStats& s, const UnreadableProps* unreadable) {
  w.key("prior_lookups").begin_object();
  w.key("lookups").value(s.lookups);
  w.key("guids").value(s.guids);
  w.key("found").value(s.found);
  w.key("tag_rows").value(s.tag_rows);
  w.key("queries").value(s.queries);
  w.key("retries").value(s.retries);
  w.key("reconnects").value(s.reconnects);
  w.key("unreadable_props").value(unreadable ? unreadable->cells : 0);
  w.end_object();
}

// "; prior-state lookups: 2 retries" when the lookups were re-run (their retries are not the
// statements', which the summary counts).
std::string lookups_note(const Hs2PriorStats* lookups) {
  if (lookups == nullptr || lookups->retries == 0) return {};
  return fmt::format("; prior-state lookups: {} {}", lookups->retries,
                     lookups->retries == 1 ? "retry" : "retries");
}

// "; 3 rows already deleted when their delete reached Kudu" when deletes found some gone.
std::string already_deleted_note(std::uint64_t rows) {
  if (rows == 0) return {};
  return fmt::format("; {} already deleted when {} delete reached Kudu",
                     counted(rows, "row", "rows"), rows == 1 ? "its" : "their");
}

// "; 2 HTTP 502/503/504 replies waited out" when hs2-http waited any out.
std::string http_waits_note(const std::optional<std::uint64_t>& waits) {
  if (!waits || *waits == 0) return {};
  return fmt::format("; {} HTTP 502/503/504 repl{} waited out", *waits, *waits == 1 ? "y" : "ies");
}

// Per table: rows modified, and row errors and rows already deleted when there are any.
std::map<std::string, std::string> table_lines(const Hs2RunStats& hs2) {
  std::map<std::string, std::string> lines;
  for (const auto& [table, rows] : hs2.rows_by_table) {
    lines[table] = fmt::format("{:>12} row{} modified", rows, rows == 1 ? "" : "s");
  }
  const auto add = [&lines](const std::string& table, const std::string& what) {
    std::string& line = lines[table];
    if (line.empty()) line = fmt::format("{:>12} rows modified", 0);
    line += ", " + what;
  };
  for (const auto& [table, n] : hs2.row_errors_by_table) {
    add(table, fmt::format("{} row error{}", n, n == 1 ? "" : "s"));
  }
  for (const auto& [table, n] : hs2.rows_already_deleted_by_table) {
    add(table, counted(n, "row", "rows") + " already deleted");
  }
  return lines;
}

}  // namespace

std::string stats_json(const RunReport& r) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("schema").value(kStatsSchema);
  w.key("command").value(r.command);
  w.key("version").value(kVersion);
  w.key("start_time").value(format_iso8601_seconds(r.start_micros));
  w.key("end_time").value(format_iso8601_seconds(r.end_micros));
  w.key("completed").value(r.completed);
  w.key("exit_status").value(r.exit_status);
  if (r.stopped_by != StopReason::kNone) w.key("stopped_by").value(to_string(r.stopped_by));
  w.key("error");
  if (r.error.empty()) {
    w.null();
  } else {
    w.value(r.error);
  }
  w.key("elapsed_seconds").fixed(r.seconds, 3);
  if (r.read) write_read_stats(w, *r.read, r.input_bytes);
  if (r.write) write_write_stats(w, *r.write);
  if (r.memory) write_memory_stats(w, *r.memory);
  if (r.execution) write_execution_stats(w, *r.execution);
  if (r.lookups) write_lookup_stats(w, *r.lookups, r.unreadable_props);
  if (r.http_waits) w.key("http_waits").value(*r.http_waits);
  if (r.execution) {
    w.key("checkpoint");
    if (r.checkpoint == nullptr || !r.checkpoint->written()) {
      w.null();
    } else {
      std::string state = checkpoint_json(r.checkpoint->state());
      if (!state.empty() && state.back() == '\n') state.pop_back();
      w.begin_object().key("file").value(r.checkpoint->path()).key("state").raw(state);
      w.end_object();
    }
  }
  w.end_object();
  out += '\n';
  return out;
}

// " (3 closed early by --memory-budget)" and "; entity knowledge spilled to a temporary file N
// times, ..." for the summary lines, empty when the budget changed nothing.
std::string windows_note(const MemoryReport* memory) {
  if (memory == nullptr || memory->windows_closed_early == 0) return {};
  return fmt::format(" ({} closed early by --memory-budget)", memory->windows_closed_early);
}
std::string knowledge_note(const MemoryReport* memory) {
  if (memory == nullptr) return {};
  const KnowledgeStats& k = memory->knowledge;
  if (k.spilled) {
    // Counts of writes and reads, not of entities: one evicted, read back and evicted again is
    // written twice. apply --prior impala spills only within a window (what it looks up past the
    // budget) and forgets the rest of what it evicts.
    std::string note =
        fmt::format("; entity knowledge spilled to a temporary file {} times, read back {} times",
                    k.spilled, k.spill_reads);
    if (memory->looked_up_again && k.evicted > k.spilled) {
      note += fmt::format(", evicted {} times and looked up again", k.evicted - k.spilled);
    }
    return note;
  }
  if (k.evicted && memory->looked_up_again) {
    return fmt::format("; entity knowledge evicted {} times and looked up again", k.evicted);
  }
  return {};
}

void print_read_warnings(std::FILE* out, const RunReport& r, bool quiet) {
  const std::string_view command = r.command;
  const ReadStats& read = *r.read;
  if (read.consumer_errors != 0) {
    print_diagnostic(out,
                     "atlas2kudu {}: warning: the input has {} error line{} of the Kafka "
                     "consumer that wrote it ({} {}): if it lost messages, they are missing "
                     "here; look at the consumer's run\n",
                     command, read.consumer_errors, read.consumer_errors == 1 ? "" : "s",
                     read.consumer_errors == 1 ? "it is" : "the first is",
                     read.first_consumer_error);
  }
  if (read.replayed != 0 && !quiet) {
    print_diagnostic(out,
                     "atlas2kudu {}: {} record{} passed over: this run had already read {} Kafka "
                     "position{} (overlapping exports); {} {}\n",
                     command, read.replayed, read.replayed == 1 ? "" : "s",
                     read.replayed == 1 ? "its" : "their", read.replayed == 1 ? "" : "s",
                     read.replayed == 1 ? "it is" : "the first is", read.first_replayed);
  }
  if (read.resume_mismatches != 0) {
    print_diagnostic(out,
                     "atlas2kudu {}: warning: {} input{} recognised as one an earlier run "
                     "applied, but not what it applied ({}{}): read from {} start, every record "
                     "applied\n",
                     command, read.resume_mismatches,
                     read.resume_mismatches == 1 ? " was" : "s were",
                     read.resume_mismatches == 1 ? "" : "the first: ", read.first_resume_mismatch,
                     read.resume_mismatches == 1 ? "its" : "their");
  }
  if (read.out_of_order != 0) {
    print_diagnostic(out,
                     "atlas2kudu {}: warning: {} event{} came after later Kafka offsets of {} "
                     "partition (an older export read after a newer one? or records fixed from "
                     "the reject file) and {} applied in input order, which can take rows back "
                     "to older states; give exports in offset order\n",
                     command, read.out_of_order, read.out_of_order == 1 ? "" : "s",
                     read.out_of_order == 1 ? "its" : "their",
                     read.out_of_order == 1 ? "was" : "were");
  }
}

void print_unreadable_props(std::FILE* out, const RunReport& r) {
  const std::string_view command = r.command;
  if (r.unreadable_props == nullptr || r.unreadable_props->cells == 0) return;
  const std::uint64_t n = r.unreadable_props->cells;
  const std::string first = r.unreadable_props->first.dashed();
  if (n == 1) {
    print_diagnostic(out,
                     "atlas2kudu {}: warning: 1 stored props_json cell could not be read (entity "
                     "{}): not a JSON object as atlas2kudu writes it; the entity's attributes are "
                     "merged onto {{}} instead, and the cell is replaced where its props_json is "
                     "next written\n",
                     command, first);
    return;
  }
  print_diagnostic(out,
                   "atlas2kudu {}: warning: {} stored props_json cells could not be read (the "
                   "first: entity {}): not JSON objects as atlas2kudu writes them; those "
                   "entities' attributes are merged onto {{}} instead, and each cell is replaced "
                   "where its props_json is next written\n",
                   command, n, first);
}

void print_inputs_held_back(std::FILE* out, const RunReport& r) {
  const ReadStats& read = *r.read;
  if (read.inputs_held_back == 0) return;
  const std::string_view command = r.command;
  print_diagnostic(out,
                   "atlas2kudu {}: warning: {} ends in a record cut short (still being "
                   "written?), so {}{} {} not read: the rest of {}, when it comes, is applied "
                   "before {}. A later run with this checkpoint reads on from that record; "
                   "if the input stays cut short for good, leave it out of the inputs (its "
                   "last record is rejected)\n",
                   command, one_line(read.held_back_behind), one_line(read.first_held_back),
                   read.inputs_held_back == 1
                       ? std::string()
                       : fmt::format(" and the {} after it", read.inputs_held_back - 1),
                   read.inputs_held_back == 1 ? "was" : "were", one_line(read.held_back_behind),
                   read.inputs_held_back == 1 ? "it" : "them");
}

void print_compile_summary(std::FILE* out, const RunReport& r, SqlDestination sql) {
  const SqlWriteStats& run = *r.write;
  const ReadStats& read = *r.read;
  print_diagnostic(
      out, "atlas2kudu compile: {} ({}, {} rejected) in {}{} -> {}, {} of SQL{}{}{}{}\n",
      counted(read.events, "event", "events"), counted(read.records, "record", "records"),
      read.rejected, counted(run.windows, "window", "windows"), windows_note(r.memory),
      counted(run.statements, "statement", "statements"), human_bytes(run.sql_bytes),
      knowledge_note(r.memory), lookups_note(r.lookups), http_waits_note(r.http_waits),
      r.completed
          ? std::string()
          : fmt::format(
                "; stopped{}, {}",
                r.stopped_by != StopReason::kNone ? " by " + std::string(to_string(r.stopped_by))
                                                  : std::string(),
                sql == SqlDestination::kFile     ? "no output written"
                : sql == SqlDestination::kStdout ? "the windows printed are complete"
                : run.windows == 0
                    ? "standard output could not be written: no window reached it whole, and "
                      "what did of the first may end in a statement cut short"
                    : fmt::format("standard output could not be written after {} printed whole: "
                                  "what reached it of the next may end in a statement cut short",
                                  counted(run.windows, "window", "windows"))));
}

// The statements apply ran; those of a window it did not finish (a stopped run) are said apart,
// since "4 windows applied, 82 statements" reads as if all 82 were the 4 windows'.
std::string statements_run(const Hs2RunStats& hs2, const SqlWriteStats* written) {
  std::vector<std::string> notes;
  if (written != nullptr && hs2.statements > written->statements) {
    notes.push_back(
        fmt::format("{} in a window not finished", hs2.statements - written->statements));
  }
  if (hs2.statements_cut_short > 0) {
    // Not among the statements counted: the server had not answered when the stop came.
    notes.push_back(fmt::format(
        "{} more cut short by the stop before the server finished: {}", hs2.statements_cut_short,
        hs2.statements_cut_short == 1 ? "it may have run" : "they may have run"));
  }
  if (hs2.statements_timed_out > 0) {
    notes.push_back(fmt::format(
        "{} more cancelled at --statement_timeout_ms: {}", hs2.statements_timed_out,
        hs2.statements_timed_out == 1 ? "it may have run in part" : "they may have run in part"));
  }
  std::string text = counted(hs2.statements, "statement", "statements");
  if (!notes.empty()) text += fmt::format(" ({})", fmt::join(notes, "; "));
  return text;
}

void print_apply_summary(std::FILE* out, const RunReport& r, const std::string& checkpoint_path) {
  const ReadStats& read = *r.read;
  const Hs2RunStats& hs2 = *r.execution;
  if (read.skipped) {
    print_diagnostic(
        out, "atlas2kudu apply: {} skipped, applied by an earlier run ({}){}\n",
        counted(read.skipped, "record", "records"), one_line(checkpoint_path),
        read.skipped_by_offset == 0
            ? std::string()
            : fmt::format("; {} of them by their Kafka offset, below the next offset it records "
                          "for their partition (exports that overlap; an older export given after "
                          "a newer one is skipped so too, although no run applied it)",
                          read.skipped_by_offset));
  }
  std::string ending;
  if (!r.completed) {
    ending = r.stopped_by != StopReason::kNone
                 ? fmt::format(" (stopped by {})", to_string(r.stopped_by))
                 : std::string(" (stopped by the error above)");
  }
  print_diagnostic(
      out,
      "atlas2kudu apply: {} ({}, {} rejected), {} applied{}, {}, "
      "{} modified, {}, {}{}, {:.1f} s{}{}{}{}{}\n",
      counted(read.events, "event", "events"), counted(read.records, "record", "records"),
      read.rejected, counted(hs2.windows, "window", "windows"), windows_note(r.memory),
      statements_run(hs2, r.write), counted(hs2.rows_modified, "row", "rows"),
      counted(hs2.row_errors, "row error", "row errors"),
      hs2.rows_refused
          ? fmt::format("{} refused by the server, ", counted(hs2.rows_refused, "row", "rows"))
          : std::string(),
      counted(hs2.retries, "retry", "retries"), r.seconds, knowledge_note(r.memory),
      lookups_note(r.lookups), http_waits_note(r.http_waits),
      already_deleted_note(hs2.rows_already_deleted), ending);
  for (const auto& [table, line] : table_lines(hs2)) {
    print_diagnostic(out, "  {:<24}{}\n", table, line);
  }
  print_rerun_point(out, r, checkpoint_path);
}

void print_nothing_recorded(std::FILE* out, const std::string& checkpoint_path, bool exists) {
  if (!exists) {
    print_diagnostic(out,
                     "atlas2kudu apply: no window of this run was recorded, so {} was not "
                     "created; the same command run again starts from the beginning\n",
                     one_line(checkpoint_path));
  } else {
    print_diagnostic(out,
                     "atlas2kudu apply: no window of this run was recorded; {} is as earlier runs "
                     "left it, and the same command run again starts from there\n",
                     one_line(checkpoint_path));
  }
}

void print_rerun_point(std::FILE* out, const RunReport& r, const std::string& checkpoint_path) {
  if (!r.completed && r.checkpoint != nullptr) {
    // What the file holds, not what the executor ran: a window whose refused rows then stopped
    // the run ran, but was not recorded.
    const std::uint64_t recorded = r.checkpoint->windows_recorded();
    if (recorded == 0) {
      print_nothing_recorded(out, checkpoint_path,
                             r.checkpoint->existed() || r.checkpoint->written());
    } else {
      print_diagnostic(out,
                       "atlas2kudu apply: {} records the {} window{} this run applied; the same "
                       "command run again continues with {}\n",
                       one_line(checkpoint_path), recorded, recorded == 1 ? "" : "s",
                       r.checkpoint->resume_point());
    }
    // Parts of the window it stopped in ran, but only whole windows are recorded.
    if (const std::uint64_t parts = r.checkpoint->parts_not_recorded()) {
      print_diagnostic(out,
                       "atlas2kudu apply: {} more window{} this run applied, part{} of the window "
                       "it stopped in, {} not recorded: the rerun applies {} again with the rest "
                       "of that window\n",
                       parts, parts == 1 ? "" : "s", parts == 1 ? "" : "s",
                       parts == 1 ? "is" : "are", parts == 1 ? "it" : "them");
    }
  }
}

std::string read_summary(const ReadStats& s) {
  std::string text;
  const auto out = std::back_inserter(text);
  fmt::format_to(out, "records read      {:>12}\n", s.records);
  fmt::format_to(out, "events accepted   {:>12}\n", s.events);
  fmt::format_to(out, "records rejected  {:>12}\n", s.rejected);
  if (s.split_chunks)
    fmt::format_to(out,
                   "split chunks      {:>12}  (records joined into split-message events, other "
                   "than the one completing each)\n",
                   s.split_chunks);
  if (s.ignored_lines) {
    fmt::format_to(out, "ignored lines     {:>12}  (kafka-console-consumer/kcat diagnostics)\n",
                   s.ignored_lines);
  }
  if (s.consumer_errors) {
    fmt::format_to(out,
                   "consumer errors   {:>12}  (of them; the export may miss messages. {} {})\n",
                   s.consumer_errors, s.consumer_errors == 1 ? "It is" : "The first is",
                   s.first_consumer_error);
  }
  if (s.legacy_v1) fmt::format_to(out, "legacy V1 events  {:>12}\n", s.legacy_v1);
  if (s.replayed) {
    fmt::format_to(out,
                   "replayed records  {:>12}  (Kafka positions already read, not read again; "
                   "{} {})\n",
                   s.replayed, s.replayed == 1 ? "it is" : "the first is", s.first_replayed);
  }
  if (s.out_of_order) {
    fmt::format_to(out,
                   "out-of-order      {:>12}  (events after later offsets of their partition)\n",
                   s.out_of_order);
  }
  fmt::format_to(out, "\n{:<24}{:>12}\n", "operation", "events");
  for (std::size_t i = 0; i < kOperationCount; ++i) {
    fmt::format_to(out, "{:<24}{:>12}\n", to_string(static_cast<Operation>(i)), s.per_operation[i]);
  }
  if (s.rejected) {
    fmt::format_to(out, "\n{:<24}{:>12}\n", "rejection reason", "records");
    for (std::size_t i = 0; i < kRejectCodeCount; ++i) {
      if (s.per_reason[i]) {
        fmt::format_to(out, "{:<24}{:>12}\n", to_string(static_cast<RejectCode>(i)),
                       s.per_reason[i]);
      }
    }
  }
  return text;
}

}  // namespace atlas2kudu
