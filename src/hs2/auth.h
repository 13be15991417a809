// How a connection proves who the client is. The one place that turns -l / -j / -k into a
// mechanism: the transport factory and the session only ask the Authenticator.
//
//   options   binary transport (--protocol hs2)                   hs2-http (libcurl)
//   (none)    TBufferedTransport over the socket/TLS              no Authorization header
//   -l        SASL PLAIN (user + password) over the socket/TLS    Basic user:password
//   -j        (refused: JWT is for hs2-http only)                 Bearer <token>
//   -k        SASL GSSAPI (Cyrus's plugin, no security layer:     Negotiate <SPNEGO token>, only
//             Impala never wraps) over the socket/TLS             while no auth cookie is held
//
// Kerberos on hs2-http: the SPNEGO token is made with GSS-API (kerberos.h) rather than by
// libcurl's CURLAUTH_NEGOTIATE, because libcurl takes the principal's host from the URL, so -b
// could not name it, and re-authenticates every request after a one-round-trip exchange (MIT
// Kerberos's), where Impala clients send Negotiate only until the server's `impala.auth` cookie
// proves the session.
//
// One Authenticator per run, shared (const) by every session; it holds the run's one credentials
// object and hands the secrets only to Cyrus (through the SASL callbacks, in the C buffer Cyrus
// wants, wiped when the connection ends) or to libcurl (which keeps its own copy).
//
// Example:
//   auto auth = make_authenticator(settings, credentials);    // settings: -l -u alice --ssl
//   auth->describe();                                         // "LDAP (SASL PLAIN / HTTP Basic)"
//   // binary: the socket (or TLS) transport in, the transport RPCs go through out, not yet open
//   std::shared_ptr<TTransport> top = auth->wrap_binary(tls);   // a SaslClientTransport, PLAIN
//   top->open();             // TCP, TLS, then SASL: START("PLAIN"), OK("\0alice\0<password>")
//   // hs2-http: every request the handle sends carries "Authorization: Basic YWxpY2U6..."
//   auth->configure_http(curl);
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hs2/credentials.h"
#include "hs2/options.h"

namespace apache::thrift::transport {
class TTransport;
}

namespace atlas2kudu {

class Authenticator {
 public:
  virtual ~Authenticator() = default;

  // What the run authenticates with, for messages and logs: "none", "LDAP (SASL PLAIN / HTTP
  // Basic)", "JWT (HTTP Bearer)". Never a secret.
  virtual std::string describe() const = 0;

  // Binary transport: wraps the socket (or TLS) transport, not yet open, into the one the Thrift
  // protocol writes to; its open() opens `wire` and then authenticates. Called once per
  // connection; thread-safe.
  virtual std::shared_ptr<apache::thrift::transport::TTransport> wrap_binary(
      std::shared_ptr<apache::thrift::transport::TTransport> wire) const = 0;

  // hs2-http: sets the authentication options of a libcurl easy handle (`curl` is a CURL*), once
  // per handle, before its first request. libcurl copies the strings it is given.
  virtual void configure_http(void* curl) const = 0;

  // hs2-http: an extra header line for the next request ("Authorization: Negotiate ..."), or ""
  // for none. Asked before every request; `holding_auth_cookie` says whether the handle holds a
  // server cookie whose name ends in ".auth" (Impala's `impala.auth`), which proves the session on
  // its own. Throws Hs2Error(kAuth) when the client cannot authenticate (no Kerberos ticket).
  virtual std::string http_auth_header(bool holding_auth_cookie) const {
    (void)holding_auth_cookie;
    return {};
  }

  // hs2-http: the message of the Hs2Error(kAuth) for a final 401 response from `endpoint`
  // ("host:port"), given its WWW-Authenticate challenges joined by ", " (e.g.
  // "Basic realm=\"impala\""). Without authentication it names the flag the challenge asks for:
  //   "cannot connect to db1:28000: the server requires authentication (HTTP 401 with Basic
  //    realm=\"impala\"); try -l -u USER (LDAP)"
  virtual std::string http_unauthorized_message(std::string_view endpoint,
                                                std::string_view challenges) const;
};

// The authenticator the settings ask for: none, LDAP (-l, with credentials->password), JWT (-j,
// with credentials->jwt) or Kerberos (-k, the caller's ticket; no credentials object needed).
// `credentials` may be null when neither -l nor -j is given.
std::shared_ptr<const Authenticator> make_authenticator(
    const Hs2Settings& settings, std::shared_ptr<const Hs2Credentials> credentials);

}  // namespace atlas2kudu
