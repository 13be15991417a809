// TLS under the HS2 binary transport, on OpenSSL directly (not Thrift's TSSLSocket) so that the
// handshake happens inside open() with the connect timeout, and a failure surfaces as
// Hs2Error(kAuth) (exit 5) naming OpenSSL's reason ("certificate verify failed: Hostname
// mismatch", "unsupported protocol", "wrong version number"), with "try without --ssl" when the
// server does not seem to speak TLS at all, instead of a generic transport error at the first RPC.
// Only a handshake that times out is transient.
//
// Example (client):
//   auto ctx = TlsContext::client(/*ca_file=*/"ca.pem", /*verify=*/true);
//   auto sock = std::make_shared<apache::thrift::transport::TSocket>("db1.example", 21050);
//   TlsTransport tls(ctx, sock, "db1.example");
//   tls.open();   // TCP connect, then handshake: certificate chain AND host name verified
// Example (test server, on an accepted socket):
//   auto ctx = TlsContext::server("cert.pem", "key.pem");
//   TlsTransport tls(ctx, accepted_socket, "");
//   tls.accept();
#pragma once

#include <thrift/transport/TSocket.h>
#include <thrift/transport/TVirtualTransport.h>

#include <memory>
#include <string>
#include <string_view>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;
typedef struct x509_store_ctx_st X509_STORE_CTX;
typedef struct x509_st X509;

namespace atlas2kudu {

class Hs2Error;

// The names a certificate is valid for: its subjectAltName DNS and IP entries, else its CN.
//   "DNS:impala.example.com, IP:10.0.0.7"
std::string certificate_names(X509* cert);

// The refusal of a server's certificate, in the same words over hs2 and hs2-http, with what to
// try: the reason is OpenSSL's (X509_V_ERR_*), `names` what the certificate names (empty: not
// seen), `host` what -i gave.
//   "TLS: the certificate of 10.0.0.7:21050 is not trusted for '10.0.0.7': IP address mismatch;
//    it names DNS:impala.example.com; try -i with a name it names, and the same port"
Hs2Error untrusted_certificate(const std::string& peer, const std::string& host, long verify_result,
                               const std::string& names);

// The failure of a TLS handshake with `peer` (HOST:PORT), in the same words over hs2 and
// hs2-http: a server that answered in plain text, or closed the connection at the ClientHello
// (`closed`), does not speak TLS on that port.
//   "TLS handshake with 10.0.0.7:21050 failed: ...wrong version number; does the server use TLS
//    on this port? try without --ssl"
Hs2Error tls_handshake_failure(const std::string& peer, const std::string& detail, bool closed);

// A server that requires a client certificate (mutual TLS; impalad with
// --ssl_client_ca_certificate, or a load balancer before it) refuses a client without one with an
// alert: TLS 1.3's "certificate required" (116), after the client's handshake has finished, so at
// its first read; TLS 1.2's handshake_failure or bad_certificate, inside the handshake. The latter
// two are told from other handshake failures by the server's CertificateRequest, which `requested`
// says was seen (note_certificate_requests). `detail` is OpenSSL's text (or libcurl's, which quotes
// it).
bool client_certificate_refused(std::string_view detail, bool requested);

// The Hs2Error(kAuth) (exit 5) of such a refusal by `peer` (HOST:PORT), the same over hs2 and
// hs2-http:
//   "TLS: 10.0.0.7:21050 requires a client certificate (mutual TLS), which atlas2kudu does not
//    present: the server, or a load balancer before it, refused the connection (...tlsv13 alert
//    certificate required); connect to a port (or load balancer) that does not require one"
Hs2Error client_certificate_required(const std::string& peer, std::string_view detail);

// The Hs2Error(kAuth) (exit 5) of a connection `peer` closed (or reset) after asking for a client
// certificate and before sending anything: a TLS 1.3 refusal whose alert the client did not get
// to read, or a server whose certificate is optional closing for another reason. Both are said:
//   "TLS: 10.0.0.7:21050 asked for a client certificate, which atlas2kudu does not present, then
//    closed the connection (connection closed): if it requires one (mutual TLS), connect to a
//    port (or load balancer) that does not; if one is optional there, it closed for another
//    reason (the authentication it expects: -l, -k or -j)"
Hs2Error client_certificate_asked_then_closed(const std::string& peer, std::string_view detail);

// Makes client handshakes on `ctx` set `*requested` when the server asks for a client
// certificate (none is then sent). For libcurl, which makes an SSL_CTX per connection; the binary
// transport shares its context and sets its flag per connection (TlsTransport::open).
void note_certificate_requests(SSL_CTX* ctx, bool* requested);

// Whether `host` is an IPv4 or IPv6 address rather than a name.
bool is_ip_literal(const std::string& host);

class TlsContext {
 public:
  // verify=true: peer certificate chain must lead to `ca_file` (or the system CAs when empty) and
  // name the host we connect to. verify=false only for --ssl_insecure_skip_verify.
  static std::shared_ptr<TlsContext> client(const std::string& ca_file, bool verify);
  static std::shared_ptr<TlsContext> server(const std::string& cert_file,
                                            const std::string& key_file);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  SSL_CTX* get() const { return ctx_; }
  bool verify() const { return verify_; }

 private:
  TlsContext(SSL_CTX* ctx, bool verify) : ctx_(ctx), verify_(verify) {}
  SSL_CTX* ctx_;
  bool verify_;
};

class TlsTransport : public apache::thrift::transport::TVirtualTransport<TlsTransport> {
 public:
  // `host` is what the certificate must name (DNS name or IP literal); ignored on the server side.
  TlsTransport(std::shared_ptr<TlsContext> ctx,
               std::shared_ptr<apache::thrift::transport::TSocket> socket, std::string host);
  ~TlsTransport() override;

  bool isOpen() const override;
  bool peek() override;
  void open() override;  // client: connect + handshake; throws Hs2Error(kAuth) if not trusted
  void accept();         // server: handshake on an accepted socket
  void close() override;
  uint32_t read(uint8_t* buf, uint32_t len);
  void write(const uint8_t* buf, uint32_t len);
  void flush() override {}

  apache::thrift::transport::TSocket& socket() { return *socket_; }

 private:
  // SSL_set_verify's callback: keeps the leaf's names in peer_names_, decides nothing.
  static int on_verify(int preverified, X509_STORE_CTX* store);
  [[noreturn]] void fail_handshake(int ssl_error, int saved_errno, long verify_result,
                                   std::string detail);

  std::shared_ptr<TlsContext> ctx_;
  std::shared_ptr<apache::thrift::transport::TSocket> socket_;
  std::string host_;
  SSL* ssl_ = nullptr;
  // The names the server's certificate is valid for ("DNS:impala.example.com, IP:10.0.0.7"),
  // seen during verification: a refused certificate is gone once the handshake failed, and a
  // name mismatch is fixed by knowing them.
  std::string peer_names_;
  // A connection the server closes (or resets) after asking for a client certificate, before it
  // sent any data: its refusal of a client without one (TLS 1.3 refuses after the handshake, and
  // a write can meet the closed connection before the alert is read). Throws
  // client_certificate_asked_then_closed then; `saved_errno` is the failed call's errno (0:
  // closed).
  void refuse_if_lost_after_certificate_request(int saved_errno) const;
  // HOST:PORT of the server, for messages.
  std::string peer() const;

  // The server asked for a client certificate in this connection's handshake.
  bool certificate_requested_ = false;
  bool received_ = false;  // application data has come on this connection
};

}  // namespace atlas2kudu
