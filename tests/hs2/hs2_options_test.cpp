// Options, credentials, the authenticator choice and error classification of the HS2 layer (no
// network).
#include <doctest/doctest.h>
#include <signal.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <type_traits>
#include <utility>

#include "cli/hs2_flags.h"
#include "hs2/auth.h"
#include "hs2/credentials.h"
#include "hs2/error.h"
#include "hs2/options.h"
#include "hs2/sasl_transport.h"
#include "hs2_test_util.h"
#include "util/stop.h"

TEST_SUITE_BEGIN("hs2_options");

using namespace atlas2kudu;
using atlas2kudu::testing::jwt_credentials;
using atlas2kudu::testing::password_credentials;

namespace {
Hs2ErrorKind usage_kind(const Hs2Options& o) {
  try {
    (void)validate_hs2_options(o);
  } catch (const Hs2Error& e) {
    return e.kind();
  }
  return Hs2ErrorKind::kInternal;  // "no error" marker
}

// The message of the usage error validate_hs2_options(o) throws ("" if none).
std::string usage_message(const Hs2Options& o) {
  try {
    (void)validate_hs2_options(o);
  } catch (const Hs2Error& e) {
    CHECK(e.kind() == Hs2ErrorKind::kUsage);
    return e.what();
  }
  return "";
}

// resolve_hs2_credentials for options that only say where the secrets come from.
std::shared_ptr<const Hs2Credentials> resolve(Hs2Options o) {
  o.ssl = true;
  if (o.jwt) o.protocol = Hs2Protocol::kHttp;
  return resolve_hs2_credentials(validate_hs2_options(o));
}
}  // namespace

TEST_CASE("hs2 options: -i host[:port] and per-protocol default ports") {
  Hs2Options o;
  CHECK(hs2_endpoint(o).host == "localhost");
  CHECK(hs2_endpoint(o).port == 21050);
  o.protocol = Hs2Protocol::kHttp;
  CHECK(hs2_endpoint(o).port == 28000);
  o.impalad = "db1.example:21051";
  CHECK(hs2_endpoint(o).host == "db1.example");
  CHECK(hs2_endpoint(o).port == 21051);
  o.impalad = "[::1]:9999";
  CHECK(hs2_endpoint(o).host == "::1");
  CHECK(hs2_endpoint(o).port == 9999);
  o.impalad = "db1:notaport";
  CHECK_THROWS_AS(hs2_endpoint(o), Hs2Error);
}

TEST_CASE("hs2 options: CLI11 registration parses impala-shell style flags") {
  CLI::App app;
  Hs2Options o;
  add_hs2_options(&app, &o);
  std::vector<std::string> args = {"--sessions",
                                   "4",
                                   "-Q",
                                   "REQUEST_POOL=etl",
                                   "-Q",
                                   "MEM_LIMIT=2g",
                                   "--auth_creds_ok_in_clear",
                                   "-u",
                                   "bob",
                                   "-l",
                                   "--http_path",
                                   "/x",
                                   "--protocol",
                                   "hs2-http",
                                   "-t",
                                   "1500",
                                   "-i",
                                   "db1:28001"};
  std::reverse(args.begin(), args.end());  // CLI11 takes argv reversed in a vector
  app.parse(args);
  CHECK(o.sessions == 4);
  CHECK(o.query_options == std::vector<std::string>{"REQUEST_POOL=etl", "MEM_LIMIT=2g"});
  CHECK(o.auth_creds_ok_in_clear);
  CHECK(o.user == "bob");
  CHECK(o.ldap);
  CHECK(o.protocol == Hs2Protocol::kHttp);
  CHECK(o.connect_timeout_ms == 1500);
  CHECK(o.impalad == "db1:28001");
  CHECK(usage_kind(o) == Hs2ErrorKind::kInternal);  // valid
}

TEST_CASE("hs2 options: contradictions are usage errors") {
  Hs2Options o;
  o.ldap = true;
  CHECK(usage_kind(o) == Hs2ErrorKind::kUsage);  // LDAP in clear
  o.ssl = true;
  CHECK(usage_kind(o) == Hs2ErrorKind::kInternal);
  o.jwt = true;
  CHECK(usage_kind(o) == Hs2ErrorKind::kUsage);  // -l and -j
  o.ldap = false;
  CHECK(usage_kind(o) == Hs2ErrorKind::kUsage);  // JWT over binary
  o.protocol = Hs2Protocol::kHttp;
  CHECK(usage_kind(o) == Hs2ErrorKind::kInternal);
  o.ca_cert = "/ca.pem";
  o.ssl_insecure_skip_verify = true;
  CHECK(usage_kind(o) == Hs2ErrorKind::kUsage);
  Hs2Options q;
  q.query_options = {"NOEQUALS"};
  CHECK(usage_kind(q) == Hs2ErrorKind::kUsage);
  // Each flag that needs another names itself only.
  const auto message = [](const Hs2Options& options) {
    try {
      (void)validate_hs2_options(options);
    } catch (const Hs2Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Hs2Options c;
  c.ca_cert = "/ca.pem";
  CHECK(message(c) == "--ca_cert needs --ssl");
  Hs2Options k;
  k.ssl_insecure_skip_verify = true;
  CHECK(message(k) == "--ssl_insecure_skip_verify needs --ssl");
  // --http_path means nothing to the binary protocol: refused, as -s without -k is.
  Hs2Options h;
  h.http_path = "gateway/impala";
  CHECK(message(h) == "--http_path needs --protocol hs2-http");
  h.protocol = Hs2Protocol::kHttp;
  CHECK(message(h).empty());
  CHECK(category_for(Hs2ErrorKind::kUsage) == ErrorCategory::kUsage);
}

TEST_CASE("hs2 options: -k, -s and -b as impala-shell has them") {
  CLI::App app;
  Hs2Options o;
  add_hs2_options(&app, &o);
  app.parse(std::vector<std::string>{"impalad1.example.com:21000", "-b", "hive", "-s", "-k",
                                     "10.0.0.7", "-i"});  // reversed argv
  CHECK(o.kerberos);
  CHECK(o.kerberos_service_name == "hive");
  const Hs2Settings s = validate_hs2_options(o);
  CHECK(s.kerberos_service() == "hive");
  CHECK(s.kerberos_host() == "impalad1.example.com");  // the port of -b is ignored
  CHECK(s.endpoint().host == "10.0.0.7");
  // Defaults: service impala, the -i host.
  Hs2Options d;
  d.kerberos = true;
  d.impalad = "db1.example:21050";
  const Hs2Settings ds = validate_hs2_options(d);
  CHECK(ds.kerberos_service() == "impala");
  CHECK(ds.kerberos_host() == "db1.example");
  // Kerberos needs no TLS (a ticket is no password), but excludes LDAP and JWT.
  CHECK(usage_kind(d) == Hs2ErrorKind::kInternal);
  for (auto other : {&Hs2Options::ldap, &Hs2Options::jwt}) {
    Hs2Options both = d;
    both.ssl = true;
    both.protocol = Hs2Protocol::kHttp;
    both.*other = true;
    CHECK(usage_kind(both) == Hs2ErrorKind::kUsage);
  }
  Hs2Options only_s;
  only_s.kerberos_service_name = "impala";
  CHECK(usage_kind(only_s) == Hs2ErrorKind::kUsage);  // -s without -k
  Hs2Options only_b;
  only_b.kerberos_host_fqdn = "db1";
  CHECK(usage_kind(only_b) == Hs2ErrorKind::kUsage);  // -b without -k
  Hs2Options slash = d;
  slash.kerberos_service_name = "impala/db1";
  CHECK(usage_kind(slash) == Hs2ErrorKind::kUsage);  // a principal, not a service name
  // A user and password where -b's host belongs: neither is repeated.
  Hs2Options user_in_b = d;
  user_in_b.kerberos_host_fqdn = "etl:Secret1@db1";
  CHECK(usage_message(user_in_b) ==
        "-b ****:****@db1: a host[:port], not a user@host; give -b db1");
  Hs2Options bad_port = d;
  bad_port.kerberos_host_fqdn = "db1:x";
  try {
    (void)validate_hs2_options(bad_port);
    FAIL("expected a usage error");
  } catch (const Hs2Error& e) {
    CHECK(std::string(e.what()) == "-b db1:x: bad port 'x'");
  }
  // Without -k the settings name no Kerberos principal.
  CHECK(validate_hs2_options(Hs2Options{}).kerberos_host().empty());
  // An empty part around the colon is a mistake (a variable left empty), not the default.
  for (const char* spec : {":", "db1:", ":21050", "[::1]:", "[]", "[]:21050"}) {
    CAPTURE(spec);
    Hs2Options empty_part;
    empty_part.impalad = spec;
    try {
      (void)validate_hs2_options(empty_part);
      FAIL("expected a usage error");
    } catch (const Hs2Error& e) {
      CHECK(e.kind() == Hs2ErrorKind::kUsage);
      CHECK(std::string(e.what()) == "-i '" + std::string(spec) +
                                         "': a host or port left empty; give host[:port], or "
                                         "[v6addr][:port] for IPv6");
    }
  }
}

TEST_CASE("hs2 options: validation resolves the endpoint, the user and the -Q overlay once") {
  Hs2Options o;
  o.impalad = "[::1]";
  o.protocol = Hs2Protocol::kHttp;
  o.user = "carol";
  o.query_options = {"MEM_LIMIT=2g", "REQUEST_POOL=etl", "MEM_LIMIT=4g", "X=a=b"};
  const Hs2Settings s = validate_hs2_options(o);
  CHECK(s.endpoint().host == "::1");
  CHECK(s.endpoint().port == 28000);
  CHECK(s.user() == "carol");
  CHECK(s.query_overlay() == std::map<std::string, std::string>{
                                 {"MEM_LIMIT", "4g"}, {"REQUEST_POOL", "etl"}, {"X", "a=b"}});
  CHECK(s.options().query_options.size() == 4);  // the options themselves are kept as given
  // Option names know no case: the last given wins, in its own spelling.
  Hs2Options cased;
  cased.query_options = {"mem_limit=1g", "MT_DOP=0", "MEM_LIMIT=2g"};
  CHECK(validate_hs2_options(cased).query_overlay() ==
        std::map<std::string, std::string>{{"MEM_LIMIT", "2g"}, {"MT_DOP", "0"}});
  cased.query_options = {"MEM-LIMIT=1g"};
  CHECK(usage_kind(cased) == Hs2ErrorKind::kUsage);
  // A URL for -i: its parts named as the options that give them.
  Hs2Options url;
  url.impalad = "https://db1.example:28000/cliservice";
  try {
    (void)validate_hs2_options(url);
    FAIL("expected a usage error");
  } catch (const Hs2Error& e) {
    CHECK(e.kind() == Hs2ErrorKind::kUsage);
    CHECK(std::string(e.what()) ==
          "-i https://db1.example:28000/cliservice: a host[:port], not a URL; give -i "
          "db1.example:28000 --protocol hs2-http --ssl");
  }
  // A gateway's path becomes --http_path; a user and password (which may hold an '@') are not
  // repeated: the user becomes -u, the password is hidden and goes through -l.
  const std::pair<std::string, std::string> urls[] = {
      {"https://knox.example:8443/gateway/cdp-proxy-api/impala?doAs=x",
       "-i https://knox.example:8443/gateway/cdp-proxy-api/impala?doAs=x: a host[:port], not a "
       "URL; give -i knox.example:8443 --protocol hs2-http --ssl --http_path "
       "/gateway/cdp-proxy-api/impala"},
      {"http://etl:Hunter2@pw@db1:28000/",
       "-i http://etl:****@db1:28000/: a host[:port], not a URL; give -i db1:28000 --protocol "
       "hs2-http -u etl -l, with the password from --ldap_password_cmd or "
       "$ATLAS2KUDU_LDAP_PASSWORD (never on the command line)"},
      {"etl:Hunter2pw@db1:21050",
       "-i etl:****@db1:21050: a host[:port], not a user@host; give -i db1:21050 -u etl -l, with "
       "the password from --ldap_password_cmd or $ATLAS2KUDU_LDAP_PASSWORD (never on the command "
       "line)"},
      {"etl@db1", "-i etl@db1: a host[:port], not a user@host; give -i db1 -u etl"},
  };
  for (const auto& given_says : urls) {
    const std::string& given = given_says.first;
    const std::string& says = given_says.second;
    CAPTURE(given);
    url.impalad = given;
    CHECK(usage_message(url) == says);
  }
  // A password holding '/', '#' or '?' is hidden too; so is one given to -b.
  const std::pair<std::string, std::string> slashed[] = {
      {"etl:Sec/ret1@host:21050",
       "-i etl:****@host:21050: a host[:port], not a user@host; give -i host:21050 -u etl -l, "
       "with the password from --ldap_password_cmd or $ATLAS2KUDU_LDAP_PASSWORD (never on the "
       "command line)"},
      {"https://etl:Sec#r?et1@host:28000/x",
       "-i https://etl:****@host:28000/x: a host[:port], not a URL; give -i host:28000 --protocol "
       "hs2-http --ssl --http_path /x -u etl -l, with the password from --ldap_password_cmd or "
       "$ATLAS2KUDU_LDAP_PASSWORD (never on the command line)"},
      {" etl:pw@host",
       "-i etl:****@host: a host[:port], not a user@host; give -i host -u etl -l, "
       "with the password from --ldap_password_cmd or $ATLAS2KUDU_LDAP_PASSWORD "
       "(never on the command line)"},
  };
  for (const auto& given_says : slashed) {
    CAPTURE(given_says.first);
    url.impalad = given_says.first;
    CHECK(usage_message(url) == given_says.second);
  }
  CHECK(split_userinfo("http://squid:p@s/s@proxy:3128/x").userinfo == "squid:p@s/s");
  CHECK(split_userinfo("http://squid:p@s/s@proxy:3128/x").rest == "proxy:3128/x");
  CHECK(split_userinfo("db1:21050").userinfo.empty());
  CHECK(without_password("http://squid:p@ss@proxy:3128") == "http://squid:****@proxy:3128");
  CHECK(without_password("http://squid:p/s#s?@proxy:3128") == "http://squid:****@proxy:3128");
  CHECK(without_password("http://t0ken@proxy:3128") == "http://****@proxy:3128");
  CHECK(without_password("http://u:pw@") == "http://u:****@");
  CHECK(without_password("http://proxy:3128") == "http://proxy:3128");
  // A path libcurl would refuse at connect time (exit 4) is a usage error.
  Hs2Options path;
  path.protocol = Hs2Protocol::kHttp;
  for (const char* bad : {"a b", "cli\r\nservice", "\t"}) {
    path.http_path = bad;
    CHECK(usage_kind(path) == Hs2ErrorKind::kUsage);
  }
  path.http_path = "gateway/default/impala";
  CHECK(usage_kind(path) == Hs2ErrorKind::kInternal);
  o.impalad = "db1:0";
  CHECK(usage_kind(o) == Hs2ErrorKind::kUsage);
}

TEST_CASE("hs2 credentials: move-only, and nothing is left behind in a moved-from object") {
  static_assert(!std::is_copy_constructible_v<Hs2Credentials>);
  static_assert(!std::is_copy_assignable_v<Hs2Credentials>);
  static_assert(std::is_nothrow_move_constructible_v<Hs2Credentials>);
  Hs2Credentials a;
  a.password = "short pw";  // kept inline by std::string: a move copies the bytes
  a.jwt = std::string(40, 'j');
  const char* inline_bytes = a.password.data();
  Hs2Credentials b(std::move(a));
  CHECK(b.password == "short pw");
  CHECK(b.jwt == std::string(40, 'j'));
  CHECK(a.password.empty());
  CHECK(a.jwt.empty());
  for (std::size_t i = 0; i < 8; ++i) CHECK(inline_bytes[i] == '\0');

  Hs2Credentials c;
  c.password = "old";
  c = std::move(b);
  CHECK(c.password == "short pw");
  CHECK(b.password.empty());
}

TEST_CASE("hs2 credentials: wipe_secret clears the whole buffer and keeps it") {
  std::string secret(100, 's');
  secret.resize(10);  // bytes beyond size() still hold the secret
  const char* data = secret.data();
  const std::size_t capacity = secret.capacity();
  wipe_secret(secret);
  CHECK(secret.empty());
  CHECK(secret.capacity() == capacity);
  CHECK(secret.data() == data);
  for (std::size_t i = 0; i < 100; ++i) CHECK(data[i] == '\0');
}

TEST_CASE(
    "hs2 auth: the options pick the authenticator; LDAP and Kerberos wrap the socket in SASL") {
  using apache::thrift::transport::TBufferedTransport;
  using apache::thrift::transport::TSocket;
  Hs2Options o;
  o.auth_creds_ok_in_clear = true;
  auto socket = std::make_shared<TSocket>("127.0.0.1", 1);

  auto none = make_authenticator(validate_hs2_options(o), nullptr);
  CHECK(none->describe() == "none");
  CHECK(std::dynamic_pointer_cast<TBufferedTransport>(none->wrap_binary(socket)) != nullptr);

  o.ldap = true;
  o.user = "etl";
  auto ldap = make_authenticator(validate_hs2_options(o), password_credentials("pw"));
  CHECK(ldap->describe() == "LDAP (SASL PLAIN / HTTP Basic)");
  CHECK(std::dynamic_pointer_cast<SaslClientTransport>(ldap->wrap_binary(socket)) != nullptr);

  o.ldap = false;
  o.jwt = true;
  o.protocol = Hs2Protocol::kHttp;
  auto jwt = make_authenticator(validate_hs2_options(o), jwt_credentials("a.b.c"));
  CHECK(jwt->describe() == "JWT (HTTP Bearer)");
  CHECK(jwt->http_unauthorized_message("db1.example:28000", "Bearer") ==
        "JWT authentication failed at db1.example:28000 (HTTP 401 with Bearer): the server "
        "refused the token: it may have expired or be invalid (check what --jwt_cmd or "
        "$ATLAS2KUDU_JWT gives)");
  // Impala answers a refused token with its Basic (LDAP) and/or Negotiate challenges, never
  // Bearer, even with JWT enabled: the token is named first, then JWT possibly being off.
  CHECK(jwt->http_unauthorized_message("db1.example:28000", "Basic realm=\"impala\"") ==
        "JWT authentication failed at db1.example:28000 (HTTP 401 with Basic realm=\"impala\"): "
        "the server refused the token: it may have expired or be invalid (check what --jwt_cmd "
        "or $ATLAS2KUDU_JWT gives), or JWT may not be enabled on this server (then try -l -u "
        "USER (LDAP))");
  CHECK(jwt->http_unauthorized_message("db1.example:28000", "") ==
        "JWT authentication failed at db1.example:28000 (HTTP 401): the server refused the "
        "token: it may have expired or be invalid (check what --jwt_cmd or $ATLAS2KUDU_JWT "
        "gives), or JWT may not be enabled on this server");  // no challenge: nothing to suggest
  try {
    jwt->wrap_binary(socket);
    FAIL("JWT over the binary protocol");
  } catch (const Hs2Error& e) {
    CHECK(e.kind() == Hs2ErrorKind::kUsage);
  }

  Hs2Options k;
  k.kerberos = true;
  k.impalad = "db1.example";
  auto kerberos = make_authenticator(validate_hs2_options(k), nullptr);
  CHECK(std::dynamic_pointer_cast<SaslClientTransport>(kerberos->wrap_binary(socket)) != nullptr);
  CHECK(kerberos->http_auth_header(true) == "");  // the auth cookie proves the session
  CHECK(kerberos->http_unauthorized_message("db1.example:28000", "Basic realm=\"impala\"")
            .find("does not accept Kerberos") != std::string::npos);
  CHECK(ldap->http_auth_header(false) == "");  // Basic is libcurl's, set once per handle
  CHECK(ldap->http_unauthorized_message("db1.example:28000", "Basic") ==
        "LDAP authentication (HTTP Basic) as 'etl' failed at db1.example:28000 (HTTP 401): the "
        "server refused the user or its "
        "password; check -u and the password's source");
  // Without authentication, the challenge names the flag to try.
  Hs2Options n;
  n.impalad = "db1.example";
  auto unauthenticated = make_authenticator(validate_hs2_options(n), nullptr);
  CHECK(unauthenticated->http_unauthorized_message("db1.example:28000", "Basic realm=\"impala\"") ==
        "cannot connect to db1.example:28000: the server requires authentication (HTTP 401 with "
        "Basic realm=\"impala\"); try -l -u USER (LDAP)");
  CHECK(unauthenticated->http_unauthorized_message("db1.example:28000", "Bearer")
            .ends_with("; try -j (JWT)"));
  CHECK(unauthenticated->http_unauthorized_message("db1.example:28000", "Negotiate")
            .ends_with("; try -k (Kerberos)"));
}

TEST_CASE("hs2 credentials: password from a command, one trailing newline removed") {
  Hs2Options o;
  o.ldap = true;
  o.ldap_password_cmd = "printf 'p4ss word\\n'";
  CHECK(resolve(o)->password == "p4ss word");
  o.ldap_password_cmd = "printf 'x\\n\\n'";
  CHECK(resolve(o)->password == "x\n");
}

TEST_CASE("hs2 credentials: a failing command is an auth error that does not echo its output") {
  Hs2Options o;
  o.ldap = true;
  o.ldap_password_cmd = "echo topsecret; exit 3";
  try {
    resolve(o);
    FAIL("expected an error");
  } catch (const Hs2Error& e) {
    CHECK(e.kind() == Hs2ErrorKind::kAuth);
    CHECK(std::string(e.what()).find("status 3") != std::string::npos);
    CHECK(std::string(e.what()).find("topsecret") == std::string::npos);
  }
}

namespace {

// The helpers below record their shell's process ID ($$, our child) and a background child's
// ($!, a grandchild in the same process group) in `dir`, then wait: the processes a run must not
// leave behind.
std::string helper_recording_pids(const std::filesystem::path& dir, const std::string& then) {
  return "echo $$ > " + (dir / "sh.pid").string() + "; sleep 30 & echo $! > " +
         (dir / "kid.pid").string() + "; " + then;
}

pid_t pid_in(const std::filesystem::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// True once `pid` has exited (or is a zombie its new parent has not reaped yet), within 2 s.
bool gone_soon(pid_t pid) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    if (::kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    const std::string text((std::istreambuf_iterator<char>(stat)), {});
    const auto close = text.rfind(')');
    if (close == std::string::npos || (close + 2 < text.size() && text[close + 2] == 'Z')) {
      return true;
    }
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE(
    "hs2 credentials: a command past its time limit is killed with its process group; the "
    "error names the option, not the output") {
  const auto dir = testing::scratch_dir("secret-cmd-limit");
  Hs2Options o;
  o.ldap = true;
  o.ldap_password_cmd = helper_recording_pids(dir, "echo topsecret; wait");
  o.ssl = true;
  const Hs2Settings settings = validate_hs2_options(o);
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)resolve_hs2_credentials(settings, std::chrono::milliseconds(300));
    FAIL("expected a timeout");
  } catch (const Hs2Error& e) {
    CHECK(e.kind() == Hs2ErrorKind::kAuth);  // exit 5, as every credential failure
    CHECK(std::string(e.what()) ==
          "--ldap_password_cmd: the command did not finish within 300 ms (the limit for a "
          "password or token command), so it was killed");
  }
  CHECK(seconds_since(start) < 2.0);
  const pid_t sh = pid_in(dir / "sh.pid");
  const pid_t kid = pid_in(dir / "kid.pid");
  REQUIRE(sh > 0);
  REQUIRE(kid > 0);
  CHECK(gone_soon(sh));   // reaped by us
  CHECK(gone_soon(kid));  // killed with the group, though its parent never waited for it

  // --jwt_cmd takes the same way.
  Hs2Options j;
  j.jwt = true;
  j.jwt_cmd = "sleep 30";
  j.ssl = true;
  j.protocol = Hs2Protocol::kHttp;
  try {
    (void)resolve_hs2_credentials(validate_hs2_options(j), std::chrono::milliseconds(200));
    FAIL("expected a timeout");
  } catch (const Hs2Error& e) {
    CHECK(e.kind() == Hs2ErrorKind::kAuth);
    CHECK(std::string(e.what()).starts_with("--jwt_cmd: the command did not finish within 200 ms"));
  }
  CHECK(kSecretCommandLimit == std::chrono::seconds(30));  // what the man page documents
}

TEST_CASE("hs2 credentials: a stop request while the command runs kills it; the run stops") {
  const auto dir = testing::scratch_dir("secret-cmd-stop");
  Hs2Options o;
  o.ldap = true;
  o.ldap_password_cmd = helper_recording_pids(dir, "wait");
  o.ssl = true;
  const Hs2Settings settings = validate_hs2_options(o);
  reset_stop();
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    request_stop(StopReason::kTerminate);
  });
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)resolve_hs2_credentials(settings);  // the 30 s limit: only the stop can end it
    FAIL("expected a stop");
  } catch (const StopError& e) {
    CHECK(e.reason() == StopReason::kTerminate);
    CHECK(e.category() == ErrorCategory::kTerminated);  // exit 143
  }
  stopper.join();
  reset_stop();
  CHECK(seconds_since(start) < 2.0);
  const pid_t sh = pid_in(dir / "sh.pid");
  const pid_t kid = pid_in(dir / "kid.pid");
  REQUIRE(sh > 0);
  REQUIRE(kid > 0);
  CHECK(gone_soon(sh));
  CHECK(gone_soon(kid));
}

TEST_CASE(
    "hs2 credentials: a command that exits leaving a child behind is not waited for; the child "
    "is killed") {
  const auto dir = testing::scratch_dir("secret-cmd-leftover");
  Hs2Options o;
  o.ldap = true;
  // The background sleep holds stdout open: waiting for its end would take 30 s.
  o.ldap_password_cmd = helper_recording_pids(dir, "echo pw");
  const auto start = std::chrono::steady_clock::now();
  CHECK(resolve(o)->password == "pw");
  CHECK(seconds_since(start) < 2.0);
  const pid_t kid = pid_in(dir / "kid.pid");
  REQUIRE(kid > 0);
  CHECK(gone_soon(kid));
}

TEST_CASE("hs2 credentials: environment variables") {
  Hs2Options o;
  o.ldap = true;
  ::setenv("ATLAS2KUDU_LDAP_PASSWORD", "from-env", 1);
  CHECK(resolve(o)->password == "from-env");
  ::unsetenv("ATLAS2KUDU_LDAP_PASSWORD");
  Hs2Options j;
  j.jwt = true;
  j.jwt_cmd = "printf 'a.b.c\\r\\n'";
  CHECK(resolve(j)->jwt == "a.b.c");
  j.jwt_cmd.clear();
  ::setenv("ATLAS2KUDU_JWT", "e.n.v", 1);
  CHECK(resolve(j)->jwt == "e.n.v");
  ::unsetenv("ATLAS2KUDU_JWT");
  CHECK_THROWS_AS(resolve(j), Hs2Error);
  CHECK(resolve(Hs2Options{})->password.empty());  // no -l: nothing asked
}

TEST_CASE("hs2 errors: server messages are classified as retryable or definite") {
  CHECK(classify_server_message("Query 1:2 failed:\nAnalysisException: Could not resolve table "
                                "reference: 'atlas.timed_out'") == Hs2ErrorKind::kDefinite);
  CHECK(classify_server_message("ParseException: Syntax error in line 1") ==
        Hs2ErrorKind::kDefinite);
  CHECK(classify_server_message("AuthorizationException: User 'x' does not have privileges") ==
        Hs2ErrorKind::kDefinite);
  CHECK(classify_server_message("Admission for query exceeded timeout 60000ms in pool root.x") ==
        Hs2ErrorKind::kTransient);
  CHECK(classify_server_message("Rejected query from pool root.x: queue full") ==
        Hs2ErrorKind::kTransient);
  CHECK(classify_server_message("Kudu error(s) reported, first error: Timed out: ...") ==
        Hs2ErrorKind::kTransient);
  CHECK(classify_server_message("Service unavailable: Leader not ready") ==
        Hs2ErrorKind::kTransient);
  CHECK(classify_server_message("Network error: recv error: Connection reset") ==
        Hs2ErrorKind::kTransient);
  CHECK(classify_server_message("Invalid session id: 4a2b") == Hs2ErrorKind::kSessionLost);
  CHECK(classify_server_message("Invalid or unknown query handle: 1:2.") ==
        Hs2ErrorKind::kSessionLost);
  CHECK(classify_server_message("Some brand new failure") == Hs2ErrorKind::kDefinite);
  CHECK(category_for(Hs2ErrorKind::kTransient) == ErrorCategory::kUnavailable);
  CHECK(category_for(Hs2ErrorKind::kDefinite) == ErrorCategory::kServerRejected);
  CHECK(category_for(Hs2ErrorKind::kAuth) == ErrorCategory::kAuth);
  CHECK(category_for(Hs2ErrorKind::kTimeout) == ErrorCategory::kUnavailable);
  CHECK(category_for(Hs2ErrorKind::kMismatch) == ErrorCategory::kUnavailable);
}

TEST_CASE("hs2 errors: failures caused by some rows are told apart from the statement's") {
  CHECK(refused_because_of_rows(
      "Query 1:2 failed:\nKudu error(s) reported, first error: Invalid argument: value too large "
      "for column 'props_json' (70000 bytes, maximum is 65536 bytes)"));
  CHECK(refused_because_of_rows("Row of size 2.00 MB could not be materialized in plan node"));
  CHECK(refused_because_of_rows("UDF ERROR: String to Timestamp parse failed"));
  CHECK(refused_because_of_rows(
      "Statement length of 17000000 bytes exceeds the maximum statement length (16777216 bytes)"));
  CHECK_FALSE(refused_because_of_rows("AnalysisException: Could not resolve table reference"));
  CHECK_FALSE(refused_because_of_rows(
      "AnalysisException: Kudu error(s) reported in a table called value too large for column"));
  CHECK_FALSE(refused_because_of_rows("AuthorizationException: no privileges"));
  CHECK_FALSE(refused_because_of_rows("Some brand new failure"));
}

TEST_SUITE_END();
