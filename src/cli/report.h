// What a run reports: the summary on stderr/stdout and the --stats JSON file.
//
// --stats (one JSON object, keys in this order; sections only for the commands that have them;
// man atlas2kudu, STATS FILE, lists every field):
//   {"schema":1,"command":"apply","version":"0.9.0","start_time":"2026-11-30T23:41:05Z",
//    "end_time":"2026-11-30T23:41:07Z","completed":true,"exit_status":0,["stopped_by":"SIGTERM",]
//    "error":null,"elapsed_seconds":1.250,
//    "sources":1,"records":27,"events":23,"rejected":0,"split_chunks":4,"ignored_lines":0,
//    "consumer_errors":0,"legacy_v1":0,"skipped":0,"input_bytes":20480,"operations":{"ENTITY_CREATE":9,...},
//    "rejections":{...},
//    "windows":1,"statements":12,"sql_bytes":5120,                       <- compile and apply
//    "tables":{"entity_flat":{"delete_statements":0,"delete_keys":0,"upsert_statements":2,
//              "upsert_rows":9},...},
//    "memory":{"budget":268435456,"windows_closed_early":0,"knowledge_entries":9,
//              "knowledge_bytes":2304,"knowledge_evicted":0,"knowledge_spilled":0,
//              "knowledge_spill_reads":0,"knowledge_window_file_reads":0,
//              "unused_memory_releases":0,
//              "transparent_huge_pages":true},
//    "applied_windows":1,"applied_statements":12,"rows_modified":40,      <- apply
//    "row_errors":0,"retries":0,"reconnects":0,"rows_modified_by_table":{"entity_flat":9,...},
//    "row_errors_by_table":{"entity_audit":0,...},"rows_refused":0,"split_statements":0,
//    "statements_cut_short":0,"statements_timed_out":0,"rows_already_deleted":0,
//    "prior_lookups":{"lookups":1,"guids":23,"found":0,"tag_rows":0,"queries":2,   <- --prior
//                     "retries":0,"reconnects":0,"unreadable_props":0},               impala
//    "http_waits":0,                                      <- apply, and compile with --prior impala
//    "checkpoint":null | {"file":"run.ckpt","state":<the checkpoint as written, checkpoint.h>}}
//
// The apply summary on stderr (one line, then one per table):
//   atlas2kudu apply: 23 events (27 records, 0 rejected), 1 window applied, 21 statements, 40
//   rows modified, 2 row errors, 0 retries, 1.3 s
//     entity_audit                      13 rows modified, 2 row errors
// Retries of prior-state lookups are not the statements': when there were any, the first line
// ends with "; prior-state lookups: 1 retry". So do hs2-http's waits on a 502/503/504, when there
// were any: "; 2 HTTP 502/503/504 replies waited out". A stopped run ends the first line with
// "(stopped by SIGTERM)" and says where to resume. Rows deletes found already deleted by another
// statement (Hs2RunStats::rows_already_deleted) are no row errors: when there were any, the first
// line ends with "; 1 row already deleted when its delete reached Kudu", and their tables' lines
// with ", 1 row already deleted".
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/reader.h"
#include "cli/checkpoint.h"
#include "compile/sql_writer.h"
#include "hs2/executor.h"
#include "hs2/prior_state.h"
#include "util/stop.h"

namespace atlas2kudu {

// --memory-budget and what the run did to stay within it (compile and apply).
struct MemoryReport {
  std::size_t budget = 0;
  std::uint64_t windows_closed_early = 0;
  KnowledgeStats knowledge;
  // Times the allocator's unused pages went back to the kernel (util/resident_memory.h).
  std::uint64_t unused_memory_releases = 0;
  // Whether the process allowed transparent huge pages (util/resident_memory.h).
  bool transparent_huge_pages = false;
  // Evicted knowledge is looked up again (apply --prior impala), not spilled.
  bool looked_up_again = false;
};

struct RunReport {
  std::string_view command;  // "check", "compile", "apply"
  bool completed = false;
  int exit_status = 0;
  StopReason stopped_by = StopReason::kNone;  // SIGINT, SIGTERM or the --deadline
  double seconds = 0;
  std::int64_t start_micros = 0;  // wall clock, microseconds since 1970
  std::int64_t end_micros = 0;
  std::string error;                           // what ended the run; empty: nothing
  const ReadStats* read = nullptr;             // always
  std::uint64_t input_bytes = 0;               // Reader::bytes_read()
  const SqlWriteStats* write = nullptr;        // compile and apply
  const MemoryReport* memory = nullptr;        // compile and apply
  const Hs2RunStats* execution = nullptr;      // apply
  const CheckpointFile* checkpoint = nullptr;  // apply --checkpoint
  const Hs2PriorStats* lookups = nullptr;      // --prior impala (apply's default, compile -i)
  const UnreadableProps* unreadable_props = nullptr;  // with `lookups`: cells merged from {}
  // Replies of HTTP 502, 503 or 504 that hs2-http waited out and sent again (the load balancer's
  // or gateway's, before any statement ran: not in the retries); set when the run connects.
  std::optional<std::uint64_t> http_waits = std::nullopt;
};

// The version of the --stats document; raised when a field changes meaning or goes away (new
// fields may appear without it).
inline constexpr int kStatsSchema = 1;

std::string stats_json(const RunReport& report);

// `check`'s table of counts per operation and per rejection reason: its output on stdout.
// The warning for props_json cells looked up that could not be read (UnreadableProps), printed
// before the summary and also with -q (what those cells held is replaced): nothing when none.
// A cell is counted at each lookup that reads it: again when apply reads it after evicting the
// entity, if no statement wrote props_json meanwhile (a soft delete writes state alone).
//   atlas2kudu apply: warning: 1 stored props_json cell could not be read (entity
//   00000001-0000-4000-8000-000000000001): not a JSON object as atlas2kudu writes it; the
//   entity's attributes are merged onto {} instead, and the cell is replaced where its
//   props_json is next written
void print_unreadable_props(std::FILE* out, const RunReport& report);

// The warning for inputs apply --checkpoint did not read, behind one that ends in a record cut
// short (Reader::resume_from), also with -q (they wait for a later run): nothing when none.
//   atlas2kudu apply: warning: a.jsonl ends in a record cut short (still being written?), so
//   b.jsonl was not read: the rest of a.jsonl, when it comes, is applied before it. ...
void print_inputs_held_back(std::FILE* out, const RunReport& report);

std::string read_summary(const ReadStats& stats);

// What compile and apply saw in the input that may have lost or misplaced data, before their
// summary, also with -q (a cron job's log keeps them): the consumer's error lines, inputs a
// --checkpoint recognised but whose records were others, events after later Kafka offsets. The
// records passed over as replays of positions this run read are said without -q alone.
//   atlas2kudu apply: warning: 30 events came after later Kafka offsets of their partition (an
//   older export read after a newer one? ...) and were applied in input order, ...
void print_read_warnings(std::FILE* out, const RunReport& report, bool quiet);

// The summaries of compile and apply go to stderr through util/diagnostic.h: a summary that
// cannot be written never changes the run's outcome.
// `compile`'s summary line. Where the SQL went, for a run that did not complete: -o leaves no
// output; standard output ends after the last complete window, unless writing to it failed (a full
// disk), which may have cut the last window short.
enum class SqlDestination { kFile, kStdout, kStdoutFailed };
void print_compile_summary(std::FILE* out, const RunReport& report, SqlDestination sql);

// A stopped run's line for a --checkpoint it recorded no window in: that the file was not created
// (`exists` false) or is as earlier runs left it, and where the same command starts again.
void print_nothing_recorded(std::FILE* out, const std::string& checkpoint_path, bool exists);

// `apply`'s summary: the totals, one line per table, and print_rerun_point.
void print_apply_summary(std::FILE* out, const RunReport& report,
                         const std::string& checkpoint_path);
// For an apply that did not complete: what the checkpoint (`checkpoint_path`, empty: none) holds,
// and where the same command run again starts. Part of the failure's report, so also under -q.
void print_rerun_point(std::FILE* out, const RunReport& report, const std::string& checkpoint_path);

}  // namespace atlas2kudu
