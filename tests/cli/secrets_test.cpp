// Secrets and files of an unattended run, with the real binary: a password or token from
// --ldap_password_cmd, the environment or the terminal prompt never appears in any argv
// (/proc/<pid>/cmdline of the process and of the helper), the process environment, a log line,
// --stats, an error message or SQL output; the helper gets /dev/null as stdin and no secret
// variables; no core dumps while secrets are held. Files: checkpoints, reject files and -o are
// never written through a planted symbolic link, FIFO or device; new checkpoints and reject files
// are mode 0600, SQL 0644.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "binary_test_util.h"
#include "connect_errors_loopback.h"

TEST_SUITE_BEGIN("secrets");

using namespace atlas2kudu::testing;

namespace {

const std::string kPassword = "Pw-7f3a-zebra";
const std::string kToken = "jwt.eyJzdWIiOiJldGwifQ.sig-51b2";

// A /proc file with NULs shown as spaces; empty if unreadable.
std::string proc_text(pid_t pid, const std::string& name) {
  std::string text = slurp("/proc/" + std::to_string(pid) + "/" + name);
  for (char& c : text) {
    if (c == '\0') c = ' ';
  }
  return text;
}

// Every process below `pid` (its children, theirs, ...).
std::vector<pid_t> descendants(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream children(task.path() / "children");
    for (pid_t child; children >> child;) {
      out.push_back(child);
      for (pid_t below : descendants(child)) out.push_back(below);
    }
  }
  return out;
}

// What a run held at the server shows to the rest of the machine: no secret anywhere.
void check_process_hides(pid_t pid, const std::string& secret) {
  CHECK_FALSE(contains(proc_text(pid, "cmdline"), secret));
  CHECK_FALSE(contains(proc_text(pid, "environ"), secret));
  CHECK(contains(proc_text(pid, "limits"), "Max core file size        0                    0"));
  for (pid_t child : descendants(pid)) {
    CHECK_FALSE(contains(proc_text(child, "cmdline"), secret));
  }
}

void check_output_hides(const Run& r, const std::string& stats, const std::string& secret) {
  CHECK_FALSE(contains(r.out, secret));
  CHECK_FALSE(contains(r.err, secret));
  CHECK_FALSE(contains(slurp(stats), secret));
}

// A loopback HTTP server for one request: keeps the request's head as it arrived (header lines
// and all) and answers 401 with no challenge. Bounded: it gives up after 20 s without a client.
class OneRequestCapture {
 public:
  OneRequestCapture() {
    const LoopbackSocket s = bind_loopback(SOCK_STREAM);
    fd_ = s.fd;
    port_ = s.port;
    thread_ = std::thread([this] { serve(); });
  }
  ~OneRequestCapture() {
    thread_.join();
    ::close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // The request head, once the run is over.
  const std::string& head() const { return head_; }

 private:
  void serve() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 20000) != 1) return;
    const int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    char buf[4096];
    while (head_.find("\r\n\r\n") == std::string::npos) {
      pollfd q{c, POLLIN, 0};
      if (::poll(&q, 1, 5000) != 1) break;
      const ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) break;
      head_.append(buf, static_cast<std::size_t>(n));
    }
    head_ = head_.substr(0, head_.find("\r\n\r\n"));
    const std::string reply =
        "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    (void)!::write(c, reply.data(), reply.size());
    ::close(c);
  }

  int fd_ = -1;
  int port_ = 0;
  std::string head_;
  std::thread thread_;
};

}  // namespace

TEST_CASE(
    "--ldap_password_cmd: the helper gets /dev/null and no secret variables; the password "
    "is nowhere to be seen") {
  TestServer server("--transport sasl --user alice --handler kit --hang-at 2",
                    "HS2_TEST_SERVER_PASSWORD=" + kPassword);
  const std::string report = tmp_path(".helper");
  // The helper records what it was given, tries to read stdin, then prints the password.
  const std::string helper = write_temp(
      ".sh", "exec 3>" + report +
                 "\n"
                 "echo \"stdin=$(readlink /proc/self/fd/0)\" >&3\n"
                 "echo \"read=$(head -c 100000 | wc -c)\" >&3\n"
                 "echo \"secret_vars=$(env | grep -cE '^ATLAS2KUDU_(LDAP_PASSWORD|JWT)=')\" >&3\n"
                 "echo \"core=$(ulimit -c)\" >&3\n"
                 "echo \"argv=$(tr '\\0' ' ' </proc/$$/cmdline)\" >&3\n"
                 "echo \"parent=$(tr '\\0' ' ' </proc/$PPID/cmdline)\" >&3\n"
                 "echo '" +
                 kPassword + "'\n");
  const std::string stats = tmp_path(".json");
  // Notifications piped in: a helper reading stdin would swallow some of them.
  Background apply(
      "apply -i " + server.address() +
          " --prior none -l -u alice --auth_creds_ok_in_clear --ldap_password_cmd 'sh " + helper +
          "' --stats " + stats + " -",
      data("notifications/atlas21-console.jsonl"), "ATLAS2KUDU_JWT=" + kToken);
  REQUIRE(eventually([&] { return contains(server.statements(), "-- holding statement 2"); }));
  check_process_hides(apply.pid(), kPassword);
  CHECK_FALSE(contains(proc_text(apply.pid(), "environ"), kToken));
  apply.signal(SIGTERM);
  const Run r = apply.wait();
  CHECK(r.status == 143);
  CHECK(contains(r.err, "4 events (4 records, 0 rejected)"));  // stdin untouched by the helper
  check_output_hides(r, stats, kPassword);
  const std::string seen = slurp(report);
  CHECK(contains(seen, "stdin=/dev/null"));
  CHECK(contains(seen, "read=0"));
  CHECK(contains(seen, "secret_vars=0"));
  CHECK(contains(seen, "core=0"));
  CHECK_FALSE(contains(seen, kPassword));  // in no argv, the helper's or its parent's
  CHECK(contains(seen, "parent="));
  for (const auto& f : {report, helper, stats}) std::remove(f.c_str());
}

TEST_CASE(
    "--ldap_password_cmd: the first SIGTERM while the helper hangs stops the run (143) and "
    "leaves no process behind") {
  // The helper records its shell's process ID and a background child's, then waits for ever.
  const std::string pids = tmp_path(".pids");
  const std::string metrics = tmp_path(".prom");
  const std::string checkpoint = tmp_path(".ckpt");
  std::remove(metrics.c_str());
  std::remove(checkpoint.c_str());
  Background apply("apply -i 127.0.0.1:9 -l -u alice --auth_creds_ok_in_clear --metrics-textfile " +
                   metrics + " --checkpoint " + checkpoint + " --ldap_password_cmd 'echo $$ >" +
                   pids + "; sleep 1000 & echo $! >>" + pids + "; wait' " +
                   data("notifications/atlas21-console.jsonl"));
  std::vector<pid_t> helper;
  REQUIRE(eventually([&] {
    std::istringstream in(slurp(pids));
    helper.clear();
    for (pid_t pid; in >> pid;) helper.push_back(pid);
    return helper.size() == 2;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto signalled = std::chrono::steady_clock::now();
  apply.signal(SIGTERM);  // once: a second one would end the process at once, not cleanly
  const Run r = apply.wait(std::chrono::seconds(10));
  CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(2));
  CHECK(r.status == 143);
  // The message, then the summary, as for a stop later in the run.
  CHECK(contains(r.err,
                 "atlas2kudu: stopped by SIGTERM\n"
                 "atlas2kudu apply: 0 events (0 records, 0 rejected), 0 windows applied, 0 "
                 "statements, 0 rows modified, 0 row errors, 0 retries, "));
  // ... and where the same command starts again, as after a later stop.
  CHECK(
      r.err.ends_with(" s (stopped by SIGTERM)\n"
                      "atlas2kudu apply: no window of this run was recorded, so " +
                      checkpoint +
                      " was not created; the same command run again starts from the "
                      "beginning\n"));
  CHECK_FALSE(std::filesystem::exists(checkpoint));
  const std::string text = slurp(metrics);
  CHECK(contains(text, "atlas2kudu_last_exit_status{command=\"apply\"} 143"));
  // The run's duration, also for a run that ended before reading (it was 0.000).
  const std::string duration = "atlas2kudu_duration_seconds{command=\"apply\"} ";
  REQUIRE(contains(text, duration));
  CHECK(std::stod(text.substr(text.find(duration) + duration.size())) >= 0.3);
  for (pid_t pid : helper) CHECK(eventually([&] { return gone(pid); }, std::chrono::seconds(2)));
  for (const auto& f : {pids, metrics}) std::remove(f.c_str());
}

TEST_CASE("$ATLAS2KUDU_LDAP_PASSWORD: taken out of the environment; a wrong one is not shown") {
  TestServer server("--transport sasl --user alice --handler kit --hang-at 2",
                    "HS2_TEST_SERVER_PASSWORD=" + kPassword);
  const std::string stats = tmp_path(".json");
  const std::string args = "apply -i " + server.address() +
                           " --prior none -l -u alice --auth_creds_ok_in_clear --stats " + stats +
                           " " + data("notifications/atlas21-console.jsonl");
  Background apply(args, "/dev/null", "ATLAS2KUDU_LDAP_PASSWORD=" + kPassword);
  REQUIRE(eventually([&] { return contains(server.statements(), "-- holding statement 2"); }));
  check_process_hides(apply.pid(), kPassword);  // overwritten in place, then unset
  apply.signal(SIGTERM);
  Run r = apply.wait();
  CHECK(r.status == 143);
  check_output_hides(r, stats, kPassword);

  const std::string wrong = "Wrong-" + kPassword;
  r = run(args, "/dev/null", "ATLAS2KUDU_LDAP_PASSWORD=" + wrong);
  CHECK(r.status == 5);
  check_output_hides(r, stats, wrong);

  // An empty password is refused before connecting, whatever gives it.
  r = run(args, "/dev/null", "ATLAS2KUDU_LDAP_PASSWORD=");
  CHECK(r.status == 5);
  CHECK(contains(r.err,
                 "atlas2kudu: -l/--ldap: $ATLAS2KUDU_LDAP_PASSWORD is empty; an empty "
                 "password is never sent\n"));
  r = run(args + " --ldap_password_cmd 'echo'");
  CHECK(r.status == 5);
  CHECK(contains(r.err,
                 "atlas2kudu: -l/--ldap: --ldap_password_cmd gave an empty password; an "
                 "empty password is never sent\n"));
  // So is one holding a NUL byte, SASL PLAIN's separator; the server never hears of it.
  r = run(args + " --ldap_password_cmd \"printf 'Pw\\\\0etl'\"");
  CHECK(r.status == 5);
  CHECK(contains(r.err,
                 "atlas2kudu: -l/--ldap: --ldap_password_cmd's output holds a NUL byte, which no "
                 "LDAP password can carry; it is never sent\n"));
  // A helper killed by a signal is named as such.
  r = run(args + " --ldap_password_cmd 'kill -KILL $$'");
  CHECK(r.status == 5);
  CHECK(contains(r.err, "atlas2kudu: --ldap_password_cmd: command killed by signal 9 (SIGKILL)\n"));
  std::remove(stats.c_str());
}

// A command run by /bin/sh on a new pseudo-terminal of its own, as from an interactive shell;
// `screen` collects what it writes there.
class PtyRun {
 public:
  explicit PtyRun(const std::string& command) {
    pid_ = forkpty(&master_, nullptr, nullptr, nullptr);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  PtyRun(const PtyRun&) = delete;
  PtyRun& operator=(const PtyRun&) = delete;
  ~PtyRun() {
    if (master_ >= 0) ::close(master_);
  }

  pid_t pid() const { return pid_; }
  const std::string& screen() const { return screen_; }

  // Reads the screen until it shows `text` (REQUIRE: within the usual time).
  void wait_for_screen(const std::string& text) {
    REQUIRE(eventually([&] {
      read_screen();
      return contains(screen_, text);
    }));
  }
  // Appends what the terminal has to show now to screen().
  void read_screen() {
    pollfd p{master_, POLLIN, 0};
    char buf[4096];
    while (::poll(&p, 1, 20) > 0) {
      const ssize_t n = ::read(master_, buf, sizeof buf);
      if (n <= 0) break;
      screen_.append(buf, static_cast<std::size_t>(n));
    }
  }
  // Whether the terminal echoes what is typed (its settings, read through the master side).
  bool echoes() const {
    termios t{};
    REQUIRE(::tcgetattr(master_, &t) == 0);
    return (t.c_lflag & ECHO) != 0;
  }
  // Closes the terminal's master side, as a dropped SSH session does: the kernel hangs up the
  // terminal (SIGHUP to its session), and its reads end.
  void hang_up() {
    ::close(master_);
    master_ = -1;
  }
  void type(const std::string& text) {
    REQUIRE(::write(master_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  // The shell's exit status (128 + N for signal N), reading the screen until the command ends.
  int wait_for_exit() {
    int raw = 0;
    REQUIRE(eventually([&] {
      read_screen();
      return ::waitpid(pid_, &raw, WNOHANG) == pid_;
    }));
    return shell_status(raw);
  }

 private:
  int master_ = -1;
  pid_t pid_ = -1;
  std::string screen_;
};

TEST_CASE("the terminal prompt: not echoed, not shown, not in argv") {
  TestServer server("--transport sasl --user alice --handler kit --hang-at 2",
                    "HS2_TEST_SERVER_PASSWORD=" + kPassword);
  const std::string stats = tmp_path(".json");
  // The input comes on stdin, as from kafka-console-consumer: the prompt is on the terminal all
  // the same (it once asked only when stdin was the terminal).
  PtyRun apply(std::string("exec ") + ATLAS2KUDU_BINARY + " apply -i " + server.address() +
               " --prior none -l -u alice --auth_creds_ok_in_clear --stats " + stats + " - < " +
               data("notifications/atlas21-console.jsonl"));
  apply.wait_for_screen("LDAP password for alice: ");
  apply.type(kPassword + "\n");
  REQUIRE(eventually([&] { return contains(server.statements(), "-- holding statement 2"); }));
  check_process_hides(apply.pid(), kPassword);
  ::kill(apply.pid(), SIGTERM);
  CHECK(apply.wait_for_exit() == 143);
  CHECK_FALSE(contains(apply.screen(), kPassword));  // no echo, no message shows it
  CHECK(contains(apply.screen(), "(stopped by SIGTERM)"));
  CHECK_FALSE(contains(slurp(stats), kPassword));
  std::remove(stats.c_str());
}

// apply -l with nothing to connect to, waiting at its prompt: then --stats FILE and its input.
const std::string kApplyAtPrompt =
    std::string("exec ") + ATLAS2KUDU_BINARY +
    " apply -i 127.0.0.1:1 --prior none -l -u alice --auth_creds_ok_in_clear --stats ";

TEST_CASE("the terminal prompt: the first signal stops the run, and the echo is back") {
  // The handlers restart a blocked read: the prompt went on waiting after SIGTERM, timeout(1)
  // could not end the run, and the second signal left the terminal without echo.
  const std::string stats = tmp_path(".json");
  PtyRun apply(kApplyAtPrompt + stats + " " + data("notifications/atlas21-console.jsonl"));
  apply.wait_for_screen("LDAP password for alice: ");
  CHECK_FALSE(apply.echoes());
  ::kill(apply.pid(), SIGTERM);
  CHECK(apply.wait_for_exit() == 143);
  CHECK(contains(apply.screen(), "atlas2kudu: stopped by SIGTERM"));
  CHECK(apply.echoes());
  CHECK(contains(slurp(stats), "\"stopped_by\":\"SIGTERM\""));
  std::remove(stats.c_str());
}

TEST_CASE("the terminal prompt: a terminal that hangs up stops the run (129), not as a password") {
  // The hang-up ends the read with nothing typed: it was "the password typed is empty", exit 5.
  const std::string stats = tmp_path(".json");
  PtyRun apply(kApplyAtPrompt + stats + " " + data("notifications/atlas21-console.jsonl"));
  apply.wait_for_screen("LDAP password for alice: ");
  apply.hang_up();
  CHECK(apply.wait_for_exit() == 129);
  CHECK(contains(slurp(stats), "\"stopped_by\":\"SIGHUP\""));
  CHECK_FALSE(contains(slurp(stats), "empty"));
  std::remove(stats.c_str());
}

TEST_CASE("the terminal prompt: not asked of a process outside the terminal's foreground") {
  // timeout(1) runs its command in a process group of its own: the terminal is there, and the
  // message says why it is not used and how to have it.
  PtyRun apply(std::string("timeout 20 ") + ATLAS2KUDU_BINARY +
               " apply -i 127.0.0.1:1 --prior none -l -u alice --auth_creds_ok_in_clear " +
               data("notifications/atlas21-console.jsonl"));
  CHECK(apply.wait_for_exit() == 5);
  CHECK_FALSE(contains(apply.screen(), "LDAP password for"));
  CHECK(contains(apply.screen(),
                 "atlas2kudu: -l/--ldap: no password (use --ldap_password_cmd, "
                 "$ATLAS2KUDU_LDAP_PASSWORD or a terminal); a terminal is there, but this "
                 "process is not in its foreground (a job run with &, or under timeout(1): "
                 "timeout --foreground asks)"));
}

TEST_CASE("the terminal prompt: a process without a controlling terminal says so (cron)") {
  const Run r = run_shell(std::string("setsid ") + ATLAS2KUDU_BINARY +
                              " apply -i 127.0.0.1:1 --prior none -l -u alice "
                              "--auth_creds_ok_in_clear " +
                              data("notifications/atlas21-console.jsonl"),
                          "/dev/null", 30);
  CHECK(r.status == 5);
  CHECK(contains(r.err,
                 "atlas2kudu: -l/--ldap: no password (use --ldap_password_cmd, "
                 "$ATLAS2KUDU_LDAP_PASSWORD or a terminal); this process has no "
                 "controlling terminal (as under cron)\n"));
}

TEST_CASE(
    "--jwt_cmd over hs2-http and compile -i: the token and password are not in SQL or stats") {
  {
    TestServer server("--transport http --handler kit", "HS2_TEST_SERVER_BEARER=" + kToken);
    const std::string stats = tmp_path(".json");
    const Run r = run("apply --protocol hs2-http -j --auth_creds_ok_in_clear --jwt_cmd 'echo " +
                      kToken + "' --stats " + stats + " -i " + server.address() + " " +
                      data("notifications/atlas21-console.jsonl"));
    CHECK(r.status == 0);
    check_output_hides(r, stats, kToken);
    std::remove(stats.c_str());
  }
  {
    TestServer server("--transport sasl --user alice --handler kit",
                      "HS2_TEST_SERVER_PASSWORD=" + kPassword);
    const std::string stats = tmp_path(".json");
    const std::string sql = tmp_path(".sql");
    const Run r =
        run("compile -l -u alice --auth_creds_ok_in_clear -i " + server.address() + " --stats " +
                stats + " -o " + sql + " " + data("notifications/atlas21-console.jsonl"),
            "/dev/null", "ATLAS2KUDU_LDAP_PASSWORD=" + kPassword);
    CHECK(r.status == 0);
    CHECK(contains(slurp(sql), "-- prior state: impala"));
    CHECK_FALSE(contains(slurp(sql), kPassword));
    check_output_hides(r, stats, kPassword);
    for (const auto& f : {stats, sql}) std::remove(f.c_str());
  }
}

TEST_CASE("files: no planted symlink, FIFO or device is written through; modes 0600 and 0644") {
  const auto dir = std::filesystem::path(tmp_path(".d"));
  std::filesystem::remove(dir);
  std::filesystem::create_directories(dir);
  const std::string victim = (dir / "victim").string();
  std::ofstream(victim) << "precious\n";
  const std::string input = data("notifications/atlas21-console.jsonl");

  // -o: a symlink, a FIFO and a device at the path are refused (exit 74), nothing is written.
  std::filesystem::create_symlink(victim, dir / "out-link.sql");
  Run r = run("compile -o " + (dir / "out-link.sql").string() + " " + input);
  CHECK(r.status == 74);
  CHECK(contains(r.err, "not a regular file"));
  REQUIRE(::mkfifo((dir / "out.fifo").c_str(), 0600) == 0);
  r = run("compile -o " + (dir / "out.fifo").string() + " " + input);
  CHECK(r.status == 74);
  r = run("compile -o /dev/null " + input);
  CHECK(r.status == 74);
  // The reject file: a symlink is not followed.
  std::filesystem::create_symlink(victim, dir / "rejects.jsonl");
  r = run("check --max-rejects 9 --reject-file " + (dir / "rejects.jsonl").string() + " " + input);
  CHECK(r.status == 74);
  CHECK(contains(r.err, "refusing"));
  // The checkpoint itself as a symlink is refused; planted temporary names are never used.
  TestServer server("--handler kit");
  std::filesystem::create_symlink(victim, dir / "link.ckpt");
  r = run("apply --prior none -i " + server.address() + " --checkpoint " +
          (dir / "link.ckpt").string() + " " + input);
  CHECK(r.status == 74);
  for (const char* planted :
       {"run.ckpt.tmp", "run.ckpt.partial", "out.sql.tmp", "out.sql.partial"}) {
    std::filesystem::create_symlink(victim, dir / planted);
  }
  r = run("apply --prior none -i " + server.address() + " --checkpoint " +
          (dir / "run.ckpt").string() + " --reject-file " + (dir / "new-rejects.jsonl").string() +
          " " + input);
  CHECK(r.status == 0);
  r = run("compile -o " + (dir / "out.sql").string() + " " + input);
  CHECK(r.status == 0);
  CHECK(slurp(victim) == "precious\n");
  const auto mode = [](const std::filesystem::path& p) {
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  CHECK(mode(dir / "run.ckpt") == 0600);
  CHECK(mode(dir / "run.ckpt.lock") == 0600);
  CHECK(mode(dir / "new-rejects.jsonl") == 0600);
  const mode_t umask_now = ::umask(0);
  ::umask(umask_now);
  CHECK(mode(dir / "out.sql") == (0644 & ~umask_now));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a JWT with a line break or control character inside is refused, never sent (exit 5)") {
  // A token is put into the Authorization header as it is: a CR/LF inside it would add a header
  // line of its own to every request. Refused before any connection (-i names a closed port), the
  // message names where the token came from and the byte's position, never the token.
  const std::string args = "apply --protocol hs2-http -j --auth_creds_ok_in_clear -i 127.0.0.1:9 " +
                           data("notifications/gzip-message.jsonl");
  Run r = run(args + " --jwt_cmd 'printf \"eyJ.tok\\r\\nX-Injected: yes\\r\\n\"'");
  CHECK(r.status == 5);
  CHECK(contains(r.err,
                 "atlas2kudu: -j/--jwt: --jwt_cmd printed a token with a line break at byte 8: a "
                 "JWT is one line; it is never sent\n"));
  CHECK_FALSE(contains(r.err, "eyJ.tok"));
  CHECK_FALSE(contains(r.err, "X-Injected"));
  CHECK_FALSE(contains(r.err, "cannot connect"));  // nothing was sent
  r = run(args, "/dev/null", "ATLAS2KUDU_JWT=\"$(printf 'eyJ.a\\001b')\"");
  CHECK(r.status == 5);
  CHECK(contains(r.err,
                 "atlas2kudu: -j/--jwt: $ATLAS2KUDU_JWT holds a token with a control character "
                 "(0x01) at byte 6, which no JWT holds; it is never sent\n"));
  CHECK_FALSE(contains(r.err, "eyJ.a"));
  // Trailing line ends are no part of the token, from the command or the variable: sent without
  // them, on one header line.
  for (const std::string source : {"--jwt_cmd 'printf \"eyJ.tok\\r\\n\\n\"'", ""}) {
    CAPTURE(source);
    OneRequestCapture server;
    r = run("apply --protocol hs2-http -j --auth_creds_ok_in_clear --connect_max_tries 1 -i " +
                server.address() + " " + source + " " + data("notifications/gzip-message.jsonl"),
            "/dev/null", source.empty() ? "ATLAS2KUDU_JWT=\"$(printf 'eyJ.tok\\n')\"" : "");
    CHECK(r.status == 5);
    CHECK(contains(server.head(), "\r\nAuthorization: Bearer eyJ.tok\r\nContent-Type: "));
  }
}

TEST_CASE("an LDAP password with a line break goes into HTTP Basic encoded: no header is added") {
  // HTTP Basic sends "user:password" base64-encoded, so a CR/LF in the password cannot end the
  // header line: the request keeps one Authorization line and no other.
  OneRequestCapture server;
  const Run r =
      run("apply --protocol hs2-http -l -u alice --auth_creds_ok_in_clear "
          "--connect_max_tries 1 --ldap_password_cmd 'printf \"pw\\r\\nX-Injected: yes\"' "
          "-i " +
          server.address() + " " + data("notifications/gzip-message.jsonl"));
  CHECK(r.status == 5);
  // base64("alice:pw\r\nX-Injected: yes")
  CHECK(
      contains(server.head(), "\r\nAuthorization: Basic YWxpY2U6cHcNClgtSW5qZWN0ZWQ6IHllcw==\r\n"));
  CHECK_FALSE(contains(server.head(), "X-Injected"));
}

TEST_SUITE_END();
