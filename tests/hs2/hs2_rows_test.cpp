// Rows the server refuses or skips, through the SQL writer, the HS2 executor and the test server
// with the kit's Kudu store: bisection isolates the rows at fault and applies the rest, refused
// rows go to the reject file with their events' positions (or stop the run naming them), and row
// errors past --max-row-errors fail the window with the cause and the statement to run.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/reader.h"
#include "compile/ddl.h"
#include "compile/plan.h"
#include "compile/refusals.h"
#include "compile/sql_writer.h"
#include "hs2/error.h"
#include "hs2/executor.h"
#include "hs2_test_server.h"
#include "hs2_test_util.h"
#include "input/byte_source.h"
#include "kit_handler.h"
#include "test_support.h"

TEST_SUITE_BEGIN("hs2_rows");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

struct Apply {
  std::vector<Event> events;
  Hs2RunStats stats;
  std::string error;  // the run's failure, empty when it completed
  ErrorCategory category = ErrorCategory::kInternal;
};

// Reads `text` as "s.jsonl", compiles it as one window (--prior none) and applies it with the
// HS2 executor; refused rows go to `rejects` (set aside) when given.
Apply apply_text(int port, const std::string& text, RejectSink* rejects,
                 std::int64_t max_row_errors = 0) {
  Apply out;
  {
    RejectSink input_rejects(RejectPolicy{}, nullptr);
    std::vector<std::unique_ptr<ByteSource>> sources;
    sources.push_back(memory_byte_source("s.jsonl", text));
    Reader reader(std::move(sources), input_rejects);
    for (Event e; reader.next(e);) out.events.push_back(std::move(e));
  }
  Hs2Options o = test_options(port);
  o.max_row_errors = max_row_errors;
  CompileOptions compile;
  compile.batch_rows = 100;
  Compiler compiler(compile);
  Hs2Executor executor(validate_hs2_options(o), hs2_sessions(o));
  executor.set_aside_refused_rows(rejects != nullptr);
  SqlWindowWriter writer(compile, executor, rejects);
  try {
    writer.start("");
    NetWindow net = compiler.fold(out.events);
    writer.write(net);
    writer.finish();
  } catch (const Error& e) {
    out.error = e.what();
    out.category = e.category();
  }
  out.stats = executor.stats();
  return out;
}

std::size_t rows_of(const KitHandler& kit, const std::string& table) {
  std::size_t n = 0;
  kit.with_store([&](const testkit::KuduStore& s) { n = s.table(table).size(); });
  return n;
}

}  // namespace

TEST_CASE("hs2 rows: a cell over Kudu's limit: bisection isolates its row, the rest is applied") {
  auto kit = std::make_shared<KitHandler>();
  kit->set_refusals({.max_cell_bytes = 1000});
  Hs2TestServer server({}, kit);
  const int port = server.start();
  std::string text;
  for (int n = 1; n <= 8; ++n) {
    // Every row has props_json, so all eight are one statement (one column set).
    const std::string value = n == 5 ? std::string(1500, 'x') : "short";
    text += create_table_line(n, R"(,"description":")" + value + "\"", 1700000000000 + n);
  }
  const auto dir = scratch_dir("rows-cell");
  const std::string reject_path = (dir / "rejects.jsonl").string();
  RejectSink rejects(RejectPolicy{.max_rejects = 5, .reject_file = reject_path}, nullptr);
  const Apply run = apply_text(port, text, &rejects);
  CHECK(run.error.empty());
  CHECK(rows_of(*kit, "entity_flat") == 7);
  CHECK(rows_of(*kit, "entity_audit") == 8);  // the audit row of the same event is fine
  CHECK(run.stats.rows_refused == 1);
  CHECK(run.stats.split_statements > 0);
  CHECK(run.stats.split_statements <= 6);  // 2 x log2(8) parts at most for one bad row
  CHECK(run.stats.windows == 1);
  CHECK(rejects.count() == 1);
  const std::string line = slurp(reject_path);
  CHECK(contains(line, R"("source":"s.jsonl","line":5,)"));
  CHECK(contains(line, R"("code":"server-refused")"));
  CHECK(contains(line, R"("table":"entity_flat")"));
  CHECK(contains(line, "value too large for column 'props_json'"));
  CHECK(contains(line, R"("op":"ENTITY_CREATE","guid":"00000001-0000-4000-8000-000000000005")"));
  CHECK(contains(line, "upsert phase, statement"));
}

TEST_CASE("hs2 rows: two refused values among sixteen rows are both found") {
  auto kit = std::make_shared<KitHandler>();
  kit->set_refusals({.refused_value = "NOT-STORABLE"});
  Hs2TestServer server({}, kit);
  const int port = server.start();
  std::string text;
  for (int n = 1; n <= 16; ++n) {
    const std::string bad = n == 3 || n == 12 ? R"(,"owner":"NOT-STORABLE")" : "";
    text += create_table_line(n, bad, 1700000000000 + n);
  }
  const auto dir = scratch_dir("rows-value");
  RejectSink rejects(
      RejectPolicy{.max_rejects = 2, .reject_file = (dir / "rejects.jsonl").string()}, nullptr);
  const Apply run = apply_text(port, text, &rejects);
  CHECK(run.error.empty());
  CHECK(run.stats.rows_refused == 2);
  CHECK(rows_of(*kit, "entity_flat") == 14);
  const std::string lines = slurp((dir / "rejects.jsonl").string());
  CHECK(contains(lines, R"("line":3,)"));
  CHECK(contains(lines, R"("line":12,)"));
  CHECK(contains(lines, "invalid value for column 'props_json'"));
}

TEST_CASE("hs2 rows: more refused rows than --max-rejects fail the window") {
  auto kit = std::make_shared<KitHandler>();
  kit->set_refusals({.refused_value = "NOT-STORABLE"});
  Hs2TestServer server({}, kit);
  std::string text;
  for (int n = 1; n <= 4; ++n)
    text += create_table_line(n, R"(,"owner":"NOT-STORABLE")", 1700000000000);
  const auto dir = scratch_dir("rows-max");
  RejectSink rejects(
      RejectPolicy{.max_rejects = 1, .reject_file = (dir / "rejects.jsonl").string()}, nullptr);
  const Apply run = apply_text(server.start(), text, &rejects);
  CHECK(run.category == ErrorCategory::kBadInput);
  CHECK(contains(run.error,
                 "more than 1 rejected (--max-rejects counts malformed records and rows the "
                 "server refused): the server refused 4 rows of window 1 (0 rejected before it), "
                 "all written to " +
                     (dir / "rejects.jsonl").string() +
                     "; the window's other rows were applied, but the window is not recorded as "
                     "done, and the server refuses the same rows when it runs again: give "
                     "--max-rejects 4 or more to set them aside and go on"));
  CHECK(run.stats.windows == 1);  // the executor finished it; the writer failed it
  // Every row counted is in the file, not only those up to the limit.
  const std::string lines = slurp((dir / "rejects.jsonl").string());
  CHECK(std::count(lines.begin(), lines.end(), '\n') == 4);
}

TEST_CASE("hs2 rows: without --reject-file a refused row stops the run naming it and its input") {
  auto kit = std::make_shared<KitHandler>();
  kit->set_refusals({.max_cell_bytes = 1000});
  Hs2TestServer server({}, kit);
  std::string text;
  for (int n = 1; n <= 4; ++n) {
    text += create_table_line(n, n == 2 ? R"(,"d":")" + std::string(1200, 'y') + "\"" : "",
                              1700000000000);
  }
  const Apply run = apply_text(server.start(), text, nullptr);
  CHECK(run.category == ErrorCategory::kServerRejected);
  // The window is named with its events' lines too: event numbers restart in a resumed run.
  CHECK(contains(run.error,
                 "window 1 (events 1-4; s.jsonl:1 .. s.jsonl:4): the server refused 1 "
                 "row:"));
  CHECK(contains(run.error, "written by s.jsonl:2:"));
  CHECK(contains(run.error, "ENTITY_CREATE 00000001-0000-4000-8000-000000000002 hive_table"));
  CHECK(contains(run.error, "value too large for column 'props_json'"));
  // What ran, as the tables show. Row 2 alone has a "d" attribute, so it is the only row of its
  // entity_flat statement (another column set). entity_flat's statements come last in the phase:
  // upsert statements 1-2 (entity_by_qn, entity_audit) and 3 (the other three entity_flat rows)
  // ran before it, and statement 4 applied nothing.
  CHECK(contains(
      run.error,
      "\nThe run stopped in window 1, which did not finish (a --checkpoint does not record it): "
      "its one delete statement ran; "
      "upsert statement 4 applied nothing (its only row was refused); with --sessions 1 (the "
      "default), upsert statements 1-3 ran before it (with more sessions, another upsert "
      "statement ran only if a session had started it before the refused row was found); no "
      "later window ran. To set such rows aside (with their events and the server's reason) and "
      "apply the rest of the window, run again with --reject-file FILE, and --max-rejects N for "
      "how many may be set aside; the window then runs again from its start (its statements are "
      "idempotent)."));
  CHECK_FALSE(contains(run.error, "other rows of the window were applied"));
  CHECK(run.stats.windows == 0);
  CHECK(run.stats.statements == 5);           // the delete and upsert statements 1-4
  CHECK(rows_of(*kit, "entity_flat") == 3);   // upsert statement 3
  CHECK(rows_of(*kit, "entity_by_qn") == 4);  // upsert statement 1
  CHECK(rows_of(*kit, "entity_audit") == 4);  // upsert statement 2
}

TEST_CASE(
    "hs2 rows: the refused-rows message says what ran: refused rows in several statements "
    "(several sessions), a statement with all its rows refused, the last statement") {
  std::vector<Event> events;
  {
    std::string text;
    for (int n = 1; n <= 3; ++n) text += create_table_line(n, "", 1700000000000 + n);
    RejectSink input_rejects(RejectPolicy{}, nullptr);
    std::vector<std::unique_ptr<ByteSource>> sources;
    sources.push_back(memory_byte_source("s.jsonl", text));
    Reader reader(std::move(sources), input_rejects);
    for (Event e; reader.next(e);) events.push_back(std::move(e));
  }
  CompileOptions compile;
  Compiler compiler(compile);
  NetWindow net = compiler.fold(events);
  const CompiledWindow window = plan_window(net, compile);
  REQUIRE(window.deletes.size() == 1);
  REQUIRE(window.upserts.size() == 3);
  REQUIRE(window.upserts[0].row_spans.size() == 3);
  const auto refused = [&](std::size_t position, std::size_t row) {
    return RefusedRow{&window.upserts[position - 1], "upsert", position, row, "too large"};
  };
  const std::string tail =
      "; no later window ran. To set such rows aside (with their events and the server's reason) "
      "and apply the rest of the window, run again with --reject-file FILE, and --max-rejects N "
      "for how many may be set aside; the window then runs again from its start (its statements "
      "are idempotent).";

  // Rows refused in two statements: only several sessions get there, so no order is claimed.
  CHECK(contains(refused_rows_message(net, window, {refused(1, 0), refused(1, 2), refused(3, 1)}),
                 "\nThe run stopped in window 1, which did not finish (a --checkpoint does not "
                 "record it): its one delete "
                 "statement ran; upsert statements 1 and 3 applied all their rows but the refused "
                 "ones; another upsert statement ran only if a session had started it before the "
                 "first refused row was found" +
                     tail));
  // Every row of the statement refused: nothing of it was applied.
  CHECK(contains(
      refused_rows_message(net, window, {refused(1, 0), refused(1, 1), refused(1, 2)}),
      "its one delete statement ran; upsert statement 1 applied nothing (all its rows were "
      "refused); with --sessions 1 (the default), upsert statements 2-3 did not run"));
  // The last statement of the phase: with one session, everything before it ran.
  CHECK(contains(refused_rows_message(net, window, {refused(3, 0)}),
                 "upsert statement 3 applied its other 2 rows; with --sessions 1 (the default), "
                 "upsert statements 1-2 ran before it (with more sessions, another upsert "
                 "statement ran only if a session had started it before the refused row was "
                 "found)" +
                     tail));
  // In the middle: those before it ran, those after it did not.
  CHECK(contains(refused_rows_message(net, window, {refused(2, 1)}),
                 "with --sessions 1 (the default), upsert statement 1 ran before it and upsert "
                 "statement 3 did not run"));
}

TEST_CASE(
    "hs2 rows: audit rows past the last range partition are row errors that fail the "
    "window, with the partition to add") {
  auto kit = std::make_shared<KitHandler>();
  kit->set_refusals({.audit_last_year = 2030});
  Hs2TestServer server({}, kit);
  const int port = server.start();
  // 2031-03-01 and 2032-07-02 (ms): past 2030's partition; 2029 is fine.
  std::string text = create_table_line(1, "", 1930089600000) +
                     create_table_line(2, "", 1972339200000) +
                     create_table_line(3, "", 1861920000000);
  const Apply run = apply_text(port, text, nullptr);
  CHECK(run.category == ErrorCategory::kServerRejected);
  CHECK(run.stats.row_errors == 2);
  CHECK(run.stats.row_errors_by_table.at("entity_audit") == 2);
  CHECK(run.stats.windows == 0);  // not complete: the caller does not checkpoint it
  CHECK(contains(run.error,
                 "2 row errors over the run (entity_audit 2), more than "
                 "--max-row-errors 0"));
  CHECK(contains(run.error, "event_ts lies in no range partition of entity_audit"));
  CHECK(contains(run.error, "from 2031-03-01T00:00:00Z to 2032-07-02T00:00:00Z"));
  CHECK_FALSE(contains(run.error, "-- 2029"));  // the row of 2029 was written: nothing to add
  CHECK(contains(run.error, audit_add_range_partition_sql("atlas", 2031) + ";  -- 2031"));
  CHECK(contains(run.error, audit_add_range_partition_sql("atlas", 2032) + ";  -- 2032"));
  CHECK(contains(audit_add_range_partition_sql("atlas", 2031),
                 "ALTER TABLE `atlas`.`entity_audit` ADD IF NOT EXISTS RANGE PARTITION "
                 "1924992000000000 <= VALUES < 1956528000000000"));

  // Allowed: the same rows with --max-row-errors 2 complete, the errors still counted.
  auto kit2 = std::make_shared<KitHandler>();
  kit2->set_refusals({.audit_last_year = 2030});
  Hs2TestServer server2({}, kit2);
  const Apply allowed = apply_text(server2.start(), text, nullptr, 2);
  CHECK(allowed.error.empty());
  CHECK(allowed.stats.windows == 1);
  CHECK(allowed.stats.row_errors_by_table.at("entity_audit") == 2);
  CHECK(rows_of(*kit2, "entity_audit") == 1);
}

TEST_CASE("hs2 rows: deletes of absent keys are not row errors (Impala's DELETE scans)") {
  auto kit = std::make_shared<KitHandler>();
  Hs2TestServer server({}, kit);
  const int port = server.start();
  // Creating then hard-deleting entities the store never had: keyed deletes of absent rows.
  std::string text = create_table_line(1, "", 1700000000000);
  const Apply first = apply_text(port, text, nullptr);
  REQUIRE(first.error.empty());
  Hs2Options o = test_options(port);
  Hs2Executor executor(validate_hs2_options(o), hs2_sessions(o));
  executor.start("");
  CompiledWindow w;
  w.index = 1;
  w.deletes = {{"entity_flat",
                "DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN ('" + std::string(32, 'a') +
                    "', '" + std::string(32, 'b') + "')",
                2,
                {}}};
  executor.run_window(w);
  CHECK(executor.stats().row_errors == 0);
  CHECK(executor.stats().windows == 1);
}

TEST_CASE("hs2 rows: the kit refuses a statement over 16 MiB as Impala does, a row refusal") {
  // Impala checks the length before parsing, with its own words (no AnalysisException), which
  // the client takes for a statement to split (a single row set aside).
  auto kit = std::make_shared<KitHandler>();
  const std::string big =
      "UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) "
      "VALUES ('" +
      std::string(32, 'a') + "', '" + std::string(32, 'a') + "', '" + std::string(16 << 20, 't') +
      "')";
  const StatementOutcome out = kit->execute(big);
  REQUIRE(out.error);
  CHECK(*out.error == fmt::format("Statement length of {} bytes exceeds the maximum statement "
                                  "length (16777216 bytes)",
                                  big.size()));
  CHECK(refused_because_of_rows(*out.error));
  CHECK(rows_of(*kit, "entity_by_qn") == 0);
}

TEST_CASE(
    "hs2 rows: a delete whose rows another statement deleted first (Kudu's NotFound, counted "
    "by Impala as row errors) has them already deleted, not row errors") {
  auto kit = std::make_shared<KitHandler>();
  const std::string a(32, 'a'), b(32, 'b');
  REQUIRE_FALSE(kit->execute("UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, "
                             "`type_name`) VALUES ('" +
                             a + "', '" + a + "', 't'), ('" + b + "', '" + b + "', 't')")
                    .error);
  REQUIRE(rows_of(*kit, "entity_by_qn") == 2);
  Hs2TestServerConfig config;
  config.faults.deleted_meanwhile_at = {1};  // the rows are gone before its delete reaches them
  Hs2TestServer server(config, kit);
  const int port = server.start();
  Hs2Options o = test_options(port);
  Hs2Executor executor(validate_hs2_options(o), hs2_sessions(o));
  executor.start("");
  REQUIRE(server.stats().statements == 0);
  CompiledWindow w;
  w.index = 1;
  w.deletes = {
      {"entity_by_qn",
       "DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('" + a + "', '" + b + "')",
       2,
       {}}};
  executor.run_window(w);  // no TooManyRowErrors, although --max-row-errors is 0
  const Hs2RunStats stats = executor.stats();
  CHECK(stats.windows == 1);
  CHECK(stats.row_errors == 0);
  CHECK(stats.row_errors_by_table.empty());
  CHECK(stats.rows_already_deleted == 2);
  CHECK(stats.rows_deleted == 0);
  CHECK(rows_of(*kit, "entity_by_qn") == 0);
}

TEST_SUITE_END();
