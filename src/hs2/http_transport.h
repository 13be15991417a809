// hs2-http: each Thrift message is POSTed to http(s)://host:port/<http_path> and the reply body is
// the Thrift reply (Impala ignores the path; impala-shell's default is `cliservice`, and Thrift
// errors still come back as HTTP 200). On libcurl, which does TLS verification (peer AND host name
// unless told otherwise), keep-alive and cookies. Thrift 0.17's THttpClient can neither add headers
// nor see status codes or cookies, hence this transport.
//
// Behaviour:
//  * Authentication is the Authenticator's (auth.h): it sets `Authorization: Basic` (LDAP) or
//    `Bearer` (JWT) on the handle once, and libcurl sends it on every request, as impala-shell
//    does; Kerberos adds `Authorization: Negotiate <token>` to each request made while no auth
//    cookie is held.
//  * Cookies from Set-Cookie (e.g. `impala.auth`) are kept in memory and sent back. A cookie whose
//    name ends in ".auth" is an auth cookie (impala-shell's rule).
//  * 502/503/504: the same request is re-sent up to `max_tries` times in all, sleeping Retry-After
//    seconds when the server gives it (capped at 60), else 1 s, 2 s, ... Then Hs2Error(kTransient).
//  * Other statuses: 403 and 407 → Hs2Error(kAuth); 500 and up → kTransient (a gateway whose
//    backend failed: the statement's retries apply); 404, 3xx (never followed, so credentials go
//    only where -i says) and the rest → kMismatch, naming the URL and the flag to change.
//  * A hang-up without a reply on the first request is the wrong port (binary HS2) or a TLS port
//    spoken to in plain text (told apart by a TLS ClientHello on a second connection: kAuth);
//    after a reply it is a lost connection (kTransient). With --ssl, a handshake that times out
//    against a port answering plain HTTP is kAuth ("try without --ssl").
//  * 401 while cookies were sent: cookies cleared, request re-sent once; 401 again (or without
//    cookies) → Hs2Error(kAuth) with the Authenticator's message for the server's
//    WWW-Authenticate challenges.
//  * No connection made (name not resolved, connection refused): nothing was sent, so the request
//    is re-sent up to `max_tries` times in all, after 0 s, 1 s, 2 s, ...; then Hs2Error(kTransient)
//    naming the host or port (unreachable_message, error.h).
//  * A stop request (util/stop.h) while set_stoppable(true) aborts the request, its connect or
//    a wait between retries, within about a second → StopError; nothing is retried after it.
//  * Resets, timeouts → Hs2Error(kTransient). Note that libcurl itself re-sends a
//    request once, on a fresh connection, when a kept-alive connection dies before any reply byte;
//    harmless for our idempotent statements, and the same as impala-shell's one reconnect.
//
// Example:
//   HttpTransportConfig cfg{.url = "https://db1:28000/cliservice", .ca_file = "ca.pem"};
//   auto auth = make_authenticator(settings, creds);   // must outlive the transport
//   auto http = std::make_shared<HttpClientTransport>(cfg, *auth);
//   TBinaryProtocol proto(http);   // every flush() is one POST
#pragma once

#include <thrift/transport/TVirtualTransport.h>

#include <functional>
#include <string>

#include "hs2/auth.h"
#include "hs2/clock.h"
#include "hs2/error.h"
#include "hs2/transport.h"

namespace atlas2kudu {

struct HttpTransportConfig {
  std::string url;
  std::string host;  // of the URL, for messages: "cannot connect to HOST:PORT: ..."
  int port = 0;
  std::string ca_file;  // empty: system CAs
  bool verify_tls = true;
  int connect_timeout_ms = 60000;
  int request_timeout_ms = 0;  // whole request, 0 = none
  // --socket_timeout_ms, to name it when a request runs out of it (the request timeout is -t for
  // OpenSession, the close timeout for the clean-up, this otherwise).
  int socket_timeout_ms = 0;
  int max_tries = 4;
  // Waits between 502/503/504 retries, so tests observe Retry-After without waiting; empty:
  // really sleeps.
  Sleeper sleep;
  // Told of each such wait before it starts, for the run's log; empty: nobody.
  HttpWaitNotice on_wait;
  // Whether the server answered earlier in the run (Hs2Settings::server_answered), for the
  // message of a refused connection; empty: never.
  std::function<bool()> answered_before;
};

// What to try when the request to `url` (ours) is redirected to `location`: flags that reach the
// same server where it redirects, when it is the same host; otherwise (or a location that cannot
// be read) "-i and --http_path naming where it redirects", with ", with --ssl (it redirects to
// https)" when it redirects from http to https.
//   redirect_advice("http://db1:28000/cliservice", "https://db1:28000/cliservice") == "--ssl"
//   redirect_advice("http://db1:28000/cliservice", "https://db1:28443/hs2")
//     == "--ssl -i db1:28443 --http_path hs2"
std::string redirect_advice(const std::string& url, const std::string& location);

class HttpClientTransport final
    : public apache::thrift::transport::TVirtualTransport<HttpClientTransport, Hs2Transport> {
 public:
  // `authenticator` configures the handle here and is asked for each request's extra header; it
  // must outlive the transport.
  HttpClientTransport(HttpTransportConfig config, const Authenticator& authenticator);
  ~HttpClientTransport() override;

  bool isOpen() const override { return open_; }
  void open() override { open_ = true; }  // connections are made per request by libcurl
  void close() override;
  uint32_t read(uint8_t* buf, uint32_t len);
  void write(const uint8_t* buf, uint32_t len);
  void flush() override;

  void set_rpc_timeout(int ms) override;  // the whole-request timeout
  // While on, a stop request aborts the request in progress (libcurl's progress callback, called
  // about once a second even while nothing moves) and flush() throws StopError.
  void set_stoppable(bool on) override { stoppable_ = on; }
  bool stoppable() const { return stoppable_; }
  bool cut_request_may_have_arrived() const override { return may_have_arrived_; }

  // For tests and diagnostics: HTTP tries beyond the first, summed over the transport's life.
  int http_retries() const { return http_retries_; }

 private:
  // Throws CouldNotConnect when no connection was made (nothing was sent: safe to try again).
  void perform_once(long* status, long* retry_after);
  struct CouldNotConnect {
    std::string detail;
  };
  bool holding_auth_cookie() const;
  // The error for a status that is neither 200, 401, nor 502/503/504 (those are retried here).
  Hs2Error unexpected_status(long status) const;
  // A 200 whose body is not a Thrift message: another server answers on that port.
  Hs2Error not_thrift_reply() const;
  static std::size_t on_header(char* data, std::size_t size, std::size_t nmemb, void* self);

  HttpTransportConfig config_;
  const Authenticator* authenticator_;
  std::string challenges_;  // WWW-Authenticate values of the last response, joined by ", "
  // The names the server's certificate is valid for (tls.h, certificate_names), seen while the
  // last request's handshake verified it: a refused certificate is gone once libcurl gave up.
  std::string peer_names_;
  bool certificate_requested_ = false;  // the last request's server asked for a client certificate
  // Its CURLOPT_SSL_CTX_FUNCTION points each connection's SSL_CTX at the two above.
  friend struct TlsWatch;
  void* curl_ = nullptr;  // CURL*
  bool open_ = false;
  std::string wbuf_;
  std::string rbuf_;
  std::size_t rpos_ = 0;
  int http_retries_ = 0;
  int replies_ = 0;    // 200s received on this transport: once one came, a hang-up is a lost link
  int responses_ = 0;  // HTTP responses of any status received on this transport
  bool stoppable_ = true;
  bool may_have_arrived_ = false;  // the last try sent its whole body, and got no refusal
};

}  // namespace atlas2kudu
