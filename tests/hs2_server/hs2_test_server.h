// A real Thrift HS2 server for loopback tests, built from the same IDL as the client. It serves
// binary (buffered, no SASL), SASL PLAIN and/or GSSAPI (Kerberos), and HTTP (POST body = Thrift
// binary, Basic, Bearer or Negotiate auth, `impala.auth` cookie), each optionally under TLS, and
// hands statements to a StatementHandler. Faults can be injected to exercise the client's retry
// paths.
//
// It listens on 127.0.0.1 only, on a kernel-chosen port.
//
// Example:
//   auto handler = std::make_shared<KeySetHandler>();
//   Hs2TestServerConfig cfg;
//   cfg.transport = Hs2TestServerConfig::Transport::kSasl;
//   cfg.user = "alice"; cfg.password = "s3cret";
//   cfg.faults.drop_at = {3};          // 3rd ExecuteStatement: connection dropped, nothing run
//   Hs2TestServer server(cfg, handler);
//   int port = server.start();
//   ... connect a client to 127.0.0.1:port ...
//   server.stop();                     // also done by the destructor
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "statement_handler.h"

namespace atlas2kudu::testing {

struct FaultPlan {
  // 1-based ExecuteStatement numbers (counted over the whole server) at which the connection is
  // closed instead of replying. The statement is NOT run (the reply is "lost before execution").
  std::set<int> drop_at;
  // Same, but the statement IS run first (the reply is lost after the effect).
  std::set<int> drop_after_run_at;
  // Statement number → error text; the operation ends in ERROR_STATE with this message.
  std::map<int, std::string> fail_at;
  // Statement numbers (DELETEs; others run as usual) whose rows another writer deletes between the
  // statement's scan and its delete: the rows end up gone, and the statement reports them as Impala
  // does, as row errors (Kudu's NotFound, ignored and counted), none as modified.
  std::set<int> deleted_meanwhile_at;
  // Statement numbers before which the server forgets every session (as after an impalad restart
  // or an idle-session expiry): that ExecuteStatement fails with "Invalid session id".
  std::set<int> expire_sessions_at;
  // Milliseconds slept in CloseSession (a server that hangs at the end of a run).
  int close_session_latency_ms = 0;
  // Milliseconds slept in every ExecuteStatement (simulated planning time): the reply comes
  // after it, and the statement has finished by then.
  int latency_ms = 0;
  // Milliseconds each operation stays RUNNING after ExecuteStatement replied (simulated execution
  // time: Impala plans a statement in ExecuteStatement and runs it afterwards, so only polling
  // GetOperationStatus tells the client it has finished). The statement's effect is applied at
  // once; only the state reported waits.
  int execution_ms = 0;
  // GetOperationStatus answers RUNNING this many times before the final state.
  int running_polls = 0;
  // HTTP only: the first N requests get "503 Service Unavailable" with Retry-After.
  int http_503 = 0;
  int retry_after_s = 1;
  // HTTP only: after the last of those 503s, answer nothing more on that connection (kept open):
  // a daemon that hung while the client waited out its Retry-After.
  bool http_silent_after_503 = false;
  // SASL only: send each reply as several small frames, each written in pieces, to prove the
  // client reassembles replies split across frames and reads.
  bool sasl_split_frames = false;
  // Connection-level faults (hs2_faults.cpp):
  // Accept every connection and never read from it or answer (a hung daemon, a black-holing
  // proxy): the client must give up on its own timeouts.
  bool silent = false;
  // HTTP only: answer a request that is not HTTP (binary Thrift sent to the HTTP port) with
  // "400 Bad Request" and close, as an HTTP proxy in front of the port does. Without it the
  // server waits for the end of an HTTP header that never comes, as Impala's HTTP port does.
  bool http_reject_non_http = false;
  // Statement numbers whose operation is accepted and then stays RUNNING until the client
  // cancels it (CancelOperation); the statement is never executed. The statement log gets a line
  // "-- holding statement N until it is cancelled" when it starts.
  std::set<int> hang_at;
  // Answer CloseImpalaOperation as a HiveServer2 that is not Impala (Hive, or an Impala before
  // 3.3) does: a TApplicationException UNKNOWN_METHOD ("Invalid method name").
  bool plain_hs2 = false;
  // Serve as an Impala before 4.5: OpenSession's reply does not list LONG_POLLING_TIME_MS, and a
  // statement whose confOverlay names it fails, as with any option the server does not know.
  // Otherwise (4.5 and later, IMPALA-13294) a GetOperationStatus of a running statement with that
  // option is held until the statement ends or that many milliseconds pass.
  bool no_long_polling = false;
  // HTTP only: answer every request with this status (a gateway with a wrong path: 404, a proxy
  // wanting credentials: 407, a redirect: 302 with a Location, a failed backend: 500, another
  // server on the port: 200 with a web page); 0: off.
  int http_status = 0;
  // The Location of an --http-status 3xx answer; "{host}" in it stands for the request's Host
  // header (the server's own host:port).
  std::string http_location = "https://elsewhere.invalid/";
};

struct Hs2TestServerConfig {
  enum class Transport { kBinary, kSasl, kHttp };
  Transport transport = Transport::kBinary;
  std::string tls_cert, tls_key;         // TLS when both are set
  bool tls_require_client_cert = false;  // refuse a client without a certificate (mutual TLS)
  bool tls_max_1_2 = false;              // TLS 1.2 at most (its alerts come inside the handshake)
  std::string user, password;            // SASL PLAIN / HTTP Basic; HTTP without user: no auth
  std::string bearer_token;              // HTTP: also accept "Authorization: Bearer <token>"
  // Kerberos with this service key (kerberos_acceptor.h): SASL GSSAPI, HTTP Negotiate. The realm
  // comes from $KRB5_CONFIG. Without `user`, SASL PLAIN and HTTP Basic are then refused.
  std::string keytab, principal;  // "impala/localhost@REALM"
  FaultPlan faults;
  std::string statement_log;  // append every executed statement (one line each) here
};

// One RPC's calls as the server saw them: `calls` counts a call once its name is read (a client
// holding the reply sees it counted); busy_ms runs from then to the reply written (handler,
// injected latency and fault sleeps included; network and client not), added just after the
// reply, so it may lag the last call by that call's time.
struct RpcStats {
  int calls = 0;
  double busy_ms = 0;
};

struct Hs2TestServerStats {
  int connections = 0;
  int sessions_opened = 0;
  int statements = 0;      // ExecuteStatement calls received
  int statements_run = 0;  // handed to the handler
  int http_requests = 0;
  int http_cookie_auth = 0;  // HTTP requests authenticated by the impala.auth cookie
  int http_503_sent = 0;
  int sasl_failures = 0;
  int kerberos_logins = 0;                    // SASL GSSAPI negotiations and SPNEGO tokens accepted
  int kerberos_failures = 0;                  // ... rejected
  std::string kerberos_client;                // principal of the last accepted one
  std::vector<std::string> confoverlay_keys;  // of the last statement
  int operations_cancelled = 0;               // CancelOperation on a known operation
  int operations_closed = 0;  // CloseImpalaOperation / CloseOperation on a known operation
  int sessions_closed = 0;    // CloseSession on a known session
  int open_sessions = 0;      // sessions opened and not closed (or expired), now
  int open_operations = 0;    // operations started and not closed, now
  std::map<std::string, RpcStats> rpcs;  // by RPC name ("ExecuteStatement", "GetLog", ...)
};

// The stats as one JSON object, e.g. for hs2_test_server --stats-file:
//   {"connections":2,"sessions_opened":2,...,"open_sessions":0,"open_operations":0,...,
//    "rpcs":{"CloseImpalaOperation":{"calls":3,"busy_ms":0.104},...}}
std::string stats_json(const Hs2TestServerStats& stats);

class Hs2TestServer {
 public:
  Hs2TestServer(Hs2TestServerConfig config, std::shared_ptr<StatementHandler> handler);
  ~Hs2TestServer();
  Hs2TestServer(const Hs2TestServer&) = delete;
  Hs2TestServer& operator=(const Hs2TestServer&) = delete;

  int start();  // returns the port
  void stop();
  int port() const { return port_; }
  Hs2TestServerStats stats() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace atlas2kudu::testing
