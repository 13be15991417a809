#include "hs2/transport.h"

#include <fmt/core.h>
#include <thrift/TOutput.h>
#include <thrift/transport/TSocket.h>

#include "hs2/http_transport.h"
#include "hs2/tls.h"

namespace atlas2kudu {

using apache::thrift::transport::TSocket;
using apache::thrift::transport::TTransport;

namespace {

// Wraps the socket-level stack so that open() runs every handshake under the connect timeout,
// then switches the socket to the per-RPC timeout.
class TimedOpenTransport final
    : public apache::thrift::transport::TVirtualTransport<TimedOpenTransport, Hs2Transport> {
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
  void set_rpc_timeout(int ms) override {
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

std::shared_ptr<Hs2Transport> make_hs2_transport(const Hs2Settings& settings,
                                                 const Authenticator& authenticator,
                                                 Sleeper sleep) {
  const Hs2Options& o = settings.options();
  const Hs2Endpoint& ep = settings.endpoint();
  if (o.protocol == Hs2Protocol::kHttp) {
    HttpTransportConfig cfg;
    std::string path = o.http_path;
    while (!path.empty() && path.front() == '/') path.erase(0, 1);
    cfg.url =
        fmt::format("{}://{}:{}/{}", o.ssl ? "https" : "http", url_host(ep.host), ep.port, path);
    cfg.ca_file = o.ca_cert;
    cfg.verify_tls = !o.ssl_insecure_skip_verify;
    cfg.connect_timeout_ms = o.connect_timeout_ms;
    cfg.request_timeout_ms = o.socket_timeout_ms;
    cfg.max_tries = o.connect_max_tries;
    cfg.sleep = std::move(sleep);
    return std::make_shared<HttpClientTransport>(std::move(cfg), authenticator);
  }

  auto socket = std::make_shared<TSocket>(ep.host, ep.port);
  std::shared_ptr<TTransport> wire = socket;
  if (o.ssl) {
    auto ctx = TlsContext::client(o.ca_cert, !o.ssl_insecure_skip_verify);
    wire = std::make_shared<TlsTransport>(ctx, socket, ep.host);
  }
  return std::make_shared<TimedOpenTransport>(socket, authenticator.wrap_binary(std::move(wire)),
                                              o.connect_timeout_ms, o.socket_timeout_ms);
}

void quiet_thrift_logging() {
  apache::thrift::GlobalOutput.setOutputFunction([](const char*) {});
}

}  // namespace atlas2kudu
