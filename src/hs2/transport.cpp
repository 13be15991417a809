#include "hs2/transport.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <thrift/TOutput.h>
#include <thrift/transport/TSocket.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "hs2/error.h"
#include "hs2/http_transport.h"
#include "hs2/sasl_transport.h"
#include "hs2/tls.h"
#include "util/stop.h"
#include "util/utf8.h"

namespace atlas2kudu {

using apache::thrift::transport::TSocket;
using apache::thrift::transport::TTransport;
using apache::thrift::transport::TTransportException;

namespace {

// A TSocket that a stop request shuts down while armed (util/stop.h), the connect included: a
// connect to a host that drops the SYNs waits -t, and without -t until the kernel gives up
// (minutes). TSocket creates its socket inside open() and has no hook before connect(), so an
// armed open() does what TSocket::open() does (resolve, then each address in turn, with the same
// options, timeouts and TTransportException messages), with the socket armed before connect(): a
// shutdown(2) of a connecting socket ends the connect at once. Unarmed, it is TSocket::open().
class StoppableSocket final : public TSocket {
 public:
  using TSocket::TSocket;
  ~StoppableSocket() override { guard_.disarm(); }
  // While on, the socket is armed from its creation on (a later open() included); off disarms.
  void set_armed(bool on) {
    armed_ = on;
    if (!on) guard_.disarm();
    if (on && isOpen()) guard_.arm(getSocketFD());
  }
  void open() override {
    if (!armed_ || isOpen()) {
      TSocket::open();
      return;
    }
    if (port_ < 0 || port_ > 0xFFFF) {
      throw TTransportException(TTransportException::BAD_ARGS, "Specified port is invalid");
    }
    addrinfo hints{};
    hints.ai_family = PF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_ADDRCONFIG;
    addrinfo* addresses = nullptr;
    if (::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &addresses) != 0) {
      throw TTransportException(TTransportException::NOT_OPEN,
                                "Could not resolve host for client socket.");
    }
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> owner(addresses, &::freeaddrinfo);
    for (const addrinfo* a = addresses; a; a = a->ai_next) {
      try {
        connect_to(*a);
        return;
      } catch (const TTransportException&) {
        close();
        if (!a->ai_next || stop_requested()) throw;
      }
    }
  }
  void close() override {
    guard_.disarm();
    TSocket::close();
  }

 private:
  // TSocket's connect of one address, armed from before connect().
  void connect_to(const addrinfo& a) {
    socket_ = ::socket(a.ai_family, a.ai_socktype, a.ai_protocol);
    if (socket_ < 0) {
      const int error = errno;
      socket_ = THRIFT_INVALID_SOCKET;
      throw TTransportException(TTransportException::NOT_OPEN, "socket()", error);
    }
    guard_.arm(socket_);
    if (sendTimeout_ > 0) setSendTimeout(sendTimeout_);
    if (recvTimeout_ > 0) setRecvTimeout(recvTimeout_);
    if (keepAlive_) setKeepAlive(keepAlive_);
    setLinger(lingerOn_, lingerVal_);
    setNoDelay(noDelay_);
    // Non-blocking for the wait, which polls: up to -t, or without end for -t 0, as TSocket's
    // blocking connect() waits.
    const int flags = ::fcntl(socket_, F_GETFL, 0);
    if (::fcntl(socket_, F_SETFL, flags | O_NONBLOCK) == -1) {
      throw TTransportException(TTransportException::NOT_OPEN, "THRIFT_FCNTL() failed", errno);
    }
    if (::connect(socket_, a.ai_addr, a.ai_addrlen) != 0) {
      const int error = errno;
      if (error != EINPROGRESS && error != EWOULDBLOCK) {
        throw TTransportException(TTransportException::NOT_OPEN, "connect() failed", error);
      }
      pollfd p{socket_, POLLOUT, 0};
      int ready;
      do {
        ready = ::poll(&p, 1, connTimeout_ > 0 ? connTimeout_ : -1);
      } while (ready < 0 && errno == EINTR && !stop_requested());
      if (ready < 0) {
        throw TTransportException(TTransportException::NOT_OPEN, "THRIFT_POLL() failed", errno);
      }
      if (ready == 0) throw TTransportException(TTransportException::NOT_OPEN, "open() timed out");
      int so_error = 0;
      socklen_t len = sizeof so_error;
      if (::getsockopt(socket_, SOL_SOCKET, SO_ERROR, &so_error, &len) == -1) {
        throw TTransportException(TTransportException::NOT_OPEN, "getsockopt()", errno);
      }
      // connect() failed: as TSocket says it (a connect that blocked says "connect() failed").
      if (so_error != 0) {
        throw TTransportException(TTransportException::NOT_OPEN,
                                  connTimeout_ > 0 ? "socket open() error" : "connect() failed",
                                  so_error);
      }
      if (stop_requested()) {  // the shutdown woke the poll
        throw TTransportException(TTransportException::NOT_OPEN, "connect() cut short by a stop");
      }
    }
    if (::fcntl(socket_, F_SETFL, flags) == -1) {
      throw TTransportException(TTransportException::NOT_OPEN, "THRIFT_FCNTL() failed", errno);
    }
    setCachedAddress(a.ai_addr, a.ai_addrlen);
  }

  bool armed_ = false;
  SocketStopGuard guard_;
};

// Wraps the socket-level stack so that open() runs every handshake under the connect timeout,
// then switches the socket to the per-RPC timeout.
class TimedOpenTransport final
    : public apache::thrift::transport::TVirtualTransport<TimedOpenTransport, Hs2Transport> {
 public:
  TimedOpenTransport(std::shared_ptr<StoppableSocket> socket, std::shared_ptr<TTransport> top,
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
    socket_->set_armed(stoppable_);
    try {
      top_->open();
    } catch (...) {
      socket_->set_armed(false);
      throw;
    }
    socket_->set_armed(false);
    socket_->setRecvTimeout(socket_timeout_ms_);
    socket_->setSendTimeout(socket_timeout_ms_);
  }
  void close() override { top_->close(); }
  void set_rpc_timeout(int ms) override {
    socket_->setRecvTimeout(ms);
    socket_->setSendTimeout(ms);
  }
  void set_stoppable(bool on) override { stoppable_ = on; }
  // Armed only around the I/O: an idle connection survives a stop, for the clean-up.
  uint32_t read(uint8_t* buf, uint32_t len) {
    const SocketStopGuard guard(stoppable_ ? socket_->getSocketFD() : -1);
    return top_->read(buf, len);
  }
  void write(const uint8_t* buf, uint32_t len) {
    const SocketStopGuard guard(stoppable_ ? socket_->getSocketFD() : -1);
    top_->write(buf, len);
  }
  void flush() override {
    const SocketStopGuard guard(stoppable_ ? socket_->getSocketFD() : -1);
    top_->flush();
  }

 private:
  std::shared_ptr<StoppableSocket> socket_;
  std::shared_ptr<TTransport> top_;
  int connect_timeout_ms_, socket_timeout_ms_;
  bool stoppable_ = true;
};

// Reads the first bytes the server sends on a connection before passing them on: a protocol
// mismatch is then named at once instead of surfacing as a hang or a garbled reply. Every reply
// of the binary protocol (SASL or Thrift) is at least 5 bytes long.
//   0x15 0x03 / 0x16 0x03 without --ssl: a TLS alert or handshake record: the port expects TLS.
//   "HTTP/": an HTTP status line: the port is an hs2-http port (or a proxy in front of one).
//   0x03 / 0x04 and a short length without -l or -k: a SASL BAD or ERROR message: the port
//   expects a SASL handshake, i.e. authentication.
class FirstReplyCheck final : public apache::thrift::transport::TVirtualTransport<FirstReplyCheck> {
 public:
  FirstReplyCheck(std::shared_ptr<TTransport> inner, std::string endpoint, bool tls, bool sasl,
                  int connect_timeout_ms)
      : inner_(std::move(inner)),
        endpoint_(std::move(endpoint)),
        tls_(tls),
        sasl_(sasl),
        connect_timeout_ms_(connect_timeout_ms) {}
  bool isOpen() const override { return inner_->isOpen(); }
  bool peek() override { return pos_ < head_.size() || inner_->peek(); }
  void open() override { inner_->open(); }
  void close() override { inner_->close(); }
  void write(const uint8_t* buf, uint32_t len) { inner_->write(buf, len); }
  void flush() override { inner_->flush(); }
  uint32_t read(uint8_t* buf, uint32_t len) {
    if (!checked_) {
      uint8_t tmp[5];
      try {
        while (head_.size() < sizeof tmp) {
          const uint32_t n = inner_->read(tmp, static_cast<uint32_t>(sizeof tmp - head_.size()));
          if (n == 0) break;
          head_.append(reinterpret_cast<const char*>(tmp), n);
        }
      } catch (const apache::thrift::transport::TTransportException& e) {
        if (e.getType() != apache::thrift::transport::TTransportException::TIMED_OUT) throw;
        // Under SASL this is the handshake's first reply, else OpenSession's: both within -t.
        // A binary HS2 server without authentication reads the SASL start message as the
        // length of a Thrift message and waits for the rest of it, so it too sends nothing.
        const std::string http_hint = fmt::format(
            "--protocol hs2-http if it is an hs2-http port (impalad: {})", kImpaladHttpPort);
        throw Hs2Error(
            Hs2ErrorKind::kTimeout,
            cannot_connect(
                endpoint_,
                fmt::format("it accepted the connection but sent nothing within -t {} ms: a "
                            "silent server, {}",
                            connect_timeout_ms_,
                            sasl_ ? "a binary HS2 port without authentication (it reads the SASL "
                                    "handshake as the start of a Thrift message and waits for "
                                    "the rest), or not a binary HS2 port"
                                  : "or not a binary HS2 port"),
                sasl_ ? fmt::format("without -l/-k if the server does not authenticate; {}",
                                    http_hint)
                      : http_hint));
      }
      checked_ = true;
      judge();
    }
    if (pos_ < head_.size()) {
      const uint32_t n = std::min<uint32_t>(len, static_cast<uint32_t>(head_.size() - pos_));
      std::memcpy(buf, head_.data() + pos_, n);
      pos_ += n;
      return n;
    }
    return inner_->read(buf, len);
  }

 private:
  void judge() const {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(head_[i]); };
    if (!tls_ && head_.size() >= 2 && (byte(0) == 0x15 || byte(0) == 0x16) && byte(1) == 0x03) {
      throw Hs2Error(Hs2ErrorKind::kAuth,
                     cannot_connect(endpoint_, "it answers with TLS: the server expects TLS",
                                    "--ssl (and --ca_cert FILE if its CA is not a system one)"));
    }
    if (head_.rfind("HTTP/", 0) == 0) {
      throw Hs2Error(
          Hs2ErrorKind::kMismatch,
          cannot_connect(endpoint_,
                         fmt::format("it answers in HTTP ({}), as an hs2-http port (impalad: {}) "
                                     "does, not binary HS2 (impalad: {})",
                                     status_line(), kImpaladHttpPort, kImpaladBinaryPort),
                         "--protocol hs2-http"));
    }
    // SASL: status byte (3 = BAD, 4 = ERROR), then a 4-byte big-endian length; a Thrift reply
    // starts with 0x80 (strict binary protocol).
    if (!sasl_ && head_.size() == 5 && (byte(0) == 0x03 || byte(0) == 0x04) && byte(1) == 0 &&
        byte(2) == 0) {
      throw Hs2Error(Hs2ErrorKind::kAuth,
                     cannot_connect(endpoint_,
                                    "it answers with a SASL message: the server requires "
                                    "authentication, which may be LDAP",
                                    "-l -u USER (LDAP), or -k (Kerberos)"));
    }
    // Anything else that is neither a strict Thrift message (0x80 0x01) nor, under SASL, a status
    // byte a SASL server sends (2 to 5: OK, BAD, ERROR, COMPLETE; START is the client's) is
    // another service's greeting or reply: an SSH banner, a mail server.
    const bool thrift = byte(0) == 0x80 && (head_.size() < 2 || byte(1) == 0x01);
    const bool sasl_status = sasl_ && server_sasl_status(byte(0));
    if (!head_.empty() && !thrift && !sasl_status) {
      throw Hs2Error(Hs2ErrorKind::kMismatch,
                     cannot_connect(endpoint_,
                                    fmt::format("it answers with bytes that are not HS2 ('{}'...): "
                                                "another service listens there",
                                                one_line(head_)),
                                    fmt::format("-i with impalad's HS2 port ({}; {} with "
                                                "--protocol hs2-http)",
                                                kImpaladBinaryPort, kImpaladHttpPort)));
    }
  }

  // The first line of an HTTP reply, as far as it was read: "HTTP/1.1 400 Bad Request".
  std::string status_line() const {
    std::string line = head_;
    try {
      char c;
      while (line.size() < 80 && inner_->read(reinterpret_cast<uint8_t*>(&c), 1) == 1 &&
             c != '\r' && c != '\n') {
        line.push_back(c);
      }
    } catch (const apache::thrift::transport::TTransportException&) {
      // What was read is enough to name it.
    }
    for (char& c : line) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    return line;
  }

  std::shared_ptr<TTransport> inner_;
  std::string endpoint_;
  bool tls_;
  bool sasl_;  // the authenticator speaks SASL (-l, -k): its first reply is SASL's
  int connect_timeout_ms_;
  bool checked_ = false;
  std::string head_;
  std::size_t pos_ = 0;
};

// IPv6 literals need brackets in URLs.
std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

}  // namespace

std::shared_ptr<Hs2Transport> make_hs2_transport(const Hs2Settings& settings,
                                                 const Authenticator& authenticator, Sleeper sleep,
                                                 HttpWaitNotice on_wait) {
  const Hs2Options& o = settings.options();
  const Hs2Endpoint& ep = settings.endpoint();
  if (o.protocol == Hs2Protocol::kHttp) {
    HttpTransportConfig cfg;
    std::string path = o.http_path;
    while (!path.empty() && path.front() == '/') path.erase(0, 1);
    cfg.url =
        fmt::format("{}://{}:{}/{}", o.ssl ? "https" : "http", url_host(ep.host), ep.port, path);
    cfg.host = ep.host;
    cfg.port = ep.port;
    cfg.ca_file = o.ca_cert;
    cfg.verify_tls = !o.ssl_insecure_skip_verify;
    cfg.connect_timeout_ms = o.connect_timeout_ms;
    cfg.request_timeout_ms = o.socket_timeout_ms;
    cfg.socket_timeout_ms = o.socket_timeout_ms;
    cfg.max_tries = o.connect_max_tries;
    cfg.sleep = std::move(sleep);
    cfg.on_wait = std::move(on_wait);
    cfg.answered_before = [settings] { return settings.server_answered(); };
    return std::make_shared<HttpClientTransport>(std::move(cfg), authenticator);
  }

  auto socket = std::make_shared<StoppableSocket>(ep.host, ep.port);
  std::shared_ptr<TTransport> wire = socket;
  if (o.ssl) {
    auto ctx = TlsContext::client(o.ca_cert, !o.ssl_insecure_skip_verify);
    wire = std::make_shared<TlsTransport>(ctx, socket, ep.host);
  }
  wire = std::make_shared<FirstReplyCheck>(std::move(wire), format_endpoint(ep.host, ep.port),
                                           o.ssl, o.ldap || o.kerberos, o.connect_timeout_ms);
  return std::make_shared<TimedOpenTransport>(socket, authenticator.wrap_binary(std::move(wire)),
                                              o.connect_timeout_ms, o.socket_timeout_ms);
}

namespace {

// Sends `request` on a new connection to host:port and returns the first `want` bytes of the
// answer (fewer if the server closes first; empty on any failure), all within `timeout_ms`.
std::string first_answer_bytes(const std::string& host, int port, int timeout_ms,
                               const std::string& request, std::size_t want) {
  std::string answer(want, '\0');
  std::size_t got = 0;
  try {
    StoppableSocket socket(host, port);  // a stop ends the probe too
    socket.set_armed(true);
    socket.setConnTimeout(timeout_ms);
    socket.setRecvTimeout(timeout_ms);
    socket.setSendTimeout(timeout_ms);
    socket.open();
    socket.write(reinterpret_cast<const uint8_t*>(request.data()),
                 static_cast<uint32_t>(request.size()));
    while (got < want) {
      const uint32_t n = socket.read(reinterpret_cast<uint8_t*>(answer.data()) + got,
                                     static_cast<uint32_t>(want - got));
      if (n == 0) break;
      got += n;
    }
    socket.close();
  } catch (const apache::thrift::TException&) {
    return {};
  }
  answer.resize(got);
  return answer;
}

}  // namespace

bool answers_tls(const std::string& host, int port, int timeout_ms) {
  // A minimal TLS 1.2 ClientHello: record header, handshake header, version, 32 bytes of random,
  // no session id, one cipher suite (ECDHE-RSA-AES128-GCM-SHA256), no compression, no extensions.
  // Whatever the server makes of it, a TLS server answers with a TLS record.
  std::string hello = {0x16, 0x03, 0x01, 0x00, 0x2d,  // handshake record, 45 bytes
                       0x01, 0x00, 0x00, 0x29,        // ClientHello, 41 bytes
                       0x03, 0x03};                   // TLS 1.2
  hello.append(32, '\x5a');
  hello += {0x00, 0x00, 0x02, static_cast<char>(0xc0), 0x2f, 0x01, 0x00};
  const std::string head = first_answer_bytes(host, port, timeout_ms, hello, 2);
  return head.size() == 2 && (head[0] == 0x15 || head[0] == 0x16) && head[1] == 0x03;
}

bool answers_plain_http(const std::string& host, int port, int timeout_ms) {
  // A Thrift HTTP server answers only a POST whose body it can read (it hangs up on anything
  // else): a call of a method no server has, which any HS2 server answers at once with an
  // "Invalid method name" exception (binary protocol: version and CALL, name, seqid, empty
  // struct), or with 401 when it requires authentication first.
  const std::string_view method = "atlas2kudu_probe";
  std::string body = {static_cast<char>(0x80),         0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
                      static_cast<char>(method.size())};
  body += method;
  body += {0x00, 0x00, 0x00, 0x01, 0x00};
  const std::string request = fmt::format(
      "POST /cliservice HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-thrift\r\n"
      "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
      host, body.size(), body);
  return first_answer_bytes(host, port, timeout_ms, request, 5) == "HTTP/";
}

void quiet_thrift_logging() {
  apache::thrift::GlobalOutput.setOutputFunction([](const char*) {});
}

}  // namespace atlas2kudu
