// The HS2 layer end to end with the test kit's Kudu store behind the test server, in process and
// through the standalone hs2_test_server binary.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "hs2/executor.h"
#include "hs2/hs2_session.h"
#include "hs2_test_server.h"
#include "hs2_test_util.h"
#include "kit_handler.h"

TEST_SUITE_BEGIN("hs2_kit");

extern char** environ;

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {
const std::string kG1 = "0123456789abcdef0123456789abcdef";
const std::string kG2 = "fedcba9876543210fedcba9876543210";
const std::string kG3 = "00112233445566778899aabbccddeeff";

std::string upsert(const std::string& guid, const std::string& name) {
  return "UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" + guid + "', '" + name +
         "')";
}
}  // namespace

TEST_CASE("hs2 kit: executor applies windows to the Kudu store model, sessions 1 and 3 agree") {
  std::vector<std::string> names;
  for (int sessions : {1, 3}) {
    auto kit = std::make_shared<KitHandler>();
    Hs2TestServer server({}, kit);
    auto o = test_options(server.start());
    o.sessions = sessions;
    Hs2Executor ex(validate_hs2_options(o), hs2_sessions(o));
    ex.start("");
    CompiledWindow w1;
    w1.index = 1;
    w1.upserts = {{"entity_flat", upsert(kG1, "it\\'s one"), 1, {}},
                  {"entity_flat", upsert(kG2, "two"), 1, {}},
                  {"entity_flat", upsert(kG3, "three"), 1, {}}};
    CompiledWindow w2;
    w2.index = 2;
    // Deleting an absent key is no row error: Impala's DELETE scans for the rows and finds none.
    w2.deletes = {{"entity_flat",
                   "DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN ('" + kG2 + "', '" +
                       std::string(32, 'a') + "')",
                   2,
                   {}}};
    w2.upserts = {{"entity_flat", upsert(kG2, "two again"), 1, {}}};
    ex.run_window(w1);
    ex.run_window(w2);
    ex.finish();
    auto st = ex.stats();
    CHECK(st.rows_by_table.at("entity_flat") == 5);  // 3 + 1 deleted + 1
    CHECK(st.row_errors == 0);
    kit->with_store([&](const testkit::KuduStore& s) {
      const auto& t = s.table("entity_flat");
      REQUIRE(t.size() == 3);
      std::string dump = s.dump();
      CHECK(dump.find("two again") != std::string::npos);
      CHECK(dump.find("it's one") != std::string::npos);  // \' unescaped the way Impala does
      names.push_back(dump);
    });
  }
  REQUIRE(names.size() == 2);
  CHECK(names[0] == names[1]);
}

TEST_CASE("hs2 kit: a statement the interpreter rejects is a definite error") {
  auto kit = std::make_shared<KitHandler>();
  Hs2TestServer server({}, kit);
  Hs2Session client = hs2_session(test_options(server.start()));
  client.connect();
  try {
    client.execute("UPSERT INTO `atlas`.`nope` (`guid`) VALUES ('" + kG1 + "')");
    FAIL("expected Hs2Error");
  } catch (const Hs2Error& e) {
    CHECK(e.kind() == Hs2ErrorKind::kDefinite);
    const std::string what = e.what();
    CHECK(what.find("AnalysisException: statement 1 (line 1): Could not resolve table reference: "
                    "'atlas.nope'") != std::string::npos);
    CHECK(
        what.ends_with(" (create the projection tables first: `atlas2kudu ddl -d DATABASE` "
                       "prints their DDL)"));
  }
}

TEST_CASE("hs2 kit: the standalone hs2_test_server binary serves SASL and logs statements") {
  auto dir = scratch_dir("standalone");
  const std::string port_file = (dir / "port").string();
  const std::string log_file = (dir / "statements.log").string();
  std::string bin = ATLAS2KUDU_HS2_TEST_SERVER;
  std::vector<std::string> args = {bin,      "--transport", "sasl",    "--user",
                                   "alice",  "--port-file", port_file, "--statement-log",
                                   log_file, "--drop-at",   "2",       "--max-seconds",
                                   "60"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The server's password travels in its environment, never in argv.
  std::vector<std::string> env_strings = {"HS2_TEST_SERVER_PASSWORD=s3cret"};
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, bin.c_str(), &actions, nullptr, argv.data(), envp.data()) == 0);
  posix_spawn_file_actions_destroy(&actions);
  // Stops the server we started (by its pid) however this test case ends.
  struct Child {
    pid_t pid;
    int status = 0;
    bool reaped = false;
    void stop() {
      if (reaped) return;
      kill(pid, SIGTERM);
      waitpid(pid, &status, 0);
      reaped = true;
    }
    ~Child() { stop(); }
  } child{pid};

  int port = 0;
  for (int i = 0; i < 100 && port == 0; ++i) {  // at most 10 s
    std::ifstream f(port_file);
    if (!(f >> port)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (port != 0) {
    auto o = test_options(port);
    o.ldap = true;
    o.auth_creds_ok_in_clear = true;
    o.retry_backoff_ms = 1;
    Hs2Executor ex(validate_hs2_options(o), hs2_sessions(o, password_credentials("s3cret")));
    ex.start("");
    CompiledWindow w;
    w.index = 1;
    w.upserts = {{"entity_flat", upsert(kG1, "a"), 1, {}},
                 {"entity_flat", upsert(kG2, "b"), 1, {}}};
    ex.run_window(w);
    ex.finish();
    CHECK(ex.stats().retries == 1);  // statement 2 dropped once
    CHECK(ex.stats().rows_by_table.at("entity_flat") == 2);
  }
  child.stop();
  REQUIRE(port != 0);
  CHECK(WIFEXITED(child.status));
  std::ifstream log(log_file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(log, line);) lines.push_back(line);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == upsert(kG1, "a"));
  CHECK(lines[1] == upsert(kG2, "b"));
}

TEST_CASE("hs2 kit: a script's comment lines after its last statement end no statement") {
  // compile's output seeded as it is (--seed-sql): an empty phase's comment ends it.
  KitHandler kit;
  const std::string upsert =
      "UPSERT INTO `atlas`.`entity_flat` (`guid`, `state`) VALUES ('" + kG1 + "', 'ACTIVE');\n";
  CHECK_FALSE(kit.execute(upsert + "-- window 1 phase 2: upserts (0 statements)\n").error);
  CHECK_FALSE(kit.execute(upsert + "  -- a\n\n-- b").error);
  // An HS2 statement has no ';', and nothing but a comment is no statement.
  CHECK_FALSE(kit.execute(upsert.substr(0, upsert.size() - 2)).error);
  CHECK(kit.execute("-- nothing\n").error);
}

TEST_SUITE_END();
