// What an unattended run leaves to look at, end to end with the real binary (and the standalone
// HS2 test server for apply): the log lines on a stderr that is not a terminal (one per window,
// retry, reconnect and 10 s waiting on the server; text and JSON), the live progress line's
// percent and ETA on a terminal (a pseudo-terminal made by script(1)), the --stats document's
// versioned fields, and the --metrics-textfile scraped with Prometheus's own text parser
// (python3-prometheus-client).
#include <doctest/doctest.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "binary_test_util.h"
#include "cli/metrics.h"
#include "util/version.h"

TEST_SUITE_BEGIN("observability");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

std::string examples() {
  return joined(example_files());
}

const std::string kTime = R"((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ))";

// A window line: time, index, events, statements, rows, row errors, retries, seconds.
struct WindowLine {
  std::string time;
  long long index, events, statements, rows, row_errors, retries;
};

std::vector<WindowLine> window_lines(const std::string& err, const std::string& command) {
  // compile ran nothing: its lines leave out the row errors and retries (read as 0 here).
  const std::string server_counts =
      command == "compile" ? "()()" : R"((\d+) row errors?, (\d+) retr(?:y|ies), )";
  const std::regex line("^" + kTime + " atlas2kudu " + command +
                        R"(: window (\d+): (\d+) events?, (\d+) statements?, (\d+) rows?, )" +
                        server_counts + R"(\d+\.\d\d s(, closed early by --memory-budget)?$)");
  std::vector<WindowLine> out;
  for (const std::string& l : lines_of(err)) {
    if (l.find("atlas2kudu " + command + ": window") == std::string::npos) continue;
    if (!std::regex_search(l, std::regex(": window \\d+: \\d+ events?, "))) continue;  // waits
    std::smatch m;
    REQUIRE_MESSAGE(std::regex_match(l, m, line), l);
    const auto count = [](const std::ssub_match& text) {
      return text.length() ? std::stoll(text) : 0LL;
    };
    out.push_back(WindowLine{m[1], std::stoll(m[2]), std::stoll(m[3]), std::stoll(m[4]),
                             std::stoll(m[5]), count(m[6]), count(m[7])});
  }
  return out;
}

// Every sample of a Prometheus text file as Prometheus's parser reads it, one per line:
//   NAME TYPE {"command": "apply", "table": "entity_flat"} VALUE
std::vector<std::string> scrape(const std::string& path) {
  const std::string script = write_temp(
      ".py",
      "import json, sys\n"
      "from prometheus_client.parser import text_string_to_metric_families\n"
      "for family in text_string_to_metric_families(open(sys.argv[1]).read()):\n"
      "    for s in family.samples:\n"
      "        print(s.name, family.type, json.dumps(s.labels, sort_keys=True), repr(s.value))\n");
  const std::string out = tmp_path(".txt");
  // Debian's python3, which python3-prometheus-client (scripts/setup.sh) installs into.
  const int status = std::system(("/usr/bin/python3 " + script + " " + path + " >" + out).c_str());
  REQUIRE(status == 0);
  const std::vector<std::string> samples = lines_of(slurp(out));
  std::remove(script.c_str());
  std::remove(out.c_str());
  return samples;
}

// The value of sample `name` with `labels` (JSON, sorted keys) in a scrape, or nullopt.
std::optional<double> sample(const std::vector<std::string>& samples, const std::string& name,
                             const std::string& labels) {
  for (const std::string& s : samples) {
    std::istringstream in(s);
    std::string n, type;
    in >> n >> type;
    if (n != name) continue;
    std::string rest;
    std::getline(in, rest);
    const auto close = rest.rfind('}');
    if (rest.substr(1, close) != labels) continue;
    return std::stod(rest.substr(close + 1));
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("compile: one line per window when stderr is not a terminal; -q silences them") {
  const std::string stats = tmp_path(".json");
  const Run r = run("compile --window-events 5 --stats " + stats + examples());
  REQUIRE(r.status == 0);
  const std::string json = slurp(stats);
  const std::vector<WindowLine> lines = window_lines(r.err, "compile");
  REQUIRE(static_cast<long long>(lines.size()) == json_number(json, "windows"));
  long long events = 0, statements = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    CHECK(lines[i].index == static_cast<long long>(i + 1));
    CHECK(lines[i].events == 5 - (i + 1 == lines.size() ? 5 * lines.size() - 23 : 0));
    events += lines[i].events;
    statements += lines[i].statements;
  }
  CHECK(events == json_number(json, "events"));
  CHECK(statements == json_number(json, "statements"));
  // At the default --memory-budget the host's setting decides on transparent huge pages.
  CHECK(contains(json, "\"transparent_huge_pages\":true}"));
  // The summary stays the last line.
  CHECK(lines_of(r.err).back().starts_with("atlas2kudu compile: 23 events"));
  // One of a kind is said in the singular.
  const std::string one = write_temp(".jsonl", lines_of(slurp(example_files()[0]))[0] + "\n");
  const Run single = run("compile " + one);
  CHECK(contains(single.err, ": window 1: 1 event, "));
  CHECK(contains(single.err, "atlas2kudu compile: 1 event (1 record, 0 rejected) in 1 window -> "));
  std::remove(one.c_str());

  const Run quiet = run("compile -q --window-events 5" + examples());
  CHECK(quiet.status == 0);
  CHECK(quiet.err.empty());
  std::remove(stats.c_str());
}

TEST_CASE("compile --log-format json: the same window lines as JSON objects") {
  const Run text = run("compile --window-events 5" + examples());
  const Run r = run("compile --window-events 5 --log-format json" + examples());
  REQUIRE(r.status == 0);
  CHECK(r.out == text.out);
  const std::vector<WindowLine> expected = window_lines(text.err, "compile");
  std::vector<std::string> json_lines;
  for (const std::string& l : lines_of(r.err)) {
    if (l.starts_with("{")) json_lines.push_back(l);
  }
  REQUIRE(json_lines.size() == expected.size());
  simdjson::ondemand::parser parser;
  for (std::size_t i = 0; i < json_lines.size(); ++i) {
    CAPTURE(json_lines[i]);
    CHECK(std::regex_match(
        json_lines[i],
        std::regex(R"(^\{"time":")" + kTime.substr(1, kTime.size() - 2) +
                   R"(","command":"compile","event":"window","window":\d+,"events":\d+,)"
                   R"("closed_early":false,)"
                   R"("statements":\d+,"rows":\d+,"elapsed_seconds":\d+\.\d\d\}$)")));
    simdjson::padded_string padded(json_lines[i]);
    simdjson::ondemand::document doc = parser.iterate(padded);
    CHECK(std::uint64_t(doc["window"]) == static_cast<std::uint64_t>(expected[i].index));
    CHECK(std::uint64_t(doc["events"]) == static_cast<std::uint64_t>(expected[i].events));
    CHECK(std::uint64_t(doc["statements"]) == static_cast<std::uint64_t>(expected[i].statements));
    CHECK(std::uint64_t(doc["rows"]) == static_cast<std::uint64_t>(expected[i].rows));
  }
  const Run bad = run("compile --log-format xml" + examples());
  CHECK(bad.status == 64);
}

TEST_CASE(
    "apply logs each window, and a retry and a reconnect after a dropped connection, also in a "
    "prior-state lookup") {
  TestServer server("--handler kit --drop-at 3");
  const std::string stats = tmp_path(".json");
  const Run r =
      run("apply -i " + server.address() +
          " --prior none --window-events 5 --retry_backoff_ms 10 --stats " + stats + examples());
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const std::string json = slurp(stats);
  CHECK(json_number(json, "retries") == 1);
  CHECK(json_number(json, "reconnects") == 1);
  const std::vector<WindowLine> lines = window_lines(r.err, "apply");
  REQUIRE(static_cast<long long>(lines.size()) == json_number(json, "applied_windows"));
  long long rows = 0, retries = 0, statements = 0;
  for (const WindowLine& l : lines) {
    rows += l.rows;
    retries += l.retries;
    statements += l.statements;
  }
  CHECK(rows == json_number(json, "rows_modified"));
  CHECK(statements == json_number(json, "applied_statements"));
  CHECK(retries == 1);
  const std::string statement = R"((delete|upsert) statement \d+ of \d+ \(table \w+\))";
  int retry_lines = 0, reconnect_lines = 0;
  for (const std::string& l : lines_of(r.err)) {
    CAPTURE(l);
    if (contains(l, ": retry ")) {
      ++retry_lines;
      CHECK(std::regex_match(l, std::regex("^" + kTime +
                                           R"( atlas2kudu apply: window 1: retry 1 )"
                                           R"(of 5 in 0\.\d s: )" +
                                           statement + ": .+$")));
    }
    if (contains(l, ": reconnected ")) {
      ++reconnect_lines;
      CHECK(std::regex_match(l, std::regex("^" + kTime +
                                           R"( atlas2kudu apply: window 1: reconnected for retry )"
                                           R"(1 of 5: )" +
                                           statement + "$")));
    }
  }
  CHECK(retry_lines == 1);
  CHECK(reconnect_lines == 1);

  // With --prior impala (apply's default) the first statement is a prior-state lookup.
  TestServer lookups("--handler kit --drop-at 1");
  const std::string metrics = tmp_path(".prom");
  const Run prior =
      run("apply -i " + lookups.address() + " --retry_backoff_ms 10 --window-events 5" +
          " --stats " + stats + " --metrics-textfile " + metrics + examples());
  REQUIRE_MESSAGE(prior.status == 0, prior.err);
  // Counted as the lookups' (in --stats, the metrics and the summary), not as the statements'.
  const std::string prior_json = slurp(stats);
  CHECK(json_number(prior_json, "retries") == 0);
  const std::string lookup_json = prior_json.substr(prior_json.find("\"prior_lookups\":"));
  CHECK(json_number(lookup_json, "retries") == 1);
  CHECK(json_number(lookup_json, "reconnects") == 1);
  CHECK(json_number(lookup_json, "queries") >= 1);
  CHECK(json_number(lookup_json, "unreadable_props") == 0);
  CHECK(contains(slurp(metrics), "\natlas2kudu_lookup_retries_total{command=\"apply\"} 1\n"));
  CHECK(contains(prior.err, "; prior-state lookups: 1 retry\n"));
  std::remove(metrics.c_str());
  const std::vector<std::string> err = lines_of(prior.err);
  REQUIRE(err.size() >= 2);
  const std::string lookup = R"(prior-state lookup 1 \(table entity_flat\))";
  CHECK_MESSAGE(std::regex_match(err[0], std::regex("^" + kTime +
                                                    R"( atlas2kudu apply: window 1: retry 1 of 5 )"
                                                    R"(in 0\.\d s: )" +
                                                    lookup + ": .+$")),
                err[0]);
  CHECK_MESSAGE(std::regex_match(err[1], std::regex("^" + kTime +
                                                    R"( atlas2kudu apply: window 1: reconnected )"
                                                    R"(for retry 1 of 5: )" +
                                                    lookup + "$")),
                err[1]);

  // compile -i looks the same entities up, and logs the retry as apply does.
  TestServer compile_lookups("--handler kit --drop-at 1");
  const Run compiled =
      run("compile -i " + compile_lookups.address() +
          " --retry_backoff_ms 10 --window-events 5 --stats " + stats + examples());
  REQUIRE_MESSAGE(compiled.status == 0, compiled.err);
  CHECK(contains(compiled.err, " atlas2kudu compile: window 1: retry 1 of 5 in 0."));
  CHECK(contains(compiled.err, " atlas2kudu compile: window 1: reconnected for retry 1 of 5: " +
                                   std::string("prior-state lookup 1 (table entity_flat)")));
  CHECK(contains(compiled.err, "; prior-state lookups: 1 retry\n"));
  const std::string compile_json = slurp(stats);
  CHECK(json_number(compile_json.substr(compile_json.find("\"prior_lookups\":")), "retries") == 1);
  std::remove(stats.c_str());
}

TEST_CASE("a stored props cell that is not JSON: merged onto {}, warned, counted") {
  // entity_flat as another writer left it: the first example entity's props cut short.
  const std::string seed = write_temp(
      ".sql",
      "UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, "
      "`state`, `created_ts`, `updated_ts`, `props_json`) VALUES ("
      "'81f18e763257450cb1963b50c7e273be', 'hive_table', 'experiments.movies_info@cm', "
      "'movies_info', 'ACTIVE', 1, 1, '{\"owner\":\"impala\",\"note\":');\n");
  const auto warning = [](const std::string& command) {
    return "atlas2kudu " + command +
           ": warning: 1 stored props_json cell could not be read (entity "
           "81f18e76-3257-450c-b196-3b50c7e273be): not a JSON object as atlas2kudu writes it; the "
           "entity's attributes are merged onto {} instead, and the cell is replaced where its "
           "props_json is next written\n";
  };
  const std::string stats = tmp_path(".json");
  const std::string metrics = tmp_path(".prom");
  {
    TestServer server("--handler kit --seed-sql " + seed);
    const Run r = run("apply -i " + server.address() + " --stats " + stats +
                      " --metrics-textfile " + metrics + examples());
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(contains(r.err, warning("apply")));
    const std::string json = slurp(stats);
    CHECK(json_number(json.substr(json.find("\"prior_lookups\":")), "unreadable_props") == 1);
    CHECK(contains(slurp(metrics), "\natlas2kudu_unreadable_props_total{command=\"apply\"} 1\n"));
    // The cell now holds what the examples set, as JSON: "note" and its cut-off value are gone.
    std::string dump;
    server.report(&dump);
    CHECK(contains(dump, R"("props_json":{"createTime":1619751227000,"owner":"impala"})"));
    CHECK_FALSE(contains(dump, "note"));
  }
  {
    TestServer server("--handler kit --seed-sql " + seed);
    const Run compiled = run("compile -i " + server.address() + examples());
    REQUIRE_MESSAGE(compiled.status == 0, compiled.err);
    CHECK(contains(compiled.err, warning("compile")));
    // -q leaves the summary out, not the warning.
    const Run quiet = run("compile -q -i " + server.address() + " --stats " + stats + examples());
    REQUIRE_MESSAGE(quiet.status == 0, quiet.err);
    CHECK(quiet.err == warning("compile"));
    CHECK(json_number(slurp(stats), "unreadable_props") == 1);
  }
  std::remove(seed.c_str());
  std::remove(stats.c_str());
  std::remove(metrics.c_str());
}

TEST_CASE("apply: a statement waiting on the server is logged every 10 s") {
  TestServer server("--handler kit --hang-at 1");
  Background apply("apply -i " + server.address() + " --prior none --log-format text" + examples());
  REQUIRE(eventually([&] { return contains(apply.err_so_far(), "after 10 s"); },
                     std::chrono::seconds(40)));
  apply.signal(SIGTERM);
  const Run r = apply.wait();
  CHECK(r.status == 143);
  int waits = 0;
  for (const std::string& l : lines_of(r.err)) {
    if (!contains(l, "still waiting")) continue;
    ++waits;
    CHECK_MESSAGE(std::regex_match(l, std::regex("^" + kTime +
                                                 R"( atlas2kudu apply: window 1: still waiting )"
                                                 R"(on the server after 10 s: (delete|upsert) )"
                                                 R"(statement \d+ of \d+ \(table \w+\)$)")),
                  l);
  }
  CHECK(waits == 1);

  // A retry's back-off is no wait on the server: 11 s of it (the first statement's connection
  // dropped) make a retry line and a reconnect line, and no waiting line.
  TestServer dropping("--handler kit --drop-at 1");
  const Run backed_off = run("apply -i " + dropping.address() +
                             " --prior none --max_retries 1 --retry_backoff_ms 11000" + examples());
  CHECK(backed_off.status == 0);
  CHECK(contains(backed_off.err, "window 1: retry 1 of 1 in 1"));
  CHECK(contains(backed_off.err, "window 1: reconnected for retry 1 of 1: "));
  CHECK_FALSE(contains(backed_off.err, "still waiting"));
}

TEST_CASE("--stats: schema, version, times, exit status, error and the checkpoint written") {
  TestServer server("--handler kit");
  const std::string stats = tmp_path(".json");
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());
  const Run r = run("apply -i " + server.address() + " --window-events 5 --checkpoint " + ckpt +
                    " --stats " + stats + examples());
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::string json = slurp(stats);
  CHECK(std::regex_search(
      json, std::regex(R"(^\{"schema":1,"command":"apply","version":")" + std::string(kVersion) +
                       R"(","start_time":")" + kTime.substr(1, kTime.size() - 2) +
                       R"(","end_time":")" + kTime.substr(1, kTime.size() - 2) +
                       R"(","completed":true,"exit_status":0,"error":null,"elapsed_seconds":)")));
  std::string state = slurp(ckpt);
  state.pop_back();  // the newline
  CHECK(contains(json, ",\"checkpoint\":{\"file\":\"" + ckpt + "\",\"state\":" + state + "}}\n"));
  CHECK(contains(json, "\"windows_applied\":5"));
  // Per-table counts.
  CHECK(contains(json, "\"rows_modified_by_table\":{\"edge_in\":"));

  // A failure: the message printed is the error recorded; no checkpoint without --checkpoint.
  TestServer failing("--handler kit --fail-at '1:AnalysisException: Could not resolve table'");
  const Run failed =
      run("apply -i " + failing.address() + " --prior none --stats " + stats + examples());
  CHECK(failed.status == 3);
  json = slurp(stats);
  // The message, as printed after "atlas2kudu: " (it spans two lines), before the summary.
  const auto from = failed.err.find("atlas2kudu: window 1");
  const auto to = failed.err.find("\natlas2kudu apply: ", from);
  REQUIRE(to != std::string::npos);
  const std::string message = failed.err.substr(from + 12, to - from - 12);
  CHECK(contains(message, "AnalysisException: Could not resolve table"));
  CHECK(contains(json,
                 "\"completed\":false,\"exit_status\":3,\"error\":" + json_quote(message) + ","));
  CHECK(contains(json, "\"checkpoint\":null}\n"));

  // A failure before reading (the password helper fails) replaces the file too: a monitor must
  // not read the earlier run's outcome.
  const Run early = run("apply -i " + server.address() +
                        " -l -u etl --auth_creds_ok_in_clear "
                        "--ldap_password_cmd 'exit 3' --stats " +
                        stats + examples());
  CHECK(early.status == 5);
  json = slurp(stats);
  CHECK(contains(json, "\"command\":\"apply\""));
  CHECK(contains(json,
                 "\"completed\":false,\"exit_status\":5,\"error\":"
                 "\"--ldap_password_cmd: command failed (status 3)\","));
  CHECK(json_number(json, "records") == 0);
  // With the sections of a run that got further, empty: the same keys for a monitor.
  CHECK(json_number(json, "windows") == 0);
  CHECK(json_number(json, "applied_windows") == 0);
  CHECK(contains(json, "\"memory\":{\"budget\":268435456,"));
  CHECK(contains(json, "\"checkpoint\":null"));
  const Run missing = run("compile --stats " + stats + " /nonexistent/input.jsonl");
  CHECK(missing.status == 66);
  CHECK(json_number(slurp(stats), "statements") == 0);
  CHECK_FALSE(contains(slurp(stats), "applied_windows"));
  // Another output refused (a checkpoint where none can be created): --stats, safe on its own,
  // still records the failure.
  const Run no_ckpt = run("apply -i " + server.address() +
                          " --checkpoint /nonexistent/dir/run.ckpt --stats " + stats + examples());
  CHECK(no_ckpt.status == 74);
  CHECK(contains(slurp(stats),
                 "\"completed\":false,\"exit_status\":74,\"error\":\"--checkpoint "
                 "/nonexistent/dir/run.ckpt: cannot create it in /nonexistent/dir: "));
  // An output refused as such (here the --stats file is also an input) is never written.
  const std::string input = write_temp(".jsonl", "not json\n");
  const Run refused = run("check --stats " + input + " " + input);
  CHECK(refused.status == 64);
  CHECK(slurp(input) == "not json\n");
  std::remove(input.c_str());

  // check has the same header.
  const Run checked = run("check --stats " + stats + examples());
  CHECK(checked.status == 0);
  CHECK(slurp(stats).starts_with("{\"schema\":1,\"command\":\"check\",\"version\":"));
  CHECK(json_number(slurp(stats), "input_bytes") > 0);
  std::remove(stats.c_str());
  std::remove(ckpt.c_str());
  std::remove((ckpt + ".lock").c_str());
}

TEST_CASE("--metrics-textfile: Prometheus text a parser reads, last success kept on failure") {
  TestServer server("--handler kit");
  const std::string metrics = tmp_path(".prom");
  std::remove(metrics.c_str());
  const std::string stats = tmp_path(".json");
  const Run r = run("apply -i " + server.address() + " --window-events 5 --stats " + stats +
                    " --metrics-textfile " + metrics + examples());
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const std::string json = slurp(stats);
  std::vector<std::string> samples = scrape(metrics);
  const std::string apply = R"({"command": "apply"})";
  const auto table = [](const std::string& t) {
    return R"({"command": "apply", "table": ")" + t + "\"}";
  };
  CHECK(sample(samples, "atlas2kudu_last_exit_status", apply) == 0);
  CHECK(sample(samples, "atlas2kudu_events_total", apply) == json_number(json, "events"));
  CHECK(sample(samples, "atlas2kudu_records_total", apply) == json_number(json, "records"));
  CHECK(sample(samples, "atlas2kudu_rejected_total", apply) == 0);
  CHECK(sample(samples, "atlas2kudu_windows_total", apply) == json_number(json, "applied_windows"));
  CHECK(sample(samples, "atlas2kudu_retries_total", apply) == 0);
  CHECK(sample(samples, "atlas2kudu_reconnects_total", apply) == 0);
  auto success = sample(samples, "atlas2kudu_last_success_timestamp_seconds", apply);
  REQUIRE(success);
  CHECK(success == sample(samples, "atlas2kudu_last_run_timestamp_seconds", apply));
  CHECK(*success > 1.7e9);
  CHECK(sample(samples, "atlas2kudu_duration_seconds", apply) >= 0);
  double rows = 0, statements = 0;
  for (const char* t : {"edge_in", "edge_out", "entity_audit", "entity_by_qn",
                        "entity_classifications", "entity_flat"}) {
    CAPTURE(t);
    const auto n = sample(samples, "atlas2kudu_rows_total", table(t));
    REQUIRE(n);
    rows += *n;
    CHECK(sample(samples, "atlas2kudu_row_errors_total", table(t)) == 0);
    const auto s = sample(samples, "atlas2kudu_statements_total", table(t));
    if (s) statements += *s;
  }
  CHECK(rows == json_number(json, "rows_modified"));
  CHECK(statements == json_number(json, "statements"));
  CHECK(sample(samples, "atlas2kudu_rows_refused_total", apply) == 0);
  CHECK(contains(slurp(metrics), "# TYPE atlas2kudu_events_total counter\n"));
  CHECK(contains(slurp(metrics), "# TYPE atlas2kudu_last_exit_status gauge\n"));

  // The counters add up over the runs: the same run again doubles them (a counter that stayed
  // the same would hide the second run from increase()).
  const Run again = run("apply -i " + server.address() + " --window-events 5 --stats " + stats +
                        " --metrics-textfile " + metrics + examples());
  REQUIRE_MESSAGE(again.status == 0, again.err);
  samples = scrape(metrics);
  CHECK(sample(samples, "atlas2kudu_events_total", apply) == 2 * json_number(json, "events"));
  CHECK(sample(samples, "atlas2kudu_records_total", apply) == 2 * json_number(json, "records"));
  CHECK(sample(samples, "atlas2kudu_windows_total", apply) ==
        2 * json_number(json, "applied_windows"));
  double rows_again = 0;
  for (const char* t : {"edge_in", "edge_out", "entity_audit", "entity_by_qn",
                        "entity_classifications", "entity_flat"}) {
    rows_again += *sample(samples, "atlas2kudu_rows_total", table(t));
  }
  CHECK(rows_again == rows + json_number(slurp(stats), "rows_modified"));
  // A gauge is the last run's.
  CHECK(sample(samples, "atlas2kudu_last_exit_status", apply) == 0);
  success = sample(samples, "atlas2kudu_last_success_timestamp_seconds", apply);
  REQUIRE(success);

  // A file edited by hand: a sample with a timestamp and trailing blanks is read as its series
  // (not kept beside this run's sample as a second one), and a '}' inside a label value is no
  // end of the labels.
  {
    std::string text = slurp(metrics);
    const std::string refused = "atlas2kudu_rows_refused_total{command=\"apply\"} 0\n";
    const std::size_t at = text.find(refused);
    REQUIRE(at != std::string::npos);
    text.replace(at, refused.size(),
                 "atlas2kudu_rows_refused_total{command=\"apply\"} 7 1700000000000  \n");
    text +=
        "# HELP atlas2kudu_odd_total x\n# TYPE atlas2kudu_odd_total counter\n"
        "atlas2kudu_odd_total{command=\"apply\",table=\"a} 1\"} 5\n";
    std::FILE* f = std::fopen(metrics.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
    REQUIRE(run("apply -i " + server.address() + " --window-events 5 --metrics-textfile " +
                metrics + examples())
                .status == 0);
    const std::string after = slurp(metrics);
    CHECK(contains(after, "atlas2kudu_rows_refused_total{command=\"apply\"} 7\n"));
    CHECK(after.find("atlas2kudu_rows_refused_total{") ==
          after.rfind("atlas2kudu_rows_refused_total{"));
    CHECK(contains(after, "atlas2kudu_odd_total{command=\"apply\",table=\"a} 1\"} 5\n"));
    samples = scrape(metrics);  // still what Prometheus's parser reads
    CHECK(sample(samples, "atlas2kudu_rows_refused_total", apply) == 7);
    success = sample(samples, "atlas2kudu_last_success_timestamp_seconds", apply);
  }

  // A failed run: its exit status and time, the last success carried over.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a later second
  TestServer failing("--handler kit --fail-at '1:AnalysisException: Could not resolve table'");
  const Run failed = run("apply -i " + failing.address() + " --prior none --metrics-textfile " +
                         metrics + examples());
  CHECK(failed.status == 3);
  samples = scrape(metrics);
  CHECK(sample(samples, "atlas2kudu_last_exit_status", apply) == 3);
  CHECK(sample(samples, "atlas2kudu_last_success_timestamp_seconds", apply) == success);
  CHECK(sample(samples, "atlas2kudu_last_run_timestamp_seconds", apply) > *success);
  // Its first statement failed: no window applied, no progress.
  CHECK(sample(samples, "atlas2kudu_last_progress_timestamp_seconds", apply) == success);

  // A run that fails after applying windows made progress, though it did not succeed.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  TestServer later("--handler kit --fail-at '12:AnalysisException: Could not resolve table'");
  const Run partial =
      run("apply -i " + later.address() + " --prior none --window-events 5 --metrics-textfile " +
          metrics + examples());
  CHECK(partial.status == 3);
  samples = scrape(metrics);
  CHECK(sample(samples, "atlas2kudu_last_success_timestamp_seconds", apply) == success);
  CHECK(sample(samples, "atlas2kudu_last_progress_timestamp_seconds", apply) ==
        sample(samples, "atlas2kudu_last_run_timestamp_seconds", apply));
  CHECK(*sample(samples, "atlas2kudu_last_progress_timestamp_seconds", apply) > *success);

  // A run that fails before reading (nothing listens there) still records its exit status.
  const Run refused =
      run("apply -i 127.0.0.1:1 --connect_max_tries 1 --metrics-textfile " + metrics + examples());
  CHECK(refused.status != 0);
  samples = scrape(metrics);
  CHECK(sample(samples, "atlas2kudu_last_exit_status", apply) == refused.status);
  CHECK(sample(samples, "atlas2kudu_last_success_timestamp_seconds", apply) == success);
  // It wrote no counter of its own: those the file held stay, none goes down (a series left out
  // would read as a reset, and increase() would miss the runs before it).
  CHECK(*sample(samples, "atlas2kudu_events_total", apply) >= 2 * json_number(json, "events"));
  CHECK(*sample(samples, "atlas2kudu_windows_total", apply) >=
        2 * json_number(json, "applied_windows"));
  CHECK(*sample(samples, "atlas2kudu_rows_total", table("entity_flat")) > 0);
  CHECK(*sample(samples, "atlas2kudu_statements_total", table("edge_out")) > 0);

  // compile and check: rows are those in the statements; check has no per-table samples.
  const Run compiled = run("compile --window-events 5 --stats " + stats + " --metrics-textfile " +
                           metrics + examples());
  CHECK(compiled.status == 0);
  samples = scrape(metrics);
  const std::string compile = R"({"command": "compile"})";
  CHECK(sample(samples, "atlas2kudu_events_total", compile) == 23);
  CHECK(sample(samples, "atlas2kudu_windows_total", compile) ==
        json_number(slurp(stats), "windows"));
  CHECK(sample(samples, "atlas2kudu_rows_total",
               R"({"command": "compile", "table": "entity_flat"})") > 0);
  const Run checked = run("check --metrics-textfile " + metrics + examples());
  CHECK(checked.status == 0);
  samples = scrape(metrics);
  CHECK(sample(samples, "atlas2kudu_records_total", R"({"command": "check"})") == 27);
  CHECK_FALSE(sample(samples, "atlas2kudu_rows_total", R"({"command": "check"})"));
  std::remove(metrics.c_str());
  std::remove(stats.c_str());
}

TEST_CASE("on a terminal: the progress line shows percent and ETA for files, not for stdin") {
  // 12000 events in two windows, applied slowly: the progress line is drawn while the second
  // window is read.
  std::string lines;
  for (int n = 1; n <= 12000; ++n) lines += create_table_line(n, "", 1700000000000LL + n) + "\n";
  const std::string input = write_temp(".jsonl", lines);
  TestServer server("--handler kit --latency-ms 150");
  const std::string terminal = tmp_path(".tty");
  for (const bool from_stdin : {false, true}) {
    CAPTURE(from_stdin);
    const std::string apply = std::string(ATLAS2KUDU_BINARY) + " apply -i " + server.address() +
                              " --prior none --window-events 6000 " +
                              (from_stdin ? "- < " + input : input);
    // script(1) runs the command on a pseudo-terminal: stderr is a terminal.
    const std::string cmd =
        "timeout 120 script -qec '" + apply + "' /dev/null > " + terminal + " 2>&1";
    CHECK(shell_status(std::system(cmd.c_str())) == 0);
    const std::string shown = slurp(terminal);
    CHECK(contains(shown, "\rapply: "));
    CHECK(std::regex_search(shown, std::regex("[0-9]+ events, [0-9]+ statements, [0-9]+ rows, "
                                              "[0-9]+ records/s")));
    CHECK_FALSE(contains(shown, "atlas2kudu apply: window"));  // no log lines on a terminal
    std::smatch m;
    const bool percent = std::regex_search(
        shown, m, std::regex(R"(records/s, (\d+)% of [\d.]+ MiB, ETA (\d+s|\d+m\d\ds))"));
    if (from_stdin) {
      CHECK_FALSE(percent);
      CHECK(contains(shown, "records/s\x1b[K"));
    } else {
      REQUIRE(percent);
      CHECK(std::stoi(m[1]) > 0);
      CHECK(std::stoi(m[1]) <= 100);
    }
  }
  std::remove(input.c_str());
  std::remove(terminal.c_str());
}

TEST_CASE("on a TERM=dumb terminal: no progress line and no escape sequence, the log lines") {
  const std::string terminal = tmp_path(".tty");
  const std::string cmd = "TERM=dumb timeout 60 script -qec '" + std::string(ATLAS2KUDU_BINARY) +
                          " compile --prior none" + examples() + " >/dev/null' /dev/null > " +
                          terminal + " 2>&1";
  CHECK(shell_status(std::system(cmd.c_str())) == 0);
  const std::string shown = slurp(terminal);
  CAPTURE(shown);
  CHECK_FALSE(contains(shown, "\x1b"));
  CHECK(contains(shown, " atlas2kudu compile: window 1: "));  // as to a file
  std::remove(terminal.c_str());
}

TEST_CASE("on a terminal: rejections start a line of their own, over the progress line") {
  // The progress line ends without a line end: a rejection printed after it was glued to it.
  const std::string input =
      write_temp(".jsonl", create_table_line(1, "", 1700000000000LL) + "\n{\"bad\": 1}\n" +
                               create_table_line(2, "", 1700000000001LL) + "\n");
  const std::string terminal = tmp_path(".tty");
  const std::string sql = tmp_path(".sql");
  for (const std::string& command : {std::string("check"), "compile --prior none -o " + sql}) {
    CAPTURE(command);
    const std::string cmd = "timeout 60 script -qec '" + std::string(ATLAS2KUDU_BINARY) + " " +
                            command + " --max-rejects 5 " + input + "' /dev/null > " + terminal +
                            " 2>&1";
    std::system(cmd.c_str());
    const std::string shown = slurp(terminal);
    INFO(shown);
    CHECK(contains(shown, "\r\x1b[K" + input + ":3:277: message.operationType: missing\r\n"));
  }
  std::remove(sql.c_str());
  std::remove(input.c_str());
  std::remove(terminal.c_str());
}

TEST_CASE("on a terminal: retries and reconnects are shown, over the progress line") {
  // The second statement's connection drops: a retry and a reconnect, which a user watching the
  // terminal must see (they were once logged only when stderr was not a terminal).
  TestServer server("--handler kit --drop-at 2");
  const std::string terminal = tmp_path(".tty");
  const std::string apply = std::string(ATLAS2KUDU_BINARY) + " apply -i " + server.address() +
                            " --prior none " + data("scenarios/01-partial-update-and-rename.jsonl");
  const std::string cmd =
      "timeout 120 script -qec '" + apply + "' /dev/null > " + terminal + " 2>&1";
  CHECK(shell_status(std::system(cmd.c_str())) == 0);
  const std::string shown = slurp(terminal);
  CAPTURE(shown);
  // Each line clears the terminal's line first, where the progress line may stand.
  CHECK(std::regex_search(shown, std::regex("\\r\\x1b\\[K" + kTime +
                                            " atlas2kudu apply: window 1: retry 1 of 5 in [0-9.]+ "
                                            "s: [a-z]+ statement 2 of [0-9]+ \\(table ")));
  CHECK(std::regex_search(shown, std::regex("\\r\\x1b\\[K" + kTime +
                                            " atlas2kudu apply: window 1: reconnected for retry 1 "
                                            "of 5: ")));
  // The window lines stay off the terminal (a slow connect may draw the progress line, which
  // counts events too).
  CHECK_FALSE(
      std::regex_search(shown, std::regex("atlas2kudu apply: window [0-9]+: [0-9]+ events")));
  CHECK(contains(shown, "1 retry"));  // and the summary counts it
  std::remove(terminal.c_str());
}

TEST_CASE("on a terminal: the progress line appears for a slow pipe of a few records") {
  // The scenario's records ten times over, 0.3 s apart, from a pipe: the line is drawn at the
  // first record read a quarter of a second after the start, not after 4096 records (a quiet
  // topic piped in showed nothing).
  const std::string terminal = tmp_path(".tty");
  const std::string input = data("scenarios/01-partial-update-and-rename.jsonl");
  const std::string check = "for i in 1 2 3 4 5 6 7 8 9 10; do cat " + input +
                            "; sleep 0.3; done | " + std::string(ATLAS2KUDU_BINARY) + " check -";
  const std::string cmd =
      "timeout 60 script -qec \"sh -c '" + check + "'\" /dev/null > " + terminal + " 2>&1";
  CHECK(shell_status(std::system(cmd.c_str())) == 0);
  const std::string shown = slurp(terminal);
  CAPTURE(shown);
  CHECK(std::regex_search(shown, std::regex("\\rcheck: [1-9][0-9]* records, [1-9][0-9]* events, "
                                            "[0-9]+ records/s\\x1b\\[K")));
  CHECK_FALSE(contains(shown, "statements,"));  // check writes none
  std::remove(terminal.c_str());
}

TEST_CASE("on a terminal with --log-format json: bare JSON lines, window lines, no progress line") {
  // A terminal read through a log collector (tmux pipe-pane, script) keeps JSON lines parseable:
  // no redrawn progress line and no escapes before each line; the window lines take its place.
  // The input comes in two parts 0.6 s apart, so that a progress line would be drawn: the text
  // run shows it.
  const std::string input = data("scenarios/01-partial-update-and-rename.jsonl");
  const auto on_terminal = [&](const std::string& server, const std::string& format) {
    const std::string terminal = tmp_path(".tty");
    const std::string apply = "(cat " + input + "; sleep 0.6; cat " + input + ") | " +
                              std::string(ATLAS2KUDU_BINARY) + " apply -i " + server +
                              " --prior none --log-format " + format + " -";
    const std::string cmd =
        "timeout 120 script -qec \"sh -c '" + apply + "'\" /dev/null > " + terminal + " 2>&1";
    CHECK(shell_status(std::system(cmd.c_str())) == 0);
    const std::string shown = slurp(terminal);
    std::remove(terminal.c_str());
    return shown;
  };
  TestServer text_server("--handler kit");
  CHECK(contains(on_terminal(text_server.address(), "text"), "\rapply: "));
  TestServer server("--handler kit --drop-at 2");
  const std::string shown = on_terminal(server.address(), "json");
  CAPTURE(shown);
  CHECK_FALSE(contains(shown, "\x1b"));
  CHECK_FALSE(contains(shown, "\rapply: "));
  CHECK(std::regex_search(shown, std::regex("(^|\\n)\\{\"time\":\"[^\"]+\",\"command\":\"apply\","
                                            "\"event\":\"retry\"")));
  CHECK(std::regex_search(shown, std::regex("\\n\\{\"time\":\"[^\"]+\",\"command\":\"apply\","
                                            "\"event\":\"window\",\"window\":1,")));
}

TEST_CASE("--metrics-textfile: a metric has one HELP text whatever the command that wrote it") {
  // node_exporter reads every .prom file of its directory into one registry, and drops the samples
  // of a metric whose HELP differs from the first file's (the scrape error counter stays 0).
  TestServer server("--handler kit");
  std::map<std::string, std::string> help;  // metric → HELP text, of the first file that has it
  std::map<std::string, int> commands;      // metric → files that have it
  for (const std::string& command :
       std::vector<std::string>{"check", "compile -q", "apply -q -i " + server.address()}) {
    CAPTURE(command);
    const std::string metrics = tmp_path(".prom");
    std::remove(metrics.c_str());
    const Run r = run(command + " --metrics-textfile " + metrics + examples());
    REQUIRE_MESSAGE(r.status == 0, r.err);
    std::istringstream lines(slurp(metrics));
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with("# HELP ")) continue;
      const std::size_t space = line.find(' ', 7);
      const std::string name = line.substr(7, space - 7);
      CAPTURE(name);
      ++commands[name];
      const auto it = help.emplace(name, line.substr(space + 1)).first;
      CHECK(it->second == line.substr(space + 1));
    }
    std::remove(metrics.c_str());
  }
  CHECK(commands.at("atlas2kudu_rows_total") == 2);  // compile's and apply's
  CHECK(commands.at("atlas2kudu_records_total") == 3);
}

TEST_CASE("--metrics-textfile: runs that end together each add their figures") {
  const std::string metrics = tmp_path(".prom");
  std::remove(metrics.c_str());
  const Run one = run("check --metrics-textfile " + metrics + examples());
  REQUIRE_MESSAGE(one.status == 0, one.err);
  const auto records = metric_value(slurp(metrics), "atlas2kudu_records_total", "check");
  REQUIRE(records);
  std::remove(metrics.c_str());
  // Twelve runs at once: each reads FILE, adds its own and replaces it.
  std::string runs;
  for (int i = 0; i < 12; ++i) {
    runs += std::string(ATLAS2KUDU_BINARY) + " check --metrics-textfile " + metrics + examples() +
            " 2>/dev/null & ";
  }
  const Run all = run_shell("sh -c '" + runs + "wait'");
  REQUIRE_MESSAGE(all.status == 0, all.err);
  CHECK(metric_value(slurp(metrics), "atlas2kudu_records_total", "check") == 12 * *records);
  std::remove(metrics.c_str());
}

TEST_CASE("--metrics-textfile is readable by node_exporter under a private umask") {
  // A service's umask 077 (examples/cron) must not make the file unreadable to the collector,
  // which runs as another user.
  const std::string metrics = tmp_path(".prom");
  std::remove(metrics.c_str());
  const Run r =
      run_shell("sh -c 'umask 077 && exec " + std::string(ATLAS2KUDU_BINARY) +
                " compile -q --metrics-textfile " + metrics + examples() + " >/dev/null'");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  struct stat st {};
  REQUIRE(::stat(metrics.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  std::remove(metrics.c_str());
}

TEST_CASE("--stats and --metrics-textfile that cannot be written at the end: 74, both say it") {
  // A full disk, here a file size limit of N KiB (bash counts KiB; the program ignores its signal,
  // SIGXFSZ, so that the write fails with EFBIG; the SQL goes to /dev/null, which it does not
  // bound). Each file is
  // named, then what the run itself did. A run that succeeded ends with 74, and the other file
  // says 74 too (the stats file written again when only the metrics failed, or removed when that
  // fails too); a run that failed keeps its own status.
  const std::string stats = tmp_path(".json");
  const std::string metrics = tmp_path(".prom");
  const auto limited = [&](int kib, const std::string& args, const std::string& metrics_file) {
    std::remove(stats.c_str());
    std::remove(metrics.c_str());
    return run_shell("bash -c 'ulimit -f " + std::to_string(kib) + "; exec " +
                     std::string(ATLAS2KUDU_BINARY) + " " + args + " --stats " + stats +
                     " --metrics-textfile " + metrics_file + " >/dev/null'");
  };
  const auto too_large = [](const std::string& file, int kib) {
    return "atlas2kudu: " + file + ": cannot write: File too large (`ulimit -f` allows " +
           std::to_string(kib) + " KiB per file)\n";
  };
  // Both too large for 1 KiB (compile's stats are about 1.4 KiB, its metrics 2.3).
  Run r = limited(1, "compile -q" + examples(), metrics);
  CHECK(r.status == 74);
  CHECK(contains(r.err, too_large(stats, 1)));
  CHECK(contains(r.err, too_large(metrics, 1)));
  CHECK(contains(r.err, "atlas2kudu: the run itself succeeded; not written: " + stats + ", " +
                            metrics + "\n"));
  CHECK_FALSE(std::filesystem::exists(stats));
  // Only the metrics: the stats file says 74 and why. So for check (0.8 and 1.5 KiB) and apply
  // (2.2 and 4.4 KiB), whose windows were applied.
  TestServer server("--handler kit");
  const std::vector<std::pair<int, std::string>> runs = {
      {2, "compile -q" + examples()},
      {1, "check" + examples()},
      {3, "apply -q -i " + server.address() + examples()}};
  for (const auto& run_with_limit : runs) {
    const std::string& args = run_with_limit.second;
    CAPTURE(args);
    r = limited(run_with_limit.first, args, metrics);
    CHECK(r.status == 74);
    CHECK(contains(r.err, too_large(metrics, run_with_limit.first)));
    CHECK(contains(r.err, "atlas2kudu: the run itself succeeded; not written: " + metrics + "\n"));
    const std::string written = slurp(stats);
    CHECK(contains(written, "\"completed\":true,\"exit_status\":74,"));
    CHECK(contains(written, "\"error\":\"" + metrics +
                                ": cannot write: File too large (`ulimit -f` allows " +
                                std::to_string(run_with_limit.first) + " KiB per file)\""));
  }
  // The stats file fits with exit status 0, but not again with 74 and the metrics file's long
  // name in its error: it is removed rather than left saying 0.
  const std::string long_dir = tmp_path("");
  std::remove(long_dir.c_str());
  const std::string component(200, 'm');
  const std::string long_name =
      long_dir + "/" + component + "/" + component + "/" + component + "/" + component + "/x.prom";
  std::filesystem::create_directories(long_name.substr(0, long_name.rfind('/')));
  r = limited(2, "compile -q" + examples(), long_name);
  CHECK(r.status == 74);
  CHECK(contains(r.err, "atlas2kudu: the run itself succeeded; not written: " + long_name + ", " +
                            stats + "\n"));
  CHECK_FALSE(std::filesystem::exists(stats));
  // A run that failed (exit 2: a bad record) keeps its status.
  const std::string bad = write_temp(".jsonl", "not json\n");
  r = limited(1, "compile -q " + bad, metrics);
  CHECK(r.status == 2);
  CHECK(contains(r.err, "atlas2kudu: the run itself ended with exit status 2; not written: " +
                            stats + ", " + metrics + "\n"));
  for (const std::string& file : {stats, metrics, bad}) std::remove(file.c_str());
  std::filesystem::remove_all(long_dir);
}

TEST_SUITE_END();
