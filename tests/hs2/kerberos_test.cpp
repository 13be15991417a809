// Kerberos in the HS2 layer against a real MIT KDC (kerberos_realm.h): SASL GSSAPI through Cyrus's
// plugin on the binary transport, plain and under TLS, SPNEGO on hs2-http with the server's cookie
// taking over, and every failure a user can meet named with what to do. The KDC tests need the
// Debian packages krb5-kdc, krb5-admin-server, krb5-user and libsasl2-modules-gssapi-mit
// (scripts/setup.sh); without them they fail, they are never skipped.
#include "hs2/kerberos.h"

#include <doctest/doctest.h>
#include <gssapi/gssapi.h>
#include <krb5/krb5.h>

#include <string>
#include <thread>

#include "hs2/auth.h"
#include "hs2/error.h"
#include "hs2/executor.h"
#include "hs2_test_server.h"
#include "hs2_test_util.h"
#include "kerberos_realm.h"
#include "kit_handler.h"

TEST_SUITE_BEGIN("kerberos");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

const std::string kGuid = "0123456789abcdef0123456789abcdef";

std::string upsert(const std::string& name) {
  return "UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" + kGuid + "', '" + name +
         "')";
}

Hs2TestServerConfig kerberos_server(const KerberosRealm& realm,
                                    Hs2TestServerConfig::Transport transport) {
  Hs2TestServerConfig cfg;
  cfg.transport = transport;
  cfg.keytab = realm.service_keytab();
  cfg.principal = realm.service_principal();
  return cfg;
}

// -k against 127.0.0.1:port, the principal's host given with -b (the usual case of an IP in -i).
Hs2Options kerberos_options(int port, Hs2Protocol protocol = Hs2Protocol::kBinary) {
  Hs2Options o = test_options(port);
  o.protocol = protocol;
  o.kerberos = true;
  o.kerberos_host_fqdn = "localhost";
  return o;
}

// The message of the Hs2Error that connecting with `o` ends in; "" if it connects.
std::string connect_error(const Hs2Options& o, Hs2ErrorKind* kind = nullptr) {
  Hs2Session session = hs2_session(o);
  try {
    session.connect();
    session.execute(upsert("x"));
  } catch (const Hs2Error& e) {
    if (kind) *kind = e.kind();
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("kerberos: GSS-API and krb5 statuses are classified and explained") {
  CHECK(classify_kerberos_status(GSS_S_FAILURE, KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN) ==
        KerberosProblem::kServiceUnknown);
  CHECK(classify_kerberos_status(GSS_S_FAILURE, KRB5KRB_AP_ERR_SKEW) ==
        KerberosProblem::kClockSkew);
  CHECK(classify_kerberos_status(GSS_S_FAILURE, KRB5_KDC_UNREACH) ==
        KerberosProblem::kKdcUnreachable);
  CHECK(classify_kerberos_status(GSS_S_FAILURE, KRB5_REALM_UNKNOWN) ==
        KerberosProblem::kKdcUnreachable);
  CHECK(classify_kerberos_status(GSS_S_FAILURE, KRB5KRB_AP_ERR_TKT_EXPIRED) ==
        KerberosProblem::kTicketExpired);
  CHECK(classify_kerberos_status(GSS_S_CREDENTIALS_EXPIRED, 0) == KerberosProblem::kTicketExpired);
  CHECK(classify_kerberos_status(GSS_S_NO_CRED, 0) == KerberosProblem::kNoTicket);
  CHECK(classify_kerberos_status(GSS_S_FAILURE, KRB5_FCC_NOFILE) == KerberosProblem::kNoTicket);
  CHECK(classify_kerberos_status(GSS_S_FAILURE, 12345) == KerberosProblem::kOther);

  const std::string p = "impala/db1.example@EXAMPLE";
  CHECK(kerberos_problem_message(KerberosProblem::kNoTicket, p, "d") ==
        "Kerberos: no ticket (d): run \"kinit -kt KEYTAB PRINCIPAL\" first, or set KRB5CCNAME to "
        "the cache that holds it (or KRB5_CLIENT_KTNAME to a client keytab)");
  CHECK(contains(kerberos_problem_message(KerberosProblem::kTicketExpired, p, "d"),
                 "the ticket has expired (d): run \"kinit -kt KEYTAB PRINCIPAL\" again"));
  const std::string unknown = kerberos_problem_message(KerberosProblem::kServiceUnknown, p, "d");
  CHECK(contains(unknown, "does not know the service principal impala/db1.example@EXAMPLE"));
  CHECK(contains(unknown, "-s/--kerberos_service_name"));
  CHECK(contains(unknown, "-b/--kerberos_host_fqdn"));
  CHECK(contains(kerberos_problem_message(KerberosProblem::kClockSkew, p, "d"),
                 "clock differs too much from the KDC's (d): synchronise it (NTP)"));
  CHECK(contains(kerberos_problem_message(KerberosProblem::kKdcUnreachable, p, "d"),
                 "cannot reach a KDC of realm EXAMPLE for a ticket to impala/db1.example@EXAMPLE "
                 "(d): check the realm's kdc entries in krb5.conf"));
  CHECK(kerberos_problem_message(KerberosProblem::kOther, p, "d") ==
        "Kerberos: authentication to impala/db1.example@EXAMPLE failed: d");
  for (auto problem : {KerberosProblem::kNoTicket, KerberosProblem::kTicketExpired,
                       KerberosProblem::kServiceUnknown, KerberosProblem::kClockSkew,
                       KerberosProblem::kKdcUnreachable, KerberosProblem::kOther}) {
    CHECK(kerberos_problem_message(problem, p, "d").find('\n') == std::string::npos);
  }
}

TEST_CASE("kerberos: SASL GSSAPI through Cyrus, plain and under TLS, no security layer") {
  KerberosRealm realm;
  MESSAGE(realm.describe());
  ScopedKerberosEnv env(realm, realm.kinit("alice"));
  const TlsFiles& tls = tls_files();
  for (const bool with_tls : {false, true}) {
    CAPTURE(with_tls);
    auto kit = std::make_shared<KitHandler>();
    Hs2TestServerConfig cfg = kerberos_server(realm, Hs2TestServerConfig::Transport::kSasl);
    if (with_tls) {
      cfg.tls_cert = tls.cert;
      cfg.tls_key = tls.key;
    }
    Hs2TestServer server(cfg, kit);
    Hs2Options o = kerberos_options(server.start());
    o.ssl = with_tls;
    if (with_tls) o.ca_cert = tls.ca;
    o.sessions = 2;
    const Hs2Settings settings = validate_hs2_options(o);
    CHECK(make_authenticator(settings, nullptr)->describe() ==
          "Kerberos as a client of impala/localhost@A2K.TEST (SASL GSSAPI / HTTP SPNEGO)");
    Hs2Executor executor(settings, hs2_session_factory(settings, nullptr));
    executor.start("");
    CompiledWindow w;
    w.index = 1;
    w.upserts = {{"entity_flat", upsert("one"), 1, {}}};
    executor.run_window(w);
    executor.finish();
    CHECK(executor.stats().rows_by_table.at("entity_flat") == 1);
    // The server's acceptor offered every layer and took only "none"; it saw alice's ticket.
    const auto st = server.stats();
    CHECK(st.kerberos_logins >= 1);
    CHECK(st.kerberos_failures == 0);
    CHECK(st.kerberos_client == "alice@A2K.TEST");
    CHECK(st.statements_run == 1);
  }
}

TEST_CASE("kerberos: -b defaults to the -i host") {
  KerberosRealm realm;
  MESSAGE(realm.describe());
  ScopedKerberosEnv env(realm, realm.kinit("alice"));
  auto kit = std::make_shared<KitHandler>();
  Hs2TestServer server(kerberos_server(realm, Hs2TestServerConfig::Transport::kSasl), kit);
  const int port = server.start();
  // -i localhost: the principal is impala/localhost, which the server holds.
  Hs2Options by_name = kerberos_options(port);
  by_name.impalad = "localhost:" + std::to_string(port);
  by_name.kerberos_host_fqdn.clear();
  CHECK(connect_error(by_name) == "");
  // -i 127.0.0.1 without -b: impala/127.0.0.1 is no principal of the realm.
  Hs2Options by_ip = kerberos_options(port);
  by_ip.kerberos_host_fqdn.clear();
  Hs2ErrorKind kind{};
  const std::string error = connect_error(by_ip, &kind);
  CHECK(kind == Hs2ErrorKind::kAuth);
  CHECK(contains(error,
                 "Kerberos: the KDC does not know the service principal "
                 "impala/127.0.0.1@A2K.TEST"));
  // -b with a port, as impala-shell takes it: the port is ignored.
  by_ip.kerberos_host_fqdn = "localhost:21000";
  CHECK(connect_error(by_ip) == "");
}

TEST_CASE("kerberos: SPNEGO on hs2-http, then the server's cookie instead of new tokens") {
  KerberosRealm realm;
  MESSAGE(realm.describe());
  ScopedKerberosEnv env(realm, realm.kinit("alice"));
  auto kit = std::make_shared<KitHandler>();
  Hs2TestServer server(kerberos_server(realm, Hs2TestServerConfig::Transport::kHttp), kit);
  Hs2Session session = hs2_session(kerberos_options(server.start(), Hs2Protocol::kHttp));
  session.connect();
  for (int i = 0; i < 5; ++i) session.execute(upsert(std::to_string(i)));
  const auto st = server.stats();
  CHECK(st.kerberos_logins == 1);  // one Negotiate, on the first request
  CHECK(st.kerberos_failures == 0);
  CHECK(st.kerberos_client == "alice@A2K.TEST");
  CHECK(st.http_cookie_auth == st.http_requests - 1);  // every later request: impala.auth
  CHECK(st.statements_run == 5);
}

TEST_CASE("kerberos: no ticket, an expired one, unknown principals: exit-5 errors with the fix") {
  KerberosRealm realm;
  MESSAGE(realm.describe());
  auto kit = std::make_shared<KitHandler>();
  ScopedKerberosEnv realm_env(realm, "");
  Hs2TestServer sasl(kerberos_server(realm, Hs2TestServerConfig::Transport::kSasl), kit);
  Hs2TestServer http(kerberos_server(realm, Hs2TestServerConfig::Transport::kHttp), kit);
  const int sasl_port = sasl.start();
  const int http_port = http.start();
  const std::string expired_cache = realm.kinit("short", "2s");
  const std::string cache = realm.kinit("alice");
  for (const auto protocol : {Hs2Protocol::kBinary, Hs2Protocol::kHttp}) {
    const int port = protocol == Hs2Protocol::kBinary ? sasl_port : http_port;
    CAPTURE(port);
    {
      ScopedKerberosEnv env(realm, "FILE:" + (realm.dir() / "nothing.cc").string());
      Hs2ErrorKind kind{};
      const std::string error = connect_error(kerberos_options(port, protocol), &kind);
      CHECK(kind == Hs2ErrorKind::kAuth);
      CHECK(Hs2Error(kind, "").category() == ErrorCategory::kAuth);  // exit 5
      CHECK(contains(error, "Kerberos: no ticket ("));
      CHECK(contains(error, "run \"kinit -kt KEYTAB PRINCIPAL\" first"));
    }
    {
      ScopedKerberosEnv env(realm, cache);
      Hs2Options o = kerberos_options(port, protocol);
      o.kerberos_service_name = "hive";
      CHECK(contains(connect_error(o),
                     "Kerberos: the KDC does not know the service principal "
                     "hive/localhost@A2K.TEST"));
      o.kerberos_service_name.clear();
      o.kerberos_host_fqdn = "db9.example";
      CHECK(contains(connect_error(o),
                     "Kerberos: the KDC does not know the service principal "
                     "impala/db9.example@A2K.TEST"));
    }
  }
  // The 2-second ticket has expired by now (kinit'ed before the checks above; waited for if not).
  std::this_thread::sleep_for(std::chrono::seconds(3));
  for (const auto protocol : {Hs2Protocol::kBinary, Hs2Protocol::kHttp}) {
    ScopedKerberosEnv env(realm, expired_cache);
    const std::string error = connect_error(
        kerberos_options(protocol == Hs2Protocol::kBinary ? sasl_port : http_port, protocol));
    CHECK(contains(error, "Kerberos: the ticket has expired ("));
    CHECK(contains(error, "run \"kinit -kt KEYTAB PRINCIPAL\" again"));
  }
  // Nothing ever reached the handler.
  CHECK(sasl.stats().statements == 0);
  CHECK(http.stats().statements == 0);
}

TEST_CASE("kerberos: the server refuses the mechanism, or the ticket; the KDC is down") {
  KerberosRealm realm;
  MESSAGE(realm.describe());
  ScopedKerberosEnv env(realm, realm.kinit("alice"));
  auto kit = std::make_shared<KitHandler>();
  // A server set up for LDAP only.
  {
    Hs2TestServerConfig cfg;
    cfg.transport = Hs2TestServerConfig::Transport::kSasl;
    cfg.user = "alice";
    cfg.password = "pw";
    Hs2TestServer server(cfg, kit);
    const std::string error = connect_error(kerberos_options(server.start()));
    CHECK(contains(error,
                   "Kerberos: the server does not accept Kerberos (it answered: "
                   "Unsupported mechanism type GSSAPI)"));
    cfg.transport = Hs2TestServerConfig::Transport::kHttp;
    Hs2TestServer http(cfg, kit);
    CHECK(contains(connect_error(kerberos_options(http.start(), Hs2Protocol::kHttp)),
                   "Kerberos: the server does not accept Kerberos (it answered: HTTP 401 with "
                   "Basic realm=\"impala\")"));
  }
  // A server set up for Kerberos only, and a client with a password or a token: no password was
  // looked at, and the message says what the server asks for instead.
  {
    const auto refusal = [&](Hs2TestServerConfig::Transport transport, Hs2Options o,
                             std::shared_ptr<const Hs2Credentials> credentials) {
      Hs2TestServer server(kerberos_server(realm, transport), kit);
      o.impalad = "127.0.0.1:" + std::to_string(server.start());
      try {
        hs2_session(o, std::move(credentials)).connect();
      } catch (const Hs2Error& e) {
        CHECK(e.kind() == Hs2ErrorKind::kAuth);
        return std::string(e.what());
      }
      return std::string();
    };
    Hs2Options ldap = test_options(0);
    ldap.ldap = true;
    ldap.user = "alice";
    ldap.auth_creds_ok_in_clear = true;
    CHECK(refusal(Hs2TestServerConfig::Transport::kSasl, ldap, password_credentials("pw")) ==
          "LDAP: the server does not accept SASL PLAIN (it answered: Unsupported mechanism type "
          "PLAIN): it may be set up for Kerberos (-k) or no authentication, or -i names the wrong "
          "port");
    ldap.protocol = Hs2Protocol::kHttp;
    CHECK(contains(refusal(Hs2TestServerConfig::Transport::kHttp, ldap, password_credentials("pw")),
                   ": the server does not accept LDAP (HTTP Basic): it answered HTTP 401 with "
                   "Negotiate; try -k (Kerberos)"));
    Hs2Options jwt = test_options(0);
    jwt.protocol = Hs2Protocol::kHttp;
    jwt.jwt = true;
    jwt.auth_creds_ok_in_clear = true;
    CHECK(contains(refusal(Hs2TestServerConfig::Transport::kHttp, jwt, jwt_credentials("t.o.k")),
                   " (HTTP 401 with Negotiate): the server refused the token: it may have "
                   "expired or be invalid (check what --jwt_cmd or $ATLAS2KUDU_JWT gives), or "
                   "JWT may not be enabled on this server (then try -k (Kerberos))"));
  }
  // A ticket for a principal the KDC knows but the server has no key for (-b naming another
  // host): the server rejects it.
  realm.add_principal(std::string("impala/db2.example@") + KerberosRealm::kRealm);
  for (const auto transport :
       {Hs2TestServerConfig::Transport::kSasl, Hs2TestServerConfig::Transport::kHttp}) {
    Hs2TestServer server(kerberos_server(realm, transport), kit);
    Hs2Options o = kerberos_options(
        server.start(), transport == Hs2TestServerConfig::Transport::kSasl ? Hs2Protocol::kBinary
                                                                           : Hs2Protocol::kHttp);
    o.kerberos_host_fqdn = "db2.example";
    CHECK(contains(connect_error(o),
                   "Kerberos: the server rejected the ticket for impala/db2.example@A2K.TEST"));
    CHECK(server.stats().kerberos_failures == 1);
  }
  // The KDC is down: a service ticket not yet in the cache cannot be had.
  realm.add_principal(std::string("impala/db3.example@") + KerberosRealm::kRealm);
  realm.stop_kdc();
  Hs2TestServer server(kerberos_server(realm, Hs2TestServerConfig::Transport::kSasl), kit);
  Hs2Options o = kerberos_options(server.start());
  o.kerberos_host_fqdn = "db3.example";
  CHECK(contains(connect_error(o),
                 "Kerberos: cannot reach a KDC of realm A2K.TEST for a ticket "
                 "to impala/db3.example@A2K.TEST"));
}

TEST_SUITE_END();
