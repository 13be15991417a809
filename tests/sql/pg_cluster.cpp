#include "pg_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace atlas2kudu::testpg {

namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string tail(const std::string& text, std::size_t max) {
  return text.size() <= max ? text : "..." + text.substr(text.size() - max);
}

// The newest /usr/lib/postgresql/<version>/bin holding the server binaries, or
// $ATLAS2KUDU_PG_BINDIR when set.
std::optional<std::string> find_bin_dir() {
  if (const char* env = std::getenv("ATLAS2KUDU_PG_BINDIR"); env && *env) {
    return fs::exists(fs::path(env) / "pg_ctl") ? std::optional<std::string>(env) : std::nullopt;
  }
  std::optional<std::string> best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = entry.path().filename().string();
    char* end = nullptr;
    const long version = std::strtol(name.c_str(), &end, 10);
    if (end == name.c_str() || *end != '\0') continue;
    const fs::path bin = entry.path() / "bin";
    if (!fs::exists(bin / "initdb") || !fs::exists(bin / "pg_ctl") || !fs::exists(bin / "psql")) {
      continue;
    }
    if (version > best_version) {
      best_version = static_cast<int>(version);
      best = bin.string();
    }
  }
  return best;
}

// A port on 127.0.0.1 that nothing listens on right now. The server may still lose a race for it;
// start_server() retries with another.
int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) throw std::runtime_error("socket(): " + std::string(std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(s);
    throw std::runtime_error("no free loopback port: " + std::string(std::strerror(errno)));
  }
  ::close(s);
  return ntohs(addr.sin_port);
}

struct Identity {
  uid_t uid;
  gid_t gid;
};

// Runs argv[0] (an absolute path) with stdin from /dev/null and stdout/stderr into files, in
// `cwd`, as `as` when given (the caller is root), with the environment pinned where output or
// behaviour would otherwise depend on the caller's. Kills it after `timeout_s` seconds.
RunResult run_process(const std::vector<std::string>& argv, const std::string& cwd,
                      const std::string& out_path, const std::string& err_path,
                      std::optional<Identity> as, int timeout_s) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork(): " + std::string(std::strerror(errno)));
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    // initdb and pg_ctl resolve the current directory; the caller's may be unreadable to them.
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    if (as) {
      if (::setgroups(1, &as->gid) != 0 || ::setgid(as->gid) != 0 || ::setuid(as->uid) != 0) {
        ::_exit(126);
      }
    }
    ::setenv("LC_ALL", "C", 1);
    ::setenv("PGCONNECT_TIMEOUT", "10", 1);
    // Every statement of a test is small; a hung one fails instead of stalling the suite.
    ::setenv("PGOPTIONS", "-c statement_timeout=60s", 1);
    for (const char* v : {"PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGSERVICE", "PGSERVICEFILE",
                          "PGPASSWORD", "PGPASSFILE", "PSQLRC", "PGDATA"}) {
      ::unsetenv(v);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool killed = false;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR)
      throw std::runtime_error("waitpid(): " + std::string(std::strerror(errno)));
    if (!killed && std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  RunResult r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  if (killed) r.err += "\n[killed after " + std::to_string(timeout_s) + " s]";
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return r;
}

}  // namespace

PgCluster::PgCluster() {
  const auto bin = find_bin_dir();
  if (!bin) {
    throw std::runtime_error(
        "PostgreSQL server binaries not found (initdb, pg_ctl, psql under "
        "/usr/lib/postgresql/<version>/bin): install Debian's `postgresql` package "
        "(scripts/setup.sh does), or set ATLAS2KUDU_PG_BINDIR");
  }
  bin_ = *bin;
  as_root_ = ::geteuid() == 0;
  if (as_root_) {
    const passwd* pw = ::getpwnam("postgres");
    if (pw == nullptr) {
      throw std::runtime_error(
          "running as root, and PostgreSQL refuses to: no `postgres` user to run it as (Debian's "
          "postgresql package creates it; scripts/setup.sh installs it)");
    }
    server_uid_ = pw->pw_uid;
    server_gid_ = pw->pw_gid;
  }

  std::string tmpl = "/tmp/atlas2kudu-pg-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw std::runtime_error("mkdtemp(): " + std::string(std::strerror(errno)));
  }
  dir_ = tmpl;
  data_ = dir_ + "/data";
  sock_ = dir_ + "/sock";
  fs::create_directory(sock_);
  fs::create_directory(dir_ + "/run");
  if (as_root_) {
    for (const auto& p : {dir_, sock_, dir_ + "/run"}) {
      if (::chown(p.c_str(), server_uid_, server_gid_) != 0) {
        const std::string why = std::strerror(errno);
        fs::remove_all(dir_);
        throw std::runtime_error("chown " + p + ": " + why);
      }
    }
  }
  start_watchdog();
  try {
    start_server();
  } catch (...) {
    stop_server();
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

PgCluster::~PgCluster() {
  stop_server();
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (watchdog_fd_ >= 0) ::close(watchdog_fd_);
  if (watchdog_pid_ > 0) ::waitpid(watchdog_pid_, nullptr, 0);
}

RunResult PgCluster::run_as_server_user(const std::vector<std::string>& argv, int timeout_s) const {
  const std::string base = dir_ + "/run/cmd" + std::to_string(++script_count_);
  return run_process(
      argv, dir_, base + ".out", base + ".err",
      as_root_ ? std::optional<Identity>(Identity{server_uid_, server_gid_}) : std::nullopt,
      timeout_s);
}

void PgCluster::start_watchdog() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe2(): " + std::string(std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork(): " + std::string(std::strerror(errno)));
  if (pid == 0) {
    // The watchdog: its own session, so a signal to the test's process group spares it, and no
    // hold on the test's output pipes, so whoever reads them sees the test end.
    ::close(fds[1]);
    ::setsid();
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGTERM, SIG_IGN);
    ::signal(SIGHUP, SIG_IGN);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    char c;
    while (::read(fds[0], &c, 1) < 0 && errno == EINTR) {
    }
    // EOF: the test process closed the pipe (destructor) or is gone. Clean up what is left.
    try {
      stop_server();
      std::error_code ec;
      fs::remove_all(dir_, ec);
    } catch (...) {
    }
    ::_exit(0);
  }
  ::close(fds[0]);
  watchdog_fd_ = fds[1];
  watchdog_pid_ = pid;
}

void PgCluster::start_server() {
  // -N: no fsync; the cluster dies with the test.
  RunResult init = run_as_server_user(
      {bin_ + "/initdb", "-D", data_, "-U", user_, "-A", "trust", "-E", "UTF8", "--locale=C", "-N"},
      120);
  if (init.status != 0) {
    throw std::runtime_error("initdb failed (status " + std::to_string(init.status) + "):\n" +
                             tail(init.out + init.err, 2000));
  }
  std::string last_error;
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = free_port();
    const std::string options = "-p " + std::to_string(port_) + " -k " + sock_ +
                                " -c listen_addresses=127.0.0.1 -c fsync=off"
                                " -c synchronous_commit=off -c full_page_writes=off"
                                " -c max_connections=30 -c shared_buffers=32MB";
    const RunResult start =
        run_as_server_user({bin_ + "/pg_ctl", "-D", data_, "-l", dir_ + "/server.log", "-o",
                            options, "-w", "-t", "30", "start"},
                           60);
    if (start.status == 0) {
      running_ = true;
      return;
    }
    last_error = start.out + start.err + "\nserver log:\n" + read_text(dir_ + "/server.log");
    // The port may have been taken between free_port() and the server's bind; a server that
    // did come up despite the failed wait is stopped before the next try.
    running_ = true;
    stop_server();
  }
  throw std::runtime_error("PostgreSQL did not start (pg_ctl start, 3 tries):\n" +
                           tail(last_error, 3000));
}

void PgCluster::stop_server() noexcept {
  if (!running_ && !fs::exists(data_ + "/postmaster.pid")) return;
  try {
    run_as_server_user({bin_ + "/pg_ctl", "-D", data_, "-m", "immediate", "-w", "-t", "30", "stop"},
                       60);
  } catch (...) {
  }
  // pg_ctl could not stop it (or timed out): kill the postmaster, if that pid still is one; its
  // children follow it.
  std::ifstream pid_file(data_ + "/postmaster.pid");
  long pid = 0;
  if (pid_file >> pid && pid > 0 &&
      read_text("/proc/" + std::to_string(pid) + "/comm").rfind("postgres", 0) == 0) {
    ::kill(static_cast<pid_t>(pid), SIGKILL);
  }
  running_ = false;
}

RunResult PgCluster::psql(const PsqlRun& run) const {
  std::vector<std::string> argv = {
      bin_ + "/psql",        "-X", "-q",  "-w", "-h",         sock_, "-p",
      std::to_string(port_), "-U", user_, "-d", run.database, "-v",  "ON_ERROR_STOP=1"};
  if (run.tuples_only) {
    argv.push_back("-A");
    argv.push_back("-t");
  }
  for (const auto& [name, value] : run.variables) {
    argv.push_back("-v");
    argv.push_back(name + "=" + value);
  }
  for (const auto& f : run.files) {
    argv.push_back("-f");
    argv.push_back(f);
  }
  const std::string base = dir_ + "/run/psql" + std::to_string(++script_count_);
  if (!run.script.empty()) {
    std::ofstream(base + ".sql", std::ios::binary) << run.script;
    argv.push_back("-f");
    argv.push_back(base + ".sql");
  }
  // psql runs as the caller: it is a client, and the scripts it reads may be anywhere.
  RunResult r = run_process(argv, dir_, base + ".out", base + ".err", std::nullopt, 300);
  ::unlink((base + ".sql").c_str());
  return r;
}

std::string PgCluster::psql_ok(const std::string& database, const std::string& script) const {
  PsqlRun run;
  run.database = database;
  run.script = script;
  const RunResult r = psql(run);
  if (r.status != 0) {
    throw std::runtime_error("psql -d " + database + " failed (status " + std::to_string(r.status) +
                             "):\n" + tail(r.err, 3000) + "\nscript:\n" + tail(script, 1500));
  }
  return r.out;
}

}  // namespace atlas2kudu::testpg
