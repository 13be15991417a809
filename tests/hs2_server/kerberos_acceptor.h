// The Kerberos side of the HS2 test server: accepts SASL GSSAPI (RFC 4752) on the binary
// transport and SPNEGO tokens ("Authorization: Negotiate ...") on HTTP with the key of one service
// principal from a keytab, as an impalad started with --principal and --keytab_file does.
//
// Written on MIT GSS-API directly rather than on Cyrus's server side: the keytab is this object's
// (gss_acquire_cred_from), not process-wide state (KRB5_KTNAME, a SASL config file), so tests may
// run servers with different keys in one process next to Cyrus clients; and the client (Cyrus's
// GSSAPI plugin) is then tested against an independent implementation of the exchange.
//
// Like Impala, the server offers every security layer and accepts only "none" (Impala never wraps
// frames), and rejects a bad ticket by closing the connection, not with a SASL BAD message.
//
// Example:
//   KerberosAcceptor acceptor("/tmp/realm/impala.keytab", "impala/localhost@A2K.TEST");
//   // binary: after reading START "GSSAPI" and the client's first OK(token):
//   KerberosAcceptor::Outcome who = acceptor.sasl_gssapi(wire, first_token);
//   // who.ok, who.client == "alice@A2K.TEST"; afterwards the data frames are plain SASL frames
//   // HTTP: for "Authorization: Negotiate <base64>"
//   KerberosAcceptor::Outcome spnego = acceptor.spnego(base64_decode(token));
//   // spnego.reply_token goes back as "WWW-Authenticate: Negotiate <base64>"
#pragma once

#include <memory>
#include <string>

namespace apache::thrift::transport {
class TTransport;
}

namespace atlas2kudu::testing {

class KerberosAcceptor {
 public:
  // Throws std::runtime_error (with the GSS-API text) when the keytab holds no key for `principal`.
  KerberosAcceptor(const std::string& keytab, const std::string& principal);
  ~KerberosAcceptor();
  KerberosAcceptor(const KerberosAcceptor&) = delete;
  KerberosAcceptor& operator=(const KerberosAcceptor&) = delete;

  struct Outcome {
    bool ok = false;
    std::string client;       // the client's principal, when ok
    std::string reply_token;  // SPNEGO: the acceptor's answering token (may be empty)
    std::string error;        // why not, when !ok
  };

  // The rest of a SASL GSSAPI negotiation whose START and first OK(token) were read. Thread-safe.
  Outcome sasl_gssapi(apache::thrift::transport::TTransport& wire, std::string first_token) const;

  // One SPNEGO initial token, accepted in a security context of its own. Thread-safe.
  Outcome spnego(const std::string& token) const;

 private:
  struct Credentials;
  std::unique_ptr<Credentials> credentials_;
};

}  // namespace atlas2kudu::testing
