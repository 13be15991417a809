// End-to-end tests: run the real binary as a user would and check output and exit codes.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

#include "binary_test_util.h"
#include "cli/commands.h"
#include "cli/run_log.h"
#include "hs2/error.h"
#include "hs2_test_util.h"
#include "test_support.h"
#include "util/version.h"

TEST_SUITE_BEGIN("cli");

using namespace atlas2kudu::testing;

namespace {

// The number on the summary line that starts with `label`, or -1.
long long count(const std::string& out, const std::string& label) {
  std::size_t at = 0;
  while ((at = out.find(label, at)) != std::string::npos) {
    if (at == 0 || out[at - 1] == '\n') {
      const std::size_t eol = out.find('\n', at);
      const std::string rest = out.substr(at + label.size(), eol - at - label.size());
      try {
        return std::stoll(rest);
      } catch (...) {
        return -1;
      }
    }
    at += label.size();
  }
  return -1;
}

// Whether `ddl ARGS` succeeds and its header names `--partitions N`: the value it used.
bool ddl_uses_partitions(const std::string& args, int n) {
  const Run r = run("ddl " + args);
  CHECK(r.status == 0);
  return r.status == 0 && contains(r.out, "--partitions " + std::to_string(n) + " ");
}

}  // namespace

TEST_CASE("digest prints the qn_digest of the shared vectors") {
  auto r = run("digest hive_table default.customers@cl1");
  CHECK(r.status == 0);
  CHECK(r.out == "db0ed8217c95acb8134ac87cca0d782a\n");
  r = run("digest kafka_topic 'tópico-日本語@prod'");
  CHECK(r.out == "5121e0e1c9f0157a60804d8e9df42acc\n");
  r = run("digest '' ''");
  CHECK(r.out == "ffe679bb831c95b67dc17819c63c5090\n");
  // A name that starts with '-' is read as an option, unless after '--'; the message says so.
  r = run("digest hive_table -sales");
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: QUALIFIED_NAME is required (an argument starting with '-' was read as an "
        "option, and digest has none: a name that starts with '-' goes after '--', as in "
        "'atlas2kudu digest TYPE_NAME -- QUALIFIED_NAME')\nRun 'atlas2kudu digest --help' for the "
        "options.\n");
  r = run("digest hive_table -- -sales");
  CHECK(r.status == 0);
  CHECK(r.out.size() == 33);
  // A name that is not UTF-8 is no name a row can hold.
  r = run("digest hive_table \"$(printf 'a\\377b')\"");
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: QUALIFIED_NAME a\\xffb: not UTF-8 (byte 0xff at offset 1); Atlas "
        "names are UTF-8, and no row can hold this one\n");
  CHECK(r.out.empty());
}

TEST_CASE("check counts a clean export per operation, from files, stdin and gzip") {
  const std::string files = data("notifications/atlas21-console.jsonl") + " " +
                            data("notifications/atlas22-relationship-and-purview.jsonl") + " " +
                            data("notifications/split-interleaved.jsonl");
  auto r = run("check " + files);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(count(r.out, "records read") == 17);
  CHECK(count(r.out, "events accepted") == 13);
  CHECK(count(r.out, "records rejected") == 0);
  CHECK(count(r.out, "ENTITY_CREATE") == 7);
  CHECK(count(r.out, "RELATIONSHIP_CREATE") == 1);

  r = run("check -", data("notifications/atlas21-console.jsonl.gz"));
  CHECK(r.status == 0);
  CHECK(count(r.out, "events accepted") == 4);
  r = run("check", data("notifications/kcat.jsonl"));
  CHECK(r.status == 0);
  CHECK(count(r.out, "events accepted") == 4);
}

TEST_CASE("the consumer's error lines in an export are named by check, compile and --stats") {
  const std::string input = write_temp(
      ".jsonl", "% ERROR: Topic ATLAS_ENTITIES [0] error: Broker: Offset out of range\n" +
                    slurp(data("notifications/kcat.jsonl")) +
                    "[2022-04-12 22:19:10,904] ERROR Error processing message, "
                    "terminating consumer process:  (kafka.tools.ConsoleConsumer$)\n");
  const std::string stats = tmp_path(".stats.json");
  const std::string first =
      input + ":1: % ERROR: Topic ATLAS_ENTITIES [0] error: Broker: Offset out of range";
  Run r = run("check " + input);
  CHECK(r.status == 0);
  CHECK(contains(r.out,
                 "consumer errors              2  (of them; the export may miss "
                 "messages. The first is " +
                     first + ")\n"));
  r = run("compile --stats " + stats + " " + input);
  CHECK(r.status == 0);
  CHECK(contains(r.err,
                 "atlas2kudu compile: warning: the input has 2 error lines of the Kafka "
                 "consumer that wrote it (the first is " +
                     first +
                     "): if it lost messages, they are missing here; look at the "
                     "consumer's run\n"));
  CHECK(json_number(slurp(stats), "consumer_errors") == 2);
  CHECK(json_number(slurp(stats), "ignored_lines") == 2);
  // -q leaves the summary out, not the warning: messages may be missing (a cron job's log).
  r = run("compile -q --stats " + stats + " " + input);
  CHECK(r.err.starts_with("atlas2kudu compile: warning: the input has 2 error lines"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(json_number(slurp(stats), "consumer_errors") == 2);
  std::remove(input.c_str());
  std::remove(stats.c_str());
}

TEST_CASE("check stops at the first bad record with exit 2 and its position") {
  const std::string bad = tmp_path(".jsonl");
  {
    std::FILE* f = std::fopen(bad.c_str(), "w");
    const std::string good = slurp(data("notifications/gzip-message.jsonl"));
    std::fputs(good.c_str(), f);
    std::fputs("{\"version\":{},\"message\":{\"type\":\"ENTITY_CREATE_V2\"}}\n", f);
    std::fputs("not json at all\n", f);
    std::fputs(good.c_str(), f);
    std::fclose(f);
  }
  auto r = run("check " + bad);
  CHECK(r.status == 2);
  const std::string offset = std::to_string(slurp(data("notifications/gzip-message.jsonl")).size());
  CHECK(r.err.find(bad + ":2:" + offset +
                   ": message.type: ENTITY_CREATE_V2 is an ATLAS_HOOK message") !=
        std::string::npos);
  CHECK(r.err.find("stopped at the first malformed record") != std::string::npos);
  CHECK(r.err.find("not json") == std::string::npos);  // stopped before line 3
  // The report is of the part read, and says so.
  CHECK(
      r.out.starts_with("stopped before the end of the input (see standard error): the counts "
                        "are of the records read until then\nrecords read                 2\n"));

  // With --max-rejects the run goes on, writes the reject file and the stats JSON.
  const std::string rejects = tmp_path(".rejects");
  const std::string stats = tmp_path(".json");
  r = run("check --max-rejects 5 --reject-file " + rejects + " --stats " + stats + " " + bad);
  CHECK(r.status == 0);
  CHECK(r.out.starts_with("records read"));
  CHECK(count(r.out, "events accepted") == 2);
  CHECK(count(r.out, "hook-topic") == 1);
  CHECK(count(r.out, "not-json") == 1);
  const std::string reject_lines = slurp(rejects);
  CHECK(reject_lines.find("\"line\":3,") != std::string::npos);
  CHECK(reject_lines.find("\"record\":\"not json at all\"") != std::string::npos);
  CHECK(reject_lines.find("\"code\":\"hook-topic\"") != std::string::npos);
  const std::string stats_json = slurp(stats);
  CHECK(stats_json.find("\"events\":2,\"rejected\":2") != std::string::npos);
  CHECK(stats_json.find("\"hook-topic\":1") != std::string::npos);
  CHECK(stats_json.find("\"completed\":true") != std::string::npos);

  // One fewer allowed reject than needed: exit 2.
  r = run("check --max-rejects 1 " + bad);
  CHECK(r.status == 2);
  CHECK(r.err.find("more than 1 record rejected") != std::string::npos);
  std::remove(bad.c_str());
  std::remove(rejects.c_str());
  std::remove(stats.c_str());
}

TEST_CASE("with a reject file, stderr shows the first rejections and says where the rest are") {
  std::string text;
  for (int i = 0; i < 25; ++i) text += "not json " + std::to_string(i) + "\n";
  const std::string bad = write_temp(".jsonl", text);
  const std::string rejects = tmp_path(".rejects");
  auto r = run("check --max-rejects 100 --reject-file " + rejects + " " + bad);
  CHECK(r.status == 0);
  CHECK(occurrences(r.err, bad + ":") == 20);
  CHECK(contains(r.err, bad + ":20:"));
  CHECK(!contains(r.err, bad + ":21:"));
  CHECK(occurrences(r.err,
                    "atlas2kudu: more rejections: only in " + rejects +
                        " from here on (the first 20 are above; the summary counts them all)\n") ==
        1);
  CHECK(occurrences(slurp(rejects), "\"code\":\"not-json\"") == 25);
  CHECK(count(r.out, "records rejected") == 25);
  // Without a reject file, stderr is their only record: every one is printed.
  r = run("check --max-rejects 100 " + bad);
  CHECK(r.status == 0);
  CHECK(occurrences(r.err, bad + ":") == 25);
  CHECK(!contains(r.err, "more rejections"));
  std::remove(bad.c_str());
  std::remove(rejects.c_str());
}

TEST_CASE("usage errors and missing files have their own exit codes") {
  auto r = run("check /nonexistent/file.jsonl");
  CHECK(r.status == 66);
  CHECK(r.err.find("/nonexistent/file.jsonl: cannot open: No such file or directory") !=
        std::string::npos);
  // A name holding a newline cannot forge a second line of diagnostics.
  r = run("check \"$(printf '/nonexistent/a\\nb')\"");
  CHECK(r.status == 66);
  CHECK(r.err == "atlas2kudu: /nonexistent/a\\nb: cannot open: No such file or directory\n");
  // An empty value, as an unset variable gives, is no option left out: "--reject-file ''" set
  // the rejects aside nowhere, "-o ''" wrote the SQL to stdout.
  const std::string example = example_files().front();
  for (const auto& usage : std::vector<std::pair<std::string, std::string>>{
           {"check --max-rejects 3 --reject-file '' " + example, "--reject-file"},
           {"compile -o '' " + example, "-o,--output"},
           {"compile --stats '' " + example, "--stats"},
           {"compile -Q '' " + example, "-Q,--query_option"},
           {"ddl -o ''", "-o,--output"}}) {
    const std::string& args = usage.first;  // clang 14 captures no structured binding
    CAPTURE(args);
    r = run(args);
    CHECK(r.status == 64);
    CHECK(r.err.starts_with("atlas2kudu: " + usage.second +
                            ": an empty value (an unset variable?); give one, or leave the option "
                            "out\n"));
    CHECK(r.out.empty());
  }
  // An input named like an option is said where to go, without its name.
  const std::string dir = std::filesystem::path(tmp_path(".d")).string();
  std::remove(dir.c_str());
  REQUIRE(std::filesystem::create_directory(dir));
  std::filesystem::copy_file(example, dir + "/-x.jsonl");
  const std::string in_dir = "env -C " + dir + " " + std::string(ATLAS2KUDU_BINARY) + " check ";
  r = run_shell(in_dir + "-x.jsonl");
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: The following argument was not expected: -x... (a FILE whose name starts "
        "with '-' goes after '--', as in 'atlas2kudu check [OPTIONS] -- FILE', or as "
        "./FILE)\nRun 'atlas2kudu check --help' for the options.\n");
  CHECK(run_shell(in_dir + "-- -x.jsonl").status == 0);
  std::filesystem::remove_all(dir);
  r = run("compile " + example + " ''");
  CHECK(r.status == 64);
  CHECK(r.err.starts_with(
      "atlas2kudu: FILE: an empty name (an unset variable?); give a file, or - for standard "
      "input\n"));
  CHECK(r.out.empty());
  // The version, before or after a command.
  r = run("--version");
  CHECK(r.status == 0);
  CHECK(r.out.starts_with("atlas2kudu " + std::string(atlas2kudu::kVersion) + " (simdjson "));
  for (const char* command : {"check", "compile", "apply", "ddl", "digest"}) {
    CAPTURE(command);
    const auto after = run(std::string(command) + " --version");
    CHECK(after.status == 0);
    CHECK(after.out == r.out);
  }
  r = run("check --no-such-flag");
  CHECK(r.status == 64);
  r = run("");
  CHECK(r.status == 64);
  r = run("digest onlyone");
  CHECK(r.status == 64);
  // `help [COMMAND]` is `[COMMAND] --help`; a name that is no command is reported as one.
  CHECK(run("help").out == run("--help").out);
  CHECK(run("help help").out == run("--help").out);  // as git help help
  r = run("help apply");
  CHECK(r.status == 0);
  CHECK(r.out == run("apply --help").out);
  CHECK(contains(r.out, "Usage: atlas2kudu apply"));
  r = run("compile --database a --database b " + example_files().front());
  CHECK(r.status == 64);
  CHECK(r.err.starts_with(
      "atlas2kudu: --database: given more than once (a, b); it takes one value\n"));
  // Each spelling counts, and a value is shown on one line.
  r = run("compile --config=a.conf -d x --config 'b\nc.conf' " + example_files().front());
  CHECK(r.status == 64);
  CHECK(r.err.starts_with(
      "atlas2kudu: --config: given more than once (a.conf, b\\nc.conf); it takes one value\n"));
  r = run("compile -d x --database=y " + example_files().front());
  CHECK(r.status == 64);
  CHECK(contains(r.err, "given more than once (x, y); it takes one value\n"));
  // An option that is not expected is named without its value, which may be a password.
  r = run("apply --ldap_password=Hunter2Secret -pHunter2 x.jsonl");
  CHECK(r.status == 64);
  CHECK(contains(r.err, "--ldap_password=..."));
  CHECK_FALSE(contains(r.err, "Hunter2"));
  // So is what follows the flags of a cluster, which CLI11 names as an option of its own
  // ("-qpHunter2": "-pHunter2").
  for (const std::string args : {"apply -pHunter2 x.jsonl", "apply -qpHunter2 x.jsonl"}) {
    CAPTURE(args);
    r = run(args);
    CHECK(r.status == 64);
    CHECK(contains(r.err, "not expected: -p...\n"));
    CHECK_FALSE(contains(r.err, "Hunter2"));
  }
  // So is the value given to a flag, the secret by habit: after '=', or as the next argument
  // (which would have been read as an input and named in "cannot open").
  // Also in a cluster of short flags, which CLI11 would split ("-lHunter2": "-Hunter2"), or read
  // as another option's value ("-ltHunter2": -t's, "-luHunter2": the user name): -l and -j go
  // last in a cluster. And with --help, which CLI11 would handle after printing the value.
  for (const std::string args :
       {"--jwt=eyJHunter2", "-j=Hunter2", "--ldap=Hunter2", "-l=Hunter2", "--jwt eyJHunter2",
        "-l Hunter2", "-ql Hunter2", "-lq Hunter2", "-qj Hunter2", "-ql=Hunter2", "-lHunter2",
        "-jeyJHunter2", "-lqHunter2", "-ltHunter2", "-luHunter2", "-l --Hunter2",
        "--ldap=Hunter2 --help", "-ltHunter2 --help", "-lt Hunter2 --help"}) {
    CAPTURE(args);
    r = run("apply --protocol hs2-http " + args + " " + example_files().front());
    CHECK(r.status == 64);
    CHECK_FALSE(contains(r.err, "Hunter2"));
    CHECK(contains(r.err, " is a flag: give it "));
    CHECK(contains(r.err, "it may be a secret"));
    CHECK(contains(r.err, args.find('j') != std::string::npos
                              ? "; the token comes from --jwt_cmd CMD\n"
                              : "; the password comes from --ldap_password_cmd CMD\n"));
  }
  // Only true/false, yes/no, on/off and 1/0 after '=', as in --config: a PIN is no boolean.
  for (const std::string value : {"Hunter2", "enable", "2024"}) {
    r = run("apply --ssl=" + value + " --ldap=" + value + " " + example_files().front());
    CHECK(r.status == 64);
    CHECK(contains(r.err,
                   "atlas2kudu: --ssl is a flag: give it without a value, or with =true or "
                   "=false (the value given is not shown: it may be a secret)\n"));
  }
  // A command without the flag, or none yet: the word after it is not shown either.
  for (const std::string& args :
       std::vector<std::string>{"ddl --ldap Hunter2", "ddl -l Hunter2", "-l Hunter2 apply",
                                "--jwt eyJHunter2 apply " + example_files().front()}) {
    CAPTURE(args);
    r = run(args);
    CHECK(r.status == 64);
    CHECK_FALSE(contains(r.err, "Hunter2"));
  }
  CHECK(contains(r.err,
                 "atlas2kudu: --jwt is an option of compile and apply: give the command "
                 "first"));
  // -u with its name left out takes the input as the user: with no FILE left, the run would read
  // standard input (/dev/null under cron) and apply nothing, exit 0. Refused.
  const std::string input = example_files().front();
  for (const std::string command : {"apply", "compile"}) {
    CAPTURE(command);
    r = run(command + " -i 127.0.0.1:1 -u " + input);
    CHECK(r.status == 64);
    CHECK(r.err == "atlas2kudu: -u/--user " + input +
                       ": names a file, and no FILE is left to read (the run would read standard "
                       "input): give the user name right after -u (-u NAME FILE)\nRun "
                       "'atlas2kudu " +
                       command + " --help' for the options.\n");
  }
  // With another input, one named as an export is refused too: it would go unread.
  r = run("apply -i 127.0.0.1:1 -u " + input + " " + example_files().back());
  CHECK(r.status == 64);
  CHECK(contains(r.err, "-u/--user " + input + ": names an input file, which would not be read"));
  // -ul PASSWORD: -u takes the l, and what follows would be an input named in "cannot open".
  r = run("apply -ul Hunter2pw " + input);
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: -ul: -u takes the letter after it, l, as its value, not as the flag -l: give "
        "-u VALUE -l\nRun 'atlas2kudu apply --help' for the options.\n");
  // A user named l, given apart, is one.
  r = run("apply -u l -i 127.0.0.1:1 --prior none --connect_max_tries 1 " + input);
  CHECK(r.status == 4);
  // -u forgotten its value: CLI11 would take -i for the user, and the host for an input.
  r = run("apply -u -i 127.0.0.1:1 " + input);
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: -u takes a value, but the argument after it, -i, is an option: give -u "
        "VALUE\nRun 'atlas2kudu apply --help' for the options.\n");
  // ... named by its letters alone (the rest may be a secret), and for long options too.
  r = run("apply -u -lHunter2pw " + input);
  CHECK(r.status == 64);
  CHECK(contains(r.err, "the argument after it, -l, is an option"));
  CHECK(!contains(r.err, "Hunter2pw"));
  // A value that only starts as an option that takes one is a value (CLI11 reads it so).
  r = run("apply -u -bob -i 127.0.0.1:1 --prior none --connect_max_tries 1 " + input);
  CHECK(r.status == 4);
  r = run("apply --user --ldap_password_cmd=x " + input);
  CHECK(r.status == 64);
  CHECK(contains(r.err,
                 "--user takes a value, but the argument after it, --ldap_password_cmd, is "
                 "an option: give --user VALUE"));
  // Standard output for -o is no option.
  CHECK(run("compile -q -o - " + input).status == 0);
  // The refusal's own words stay whole when the word after -l is one of them ("the", "flag");
  // another tool's password option after -l is named as the option it is, not as -l's value.
  for (const std::string word : {"the", "flag", "password"}) {
    CAPTURE(word);
    r = run("apply -l " + word + " missing-input.jsonl");
    CHECK(r.status == 64);
    CHECK(r.err ==
          "atlas2kudu: -l is a flag: give it without a value (the argument after it names no "
          "file, so it is not read as an input; it is not shown: it may be a secret); the "
          "password comes from --ldap_password_cmd CMD\nRun 'atlas2kudu apply --help' for the "
          "options.\n");
  }
  for (const std::string option : {"--ldap_password", "--ldap-password", "--password"}) {
    CAPTURE(option);
    r = run("apply -l " + option + " Hunter2 missing-input.jsonl");
    CHECK(r.status == 64);
    CHECK_FALSE(contains(r.err, "Hunter2"));
    CHECK(contains(r.err, "not expected: " + option +
                              " (no option takes a password, which ps would show: with -l, it "
                              "comes from --ldap_password_cmd"));
  }
  // An option's value that ends in 'l' is no -l, nor is the option name after -l a secret.
  r = run("compile -ihost.local missing-input.jsonl");
  CHECK(r.status == 66);
  CHECK(contains(r.err, "missing-input.jsonl: cannot open"));
  r = run("apply --ldap --database a --database b " + example_files().front());
  CHECK(r.status == 64);
  CHECK(contains(r.err, "atlas2kudu: --database: given more than once (a, b)"));
  // --help still wins; the --config file's flags are not taken for the command line's.
  r = run("apply -h -l Hunter2");
  CHECK(r.status == 0);
  CHECK(contains(r.out, "Usage: atlas2kudu apply"));
  const std::string ldap_config = write_temp(".ini", "[atlas2kudu.apply]\nldap = true\n");
  r = run("apply missing-input.jsonl --config " + ldap_config);
  CHECK(r.status == 66);
  CHECK(contains(r.err, "atlas2kudu: missing-input.jsonl: cannot open"));
  std::remove(ldap_config.c_str());
  // A file after the flag is an input, as before; so is a true or false after '='.
  r = run("apply -l " + example_files().front() + " -i 127.0.0.1:1 --connect_max_tries 1");
  CHECK(r.status == 64);
  CHECK(contains(r.err, "refusing to send LDAP/JWT credentials without --ssl"));
  r = run("compile -q --threads=1 --ssl=false " + example_files().front());
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  r = run("help compil");
  CHECK(r.status == 64);
  CHECK(contains(r.err, "unknown command 'compil' (did you mean compile?)"));
  r = run("compil examples/x.jsonl");
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: unknown command 'compil' (did you mean compile?)\n"
        "Run 'atlas2kudu --help' for the options.\n");
  // An option of another command: which ones have it.
  r = run("compile --checkpoint c.ckpt " + example_files().front());
  CHECK(r.status == 64);
  CHECK(
      r.err.starts_with("atlas2kudu: The following argument was not expected: --checkpoint "
                        "(--checkpoint is an option of apply, not of compile)\n"));
  r = run("check -i db1 " + example_files().front());
  CHECK(contains(r.err, ": -i (-i is an option of compile and apply, not of check)\n"));
  r = run("digest --stats x a b");
  CHECK(contains(r.err, "(--stats is an option of check, compile and apply, not of digest)\n"));
  // A file before the command: the command first.
  r = run("examples/x.jsonl -q compile");
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: unknown command 'examples/x.jsonl' (the command comes first, as in "
        "'atlas2kudu compile examples/x.jsonl')\nRun 'atlas2kudu --help' for the options.\n");
  r = run("compile --windows-events 5");
  CHECK(r.status == 64);
  CHECK(r.err.starts_with("atlas2kudu: "));
  CHECK(contains(r.err, "--windows-events (did you mean --window-events?)"));
  // impala-shell's options with no namesake: what stands for them here.
  r = run("apply --config_file=impalarc examples/x.jsonl");
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: The following argument was not expected: --config_file=... "
        "(impala-shell's --config_file: here it is --config FILE)\n"
        "Run 'atlas2kudu apply --help' for the options.\n");
  r = run("compile -v examples/x.jsonl");
  CHECK(contains(r.err, "(impala-shell's -v: the version is -V (or --version) here)"));
  r = run("apply -f out.sql");
  CHECK(contains(r.err,
                 "(impala-shell's -f: atlas2kudu runs the SQL it compiles itself; run "
                 "compile's output with impala-shell -f)"));
  // -V (impala-shell's --verbose) with a run's arguments would do nothing and exit 0.
  r = run("apply -V examples/x.jsonl");
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: -V prints the version and exits, doing nothing else: give it alone "
        "(impala-shell's -V is --verbose; atlas2kudu prints its progress and summary unless -q)\n"
        "Run 'atlas2kudu apply --help' for the options.\n");
  CHECK(run("-V apply examples/x.jsonl").status == 64);  // before the command too
  CHECK(run("apply -V").status == 0);
  CHECK(run("-V apply").status == 0);
  CHECK(run("apply --version --help").status == 0);
  // -h as an option's value would print the help and exit 0, having done nothing.
  r = run("compile -o -h examples/x.jsonl");
  CHECK(r.status == 64);
  CHECK(contains(r.err, "the argument after it, -h, is an option"));
  // One-letter flags are all one edit apart: none is offered for another.
  r = run("apply -p examples/x.jsonl");
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: The following argument was not expected: -p\n"
        "Run 'atlas2kudu apply --help' for the options.\n");
  // A password flag, from habit or another tool, is told where a password comes from instead;
  // the word after it is not shown.
  r = run("apply --password hunter2 examples/x.jsonl");
  CHECK(r.status == 64);
  CHECK(contains(r.err,
                 "--password (no option takes a password, which ps would show: with -l, "
                 "it comes from --ldap_password_cmd, $ATLAS2KUDU_LDAP_PASSWORD or a prompt)"));
  CHECK(!contains(r.err, "hunter2"));
  r = run("check --password x examples/x.jsonl");  // check connects to nothing
  CHECK(r.status == 64);
  CHECK(!contains(r.err, "ldap_password_cmd"));
  // Numbers: whole, decimal, within bounds, and said so plainly (no "-h" hint for "-1").
  struct Refused {
    std::string args, message;
  };
  for (const Refused& c : std::vector<Refused>{
           {"compile --window-events 0",
            "--window-events: expected a whole number of at least "
            "1, got '0'"},
           {"compile --window-events -1",
            "--window-events: expected a whole number of at least "
            "1, got '-1'"},
           {"check --max-rejects -1", "--max-rejects: expected a whole number, got '-1'"},
           {"check --max-rejects 0x10", "--max-rejects: expected a whole number, got '0x10'"},
           // What was typed comes back escaped: a terminal never acts on it.
           {"check --max-rejects \"$(printf '8\\033[2J')\"",
            "--max-rejects: expected a whole number, got '8\\x1b[2J'"},
           {"check --max-rejects 99999999999999999999999",
            "--max-rejects: 99999999999999999999999 is too large (at most "
            "18446744073709551615)"},
           {"ddl --partitions 1001",
            "--partitions: expected a whole number from 2 to 1000, got "
            "'1001'"},
           {"apply -i : --prior none",
            "-i ':': a host or port left empty; give host[:port], or [v6addr][:port] for IPv6"},
           {"apply --sessions 0", "--sessions: expected a whole number from 1 to 256, got '0'"},
           // Held in an int or an int64: the bounds rather than CLI11's "Could not convert".
           {"apply -t 99999999999",
            "--client_connect_timeout_ms: expected a whole number of milliseconds from 0 to "
            "2147483647, got "
            "'99999999999'"},
           {"apply --statement_timeout_ms 2147483648",
            "--statement_timeout_ms: expected a whole number of milliseconds from 0 to "
            "2147483647, got "
            "'2147483648'"},
           {"apply --connect_max_tries 3000000000",
            "--connect_max_tries: expected a whole number from 1 to 2147483647, got "
            "'3000000000'"},
           {"apply --max-row-errors 10000000000000000000",
            "--max-row-errors: expected a whole number from 0 to 9223372036854775807, got "
            "'10000000000000000000'"},
           // Impala refuses an IN-list of 10000 keys: deletes and --prior impala lookups.
           {"apply --batch-rows 10000",
            "--batch-rows: expected a whole number from 1 to 9999, got '10000'"},
           {"apply -i '' --prior none",
            "--impalad: empty; give HOST[:PORT], or leave -i out for localhost"},
           {"compile -i '' --prior none",
            "--impalad: empty; give HOST[:PORT], or leave -i out for localhost"},
           {"apply -i 127.0.0.1:21050: --prior none",
            "-i 127.0.0.1:21050:: expected host[:port], or [v6addr][:port] for IPv6"},
           {"apply -i 127.0.0.1:1 --protocol hs2-http -l -u a:b --auth_creds_ok_in_clear",
            "-u a:b: a user name with ':' cannot be sent over HTTP Basic (RFC 7617); use "
            "--protocol hs2 (SASL PLAIN) or another user name"},
           {"apply -i 127.0.0.1:1 --protocol hs2-http -l -u \"$(printf 'bob\\r\\nX-Injected: 1')\" "
            "--auth_creds_ok_in_clear",
            "-u bob\\r\\nX-Injected: 1: a user name with a control character (0x0d) at byte 4"},
       }) {
    CAPTURE(c.args);
    r = run(c.args + " " + example_files().front());
    CHECK(r.status == 64);
    CHECK(r.err.starts_with("atlas2kudu: " + c.message + "\n"));
    CHECK(!contains(r.err, "did you mean"));
  }
  r = run("ddl --audit-first-year 2030 --audit-last-year 2024");
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: --audit-first-year 2030 is after --audit-last-year 2024: the entity_audit "
        "range partitions need the first year first\n");
  r = run("compile --threads 3 examples/x.jsonl");
  CHECK(r.status == 64);
  CHECK(contains(r.err, "--threads"));
  r = run("compile --threads 0 examples/x.jsonl");
  CHECK(r.status == 64);
  r = run("check --help");
  CHECK(r.status == 0);
  CHECK(r.out.find("Usage: atlas2kudu check [OPTIONS] [FILE...]") != std::string::npos);
  CHECK(r.out.find("--max-rejects") != std::string::npos);
}

TEST_CASE(
    "an output option naming a file atlas2kudu did not write is refused; its own are replaced") {
  // The usual way here: the option's value left out, so the input became its value and the run
  // would read stdin (/dev/null under cron: no events, success) and replace the export.
  const std::string export_text = slurp(example_files().front());
  const std::string victim = write_temp(".jsonl", export_text);
  struct Case {
    std::string args;
    std::string what;
  };
  for (const Case& c : std::vector<Case>{
           {"check --stats",
            "--stats " + victim + ": the file exists and is not a --stats summary"},
           {"check --reject-file",
            "--reject-file " + victim + ": the file exists and is not a reject file"},
           {"check --metrics-textfile",
            "--metrics-textfile " + victim + ": the file exists and is not a metrics textfile"},
           {"compile --stats", "--stats " + victim},
           {"compile --reject-file", "--reject-file " + victim},
           {"compile --metrics-textfile", "--metrics-textfile " + victim},
           {"compile -o", "-o " + victim +
                              ": the file exists and is not SQL written by atlas2kudu (which "
                              "begins with '-- atlas2kudu ')"},
           {"ddl -o", "-o " + victim},
           {"apply -i 127.0.0.1:1 --prior none --stats", "--stats " + victim},
           {"apply -i 127.0.0.1:1 --prior none --reject-file", "--reject-file " + victim},
           {"apply -i 127.0.0.1:1 --prior none --metrics-textfile", "--metrics-textfile " + victim},
       }) {
    CAPTURE(c.args);
    const Run r = run(c.args + " " + victim);
    CHECK(r.status == 64);
    CHECK(contains(r.err, c.what));
    CHECK(contains(r.err, "refusing to replace it. Remove it or choose another path."));
    CHECK(r.out.empty());
    CHECK(slurp(victim) == export_text);
  }
  // The message names the kind of file, never the file's own bytes (it may hold a secret).
  const std::string secret = write_temp(".txt", "hunter2-is-the-password\n");
  const Run r = run("check --stats " + secret + " " + example_files().front());
  CHECK(r.status == 64);
  CHECK(!contains(r.err, "hunter2"));

  // Files atlas2kudu wrote (and empty ones, which tmp_path makes) are replaced run after run: what
  // each writer writes first is what the check expects.
  const std::string bad = write_temp(".jsonl", export_text + "not json at all\n");
  const std::string sql = tmp_path(".sql");
  const std::string stats = tmp_path(".json");
  const std::string metrics = tmp_path(".prom");
  const std::string rejects = tmp_path(".rejects");
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    Run c = run("compile -q --max-rejects 1 -o " + sql + " --stats " + stats +
                " --metrics-textfile " + metrics + " --reject-file " + rejects + " " + bad);
    CHECK(c.status == 0);
    CHECK(contains(slurp(rejects), "not json at all"));
    CHECK(contains(slurp(sql), "UPSERT INTO"));
    c = run("check --max-rejects 1 --stats " + stats + " --metrics-textfile " + metrics +
            " --reject-file " + rejects + " " + bad);
    CHECK(c.status == 0);
    c = run("ddl -o " + sql);
    CHECK(c.status == 0);
  }
  // A path that is not a regular file is the writer's to judge (it refuses devices itself).
  const Run device = run("compile -q -o /dev/null --max-rejects 1 " + bad);
  CHECK(device.status == 74);
  CHECK(contains(device.err, "/dev/null: not a regular file"));
  // Standard output named as a file: -o - says it.
  const Run dev_stdout = run("compile -q -o /dev/stdout --max-rejects 1 " + bad);
  CHECK(dev_stdout.status == 74);
  CHECK(dev_stdout.err ==
        "atlas2kudu: -o /dev/stdout: not a regular file (a symbolic link); refusing to replace it "
        "(-o - writes to standard output, which may be a terminal or a pipe)\n");
  // ddl's -o is named as compile's is.
  const Run directory = run("ddl -o /tmp");
  CHECK(directory.status == 74);
  CHECK(directory.err ==
        "atlas2kudu: -o /tmp: not a regular file (a directory); refusing to replace it\n");
  CHECK(directory.out.empty());
  const Run missing_dir = run("ddl -o /nonexistent-dir/x.sql");
  CHECK(missing_dir.status == 74);
  CHECK(
      missing_dir.err.starts_with("atlas2kudu: -o /nonexistent-dir/x.sql: cannot create it in "
                                  "/nonexistent-dir: "));
  for (const std::string& path : {victim, secret, bad, sql, stats, metrics, rejects}) {
    std::remove(path.c_str());
  }
}

TEST_CASE("an input given twice, or as two names of one file, is refused before anything is read") {
  const std::string example = example_files().front();
  const std::string other = tmp_path(".jsonl");  // another name of it
  std::remove(other.c_str());
  REQUIRE(::symlink(example.c_str(), other.c_str()) == 0);
  Run r = run("compile -q " + example + " " + example);
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + example +
                     " is given twice: it would be read twice (its records with Kafka offsets "
                     "passed over as replays the second time, those without applied twice). Give "
                     "each input once.\n");
  CHECK(r.out.empty());
  r = run("check " + example + " " + other);
  CHECK(r.status == 64);
  CHECK(contains(r.err, "atlas2kudu: " + example + " and " + other +
                            " are the same file: it would "
                            "be read twice"));
  // Standard input redirected from one of them is that file too.
  r = run("check " + example + " -", example);
  CHECK(r.status == 64);
  CHECK(contains(r.err, example + " and - (standard input) are the same file"));
  // '-' twice: the second read nothing (exit 0), whatever standard input was.
  r = run("check - -", example);
  CHECK(r.status == 64);
  CHECK(contains(r.err, "atlas2kudu: - (standard input) is given twice: it would be read twice"));
  CHECK(r.out.empty());
  // Two files with the same content are two inputs.
  const std::string copy = write_temp(".jsonl", slurp(example));
  CHECK(run("check " + example + " " + copy).status == 0);
  std::remove(copy.c_str());
  std::remove(other.c_str());
}

TEST_CASE("apply --checkpoint takes standard input or a pipe only as its last input") {
  // A rerun reads them again in full: before another input, that was applied after it again.
  const std::vector<std::string> examples = example_files();
  REQUIRE(examples.size() >= 2);
  const std::string checkpoint = tmp_path(".ckpt");
  std::remove(checkpoint.c_str());
  Run r = run("apply -i 127.0.0.1:1 --checkpoint " + checkpoint + " - " + examples[1], examples[0]);
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: --checkpoint: - (standard input) comes before " + examples[1] +
                     ": a later run cannot tell how much of it was applied and reads it again in "
                     "full, which would apply it after " +
                     examples[1] +
                     " a second time, taking rows back to older states. Give it last, or save it "
                     "to a file first\n");
  CHECK_FALSE(std::filesystem::exists(checkpoint));
  const std::string fifo = tmp_path(".fifo");
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  r = run("apply -i 127.0.0.1:1 --checkpoint " + checkpoint + " " + fifo + " " + examples[1]);
  CHECK(r.status == 64);
  CHECK(contains(r.err, fifo + " (not a regular file) comes before " + examples[1]));
  std::remove(fifo.c_str());
  // Last, or without --checkpoint, it is read as usual (here: no server, exit 4).
  CHECK(run("apply -i 127.0.0.1:1 -t 1 --checkpoint " + checkpoint + " " + examples[1] + " -",
            examples[0])
            .status == 4);
  CHECK(run("apply -i 127.0.0.1:1 -t 1 - " + examples[1], examples[0]).status == 4);
  std::remove(checkpoint.c_str());
}

TEST_CASE("outputs naming an input or each other, and paths that cannot be written, fail first") {
  const std::string example = example_files().front();
  const std::string bad = write_temp(".jsonl", slurp(example) + "not json at all\n");
  // A reject file read back as input: it was truncated before it was read (exit 0, no records).
  const std::string rejects = tmp_path(".rejects");
  REQUIRE(run("check --max-rejects 1 --reject-file " + rejects + " " + bad).status == 0);
  const std::string rejected = slurp(rejects);
  REQUIRE(contains(rejected, "not json at all"));
  Run r = run("check --max-rejects 1 --reject-file " + rejects + " " + rejects);
  CHECK(r.status == 64);
  CHECK(contains(r.err, "--reject-file " + rejects + ": the same file as the input " + rejects +
                            "; it would be replaced while it is read"));
  CHECK(r.out.empty());
  CHECK(slurp(rejects) == rejected);
  // ... also through a link, and for apply --checkpoint, which appends to it.
  const std::string link = tmp_path(".jsonl");
  std::remove(link.c_str());
  REQUIRE(::symlink(rejects.c_str(), link.c_str()) == 0);
  const std::string checkpoint = tmp_path(".ckpt");
  r = run("apply -i 127.0.0.1:1 --prior none --checkpoint " + checkpoint +
          " --max-rejects 1 --reject-file " + rejects + " " + link);
  CHECK(r.status == 64);
  CHECK(contains(r.err, "the same file as the input " + link));
  CHECK(slurp(rejects) == rejected);
  std::remove(checkpoint.c_str());
  // ... also as standard input, "-" or no FILE: the file was emptied, and the run succeeded with
  // 0 records.
  for (const std::string inputs : {" -", ""}) {
    CAPTURE(inputs);
    r = run("check --max-rejects 1 --reject-file " + rejects + inputs, rejects);
    CHECK(r.status == 64);
    CHECK(r.err == "atlas2kudu: --reject-file " + rejects +
                       ": the same file as the input - (standard input); it would be replaced "
                       "while it is read. Write to another path.\n");
    CHECK(slurp(rejects) == rejected);
  }
  r = run("compile -q -o " + rejects + " -", rejects);
  CHECK(r.status == 64);
  CHECK(contains(r.err, "-o " + rejects + ": the same file as the input - (standard input)"));
  CHECK(run("check --stats " + rejects, rejects).status == 64);
  CHECK(slurp(rejects) == rejected);
  // Standard input from another file, or no file (/dev/null), is no output's.
  CHECK(run("check --max-rejects 1 --reject-file " + rejects, bad).status == 0);
  CHECK(slurp(rejects).starts_with("{\"source\":\"-\",\"line\":5,"));
  // The checkpoint's own files, FILE.window and FILE.lock, are no other output's: --stats on
  // FILE.window replaced the knowledge its resume needed, and the resume refused the checkpoint.
  for (const std::string side : {".window", ".lock"}) {
    for (const std::string option : {"--stats", "--reject-file", "--metrics-textfile"}) {
      CAPTURE(side);
      CAPTURE(option);
      r = run("apply -i 127.0.0.1:1 --prior none --checkpoint " + checkpoint + " " + option + " " +
              checkpoint + side + " " + example);
      CHECK(r.status == 64);
      CHECK(r.err == "atlas2kudu: " + option + " " + checkpoint + side + " and --checkpoint's " +
                         (side == ".lock" ? "lock" : "window") + " file " + checkpoint + side +
                         " are the same file; one would replace the other. Give each its own "
                         "path.\n");
      CHECK(!std::filesystem::exists(checkpoint + side));
    }
  }
  // An input given as -o is named as the input, not as "a file atlas2kudu did not write".
  const std::string input_copy = write_temp(".jsonl", slurp(example));
  r = run("compile -q -o " + input_copy + " " + input_copy);
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: -o " + input_copy + ": the same file as the input " + input_copy +
                     "; it would be replaced while it is read. Write to another path.\n");
  CHECK(slurp(input_copy) == slurp(example));
  std::remove(input_copy.c_str());
  // Neither there: the input that does not open is the error (exit 66), as before.
  r = run("compile -q -o " + input_copy + " " + input_copy);
  CHECK(r.status == 66);
  CHECK(contains(r.err, input_copy + ": cannot open"));

  // Two outputs on one path, one of them not there yet and named another way.
  const std::string dir = std::filesystem::path(tmp_path(".d")).string();
  std::remove(dir.c_str());
  REQUIRE(std::filesystem::create_directory(dir));
  r = run("compile -q -o " + dir + "/out.sql --stats " + dir + "/../" +
          std::filesystem::path(dir).filename().string() + "/out.sql " + example);
  CHECK(r.status == 64);
  CHECK(contains(r.err, "are the same file; one would replace the other"));
  CHECK(!std::filesystem::exists(dir + "/out.sql"));

  // An output that cannot be created is found before the run, not after its work: -o is not
  // committed, nothing is printed.
  for (const std::string& option : {"--stats " + dir, "--stats " + dir + "/no/such/s.json",
                                    "--metrics-textfile " + dir + "/no/such/m.prom"}) {
    CAPTURE(option);
    r = run("compile -q -o " + dir + "/out.sql " + option + " " + example);
    CHECK(r.status == 74);
    CHECK(contains(r.err, option.substr(0, option.find(' '))));
    CHECK(!std::filesystem::exists(dir + "/out.sql"));
  }
  r = run("compile -q --stats " + dir + " " + example);
  CHECK(r.err == "atlas2kudu: --stats " + dir +
                     ": not a regular file (a directory); refusing to replace it\n");
  CHECK(r.out.empty());

  // Every input opens before anything runs: a typo in the second file applies nothing.
  r = run("compile -q " + example + " " + dir + "/missing.jsonl");
  CHECK(r.status == 66);
  CHECK(r.err == "atlas2kudu: " + dir + "/missing.jsonl: cannot open: No such file or directory\n");
  CHECK(r.out.empty());
  r = run("check " + dir);
  CHECK(r.status == 66);
  CHECK(contains(r.err, dir + ": cannot open: Is a directory"));
  CHECK(r.out.empty());  // no report of zeros for a run that read nothing

  std::filesystem::remove_all(dir);
  for (const std::string& path : {bad, rejects, link}) std::remove(path.c_str());
}

TEST_CASE("stderr that cannot be written changes nothing; stdout that cannot fails with 74") {
  const std::string example = example_files().front();
  const std::string ok_sql = run("compile " + example).out;
  REQUIRE(!ok_sql.empty());
  // A full disk under the cron log (2>>log), or stderr closed: the run completes, its messages
  // are dropped, and its outputs and exit status are what they would have been.
  const std::string stats = tmp_path(".json");
  const std::string metrics = tmp_path(".prom");
  for (const std::string& redirect : {std::string("2>/dev/full"), std::string("2>&-")}) {
    CAPTURE(redirect);
    Run r = run_shell(std::string(ATLAS2KUDU_BINARY) + " compile --stats " + stats +
                      " --metrics-textfile " + metrics + " " + example + " " + redirect);
    CHECK(r.status == 0);
    CHECK(r.out == ok_sql);
    CHECK(contains(slurp(stats), "\"exit_status\":0"));
    CHECK(contains(slurp(metrics), "atlas2kudu_last_exit_status{command=\"compile\"} 0"));
    r = run_shell(std::string(ATLAS2KUDU_BINARY) + " check --metrics-textfile " + metrics +
                  " /no/such/file " + redirect);
    CHECK(r.status == 66);
    CHECK(contains(slurp(metrics), "atlas2kudu_last_exit_status{command=\"check\"} 66"));
    r = run_shell(std::string(ATLAS2KUDU_BINARY) + " compile --no-such-option " + redirect);
    CHECK(r.status == 64);
  }
  // Standard output is the product: check's report and the digest fail like compile's SQL.
  for (const std::string& args : {"check " + example, std::string("digest hive_table db.t@cl"),
                                  "compile " + example, std::string("ddl"), std::string("--help"),
                                  std::string("compile --help"), std::string("--version")}) {
    CAPTURE(args);
    const Run r =
        run_shell("sh -c '" + std::string(ATLAS2KUDU_BINARY) + " " + args + " >/dev/full'");
    CHECK(r.status == 74);
    CHECK(contains(r.err, "No space left on device"));
  }
  // Standard input closed: reading it fails at once (it waited on the program's own stop pipe).
  Run r = run_shell("sh -c '" + std::string(ATLAS2KUDU_BINARY) + " check <&-'");
  CHECK(r.status == 74);
  CHECK(contains(r.err, "Bad file descriptor"));
  std::remove(stats.c_str());
  std::remove(metrics.c_str());
}

TEST_CASE("a checkpoint lock that cannot be written: nothing applied, and no stray files") {
  // ulimit -f 0: the lock's pid cannot be written. The early failure wrote --stats and
  // --metrics-textfile even without either: temporary files in the current directory.
  const std::string dir = tmp_path(".d");  // a file of that name: a directory in its place
  std::filesystem::remove(dir);
  std::filesystem::create_directories(dir);
  TestServer server("--handler kit");
  // The limit binds files only: the messages and the status go through a pipe.
  const Run r =
      run_shell("sh -c '(cd " + dir + " && ulimit -f 0 && " + std::string(ATLAS2KUDU_BINARY) +
                " apply --prior none -i " + server.address() + " --checkpoint cp " +
                example_files().front() + " 2>&1; echo \"status $?\") | cat'");
  CHECK(contains(r.out,
                 "atlas2kudu: cp.lock: cannot write: File too large (`ulimit -f` allows 0 KiB "
                 "per file); nothing was applied: the checkpoint beside it could not be saved "
                 "either\n"));
  CHECK(contains(r.out, "status 74\n"));
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    left.push_back(entry.path().filename().string());
  CHECK(left == std::vector<std::string>{"cp.lock"});
  CHECK(server.statements().empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("memory that runs out is named as such, not as bad input or an internal error") {
  if (kAddressSanitized) return;  // no `ulimit -v` leaves AddressSanitizer its shadow memory
  // One record of 7 MB (within the default 8 MiB record limit) needs some 60 MB to parse; with
  // 100 MB of address space the run has too little (it passes with 200 MB). It was "invalid JSON:
  // Error allocating memory" (a rejection: exit 2 past --max-rejects), or "internal error:
  // std::bad_alloc".
  const std::string input = write_temp(
      ".jsonl", R"({"version":{"version":"1.0.0","versionParts":[1]},"message":{"type":)"
                R"("ENTITY_NOTIFICATION_V2","entity":{"typeName":"T","attributes":{)"
                R"("qualifiedName":"a","blob":")" +
                    std::string(7000000, 'x') +
                    R"("},"guid":"00000001-0000-4000-8000-000000000001"},"operationType":)"
                    R"("ENTITY_CREATE","eventTime":1}})"
                    "\n");
  const std::string stats = tmp_path(".json");
  const Run r = run_shell("sh -c 'ulimit -v 100000; exec " + std::string(ATLAS2KUDU_BINARY) +
                          " compile --prior none --stats " + stats + " " + input + "'");
  CHECK(r.status == 1);
  CHECK(contains(r.err,
                 "atlas2kudu: out of memory: an allocation failed (`ulimit -v` allows "
                 "97.7 MiB of address space; --memory-budget bounds the run's resident "
                 "memory, not its address space, which is larger)\n"));
  CHECK_FALSE(contains(r.err, "invalid JSON"));
  CHECK_FALSE(contains(r.err, "internal error"));
  CHECK(contains(r.err, "atlas2kudu compile: "));  // the summary, as for every failure
  CHECK(contains(slurp(stats), "\"exit_status\":1"));
  std::remove(stats.c_str());
  std::remove(input.c_str());
}

TEST_CASE("without a thread to spare (ulimit -u), compile reads in turn and apply runs fewer") {
  // RLIMIT_NPROC binds only a user without CAP_SYS_RESOURCE: run as nobody, where that can be
  // done (CI runs as root). It was "internal error: Resource temporarily unavailable", exit 1.
  // LeakSanitizer needs a thread of its own at exit, which the limit refuses.
  if (kAddressSanitized) return;
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  const std::string example = example_files().front();
  if (::getuid() != 0 || std::system((as_nobody + "test -x " + ATLAS2KUDU_BINARY + " -a -r " +
                                      example + " 2>/dev/null")
                                         .c_str()) != 0) {
    MESSAGE("skipped: needs root, setpriv, and the binary and examples open to nobody");
    return;
  }
  // bash: dash's ulimit has no -u (it says so, and runs the command without the limit).
  const std::string limited = "bash -c 'ulimit -u 1; exec " + as_nobody + ATLAS2KUDU_BINARY;
  Run r = run_shell(limited + " compile --prior none --threads 2 " + example + "'");
  CHECK(r.status == 0);
  CHECK(r.out == run("compile --prior none --threads 1 " + example).out);
  TestServer server("--handler kit");
  r = run_shell(limited + " apply --prior none --sessions 4 -i " + server.address() + " " +
                example + "'");
  CHECK(r.status == 0);
  CHECK(contains(r.err, "0 row errors"));
}

TEST_CASE("a file past ulimit -f is a failed write (exit 74), not a silent SIGXFSZ") {
  // compile -o of the examples writes 7 KiB of SQL and 1.7 KiB of --stats; the limit is 2 KiB
  // (sh's ulimit -f counts blocks of 512 bytes).
  const std::string dir = tmp_path(".d");  // a file of that name: a directory in its place
  std::filesystem::remove(dir);
  std::filesystem::create_directories(dir);
  const std::string sql = dir + "/out.sql";
  const std::string stats = dir + "/stats.json";
  std::string files;
  for (const std::string& f : example_files()) files += " " + f;
  const Run r = run_shell("sh -c 'ulimit -f 4; exec " + std::string(ATLAS2KUDU_BINARY) +
                          " compile -o " + sql + " --stats " + stats + files + "'");
  CHECK(r.status == 74);
  CHECK(contains(r.err,
                 "atlas2kudu: writing SQL output: File too large (`ulimit -f` allows 2 KiB "
                 "per file)\n"));
  CHECK(contains(r.err, "stopped, no output written"));
  CHECK(contains(slurp(stats), "\"exit_status\":74"));
  // Neither -o nor its temporary file is left.
  std::size_t left = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    CAPTURE(entry.path().string());
    CHECK(entry.path().string() == stats);
    ++left;
  }
  CHECK(left == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "--config: a section of no command, help in the file, an option the command line excludes, "
    "and -Q over the file's query options whatever their case") {
  const std::string example = example_files().front();
  // An empty section of no command is named at its header (it crashed: no entry to name).
  const std::string empty = write_temp(".ini", "[atlas2kudu]\n[atlas2kudu.x]\n");
  Run r = run("ddl --config " + empty);
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + empty +
                     ":2: [atlas2kudu.x] names no command (sections: [atlas2kudu], "
                     "[atlas2kudu.query_options], and [atlas2kudu.COMMAND] for check, compile, "
                     "apply, ddl, digest)\n");
  const std::string typo = write_temp(".ini", "[atlas2kudu.aply]\nsessions = 2\n");
  r = run("compile --config " + typo + " " + example);
  CHECK(r.status == 64);
  CHECK(contains(r.err, typo + ":1: [atlas2kudu.aply] names no command (did you mean "
                               "[atlas2kudu.apply]?)"));
  // help or version in the file would print it and exit 0 every night, having done nothing.
  for (const std::string key : {"help", "version"}) {
    const std::string helpful = write_temp(".ini", "[atlas2kudu]\n" + key + " = yes\n");
    r = run("check --config " + helpful + " " + example);
    CHECK(r.status == 64);
    CHECK(r.err == "atlas2kudu: " + helpful + ":2: " + key +
                       " is for the command line, not a --config file\n");
    CHECK(r.out.empty());
    std::remove(helpful.c_str());
  }
  // [atlas2kudu]'s partitions is for `ddl`, not for `ddl --fdw`, which has none; the command's
  // own section gives it to this command, and the conflict is named at its line.
  const std::string shared = write_temp(".ini", "[atlas2kudu]\npartitions = 32\n");
  r = run("ddl --fdw --config " + shared);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "CREATE FOREIGN TABLE"));
  CHECK(ddl_uses_partitions("--config " + shared, 32));
  const std::string own = write_temp(".ini", "[atlas2kudu.ddl]\npartitions = 32\n");
  r = run("ddl --fdw --config " + own);
  CHECK(r.status == 64);
  CHECK(r.err.starts_with("atlas2kudu: " + own + ":2: --partitions excludes --fdw\n"));
  // --fdw=false is no --fdw: the file's partitions apply, as the command line's do.
  CHECK(ddl_uses_partitions("--fdw=false --config " + own, 32));
  CHECK(ddl_uses_partitions("--fdw=false --partitions 4", 4));
  // One authentication at a time: -k or -j on the command line sets aside [atlas2kudu]'s LDAP
  // and its password command, and so does --ldap=false. (Keys in any case, as impala-shell's.)
  const std::string ldap =
      write_temp(".ini",
                 "[atlas2kudu]\nImpalad = 127.0.0.1:1\nLDAP = true\nLdap_Password_Cmd = echo pw\n"
                 "ssl = true\nconnect_max_tries = 1\n");
  for (const std::string instead : {"-k", "--ldap=false", "-j --protocol hs2-http"}) {
    CAPTURE(instead);
    r = run("apply --config " + ldap + " " + instead + " " + example_files().front(), "/dev/null",
            "ATLAS2KUDU_JWT=t.o.k");
    CHECK(r.status == 4);  // it went as far as connecting
    CHECK(contains(r.err, "atlas2kudu: cannot connect to 127.0.0.1:1: nothing listens"));
  }
  // Both in the file (its Kerberos lines taken in, its LDAP ones left): the two lines named.
  const std::string both = write_temp(".ini", slurp(ldap) + "kerberos = true\n");
  r = run("apply --config " + both + " " + example_files().front());
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + both + ":7 and " + both +
                     ":3: -k/--kerberos and -l/--ldap are mutually exclusive\n");
  std::remove(both.c_str());
  std::remove(ldap.c_str());
  // A production file's CA bundle, absent here: checked only by a run that connects.
  const std::string production =
      write_temp(".ini",
                 "[atlas2kudu]\nimpalad = db1:21050\nssl = true\nca_cert = "
                 "/nonexistent/atlas2kudu/ca.pem\n");
  r = run("compile --prior none --config " + production + " " + example_files().front());
  CHECK(r.status == 0);
  r = run("apply --config " + production + " " + example_files().front());
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + production +
                     ":4: --ca_cert /nonexistent/atlas2kudu/ca.pem: No such file or directory\n");
  std::remove(production.c_str());
  r = run("ddl --fdw --audit-last-year 2040");
  CHECK(r.status == 64);
  CHECK(r.err.starts_with("atlas2kudu: --audit-last-year excludes --fdw\n"));
  // ... also when the file gave the option CLI11 names second.
  const std::string fdw = write_temp(".ini", "[atlas2kudu.ddl]\nfdw = true\n");
  r = run("ddl --partitions 8 --config " + fdw);
  CHECK(r.status == 64);
  CHECK(r.err.starts_with("atlas2kudu: " + fdw + ":2: --partitions excludes --fdw\n"));
  std::remove(fdw.c_str());
  // A section name in another case, or the query options' without its s, gets its near match.
  const std::string upper = write_temp(".ini", "[atlas2kudu.DDL]\n");
  r = run("ddl --config " + upper);
  CHECK(contains(r.err, ":1: [atlas2kudu.DDL] names no command (did you mean [atlas2kudu.ddl]?)"));
  const std::string singular = write_temp(".ini", "[atlas2kudu.query_option]\nmt_dop = 0\n");
  r = run("ddl --config " + singular);
  CHECK(contains(r.err, "(did you mean [atlas2kudu.query_options]?)"));
  // A key no command has: in [atlas2kudu], which serves every command, it is no option of
  // atlas2kudu, not of the one command run; in a command's own section, of that command.
  const std::string typo_key = write_temp(".ini", "[atlas2kudu]\nmax_rejcts = 3\n");
  r = run("digest --config " + typo_key + " a b");
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + typo_key +
                     ":2: 'max_rejcts' is not an option of atlas2kudu (did you mean "
                     "max-rejects?)\n");
  const std::string own_typo = write_temp(".ini", "[atlas2kudu.check]\nmax_rejcts = 3\n");
  r = run("check --config " + own_typo + " " + example_files().front());
  CHECK(r.err == "atlas2kudu: " + own_typo +
                     ":2: 'max_rejcts' is not an option of atlas2kudu check (did you mean "
                     "max-rejects?)\n");
  std::remove(typo_key.c_str());
  std::remove(own_typo.c_str());
  std::remove(upper.c_str());
  std::remove(singular.c_str());
  // Impala's query option names know no case: the command line's MEM_LIMIT wins over the
  // file's mem_limit (both were sent, and the file's came last).
  TestServer server("--handler kit");
  const std::string options =
      write_temp(".ini", "[atlas2kudu.query_options]\nmem_limit = 2g\nmt_dop = 0\n");
  r = run("apply -q --prior none --config " + options + " -Q MEM_LIMIT=1g -i " + server.address() +
          " " + example);
  CHECK(r.status == 0);
  const std::string report = server.report();
  CHECK(contains(report, "\"MEM_LIMIT=1g\""));
  CHECK(contains(report, "\"mt_dop=0\""));
  CHECK_FALSE(contains(report, "mem_limit=2g"));
  // Twice on the command line in two cases: the last wins, and it alone is sent.
  r = run("apply -q --prior none -Q mem_limit=5g -Q MEM_LIMIT=6g -i " + server.address() + " " +
          example);
  CHECK(r.status == 0);
  CHECK(contains(server.report(), "\"MEM_LIMIT=6g\""));
  CHECK_FALSE(contains(server.report(), "mem_limit=5g"));
  // Twice in the file's section in two cases: the same option set twice, a usage error.
  const std::string twice =
      write_temp(".ini", "[atlas2kudu.query_options]\nMEM_LIMIT = 2g\nmem_limit = 3g\n");
  r = run("compile --prior none --config " + twice + " " + example);
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + twice + ":3: query option mem_limit is set again (first as " +
                     "MEM_LIMIT at " + twice + ":2; Impala reads option names whatever their " +
                     "case)\n");
  // A name Impala cannot have.
  r = run("apply --prior none -i 127.0.0.1:1 -Q 'MEM LIMIT=1' " + example);
  CHECK(r.status == 64);
  CHECK(contains(r.err, "-Q MEM LIMIT=1: a query option's name is letters, digits and '_'"));
  for (const std::string& f : {empty, typo, shared, own, options, twice}) std::remove(f.c_str());
}

TEST_CASE("--ssl_insecure_skip_verify is warned of by every run that connects") {
  const std::string example = example_files().front();
  for (const std::string command : {"apply", "compile"}) {
    CAPTURE(command);
    const Run r = run(command +
                      " --ssl --ssl_insecure_skip_verify --connect_max_tries 1 -i "
                      "127.0.0.1:1 " +
                      example);
    CHECK(r.status == 4);
    CHECK(r.err.starts_with("atlas2kudu " + command +
                            ": warning: --ssl_insecure_skip_verify: the certificate and name of "
                            "127.0.0.1:1 are not checked; whoever answers there gets what this "
                            "run sends\n"));
  }
}

TEST_CASE("-l without Cyrus's PLAIN plugin names the package") {
  TestServer server("--transport sasl --user alice", "HS2_TEST_SERVER_PASSWORD=pw");
  const std::string no_plugins = tmp_path(".d");
  std::filesystem::remove(no_plugins);
  std::filesystem::create_directories(no_plugins);
  const Run r = run("apply -q -l -u alice --auth_creds_ok_in_clear -i " + server.address() + " " +
                        example_files().front(),
                    "/dev/null", "SASL_PATH=" + no_plugins + " ATLAS2KUDU_LDAP_PASSWORD=pw");
  CHECK(r.status == 5);
  CHECK(contains(r.err, "atlas2kudu: LDAP: Cyrus SASL has no PLAIN plugin ("));
  CHECK(contains(r.err, "): install the package libsasl2-modules\n"));
  std::filesystem::remove(no_plugins);
}

TEST_CASE("compile: connection options without -i read nothing, and say so") {
  const std::string example = example_files().front();
  Run r = run("compile -q -k --ssl -s hive " + example);
  CHECK(r.status == 0);
  CHECK(r.err ==
        "atlas2kudu compile: warning: --ssl, -k, -s without -i: no prior state is read (compile "
        "reads it only from the Impala that -i names), so the SQL assumes none is stored; give "
        "-i, or --prior none to say so\n");
  // The same SQL as an offline run; --prior none says it, and none is warned of.
  const Run offline = run("compile -q --prior none -k " + example);
  CHECK(offline.status == 0);
  CHECK(offline.err.empty());
  CHECK(offline.out == r.out);
  CHECK(run("compile -q " + example).err.empty());
  // A --config file's, or a flag given false, are not asked for on this command line: quiet.
  const std::string shared = write_temp(".ini", "[atlas2kudu]\nssl = true\nuser = etl\n");
  CHECK(run("compile -q --ssl=false --config " + shared + " " + example).err.empty());
  std::remove(shared.c_str());
}

TEST_CASE("numbers are decimal, a leading zero included; help takes one command") {
  // CLI11 read them with base 0: 010 was octal 8, 08 "Could not convert".
  CHECK(ddl_uses_partitions("--partitions 010", 10));
  CHECK(ddl_uses_partitions("--partitions 08", 8));
  // --help wins over the rest of the line, whatever its values.
  for (const std::string line :
       {"ddl --help --partitions 1", "ddl --partitions 1 -h", "check --max-rejects x --help"}) {
    CAPTURE(line);
    const Run help = run(line);
    CHECK(help.status == 0);
    CHECK(help.err.empty());
    CHECK(contains(help.out, "Usage: atlas2kudu " + line.substr(0, line.find(' ')) + " [OPTIONS]"));
  }
  CHECK(run("compile -- --help").status == 66);  // after "--", a file's name
  const Run r = run("help ddl check");
  CHECK(r.status == 64);
  CHECK(r.err ==
        "atlas2kudu: help takes one command name at most (help COMMAND), got 2\n"
        "Run 'atlas2kudu --help' for the options.\n");
}

TEST_CASE(
    "an option before the command, or one a command lacks, never shows a word that may be "
    "its secret") {
  const std::string example = example_files().front();
  struct Case {
    std::string args, message;
  };
  // Said as it is, with a command that has the option, and its value when it takes one that is
  // no secret.
  for (const Case& c : std::vector<Case>{
           {"--config c.ini ddl",
            "--config is an option of every command: give the command first, as in 'atlas2kudu "
            "ddl --config c.ini'\n"},
           {"--partitions 8 apply " + example,
            "--partitions is an option of ddl: give the command first, as in 'atlas2kudu ddl "
            "--partitions 8'\n"},
           {"--sessions 4 check " + example,
            "--sessions is an option of compile and apply: give the command first, as in "
            "'atlas2kudu compile --sessions 4'\n"},
           {"--fdw x ddl",
            "--fdw is an option of ddl: give the command first, as in 'atlas2kudu ddl --fdw'\n"},
       }) {
    CAPTURE(c.args);
    const Run r = run(c.args);
    CHECK(r.status == 64);
    CHECK(r.err == "atlas2kudu: " + c.message + "Run 'atlas2kudu --help' for the options.\n");
  }
  for (const Case& c : std::vector<Case>{
           {"--password Hunter2 apply " + example,
            "--password is no option of atlas2kudu: no option takes a password, which ps would "
            "show (the word after it is not shown); with apply -l, it comes from "
            "--ldap_password_cmd, $ATLAS2KUDU_LDAP_PASSWORD or a prompt"},
           {"--ldap_password_cmd 'echo Hunter2' apply " + example,
            "--ldap_password_cmd is an option of compile and apply: give the command first, as in "
            "'atlas2kudu apply --ldap_password_cmd' (the word after it is not shown: it may be a "
            "secret)"},
           {"-l Hunter2 apply",
            "-l is an option of compile and apply: give the command first, as in 'atlas2kudu "
            "apply -l' (the word after it is not shown: it may be a secret)"},
           // A cluster of short flags may end in a value: only its first letter is shown.
           {"-pHunter2 " + example,
            "-p...: options go after the command (the word after it is not shown: it may be a "
            "secret)"},
           {"-lpHunter2 aply " + example, "-l...: options go after the command"},
           {"--password -- Hunter2",
            "'--' before the command: the command comes first, as in 'atlas2kudu COMMAND "
            "[OPTIONS] -- FILE...' (the word after it is not shown: it may be a secret)"},
           // With '=', CLI11 takes it for the program's own option: said as the command's.
           {"--partitions=8 ddl",
            "The following argument was not expected: --partitions=... (--partitions is an "
            "option of ddl: give it after the command, as in 'atlas2kudu ddl "
            "--partitions=...')"},
           {"ddl --ldap-password Hunter2", "The following arguments were not expected: "},
           {"ddl -u bob -p Hunter2", "The following arguments were not expected: "},
       }) {
    CAPTURE(c.args);
    const Run r = run(c.args);
    CHECK(r.status == 64);
    CHECK(r.err.starts_with("atlas2kudu: " + c.message));
    CHECK_FALSE(contains(r.err, "Hunter2"));
  }
  // A short value is hidden too, word by word in CLI11's list.
  const Run r = run("ddl --password ab");
  CHECK(
      r.err.starts_with("atlas2kudu: The following arguments were not expected: ... --password\n"));
}

TEST_CASE("--config: a directory, a byte-order mark, a nested --config, a key set twice") {
  const std::string example = example_files().front();
  const std::string dir = std::filesystem::temp_directory_path().string();
  Run r = run("compile --config " + dir + " " + example);
  CHECK(r.status == 66);
  CHECK(contains(r.err, dir + ": cannot read the --config file: Is a directory"));
  const auto options_line = [](const std::string& sql) {
    return sql.substr(sql.find("-- options:"),
                      sql.find('\n', sql.find("-- options:")) - sql.find("-- options:"));
  };
  const std::string bom = write_temp(".ini", "\xEF\xBB\xBF[atlas2kudu]\ndatabase = bom_db\n");
  r = run("compile --config " + bom + " " + example);
  CHECK(r.status == 0);
  CHECK(contains(options_line(r.out), "--database bom_db "));
  const std::string nested = write_temp(".ini", "[atlas2kudu]\nconfig = " + bom + "\n");
  r = run("compile --config " + nested + " " + example);
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + nested +
                     ":2: a --config file cannot name another one; give --config on the command "
                     "line\n");
  const std::string twice =
      write_temp(".ini", "[atlas2kudu]\ndatabase = a\n[atlas2kudu]\ndatabase = b\n");
  r = run("compile --config " + twice + " " + example);
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + twice + ":4: database is set again (first at " + twice + ":2)\n");
  // The command's own section wins over [atlas2kudu], and false turns a flag back off.
  const std::string layered = write_temp(".ini",
                                         "[atlas2kudu]\ndatabase = common\nquiet = true\n"
                                         "[atlas2kudu.compile]\ndatabase = own\nquiet = false\n");
  r = run("compile --config " + layered + " " + example);
  CHECK(r.status == 0);
  CHECK(contains(options_line(r.out), "--database own "));
  CHECK(contains(r.err, "atlas2kudu compile: 4 events"));
  // A repeatable option takes one value per line.
  const std::string repeated =
      write_temp(".ini", "[atlas2kudu]\nquery_option = MEM_LIMIT=1g\nquery_option = MT_DOP=0\n");
  r = run("compile -q --config " + repeated + " " + example);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  // A bad value is reported at its line, as the file's other errors are; the command line's
  // own value wins and is never blamed on the file.
  const std::string bad_value =
      write_temp(".ini", "[atlas2kudu]\ndatabase = ok\n\n[atlas2kudu.compile]\nbatch_rows = abc\n");
  r = run("compile --config " + bad_value + " " + example);
  CHECK(r.status == 64);
  CHECK(r.err.starts_with("atlas2kudu: " + bad_value +
                          ":5: --batch-rows: expected a whole number from 1 to 9999, got 'abc'\n"));
  // A flag's value that is no boolean is not shown: it may be the password itself.
  const std::string flag_value = write_temp(".ini", "[atlas2kudu.apply]\nldap = Hunter2\n");
  r = run("apply --config " + flag_value + " " + example);
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + flag_value +
                     ":2: ldap is a flag: expected true or false (the value given is not shown: "
                     "it may be a secret)\n");
  std::remove(flag_value.c_str());
  const std::string empty_value = write_temp(".ini", "[atlas2kudu]\nmemory_budget =\n");
  r = run("compile --config " + empty_value + " " + example);
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + empty_value +
                     ":2: memory_budget has no value; give one, or leave the line out for the "
                     "default\n");
  std::remove(empty_value.c_str());
  r = run("compile --config " + bad_value + " --batch-rows 0 " + example);
  CHECK(r.status == 64);
  CHECK(r.err.starts_with(
      "atlas2kudu: --batch-rows: expected a whole number from 1 to 9999, got '0'\n"));
  // A limit the budget cannot hold is refused once the command runs (two values together): still
  // at the file's line when the file gave the limit, and not when the command line did.
  const std::string limits =
      write_temp(".ini", "[atlas2kudu]\nmemory_budget = 64M\nmax_record_bytes = 4194304\n");
  const std::string refusal =
      "--max-record-bytes 4194304: reading a record that long can take about nine times its "
      "size, more than --memory-budget 64M allows; give at most 2097152 (1/32 of the "
      "budget), or --memory-budget 128M or more\n";
  for (const std::string command : {"check", "compile"}) {
    CAPTURE(command);
    r = run(command + " --config " + limits + " " + example);
    CHECK(r.status == 64);
    CHECK(r.err == "atlas2kudu: " + limits + ":3: " + refusal);
    r = run(command + " --config " + limits + " --max-record-bytes 4194304 " + example);
    CHECK(r.status == 64);
    CHECK(r.err == "atlas2kudu: " + refusal);
  }
  // Such messages may name the option by its short name (-i, -s, -u, -Q, -b, -o).
  const std::string host = write_temp(".ini", "[atlas2kudu]\nimpalad = :\n");
  r = run("apply --prior none --config " + host + " " + example);
  CHECK(r.status == 64);
  CHECK(r.err == "atlas2kudu: " + host +
                     ":2: -i ':': a host or port left empty; give host[:port], or [v6addr][:port] "
                     "for IPv6\n");
  for (const std::string& path : {bom, nested, twice, layered, repeated, bad_value, limits, host}) {
    std::remove(path.c_str());
  }
}

TEST_CASE("a server message with newlines is still one text log line") {
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  {
    using namespace atlas2kudu;
    RunLog log("apply", LogFormat::kText, true, true, file);
    const Hs2Error error(Hs2ErrorKind::kTransient,
                         "Query 4a:0 failed:\nKudu is busy\r\nretry later");
    log.retry(
        StatementAt{
            .window = 2, .phase = "upsert", .position = 1, .count = 3, .table = "entity_flat"},
        RetryNotice{.retry = 1,
                    .max_retries = 5,
                    .backoff = std::chrono::milliseconds(500),
                    .error = &error});
  }
  std::rewind(file);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), file));
  std::fclose(file);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  CHECK(text.ends_with(
      " atlas2kudu apply: window 2: retry 1 of 5 in 0.5 s: upsert statement 1 of 3 (table "
      "entity_flat): Query 4a:0 failed: Kudu is busy  retry later\n"));
}

TEST_CASE(
    "rows already deleted: the log line names another session only when the run has several") {
  using namespace atlas2kudu;
  const StatementAt at{
      .window = 2, .phase = "delete", .position = 3, .count = 9, .table = "edge_out"};
  const auto line = [&at](std::uint64_t rows, int sessions, bool windows = true) {
    std::FILE* file = std::tmpfile();
    REQUIRE(file != nullptr);
    {
      RunLog log("apply", LogFormat::kText, true, windows, file);
      log.already_deleted(at, rows, sessions);
    }
    std::rewind(file);
    std::string text(4096, '\0');
    text.resize(std::fread(text.data(), 1, text.size(), file));
    std::fclose(file);
    return text.substr(text.find(" atlas2kudu ") + 1);
  };
  CHECK(line(2, 4) ==
        "atlas2kudu apply: window 2: delete statement 3 of 9 (table edge_out): 2 rows already "
        "deleted when the delete reached them (by another statement: one of this run's other "
        "sessions, or another writer's); not counted as row errors\n");
  CHECK(line(1, 1) ==
        "atlas2kudu apply: window 2: delete statement 3 of 9 (table edge_out): 1 row already "
        "deleted when the delete reached it (by another writer's statement); not counted as a row "
        "error\n");
  CHECK(line(1, 1, false).empty());  // -q, or a terminal: the summary counts them
}

TEST_CASE("a run reading the terminal says so on stderr; files and pipes do not") {
  // script(1) runs the command on a pseudo-terminal and passes it Ctrl-D (end of input).
  const std::string shown = tmp_path(".tty");
  for (const std::string& command : {std::string("check"), std::string("compile -q -")}) {
    CAPTURE(command);
    const std::string cmd = "printf '\\004' | timeout 20 script -qec '" +
                            std::string(ATLAS2KUDU_BINARY) + " " + command + "' /dev/null > " +
                            shown + " 2>&1";
    CHECK(shell_status(std::system(cmd.c_str())) == 0);
    CHECK(contains(slurp(shown), "atlas2kudu " + command.substr(0, command.find(' ')) +
                                     ": reading notifications from the terminal (no FILE given); "
                                     "end with Ctrl-D, or stop with Ctrl-C"));
  }
  const std::string file = example_files().front();
  for (const Run& r : {run("check " + file), run("check", file), run("compile -q -", file)}) {
    CHECK(r.status == 0);
    CHECK_FALSE(contains(r.err, "from the terminal"));
  }
  std::remove(shown.c_str());
}

TEST_CASE("a truncated gzip file is an I/O error, after the records before the cut") {
  const std::string gz = slurp(data("notifications/atlas21-console.jsonl.gz"));
  const std::string cut = tmp_path(".jsonl.gz");
  {
    std::FILE* f = std::fopen(cut.c_str(), "w");
    std::fwrite(gz.data(), 1, gz.size() - 20, f);
    std::fclose(f);
  }
  auto r = run("check " + cut);
  CHECK(r.status == 74);
  CHECK(r.err.find(cut + ": ") != std::string::npos);
  std::remove(cut.c_str());
}

namespace {

std::size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::size_t n = 0;
  for (std::size_t at = 0; at < text.size();) {
    if (text.compare(at, prefix.size(), prefix) == 0) ++n;
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return n;
}

}  // namespace

TEST_CASE("apply runs the compiled statements over HS2 and reports rows per table") {
  TestServer server("--transport binary --handler kit");
  const std::string examples = std::string(ATLAS2KUDU_SOURCE_DIR) + "/examples/*.jsonl";
  const std::string stats = tmp_path(".json");
  auto r = run("apply -i " + server.address() + " --prior none --stats " + stats + " " + examples);
  CHECK(r.status == 0);
  CHECK(r.err.find("atlas2kudu apply: 23 events (27 records, 0 rejected), 1 window applied, 21 "
                   "statements") != std::string::npos);
  CHECK(r.err.find("entity_audit                      13 rows modified") != std::string::npos);
  const std::string json = slurp(stats);
  CHECK(json.find("\"applied_statements\":21") != std::string::npos);
  CHECK(json.find("\"completed\":true") != std::string::npos);
  // The server saw exactly what compile prints, deletes first.
  const auto compiled = run("compile -q --prior none " + examples);
  CHECK(count_lines_starting(compiled.out, "DELETE ") +
            count_lines_starting(compiled.out, "UPSERT ") ==
        21);
  std::remove(stats.c_str());
}

TEST_CASE("an entity given 10001 tags at once: the clean-up keeps them with two NOT IN-lists") {
  // Impala (and the kit) refuse an IN-list of more than 9999 items.
  std::string tags;
  for (int i = 0; i < 10001; ++i)
    tags += fmt::format("{}{{\"typeName\":\"T{:05}\"}}", i ? "," : "", i);
  const std::string input =
      write_temp(".jsonl",
                 "{\"version\":{\"version\":\"1.0.0\"},\"msgCreationTime\":1,\"message\":{\"type\":"
                 "\"ENTITY_NOTIFICATION_V2\",\"entity\":{\"typeName\":\"hive_table\",\"guid\":"
                 "\"00000001-0000-4000-8000-000000000001\",\"classifications\":[" +
                     tags + "]},\"operationType\":\"CLASSIFICATION_ADD\",\"eventTime\":3000}}\n");
  TestServer server("--transport binary --handler kit");
  const Run r = run("apply -i " + server.address() + " --prior none " + input);
  CHECK(r.status == 0);
  CHECK(contains(r.err, "entity_classifications         10001 rows modified"));
  const std::string log = server.statements();
  std::size_t lists = 0;
  for (std::size_t at = log.find("`tag_name` NOT IN ("); at != std::string::npos;
       at = log.find("`tag_name` NOT IN (", at + 1)) {
    ++lists;
  }
  CHECK(lists == 2);
  CHECK(contains(log, "'T09998') AND `tag_name` NOT IN ('T09999', 'T10000')"));
  std::remove(input.c_str());
}

TEST_CASE("apply reads stored state by default (--prior impala); a rerun merges onto it") {
  TestServer server("--transport binary --handler kit");
  const std::string first = data("scenarios/01-partial-update-and-rename.jsonl");
  auto r = run("apply -i " + server.address() + " " + first);
  CHECK(r.status == 0);
  // A partial update in a later run: with the stored props read back, the merge keeps "owner".
  const std::string later = tmp_path(".jsonl");
  {
    std::FILE* f = std::fopen(later.c_str(), "w");
    std::fputs(
        "{\"version\":{\"version\":\"1.0.0\"},\"msgCreationTime\":1,\"message\":{\"type\":"
        "\"ENTITY_NOTIFICATION_V2\",\"entity\":{\"typeName\":\"hive_table\",\"guid\":"
        "\"00000001-0000-4000-8000-000000000001\",\"attributes\":{\"size\":7}},"
        "\"operationType\":\"ENTITY_UPDATE\",\"eventTime\":3000}}\n",
        f);
    std::fclose(f);
  }
  r = run("compile -q -i " + server.address() + " " + later);
  CHECK(r.status == 0);
  CHECK(r.out.find("-- prior state: impala (") != std::string::npos);
  CHECK(r.out.find("{\"createTime\":5,\"owner\":\"b\",\"size\":7}") != std::string::npos);
  // Without a connection, compile knows only this input.
  r = run("compile -q " + later);
  CHECK(r.out.find("-- prior state: none") != std::string::npos);
  CHECK(r.out.find("'{\"size\":7}'") != std::string::npos);
  std::remove(later.c_str());
}

TEST_CASE("apply: a definite server error stops with its position and exit 3") {
  TestServer server(
      "--transport binary --handler kit --fail-at '2:AnalysisException: Could not resolve table'");
  const auto r = run("apply -i " + server.address() + " --prior none " +
                     data("notifications/atlas21-console.jsonl"));
  CHECK(r.status == 3);
  CHECK(r.err.find("window 1") != std::string::npos);
  CHECK(r.err.find("AnalysisException: Could not resolve table") != std::string::npos);
  CHECK(r.err.find(" s (stopped by the error above)\n") != std::string::npos);
}

TEST_CASE("apply: a dropped connection is retried and the run completes") {
  TestServer server("--transport binary --handler kit --drop-at 2");
  const auto r = run("apply -i " + server.address() + " --prior none --retry_backoff_ms 1 " +
                     data("notifications/atlas21-console.jsonl"));
  CHECK(r.status == 0);
  CHECK(contains(r.err, ": window 1: 4 events, 6 statements, 12 rows, 0 row errors, 1 retry, "));
}

TEST_CASE("apply: unreachable server is exit 4, wrong LDAP password exit 5, secrets never shown") {
  auto r = run("apply -i 127.0.0.1:1 --prior none --connect_max_tries 1 " +
               data("notifications/gzip-message.jsonl"));
  CHECK(r.status == 4);
  CHECK(r.err.find("cannot connect to 127.0.0.1:1") != std::string::npos);

  TestServer server("--transport sasl --user alice --handler kit",
                    "HS2_TEST_SERVER_PASSWORD=right-pw");
  r = run("apply -i " + server.address() + " --prior none -l -u alice --auth_creds_ok_in_clear " +
          "--ldap_password_cmd 'echo wrong-pw-123' " + data("notifications/gzip-message.jsonl"));
  CHECK(r.status == 5);
  CHECK(r.err.find("wrong-pw-123") == std::string::npos);
  CHECK(r.out.find("wrong-pw-123") == std::string::npos);
  // LDAP without TLS is refused before anything is sent.
  r = run("apply -i " + server.address() + " --prior none -l -u alice " +
          "--ldap_password_cmd 'echo right-pw' " + data("notifications/gzip-message.jsonl"));
  CHECK(r.status == 64);
  // The right password works.
  r = run("apply -i " + server.address() + " --prior none -l -u alice --auth_creds_ok_in_clear " +
          "--ldap_password_cmd 'echo right-pw' " + data("notifications/gzip-message.jsonl"));
  CHECK(r.status == 0);
  CHECK(r.err.find("right-pw") == std::string::npos);
}

TEST_CASE(
    "apply over TLS: trusted CA works; untrusted CA and wrong host name are refused (exit 5)") {
  const TlsFiles& tls = tls_files();
  const std::string input = data("notifications/gzip-message.jsonl");
  // The same words over both protocols: hs2-http's libcurl checks the name itself, and says so in
  // its own words, which read as OpenSSL's do over hs2.
  for (const auto& [transport, protocol] :
       {std::pair{"binary", "hs2"}, std::pair{"http", "hs2-http"}}) {
    const std::string apply = std::string("apply --protocol ") + protocol + " -i ";
    CAPTURE(apply);
    // (Lambdas capture no structured binding: clang before 16 refuses them.)
    const std::string server_options = std::string("--transport ") + transport + " --handler kit";
    const auto tls_server = [&](const std::string& cert, const std::string& key) {
      return server_options + " --tls-cert " + cert + " --tls-key " + key;
    };
    // A run refused at the handshake (exit 5, at the first try): its messages.
    const auto refused = [&](const std::string& address, const std::string& ca_cert) {
      const Run r =
          run(apply + address + " --ssl" + (ca_cert.empty() ? "" : " --ca_cert " + ca_cert) +
              " --connect_max_tries 1 " + input);
      CHECK(r.status == 5);
      return r.err;
    };
    {
      TestServer server(tls_server(tls.cert, tls.key));
      CHECK(run(apply + server.address() + " --ssl --ca_cert " + tls.ca + " " + input).status == 0);
      // The message names the port, the names the certificate carries and the flag to try.
      CHECK(contains(refused(server.address(), tls.other_ca),
                     "atlas2kudu: TLS: the certificate of " + server.address() +
                         " is not trusted for '127.0.0.1': unable to get local issuer "
                         "certificate; it names DNS:localhost, IP:127.0.0.1; try "
                         "--ca_cert FILE with the CA that signed it\n"));
      // Without --ca_cert the system CAs do not know the test CA either.
      refused(server.address(), "");
    }
    {
      TestServer server(tls_server(tls.wrong_cert, tls.wrong_key));
      CHECK(contains(refused(server.address(), tls.ca),
                     "atlas2kudu: TLS: the certificate of " + server.address() +
                         " is not trusted for '127.0.0.1': IP address mismatch; it names "
                         "DNS:wrong.example; try -i with a name it names, and the same "
                         "port\n"));
      const std::string by_name = "localhost:" + std::to_string(server.port());
      CHECK(contains(refused(by_name, tls.ca),
                     "atlas2kudu: TLS: the certificate of " + by_name +
                         " is not trusted for 'localhost': hostname mismatch; it names "
                         "DNS:wrong.example; try -i with a name it names, and the same "
                         "port\n"));
    }
  }
}

TEST_CASE("apply over hs2-http: 503 with Retry-After, then success") {
  TestServer server("--transport http --handler kit --http-503 2 --retry-after 1");
  const std::string stats = tmp_path(".json");
  const std::string metrics = tmp_path(".prom");
  const auto r =
      run("apply --protocol hs2-http -i " + server.address() + " --stats " + stats +
          " --metrics-textfile " + metrics + " " + data("notifications/atlas21-console.jsonl"));
  CHECK(r.status == 0);
  CHECK(r.err.find("4 events") != std::string::npos);
  // Counted apart from the statements' retries: no statement ran again.
  CHECK(contains(r.err, ", 0 retries, "));
  CHECK(contains(r.err, "; 2 HTTP 502/503/504 replies waited out\n"));
  CHECK(contains(slurp(stats), "\"retries\":0,\"reconnects\":0,"));
  CHECK(contains(slurp(stats), ",\"http_waits\":2,\"checkpoint\":null}"));
  CHECK(contains(slurp(metrics), "atlas2kudu_http_waits_total{command=\"apply\"} 2\n"));
  std::remove(stats.c_str());
  std::remove(metrics.c_str());
  // Each wait is in the log as it starts (a draining load balancer is not a hung run).
  CHECK(contains(r.err, " atlas2kudu apply: HTTP 503 from " + server.address() +
                            ": try 2 of 4 in 1 s (Retry-After)\n"));
  CHECK(contains(r.err, ": try 3 of 4 in 1 s (Retry-After)\n"));
}

TEST_CASE("apply over hs2-http: a wait on 503 in the JSON log has its figures as fields") {
  TestServer server("--transport http --handler kit --http-503 1");
  const auto r = run("apply --protocol hs2-http --log-format json -i " + server.address() + " " +
                     data("notifications/atlas21-console.jsonl"));
  CHECK(r.status == 0);
  // The test server's 503 says "Retry-After: 1".
  CHECK(contains(r.err,
                 "\"command\":\"apply\",\"event\":\"http-wait\",\"status\":503,"
                 "\"endpoint\":\"" +
                     server.address() +
                     "\",\"try\":2,\"max_tries\":4,\"wait_seconds\":1,"
                     "\"retry_after\":true}\n"));
}

TEST_CASE("apply --sessions 4 and --sessions 1 send the same statements") {
  const std::string input = data("scenarios/04-soft-delete-cascades-edges-keeps-tags.jsonl");
  auto sorted_lines = [](const std::string& text) {
    std::vector<std::string> lines = lines_of(text);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  std::vector<std::string> logs;
  for (const char* sessions : {"1", "4"}) {
    TestServer server("--transport binary --handler kit");
    const auto r = run("apply -i " + server.address() + " --prior none --batch-rows 1 --sessions " +
                       sessions + " " + input);
    CHECK(r.status == 0);
    logs.push_back(server.statements());
  }
  CHECK(sorted_lines(logs[0]) == sorted_lines(logs[1]));
  CHECK(sorted_lines(logs[0]).size() > 10);
}

TEST_CASE("golden SQL: compile of examples/ is byte-identical to the reviewed output") {
  // Run from the source tree with relative paths, as the golden files were made
  // (scripts/update-golden.sh), so the header's source names match.
  const std::string cd = std::string("cd ") + ATLAS2KUDU_SOURCE_DIR + " && ";
  const auto compile = [&](const std::string& flags) {
    const std::string out_path = tmp_path(".sql");
    const std::string cmd =
        cd + ATLAS2KUDU_BINARY + " compile -q " + flags + " examples/*.jsonl > " + out_path;
    REQUIRE(std::system(cmd.c_str()) == 0);
    const std::string sql = slurp(out_path);
    std::remove(out_path.c_str());
    return sql;
  };
  const std::string golden = std::string(ATLAS2KUDU_TEST_DATA) + "/golden/";
  const std::string hex = compile("");
  CHECK(hex == slurp(golden + "examples.sql"));
  CHECK(compile("") == hex);  // deterministic run to run
  // One thread, or a second one reading ahead (the default on two CPUs): the same script.
  CHECK(compile("--threads 1") == hex);
  CHECK(compile("--threads 2") == hex);
  CHECK(compile("--threads 2 --window-events 3 --annotate") ==
        compile("--threads 1 --window-events 3 --annotate"));
  CHECK(compile("--key-encoding binary --tombstone hard") ==
        slurp(golden + "examples-binary-hard.sql"));
  // --annotate: a comment before each statement naming its events; nothing else changes.
  const std::string annotated = compile("--annotate");
  CHECK(annotated == slurp(golden + "examples-annotated.sql"));
  const auto without_comments = [](const std::string& sql) {
    std::string out;
    std::size_t begin = 0;
    while (begin < sql.size()) {
      const std::size_t end = sql.find('\n', begin) + 1;  // every line ends in a newline
      if (sql.compare(begin, 3, "-- ") != 0) out.append(sql, begin, end - begin);
      begin = end;
    }
    return out;
  };
  CHECK(without_comments(annotated) == without_comments(hex));
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count(annotated, "\n") - count(hex, "\n") == count(hex, ";\n"));  // one per statement
}

TEST_CASE("compile --annotate: a file name cannot end the comment and inject SQL") {
  // A directory of its own, holding an input named with a newline, a statement and a comment.
  char dir_pattern[] = "/tmp/atlas2kudu-test-XXXXXX";
  REQUIRE(mkdtemp(dir_pattern) != nullptr);
  const std::string dir = dir_pattern;
  const std::string name = dir + "/x\nDROP TABLE `atlas`.`entity_flat`;\r\n-- .jsonl";
  {
    std::FILE* f = std::fopen(name.c_str(), "w");
    REQUIRE(f != nullptr);
    const std::string text =
        slurp(std::string(ATLAS2KUDU_SOURCE_DIR) + "/examples/01-create-table-atlas21.jsonl");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  const Run r = run("compile -q --annotate " + dir + "/x*");
  CHECK(r.status == 0);
  CHECK(contains(r.out, "x\\nDROP TABLE `atlas`.`entity_flat`;\\r\\n-- .jsonl:1"));
  std::size_t statements = 0;
  for (std::size_t begin = 0; begin < r.out.size();) {
    const std::size_t end = r.out.find('\n', begin);
    const std::string line = r.out.substr(begin, end - begin);
    CHECK(line.find('\r') == std::string::npos);
    if (line.find("DROP TABLE") != std::string::npos) CHECK(line.rfind("-- ", 0) == 0);
    if (line.rfind("UPSERT ", 0) == 0 || line.rfind("DELETE ", 0) == 0) ++statements;
    begin = end + 1;
  }
  CHECK(statements > 0);
  std::remove(name.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE(
    "--memory-budget: knowledge spills and comes back, windows close early, nothing is left") {
  // 45,000 entities, each created, then updated after the others: more knowledge than 64M holds.
  const std::string input = tmp_path(".jsonl");
  {
    std::FILE* f = std::fopen(input.c_str(), "w");
    REQUIRE(f != nullptr);
    for (int pass = 0; pass < 2; ++pass) {
      for (int n = 0; n < 45000; ++n) {
        std::fprintf(f,
                     "{\"version\":{\"version\":\"1.0.0\"},\"msgCreationTime\":1,\"message\":{"
                     "\"type\":\"ENTITY_NOTIFICATION_V2\",\"entity\":{\"typeName\":\"hive_table\","
                     "\"guid\":\"%08x-0000-4000-8000-%012x\",\"attributes\":{\"qualifiedName\":"
                     "\"db.t%d@cl\",\"owner\":\"%s\",\"createTime\":%d}},\"operationType\":"
                     "\"%s\",\"eventTime\":%d}}\n",
                     n, n, n, pass ? "etl" : "hive", n, pass ? "ENTITY_UPDATE" : "ENTITY_CREATE",
                     1000 + pass * 100000 + n);
      }
    }
    std::fclose(f);
  }
  char dir_template[] = "/tmp/atlas2kudu-spill-test-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string spill_dir = dir_template;
  const std::string stats = tmp_path(".json");

  const auto unbounded = run("compile -q --window-events 2000 --memory-budget 64G " + input);
  REQUIRE(unbounded.status == 0);
  const auto bounded = run("compile --window-events 2000 --memory-budget 64M --spill-dir " +
                           spill_dir + " --stats " + stats + " " + input);
  CHECK(bounded.status == 0);
  // Byte for byte, but for the header's budget (named since it may decide where windows close).
  const auto without_budget = [](std::string sql, const std::string& budget) {
    const std::string named = " --memory-budget " + budget + "\n";
    const std::size_t at = sql.find(named);
    REQUIRE(at != std::string::npos);
    return sql.replace(at, named.size(), "\n");
  };
  CHECK(without_budget(bounded.out, "64M") == without_budget(unbounded.out, "64G"));
  CHECK(bounded.err.find("spilled to a temporary file") != std::string::npos);
  CHECK(bounded.err.find("closed early") == std::string::npos);
  const std::string json = slurp(stats);
  CHECK(json.find("\"budget\":67108864") != std::string::npos);
  CHECK(json.find("\"knowledge_spilled\":0,") == std::string::npos);
  CHECK(json.find("\"knowledge_spill_reads\":0,") == std::string::npos);
  CHECK(json.find("\"unused_memory_releases\":") != std::string::npos);
  // Below the default budget, no transparent huge pages: releases would split them.
  CHECK(json.find("\"transparent_huge_pages\":false}") != std::string::npos);
  // The spill file was unlinked while in use: nothing in the spill directory afterwards.
  CHECK(std::system(("test -z \"$(ls -A " + spill_dir + ")\"").c_str()) == 0);

  // With the default 50,000 events per window, 64M cannot hold a window: windows close early.
  const auto early = run("compile --memory-budget 64M --spill-dir " + spill_dir + " " + input);
  CHECK(early.status == 0);
  CHECK(early.err.find("closed early by --memory-budget") != std::string::npos);
  CHECK(early.out.find("-- window 2: events ") != std::string::npos);
  // The SQL says so too, on each window that closed early (the last one ends with the input).
  CHECK(contains(early.out, "), closed early by --memory-budget\n-- window 1 phase 1: deletes"));
  // And its log line: every window's but the last.
  const std::regex early_line(
      R"(: window \d+: \d+ events, .* s, closed early by --memory-budget\n)");
  const auto early_lines = std::distance(
      std::sregex_iterator(early.err.begin(), early.err.end(), early_line), std::sregex_iterator());
  CHECK(early_lines >= 1);
  CHECK(static_cast<std::size_t>(early_lines) + 1 ==
        static_cast<std::size_t>(std::count(early.err.begin(), early.err.end(), '\n')) - 1);
  CHECK_FALSE(contains(unbounded.out, "closed early"));
  CHECK_FALSE(contains(run("compile -q " + input).out, "closed early"));  // default options

  // Sizes take k, m and g suffixes; below 64M is a usage error.
  CHECK(run("compile -q --memory-budget 1g " + data("scenarios/01-partial-update-and-rename.jsonl"))
            .status == 0);
  const auto small = run("compile --memory-budget 8M " + input);
  CHECK(small.status == 64);
  CHECK(small.err.find("--memory-budget") != std::string::npos);
  // k, m, g and t in either case, with B or iB after them if wished; anything else is refused
  // with an example, never read some other way.
  for (const std::string same : {"256M", "256mib", "256MB", "268435456", "0.25G"}) {
    CAPTURE(same);
    const auto r = run("compile -q --memory-budget " + same + " --stats " + stats + " " +
                       data("scenarios/01-partial-update-and-rename.jsonl"));
    if (same == "0.25G") {
      CHECK(r.status == 64);
    } else {
      REQUIRE(r.status == 0);
      CHECK(contains(slurp(stats), "\"budget\":268435456"));
    }
  }
  for (const std::string bad : {"12X", "0x10000000", "' 256M'", "-1G", "1MM", "G"}) {
    CAPTURE(bad);
    const auto r = run("compile --memory-budget " + bad + " " + input);
    CHECK(r.status == 64);
    CHECK(contains(r.err,
                   "atlas2kudu: --memory-budget: expected a size such as 512M or 2G (a "
                   "whole number of bytes, with an optional k, m, g or t suffix: powers "
                   "of 1024), got '"));
  }
  // Nothing after '=': refused, not filled from the next argument (which would pass "512M", or
  // blame an input file).
  for (const std::string& next : std::vector<std::string>{"512M", input}) {
    const auto empty = run("compile -q --memory-budget= " + next + " " + input);
    CHECK(empty.status == 64);
    CHECK(contains(empty.err,
                   "atlas2kudu: --memory-budget: nothing after the '='; put the value "
                   "right after it, or drop the '=' and give the value as the next "
                   "argument"));
  }
  CHECK(run("check --max_rejects= 5 " + input).status == 64);
  CHECK(run("compile -q --memory-budget=512M " + input).status == 0);
  CHECK(contains(run("compile --memory-budget 99999999999999999999G " + input).err,
                 "--memory-budget: '99999999999999999999G' is too large (at most "
                 "9223372036854775807 bytes)"));
  CHECK(contains(run("compile --memory-budget 8191K " + input).err,
                 "--memory-budget: expected at least 64M, got '8191K'"));
  {
    // The longest record also fits the budget: 1/32 of it (8 MiB at the default), lowered to
    // that when --max-record-bytes is left at its default, refused when given larger.
    const std::string big =
        write_temp(".jsonl",
                   "{\"version\":{\"version\":\"1.0.0\"},\"message\":{\"type\":"
                   "\"ENTITY_NOTIFICATION_V2\",\"entity\":{\"typeName\":\"t\",\"guid\":"
                   "\"00000000-0000-4000-8000-000000000001\",\"attributes\":{\"qualifiedName\":"
                   "\"q\",\"blob\":\"" +
                       std::string(3 << 20, 'b') +
                       "\"}},\"operationType\":\"ENTITY_CREATE\",\"eventTime\":1}}\n");
    CHECK(run("check " + big).status == 0);
    CHECK(run("compile -q " + big).status == 0);
    // The reason names the budget that lowered the limit, and check (which takes --memory-budget
    // for this alone) rejects the record as compile does.
    const std::string reason =
        ":1:0: record of 3145966 bytes is longer than the 2097152 byte limit "
        "(--max-record-bytes, 1/32 of --memory-budget 64M)";
    const auto lowered = run("compile -q --memory-budget 64M " + big);
    CHECK(lowered.status == 2);
    CHECK(contains(lowered.err, reason));
    const auto checked = run("check --memory-budget 64M " + big);
    CHECK(checked.status == 2);
    CHECK(contains(checked.err, reason));
    CHECK(contains(checked.out, "records rejected             1"));
    const auto check_refused = run("check --memory-budget 64M --max-record-bytes 4194304 " + big);
    CHECK(check_refused.status == 64);
    CHECK(contains(check_refused.err, "--memory-budget 128M or more"));
    // Given, the option is the limit, and the reason names it alone.
    const auto given = run("check --max-record-bytes 2097152 " + big);
    CHECK(given.status == 2);
    CHECK(contains(given.err,
                   ":1:0: record of 3145966 bytes is longer than the 2097152 byte limit "
                   "(--max-record-bytes)\n"));
    const auto refused = run("compile -q --memory-budget 64M --max-record-bytes 4194304 " + big);
    CHECK(refused.status == 64);
    CHECK(contains(refused.err,
                   "atlas2kudu: --max-record-bytes 4194304: reading a record that long can take "
                   "about nine times its size, more than --memory-budget 64M allows; give "
                   "at most 2097152 (1/32 of the budget), or --memory-budget 128M or more"));
    // The budget asked for is rounded up, never down to the one refused.
    CHECK(contains(run("compile -q --memory-budget 64M --max-record-bytes 2097153 " + big).err,
                   "give at most 2097152 (1/32 of the budget), or --memory-budget 65M or more"));
    // The budget is shown as it is written: a number of bytes, M or G.
    CHECK(contains(run("compile -q --memory-budget 70000000 --max-record-bytes 4194304 " + big).err,
                   "more than --memory-budget 70000000 allows; give at most 2187500"));
    CHECK(contains(run("compile -q --memory-budget 1100M --max-record-bytes 100000000 " + big).err,
                   "more than --memory-budget 1100M allows; give at most 36044800"));
    CHECK(contains(run("compile -q --memory-budget 2G --max-record-bytes 100000000 " + big).err,
                   "more than --memory-budget 2G allows; give at most 67108864"));
    // Split message chunks held: 1/16 of the budget.
    CHECK(contains(run("compile -q --memory-budget 64M --max-split-bytes 8388608 " + big).err,
                   "atlas2kudu: --max-split-bytes 8388608: holding that many bytes of split "
                   "message chunks, then reading the message they make, takes several times "
                   "that, more than --memory-budget 64M allows; give at most 4194304 (1/16 "
                   "of the budget), or --memory-budget 128M or more"));
    CHECK(run("compile -q --memory-budget 128M --max-record-bytes 4194304 " + big).status == 0);
    CHECK(run("apply -q -i 127.0.0.1:1 --memory-budget 64M --max-message-bytes 4194304 " + big)
              .status == 64);
    std::remove(big.c_str());
  }
  CHECK(run("compile --spill-dir /nonexistent/dir " + input).status == 64);
  // A $TMPDIR where no spill directory can be made fails the run before it reads a record, even
  // one that would never spill, rather than at its first eviction.
  const auto no_tmp = run("compile -q " + data("scenarios/01-partial-update-and-rename.jsonl"),
                          "/dev/null", "TMPDIR=/nonexistent");
  CHECK(no_tmp.status == 74);
  CHECK(no_tmp.out.empty());
  CHECK(contains(no_tmp.err,
                 "atlas2kudu: cannot create the knowledge spill directory in "
                 "/nonexistent ($TMPDIR): No such file or directory; set --spill-dir "
                 "to a writable directory with free space"));
  {
    TestServer server("--transport binary --handler kit");
    const auto r = run("apply -q -i " + server.address() + " --prior none " + input, "/dev/null",
                       "TMPDIR=/nonexistent");
    CHECK(r.status == 74);
    CHECK(server.statements().empty());
    // --prior impala looks evicted knowledge up again, but spills what a window looks up past
    // the budget until the window is folded: it needs a spill directory too.
    const auto impala = run("apply -q -i " + server.address() + " " +
                                data("scenarios/01-partial-update-and-rename.jsonl"),
                            "/dev/null", "TMPDIR=/nonexistent");
    CHECK(impala.status == 74);
    CHECK(contains(impala.err, "cannot create the knowledge spill directory in /nonexistent"));
    CHECK(server.statements().empty());
  }
  std::system(("rm -rf " + spill_dir).c_str());
  std::remove(input.c_str());
  std::remove(stats.c_str());
}

TEST_CASE("--memory-budget: small updates of large entities are folded in parts") {
  // 400 entities with a 20 KB cell, then three small updates of each: every update's row and
  // statement carry the whole merged cell, which the reader cannot see from the update itself.
  const std::string input = tmp_path(".jsonl");
  {
    std::FILE* f = std::fopen(input.c_str(), "w");
    REQUIRE(f != nullptr);
    const std::string big(20000, 'b');
    for (int n = 0; n < 1600; ++n) {
      const int entity = n % 400;
      const std::string attributes =
          n < 400 ? "\"qualifiedName\":\"q" + std::to_string(entity) + "\",\"big\":\"" + big + "\""
                  : "\"owner\":\"o" + std::to_string(n) + "\"";
      std::fprintf(f,
                   "{\"version\":{\"version\":\"1.0.0\"},\"msgCreationTime\":1,\"message\":{"
                   "\"type\":\"ENTITY_NOTIFICATION_V2\",\"entity\":{\"typeName\":\"hive_table\","
                   "\"guid\":\"%08x-0000-4000-8000-%012x\",\"attributes\":{%s}},\"operationType\":"
                   "\"%s\",\"eventTime\":%d}}\n",
                   entity, entity, attributes.c_str(), n < 400 ? "ENTITY_CREATE" : "ENTITY_UPDATE",
                   1000 + n);
    }
    std::fclose(f);
  }
  const std::string stats = tmp_path(".json");
  const auto parts = run("compile --memory-budget 64M --stats " + stats + " " + input);
  REQUIRE(parts.status == 0);
  // Windows of creates close on their events' size (about 160 each at 64M); the window of the
  // 1,200 updates would hold 400 merged cells four times over (32 MB), so it is folded in parts,
  // each a window of its own that says why it ended, numbered on.
  std::size_t windows = 0;
  std::size_t closed_early = 0;
  for (std::size_t at = 0; (at = parts.out.find("\n-- window ", at)) != std::string::npos; ++at) {
    const std::size_t end = parts.out.find('\n', at + 1);
    const std::string comment = parts.out.substr(at + 1, end - at - 1);
    if (comment.find(" phase ") != std::string::npos) continue;
    ++windows;
    CAPTURE(comment);
    CHECK(comment.starts_with("-- window " + std::to_string(windows) + ": events "));
    if (comment.ends_with(", closed early by --memory-budget")) ++closed_early;
  }
  CHECK(windows >= 5);
  CHECK(closed_early == windows - 1);
  CHECK(contains(parts.err,
                 "(" + std::to_string(closed_early) + " closed early by --memory-budget)"));
  CHECK(contains(slurp(stats), "\"windows_closed_early\":" + std::to_string(closed_early) + ","));
  // Without a budget to keep, one window of every event, as before.
  const auto unbounded = run("compile -q --memory-budget 64G " + input);
  REQUIRE(unbounded.status == 0);
  CHECK(contains(unbounded.out, "-- window 1: events 1-1600 ("));
  CHECK_FALSE(contains(unbounded.out, "closed early"));

  // apply: a statement of window 4 (the second part of the third window read) fails for good.
  // The checkpoint records windows 1 and 2 only; the part that ran is applied again with the
  // rest of its window, and the checkpoint then counts every event.
  std::size_t statements_before = 0;  // "-- window 2 phase 1: deletes (1 statement)"
  for (const std::string window : {"1", "2", "3"}) {
    for (const std::string phase : {" phase 1: deletes (", " phase 2: upserts ("}) {
      const std::size_t at = parts.out.find("\n-- window " + window + phase);
      REQUIRE(at != std::string::npos);
      statements_before += std::stoul(parts.out.substr(parts.out.find('(', at) + 1));
    }
  }
  REQUIRE(statements_before > 0);
  TestServer server("--transport binary --handler kit --fail-at " +
                    std::to_string(statements_before + 1) + ":AnalysisException:boom");
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());  // a first run: no checkpoint yet
  // --prior none: the server counts only the statements compile printed (no lookups).
  const std::string apply = "apply -i " + server.address() +
                            " --prior none --memory-budget 64M --checkpoint " + ckpt + " " + input;
  Run failed = run(apply);
  CAPTURE(failed.err);
  CHECK(failed.status == 3);
  CHECK(contains(failed.err, "window 4 ("));
  CHECK(contains(failed.err, " records the 2 windows this run applied; "));
  CHECK(contains(failed.err,
                 "atlas2kudu apply: 1 more window this run applied, part of the window it "
                 "stopped in, is not recorded: the rerun applies it again with the rest of "
                 "that window\n"));
  const std::size_t third = parts.out.find("-- window 3: events ");
  REQUIRE(third != std::string::npos);
  const std::string first_of_third = parts.out.substr(third + 20, 3);  // "-- window 3: events 323-"
  CHECK(contains(slurp(ckpt), "\"windows_applied\":2,\"events_applied\":" +
                                  std::to_string(std::stoul(first_of_third) - 1) + ","));
  const Run resumed = run(apply);
  CHECK(resumed.status == 0);
  // (With --prior none the rerun knows no merged cell: its one window needs no parts.)
  CHECK(contains(slurp(ckpt), "\"windows_applied\":3,\"events_applied\":1600,"));
  for (const std::string& file : {ckpt, ckpt + ".lock", ckpt + ".window", input, stats}) {
    std::remove(file.c_str());
  }
}

TEST_CASE(
    "apply --checkpoint through the binary: a rerun with shorter windows folds the window the run "
    "stopped in as one") {
  const std::string input = write_temp(
      ".jsonl",
      slurp(std::string(ATLAS2KUDU_SOURCE_DIR) + "/examples/01-create-table-atlas21.jsonl") +
          slurp(std::string(ATLAS2KUDU_SOURCE_DIR) +
                "/examples/02-rename-tags-edges-delete.jsonl"));
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());
  // The 12th statement fails for good: the second window of four events is left half applied.
  TestServer server("--transport binary --handler kit --fail-at 12:AnalysisException:boom");
  const std::string stats = tmp_path(".json");
  Run r = run("apply -i " + server.address() + " --window-events 4 --stats " + stats +
              " --checkpoint " + ckpt + " " + input);
  CHECK(r.status == 3);
  CHECK(contains(r.err, "atlas2kudu: window 2 (events 5-8; "));
  CHECK(contains(slurp(stats), "\"knowledge_window_file_reads\":0,"));  // nothing to resume
  // Windows of one event now: the first holds the four events of the window it stopped in.
  r = run("apply -i " + server.address() + " --window-events 1 --stats " + stats +
          " --checkpoint " + ckpt + " " + input);
  CHECK(r.status == 0);
  // What the stopped run knew of the window's entities came from FILE.window, and nothing came
  // from a spill file.
  const std::string json = slurp(stats);
  const std::string reads_key = "\"knowledge_window_file_reads\":";
  const std::size_t reads = json.find(reads_key);
  REQUIRE(reads != std::string::npos);
  CHECK(std::stoul(json.substr(reads + reads_key.size())) > 0);
  CHECK(contains(json, "\"knowledge_spill_reads\":0,"));
  std::remove(stats.c_str());
  CHECK(contains(r.err,
                 "atlas2kudu apply: the window an earlier run stopped in (4 events) is "
                 "folded again, read as one window, from what that run read before it (" +
                     ckpt + ".window), not from the rows it wrote\n"));
  // Numbered on from the window the first run applied: the window it named in its error is the
  // rerun's first.
  CHECK(contains(r.err, " atlas2kudu apply: window 2: 4 events, "));
  CHECK(contains(r.err, " atlas2kudu apply: window 3: 1 event, "));
  CHECK_FALSE(contains(r.err, " atlas2kudu apply: window 1: "));
  CHECK((::access((ckpt + ".window").c_str(), F_OK) != 0));  // recorded: removed
  std::remove(input.c_str());
  std::remove(ckpt.c_str());
}

TEST_CASE(
    "apply --checkpoint through the binary: a failed run resumes, a finished one is a no-op") {
  const std::string examples = std::string(ATLAS2KUDU_SOURCE_DIR) + "/examples/*.jsonl";
  const std::string ckpt = tmp_path(".ckpt");
  std::remove(ckpt.c_str());
  const std::string small = " --prior none --window-events 5 ";
  {
    // The 12th statement fails for good: windows before it are applied and checkpointed.
    TestServer server("--transport binary --handler kit --fail-at 12:AnalysisException:boom");
    auto r = run("apply -i " + server.address() + small + "--checkpoint " + ckpt + " " + examples);
    CHECK(r.status == 3);
    CHECK(r.err.find("AnalysisException:boom") != std::string::npos);
    const std::string saved = slurp(ckpt);
    CHECK(saved.find("\"format\":\"atlas2kudu-checkpoint/3\"") != std::string::npos);
    CHECK(saved.find("\"windows_applied\":0") == std::string::npos);
    CHECK((::access(ckpt.c_str(), F_OK) == 0));
    // The same server again (the failure was the 12th statement only): the run resumes.
    const std::string before = server.statements();
    r = run("apply -i " + server.address() + small + "--checkpoint " + ckpt + " " + examples);
    CHECK(r.status == 0);
    CHECK(r.err.find("records skipped, applied by an earlier run") != std::string::npos);
    const std::string resumed = server.statements();
    CHECK(resumed.size() > before.size());
    // Run again: everything was applied; nothing is sent.
    r = run("apply -i " + server.address() + small + "--checkpoint " + ckpt + " " + examples);
    CHECK(r.status == 0);
    CHECK(r.err.find("27 records skipped") != std::string::npos);
    CHECK(server.statements() == resumed);
    // The kcat export again under another identity (a blank first line): its records are
    // skipped by their Kafka offsets, and the summary says so.
    const std::string again = write_temp(".jsonl", "\n" + slurp(std::string(ATLAS2KUDU_SOURCE_DIR) +
                                                                "/examples/04-kcat-export.jsonl"));
    r = run("apply -i " + server.address() + small + "--checkpoint " + ckpt + " " + again);
    CHECK(r.status == 0);
    CHECK(contains(r.err, "4 records skipped, applied by an earlier run (" + ckpt +
                              "); 4 of them by their Kafka offset, below the next offset it "
                              "records for their partition (exports that overlap; an older "
                              "export given after a newer one is skipped so too, although no "
                              "run applied it)\n"));
    CHECK(server.statements() == resumed);
    std::remove(again.c_str());
  }
  {
    // Another server: its tables never got these inputs, so the checkpoint is refused, not used.
    TestServer server("--transport binary --handler kit");
    auto r = run("apply -i " + server.address() + small + "--checkpoint " + ckpt + " " + examples);
    CHECK(r.status == 65);
    CHECK(contains(r.err, ": records what was applied to database atlas on 127.0.0.1:"));
    CHECK(contains(r.err, ", and this run writes to database atlas on " + server.address()));
    CHECK(server.statements().empty());
  }
  {
    // A file that is not a checkpoint: its own exit code, nothing applied.
    std::FILE* f = std::fopen(ckpt.c_str(), "w");
    std::fputs("{\"format\":\"something-else\"}", f);
    std::fclose(f);
    TestServer server("--transport binary --handler kit");
    auto r = run("apply -i " + server.address() + small + "--checkpoint " + ckpt + " " + examples);
    CHECK(r.status == 65);
    CHECK(r.err.find("not an atlas2kudu checkpoint") != std::string::npos);
    CHECK(server.statements().empty());
    f = std::fopen(ckpt.c_str(), "w");
    std::fputs("{\"format\":\"atlas2kudu-checkpoint/1\",\"sources\":[{\"next_record\":\"x\"}]}", f);
    std::fclose(f);
    r = run("apply -i " + server.address() + small + "--checkpoint " + ckpt + " " + examples);
    CHECK(r.status == 65);
    CHECK(contains(r.err, ": malformed checkpoint at sources[0].next_record: "));
    CHECK(contains(r.err, "; move it away to start over (every input is then applied again)\n"));
    // An empty file is named as such.
    f = std::fopen(ckpt.c_str(), "w");
    std::fclose(f);
    r = run("apply -i " + server.address() + small + "--checkpoint " + ckpt + " " + examples);
    CHECK(r.status == 65);
    CHECK(contains(r.err, ckpt + ": the checkpoint is empty; move it away to start over"));
    CHECK(server.statements().empty());
  }
  std::remove(ckpt.c_str());
  std::remove((ckpt + ".lock").c_str());
}

TEST_CASE("--deadline durations: seconds, minutes, hours") {
  using atlas2kudu::parse_duration;
  using atlas2kudu::read_duration;
  CHECK(parse_duration("90") == std::chrono::seconds(90));
  CHECK(parse_duration("90s") == std::chrono::seconds(90));
  CHECK(parse_duration("45m") == std::chrono::minutes(45));
  CHECK(parse_duration("2h") == std::chrono::hours(2));
  CHECK(parse_duration("1h30m") == std::chrono::minutes(90));
  CHECK(parse_duration("1h30m15s") == std::chrono::seconds(5415));
  CHECK_FALSE(parse_duration(""));
  CHECK_FALSE(parse_duration("m"));
  CHECK_FALSE(parse_duration("5x"));
  CHECK_FALSE(parse_duration("5s3m"));
  CHECK_FALSE(parse_duration("-5"));
  // A number after a unit has one too: "1h30" is not guessed (it read as 1h and 30 seconds).
  CHECK_FALSE(parse_duration("1h30"));
  CHECK_FALSE(parse_duration("0h1"));
  CHECK_FALSE(parse_duration("30m1h"));
  CHECK_FALSE(parse_duration("1m1m"));
  CHECK_FALSE(parse_duration("999999999999h"));
  // Longer than kMaxDuration: a deadline kept in nanoseconds on the monotonic clock would wrap.
  CHECK_FALSE(parse_duration("1000001h"));
  CHECK_FALSE(parse_duration("2562048h"));
  CHECK_FALSE(parse_duration("999999999h"));
  CHECK_FALSE(parse_duration("999999h3600m1s"));
  CHECK(read_duration("999999h3600m1s").too_long);
  CHECK_FALSE(read_duration("1h30").too_long);
  CHECK(parse_duration("1000000h") == std::chrono::hours(1000000));
  CHECK(parse_duration("999999h60m") == std::chrono::hours(1000000));
  CHECK(parse_duration("0001h") == std::chrono::hours(1));
  CHECK(parse_duration("0") == std::chrono::seconds(0));  // no deadline
  // On the command line, a duration too long is named as such.
  const Run large = run("compile --deadline 300000000000h /dev/null");
  CHECK(large.status == 64);
  CHECK(
      contains(large.err, "atlas2kudu: --deadline: too long: at most 1000000h (some 114 years)\n"));
  const Run unitless = run("compile --deadline 1h30 /dev/null");
  CHECK(unitless.status == 64);
  CHECK(contains(unitless.err, "atlas2kudu: --deadline: expected e.g. 90s"));
  CHECK(parse_duration("2h15s") == std::chrono::seconds(7215));
}

TEST_CASE("compile | head: the reader going away ends the run quietly with exit 0") {
  // 2 MB of export compiles to far more SQL than a pipe holds, so the writes after `head` has
  // exited fail with EPIPE (SIGPIPE is ignored, as a network client must).
  const std::string input = tmp_path(".jsonl");
  const std::string gen = std::string(ATLAS2KUDU_TEST_DATA) + "/../../bench/gen_export.py";
  REQUIRE(std::system(("python3 " + gen + " 2 7 >" + input).c_str()) == 0);
  const std::string err = tmp_path(".err");
  const std::string status = tmp_path(".status");
  const std::string cmd = std::string("bash -c 'timeout 60 ") + ATLAS2KUDU_BINARY + " compile " +
                          input + " 2>" + err +
                          " | head -c 100 >/dev/null; echo ${PIPESTATUS[0]} >" + status + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(slurp(status) == "0\n");
  CHECK(slurp(err).empty());  // no error, no summary of a run the reader cut short
  // A stop that came first is what ended the run, even if the reader goes away before the window
  // being printed is whole: compile blocked writing to a reader that reads no more, was sent
  // SIGTERM, and then the reader exited. It said exit 0 and nothing.
  std::remove(status.c_str());
  const std::string stalled = std::string("bash -c '(") + ATLAS2KUDU_BINARY + " compile " + input +
                              " 2>" + err + " & p=$!; sleep 1; kill -TERM $p; wait $p; echo $? >" +
                              status + ") | sleep 2'";
  REQUIRE(std::system(stalled.c_str()) == 0);
  CHECK(slurp(status) == "143\n");
  CHECK(contains(slurp(err), "atlas2kudu: stopped by SIGTERM\n"));
  // ddl and digest likewise, their reader gone before they write.
  for (const std::string command : {"ddl", "digest hive_table db.t@c1"}) {
    CAPTURE(command);
    std::remove(status.c_str());
    const std::string gone = std::string("bash -c '(sleep 0.3; ") + ATLAS2KUDU_BINARY + " " +
                             command + " 2>" + err + "; echo $? >" + status + ") | true; wait'";
    REQUIRE(std::system(gone.c_str()) == 0);
    CHECK(slurp(status) == "0\n");
    CHECK(slurp(err).empty());
  }

  // Any other write failure is still an error (exit 74).
  const std::string to_full =
      std::string("timeout 60 ") + ATLAS2KUDU_BINARY + " compile " + input + " >/dev/full 2>" + err;
  CHECK(shell_status(std::system(to_full.c_str())) == 74);
  CHECK(contains(slurp(err), "writing SQL output: No space left on device"));
  // The summary does not vouch for windows that may have been cut short.
  CHECK(contains(slurp(err),
                 " in 0 windows -> 0 statements, 0 bytes of SQL; stopped, standard output could "
                 "not be written: no window reached it whole, and what did of the first may end "
                 "in a statement cut short\n"));
  // After windows printed whole: they are counted, and the one cut short is the next.
  const std::string to_limited = std::string("bash -c 'ulimit -f 200; timeout 60 ") +
                                 ATLAS2KUDU_BINARY + " compile --window-events 100 " + input +
                                 " >" + input + ".sql 2>" + err + "'";
  CHECK(shell_status(std::system(to_limited.c_str())) == 74);
  CHECK(std::regex_search(slurp(err),
                          std::regex("; stopped, standard output could not be written after [1-9]"
                                     "[0-9]* windows printed whole: what reached it of the next "
                                     "may end in a statement cut short\n")));
  std::remove((input + ".sql").c_str());
  std::remove(input.c_str());
  std::remove(err.c_str());
  std::remove(status.c_str());
}

TEST_SUITE_END();
