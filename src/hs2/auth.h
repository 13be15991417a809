// How a connection proves who the client is. The one place that turns -l / -j into a mechanism:
// the transport factory and the session only ask the Authenticator, so Kerberos (GSSAPI over SASL
// for hs2, SPNEGO for hs2-http) is one more implementation here and nothing else changes.
//
//   options   binary transport (--protocol hs2)                   hs2-http (libcurl)
//   (none)    TBufferedTransport over the socket/TLS              no Authorization header
//   -l        SASL PLAIN (user + password) over the socket/TLS    Basic user:password
//   -j        (refused: JWT is for hs2-http only)                 Bearer <token>
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
};

// The authenticator the settings ask for: none, LDAP (-l, with credentials->password) or JWT (-j,
// with credentials->jwt). `credentials` may be null when neither -l nor -j is given.
std::shared_ptr<const Authenticator> make_authenticator(
    const Hs2Settings& settings, std::shared_ptr<const Hs2Credentials> credentials);

}  // namespace atlas2kudu
