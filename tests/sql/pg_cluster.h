// A throwaway PostgreSQL cluster for tests, driven through Debian's server binaries and the psql
// client (no libpq in the test: psql is what users run the shipped files with).
//
//   PgCluster pg;                                    // initdb + pg_ctl start, or throws
//   pg.psql_ok("postgres", "CREATE DATABASE app;");
//   std::string rows = pg.psql_ok("app", "SELECT 1;");  // "1\n" (unaligned, tuples only)
//   // ~PgCluster: pg_ctl stop, temporary directory removed
//
// Lifetime. The cluster lives in a fresh temporary directory (data, Unix socket, logs, scripts)
// and listens on a free 127.0.0.1 port. The destructor stops the server and removes the
// directory. A watchdog process, started before initdb, does the same if the test process dies
// without running the destructor (a crash, a signal, a timeout kill): it waits for a pipe that only
// the test process holds open and cleans up when that pipe closes.
//
// Users. PostgreSQL refuses to run as root: when the tests run as root (CI), initdb, pg_ctl and the
// server run as the `postgres` user Debian's package creates, and the temporary directory is
// theirs; otherwise everything runs as the current user. psql always runs as the current user and
// connects as the cluster's superuser `atlas` (trust authentication, loopback only).
//
// Failure. A missing server package, a missing postgres user under root, or a server that does not
// start throws std::runtime_error saying what to install or where the server log is.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace atlas2kudu::testpg {

// What a child process did: its exit status (128 + signal when killed) and its output.
struct RunResult {
  int status = -1;
  std::string out;
  std::string err;
};

struct PsqlRun {
  std::string database;
  std::vector<std::pair<std::string, std::string>> variables;  // -v name=value
  std::vector<std::string> files;                              // -f each, in order
  std::string script;       // run after the files (written to a file and passed with -f)
  bool tuples_only = true;  // -A -t: unaligned rows without headers
};

class PgCluster {
 public:
  PgCluster();
  ~PgCluster();
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  int port() const { return port_; }
  const std::string& superuser() const { return user_; }
  const std::string& bin_dir() const { return bin_; }

  // Runs psql with ON_ERROR_STOP; never throws for SQL errors (see status and err).
  RunResult psql(const PsqlRun& run) const;
  // Runs `script` on `database`; throws std::runtime_error with psql's stderr on failure.
  std::string psql_ok(const std::string& database, const std::string& script) const;

 private:
  void start_watchdog();
  void start_server();
  void stop_server() noexcept;
  RunResult run_as_server_user(const std::vector<std::string>& argv, int timeout_s) const;

  std::string bin_;   // /usr/lib/postgresql/<v>/bin
  std::string dir_;   // the temporary directory
  std::string data_;  // dir_/data
  std::string sock_;  // dir_/sock
  std::string user_ = "atlas";
  int port_ = 0;
  bool as_root_ = false;
  uid_t server_uid_ = 0;
  gid_t server_gid_ = 0;
  bool running_ = false;
  int watchdog_fd_ = -1;
  pid_t watchdog_pid_ = -1;
  mutable int script_count_ = 0;
};

}  // namespace atlas2kudu::testpg
