// Options, credentials and error classification of the HS2 layer (no network).
#include <doctest/doctest.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "cli/hs2_flags.h"
#include "hs2/error.h"
#include "hs2/options.h"

TEST_SUITE_BEGIN("hs2_options");

using namespace atlas2kudu;

namespace {
Hs2ErrorKind usage_kind(const Hs2Options& o) {
  try {
    validate_hs2_options(o);
  } catch (const Hs2Error& e) {
    return e.kind();
  }
  return Hs2ErrorKind::kInternal;  // "no error" marker
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
  CHECK(category_for(Hs2ErrorKind::kUsage) == ErrorCategory::kUsage);
}

TEST_CASE("hs2 credentials: password from a command, one trailing newline removed") {
  Hs2Options o;
  o.ldap = true;
  o.ldap_password_cmd = "printf 'p4ss word\\n'";
  CHECK(resolve_hs2_credentials(o).password == "p4ss word");
  o.ldap_password_cmd = "printf 'x\\n\\n'";
  CHECK(resolve_hs2_credentials(o).password == "x\n");
}

TEST_CASE("hs2 credentials: a failing command is an auth error that does not echo its output") {
  Hs2Options o;
  o.ldap = true;
  o.ldap_password_cmd = "echo topsecret; exit 3";
  try {
    resolve_hs2_credentials(o);
    FAIL("expected an error");
  } catch (const Hs2Error& e) {
    CHECK(e.kind() == Hs2ErrorKind::kAuth);
    CHECK(std::string(e.what()).find("status 3") != std::string::npos);
    CHECK(std::string(e.what()).find("topsecret") == std::string::npos);
  }
}

TEST_CASE("hs2 credentials: environment variables") {
  Hs2Options o;
  o.ldap = true;
  ::setenv("ATLAS2KUDU_LDAP_PASSWORD", "from-env", 1);
  CHECK(resolve_hs2_credentials(o).password == "from-env");
  ::unsetenv("ATLAS2KUDU_LDAP_PASSWORD");
  Hs2Options j;
  j.jwt = true;
  j.jwt_cmd = "printf 'a.b.c\\r\\n'";
  CHECK(resolve_hs2_credentials(j).jwt == "a.b.c");
  j.jwt_cmd.clear();
  ::setenv("ATLAS2KUDU_JWT", "e.n.v", 1);
  CHECK(resolve_hs2_credentials(j).jwt == "e.n.v");
  ::unsetenv("ATLAS2KUDU_JWT");
  CHECK_THROWS_AS(resolve_hs2_credentials(j), Hs2Error);
  CHECK(resolve_hs2_credentials(Hs2Options{}).password.empty());  // no -l: nothing asked
}

TEST_CASE("hs2 errors: server messages are classified per SPEC §6") {
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
}

TEST_SUITE_END();
