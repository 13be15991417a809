#include "hs2/tls.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <thrift/transport/TTransportException.h>

#include <cerrno>
#include <cstring>

#include "hs2/error.h"

namespace atlas2kudu {

using apache::thrift::transport::TSocket;
using apache::thrift::transport::TTransportException;

namespace {

std::string openssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? std::string{"unknown TLS error"} : out;
}

// The ex_data slot of an SSL that holds its TlsTransport, for the verify callback.
int transport_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// The ex_data slots that point at the flag note_certificate_request sets: an SSL's own (the
// binary transport), else its SSL_CTX's (libcurl).
int requested_ssl_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

int requested_ctx_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// SSL_CTX_set_client_cert_cb's callback, called when the server asks for a client certificate:
// notes it, and sends none (0).
int note_certificate_request(SSL* ssl, X509**, EVP_PKEY**) {
  auto* requested = static_cast<bool*>(SSL_get_ex_data(ssl, requested_ssl_index()));
  if (requested == nullptr) {
    requested =
        static_cast<bool*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), requested_ctx_index()));
  }
  if (requested != nullptr) *requested = true;
  return 0;
}

}  // namespace

bool client_certificate_refused(std::string_view detail, bool requested) {
  if (detail.find("alert certificate required") != std::string_view::npos) return true;
  return requested && (detail.find("alert handshake failure") != std::string_view::npos ||
                       detail.find("alert bad certificate") != std::string_view::npos);
}

Hs2Error client_certificate_required(const std::string& peer, std::string_view detail) {
  return Hs2Error(Hs2ErrorKind::kAuth,
                  fmt::format("TLS: {} requires a client certificate (mutual TLS), which "
                              "atlas2kudu does not present: the server, or a load balancer before "
                              "it, refused the connection ({}); connect to a port (or load "
                              "balancer) that does not require one",
                              peer, detail));
}

Hs2Error client_certificate_asked_then_closed(const std::string& peer, std::string_view detail) {
  return Hs2Error(Hs2ErrorKind::kAuth,
                  fmt::format("TLS: {} asked for a client certificate, which atlas2kudu does not "
                              "present, then closed the connection ({}): if it requires one "
                              "(mutual TLS), connect to a port (or load balancer) that does not; "
                              "if one is optional there, it closed for another reason (the "
                              "authentication it expects: -l, -k or -j)",
                              peer, detail));
}

void note_certificate_requests(SSL_CTX* ctx, bool* requested) {
  SSL_CTX_set_ex_data(ctx, requested_ctx_index(), requested);
  SSL_CTX_set_client_cert_cb(ctx, &note_certificate_request);
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string certificate_names(X509* cert) {
  std::string out;
  const auto add = [&out](std::string_view kind, std::string_view name) {
    if (!out.empty()) out += ", ";
    out += kind;
    out += name;
  };
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
    if (name->type == GEN_DNS) {
      const ASN1_STRING* dns = name->d.dNSName;
      add("DNS:", std::string_view(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                   static_cast<std::size_t>(ASN1_STRING_length(dns))));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      char text[INET6_ADDRSTRLEN] = {0};
      const int family = ASN1_STRING_length(ip) == 4 ? AF_INET : AF_INET6;
      if (inet_ntop(family, ASN1_STRING_get0_data(ip), text, sizeof text)) add("IP:", text);
    }
  }
  GENERAL_NAMES_free(sans);
  if (out.empty()) {
    char cn[256] = {0};
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn) > 0)
      add("CN:", cn);
  }
  return out.empty() ? std::string("no name") : out;
}

Hs2Error tls_handshake_failure(const std::string& peer, const std::string& detail, bool closed) {
  const bool plain = detail.find("wrong version number") != std::string::npos ||
                     detail.find("packet length too long") != std::string::npos ||
                     detail.find("http request") != std::string::npos;
  return Hs2Error(
      Hs2ErrorKind::kAuth,
      fmt::format(
          "TLS handshake with {} failed: {}{}", peer, detail,
          plain || closed ? "; does the server use TLS on this port? try without --ssl" : ""));
}

Hs2Error untrusted_certificate(const std::string& peer, const std::string& host, long verify_result,
                               const std::string& names) {
  std::string advice;
  switch (verify_result) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      advice = "; try -i with a name it names, and the same port";
      break;
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      advice = "; the server's certificate must be renewed (or this machine's clock is wrong)";
      break;
    default:
      advice = "; try --ca_cert FILE with the CA that signed it";
  }
  return Hs2Error(Hs2ErrorKind::kAuth,
                  fmt::format("TLS: the certificate of {} is not trusted for '{}': {}{}{}", peer,
                              host, X509_verify_cert_error_string(verify_result),
                              names.empty() ? "" : fmt::format("; it names {}", names), advice));
}

std::shared_ptr<TlsContext> TlsContext::client(const std::string& ca_file, bool verify) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) throw Hs2Error(Hs2ErrorKind::kInternal, "TLS: " + openssl_errors());
  std::shared_ptr<TlsContext> result(new TlsContext(ctx, verify));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);  // Impala's --ssl_minimum_version default
  SSL_CTX_set_client_cert_cb(ctx, &note_certificate_request);  // the flag is each SSL's
  if (verify) {
    int ok = ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx)
                             : SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr);
    if (ok != 1)
      throw Hs2Error(Hs2ErrorKind::kAuth,
                     fmt::format("TLS: cannot load CA certificates{}: {}",
                                 ca_file.empty() ? "" : " from " + ca_file, openssl_errors()));
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }
  return result;
}

std::shared_ptr<TlsContext> TlsContext::server(const std::string& cert_file,
                                               const std::string& key_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) throw Hs2Error(Hs2ErrorKind::kInternal, "TLS: " + openssl_errors());
  std::shared_ptr<TlsContext> result(new TlsContext(ctx, false));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1)
    throw Hs2Error(Hs2ErrorKind::kUsage, fmt::format("TLS: cannot load {} / {}: {}", cert_file,
                                                     key_file, openssl_errors()));
  return result;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(ctx_);
}

TlsTransport::TlsTransport(std::shared_ptr<TlsContext> ctx, std::shared_ptr<TSocket> socket,
                           std::string host)
    : ctx_(std::move(ctx)), socket_(std::move(socket)), host_(std::move(host)) {}

TlsTransport::~TlsTransport() {
  if (ssl_) SSL_free(ssl_);
}

bool TlsTransport::isOpen() const {
  return ssl_ != nullptr && socket_->isOpen();
}

bool TlsTransport::peek() {
  if (!isOpen()) return false;
  if (SSL_pending(ssl_) > 0) return true;
  return socket_->peek();
}

void TlsTransport::open() {
  if (!socket_->isOpen()) socket_->open();
  ERR_clear_error();
  ssl_ = SSL_new(ctx_->get());
  if (!ssl_) throw Hs2Error(Hs2ErrorKind::kInternal, "TLS: " + openssl_errors());
  SSL_set_fd(ssl_, socket_->getSocketFD());
  if (!is_ip_literal(host_)) SSL_set_tlsext_host_name(ssl_, host_.c_str());  // SNI
  certificate_requested_ = false;
  received_ = false;
  SSL_set_ex_data(ssl_, requested_ssl_index(), &certificate_requested_);
  if (ctx_->verify()) {
    // Host name (or IP) verification by OpenSSL itself, checked during the handshake.
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    int ok = is_ip_literal(host_) ? X509_VERIFY_PARAM_set1_ip_asc(param, host_.c_str())
                                  : X509_VERIFY_PARAM_set1_host(param, host_.c_str(), 0);
    if (ok != 1) throw Hs2Error(Hs2ErrorKind::kInternal, "TLS: cannot set expected host name");
    peer_names_.clear();
    SSL_set_ex_data(ssl_, transport_index(), this);
    SSL_set_verify(ssl_, SSL_VERIFY_PEER, &TlsTransport::on_verify);
  }
  errno = 0;
  int rc = SSL_connect(ssl_);
  if (rc != 1) {
    const int err = SSL_get_error(ssl_, rc);
    const int saved_errno = errno;
    long verify = SSL_get_verify_result(ssl_);
    std::string detail = openssl_errors();
    SSL_free(ssl_);
    ssl_ = nullptr;
    socket_->close();
    fail_handshake(err, saved_errno, verify, detail);
  }
}

int TlsTransport::on_verify(int preverified, X509_STORE_CTX* store) {
  auto* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* self = ssl ? static_cast<TlsTransport*>(SSL_get_ex_data(ssl, transport_index())) : nullptr;
  if (self != nullptr && self->peer_names_.empty()) {
    if (X509* leaf = X509_STORE_CTX_get0_cert(store)) self->peer_names_ = certificate_names(leaf);
  }
  return preverified;
}

// Every TLS failure is Hs2Error(kAuth) (exit 5), except a handshake that timed out, which is a
// silent server (transient). Mismatches get the flag to try: a plain server reading a
// ClientHello closes the connection or answers in plain text.
void TlsTransport::fail_handshake(int err, int saved_errno, long verify, std::string detail) {
  const std::string peer = this->peer();
  if (ctx_->verify() && verify != X509_V_OK)
    throw untrusted_certificate(peer, host_, verify, peer_names_);
  if (client_certificate_refused(detail, certificate_requested_))
    throw client_certificate_required(peer, detail);
  const bool no_error_queued = detail == "unknown TLS error";
  if ((err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ||
       (err == SSL_ERROR_SYSCALL && no_error_queued)) &&
      (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK)) {
    throw TTransportException(TTransportException::TIMED_OUT,
                              fmt::format("TLS handshake with {} got no answer (a silent server, "
                                          "or no TLS on this port: try without --ssl; an "
                                          "hs2-http port, impalad's 28000, waits for a request "
                                          "line: try --protocol hs2-http)",
                                          peer));
  }
  if (no_error_queued && saved_errno != 0) detail = std::strerror(saved_errno);
  if (no_error_queued && saved_errno == 0) detail = "connection closed";
  const bool closed = (err == SSL_ERROR_SYSCALL &&
                       (saved_errno == 0 || saved_errno == ECONNRESET || saved_errno == EPIPE)) ||
                      detail.find("unexpected eof") != std::string::npos;
  throw tls_handshake_failure(peer, detail, closed);
}

std::string TlsTransport::peer() const {
  return fmt::format("{}:{}", host_, socket_->getPort());
}

void TlsTransport::refuse_if_lost_after_certificate_request(int saved_errno) const {
  if (!certificate_requested_ || received_) return;
  if (saved_errno != 0 && saved_errno != EPIPE && saved_errno != ECONNRESET) return;
  throw client_certificate_asked_then_closed(
      peer(), saved_errno == 0 ? "connection closed" : std::strerror(saved_errno));
}

void TlsTransport::accept() {
  ERR_clear_error();
  ssl_ = SSL_new(ctx_->get());
  if (!ssl_) throw TTransportException(TTransportException::INTERNAL_ERROR, openssl_errors());
  SSL_set_fd(ssl_, socket_->getSocketFD());
  if (SSL_accept(ssl_) != 1) {
    std::string detail = openssl_errors();
    SSL_free(ssl_);
    ssl_ = nullptr;
    throw TTransportException(TTransportException::NOT_OPEN, "TLS accept failed: " + detail);
  }
}

void TlsTransport::close() {
  if (ssl_) {
    SSL_shutdown(ssl_);  // best effort close_notify; the peer may already be gone
    SSL_free(ssl_);
    ssl_ = nullptr;
  }
  socket_->close();
}

uint32_t TlsTransport::read(uint8_t* buf, uint32_t len) {
  if (!ssl_) throw TTransportException(TTransportException::NOT_OPEN, "TLS: not open");
  for (;;) {
    ERR_clear_error();
    errno = 0;
    int n = SSL_read(ssl_, buf, static_cast<int>(len));
    if (n > 0) {
      received_ = true;
      return static_cast<uint32_t>(n);
    }
    int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_ZERO_RETURN) return 0;
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      if (errno == EINTR) continue;
      // SO_RCVTIMEO expired on the blocking socket underneath.
      throw TTransportException(TTransportException::TIMED_OUT, "TLS read timed out");
    }
    const int saved_errno = errno;
    const std::string errors = openssl_errors();
    // TLS 1.3: the refusal of a client without a certificate comes after the handshake.
    if (client_certificate_refused(errors, certificate_requested_)) {
      throw client_certificate_required(peer(), errors);
    }
    if (err == SSL_ERROR_SYSCALL && saved_errno == EINTR) continue;
    refuse_if_lost_after_certificate_request(saved_errno);
    if (err == SSL_ERROR_SYSCALL && saved_errno == 0) return 0;  // EOF without close_notify
    throw TTransportException(
        TTransportException::END_OF_FILE,
        fmt::format("TLS read failed: {}", saved_errno ? std::strerror(saved_errno) : errors));
  }
}

void TlsTransport::write(const uint8_t* buf, uint32_t len) {
  if (!ssl_) throw TTransportException(TTransportException::NOT_OPEN, "TLS: not open");
  uint32_t done = 0;
  while (done < len) {
    ERR_clear_error();
    errno = 0;
    int n = SSL_write(ssl_, buf + done, static_cast<int>(len - done));
    if (n > 0) {
      done += static_cast<uint32_t>(n);
      continue;
    }
    int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_SYSCALL && errno == EINTR) continue;
    if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ)
      throw TTransportException(TTransportException::TIMED_OUT, "TLS write timed out");
    const int saved_errno = errno;
    std::string errors = openssl_errors();
    if (certificate_requested_ && !client_certificate_refused(errors, true)) {
      // TLS 1.3: a server that refused us for want of a certificate has closed the connection,
      // and its alert may be waiting to be read.
      ERR_clear_error();
      std::uint8_t byte = 0;
      SSL_read(ssl_, &byte, 1);
      const std::string alert = openssl_errors();
      if (client_certificate_refused(alert, true)) errors = alert;
    }
    if (client_certificate_refused(errors, certificate_requested_)) {
      throw client_certificate_required(peer(), errors);
    }
    refuse_if_lost_after_certificate_request(saved_errno);
    throw TTransportException(
        TTransportException::NOT_OPEN,
        fmt::format("TLS write failed: {}", saved_errno ? std::strerror(saved_errno) : errors));
  }
}

}  // namespace atlas2kudu
