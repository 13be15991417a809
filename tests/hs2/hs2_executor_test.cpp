// Hs2Executor against the in-process HS2 test server: phases, concurrency, retries, stop on error.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <cstdio>
#include <fstream>
#include <future>

#include "hs2/executor.h"
#include "hs2/phase_schedule.h"
#include "hs2_test_server.h"
#include "hs2_test_util.h"
#include "statement_handler.h"
#include "util/stop.h"

TEST_SUITE_BEGIN("hs2_executor");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

// Window `w` upserts keys w-0..w-(n-1) into two tables in `batches` statements each, and deletes
// the first key of window w-1 (so deletes and upserts of the same tables alternate).
std::vector<CompiledWindow> make_windows(int windows, int keys, int batches) {
  std::vector<CompiledWindow> out;
  for (int w = 1; w <= windows; ++w) {
    CompiledWindow cw;
    cw.index = static_cast<std::uint64_t>(w);
    cw.first_event = static_cast<std::uint64_t>((w - 1) * 10 + 1);
    cw.last_event = static_cast<std::uint64_t>(w * 10);
    for (const char* table : {"entity_flat", "edge"}) {
      if (w > 1)
        cw.deletes.push_back(
            {table,
             fmt::format("DELETE FROM `atlas`.`{}` WHERE `k` IN ('{}-0')", table, w - 1),
             1,
             {}});
      for (int b = 0; b < batches; ++b) {
        std::string values;
        int rows = 0;
        for (int k = b; k < keys; k += batches) {
          values += fmt::format("{}('{}-{}', 1)", values.empty() ? "" : ", ", w, k);
          ++rows;
        }
        cw.upserts.push_back({table,
                              fmt::format("UPSERT INTO `atlas`.`{}` VALUES {}", table, values),
                              static_cast<std::size_t>(rows),
                              {}});
      }
    }
    out.push_back(std::move(cw));
  }
  return out;
}

struct Run {
  std::map<std::string, std::set<std::string>> tables;
  Hs2RunStats stats;
  Hs2TestServerStats server;
};

Run run(int sessions, FaultPlan faults = {}, int max_retries = 5) {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.faults = faults;
  Hs2TestServer server(cfg, handler);
  auto o = test_options(server.start());
  o.sessions = sessions;
  o.max_retries = max_retries;
  Hs2Executor ex(validate_hs2_options(o), hs2_sessions(o));
  ex.set_sleeper([](std::chrono::milliseconds) {});  // back-off is counted, not waited for
  ex.start("-- test\n");
  for (const auto& w : make_windows(4, 12, 5)) ex.run_window(w);
  ex.finish();
  return {handler->tables(), ex.stats(), server.stats()};
}

}  // namespace

TEST_CASE("hs2 executor: --sessions 4 and --sessions 1 produce the same tables and counts") {
  Run one = run(1);
  Run four = run(4);
  REQUIRE(one.tables.size() == 2);
  // Each window deletes the previous window's key 0: 11 of window 1-3's keys + 12 of window 4.
  CHECK(one.tables.at("atlas.entity_flat").size() == 3 * 11 + 12);
  CHECK(one.tables == four.tables);
  CHECK(one.stats.statements == four.stats.statements);
  CHECK(one.stats.statements == 4 * 2 * 5 + 3 * 2);
  CHECK(one.stats.rows_by_table == four.stats.rows_by_table);
  CHECK(one.stats.rows_by_table.at("entity_flat") == 4 * 12 + 3);  // upserted + deleted rows
  CHECK(one.stats.rows_deleted == 2 * 3);
  CHECK(one.stats.rows_upserted == 2 * 4 * 12);
  CHECK(four.stats.rows_deleted == one.stats.rows_deleted);
  CHECK(one.stats.windows == 4);
  CHECK(four.stats.retries == 0);
  CHECK(one.server.sessions_opened == 1);
  CHECK(four.server.sessions_opened == 4);
}

namespace {

// Runs the one window `w` over `sessions` sessions; the server's handler, to look at.
std::shared_ptr<KeySetHandler> run_one_window(const CompiledWindow& w, int sessions) {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServer server({}, handler);
  auto o = test_options(server.start());
  o.sessions = sessions;
  Hs2Executor ex(validate_hs2_options(o), hs2_sessions(o));
  ex.start("");
  ex.run_window(w);
  ex.finish();
  return handler;
}

}  // namespace

TEST_CASE("hs2 executor: deletes of a window run before its upserts") {
  CompiledWindow w;
  w.index = 1;
  w.upserts = {{"t", "UPSERT INTO t VALUES ('a', 1)", 1, {}},
               {"t", "UPSERT INTO t VALUES ('b', 1)", 1, {}}};
  w.deletes = {{"t", "DELETE FROM t WHERE k IN ('a')", 1, {}},
               {"t", "DELETE FROM t WHERE k IN ('b')", 1, {}}};
  const auto handler = run_one_window(w, 3);
  // Key re-created in the same window survives: the deletes came first.
  CHECK(handler->tables().at("t") == std::set<std::string>{"a", "b"});
  auto st = handler->statements();
  REQUIRE(st.size() == 4);
  CHECK(st[0].rfind("DELETE", 0) == 0);
  CHECK(st[1].rfind("DELETE", 0) == 0);
}

TEST_CASE("hs2 executor: entity_flat's statements run after the rest of their phase") {
  CompiledWindow w;
  w.index = 1;
  for (int i = 0; i < 6; ++i) {
    // The large flat statements would otherwise go first (the most bytes waiting).
    Statement flat{
        "f", fmt::format("UPSERT INTO f VALUES ('{}{}', 1)", i, std::string(900, 'x')), 1, {}};
    flat.after_the_rest = true;
    w.upserts.push_back(flat);
    w.upserts.push_back(
        {"t" + std::to_string(i % 3), fmt::format("UPSERT INTO t VALUES ('{}', 1)", i), 1, {}});
  }
  const auto st = run_one_window(w, 4)->statements();
  REQUIRE(st.size() == 12);
  for (std::size_t i = 0; i < st.size(); ++i) {
    CAPTURE(st[i]);
    CHECK((st[i].rfind("UPSERT INTO f", 0) == 0) == (i >= 6));
  }
}

TEST_CASE("hs2 executor: dropped connections are reconnected and the statements re-run") {
  FaultPlan f;
  f.drop_at = {3, 9};          // lost before running
  f.drop_after_run_at = {17};  // lost after running: the re-run must be harmless
  Run clean = run(1);
  for (int sessions : {1, 4}) {
    CAPTURE(sessions);
    Run r = run(sessions, f);
    CHECK(r.tables == clean.tables);
    CHECK(r.stats.retries == 3);
    CHECK(r.stats.reconnects == 3);
    CHECK(r.stats.statements == clean.stats.statements);
    CHECK(r.server.statements == static_cast<int>(clean.stats.statements) + 3);
  }
}

TEST_CASE("hs2 executor: transient server errors are retried, the session kept") {
  FaultPlan f;
  f.fail_at[2] = "Kudu error: Service unavailable: leader changing";
  f.fail_at[5] = "Admission for query exceeded timeout 60000ms in pool root.etl";
  Run clean = run(1);
  Run r = run(2, f);
  CHECK(r.tables == clean.tables);
  CHECK(r.stats.retries == 2);
  CHECK(r.stats.reconnects == 0);
  CHECK(r.server.sessions_opened == 2);
}

TEST_CASE("hs2 executor: the phase schedule (phase_schedule.h's worked example)") {
  auto statement = [](const char* table, std::size_t kib) {
    Statement s;
    s.table = table;
    s.sql = std::string(kib * 1024, 'x');
    return s;
  };
  std::vector<Statement> statements = {statement("entity_audit", 9), statement("entity_audit", 2),
                                       statement("entity_by_qn", 6), statement("edge_in", 1),
                                       statement("entity_by_qn", 6), statement("entity_flat", 8)};
  statements[5].after_the_rest = true;
  PhaseSchedule schedule(statements, 3);
  CHECK(schedule.next() == 2u);
  CHECK(schedule.next() == 0u);
  CHECK(schedule.next() == 3u);
  schedule.done(3);
  CHECK(schedule.next() == 4u);
  CHECK(schedule.next() == 1u);
  // Only entity_flat's is left: it waits until the others are done.
  auto flat = std::async(std::launch::async, [&] { return schedule.next(); });
  for (const std::size_t i : {0u, 1u, 2u}) {
    CHECK(flat.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout);
    schedule.done(i);
  }
  CHECK(flat.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout);
  schedule.done(4);
  CHECK(flat.get() == 5u);
  CHECK(schedule.next() == std::nullopt);

  // One session: the phase's order, which the planner ends with entity_flat's statements.
  PhaseSchedule one_session(statements, 1);
  for (std::size_t i = 0; i < statements.size(); ++i) {
    CHECK(one_session.next() == i);
    one_session.done(i);
  }
  CHECK(one_session.next() == std::nullopt);
  // ... and so does a phase that does not.
  std::vector<Statement> flat_first = {statements[5], statements[0], statements[3]};
  PhaseSchedule reordered(flat_first, 1);
  for (const std::size_t i : {1u, 2u, 0u}) {
    CHECK(reordered.next() == i);
    reordered.done(i);
  }

  // A failure stops the phase: a session waiting for the rest gets nothing.
  PhaseSchedule stopped(statements, 3);
  CHECK(stopped.next() == 2u);
  for (int i = 0; i < 4; ++i) CHECK(stopped.next().has_value());
  auto waiting = std::async(std::launch::async, [&] { return stopped.next(); });
  CHECK(waiting.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout);
  stopped.stop();
  CHECK(stopped.stopped());
  CHECK(waiting.get() == std::nullopt);
  CHECK(stopped.next() == std::nullopt);
}

TEST_CASE("hs2 executor: a definite error stops with the message, window and position") {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  // Statement 4 of the run: window 1 has no deletes, so it is upsert 4 of window 1.
  cfg.faults.fail_at[4] = "AnalysisException: Column 'nope' does not exist";
  cfg.statement_log = (scratch_dir("definite") / "statements.log").string();
  Hs2TestServer server(cfg, handler);
  auto o = test_options(server.start());
  Hs2Executor ex(validate_hs2_options(o), hs2_sessions(o));
  ex.start("");
  auto windows = make_windows(2, 12, 5);
  try {
    for (const auto& w : windows) ex.run_window(w);
    FAIL("expected Hs2ExecutionError");
  } catch (const Hs2ExecutionError& e) {
    CHECK(e.kind() == Hs2ErrorKind::kDefinite);
    CHECK(e.category() == ErrorCategory::kServerRejected);
    CHECK(e.window == 1);
    CHECK(e.phase == "upsert");
    CHECK(e.position == 4);
    CHECK(e.table == "entity_flat");
    std::string msg = e.what();
    CHECK(msg.find("window 1 (events 1-10), upsert phase, statement 4 of 10 (table entity_flat)") !=
          std::string::npos);
    CHECK(msg.find("Column 'nope' does not exist") != std::string::npos);
  }
  // Not retried, and nothing after it ran (single session).
  CHECK(server.stats().statements == 4);
  CHECK(ex.stats().retries == 0);
  std::ifstream log(cfg.statement_log);
  int lines = 0;
  for (std::string line; std::getline(log, line);) ++lines;
  CHECK(lines == 3);  // the failed statement never reached the handler
}

// Starts `ex` and runs one window of 12 keys in 5 batches (10 statements), which a stop must end;
// returns that stop.
static StopError stopped_in_first_window(Hs2Executor& ex) {
  ex.start("");
  const std::vector<CompiledWindow> windows = make_windows(1, 12, 5);
  try {
    ex.run_window(windows.front());
  } catch (const StopError& e) {
    return e;
  }
  FAIL("expected StopError");
  return StopError(StopReason::kTerminate);
}

TEST_CASE("hs2 executor: a stop between two statements names the next one, which is not sent") {
  // The session requests the stop as the third statement returns, as a SIGTERM then would.
  class StopAfterThird final : public SqlSession {
   public:
    explicit StopAfterThird(std::unique_ptr<SqlSession> inner) : inner_(std::move(inner)) {}
    void connect() override { inner_->connect(); }
    bool connected() const override { return inner_->connected(); }
    Hs2DmlResult execute(std::string_view sql) override {
      Hs2DmlResult r = inner_->execute(sql);
      if (++executed_ == 3) request_stop(StopReason::kTerminate);
      return r;
    }
    Hs2QueryResult query(std::string_view sql) override { return inner_->query(sql); }
    void drop() noexcept override { inner_->drop(); }
    void close() noexcept override { inner_->close(); }

   private:
    std::unique_ptr<SqlSession> inner_;
    int executed_ = 0;
  };
  reset_stop();
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServer server(Hs2TestServerConfig{}, handler);
  auto o = test_options(server.start());
  const SessionFactory real = hs2_sessions(o);
  Hs2Executor ex(validate_hs2_options(o), [&] { return std::make_unique<StopAfterThird>(real()); });
  const StopError e = stopped_in_first_window(ex);
  CHECK(e.category() == ErrorCategory::kTerminated);
  CHECK_FALSE(e.statement_may_have_run());
  CHECK(std::string(e.what()) ==
        "window 1 (events 1-10), upsert phase, before statement 4 of 10 (table entity_flat): "
        "stopped by SIGTERM");
  CHECK(handler->statements().size() == 3);
  CHECK(ex.stats().statements == 3);
  CHECK(ex.stats().statements_cut_short == 0);
  ex.finish();
  reset_stop();
}

TEST_CASE("hs2 executor: a stop while waiting to try a sent statement again says it may have run") {
  // The second statement runs, then its connection drops; the stop comes in the back-off before
  // the next try, as a SIGTERM there would.
  reset_stop();
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.faults.drop_after_run_at = {2};
  Hs2TestServer server(cfg, handler);
  auto o = test_options(server.start());
  Hs2Executor ex(validate_hs2_options(o), hs2_sessions(o));
  ex.set_sleeper([](std::chrono::milliseconds) { request_stop(StopReason::kTerminate); });
  const StopError e = stopped_in_first_window(ex);
  CHECK(e.statement_may_have_run());
  CHECK(std::string(e.what()) ==
        "window 1 (events 1-10), upsert phase, statement 2 of 10 (table entity_flat): stopped "
        "by SIGTERM");
  CHECK(handler->statements().size() == 2);  // it ran before its connection dropped
  CHECK(ex.stats().statements == 1);
  CHECK(ex.stats().statements_cut_short == 1);
  ex.finish();
  reset_stop();
}

TEST_CASE("hs2 executor: retries are bounded; exhaustion is 'unavailable'") {
  FaultPlan f;
  for (int i = 2; i <= 10; ++i) f.drop_at.insert(i);
  try {
    run(1, f, /*max_retries=*/3);
    FAIL("expected Hs2ExecutionError");
  } catch (const Hs2ExecutionError& e) {
    CHECK(e.category() == ErrorCategory::kUnavailable);
    CHECK(e.position == 2);
    CHECK(std::string(e.what()).find("giving up after 3 retries") != std::string::npos);
  }
  try {
    run(1, f, /*max_retries=*/1);
    FAIL("expected Hs2ExecutionError");
  } catch (const Hs2ExecutionError& e) {
    CHECK(std::string(e.what()).find(": giving up after 1 retry: ") != std::string::npos);
  }
}

TEST_CASE("hs2 executor: a wrong password fails at start with the auth exit code") {
  Hs2TestServerConfig cfg;
  cfg.transport = Hs2TestServerConfig::Transport::kSasl;
  cfg.user = "alice";
  cfg.password = "right";
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  o.ldap = true;
  o.auth_creds_ok_in_clear = true;
  Hs2Executor ex(validate_hs2_options(o), hs2_sessions(o, password_credentials("wrong")));
  try {
    ex.start("");
    FAIL("expected Hs2Error");
  } catch (const Hs2Error& e) {
    CHECK(e.category() == ErrorCategory::kAuth);
  }
}

TEST_CASE("hs2 executor: an expired session is reopened and the statement re-run") {
  FaultPlan f;
  f.expire_sessions_at = {4, 20};
  Run clean = run(1);
  for (int sessions : {1, 3}) {
    CAPTURE(sessions);
    Run r = run(sessions, f);
    CHECK(r.tables == clean.tables);
    CHECK(r.stats.retries >= 2);
    CHECK(r.stats.reconnects == r.stats.retries);
    CHECK(r.server.sessions_opened == sessions + static_cast<int>(r.stats.reconnects));
  }
}

TEST_CASE("hs2 executor: over hs2-http, dropped requests and 503s are retried") {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.transport = Hs2TestServerConfig::Transport::kHttp;
  cfg.user = "alice";
  cfg.password = "pw";
  // libcurl silently re-sends once when a kept-alive connection dies before any reply byte, so
  // two consecutive drops are needed for the executor to see one.
  cfg.faults.drop_at = {2, 3};
  cfg.faults.http_503 = 1;
  cfg.faults.retry_after_s = 0;
  Hs2TestServer server(cfg, handler);
  auto o = test_options(server.start());
  o.protocol = Hs2Protocol::kHttp;
  o.ldap = true;
  o.auth_creds_ok_in_clear = true;
  o.sessions = 1;  // statement numbers are global: one session keeps the fault sequence exact
  Hs2Executor ex(validate_hs2_options(o), hs2_sessions(o, password_credentials("pw")));
  ex.set_sleeper([](std::chrono::milliseconds) {});
  ex.start("");
  for (const auto& w : make_windows(2, 6, 3)) ex.run_window(w);
  ex.finish();
  Run clean = [] {
    auto h = std::make_shared<KeySetHandler>();
    Hs2TestServer s({}, h);
    auto o1 = test_options(s.start());
    Hs2Executor e(validate_hs2_options(o1), hs2_sessions(o1));
    e.start("");
    for (const auto& w : make_windows(2, 6, 3)) e.run_window(w);
    e.finish();
    return Run{h->tables(), e.stats(), s.stats()};
  }();
  CHECK(handler->tables() == clean.tables);
  CHECK(ex.stats().retries == 1);
  CHECK(ex.stats().reconnects == 1);
  CHECK(server.stats().statements == static_cast<int>(clean.stats.statements) + 2);
  CHECK(server.stats().http_503_sent == 1);
}

TEST_SUITE_END();
