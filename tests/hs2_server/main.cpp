// hs2_test_server: the HS2 test server as a standalone process for end-to-end tests of the
// atlas2kudu binary. Listens on 127.0.0.1 (port chosen by the kernel), prints "PORT <n>" on stdout
// and writes the port to --port-file, serves until --max-seconds pass or SIGINT/SIGTERM.
// The SASL/HTTP password comes from $HS2_TEST_SERVER_PASSWORD, never from argv.
// On SIGUSR1 and at exit it writes --dump-file (the kit store as a projection dump,
// atlas2kudu-projection-dump/1) and then --stats-file (server counters as JSON: sessions and
// operations still open, operations cancelled, ...), each replaced atomically: once the stats file
// is there, the dump beside it is the same report's. A cluster that refuses rows, and a
// statement held until it is cancelled:
//   hs2_test_server --audit-last-year 2030 --max-cell-bytes 65536 --hang-at 7 --stats-file s.json
//
//   HS2_TEST_SERVER_PASSWORD=pw hs2_test_server --transport sasl --user alice
//       --port-file /tmp/port --statement-log /tmp/stmts.log --drop-at 3 --max-seconds 60
//
// Tables as another writer left them, for a run that reads them back (--prior impala):
//   hs2_test_server --seed-sql rows.sql     (UPSERT INTO `atlas`.`entity_flat` ... ;)
//
// Kerberos, in a realm of your own (krb5.conf in $KRB5_CONFIG, the service key in a keytab):
//   hs2_test_server --transport sasl --keytab impala.keytab --principal impala/localhost@REALM
//   kinit alice && atlas2kudu apply -k -i localhost:PORT export.jsonl
#include <fmt/core.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include "hs2_test_server.h"
#include "kit_handler.h"
#include "statement_handler.h"

namespace {
volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_report = 0;
void on_signal(int) {
  g_stop = 1;
}
void on_report_signal(int) {
  g_report = 1;
}

void write_file(const std::string& path, const std::string& text) {
  if (path.empty()) return;
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << text;
  std::filesystem::rename(tmp, path);  // readers never see a half-written file
}
}  // namespace

int main(int argc, char** argv) {
  using atlas2kudu::testing::Hs2TestServer;
  using atlas2kudu::testing::Hs2TestServerConfig;
  CLI::App app{"HS2 test server (loopback only)"};
  Hs2TestServerConfig cfg;
  std::string transport = "binary", port_file;
  int max_seconds = 600;
  std::vector<int> drop_at, drop_after_run_at;
  std::vector<std::string> fail_at;
  app.add_option("--transport", transport, "binary | sasl | http")
      ->check(CLI::IsMember({"binary", "sasl", "http"}));
  app.add_option("--tls-cert", cfg.tls_cert, "PEM certificate (enables TLS)");
  app.add_option("--tls-key", cfg.tls_key, "PEM private key");
  app.add_flag("--tls-require-client-cert", cfg.tls_require_client_cert,
               "Refuse a TLS client that presents no certificate (mutual TLS)");
  app.add_flag("--tls-max-1.2", cfg.tls_max_1_2, "Speak TLS 1.2 at most");
  app.add_option("--user", cfg.user, "SASL PLAIN / HTTP Basic user ($HS2_TEST_SERVER_PASSWORD)");
  auto* keytab =
      app.add_option("--keytab", cfg.keytab,
                     "Kerberos: accept SASL GSSAPI (--transport sasl, also under TLS) or SPNEGO "
                     "'Authorization: Negotiate' (--transport http) with the key of --principal "
                     "in this keytab; the realm comes from $KRB5_CONFIG (krb5.conf). A client "
                     "without a valid ticket is refused. PLAIN/Basic only with --user as well")
          ->check(CLI::ExistingFile);
  auto* principal = app.add_option("--principal", cfg.principal,
                                   "Kerberos service principal, e.g. impala/localhost@REALM; "
                                   "clients reach it with -k -b localhost (-s impala)");
  keytab->needs(principal);
  principal->needs(keytab);
  app.add_option("--port-file", port_file, "Write the chosen port here");
  app.add_option("--statement-log", cfg.statement_log, "Append executed statements here");
  app.add_option("--drop-at", drop_at, "Drop the connection at the N-th statement (not run)");
  app.add_option("--drop-after-run-at", drop_after_run_at, "Run the N-th statement, then drop");
  app.add_option("--fail-at", fail_at, "N:MESSAGE — the N-th statement fails with MESSAGE");
  std::vector<int> deleted_meanwhile_at;
  app.add_option("--deleted-meanwhile-at", deleted_meanwhile_at,
                 "The N-th statement, if a DELETE, finds its rows deleted by another writer "
                 "between its scan and its delete: they are gone, reported as row errors (Kudu's "
                 "NotFound), none as modified; any other statement runs as usual");
  app.add_option("--latency-ms", cfg.faults.latency_ms,
                 "Sleep per ExecuteStatement (planning time: the reply comes when it has run)");
  app.add_option("--execution-ms", cfg.faults.execution_ms,
                 "Each statement stays RUNNING this long after ExecuteStatement replied "
                 "(execution time, as Impala runs a statement after planning it)");
  app.add_option("--running-polls", cfg.faults.running_polls, "RUNNING answers before the end");
  app.add_option("--http-503", cfg.faults.http_503, "First N HTTP requests get 503");
  app.add_flag("--http-silent-after-503", cfg.faults.http_silent_after_503,
               "After the last --http-503 reply, answer nothing more on that connection");
  app.add_option("--retry-after", cfg.faults.retry_after_s, "Retry-After seconds with 503");
  app.add_flag("--sasl-split-frames", cfg.faults.sasl_split_frames,
               "Split replies into small frames");
  std::vector<int> hang_at;
  app.add_option("--hang-at", hang_at,
                 "The N-th statement stays RUNNING, never executed, until it is cancelled");
  app.add_flag("--silent", cfg.faults.silent, "Accept connections and never answer");
  app.add_option(
      "--http-status", cfg.faults.http_status,
      "HTTP: answer every request with this status (404, 407, 302, 500, ...; 200: a web page)");
  app.add_option("--http-location", cfg.faults.http_location,
                 "The Location of an --http-status 3xx answer ({host}: the request's Host)");
  app.add_flag("--no-long-polling", cfg.faults.no_long_polling,
               "Serve as an Impala before 4.5: LONG_POLLING_TIME_MS is not listed by OpenSession "
               "and fails a statement that sets it (without it, a poll of a running statement "
               "that sets it is held until it ends, up to that many ms)");
  app.add_flag("--plain-hs2", cfg.faults.plain_hs2,
               "CloseImpalaOperation is an unknown method, as on a HiveServer2 that is not Impala "
               "(or an Impala before 3.3)");
  app.add_flag("--http-reject-non-http", cfg.faults.http_reject_non_http,
               "HTTP: answer a request that is not HTTP with 400 Bad Request, as a proxy does");
  atlas2kudu::testing::KitRefusals refusals;
  app.add_option("--audit-last-year", refusals.audit_last_year,
                 "kit: entity_audit rows after this year's range partition are row errors "
                 "(as after `atlas2kudu ddl --audit-last-year Y`)");
  app.add_option("--max-cell-bytes", refusals.max_cell_bytes,
                 "kit: an UPSERT with a longer cell fails (Kudu's max_cell_size_bytes)");
  app.add_option("--refuse-value", refusals.refused_value,
                 "kit: an UPSERT with a cell containing TEXT fails, naming the column");
  std::string seed_sql;
  app.add_option("--seed-sql", seed_sql,
                 "kit: run the statements of this file on the store before serving (tables "
                 "as another writer left them)")
      ->check(CLI::ExistingFile);
  std::string stats_file, dump_file;
  app.add_option("--stats-file", stats_file, "On SIGUSR1 and at exit: server counters as JSON");
  app.add_option("--dump-file", dump_file, "On SIGUSR1 and at exit: the kit store's dump");
  std::string handler_name = "kit", key_encoding = "hex";
  app.add_option("--handler", handler_name,
                 "kit: test-kit Kudu store + SQL interpreter; keyset: toy key sets")
      ->check(CLI::IsMember({"kit", "keyset"}));
  app.add_option("--key-encoding", key_encoding, "hex | binary (kit handler)")
      ->check(CLI::IsMember({"hex", "binary"}));
  app.add_option("--max-seconds", max_seconds, "Exit after this many seconds")
      ->check(CLI::Range(1, 86400));
  CLI11_PARSE(app, argc, argv);

  cfg.transport = transport == "sasl"   ? Hs2TestServerConfig::Transport::kSasl
                  : transport == "http" ? Hs2TestServerConfig::Transport::kHttp
                                        : Hs2TestServerConfig::Transport::kBinary;
  if (!cfg.keytab.empty() && cfg.transport == Hs2TestServerConfig::Transport::kBinary) {
    fmt::print(stderr, "--keytab needs --transport sasl or http\n");
    return 64;
  }
  if (const char* pw = std::getenv("HS2_TEST_SERVER_PASSWORD")) cfg.password = pw;
  if (const char* tok = std::getenv("HS2_TEST_SERVER_BEARER")) cfg.bearer_token = tok;
  cfg.faults.drop_at.insert(drop_at.begin(), drop_at.end());
  cfg.faults.drop_after_run_at.insert(drop_after_run_at.begin(), drop_after_run_at.end());
  cfg.faults.hang_at.insert(hang_at.begin(), hang_at.end());
  cfg.faults.deleted_meanwhile_at.insert(deleted_meanwhile_at.begin(), deleted_meanwhile_at.end());
  for (const auto& f : fail_at) {
    auto colon = f.find(':');
    if (colon == std::string::npos) {
      fmt::print(stderr, "--fail-at {}: expected N:MESSAGE\n", f);
      return 64;
    }
    cfg.faults.fail_at[std::stoi(f.substr(0, colon))] = f.substr(colon + 1);
  }

  std::shared_ptr<atlas2kudu::testing::StatementHandler> handler;
  if (handler_name == "kit")
    handler = std::make_shared<atlas2kudu::testing::KitHandler>(
        key_encoding == "binary" ? atlas2kudu::KeyEncoding::kBinary : atlas2kudu::KeyEncoding::kHex,
        refusals);
  else
    handler = std::make_shared<atlas2kudu::testing::KeySetHandler>();
  const auto kit = std::dynamic_pointer_cast<atlas2kudu::testing::KitHandler>(handler);
  if (!seed_sql.empty()) {
    if (!kit) {
      fmt::print(stderr, "--seed-sql needs --handler kit\n");
      return 64;
    }
    std::ifstream in(seed_sql, std::ios::binary);
    const std::string sql((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const atlas2kudu::testing::StatementOutcome seeded = kit->execute(sql);
    if (seeded.error) {
      fmt::print(stderr, "--seed-sql {}: {}\n", seed_sql, *seeded.error);
      return 64;
    }
  }
  std::unique_ptr<Hs2TestServer> made;
  try {
    made = std::make_unique<Hs2TestServer>(cfg, handler);
  } catch (const std::exception& e) {  // a keytab without the principal's key, a bad certificate
    fmt::print(stderr, "hs2_test_server: {}\n", e.what());
    return 1;
  }
  Hs2TestServer& server = *made;
  int port = server.start();
  if (!port_file.empty()) {
    std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << port << '\n';
    std::filesystem::rename(tmp, port_file);  // readers never see a half-written file
  }
  fmt::print("PORT {}\n", port);
  std::fflush(stdout);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGUSR1, on_report_signal);
  // The stats file goes last: readers take its appearance as "the report is complete" and read
  // the dump right after (written the other way round, a reader could see the stats and an old
  // or empty dump).
  const auto report = [&] {
    if (kit && !dump_file.empty()) {
      std::string dump;
      kit->with_store([&](const atlas2kudu::testkit::KuduStore& s) { dump = s.dump(); });
      write_file(dump_file, dump);
    }
    write_file(stats_file, atlas2kudu::testing::stats_json(server.stats()));
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(max_seconds);
  while (!g_stop && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (g_report) {
      g_report = 0;
      report();
    }
  }
  server.stop();
  report();
  auto st = server.stats();
  fmt::print(stderr, "hs2_test_server: {} connections, {} sessions, {} statements ({} run)\n",
             st.connections, st.sessions_opened, st.statements, st.statements_run);
  return 0;
}
