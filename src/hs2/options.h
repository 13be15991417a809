// Connection options of `apply`, named after impala-shell's flags where the meaning matches
// (-i, --protocol, --ssl, --ca_cert, -l, -u, -k, -s, -b, -Q, -t, ...). Deliberate differences:
// `--ssl` verifies the certificate and host name (against system CAs, or `--ca_cert`); only
// `--ssl_insecure_skip_verify` turns that off; LDAP and JWT credentials are refused over cleartext
// unless `--auth_creds_ok_in_clear`.
//
// Example (what the CLI does):
//   Hs2Options hs2;
//   add_hs2_options(apply_cmd, &hs2);        // registers -i, --protocol, --ssl, -l, -u, ...
//   ... app.parse(argc, argv) ...
//   const Hs2Settings settings = validate_hs2_options(hs2);   // Hs2Error(kUsage) if contradictory
//   auto credentials = resolve_hs2_credentials(settings);     // password cmd / env / tty prompt
//   Hs2Executor executor(settings, hs2_session_factory(settings, credentials));
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace atlas2kudu {

enum class Hs2Protocol { kBinary, kHttp };  // --protocol hs2 | hs2-http

struct Hs2Options {
  std::string impalad;  // -i host[:port]; empty = localhost, port by protocol
  Hs2Protocol protocol = Hs2Protocol::kBinary;
  bool ssl = false;                        // --ssl
  std::string ca_cert;                     // --ca_cert PEM file (else system CAs)
  bool ssl_insecure_skip_verify = false;   // --ssl_insecure_skip_verify (NOT the default)
  bool ldap = false;                       // -l: SASL PLAIN (binary) / Basic (HTTP)
  std::string user;                        // -u; empty = $USER
  std::string ldap_password_cmd;           // --ldap_password_cmd: stdout is the password
  bool jwt = false;                        // -j: Bearer token (hs2-http only)
  std::string jwt_cmd;                     // --jwt_cmd: stdout is the token
  bool kerberos = false;                   // -k: SASL GSSAPI (binary) / SPNEGO (HTTP)
  std::string kerberos_service_name;       // -s; empty = "impala"
  std::string kerberos_host_fqdn;          // -b host[:port] (port ignored); empty = the -i host
  std::vector<std::string> query_options;  // -Q KEY=VALUE, sent in every statement's confOverlay
  std::string http_path = "cliservice";    // --http_path
  // Timeouts, each 0 = none. Finite by default so that a server that accepts and never answers
  // ends an unattended run (exit 4) instead of hanging it; worst case with the defaults, about
  // 4 x 10 s for the connects plus back-off, well under two minutes.
  //   -t/--client_connect_timeout_ms: one connect: TCP, TLS and SASL handshakes, OpenSession.
  int connect_timeout_ms = 10000;
  //   --socket_timeout_ms: each RPC's reply once connected (ExecuteStatement's covers Impala's
  //   planning of the statement). A timeout is transient: the statement is retried.
  int socket_timeout_ms = 30000;
  //   --statement_timeout_ms: one try of a statement, from ExecuteStatement until it finished;
  //   past it the statement is cancelled and closed, and the run fails (exit 4), not retried.
  int statement_timeout_ms = 600000;
  int connect_max_tries = 4;            // --connect_max_tries: connects and HTTP 502/503/504
  bool auth_creds_ok_in_clear = false;  // --auth_creds_ok_in_clear
  int sessions = 1;                     // --sessions N: concurrent sessions per phase
  int max_retries = 5;                  // --max_retries: re-runs of one statement
  int retry_backoff_ms = 500;           // --retry_backoff_ms: first back-off, doubled, capped 30 s
  // --max-row-errors (apply): Kudu row errors (rows Impala skipped and only counted, e.g. an
  // entity_audit row in no range partition) allowed over the run; past it the window fails.
  std::int64_t max_row_errors = 0;
  // Not a flag: bound on the final CloseSession, so a hung server cannot hang the end of a run
  // even with --socket_timeout_ms 0 (the session expires on the server anyway).
  int close_timeout_ms = 5000;
};

// Host and port after applying the protocol's default port (21050 binary, 28000 HTTP). Throws
// Hs2Error(kUsage) on a malformed -i.
struct Hs2Endpoint {
  std::string host;
  int port = 0;
};
Hs2Endpoint hs2_endpoint(const Hs2Options& options);

// Effective user name: -u, else $USER, else "atlas2kudu".
std::string hs2_user(const Hs2Options& options);

// Options checked once, with what follows from them worked out. Only validate_hs2_options makes
// one, so everything that takes an Hs2Settings (credentials, authenticator, transport, session,
// executor, prior state) relies on it and checks nothing again.
class Hs2Settings {
 public:
  const Hs2Options& options() const { return options_; }
  const Hs2Endpoint& endpoint() const { return endpoint_; }
  // hs2_user(options), read once.
  const std::string& user() const { return user_; }
  // -Q KEY=VALUE, sent in every ExecuteStatement's confOverlay (a repeated KEY: the last wins).
  const std::map<std::string, std::string>& query_overlay() const { return query_overlay_; }
  // With -k: the service principal the run authenticates to is <service>/<host>@REALM, the GSS
  // target name "<service>@<host>". Service: -s, else "impala". Host: -b without its port, else
  // the -i host.
  const std::string& kerberos_service() const { return kerberos_service_; }
  const std::string& kerberos_host() const { return kerberos_host_; }
  // Whether a session of this run has opened on the endpoint. Every session (the executor's, the
  // prior state's) is made from a copy of the one validated Hs2Settings, and the copies share
  // this: a refused connection after it is a server gone away, not a wrong port
  // (unreachable_message's `answered_before`).
  bool server_answered() const { return answered_->load(); }
  void note_server_answered() const { answered_->store(true); }

 private:
  friend Hs2Settings validate_hs2_options(Hs2Options options);
  Hs2Settings() = default;

  Hs2Options options_;
  Hs2Endpoint endpoint_;
  std::string user_;
  std::map<std::string, std::string> query_overlay_;
  std::string kerberos_service_;
  std::string kerberos_host_;
  std::shared_ptr<std::atomic<bool>> answered_ = std::make_shared<std::atomic<bool>>(false);
};

// Throws Hs2Error(kUsage) when the options contradict each other: LDAP or JWT without --ssl and
// without --auth_creds_ok_in_clear, JWT with the binary protocol, more than one of -k, -l and -j,
// -s or -b without -k, --ldap_password_cmd without -l, --jwt_cmd without -j, --ca_cert or
// --ssl_insecure_skip_verify without --ssl, the two together, --http_path without hs2-http,
// malformed -i, -s, -b or -Q, a -u with ':' for HTTP Basic, sessions or --connect_max_tries < 1.
// Kerberos needs no TLS: a ticket is no password and cannot be replayed.
//   Hs2Options o;  o.impalad = "db1";  o.query_options = {"MEM_LIMIT=2g"};
//   Hs2Settings s = validate_hs2_options(o);
//   // s.endpoint() == {"db1", 21050}, s.query_overlay() == {{"MEM_LIMIT", "2g"}}
//   o.kerberos = true;  o.kerberos_host_fqdn = "impalad1.example.com:21000";
//   // validate_hs2_options(o).kerberos_host() == "impalad1.example.com", kerberos_service() ==
//   // "impala": the service principal is impala/impalad1.example.com@REALM
[[nodiscard]] Hs2Settings validate_hs2_options(Hs2Options options);

}  // namespace atlas2kudu
