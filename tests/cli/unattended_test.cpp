// Unattended `apply`, end to end with the real binary and the standalone HS2 test server: clean
// shutdown on SIGTERM/SIGINT (the statement cancelled and closed on the server, the session
// closed, the checkpoint of the last applied window kept, --stats and the summary written), then
// a resume that equals the reference projector; one run at a time per checkpoint; a silent server
// and --deadline ending the run; row errors and refused rows failing or set aside; protocol
// mismatches named.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "atlas2kudu/reader.h"
#include "binary_test_util.h"
#include "hs2_test_util.h"
#include "kudu_store.h"
#include "reference_projector.h"

TEST_SUITE_BEGIN("unattended");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// `signo` sent while the server holds apply's first statement: the run exits `status` after the
// clean shutdown (the statement cancelled, the sessions closed, --stats naming the signal).
void check_clean_stop_mid_apply(int signo, const std::string& name, int status) {
  TestServer server("--handler kit --hang-at 1");
  const std::string stats = tmp_path(".json");
  Background apply("apply -i " + server.address() + " --prior none --stats " + stats +
                   joined(example_files()));
  REQUIRE(eventually([&] { return contains(server.statements(), "-- holding statement 1"); }));
  apply.signal(signo);
  const Run r = apply.wait();
  CHECK(r.status == status);
  CHECK(contains(r.err, "(stopped by " + name + ")"));
  // The first line names the statement it cut short.
  const std::string cut_short = "window 1 (events 1-23; " + example_files().front() + ":1 .. " +
                                example_files().back() +
                                ":4), delete phase, statement 1 of 12 (table entity_by_qn): "
                                "stopped by " +
                                name;
  CHECK(contains(r.err, "atlas2kudu: " + cut_short + "\n"));
  CHECK(contains(slurp(stats), "\"stopped_by\":\"" + name + "\""));
  // The statement cancelled may have written rows before the cancel: said apart.
  CHECK(contains(r.err,
                 "(1 more cut short by the stop before the server finished: it may have "
                 "run)"));
  CHECK(json_number(slurp(stats), "statements_cut_short") == 1);
  const std::string counters = server.report();
  CHECK(json_number(counters, "operations_cancelled") == 1);
  CHECK(json_number(counters, "open_sessions") == 0);
  std::remove(stats.c_str());
}

}  // namespace

TEST_CASE(
    "SIGTERM mid-apply: statement cancelled and closed, session closed, checkpoint, stats "
    "and summary kept, exit 143; a second run is locked out; the resume equals the "
    "reference projector") {
  const std::vector<std::string> files = example_files();
  // Statement 20 (prior-state SELECTs included) falls in window 3 of 5: held RUNNING until
  // cancelled.
  TestServer server("--handler kit --hang-at 20");
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());
  const std::string stats = tmp_path(".json");
  const std::string args =
      "apply -i " + server.address() + " --window-events 5 --checkpoint " + ckpt + joined(files);
  Background first(args + " --stats " + stats);
  REQUIRE(eventually([&] { return contains(server.statements(), "-- holding statement 20"); }));

  // One run at a time: the second exits at once, touching nothing.
  const Run second = run(args);
  CHECK(second.status == 75);
  CHECK(contains(second.err, "another atlas2kudu run (pid " + std::to_string(first.pid()) + ")"));
  CHECK(contains(second.err, ckpt + ".lock"));

  first.signal(SIGTERM);
  const Run stopped = first.wait();
  CHECK(stopped.status == 143);
  // The statement the stop cut short, by window, phase and table.
  CHECK(contains(stopped.err, "atlas2kudu: window 3 (events 11-15; " + files[1] + ":7 .. "));
  CHECK(contains(stopped.err,
                 "delete phase, statement 6 of 10 (table edge_in): stopped by SIGTERM\n"));
  CHECK(contains(stopped.err, "2 windows applied"));
  CHECK(contains(stopped.err, "(stopped by SIGTERM)"));
  // Window 2 ends in the second file (4 + 6 records): the message says where a rerun starts.
  CHECK(contains(stopped.err, ckpt +
                                  " records the 2 windows this run applied; the same command "
                                  "run again continues with " +
                                  files[1] + " after its first 6 records\n"));
  const std::string stats_json = slurp(stats);
  CHECK(contains(stats_json, "\"completed\":false,\"exit_status\":143,\"stopped_by\":\"SIGTERM\""));
  CHECK(json_number(stats_json, "applied_windows") == 2);
  const std::string saved = slurp(ckpt);
  CHECK(json_number(saved, "windows_applied") == 2);
  CHECK(mode_of(ckpt) == 0600);

  // Server side: the held statement was cancelled and closed, every session closed.
  const std::string counters = server.report();
  CHECK(json_number(counters, "operations_cancelled") == 1);
  CHECK(json_number(counters, "open_operations") == 0);
  CHECK(json_number(counters, "open_sessions") == 0);
  CHECK(json_number(counters, "sessions_closed") == json_number(counters, "sessions_opened"));

  // Resume: the same command completes; the tables equal the reference projector's.
  const Run resumed = run(args);
  CHECK(resumed.status == 0);
  CHECK(contains(resumed.err, "records skipped, applied by an earlier run"));
  // It says so as each input opens, not only at the end.
  CHECK(contains(resumed.err,
                 "atlas2kudu apply: " + files[0] + ": an earlier run applied it to its end, "));
  CHECK(contains(resumed.err, "; only records added since are read (" + ckpt + ")\n"));
  CHECK(contains(resumed.err, "atlas2kudu apply: resuming " + files[1] +
                                  " after its first 6 records, applied by an earlier run (" + ckpt +
                                  ")\n"));
  // A completed run records every input as complete, the last one too.
  const std::string final_marks = slurp(ckpt);
  CHECK(occurrences(final_marks, "\"complete\":true") == static_cast<long long>(files.size()));
  CHECK(!contains(final_marks, "\"complete\":false"));
  std::string dump;
  server.report(&dump);
  CompileOptions options;  // apply's defaults: --prior impala, hex keys, soft deletes
  options.prior = PriorSource::kImpala;
  options.window_events = 5;
  const std::vector<Event> events = read_all_events(files);
  const testkit::KuduStore projected =
      testkit::project(events, options, testkit::KuduStore(KeyEncoding::kHex));
  const auto diff = testkit::compare_with_dump(dump, projected);
  CHECK_MESSAGE(!diff, diff.value_or(""));
  std::remove(ckpt.c_str());
  std::remove((ckpt + ".lock").c_str());
  std::remove(stats.c_str());
}

TEST_CASE("a file taken for one the checkpoint names, with other records, is applied whole") {
  // A second full export under the same name (a small file: recognised by its name): its
  // records are others, so none is skipped; the run says so, and the tables hold all of them.
  TestServer server("--handler kit");
  const std::vector<std::string> files = example_files();
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());
  const std::string stats = tmp_path(".json");
  const std::string input = write_temp(".jsonl", slurp(files[0]));
  const auto rewrite = [&](const std::string& text) {
    std::ofstream(input, std::ios::trunc) << text;
  };
  const std::string args = "apply -i " + server.address() + " --checkpoint " + ckpt + " " + input;
  CHECK(run(args).status == 0);
  rewrite(slurp(files[1]));
  const Run again = run(args + " --stats " + stats);
  CHECK(again.status == 0);
  CHECK(contains(again.err,
                 "atlas2kudu apply: warning: 1 input was recognised as one an earlier "
                 "run applied, but not what it applied (" +
                     input + ", taken for " + input + ": its first "));
  CHECK(contains(again.err, "read from its start, every record applied\n"));
  CHECK(!contains(again.err, "records skipped"));
  CHECK(json_number(slurp(stats), "resume_mismatches") == 1);
  CHECK(json_number(slurp(stats), "skipped") == 0);
  // Grown by a record since: the next run reads that record alone.
  rewrite(slurp(files[1]) + slurp(files[0]).substr(0, slurp(files[0]).find('\n') + 1));
  const Run grown = run(args + " --stats " + stats);
  CHECK(grown.status == 0);
  CHECK(contains(grown.err, ": an earlier run applied it to its end, "));
  CHECK(json_number(slurp(stats), "resume_mismatches") == 0);
  CHECK(json_number(slurp(stats), "events") == 1);
  for (const std::string& f : {ckpt, ckpt + ".lock", stats, input}) std::remove(f.c_str());
}

TEST_CASE("a stopped run reading standard input does not promise to resume it") {
  // Records piped in have no identity: only Kafka offsets would let a rerun skip them.
  TestServer server("--handler kit --hang-at 12");
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());
  Background first("apply -i " + server.address() +
                       " --prior none --window-events 2 --checkpoint " + ckpt + " -",
                   example_files()[1]);
  REQUIRE(eventually([&] { return contains(server.statements(), "-- holding statement 12"); }));
  first.signal(SIGTERM);
  const Run stopped = first.wait();
  CHECK(stopped.status == 143);
  CHECK(contains(stopped.err,
                 " records the 2 windows this run applied; the same command run "
                 "again continues with standard input from its start (records read "
                 "from a pipe cannot be recognised again"));
  for (const auto& f : {ckpt, ckpt + ".lock"}) std::remove(f.c_str());
}

TEST_CASE("SIGINT mid-apply exits 130 after the same clean shutdown") {
  check_clean_stop_mid_apply(SIGINT, "SIGINT", 130);
}

TEST_CASE("SIGHUP mid-apply exits 129 after the same clean shutdown") {
  // The terminal or SSH session the run was started from went away.
  check_clean_stop_mid_apply(SIGHUP, "SIGHUP", 129);
}

TEST_CASE("under timeout(1), which signals the run and then its group, apply still stops cleanly") {
  // timeout sends SIGTERM to the run and then to its process group: the same signal twice,
  // microseconds apart, which must not count as the second signal that ends the run at once.
  TestServer server("--handler kit --hang-at 1");
  const std::string stats = tmp_path(".json");
  const std::string metrics = tmp_path(".prom");
  const Run r = run_shell("timeout --preserve-status 2 " + std::string(ATLAS2KUDU_BINARY) +
                          " apply -i " + server.address() + " --prior none --stats " + stats +
                          " --metrics-textfile " + metrics + joined(example_files()));
  CHECK(r.status == 143);
  CHECK(contains(r.err, "(stopped by SIGTERM)"));
  CHECK(contains(slurp(stats), "\"stopped_by\":\"SIGTERM\""));
  CHECK(contains(slurp(metrics), "atlas2kudu_last_exit_status{command=\"apply\"} 143"));
  const std::string counters = server.report();
  CHECK(json_number(counters, "operations_cancelled") == 1);
  CHECK(json_number(counters, "open_sessions") == 0);
  for (const auto& f : {stats, metrics}) std::remove(f.c_str());
}

TEST_CASE("a FIFO given as FILE with no writer yet: the run waits, and stops at the first signal") {
  // open(2) of a FIFO waits for its writer, and a signal did not end that wait (SA_RESTART):
  // only SIGKILL ended `timeout 2 atlas2kudu check FIFO`.
  const std::string fifo = make_fifo();
  Background check("check " + fifo);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto signalled = std::chrono::steady_clock::now();
  check.signal(SIGTERM);
  const Run r = check.wait(std::chrono::seconds(20));
  CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(5));
  CHECK(r.status == 143);
  // A writer that comes later is read as before, to its end.
  Background late("check " + fifo);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(std::system(("cat " + example_files()[0] + " > " + fifo).c_str()) == 0);
  const Run read = late.wait(std::chrono::seconds(20));
  CHECK(read.status == 0);
  CHECK(contains(read.out, "events accepted"));
  // The same FIFO as FILE and as standard input is one input given twice.
  const Run twice = run_shell("sh -c 'cat " + example_files()[0] + " > " + fifo + " & exec " +
                              ATLAS2KUDU_BINARY + " check " + fifo + " - < " + fifo + "'");
  CHECK(twice.status == 64);
  CHECK(contains(twice.err, fifo + " and - (standard input) are the same file"));
  std::remove(fifo.c_str());
}

TEST_CASE("a run waiting on a silent pipe stops at the first signal") {
  // `kafka-console-consumer ... | atlas2kudu apply` when the topic is quiet: the producer keeps
  // the pipe open and sends nothing. The first SIGTERM ends the run (cleanly, exit 143) without
  // waiting for more input.
  const std::string fifo = make_fifo();
  const int writer = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);  // a producer that stays silent
  REQUIRE(writer >= 0);
  const std::string examples = slurp(example_files()[0]);
  REQUIRE(::write(writer, examples.data(), examples.size()) ==
          static_cast<ssize_t>(examples.size()));
  TestServer server("--handler kit");
  const std::string stats = tmp_path(".json");
  Background apply(
      "apply -i " + server.address() + " --prior none --window-events 2 --stats " + stats + " -",
      fifo);
  // Every whole window of what was written is applied; then the run waits for more.
  REQUIRE(eventually([&] { return !server.statements().empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto signalled = std::chrono::steady_clock::now();
  apply.signal(SIGTERM);
  const Run r = apply.wait(std::chrono::seconds(20));
  CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(5));
  CHECK(r.status == 143);
  // The stop names the window it came in, before any of it ran (it had no events yet).
  CHECK(contains(r.err, "\natlas2kudu: reading window 3 (from event 5): stopped by SIGTERM\n"));
  CHECK(contains(r.err, "(stopped by SIGTERM)"));
  const std::string json = slurp(stats);
  CHECK(contains(json, "\"stopped_by\":\"SIGTERM\""));
  CHECK(json_number(json, "applied_windows") >= 1);
  CHECK(json_number(server.report(), "open_sessions") == 0);

  // compile the same way, printing: what it printed ends on a whole window. The apply read all
  // there was, so compile waits for its first event.
  Background compile("compile --window-events 2 -", fifo);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  compile.signal(SIGINT);
  const Run c = compile.wait(std::chrono::seconds(20));
  CHECK(c.status == 130);
  CHECK(contains(c.err, "atlas2kudu: reading window 1 (from event 1): stopped by SIGINT\n"));
  CHECK(contains(c.err, "stopped by SIGINT, the windows printed are complete"));
  ::close(writer);
  std::remove(fifo.c_str());
  std::remove(stats.c_str());
}

TEST_CASE("a signal stops a run that is only rejecting records") {
  // Rejected records never reach the pipeline's loop, so the reader itself looks for the stop
  // request: an export of nothing but bad records was read to its end after SIGTERM (exit 0).
  const std::string bad = tmp_path(".jsonl");
  {
    std::string text;
    for (int i = 0; i < 1000000; ++i) text += "{\"x\":" + std::to_string(i) + "}\n";
    std::FILE* f = std::fopen(bad.c_str(), "w");
    REQUIRE(f != nullptr);
    REQUIRE(std::fwrite(text.data(), 1, text.size(), f) == text.size());
    std::fclose(f);
  }
  const std::string rejects = tmp_path(".rejects");
  for (const std::string& args :
       {"check --max-rejects 10000000 " + bad,
        "compile -q --max-rejects 10000000 --reject-file " + rejects + " " + bad}) {
    CAPTURE(args);
    Background run(args);
    REQUIRE(eventually([&] { return contains(run.err_so_far(), ":1:0: "); }));
    run.signal(SIGTERM);
    const Run r = run.wait(std::chrono::seconds(60));
    CHECK(r.status == 143);
    CHECK(contains(r.err, "stopped by SIGTERM"));
    CHECK(!contains(r.err, ":1000000:0: "));  // the last record was never read
  }
  std::remove(bad.c_str());
  std::remove(rejects.c_str());
}

TEST_CASE("a second signal ends the run at once") {
  // Waiting for a server that accepted the connection and never answers (bounded by -t 10 s):
  // the second signal ends the process at once, whatever the first one is still waiting for.
  TestServer server("--silent");
  Background apply("apply -i " + server.address() + " --prior none " +
                   data("notifications/gzip-message.jsonl"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto signalled = std::chrono::steady_clock::now();
  apply.signal(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  apply.signal(SIGTERM);
  const Run r = apply.wait(std::chrono::seconds(20));
  CHECK(r.status == 143);
  CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(5));
}

TEST_CASE("compile stopped by a signal leaves no partial -o and only whole statements on stdout") {
  const std::string fifo = make_fifo();
  const std::string examples = slurp(example_files()[0]);
  for (const bool to_file : {true, false}) {
    CAPTURE(to_file);
    const std::string out = tmp_path(".sql");
    std::remove(out.c_str());
    Background compile(
        std::string("compile --window-events 2 ") + (to_file ? "-o " + out + " -" : "-"), fifo);
    const int writer = ::open(fifo.c_str(), O_WRONLY);
    REQUIRE(writer >= 0);
    REQUIRE(::write(writer, examples.data(), examples.size()) ==
            static_cast<ssize_t>(examples.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    compile.signal(SIGTERM);
    const Run r = compile.wait();  // the writer stays open: the stop ends the wait for input
    ::close(writer);
    CHECK(r.status == 143);
    if (to_file) {
      CHECK_FALSE(std::filesystem::exists(out));
      const std::string dir = std::filesystem::path(out).parent_path().string();
      const std::string temp_prefix = std::filesystem::path(out).filename().string() + ".tmp";
      int temporaries = 0;
      for (const auto& e : std::filesystem::directory_iterator(dir)) {
        temporaries += e.path().filename().string().rfind(temp_prefix, 0) == 0;
      }
      CHECK(temporaries == 0);
      CHECK(contains(r.err, "stopped by SIGTERM, no output written"));
    } else {
      // Whatever was printed ends with a whole statement (or the header): never mid-statement.
      REQUIRE_FALSE(r.out.empty());
      CHECK(r.out.back() == '\n');
      const std::string last_line = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
      const bool whole =
          last_line.rfind("--", 0) == 0 || last_line.find(";\n") != std::string::npos;
      CHECK(whole);
      CHECK(contains(r.err, "the windows printed are complete"));
    }
  }
  std::remove(fifo.c_str());
}

TEST_CASE("a server that accepts and never answers ends the run with exit 4 by itself") {
  TestServer server("--silent");
  const std::string input = data("notifications/gzip-message.jsonl");
  // The defaults alone (no timeout flag): the connect timeout ends it.
  Run r = run("apply -i " + server.address() + " " + input);
  CHECK(r.status == 4);
  CHECK(contains(r.err, "accepted the connection but sent nothing within -t 10000 ms"));
  // hs2-http and TLS, with a short -t.
  r = run("apply -t 500 --protocol hs2-http -i " + server.address() + " " + input);
  CHECK(r.status == 4);
  r = run("apply -t 500 --ssl --ca_cert " + tls_files().ca + " -i " + server.address() + " " +
          input);
  CHECK(r.status == 4);
  CHECK(contains(r.err, "TLS handshake"));
}

TEST_CASE("-q: a stopped run still says where the rerun starts; no summary, no resume notice") {
  TestServer server("--handler kit --fail-at '12:AnalysisException: Could not resolve table'");
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());
  const std::vector<std::string> files = example_files();
  const std::string args = "apply -q --window-events 5 --checkpoint " + ckpt;
  const Run failed = run(args + " -i " + server.address() + joined(files));
  CHECK(failed.status == 3);
  CHECK(contains(failed.err, ckpt + " records the "));
  CHECK(contains(failed.err, " this run applied; the same command run again continues with "));
  CHECK_FALSE(contains(failed.err, " events ("));  // the summary line
  // The same server (the checkpoint names it): its 12th statement has run.
  const Run resumed = run(args + " -i " + server.address() + joined(files));
  CHECK(resumed.status == 0);
  INFO(resumed.err);
  CHECK(resumed.err.empty());
  for (const auto& f : {ckpt, ckpt + ".lock"}) std::remove(f.c_str());
}

TEST_CASE("--deadline stops a run like SIGTERM, cancelling the running statement, exit 4") {
  TestServer server("--handler kit --hang-at 1");
  const std::string stats = tmp_path(".json");
  const Run r = run("apply --deadline 2s --prior none --stats " + stats + " -i " +
                    server.address() + joined(example_files()));
  CHECK(r.status == 4);
  CHECK(contains(r.err, "--deadline 2s reached"));
  CHECK(contains(r.err, "(stopped by deadline)"));
  CHECK(contains(slurp(stats), "\"stopped_by\":\"deadline\""));
  const std::string counters = server.report();
  CHECK(json_number(counters, "operations_cancelled") == 1);
  CHECK(json_number(counters, "open_sessions") == 0);
  CHECK(run("apply --deadline 5x " + data("notifications/gzip-message.jsonl")).status == 64);
  std::remove(stats.c_str());
}

TEST_CASE(
    "a stop during a prior-state lookup names the lookup; a query is no statement cut short") {
  TestServer server("--handler kit --hang-at 1");  // the first statement: window 1's SELECT
  const std::string stats = tmp_path(".json");
  Background apply("apply -i " + server.address() + " --stats " + stats + joined(example_files()));
  REQUIRE(eventually([&] { return contains(server.statements(), "-- holding statement 1"); }));
  apply.signal(SIGTERM);
  const Run r = apply.wait();
  CHECK(r.status == 143);
  CHECK(contains(r.err, "atlas2kudu: window 1 (events 1-23; " + example_files().front() + ":1 .. " +
                            example_files().back() +
                            ":4), prior-state lookup (entity_flat, keys 1-8 of 8): stopped by "
                            "SIGTERM\n"));
  CHECK(contains(r.err, ", 0 windows applied, 0 statements, "));
  CHECK(json_number(slurp(stats), "statements_cut_short") == 0);
  std::remove(stats.c_str());
}

TEST_CASE(
    "the first signal cuts short a wait for a silent server (OpenSession over hs2 and hs2-http, "
    "the SASL handshake without -t): exit 143 at once, --stats says SIGTERM") {
  TestServer server("--silent");
  const std::string ldap = " -l -u etl --auth_creds_ok_in_clear --ldap_password_cmd 'echo pw' -t 0";
  for (const std::string& flags :
       {std::string(" -t 30000"), std::string(" -t 30000 --protocol hs2-http"), ldap}) {
    CAPTURE(flags);
    const std::string stats = tmp_path(".json");
    Background apply("apply --prior none --stats " + stats + flags + " -i " + server.address() +
                     " " + data("notifications/gzip-message.jsonl"));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto signalled = std::chrono::steady_clock::now();
    apply.signal(SIGTERM);
    const Run r = apply.wait(std::chrono::seconds(20));  // before: -t (30 s), or never
    CHECK(r.status == 143);
    CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(10));
    // It says what it was waiting for.
    CHECK(contains(r.err,
                   "atlas2kudu: connecting to " + server.address() + ": stopped by SIGTERM\n"));
    CHECK_FALSE(contains(r.err, "cannot connect"));
    CHECK(contains(slurp(stats), "\"stopped_by\":\"SIGTERM\""));
    std::remove(stats.c_str());
  }
}

TEST_CASE(
    "--deadline ends a statement still being planned (no reply yet) in about its time, exit 4") {
  // Each ExecuteStatement is answered after 30 s; the deadline is 2 s. hs2-http: the test server
  // answers one request at a time, so the other sessions' CloseSession waits for the close
  // timeout (5 s) behind the planning statement; Impala would answer it at once.
  for (const std::string& transport : {std::string("binary"), std::string("http")}) {
    CAPTURE(transport);
    TestServer server("--handler kit --latency-ms 30000 --transport " + transport);
    const std::string stats = tmp_path(".json");
    const auto started = std::chrono::steady_clock::now();
    const Run r = run("apply --deadline 2s --prior none --stats " + stats + " -i " +
                      server.address() + (transport == "http" ? " --protocol hs2-http " : " ") +
                      data("notifications/gzip-message.jsonl"));
    CHECK(r.status == 4);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));  // before: 30 s
    CHECK(contains(r.err, "--deadline 2s reached"));
    CHECK(contains(r.err, "(stopped by deadline)"));
    CHECK(contains(slurp(stats), "\"stopped_by\":\"deadline\""));
    // The server may run it all the same: said apart from the statements that ran.
    CHECK(contains(r.err,
                   " 0 statements (1 more cut short by the stop before the server finished: it "
                   "may have run), "));
    CHECK(json_number(slurp(stats), "statements_cut_short") == 1);
    std::remove(stats.c_str());
  }
}

TEST_CASE("a stop during an hs2-http request never sends that request again") {
  // Regression: the aborted request's bytes stayed in the transport's buffer, and CloseSession
  // was appended to them, so the server ran the statement a second time.
  TestServer server("--handler kit --latency-ms 2000 --transport http");
  const Run r = run("apply --deadline 1s --prior none --protocol hs2-http -i " + server.address() +
                    " " + data("notifications/gzip-message.jsonl"));
  CHECK(r.status == 4);
  // The server finishes what it was planning (2 s after it began); a second copy would follow.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  CHECK(lines_of(server.statements()).size() == 1);
}

TEST_CASE("a statement past --statement_timeout_ms is cancelled and the run fails with exit 4") {
  TestServer server("--handler kit --hang-at 1");
  const std::string stats = tmp_path(".json");
  const Run r = run("apply --statement_timeout_ms 300 --prior none --stats " + stats + " -i " +
                    server.address() + " " + data("notifications/gzip-message.jsonl"));
  CHECK(r.status == 4);
  CHECK(contains(r.err, "--statement_timeout_ms 300 ms; cancelled"));
  CHECK(json_number(server.report(), "operations_cancelled") == 1);
  // Counted apart, as a statement a stop cut short: its rows written before the cancel stay.
  CHECK(contains(r.err,
                 "0 statements (1 more cancelled at --statement_timeout_ms: it may have run "
                 "in part)"));
  CHECK(json_number(slurp(stats), "statements_timed_out") == 1);
  CHECK(json_number(slurp(stats), "statements_cut_short") == 0);
  std::remove(stats.c_str());
}

TEST_CASE(
    "row errors fail the run by default (exit 3), naming the table and the partition to "
    "add; the window is not checkpointed; --max-row-errors allows them") {
  TestServer server("--handler kit --audit-last-year 2030");
  // Two events of 2029 in window 1, one of 2031 in window 2.
  const std::string input = write_temp(".jsonl", create_table_line(1, "", 1861920000000) +
                                                     create_table_line(2, "", 1861920000001) +
                                                     create_table_line(3, "", 1930089600000));
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());
  const std::string stats = tmp_path(".json");
  const std::string args = "apply -i " + server.address() + " --window-events 2 --checkpoint " +
                           ckpt + " --stats " + stats + " " + input;
  Run r = run(args);
  CHECK(r.status == 3);
  CHECK(contains(r.err, "window 2, upsert phase, statement"));  // the log line
  CHECK(contains(r.err, "1 row error over the run (entity_audit 1), more than --max-row-errors 0"));
  CHECK(contains(r.err, "event_ts lies in no range partition of entity_audit"));
  CHECK(contains(r.err,
                 "ALTER TABLE `atlas`.`entity_audit` ADD IF NOT EXISTS RANGE PARTITION "
                 "1924992000000000 <= VALUES < 1956528000000000;  -- 2031"));
  CHECK(contains(r.err, ", 1 row error\n"));                // the per-table line
  CHECK(json_number(slurp(ckpt), "windows_applied") == 1);  // window 2 is not recorded
  CHECK(contains(slurp(stats), "\"row_errors_by_table\":{"));
  CHECK(contains(slurp(stats), "\"entity_audit\":1"));
  // Allowed: the rerun applies window 2 again and completes.
  r = run(args + " --max-row-errors 1");
  CHECK(r.status == 0);
  CHECK(json_number(slurp(ckpt), "windows_applied") == 2);
  for (const auto& f : {input, ckpt, ckpt + ".lock", stats}) std::remove(f.c_str());
}

TEST_CASE(
    "a delete whose row another statement deleted first: Impala's row error is a row already "
    "deleted, and the run succeeds") {
  // Statement 8 of the server: the second run's delete of the entity's entity_by_qn row (after
  // the first run's two lookups and three upserts, and the second run's two lookups).
  const std::string created = write_temp(".jsonl", create_table_line(1, "", 1700000000000));
  const std::string deleted = write_temp(
      ".jsonl", envelope(entity_message("ENTITY_DELETE", "{\"qualifiedName\":\"db.t1@c\"}",
                                        ",\"eventTime\":1700000000100")) +
                    "\n");
  const std::string stats = tmp_path(".json");
  const std::string metrics = tmp_path(".prom");
  std::remove(metrics.c_str());
  for (const std::string format : {"text", "json"}) {
    CAPTURE(format);
    TestServer server("--handler kit --deleted-meanwhile-at 8");
    REQUIRE(run("apply -q -i " + server.address() + " " + created).status == 0);
    const std::string args = "apply -i " + server.address() + " --stats " + stats +
                             " --metrics-textfile " + metrics + " --log-format " + format + " ";
    const Run r = run(args + deleted);
    CHECK(r.status == 0);
    if (format == "text") {
      CHECK(contains(r.err,
                     " atlas2kudu apply: window 1: delete statement 1 of 5 (table entity_by_qn): 1 "
                     "row already deleted when the delete reached it (by another writer's "
                     "statement); not counted as a row error\n"));
      CHECK(contains(r.err, " 0 row errors, 0 retries, 1 row already deleted, "));
      CHECK(contains(r.err, "; 1 row already deleted when its delete reached Kudu\n"));
      CHECK(contains(r.err,
                     "  entity_by_qn                       0 rows modified, 1 row "
                     "already deleted\n"));
    } else {
      CHECK(contains(r.err,
                     "\"event\":\"already-deleted\",\"window\":1,\"phase\":\"delete\","
                     "\"statement\":1,\"statements\":5,\"table\":\"entity_by_qn\","
                     "\"rows\":1}\n"));
      CHECK(contains(r.err, "\"row_errors\":0,\"retries\":0,\"rows_already_deleted\":1,"));
    }
    CHECK(json_number(slurp(stats), "rows_already_deleted") == 1);
    CHECK(json_number(slurp(stats), "row_errors") == 0);
    CHECK(contains(slurp(metrics),
                   "atlas2kudu_row_errors_total{command=\"apply\",table=\"entity_by_qn\"} 0\n"));
    // A counter: it adds up over the runs that write the file.
    CHECK(contains(slurp(metrics), "atlas2kudu_rows_already_deleted_total{command=\"apply\"} " +
                                       std::string(format == "text" ? "1" : "2") + "\n"));
    // -q: a harmless event, so no line (the summary and --stats still count it).
    if (format == "json") {
      TestServer quiet("--handler kit --deleted-meanwhile-at 8");
      REQUIRE(run("apply -q -i " + quiet.address() + " " + created).status == 0);
      const Run q = run("apply -q -i " + quiet.address() + " --stats " + stats + " " + deleted);
      CHECK(q.status == 0);
      CHECK(q.err.empty());
      CHECK(json_number(slurp(stats), "rows_already_deleted") == 1);
    }
  }
  for (const auto& f : {created, deleted, stats, metrics}) std::remove(f.c_str());
}

TEST_CASE(
    "a row the server refuses: set aside with --reject-file (0600, its event's position), "
    "else the run stops naming it") {
  TestServer server("--handler kit --max-cell-bytes 2000");
  std::string text;
  for (int n = 1; n <= 6; ++n) {
    text += create_table_line(n, ",\"d\":\"" + std::string(n == 4 ? 3000 : 10, 'x') + "\"",
                              1700000000000 + n);
  }
  const std::string input = write_temp(".jsonl", text);
  Run r = run("apply --prior none -i " + server.address() + " " + input);
  CHECK(r.status == 3);
  CHECK(contains(r.err, "the server refused 1 row:"));
  CHECK(contains(r.err, "written by " + input + ":4:"));
  CHECK(contains(r.err, "value too large for column 'props_json'"));
  CHECK(contains(r.err, "--reject-file FILE"));

  const std::string rejects = tmp_path(".rejects");
  std::remove(rejects.c_str());
  r = run("apply --prior none --max-rejects 1 --reject-file " + rejects + " -i " +
          server.address() + " " + input);
  CHECK(r.status == 0);
  CHECK(contains(r.err, "1 row refused by the server"));
  const std::string lines = slurp(rejects);
  CHECK(contains(lines, "\"line\":4,"));
  CHECK(contains(lines, "\"code\":\"server-refused\""));
  CHECK(mode_of(rejects) == 0600);

  // With --checkpoint the reject file is appended to: a resumed (here: finished) run keeps the
  // lines of the records it skips.
  std::remove(rejects.c_str());
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());
  const std::string resumable = "apply --prior none --max-rejects 1 --reject-file " + rejects +
                                " --checkpoint " + ckpt + " -i " + server.address() + " " + input;
  CHECK(run(resumable).status == 0);
  const std::string first_run = slurp(rejects);
  CHECK(contains(first_run, "\"line\":4,"));
  CHECK(run(resumable).status == 0);  // everything skipped: nothing refused, nothing truncated
  CHECK(slurp(rejects) == first_run);

  // Refused rows past --max-rejects stop the run after the executor ran the window, but the
  // window is not recorded, and the summary says so rather than promise a resume after it.
  std::string two_refused;
  for (int n = 1; n <= 6; ++n) {
    two_refused += create_table_line(
        n, ",\"d\":\"" + std::string(n == 2 || n == 5 ? 3000 : 10, 'x') + "\"", 1700000000000 + n);
  }
  const std::string over = write_temp(".jsonl", two_refused);
  const std::string over_ckpt = tmp_path(".ckpt");
  std::remove(over_ckpt.c_str());
  const std::string over_stats = tmp_path(".json");
  const std::string over_metrics = tmp_path(".prom");
  std::remove(over_metrics.c_str());
  r = run("apply --prior none --max-rejects 1 --reject-file " + rejects + " --checkpoint " +
          over_ckpt + " --stats " + over_stats + " --metrics-textfile " + over_metrics + " -i " +
          server.address() + " " + over);
  CHECK(r.status == 2);
  CHECK(contains(r.err,
                 "atlas2kudu: more than 1 rejected (--max-rejects counts malformed records and "
                 "rows the server refused): the server refused 2 rows of window 1 (0 rejected "
                 "before it), all written to " +
                     rejects +
                     "; the window's other rows were applied, but the window is not recorded as "
                     "done, and the server refuses the same rows when it runs again: give "
                     "--max-rejects 2 or more to set them aside and go on"));
  // Both rows are in the file, and the window is not counted as applied: not in the summary, the
  // stats, nor as progress in the metrics (a backfill stuck on it must raise the alert).
  CHECK(contains(slurp(rejects), "\"line\":2,"));
  CHECK(contains(slurp(rejects), "\"line\":5,"));
  CHECK(contains(r.err, " 0 windows applied, "));
  // Its statements ran all the same: said apart, since they belong to no window applied.
  const std::string ran = std::to_string(json_number(slurp(over_stats), "applied_statements"));
  CHECK(ran != "0");
  CHECK(contains(r.err, " 0 windows applied, " + ran + " statements (" + ran +
                            " in a window not finished), "));
  CHECK(json_number(slurp(over_stats), "applied_windows") == 0);
  CHECK(!contains(slurp(over_metrics), "atlas2kudu_last_progress_timestamp_seconds{"));
  // The file did not exist: nothing is "as earlier runs left it".
  CHECK(contains(r.err, "atlas2kudu apply: no window of this run was recorded, so " + over_ckpt +
                            " was not created; the same command run again starts from the "
                            "beginning\n"));
  CHECK(!std::filesystem::exists(over_ckpt));
  for (const auto& f : {input, over, rejects, ckpt, ckpt + ".lock", over_ckpt, over_ckpt + ".lock",
                        over_stats, over_metrics})
    std::remove(f.c_str());
}

TEST_CASE("protocol mismatches are named with the flag to try; TLS failures exit 5") {
  const std::string input = data("notifications/gzip-message.jsonl");
  {
    TestServer http("--transport http --http-reject-non-http");
    const Run r = run("apply -i " + http.address() + " " + input);
    CHECK(r.status == 4);
    CHECK(contains(r.err, "it answers in HTTP"));
    CHECK(contains(r.err, "--protocol hs2-http"));
    const Run tls = run("apply --ssl --ca_cert " + tls_files().ca + " --protocol hs2-http -i " +
                        http.address() + " " + input);
    CHECK(tls.status == 5);
    CHECK(contains(tls.err, "try without --ssl"));
  }
  {
    TestServer binary("--transport binary");
    Run r = run("apply --protocol hs2-http -i " + binary.address() + " " + input);
    CHECK(r.status == 4);
    CHECK(contains(r.err, "--protocol hs2"));
    r = run("apply --ssl --ca_cert " + tls_files().ca + " -i " + binary.address() + " " + input);
    CHECK(r.status == 5);
    CHECK(contains(r.err, "try without --ssl"));
    // hs2-http with --ssl against it: the same words (it showed libcurl's SSL_ERROR_SYSCALL alone).
    r = run("apply --protocol hs2-http --ssl --connect_max_tries 1 --ca_cert " + tls_files().ca +
            " -i " + binary.address() + " " + input);
    CHECK(r.status == 5);
    CHECK(contains(r.err, "atlas2kudu: TLS handshake with " + binary.address() + " failed: "));
    CHECK(contains(r.err, "; does the server use TLS on this port? try without --ssl\n"));
  }
}

// As the man page says: --max-rejects bounds one run. A rerun counts only what it reads.
TEST_CASE("--max-rejects counts one run's rejections: a rerun with --checkpoint starts from 0") {
  TestServer server("--handler kit");
  // Windows of 5 events, a record that is not JSON in each of the first three.
  std::string text;
  for (int n = 1; n <= 15; ++n) {
    if (n == 2 || n == 7 || n == 12) text += "{\"broken\":\n";
    text += create_table_line(n, "", 1700000000000 + n);
  }
  const std::string input = write_temp(".jsonl", text);
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());
  const std::string args = "apply --prior none -i " + server.address() +
                           " --window-events 5 --max-rejects 2 --checkpoint " + ckpt + " " + input;
  Run r = run(args);
  CHECK(r.status == 2);
  CHECK(contains(r.err,
                 "more than 2 records rejected (--max-rejects); stopped at " + input + ":14:"));
  CHECK(json_number(slurp(ckpt), "windows_applied") == 2);
  r = run(args);
  CHECK(r.status == 0);
  CHECK(contains(r.err, "(18 records, 1 rejected)"));  // 12 skipped, window 3 read again
  for (const auto& f : {input, ckpt, ckpt + ".lock"}) std::remove(f.c_str());
}

TEST_CASE("apply --checkpoint leaves the inputs after one cut short for a later run") {
  // a.jsonl is still being written (its last record cut short), b.jsonl is ready: b waits, so
  // that the rest of a, when it comes, is applied before it. Said also with -q.
  const std::vector<std::string> examples = example_files();
  const std::string whole_a = slurp(examples[0]);
  const std::string a = tmp_path(".jsonl");
  const std::string b = write_temp(".jsonl", slurp(examples[1]));
  const std::string checkpoint = tmp_path(".ckpt");
  std::remove(checkpoint.c_str());  // a new checkpoint
  const std::string stats = tmp_path(".json");
  const auto write_a = [&](const std::string& text) {
    std::FILE* f = std::fopen(a.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  const std::string cut_a = whole_a.substr(0, whole_a.size() - 40);
  write_a(cut_a);
  TestServer server("--handler kit");
  const std::string apply = "apply -q -i " + server.address() + " --prior none --checkpoint " +
                            checkpoint + " --max-rejects 5 --stats " + stats + " " + a + " " + b;
  const Run first = run(apply);
  CHECK(first.status == 0);
  CHECK(contains(first.err, "atlas2kudu apply: warning: " + a +
                                " ends in a record cut short (still being written?), so " + b +
                                " was not read: the rest of " + a +
                                ", when it comes, is applied before it."));
  CHECK(json_number(slurp(stats), "inputs_held_back") == 1);
  CHECK(contains(server.statements(), "UPSERT"));  // a's whole records ran
  const std::string applied_first = server.statements();

  // a is complete now: the rerun reads the rest of it, then b. (Under 64 KiB, it grew into a new
  // identity: it is recognised by its name and its first 3 records, the same.)
  write_a(whole_a);
  const Run second = run(apply);
  CHECK(second.status == 0);
  CHECK(contains(second.err,
                 "warning: with --prior none this run knows nothing of the 3 records "
                 "it skipped (--checkpoint)"));
  CHECK_FALSE(contains(second.err, "recognised as one an earlier run applied, but not"));
  CHECK(json_number(slurp(stats), "inputs_held_back") == 0);
  CHECK(contains(slurp(checkpoint), "\"complete\":true"));
  CHECK(server.statements().size() > applied_first.size());

  // Standard input cannot wait for a later run (a pipe's records would be gone): read on.
  std::remove(checkpoint.c_str());
  write_a(cut_a);
  const Run piped = run("apply -q -i " + server.address() + " --prior none --checkpoint " +
                            checkpoint + " --max-rejects 5 --stats " + stats + " " + a + " -",
                        b);
  CHECK(piped.status == 0);
  CHECK_FALSE(contains(piped.err, "warning:"));
  CHECK(json_number(slurp(stats), "inputs_held_back") == 0);
  CHECK(json_number(slurp(stats), "sources") == 2);
  for (const auto& f : {a, b, checkpoint, checkpoint + ".lock", stats}) std::remove(f.c_str());
}

TEST_SUITE_END();
