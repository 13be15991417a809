#include "hs2/transport.h"

#include <fmt/core.h>
#include <signal.h>
#include <thrift/TOutput.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransportException.h>

#include <mutex>

#include "hs2/error.h"
#include "hs2/http_transport.h"
#include "hs2/sasl_transport.h"
#include "hs2/tls.h"

namespace atlas2kudu {

using apache::thrift::transport::TBufferedTransport;
using apache::thrift::transport::TSocket;
using apache::thrift::transport::TTransport;
using apache::thrift::transport::TTransportException;

namespace {

// OpenSSL writes with write(2): a peer that vanished would kill the process with SIGPIPE instead
// of giving us EPIPE to retry on. A CLI has no other use for SIGPIPE.
void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    signal(SIGPIPE, SIG_IGN);
    // Thrift prints socket errors to stderr itself; ours are reported once, classified, by the
    // caller, so its duplicate lines would only be noise.
    apache::thrift::GlobalOutput.setOutputFunction([](const char*) {});
  });
}

// Wraps the socket-level stack so that open() runs every handshake under the connect timeout,
// then switches the socket to the per-RPC timeout.
class TimedOpenTransport : public apache::thrift::transport::TVirtualTransport<TimedOpenTransport> {
 public:
  TimedOpenTransport(std::shared_ptr<TSocket> socket, std::shared_ptr<TTransport> top,
                     int connect_timeout_ms, int socket_timeout_ms)
      : socket_(std::move(socket)),
        top_(std::move(top)),
        connect_timeout_ms_(connect_timeout_ms),
        socket_timeout_ms_(socket_timeout_ms) {}
  bool isOpen() const override { return top_->isOpen(); }
  bool peek() override { return top_->peek(); }
  void open() override {
    socket_->setConnTimeout(connect_timeout_ms_);
    socket_->setRecvTimeout(connect_timeout_ms_);
    socket_->setSendTimeout(connect_timeout_ms_);
    top_->open();
    socket_->setRecvTimeout(socket_timeout_ms_);
    socket_->setSendTimeout(socket_timeout_ms_);
  }
  void close() override { top_->close(); }
  void set_rpc_timeout(int ms) {
    socket_->setRecvTimeout(ms);
    socket_->setSendTimeout(ms);
  }
  uint32_t read(uint8_t* buf, uint32_t len) { return top_->read(buf, len); }
  void write(const uint8_t* buf, uint32_t len) { top_->write(buf, len); }
  void flush() override { top_->flush(); }

 private:
  std::shared_ptr<TSocket> socket_;
  std::shared_ptr<TTransport> top_;
  int connect_timeout_ms_, socket_timeout_ms_;
};

// IPv6 literals need brackets in URLs.
std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

}  // namespace

std::shared_ptr<TTransport> make_hs2_transport(const Hs2Options& o, const Hs2Credentials& creds) {
  ignore_sigpipe_once();
  validate_hs2_options(o);
  const Hs2Endpoint ep = hs2_endpoint(o);
  if (o.protocol == Hs2Protocol::kHttp) {
    HttpTransportConfig cfg;
    std::string path = o.http_path;
    while (!path.empty() && path.front() == '/') path.erase(0, 1);
    cfg.url =
        fmt::format("{}://{}:{}/{}", o.ssl ? "https" : "http", url_host(ep.host), ep.port, path);
    cfg.user = hs2_user(o);
    if (o.ldap) {
      cfg.basic_auth = true;
      cfg.password = creds.password;
    }
    if (o.jwt) cfg.bearer = creds.jwt;
    cfg.ca_file = o.ca_cert;
    cfg.verify_tls = !o.ssl_insecure_skip_verify;
    cfg.connect_timeout_ms = o.connect_timeout_ms;
    cfg.request_timeout_ms = o.socket_timeout_ms;
    cfg.max_tries = o.connect_max_tries;
    return std::make_shared<HttpClientTransport>(std::move(cfg));
  }

  auto socket = std::make_shared<TSocket>(ep.host, ep.port);
  std::shared_ptr<TTransport> wire = socket;
  if (o.ssl) {
    auto ctx = TlsContext::client(o.ca_cert, !o.ssl_insecure_skip_verify);
    wire = std::make_shared<TlsTransport>(ctx, socket, ep.host);
  }
  std::shared_ptr<TTransport> top;
  if (o.ldap) {
    top = std::make_shared<SaslClientTransport>(wire, "PLAIN", "impala", ep.host, hs2_user(o),
                                                creds.password);
  } else {
    top = std::make_shared<TBufferedTransport>(wire);
  }
  return std::make_shared<TimedOpenTransport>(socket, top, o.connect_timeout_ms,
                                              o.socket_timeout_ms);
}

void set_hs2_rpc_timeout(TTransport& transport, int ms) {
  if (auto* t = dynamic_cast<TimedOpenTransport*>(&transport)) t->set_rpc_timeout(ms);
  if (auto* h = dynamic_cast<HttpClientTransport*>(&transport)) h->set_request_timeout(ms);
}

}  // namespace atlas2kudu
