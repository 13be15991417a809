// The executor, the prior state and the RetryPolicy driven through the SqlSession seam with an
// in-memory fake session: phases, retries, reconnects and back-off without a network or a clock.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hs2/executor.h"
#include "hs2/prior_state.h"
#include "hs2/retry.h"
#include "hs2/session.h"

TEST_SUITE_BEGIN("hs2_fake_session");

using namespace atlas2kudu;
using std::chrono::milliseconds;

namespace {

// A failure the fake server answers a statement with.
struct Fault {
  Hs2ErrorKind kind;
  std::string message;
  bool drops_connection = false;  // transport trouble: the session is left disconnected
};

// What every FakeSession of one test talks to. Statements are numbered over all sessions,
// 1-based, in the order they arrive, like the HS2 test server's FaultPlan.
struct FakeServer {
  std::mutex mu;
  std::map<int, Fault> faults;
  std::vector<std::string> applied;  // statements that ran, in order
  int statements = 0;                // execute() and query() calls received while connected
  int connects = 0;
  int drops = 0;  // drop() calls
  int closes = 0;
  // Answers query(); default: no rows.
  std::function<Hs2QueryResult(std::string_view sql)> answer = [](std::string_view) {
    return Hs2QueryResult{};
  };
};

class FakeSession final : public SqlSession {
 public:
  explicit FakeSession(std::shared_ptr<FakeServer> server) : server_(std::move(server)) {}

  void connect() override {
    std::lock_guard lock(server_->mu);
    ++server_->connects;
    connected_ = true;
  }
  bool connected() const override { return connected_; }

  Hs2DmlResult execute(std::string_view sql) override {
    run(sql);
    Hs2DmlResult r;
    r.rows_modified = 1;
    r.has_dml_result = true;
    return r;
  }

  Hs2QueryResult query(std::string_view sql) override {
    run(sql);
    return server_->answer(sql);
  }

  void drop() noexcept override {
    std::lock_guard lock(server_->mu);
    ++server_->drops;
    connected_ = false;
  }
  void close() noexcept override {
    std::lock_guard lock(server_->mu);
    ++server_->closes;
    connected_ = false;
  }

 private:
  void run(std::string_view sql) {
    std::lock_guard lock(server_->mu);
    if (!connected_) throw Hs2Error(Hs2ErrorKind::kTransient, "not connected");
    const int n = ++server_->statements;
    if (auto it = server_->faults.find(n); it != server_->faults.end()) {
      if (it->second.drops_connection) connected_ = false;
      throw Hs2Error(it->second.kind, it->second.message);
    }
    server_->applied.emplace_back(sql);
  }

  std::shared_ptr<FakeServer> server_;
  bool connected_ = false;
};

SessionFactory fake_sessions(const std::shared_ptr<FakeServer>& server) {
  return [server] { return std::make_unique<FakeSession>(server); };
}

Hs2Settings settings(int sessions, int max_retries = 5, int backoff_ms = 100) {
  Hs2Options o;
  o.impalad = "db1.example:21050";
  o.sessions = sessions;
  o.max_retries = max_retries;
  o.retry_backoff_ms = backoff_ms;
  return validate_hs2_options(o);
}

CompiledWindow window(std::uint64_t index, int deletes, int upserts) {
  CompiledWindow w;
  w.index = index;
  w.first_event = 1;
  w.last_event = 10;
  for (int i = 0; i < deletes; ++i)
    w.deletes.push_back({"t", fmt::format("DELETE FROM t WHERE k IN ('{}')", i), 1, {}});
  for (int i = 0; i < upserts; ++i)
    w.upserts.push_back({"t", fmt::format("UPSERT INTO t VALUES ('{}')", i), 1, {}});
  return w;
}

// Records the back-off the policy asked for (from any thread).
struct Sleeps {
  std::mutex mu;
  std::vector<milliseconds> slept;
  Sleeper sleeper() {
    return [this](milliseconds d) {
      std::lock_guard lock(mu);
      slept.push_back(d);
    };
  }
};

void check_first_backoff(milliseconds slept, int backoff_ms) {
  CHECK(slept >= milliseconds(backoff_ms));
  CHECK(slept <= milliseconds(backoff_ms + backoff_ms / 4));
}

const Guid kG1 = *Guid::parse("10000000000000000000000000000001");
const Guid kG2 = *Guid::parse("20000000000000000000000000000002");

}  // namespace

TEST_CASE("hs2 fake session: the executor runs deletes, then upserts, over its sessions") {
  auto server = std::make_shared<FakeServer>();
  Hs2Executor ex(settings(3), fake_sessions(server));
  ex.start("");
  CHECK(server->connects == 3);
  ex.run_window(window(1, 2, 4));
  ex.finish();
  CHECK(server->closes == 3);
  REQUIRE(server->applied.size() == 6);
  CHECK(server->applied[0].rfind("DELETE", 0) == 0);
  CHECK(server->applied[1].rfind("DELETE", 0) == 0);
  const Hs2RunStats st = ex.stats();
  CHECK(st.windows == 1);
  CHECK(st.statements == 6);
  CHECK(st.rows_deleted == 2);
  CHECK(st.rows_upserted == 4);
  CHECK(st.rows_by_table.at("t") == 6);
  CHECK(st.retries == 0);
}

TEST_CASE("hs2 fake session: lost sessions are reopened, transient server errors keep them") {
  auto server = std::make_shared<FakeServer>();
  server->faults[2] = {Hs2ErrorKind::kSessionLost, "Invalid session id: 4a2b"};
  server->faults[4] = {Hs2ErrorKind::kTransient, "connection reset", /*drops_connection=*/true};
  server->faults[6] = {Hs2ErrorKind::kTransient, "Admission for query exceeded timeout"};
  Hs2Executor ex(settings(1), fake_sessions(server));
  Sleeps sleeps;
  ex.set_sleeper(sleeps.sleeper());
  ex.start("");
  ex.run_window(window(1, 0, 5));
  ex.finish();
  CHECK(server->applied.size() == 5);
  const Hs2RunStats st = ex.stats();
  CHECK(st.statements == 5);
  CHECK(st.retries == 3);
  CHECK(st.reconnects == 2);  // after the lost session and after the reset, not after admission
  CHECK(server->connects == 1 + 2);
  CHECK(server->drops == 1);  // only the lost session; the reset had dropped the connection
  REQUIRE(sleeps.slept.size() == 3);
  for (milliseconds d : sleeps.slept) check_first_backoff(d, 100);  // each a first re-run
}

TEST_CASE("hs2 fake session: a definite error stops the executor at once with its position") {
  auto server = std::make_shared<FakeServer>();
  server->faults[3] = {Hs2ErrorKind::kDefinite, "AnalysisException: Column 'x' does not exist"};
  Hs2Executor ex(settings(1), fake_sessions(server));
  ex.set_sleeper([](milliseconds) { FAIL("a definite error must not be retried"); });
  ex.start("");
  try {
    ex.run_window(window(7, 1, 4));
    FAIL("expected Hs2ExecutionError");
  } catch (const Hs2ExecutionError& e) {
    CHECK(e.kind() == Hs2ErrorKind::kDefinite);
    CHECK(e.window == 7);
    CHECK(e.phase == "upsert");
    CHECK(e.position == 2);
    CHECK(std::string(e.what()) ==
          "window 7 (events 1-10), upsert phase, statement 2 of 4 (table t): AnalysisException: "
          "Column 'x' does not exist");
    CHECK(e.server_message == "AnalysisException: Column 'x' does not exist");
  }
  CHECK(server->applied.size() == 2);
}

TEST_CASE("hs2 fake session: executor retries are bounded, the back-off doubles") {
  auto server = std::make_shared<FakeServer>();
  for (int n = 1; n <= 3; ++n) server->faults[n] = {Hs2ErrorKind::kTransient, "Timed out"};
  Hs2Executor ex(settings(1, /*max_retries=*/2, /*backoff_ms=*/1000), fake_sessions(server));
  Sleeps sleeps;
  ex.set_sleeper(sleeps.sleeper());
  ex.start("");
  try {
    ex.run_window(window(1, 0, 1));
    FAIL("expected Hs2ExecutionError");
  } catch (const Hs2ExecutionError& e) {
    CHECK(e.category() == ErrorCategory::kUnavailable);
    CHECK(std::string(e.what()).find("statement 1 of 1 (table t): giving up after 2 retries: "
                                     "Timed out") != std::string::npos);
  }
  REQUIRE(sleeps.slept.size() == 2);
  check_first_backoff(sleeps.slept[0], 1000);
  check_first_backoff(sleeps.slept[1], 2000);
}

TEST_CASE("hs2 fake session: the prior state connects lazily and retries its SELECTs") {
  auto server = std::make_shared<FakeServer>();
  server->answer = [](std::string_view sql) {
    Hs2QueryResult r;
    if (sql.find("`entity_flat`") != std::string_view::npos) {
      r.columns = {"guid", "type_name", "qualified_name", "props_json"};
      r.rows = {{kG1.hex(), "hive_table", std::nullopt, "{}"}};
    } else {
      r.columns = {"guid", "tag_name"};
      r.rows = {{kG2.hex(), "PII"}};
    }
    return r;
  };
  server->faults[1] = {Hs2ErrorKind::kSessionLost, "Session expired"};
  Hs2PriorState prior(settings(1), fake_sessions(server), CompileOptions{});
  CHECK(prior.describe() == "impala (batched primary-key lookups over HS2 at db1.example:21050)");
  Sleeps sleeps;
  prior.set_sleeper(sleeps.sleeper());
  std::vector<PriorEntity> out;
  prior.lookup({}, out);
  CHECK(server->connects == 0);  // nothing to ask: no session

  const std::vector<Guid> guids = {kG1, kG2};
  prior.lookup(guids, out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].exists);
  CHECK(out[0].type_name == "hive_table");
  CHECK(!out[0].qualified_name);
  CHECK(out[0].tags.empty());
  CHECK(!out[1].exists);
  CHECK(out[1].tags == std::vector<std::string>{"PII"});
  const Hs2PriorStats st = prior.stats();
  CHECK(st.queries == 2);
  CHECK(st.retries == 1);
  CHECK(st.reconnects == 1);
  CHECK(server->connects == 2);
  CHECK(server->drops == 1);
  REQUIRE(sleeps.slept.size() == 1);
  check_first_backoff(sleeps.slept[0], 100);
}

TEST_CASE("hs2 fake session: a definite prior-state failure names the table and batch") {
  auto server = std::make_shared<FakeServer>();
  server->faults[1] = {Hs2ErrorKind::kDefinite, "AnalysisException: Could not resolve table"};
  Hs2PriorState prior(settings(1), fake_sessions(server), CompileOptions{});
  std::vector<PriorEntity> out;
  const std::vector<Guid> guids = {kG1, kG2};
  try {
    prior.lookup(guids, out);
    FAIL("expected Hs2Error");
  } catch (const Hs2Error& e) {
    CHECK(e.kind() == Hs2ErrorKind::kDefinite);
    CHECK(std::string(e.what()) ==
          "prior-state lookup (entity_flat, keys 1-2 of 2): AnalysisException: Could not resolve "
          "table");
  }
  CHECK(out.empty());
  // Also when the failure comes in a later batch: lookup() appends nothing of the earlier ones.
  auto later = std::make_shared<FakeServer>();
  later->answer = [](std::string_view sql) {  // no rows, in the shape of each table
    Hs2QueryResult r;
    r.columns = sql.find("`entity_flat`") != std::string_view::npos
                    ? std::vector<std::string>{"guid", "type_name", "qualified_name", "props_json"}
                    : std::vector<std::string>{"guid", "tag_name"};
    return r;
  };
  later->faults[3] = {Hs2ErrorKind::kDefinite, "AnalysisException: Could not resolve table"};
  CompileOptions one_key;
  one_key.batch_rows = 1;
  Hs2PriorState batched(settings(1), fake_sessions(later), one_key);
  try {
    batched.lookup(guids, out);
    FAIL("expected Hs2Error");
  } catch (const Hs2Error& e) {
    CHECK(std::string(e.what()).find("keys 2-2 of 2") != std::string::npos);
  }
  CHECK(out.empty());
}

TEST_CASE("hs2 retry policy: back-off doubles from the first, capped at 30 s, plus 0-25 %") {
  RetryPolicy retry(5, milliseconds(100));
  for (int i = 0; i < 50; ++i) {
    check_first_backoff(retry.backoff(1), 100);
    check_first_backoff(retry.backoff(2), 200);
    check_first_backoff(retry.backoff(3), 400);
    check_first_backoff(retry.backoff(10), 30000);   // 100 ms * 2^9 is past the cap
    check_first_backoff(retry.backoff(100), 30000);  // no overflow however many
  }
  CHECK(RetryPolicy(5, milliseconds(0)).backoff(3) == milliseconds(0));
}

TEST_CASE("hs2 retry policy: what on_failure sees, and the original rethrown unchanged") {
  struct ContextError : Hs2Error {
    using Hs2Error::Hs2Error;
  };
  Sleeps sleeps;
  RetryPolicy retry(2, milliseconds(10), sleeps.sleeper());

  // Not retryable: at once, not exhausted; a derived type survives the rethrow.
  int calls = 0;
  std::vector<std::pair<int, bool>> seen;
  auto record = [&](const RetryFailure& f) { seen.emplace_back(f.retries, f.exhausted); };
  CHECK_THROWS_AS(retry.run(
                      [&] {
                        ++calls;
                        throw ContextError(Hs2ErrorKind::kAuth, "refused");
                      },
                      record),
                  ContextError);
  CHECK(calls == 1);
  CHECK(seen == std::vector<std::pair<int, bool>>{{0, false}});

  // Retryable every time: max_retries re-runs, then exhausted.
  calls = 0;
  seen.clear();
  CHECK_THROWS_AS(retry.run(
                      [&] {
                        ++calls;
                        throw Hs2Error(Hs2ErrorKind::kTransient, "reset");
                      },
                      record),
                  Hs2Error);
  CHECK(calls == 3);
  CHECK(seen == std::vector<std::pair<int, bool>>{{2, true}});

  // on_failure may replace the error; success returns the value.
  CHECK_THROWS_WITH(retry.run([]() -> int { throw Hs2Error(Hs2ErrorKind::kDefinite, "bad"); },
                              [](const RetryFailure& f) {
                                throw Hs2Error(f.error.kind(),
                                               std::string("ctx: ") + f.error.what());
                              }),
                    "ctx: bad");
  calls = 0;
  CHECK(retry.run(
            [&] {
              if (++calls < 2) throw Hs2Error(Hs2ErrorKind::kSessionLost, "gone");
              return 42;
            },
            record) == 42);
  CHECK(retry.counters().retries == 2 + 1);
  CHECK(retry.counters().reconnects == 0);  // no session: nothing to reconnect
  CHECK(sleeps.slept.size() == 3);
}

TEST_SUITE_END();
