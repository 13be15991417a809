#include "cli/hs2_flags.h"

#include <CLI/CLI.hpp>
#include <limits>

#include "cli/whole_number.h"

namespace atlas2kudu {
namespace {

// The options held in an int (hs2/options.h): a larger value is refused with the bounds rather
// than CLI11's "Could not convert".
constexpr std::uint64_t kIntMax = std::numeric_limits<int>::max();

}  // namespace

void add_hs2_options(CLI::App* app, Hs2Options* o) {
  const std::string group(kHs2OptionsGroup);
  app->add_option("-i,--impalad", o->impalad,
                  "Impala daemon host[:port]; optional, default localhost:21050 (hs2-http: "
                  "localhost:28000)")
      ->type_name("HOST[:PORT]")
      ->check(
          [](const std::string& v) {
            // An empty value is most often an unset shell variable (-i "$IMPALAD"): say so
            // rather than connect to localhost.
            return v.empty() ? std::string("empty; give HOST[:PORT], or leave -i out for localhost")
                             : std::string();
          },
          "")
      ->group(group);
  app->add_option_function<std::string>(
         "--protocol",
         [o](const std::string& v) {
           o->protocol = v == "hs2-http" ? Hs2Protocol::kHttp : Hs2Protocol::kBinary;
         },
         "hs2 (binary Thrift) or hs2-http")
      ->check(CLI::IsMember({"hs2", "hs2-http"}))
      ->default_str("hs2")
      ->group(group);
  app->add_flag("--ssl", o->ssl, "Use TLS; verifies certificate and host name")->group(group);
  app->add_option("--ca_cert", o->ca_cert,
                  "PEM CA bundle to verify the server (default: system CAs)")
      ->type_name("FILE")
      ->group(group);
  app->add_flag("--ssl_insecure_skip_verify", o->ssl_insecure_skip_verify,
                "DANGEROUS: accept any server certificate and host name")
      ->group(group);
  app->add_flag("-l,--ldap", o->ldap, "LDAP authentication (SASL PLAIN, or HTTP Basic)")
      ->group(group);
  app->add_option("-u,--user", o->user, "User name (default $USER, else atlas2kudu)")->group(group);
  app->add_option("--ldap_password_cmd", o->ldap_password_cmd,
                  "Command whose stdout is the LDAP password (else $ATLAS2KUDU_LDAP_PASSWORD, "
                  "else a prompt); killed after 30 s")
      ->group(group);
  app->add_flag("-j,--jwt", o->jwt, "JWT bearer authentication (hs2-http only)")->group(group);
  app->add_option("--jwt_cmd", o->jwt_cmd,
                  "Command whose stdout is the JWT (else $ATLAS2KUDU_JWT); killed after 30 s")
      ->group(group);
  app->add_flag("-k,--kerberos", o->kerberos,
                "Kerberos authentication (SASL GSSAPI, or HTTP SPNEGO) with the ticket in "
                "$KRB5CCNAME (see kinit) or a client keytab ($KRB5_CLIENT_KTNAME)")
      ->group(group);
  app->add_option("-s,--kerberos_service_name", o->kerberos_service_name,
                  "Service part of the Impala principal SERVICE/HOST@REALM (default impala)")
      ->group(group);
  app->add_option("-b,--kerberos_host_fqdn", o->kerberos_host_fqdn,
                  "Host part of the Impala principal, when -i names a load balancer or an IP "
                  "(default: the -i host)")
      ->group(group);
  app->add_option("-Q,--query_option", o->query_options,
                  "KEY=VALUE query option sent with every statement; one per -Q, repeatable "
                  "(-Q MEM_LIMIT=2g -Q MT_DOP=0)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE")
      ->group(group);
  app->add_option("--http_path", o->http_path, "URL path for hs2-http")
      ->capture_default_str()
      ->group(group);
  app->add_option("-t,--client_connect_timeout_ms", o->connect_timeout_ms,
                  "Timeout of each connect in ms: TCP, TLS and SASL handshakes, OpenSession "
                  "(0 = none)")
      ->capture_default_str()
      ->transform(whole_number(0, kIntMax, "milliseconds"))
      ->group(group);
  app->add_option("--socket_timeout_ms", o->socket_timeout_ms,
                  "Timeout of each RPC's reply in ms, once connected; covers Impala's planning "
                  "(0 = none; a timeout is retried)")
      ->capture_default_str()
      ->transform(whole_number(0, kIntMax, "milliseconds"))
      ->group(group);
  app->add_option("--statement_timeout_ms", o->statement_timeout_ms,
                  "A statement still running after this many ms is cancelled and the run fails "
                  "(0 = none)")
      ->capture_default_str()
      ->transform(whole_number(0, kIntMax, "milliseconds"))
      ->group(group);
  app->add_option("--connect_max_tries", o->connect_max_tries,
                  "Tries per connect and per HTTP 502/503/504")
      ->capture_default_str()
      ->transform(whole_number(1, kIntMax))
      ->group(group);
  app->add_flag("--auth_creds_ok_in_clear", o->auth_creds_ok_in_clear,
                "Allow LDAP/JWT credentials without TLS")
      ->group(group);
  app->add_option("--sessions", o->sessions, "Concurrent HS2 sessions per phase")
      ->capture_default_str()
      ->transform(whole_number(1, 256))
      ->group(group);
  app->add_option("--max_retries", o->max_retries, "Re-runs of a statement on transient failures")
      ->capture_default_str()
      ->transform(whole_number(0, kIntMax))
      ->group(group);
  app->add_option("--retry_backoff_ms", o->retry_backoff_ms,
                  "First retry back-off in ms (doubles, capped at 30 s)")
      ->capture_default_str()
      ->transform(whole_number(0, kIntMax, "milliseconds"))
      ->group(group);
}

}  // namespace atlas2kudu
