// Helpers of the end-to-end tests that run the real atlas2kudu binary and the standalone HS2 test
// server as a user would: scratch files, a run to completion with its output and exit status, a
// run in the background (to signal it), and a test server process.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

namespace atlas2kudu::testing {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string data(const std::string& name) {
  return std::string(ATLAS2KUDU_TEST_DATA) + "/" + name;
}

// The example exports (examples/*.jsonl), in order.
inline std::vector<std::string> example_files() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(ATLAS2KUDU_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// " a b c": file names to append to a command line.
inline std::string joined(const std::vector<std::string>& files) {
  std::string out;
  for (const auto& f : files) out += " " + f;
  return out;
}

// How many times `what` occurs in `text`.
inline long long occurrences(const std::string& text, const std::string& what) {
  long long n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A fresh file under $TMPDIR holding `text`.
inline std::string write_temp(const std::string& suffix, const std::string& text) {
  const std::string path = tmp_path(suffix);
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

// A fresh named pipe under $TMPDIR (the caller removes it).
inline std::string make_fifo() {
  const std::string path = tmp_path(".fifo");
  std::remove(path.c_str());
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  return path;
}

// The number after `"key":` in a JSON text (the first such key), or -1.
inline long long json_number(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\":";
  const auto at = json.find(needle);
  if (at == std::string::npos) return -1;
  return std::stoll(json.substr(at + needle.size()));
}

// Exit status as the shell reports it: the code, or 128 + the signal.
inline int shell_status(int raw) {
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

// Runs `command` (a shell command line, e.g. "A=1 some-program args") with stdin from
// `stdin_file`, bounded by `timeout SECONDS` so that a hang fails the test instead of blocking it;
// its stdout and stderr are collected.
inline Run run_shell(const std::string& command, const std::string& stdin_file = "/dev/null",
                     int timeout_seconds = 60) {
  const std::string out_path = tmp_path(".out");
  const std::string err_path = tmp_path(".err");
  const std::string cmd = "timeout " + std::to_string(timeout_seconds) + " env " + command + " <" +
                          stdin_file + " >" + out_path + " 2>" + err_path;
  Run r;
  r.status = shell_status(std::system(cmd.c_str()));
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return r;
}

// Runs `atlas2kudu ARGS` (with `env`, e.g. "ATLAS2KUDU_LDAP_PASSWORD=x", set for it), as
// run_shell does.
inline Run run(const std::string& args, const std::string& stdin_file = "/dev/null",
               const std::string& env = "") {
  return run_shell(env + " " + ATLAS2KUDU_BINARY + " " + args, stdin_file);
}

// A shell command line for Background, run with exec (its process is the one signalled).
struct ShellCommand {
  std::string text;
};

// `atlas2kudu ARGS` (or a ShellCommand) in the background, to be signalled; its stdout and stderr
// go to files.
class Background {
 public:
  explicit Background(const std::string& args, const std::string& stdin_file = "/dev/null",
                      const std::string& env = "")
      : Background(ShellCommand{env + " exec " + ATLAS2KUDU_BINARY + " " + args}, stdin_file) {}
  explicit Background(const ShellCommand& command, const std::string& stdin_file = "/dev/null") {
    out_ = tmp_path(".out");
    err_ = tmp_path(".err");
    const std::string cmd = command.text + " <" + stdin_file + " >" + out_ + " 2>" + err_;
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      // As cron or a terminal starts a command: a test run started with `&` by a shell without
      // job control has SIGINT and SIGQUIT ignored, which a shell script cannot trap then.
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGQUIT, SIG_DFL);
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~Background() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::remove(out_.c_str());
    std::remove(err_.c_str());
  }
  pid_t pid() const { return pid_; }
  void signal(int signo) const { ::kill(pid_, signo); }
  // What it has written to stderr so far.
  std::string err_so_far() const { return slurp(err_); }
  // Waits for the exit (at most `limit`, then kills it and fails); returns the run.
  Run wait(std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    int raw = 0;
    while (::waitpid(pid_, &raw, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &raw, 0);
        reaped_ = true;
        FAIL("atlas2kudu did not exit in time");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    reaped_ = true;
    return Run{shell_status(raw), slurp(out_), slurp(err_)};
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string out_, err_;
};

// Waits until `predicate()` holds (checked every 20 ms), at most `limit`; returns whether it did.
template <class Predicate>
bool eventually(Predicate predicate, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// True once `pid` has exited (or is a zombie nobody has reaped yet).
inline bool gone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close == std::string::npos || (close + 2 < stat.size() && stat[close + 2] == 'Z');
}

// The standalone HS2 test server, started for one test and stopped (by pid) when it ends.
class TestServer {
 public:
  explicit TestServer(const std::string& args, const std::string& env = "") {
    port_file_ = tmp_path(".port");
    log_file_ = tmp_path(".log");
    stats_file_ = tmp_path(".stats");
    dump_file_ = tmp_path(".dump");
    std::remove(port_file_.c_str());
    const std::string cmd = env + " " + ATLAS2KUDU_HS2_TEST_SERVER + " --port-file " + port_file_ +
                            " --statement-log " + log_file_ + " --stats-file " + stats_file_ +
                            " --dump-file " + dump_file_ + " --max-seconds 120 " + args +
                            " >/dev/null 2>&1 & echo $!";
    std::FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    REQUIRE(std::fscanf(p, "%d", &pid_) == 1);
    pclose(p);
    for (int i = 0; i < 100 && port_ == 0; ++i) {  // at most 10 s
      const std::string text = slurp(port_file_);
      if (!text.empty()) port_ = std::atoi(text.c_str());
      if (port_ == 0) usleep(100000);
    }
    REQUIRE(port_ != 0);
  }
  ~TestServer() {
    kill(pid_, SIGTERM);
    // Not our child (the shell that started it is gone): wait until it has exited, since it writes
    // its stats and dump files on the way out.
    eventually([&] { return gone(pid_); }, std::chrono::seconds(15));
    for (const auto& f : {port_file_, log_file_, stats_file_, dump_file_}) std::remove(f.c_str());
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  std::string statements() const { return slurp(log_file_); }
  // The server's counters (JSON) and its kit store's dump, written on request (SIGUSR1). The
  // server writes the dump first and the counters last, so once the counters are back the dump is
  // the same report's.
  std::string report(std::string* dump = nullptr) const {
    std::remove(stats_file_.c_str());
    kill(pid_, SIGUSR1);
    const bool written = eventually([&] { return !slurp(stats_file_).empty(); });
    REQUIRE(written);
    if (dump != nullptr) *dump = slurp(dump_file_);
    return slurp(stats_file_);
  }

 private:
  std::string port_file_, log_file_, stats_file_, dump_file_;
  int pid_ = 0;
  int port_ = 0;
};

}  // namespace atlas2kudu::testing
