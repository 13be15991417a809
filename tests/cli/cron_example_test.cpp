// examples/cron/atlas2kudu-backfill.sh, run as cron would run it, against the standalone HS2 test
// server over SASL PLAIN with the password in a file: the inbox applied once (the tables equal a
// direct `apply` of the same files), applied files moved, a dated reject file, stats, an empty
// inbox a no-op, an export still being written left for the next run, a held lock exit 75, a
// failed run leaving its inputs for the next one, and stderr kept for failures when asked.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "binary_test_util.h"

TEST_SUITE_BEGIN("cron_example");

using namespace atlas2kudu::testing;
namespace fs = std::filesystem;

namespace {

const char* kPassword = "cr0n-s3cret";

struct Dirs {
  std::string root, state, inbox;
  Dirs() {
    root = tmp_path("");
    std::remove(root.c_str());
    state = root + "/state";
    inbox = root + "/inbox";
    fs::create_directories(inbox);
  }
  ~Dirs() { fs::remove_all(root); }
};

void write_file(const std::string& path, const std::string& text, fs::perms perms) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  fs::permissions(path, perms);
}

// The configuration the example documents, pointed at the test server.
std::string write_conf(const Dirs& d, const std::string& address, const std::string& password) {
  const std::string password_file = d.root + "/ldap-password";
  write_file(password_file, password, fs::perms::owner_read);
  const std::string conf = d.root + "/backfill.conf";
  write_file(conf,
             "[atlas2kudu]\nimpalad = " + address + "\nldap = true\nuser = etl\n" +
                 "ldap_password_cmd = cat " + password_file + "\n" +
                 "; a loopback test server without TLS\nauth_creds_ok_in_clear = true\n" +
                 "[atlas2kudu.apply]\nmax_rejects = 100\n",
             fs::perms::owner_read | fs::perms::owner_write);
  return conf;
}

std::vector<std::string> examples() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(std::string(ATLAS2KUDU_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() == ".jsonl") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// `settings`: more of the script's variables; exports are applied however new they are, unless
// settings gives ATLAS2KUDU_SETTLE (the last one given wins).
std::string backfill_command(const Dirs& d, const std::string& conf, const std::string& settings) {
  const std::string script =
      std::string(ATLAS2KUDU_SOURCE_DIR) + "/examples/cron/atlas2kudu-backfill.sh";
  return std::string("ATLAS2KUDU=") + ATLAS2KUDU_BINARY + " ATLAS2KUDU_CONF=" + conf +
         " ATLAS2KUDU_STATE=" + d.state + " ATLAS2KUDU_INBOX=" + d.inbox +
         " ATLAS2KUDU_DEADLINE=2m" + " ATLAS2KUDU_METRICS=" + d.state + "/atlas2kudu.prom" +
         " ATLAS2KUDU_SETTLE=0 " + settings + " " + script;
}

Run backfill(const Dirs& d, const std::string& conf, const std::string& settings = "") {
  return run_shell(backfill_command(d, conf, settings), "/dev/null", 120);
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string utc_date() {
  char buf[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

}  // namespace

TEST_CASE("the backfill script applies the inbox once, then idles, locks and keeps failed inputs") {
  const std::string env = std::string("HS2_TEST_SERVER_PASSWORD=") + kPassword;
  TestServer server("--transport sasl --user etl", env);
  Dirs d;
  const std::string conf = write_conf(d, server.address(), kPassword);
  std::vector<std::string> expected_done;
  for (const auto& f : examples()) {
    fs::copy_file(f, d.inbox + "/" + fs::path(f).filename().string());
    expected_done.push_back(fs::path(f).filename().string());
  }
  // One export with a bad record among good ones: set aside, the run goes on.
  write_file(d.inbox + "/99-one-bad-record.jsonl",
             slurp(examples().front()) + "{\"message\": tru}\n", fs::perms::owner_all);
  expected_done.push_back("99-one-bad-record.jsonl");
  std::sort(expected_done.begin(), expected_done.end());

  const Run first = backfill(d, conf);
  INFO(first.err);
  CHECK(first.status == 0);
  CHECK(contains(first.err, "atlas2kudu-backfill: applying 5 export(s)"));
  CHECK(contains(first.err, "moved to " + d.inbox + "/done"));
  CHECK(names_in(d.inbox).empty());
  CHECK(names_in(d.inbox + "/done") == expected_done);
  CHECK(fs::exists(d.state + "/checkpoint"));
  // The dated reject file holds the bad record, with its position.
  const std::string rejects = slurp(d.state + "/rejects/" + utc_date() + ".jsonl");
  CHECK(contains(rejects, "99-one-bad-record.jsonl"));
  CHECK(std::count(rejects.begin(), rejects.end(), '\n') == 1);
  const std::vector<std::string> stats = names_in(d.state + "/stats");
  REQUIRE(stats.size() == 1);
  const std::string stats_text = slurp(d.state + "/stats/" + stats[0]);
  CHECK(contains(stats_text, "\"completed\":true"));
  // node_exporter's textfile: the run's status and its success time.
  const std::string metrics = slurp(d.state + "/atlas2kudu.prom");
  CHECK(contains(metrics, "atlas2kudu_last_exit_status{command=\"apply\"} 0\n"));
  CHECK(contains(metrics, "atlas2kudu_last_success_timestamp_seconds{command=\"apply\"} "));
  // ... and the script's own beside it, readable by node_exporter.
  const std::string script_metrics = d.state + "/atlas2kudu-backfill.prom";
  CHECK(contains(slurp(script_metrics), "\natlas2kudu_backfill_last_exit_status 0\n"));
  CHECK(contains(slurp(script_metrics), "\natlas2kudu_backfill_exports_waiting 0\n"));
  CHECK(contains(slurp(script_metrics), "\natlas2kudu_backfill_last_run_timestamp_seconds "));
  CHECK((fs::status(script_metrics).permissions() & fs::perms::others_read) != fs::perms::none);
  // The password stays in its file.
  CHECK_FALSE(contains(first.err, kPassword));
  CHECK_FALSE(contains(stats_text, kPassword));

  // The tables equal a direct apply of the same files in the same order on a fresh server.
  std::string via_script, direct;
  server.report(&via_script);
  {
    TestServer reference("");
    std::string files;
    for (const auto& f : expected_done) files += " " + d.inbox + "/done/" + f;
    const Run r = run("apply -q --max-rejects 1 -i " + reference.address() + files);
    CHECK(r.status == 0);
    reference.report(&direct);
  }
  CHECK_FALSE(direct.empty());
  CHECK(via_script == direct);

  // Nothing new: a no-op.
  const Run idle = backfill(d, conf);
  CHECK(idle.status == 0);
  CHECK(contains(idle.err, "the inbox is empty; nothing to apply"));

  // An export modified within ATLAS2KUDU_SETTLE seconds waits for the next run, said once; with
  // ATLAS2KUDU_REPORT=failures a run that succeeds writes nothing on stderr (cron mails nothing).
  fs::copy_file(examples().back(), d.inbox + "/100-later.jsonl");
  const Run settling = backfill(d, conf, "ATLAS2KUDU_SETTLE=3600");
  CHECK(settling.status == 0);
  CHECK(contains(settling.err, "1 export(s) modified in the last 3600 s wait for the next run: " +
                                   d.inbox + "/100-later.jsonl"));
  CHECK_FALSE(contains(settling.err, "the inbox is empty"));
  CHECK(names_in(d.inbox) == std::vector<std::string>{"100-later.jsonl"});
  const Run quiet = backfill(d, conf, "ATLAS2KUDU_SETTLE=3600 ATLAS2KUDU_REPORT=failures");
  CHECK(quiet.status == 0);
  CHECK(quiet.err.empty());
  // A run that applied windows and then reached its deadline is progress, not a failure to mail
  // (a stand-in binary writes such a --stats and exits 4); one that applied nothing is mailed.
  const std::string stand_in = d.root + "/deadline-stand-in";
  write_file(stand_in,
             "#!/bin/bash\nwhile [ $# -gt 0 ]; do [ \"$1\" = --stats ] && s=$2; shift; done\n"
             "printf '{\"stopped_by\":\"deadline\",\"applied_windows\":%s}' \"$WINDOWS\" > \"$s\"\n"
             "echo 'atlas2kudu: --deadline 2m reached' >&2; exit 4\n",
             fs::perms::owner_all);
  const Run progressed =
      backfill(d, conf, "ATLAS2KUDU=" + stand_in + " WINDOWS=3 ATLAS2KUDU_REPORT=failures");
  CHECK(progressed.status == 4);
  CHECK(progressed.err.empty());
  const Run stuck =
      backfill(d, conf, "ATLAS2KUDU=" + stand_in + " WINDOWS=0 ATLAS2KUDU_REPORT=failures");
  CHECK(stuck.status == 4);
  CHECK(contains(stuck.err, "--deadline 2m reached"));
  CHECK(names_in(d.inbox) == std::vector<std::string>{"100-later.jsonl"});

  const Run bad_setting = backfill(d, conf, "ATLAS2KUDU_SETTLE=1m");
  CHECK(bad_setting.status == 64);
  CHECK(contains(bad_setting.err, "ATLAS2KUDU_SETTLE=1m: give a whole number of seconds"));
  // The script's metrics say so, although atlas2kudu never ran; one export waits.
  CHECK(contains(slurp(script_metrics), "\natlas2kudu_backfill_last_exit_status 64\n"));
  CHECK(contains(slurp(script_metrics), "\natlas2kudu_backfill_exports_waiting 1\n"));

  // Another backfill holding the lock: this one does nothing, exit 75.
  {
    const int fd = ::open((d.state + "/backfill.lock").c_str(), O_WRONLY | O_APPEND);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
    const Run locked = backfill(d, conf);
    CHECK(locked.status == 75);
    CHECK(contains(locked.err, "another backfill is running"));
    ::close(fd);
  }
  CHECK(names_in(d.inbox) == std::vector<std::string>{"100-later.jsonl"});

  // A failed run (the password file now holds a wrong password) leaves its input in the inbox;
  // with ATLAS2KUDU_REPORT=failures all its lines reach stderr, the script's and atlas2kudu's.
  write_conf(d, server.address(), "wrong-password");
  const Run failed = backfill(d, conf, "ATLAS2KUDU_REPORT=failures");
  CHECK(failed.status != 0);
  CHECK(contains(failed.err, "atlas2kudu-backfill: applying 1 export(s)"));
  CHECK(contains(failed.err, "atlas2kudu: "));
  CHECK(contains(failed.err, "the exports stay in the inbox for the next run"));
  CHECK(names_in(d.inbox) == std::vector<std::string>{"100-later.jsonl"});
  CHECK_FALSE(contains(failed.err, "wrong-password"));
  // The metrics say it failed and still carry the last success.
  const std::string after = slurp(d.state + "/atlas2kudu.prom");
  CHECK_FALSE(contains(after, "atlas2kudu_last_exit_status{command=\"apply\"} 0\n"));
  CHECK(contains(after, "atlas2kudu_last_success_timestamp_seconds{command=\"apply\"} "));

  // No private file for the run's lines (TMPDIR not a directory): its documented status, and
  // why, before atlas2kudu runs.
  const Run no_tmp =
      backfill(d, conf, "ATLAS2KUDU_REPORT=failures TMPDIR=" + d.inbox + "/100-later.jsonl");
  CHECK(no_tmp.status == 73);
  CHECK(contains(no_tmp.err, "could not be created (mktemp: "));
  CHECK(contains(no_tmp.err, "set TMPDIR to a writable directory\n"));
  CHECK_FALSE(contains(no_tmp.err, "applying"));
  CHECK(contains(slurp(d.state + "/atlas2kudu-backfill.prom"),
                 "atlas2kudu_backfill_last_exit_status 73\n"));
}

TEST_CASE("the backfill script moves only the exports applied to their end and unchanged since") {
  const std::string env = std::string("HS2_TEST_SERVER_PASSWORD=") + kPassword;
  TestServer server("--transport sasl --user etl", env);
  Dirs d;
  const std::string conf = write_conf(d, server.address(), kPassword);
  // A split message cut across two hourly exports: the first ends with three of its five parts.
  const std::string split =
      std::string(ATLAS2KUDU_SOURCE_DIR) + "/examples/03-split-message-interleaved.jsonl";
  const std::vector<std::string> lines = lines_of(slurp(split));
  REQUIRE(lines.size() == 8);
  std::string early, late;
  for (std::size_t i = 0; i < lines.size(); ++i) (i < 4 ? early : late) += lines[i] + "\n";
  write_file(d.inbox + "/2026120501.jsonl", early, fs::perms::owner_all);
  const Run first = backfill(d, conf);
  INFO(first.err);
  CHECK(first.status == 0);
  CHECK(contains(first.err, d.inbox + "/2026120501.jsonl is not applied to its end"));
  CHECK(
      contains(first.err, "done; 0 export(s) moved to " + d.inbox + "/done, 1 left in the inbox"));
  CHECK(names_in(d.inbox) == std::vector<std::string>{"2026120501.jsonl"});
  // The next hour's export brings the other parts: both are applied, and both move.
  write_file(d.inbox + "/2026120502.jsonl", late, fs::perms::owner_all);
  const Run second = backfill(d, conf);
  INFO(second.err);
  CHECK(second.status == 0);
  CHECK(names_in(d.inbox).empty());
  CHECK(names_in(d.inbox + "/done") ==
        std::vector<std::string>{"2026120501.jsonl", "2026120502.jsonl"});
  // The tables equal a direct apply of the whole file: the split message was applied.
  std::string via_script, direct;
  server.report(&via_script);
  {
    TestServer reference("");
    const Run r = run("apply -q --max-rejects 10 -i " + reference.address() + " " + split);
    CHECK(r.status == 0);
    reference.report(&direct);
  }
  CHECK(via_script == direct);

  // An export that changes while the run reads it (a stand-in appends to it, then runs
  // atlas2kudu) stays for the next run, which moves it. The stand-in also says whether it
  // inherited the script's lock.
  const std::string stand_in = d.root + "/appending-stand-in";
  write_file(stand_in,
             std::string("#!/bin/bash\nfor last; do :; done\nprintf '\\n' >> \"$last\"\n") +
                 "if [ -e /proc/self/fd/9 ]; then echo 'descriptor 9 inherited' >&2; fi\n" +
                 "exec " + ATLAS2KUDU_BINARY + " \"$@\"\n",
             fs::perms::owner_all);
  fs::copy_file(examples().front(), d.inbox + "/2026120503.jsonl");
  const Run changed = backfill(d, conf, "ATLAS2KUDU=" + stand_in);
  INFO(changed.err);
  CHECK(changed.status == 0);
  CHECK(contains(changed.err, d.inbox + "/2026120503.jsonl changed while the run read it"));
  CHECK_FALSE(contains(changed.err, "descriptor 9 inherited"));
  CHECK(names_in(d.inbox) == std::vector<std::string>{"2026120503.jsonl"});
  const Run after = backfill(d, conf);
  CHECK(after.status == 0);
  CHECK(names_in(d.inbox).empty());

  // Each run keeps its own stats file (named by its start second and its PID).
  const std::vector<std::string> stats = names_in(d.state + "/stats");
  CHECK(stats.size() == 4);

  // An export whose last record is cut short at its end (its producer died mid-write) is left
  // to be read again, as the checkpoint records it: the export stays, and after 3 runs in a row
  // unchanged the script says so, exit 65 (mailed even with ATLAS2KUDU_REPORT=failures). The
  // export after it waits with it, so that it is applied after the first one's rest.
  const std::vector<std::string> good = lines_of(slurp(examples().front()));
  REQUIRE(good.size() >= 2);
  write_file(d.inbox + "/2026120504.jsonl", good[0] + "\n" + good[1].substr(0, 40),
             fs::perms::owner_all);
  fs::copy_file(examples()[1], d.inbox + "/2026120505.jsonl");
  for (int run = 1; run <= 3; ++run) {
    CAPTURE(run);
    const Run r = backfill(d, conf, "ATLAS2KUDU_REPORT=failures");
    CHECK(r.status == (run < 3 ? 0 : 65));
    CHECK(r.err.empty() == (run < 3));
    CHECK(names_in(d.inbox) == std::vector<std::string>{"2026120504.jsonl", "2026120505.jsonl"});
    if (run == 3) {
      CHECK(contains(r.err, d.inbox + "/2026120504.jsonl is not applied to its end in 3 runs in "
                                      "a row, unchanged"));
      CHECK(contains(r.err,
                     "/2026120504.jsonl ends in a record cut short (still being "
                     "written?), so " +
                         d.inbox + "/2026120505.jsonl was not read"));
    }
  }
  fs::remove(d.inbox + "/2026120504.jsonl");  // looked at
  const Run unblocked = backfill(d, conf);
  CHECK(unblocked.status == 0);
  CHECK(names_in(d.inbox).empty());

  // A name the checkpoint writes escaped (a tab here) cannot be matched: the export stays, exit
  // 65 says why; renamed, it is recognised by its content and moves.
  fs::copy_file(examples().front(), d.inbox + "/tab\there.jsonl");
  const Run tab = backfill(d, conf);
  CHECK(tab.status == 65);
  CHECK(contains(tab.err,
                 "/tab\\there.jsonl': its name holds a quote, a backslash or a control "
                 "character, or is not UTF-8"));
  CHECK(names_in(d.inbox) == std::vector<std::string>{"tab\there.jsonl"});
  fs::rename(d.inbox + "/tab\there.jsonl", d.inbox + "/tab-here.jsonl");
  const Run renamed = backfill(d, conf);
  CHECK(renamed.status == 0);
  CHECK(names_in(d.inbox).empty());

  // So does one that glibc's iconv takes for UTF-8 but is not: a code point above U+10FFFF.
  const std::string beyond = "beyond-\xf4\x90\x80\x80.jsonl";
  fs::copy_file(examples().front(), d.inbox + "/" + beyond);
  const Run high = backfill(d, conf);
  CHECK(high.status == 65);
  CHECK(contains(high.err, "or is not UTF-8"));
  CHECK(names_in(d.inbox) == std::vector<std::string>{beyond});
  fs::remove(d.inbox + "/" + beyond);

  // A run that succeeds but cannot write the script's own metrics says so, also when stderr is
  // kept for failures; the status stays atlas2kudu's.
  const std::string script_metrics = d.state + "/atlas2kudu-backfill.prom";
  fs::remove(script_metrics);
  fs::create_directory(script_metrics);  // in the way of the file
  fs::copy_file(examples().back(), d.inbox + "/2026120506.jsonl");
  const Run unwritable = backfill(d, conf, "ATLAS2KUDU_REPORT=failures");
  CHECK(unwritable.status == 0);
  CHECK(contains(unwritable.err, "cannot write " + script_metrics));
  CHECK(fs::is_empty(script_metrics));
  CHECK(names_in(d.inbox).empty());
  fs::remove(script_metrics);

  // An inbox given as a symbolic link to the directory is read through it.
  const std::string link = d.root + "/inbox-link";
  fs::create_directory_symlink(d.inbox, link);
  fs::copy_file(examples().back(), d.inbox + "/2026120505.jsonl");
  const Run linked = backfill(d, conf, "ATLAS2KUDU_INBOX=" + link);
  CHECK(linked.status == 0);
  CHECK(contains(linked.err, "applying 1 export(s)"));
  CHECK(names_in(d.inbox).empty());

  // An inbox that is not there is a mistake (a typo, a spool not mounted), not an empty day.
  Dirs missing;
  fs::remove_all(missing.inbox);
  const Run absent = backfill(missing, conf);
  CHECK(absent.status == 66);
  CHECK(contains(absent.err, "the inbox " + missing.inbox + " does not exist"));
  CHECK_FALSE(fs::exists(missing.inbox));
}

TEST_CASE(
    "a SIGTERM or SIGQUIT to the backfill script alone stops atlas2kudu cleanly, waited for") {
  // `kill PID` of the script, as by hand or from another cron job: bash runs its trap only after
  // a command in the foreground ends, so atlas2kudu ran on to the end of its inputs. SIGQUIT
  // (which atlas2kudu in the background ignores) stops it by a SIGTERM: the script exited at
  // once, and atlas2kudu ran on alone, its lock held against the next run.
  const std::string env = std::string("HS2_TEST_SERVER_PASSWORD=") + kPassword;
  // Not a structured binding: CAPTURE's lambda may not capture one before clang 16.
  for (const std::pair<int, int>& signal_and_status :
       {std::pair{SIGTERM, 143}, std::pair{SIGQUIT, 131}}) {
    const int signo = signal_and_status.first;
    const int status = signal_and_status.second;
    CAPTURE(signo);
    TestServer server("--transport sasl --user etl --latency-ms 400", env);
    Dirs d;
    const std::string conf = write_conf(d, server.address(), kPassword);
    for (const auto& f : examples()) {
      fs::copy_file(f, d.inbox + "/" + fs::path(f).filename().string());
    }
    Background script(ShellCommand{"exec env " + backfill_command(d, conf, "")});
    REQUIRE(eventually([&] { return !server.statements().empty(); }));
    const auto signalled = std::chrono::steady_clock::now();
    script.signal(signo);
    const Run r = script.wait(std::chrono::seconds(30));
    CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(5));
    CHECK(r.status == status);
    // atlas2kudu stopped by a SIGTERM, and had ended when the script did: its stats are written.
    const std::vector<std::string> stats = names_in(d.state + "/stats");
    REQUIRE(stats.size() == 1);
    CHECK(contains(slurp(d.state + "/stats/" + stats[0]), "\"stopped_by\":\"SIGTERM\""));
    CHECK(json_number(server.report(), "open_sessions") == 0);
    CHECK(names_in(d.inbox).size() == examples().size());  // nothing moved: the next run resumes
  }
}

TEST_SUITE_END();
