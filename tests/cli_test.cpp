// End-to-end tests: run the real binary as a user would and check output and exit codes.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_support.h"

using atlas2kudu::testing::slurp;

namespace {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

std::string data(const std::string& name) {
  return std::string(ATLAS2KUDU_TEST_DATA) + "/" + name;
}

// A fresh, empty file under $TMPDIR with the given suffix.
std::string tmp_path(const std::string& suffix) {
  std::string pattern = "/tmp/atlas2kudu-test-XXXXXX" + suffix;
  const int fd = mkstemps(pattern.data(), static_cast<int>(suffix.size()));
  REQUIRE(fd >= 0);
  ::close(fd);
  return pattern;
}

// Runs `atlas2kudu ARGS` through the shell with stdin from `stdin_file` (or /dev/null).
Run run(const std::string& args, const std::string& stdin_file = "/dev/null") {
  const std::string out_path = tmp_path(".out");
  const std::string err_path = tmp_path(".err");
  const std::string cmd = std::string("timeout 60 ") + ATLAS2KUDU_BINARY + " " + args + " <" +
                          stdin_file + " >" + out_path + " 2>" + err_path;
  const int raw = std::system(cmd.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return r;
}

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


}  // namespace

TEST_CASE("digest prints the qn_digest of the shared vectors") {
  auto r = run("digest hive_table default.customers@cl1");
  CHECK(r.status == 0);
  CHECK(r.out == "db0ed8217c95acb8134ac87cca0d782a\n");
  r = run("digest kafka_topic 'tópico-日本語@prod'");
  CHECK(r.out == "5121e0e1c9f0157a60804d8e9df42acc\n");
  r = run("digest '' ''");
  CHECK(r.out == "ffe679bb831c95b67dc17819c63c5090\n");
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

TEST_CASE("check stops at the first bad record with exit 2 and its position") {
  const std::string bad = tmp_path(".jsonl");
  {
    std::FILE* f = std::fopen(bad.c_str(), "w");
    const std::string good = slurp(data("notifications/gzip-message.jsonl"));
    std::fputs(good.c_str(), f);
    std::fputs("{\"version\":1,\"message\":{\"type\":\"ENTITY_CREATE_V2\"}}\n", f);
    std::fputs("not json at all\n", f);
    std::fputs(good.c_str(), f);
    std::fclose(f);
  }
  auto r = run("check " + bad);
  CHECK(r.status == 2);
  const std::string offset = std::to_string(slurp(data("notifications/gzip-message.jsonl")).size());
  CHECK(r.err.find(bad + ":2:" + offset + ": message.type: ENTITY_CREATE_V2 is an ATLAS_HOOK message") !=
        std::string::npos);
  CHECK(r.err.find("stopped at the first malformed record") != std::string::npos);
  CHECK(r.err.find("not json") == std::string::npos);  // stopped before line 3

  // With --max-rejects the run goes on, writes the reject file and the stats JSON.
  const std::string rejects = tmp_path(".rejects");
  const std::string stats = tmp_path(".json");
  r = run("check --max-rejects 5 --reject-file " + rejects + " --stats " + stats + " " + bad);
  CHECK(r.status == 0);
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
  CHECK(r.err.find("more than 1 records rejected") != std::string::npos);
  std::remove(bad.c_str());
  std::remove(rejects.c_str());
  std::remove(stats.c_str());
}

TEST_CASE("usage errors and missing files have their own exit codes") {
  auto r = run("check /nonexistent/file.jsonl");
  CHECK(r.status == 66);
  CHECK(r.err.find("/nonexistent/file.jsonl: cannot open: No such file or directory") !=
        std::string::npos);
  r = run("check --no-such-flag");
  CHECK(r.status == 64);
  r = run("");
  CHECK(r.status == 64);
  r = run("digest onlyone");
  CHECK(r.status == 64);
  r = run("check --help");
  CHECK(r.status == 0);
  CHECK(r.out.find("--max-rejects") != std::string::npos);
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
