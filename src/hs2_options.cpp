#include "atlas2kudu/hs2_options.h"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "atlas2kudu/hs2_error.h"

namespace atlas2kudu {

Hs2Endpoint hs2_endpoint(const Hs2Options& options) {
  Hs2Endpoint ep;
  const int default_port = options.protocol == Hs2Protocol::kHttp ? 28000 : 21050;
  std::string spec = options.impalad.empty() ? std::string{"localhost"} : options.impalad;
  std::string port_text;
  if (!spec.empty() && spec.front() == '[') {  // [v6addr]:port, as impala-shell accepts
    auto close = spec.find(']');
    if (close == std::string::npos)
      throw Hs2Error(Hs2ErrorKind::kUsage, fmt::format("-i {}: missing ']'", spec));
    ep.host = spec.substr(1, close - 1);
    if (close + 1 < spec.size()) {
      if (spec[close + 1] != ':')
        throw Hs2Error(Hs2ErrorKind::kUsage, fmt::format("-i {}: expected ':' after ']'", spec));
      port_text = spec.substr(close + 2);
    }
  } else {
    auto colon = spec.rfind(':');
    if (colon != std::string::npos && spec.find(':') == colon) {
      ep.host = spec.substr(0, colon);
      port_text = spec.substr(colon + 1);
    } else {
      ep.host = spec;
    }
  }
  if (ep.host.empty()) ep.host = "localhost";
  ep.port = default_port;
  if (!port_text.empty()) {
    char* end = nullptr;
    long port = std::strtol(port_text.c_str(), &end, 10);
    if (*end != '\0' || port < 1 || port > 65535)
      throw Hs2Error(Hs2ErrorKind::kUsage, fmt::format("-i {}: bad port '{}'", spec, port_text));
    ep.port = static_cast<int>(port);
  }
  return ep;
}

std::string hs2_user(const Hs2Options& options) {
  if (!options.user.empty()) return options.user;
  if (const char* u = std::getenv("USER"); u && *u) return u;
  return "atlas2kudu";
}

void add_hs2_options(CLI::App* app, Hs2Options* o) {
  const std::string group = "HS2 connection";
  app->add_option("-i,--impalad", o->impalad,
                  "Impala daemon host[:port] (default localhost:21050, hs2-http 28000)")
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
      ->check(CLI::ExistingFile)
      ->group(group);
  app->add_flag("--ssl_insecure_skip_verify,--ssl-insecure-skip-verify",
                o->ssl_insecure_skip_verify,
                "DANGEROUS: accept any server certificate and host name")
      ->group(group);
  app->add_flag("-l,--ldap", o->ldap, "LDAP authentication (SASL PLAIN, or HTTP Basic)")
      ->group(group);
  app->add_option("-u,--user", o->user, "User name (default $USER)")->group(group);
  app->add_option("--ldap_password_cmd", o->ldap_password_cmd,
                  "Command whose stdout is the LDAP password (else $ATLAS2KUDU_LDAP_PASSWORD, "
                  "else a prompt)")
      ->group(group);
  app->add_flag("-j,--jwt", o->jwt, "JWT bearer authentication (hs2-http only)")->group(group);
  app->add_option("--jwt_cmd", o->jwt_cmd, "Command whose stdout is the JWT (else $ATLAS2KUDU_JWT)")
      ->group(group);
  app->add_option("-Q,--query_option", o->query_options,
                  "KEY=VALUE query option sent with every statement (repeatable)")
      ->group(group);
  app->add_option("--http_path", o->http_path, "URL path for hs2-http")
      ->capture_default_str()
      ->group(group);
  app->add_option("-t,--client_connect_timeout_ms", o->connect_timeout_ms,
                  "Connect and handshake timeout in ms (0 = none)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  app->add_option("--socket_timeout_ms,--socket-timeout-ms", o->socket_timeout_ms,
                  "Receive timeout per RPC in ms (0 = none; must cover planning)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  app->add_option("--connect_max_tries", o->connect_max_tries,
                  "Tries per connect and per HTTP 502/503/504")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->group(group);
  app->add_flag("--auth_creds_ok_in_clear", o->auth_creds_ok_in_clear,
                "Allow LDAP/JWT credentials without TLS")
      ->group(group);
  app->add_option("--sessions", o->sessions, "Concurrent HS2 sessions per phase")
      ->capture_default_str()
      ->check(CLI::Range(1, 256))
      ->group(group);
  app->add_option("--max_retries,--max-retries", o->max_retries,
                  "Re-runs of a statement on transient failures")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  app->add_option("--retry_backoff_ms,--retry-backoff-ms", o->retry_backoff_ms,
                  "First retry back-off in ms (doubles, capped at 30 s)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->group(group);
}

void validate_hs2_options(const Hs2Options& o) {
  auto usage = [](const std::string& m) { throw Hs2Error(Hs2ErrorKind::kUsage, m); };
  (void)hs2_endpoint(o);  // throws on a malformed -i
  if (o.ldap && o.jwt) usage("-l/--ldap and -j/--jwt are mutually exclusive");
  if (!o.jwt_cmd.empty() && !o.jwt) usage("--jwt_cmd needs -j/--jwt");
  if (!o.ldap_password_cmd.empty() && !o.ldap) usage("--ldap_password_cmd needs -l/--ldap");
  if (o.jwt && o.protocol != Hs2Protocol::kHttp) usage("-j/--jwt needs --protocol hs2-http");
  if ((o.ldap || o.jwt) && !o.ssl && !o.auth_creds_ok_in_clear)
    usage(
        "refusing to send LDAP/JWT credentials without --ssl "
        "(use --auth_creds_ok_in_clear to override)");
  if (o.ssl_insecure_skip_verify && !o.ca_cert.empty())
    usage("--ssl_insecure_skip_verify contradicts --ca_cert");
  if ((o.ssl_insecure_skip_verify || !o.ca_cert.empty()) && !o.ssl)
    usage("--ca_cert and --ssl_insecure_skip_verify need --ssl");
  if (o.sessions < 1) usage("--sessions must be at least 1");
  if (o.connect_max_tries < 1) usage("--connect_max_tries must be at least 1");
  for (const auto& q : o.query_options) {
    auto eq = q.find('=');
    if (eq == std::string::npos || eq == 0) usage(fmt::format("-Q {}: expected KEY=VALUE", q));
  }
}

}  // namespace atlas2kudu
