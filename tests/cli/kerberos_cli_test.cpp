// `atlas2kudu apply -k` end to end: the real binary, a real MIT KDC in a throw-away realm
// (kerberos_realm.h), the caller's ticket from kinit in a private KRB5CCNAME, and the HS2 test
// server with a service keytab, over binary, binary+TLS and hs2-http; each run ends with the tables
// of the sequential reference projector. Then the failures a cron job meets, each exit 5 with the
// fix in its message, and the standalone hs2_test_server's --keytab/--principal.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "atlas2kudu/reader.h"
#include "connect_errors_loopback.h"
#include "hs2_test_server.h"
#include "hs2_test_util.h"
#include "kerberos_realm.h"
#include "kit_handler.h"
#include "reference_projector.h"
#include "test_support.h"

TEST_SUITE_BEGIN("kerberos_cli");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

// `env atlas2kudu ARGS` through the shell, bounded by a timeout.
Run run(const KerberosRealm& realm, const std::string& env, const std::string& args) {
  const auto out_path = realm.dir() / "run.out";
  const auto err_path = realm.dir() / "run.err";
  const std::string cmd = "env " + env + " timeout 60 " + ATLAS2KUDU_BINARY + " " + args +
                          " </dev/null >" + out_path.string() + " 2>" + err_path.string();
  const int raw = std::system(cmd.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(out_path.string());
  r.err = slurp(err_path.string());
  return r;
}

std::vector<std::string> inputs() {
  const std::string dir = std::string(ATLAS2KUDU_TEST_DATA) + "/scenarios/";
  return {dir + "01-partial-update-and-rename.jsonl",
          dir + "04-soft-delete-cascades-edges-keeps-tags.jsonl",
          dir + "06-tag-set-shrinks-to-empty.jsonl"};
}

std::string joined_inputs() {
  std::string out;
  for (const auto& p : inputs()) out += " " + p;
  return out;
}

// The tables the reference projector makes of the inputs, from empty tables.
testkit::KuduStore projected() {
  RejectSink rejects(RejectPolicy{}, nullptr);
  Reader reader(inputs(), rejects);
  std::vector<Event> events;
  for (Event e; reader.next(e);) events.push_back(std::move(e));
  REQUIRE(events.size() > 5);
  return testkit::project(events, CompileOptions{}, testkit::KuduStore(KeyEncoding::kHex));
}

std::optional<std::string> differs_from_projector(const KitHandler& kit) {
  std::optional<std::string> diff;
  const testkit::KuduStore expected = projected();
  kit.with_store(
      [&](const testkit::KuduStore& actual) { diff = testkit::compare_stores(expected, actual); });
  return diff;
}

}  // namespace

TEST_CASE("apply -k over binary, binary+TLS and hs2-http equals the reference projector") {
  KerberosRealm realm;
  MESSAGE(realm.describe());
  ScopedKerberosEnv server_env(realm, "");  // the in-process server's acceptor reads KRB5_CONFIG
  const std::string env = realm.shell_env(realm.kinit("alice"));
  const TlsFiles& tls = tls_files();
  struct Variant {
    const char* name;
    Hs2TestServerConfig::Transport transport;
    bool tls;
    std::string flags;
  };
  for (const Variant& v : {Variant{"binary", Hs2TestServerConfig::Transport::kSasl, false, ""},
                           Variant{"binary+TLS", Hs2TestServerConfig::Transport::kSasl, true,
                                   " --ssl --ca_cert " + tls.ca},
                           Variant{"hs2-http", Hs2TestServerConfig::Transport::kHttp, false,
                                   " --protocol hs2-http"}}) {
    CAPTURE(v.name);
    auto kit = std::make_shared<KitHandler>(KeyEncoding::kHex);
    Hs2TestServerConfig cfg;
    cfg.transport = v.transport;
    cfg.keytab = realm.service_keytab();
    cfg.principal = realm.service_principal();
    if (v.tls) {
      cfg.tls_cert = tls.cert;
      cfg.tls_key = tls.key;
    }
    Hs2TestServer server(cfg, kit);
    const int port = server.start();
    // -i by address, -b the name in the service principal; --window-events 3: several windows,
    // each with its prior-state lookups, over --sessions 2.
    const Run r = run(realm, env,
                      "apply -k -s impala -b localhost -i 127.0.0.1:" + std::to_string(port) +
                          v.flags + " --window-events 3 --sessions 2" + joined_inputs());
    CHECK_MESSAGE(r.status == 0, r.err);
    CHECK(contains(r.err, "windows applied"));
    const auto diff = differs_from_projector(*kit);
    CHECK_MESSAGE(!diff, diff.value_or(""));
    const auto st = server.stats();
    CHECK(st.kerberos_client == "alice@A2K.TEST");
    CHECK(st.kerberos_failures == 0);
    CHECK(st.statements_run > 5);
  }
}

TEST_CASE("apply -k: no ticket, expired ticket, wrong -s, wrong -b: exit 5 and what to do") {
  KerberosRealm realm;
  MESSAGE(realm.describe());
  ScopedKerberosEnv server_env(realm, "");
  auto kit = std::make_shared<KitHandler>(KeyEncoding::kHex);
  Hs2TestServerConfig cfg;
  cfg.transport = Hs2TestServerConfig::Transport::kSasl;
  cfg.keytab = realm.service_keytab();
  cfg.principal = realm.service_principal();
  Hs2TestServer server(cfg, kit);
  const std::string base = "apply -k -i 127.0.0.1:" + std::to_string(server.start()) +
                           " --connect_max_tries 1" + joined_inputs();
  const std::string expired = realm.kinit("short", "2s");
  const std::string good = realm.shell_env(realm.kinit("alice"));

  // No ticket: an empty cache (and none by default: the realm's default cache does not exist).
  Run r = run(realm, realm.shell_env("FILE:" + (realm.dir() / "none.cc").string()),
              base + " -b localhost");
  CHECK(r.status == 5);
  CHECK(contains(r.err, "Kerberos: no ticket ("));
  CHECK(contains(r.err, "run \"kinit -kt KEYTAB PRINCIPAL\" first, or set KRB5CCNAME"));
  r = run(realm, realm.shell_env(), base + " -b localhost");
  CHECK(r.status == 5);
  CHECK(contains(r.err, "Kerberos: no ticket ("));

  // Wrong -s, wrong -b, and no -b while -i is an address: the principal tried is named.
  r = run(realm, good, base + " -s hive -b localhost");
  CHECK(r.status == 5);
  CHECK(contains(r.err,
                 "Kerberos: the KDC does not know the service principal "
                 "hive/localhost@A2K.TEST"));
  r = run(realm, good, base + " -b impalad9.example.com");
  CHECK(r.status == 5);
  CHECK(contains(r.err,
                 "Kerberos: the KDC does not know the service principal "
                 "impala/impalad9.example.com@A2K.TEST"));
  r = run(realm, good, base);
  CHECK(r.status == 5);
  CHECK(contains(r.err, "impala/127.0.0.1@A2K.TEST"));
  CHECK(contains(r.err, "-b/--kerberos_host_fqdn"));

  // Cyrus without its GSSAPI plugin (SASL_PATH: an empty plugin directory) names the package.
  std::filesystem::create_directories(realm.dir() / "no-plugins");
  r = run(realm, good + "SASL_PATH=" + (realm.dir() / "no-plugins").string(),
          base + " -b localhost");
  CHECK(r.status == 5);
  CHECK(contains(r.err, "Kerberos: Cyrus SASL has no GSSAPI plugin ("));
  CHECK(contains(r.err, "install the package libsasl2-modules-gssapi-mit"));

  // Expired: the 2-second ticket, certainly expired after 3 s more.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  r = run(realm, realm.shell_env(expired), base + " -b localhost");
  CHECK(r.status == 5);
  CHECK(contains(r.err, "Kerberos: the ticket has expired ("));
  CHECK(contains(r.err, "run \"kinit -kt KEYTAB PRINCIPAL\" again"));

  // Nothing was executed.
  CHECK(server.stats().statements == 0);

  // Kerberos and LDAP together is a usage error; -s or -b without -k too.
  r = run(realm, good, base + " -b localhost -l --auth_creds_ok_in_clear");
  CHECK(r.status == 64);
  CHECK(contains(r.err, "-k/--kerberos and -l/--ldap are mutually exclusive"));
  r = run(realm, good, "apply -i 127.0.0.1:1 -b localhost" + joined_inputs());
  CHECK(r.status == 64);
  CHECK(contains(r.err, "-b/--kerberos_host_fqdn needs -k/--kerberos"));

  // A client keytab instead of a cache works too (KRB5_CLIENT_KTNAME, as cron jobs may use).
  r = run(realm,
          realm.shell_env("FILE:" + (realm.dir() / "fresh.cc").string()) +
              "KRB5_CLIENT_KTNAME=" + realm.user_keytab(),
          base + " -b localhost");
  CHECK_MESSAGE(r.status == 0, r.err);
}

TEST_CASE("hs2_test_server --keytab --principal serves apply -k (GSSAPI and SPNEGO)") {
  KerberosRealm realm;
  MESSAGE(realm.describe());
  const std::string env = realm.shell_env(realm.kinit("alice"));
  for (const char* transport : {"sasl", "http"}) {
    CAPTURE(transport);
    const auto port_file = realm.dir() / (std::string(transport) + ".port");
    const auto log_file = realm.dir() / (std::string(transport) + ".log");
    const std::string cmd = "env " + realm.shell_env() + ATLAS2KUDU_HS2_TEST_SERVER +
                            " --transport " + transport + " --keytab " + realm.service_keytab() +
                            " --principal " + realm.service_principal() + " --port-file " +
                            port_file.string() + " --statement-log " + log_file.string() +
                            " --max-seconds 60 >/dev/null 2>&1 & echo $!";
    std::FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    int pid = 0;
    REQUIRE(std::fscanf(p, "%d", &pid) == 1);
    pclose(p);
    struct Stop {
      int pid;
      ~Stop() {
        kill(pid, SIGTERM);
        waitpid(pid, nullptr, 0);
      }
    } stop{pid};
    int port = 0;
    for (int i = 0; i < 100 && port == 0; ++i) {  // at most 10 s
      port = std::atoi(slurp(port_file.string()).c_str());
      if (port == 0) usleep(100000);
    }
    REQUIRE(port != 0);
    const std::string protocol =
        std::string(transport) == "http" ? " --protocol hs2-http" : " --protocol hs2";
    Run r = run(realm, env,
                "apply -k -b localhost -i 127.0.0.1:" + std::to_string(port) + protocol +
                    " --prior none" + joined_inputs());
    CHECK_MESSAGE(r.status == 0, r.err);
    CHECK(!slurp(log_file.string()).empty());
    // Without a ticket the server refuses the client (the client cannot even start).
    r = run(realm, realm.shell_env(),
            "apply -k -b localhost -i 127.0.0.1:" + std::to_string(port) + protocol +
                " --prior none --connect_max_tries 1" + joined_inputs());
    CHECK(r.status == 5);
  }
  // --keytab needs a SASL or HTTP transport; a keytab without the principal's key is refused.
  const std::string server = std::string("env ") + realm.shell_env() + ATLAS2KUDU_HS2_TEST_SERVER;
  CHECK(WEXITSTATUS(std::system((server + " --transport binary --keytab " + realm.service_keytab() +
                                 " --principal " + realm.service_principal() + " >/dev/null 2>&1")
                                    .c_str())) == 64);
  CHECK(WEXITSTATUS(std::system((server + " --transport sasl --keytab " + realm.user_keytab() +
                                 " --principal " + realm.service_principal() +
                                 " --max-seconds 5 >/dev/null 2>&1")
                                    .c_str())) == 1);
}

TEST_CASE("apply -k with a KDC that never answers: -t, --deadline and SIGINT end the wait") {
  // libkrb5 cannot be interrupted and waits about 27 s for a silent KDC (kdc_timeout 1 s, 3
  // tries, UDP then TCP); the run waits -t for it, or until a stop, and then exits cleanly with
  // that thread still inside libkrb5. The ticket-granting ticket comes from the realm's KDC; the
  // service ticket is then asked of one that never answers: a UDP port never read, a TCP port
  // never accepted from (also the -i port: the connect completes in the backlog).
  KerberosRealm realm;
  const std::string cache = realm.kinit("alice");
  const LoopbackSocket udp = bind_loopback(SOCK_DGRAM);
  const LoopbackSocket tcp = bind_loopback(SOCK_STREAM, udp.port);
  const std::string silent = "127.0.0.1:" + std::to_string(udp.port);
  std::string conf = slurp(realm.krb5_config());
  const std::string kdc = "127.0.0.1:" + std::to_string(realm.kdc_port());
  REQUIRE(conf.find(kdc) != std::string::npos);
  conf.replace(conf.find(kdc), kdc.size(), silent);
  const auto silent_conf = realm.dir() / "krb5-silent.conf";
  {
    std::FILE* f = std::fopen(silent_conf.string().c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(conf.c_str(), f);
    std::fclose(f);
  }
  const std::string env = realm.shell_env(cache) + "KRB5_CONFIG='" + silent_conf.string() + "' ";
  const std::string base =
      "apply -k -b localhost --prior none --connect_max_tries 1 -i " + silent + joined_inputs();
  for (const char* protocol : {" --protocol hs2", " --protocol hs2-http"}) {
    CAPTURE(protocol);
    auto started = std::chrono::steady_clock::now();
    Run r = run(realm, env, base + protocol + " -t 1500");
    auto took = std::chrono::steady_clock::now() - started;
    CHECK(r.status == 5);
    CHECK(contains(r.err,
                   "atlas2kudu: Kerberos: cannot reach a KDC of realm A2K.TEST for a ticket to "
                   "impala/localhost@A2K.TEST (no answer within -t 1500 ms; libkrb5 waits "
                   "kdc_timeout per KDC and try, max_retries tries, in krb5.conf's [libdefaults]): "
                   "check the realm's kdc entries in krb5.conf (or $KRB5_CONFIG) and that the KDC "
                   "is up and reachable\n"));
    CHECK(took < std::chrono::seconds(10));
    // --deadline, with no -t: a stop (exit 4).
    started = std::chrono::steady_clock::now();
    r = run(realm, env, base + protocol + " -t 0 --deadline 2s");
    took = std::chrono::steady_clock::now() - started;
    CHECK(r.status == 4);
    CHECK(contains(r.err, "deadline"));
    CHECK(took < std::chrono::seconds(10));
  }
  // SIGINT: exit 130 within a second of it.
  const std::string err = (realm.dir() / "sigint.err").string();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string cmd = "exec env " + env + ATLAS2KUDU_BINARY + " " + base + " -t 0 2>" + err;
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto signalled = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  int raw = 0;
  for (int i = 0; i < 500 && ::waitpid(pid, &raw, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (::waitpid(pid, &raw, WNOHANG) == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &raw, 0);
    FAIL("apply -k did not stop at SIGINT");
  }
  CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(3));
  CHECK(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 130);
  CHECK(contains(slurp(err), "stopped by SIGINT"));
  ::close(udp.fd);
  ::close(tcp.fd);
}

TEST_SUITE_END();
