// What an unattended run relies on from the HS2 layer: bounded waits against servers that do not
// answer, protocol mismatches named at once with the flag to try, every TLS failure classified as
// kAuth (exit 5), statements cancelled and closed on the server when the statement timeout passes
// or the run is asked to stop.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "hs2/error.h"
#include "hs2/hs2_session.h"
#include "hs2_test_server.h"
#include "hs2_test_util.h"
#include "statement_handler.h"
#include "test_support.h"
#include "util/stop.h"

TEST_SUITE_BEGIN("hs2_unattended");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;
using Transport = Hs2TestServerConfig::Transport;

namespace {

// A one-connection raw TCP server on 127.0.0.1: accepts, then runs `serve(fd)`.
class RawServer {
 public:
  explicit RawServer(std::function<void(int)> serve) {
    const LoopbackListener listener = listen_on_loopback();
    fd_ = listener.fd;
    port_ = listener.port;
    thread_ = std::thread([this, serve = std::move(serve)] {
      const int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0) return;
      serve(conn);
      ::close(conn);
    });
  }
  ~RawServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// Reads what the client sends for a moment, so that the reply goes out after its request.
void read_some(int fd) {
  char buf[4096];
  timeval tv{0, 200000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)!::recv(fd, buf, sizeof buf, 0);
}

}  // namespace

TEST_CASE("hs2 unattended: a server that accepts and never answers ends each connect at -t") {
  for (const auto& mode : std::vector<std::pair<Hs2Protocol, bool>>{{Hs2Protocol::kBinary, false},
                                                                    {Hs2Protocol::kBinary, true},
                                                                    {Hs2Protocol::kHttp, false}}) {
    // Not a structured binding: CAPTURE's lambda may not capture one before clang 16.
    const Hs2Protocol transport = mode.first;
    const bool ssl = mode.second;
    CAPTURE(ssl);
    Hs2TestServerConfig cfg;
    cfg.faults.silent = true;
    Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
    auto o = test_options(server.start());
    o.protocol = transport;
    o.ssl = ssl;
    if (ssl) o.ca_cert = tls_files().ca;
    o.connect_timeout_ms = 300;
    Watchdog watchdog(std::chrono::seconds(20), [&] { server.stop(); });
    const Hs2Error e = expect_hs2_error([&] { hs2_session(o).connect(); });
    CHECK_FALSE(watchdog.disarm());
    CHECK(e.kind() == Hs2ErrorKind::kTransient);  // a later connect may work
    CHECK(e.category() == ErrorCategory::kUnavailable);
    const std::string what = e.what();
    if (transport == Hs2Protocol::kHttp) {
      // Named as on the binary protocol: the limit that ran out and what to try.
      CHECK(contains(what, "cannot connect to 127.0.0.1:"));
      CHECK(contains(what, "it accepted the connection but sent no HTTP reply within -t 300 ms"));
      CHECK(contains(what, "try --protocol hs2 if it is a binary HS2 port"));
    } else if (ssl) {
      CHECK(contains(what, "TLS handshake with 127.0.0.1:"));
      CHECK(contains(what, "got no answer"));
    } else {
      CHECK(contains(what, "accepted the connection but sent nothing within -t 300 ms"));
      CHECK(contains(what, "--protocol hs2-http"));
    }
  }
}

TEST_CASE("hs2 unattended: SASL that gets no answer is a timeout, not a failed password") {
  // A silent server, and a binary port without authentication: it reads the SASL start message as
  // the length of a Thrift message and waits for the rest of it, as impalad does. Only the
  // timeout tells, and it cannot tell which, so the message names both.
  for (const bool silent : {true, false}) {
    CAPTURE(silent);
    Hs2TestServerConfig cfg;
    cfg.faults.silent = silent;
    Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
    auto o = test_options(server.start());
    o.ldap = true;
    o.auth_creds_ok_in_clear = true;
    o.connect_timeout_ms = 300;
    const Hs2Error e =
        expect_hs2_error([&] { hs2_session(o, password_credentials("pw")).connect(); });
    CHECK(e.category() == ErrorCategory::kUnavailable);
    const std::string what = e.what();
    CHECK(contains(what,
                   "sent nothing within -t 300 ms: a silent server, a binary HS2 port "
                   "without authentication"));
    CHECK(contains(what, "try without -l/-k if the server does not authenticate"));
  }
}

TEST_CASE("hs2 unattended: binary HS2 against an HTTP port is named at once") {
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kHttp;
  cfg.faults.http_reject_non_http = true;  // a proxy in front of the port answers 400
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  const Hs2Error e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kMismatch);
  CHECK(e.category() == ErrorCategory::kUnavailable);
  CHECK(contains(e.what(), "it answers in HTTP"));
  CHECK(contains(e.what(), "--protocol hs2-http"));
}

TEST_CASE("hs2 unattended: another service's greeting is named as such, not as LDAP wanted") {
  // An SSH banner, or a reply in no protocol of HS2's: with and without SASL (-l).
  for (const std::string& greeting :
       {std::string("SSH-2.0-OpenSSH_9.2p1\r\n"), std::string("\0\0\0\x10garbage", 11)}) {
    for (const bool ldap : {false, true}) {
      CAPTURE(ldap);
      RawServer server([&](int fd) {
        (void)!::send(fd, greeting.data(), greeting.size(), MSG_NOSIGNAL);
        read_some(fd);
      });
      auto o = test_options(server.port());
      o.connect_max_tries = 1;
      o.ldap = ldap;
      o.auth_creds_ok_in_clear = true;
      const Hs2Error e = expect_hs2_error(
          [&] { hs2_session(o, ldap ? password_credentials("pw") : nullptr).connect(); });
      CHECK(e.kind() == Hs2ErrorKind::kMismatch);
      CHECK(contains(e.what(), "it answers with bytes that are not HS2 ('"));
      CHECK(contains(e.what(),
                     "another service listens there; try -i with impalad's HS2 port "
                     "(21050; 28000 with --protocol hs2-http)"));
      CHECK_FALSE(contains(e.what(), "LDAP"));
    }
  }
}

TEST_CASE("hs2 unattended: hs2-http against the binary port says which flag to try") {
  Hs2TestServer server({}, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  o.protocol = Hs2Protocol::kHttp;
  const Hs2Error e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(e.category() == ErrorCategory::kUnavailable);
  CHECK_MESSAGE(contains(e.what(), "--protocol hs2"), std::string(e.what()));
}

TEST_CASE("hs2 unattended: a plain connection answered with TLS asks for --ssl (exit 5)") {
  // A TLS server answers a non-TLS first message with an alert record (here, protocol_version).
  RawServer tls_only([](int fd) {
    read_some(fd);
    const unsigned char alert[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46};
    (void)!::send(fd, alert, sizeof alert, MSG_NOSIGNAL);
  });
  auto o = test_options(tls_only.port());
  const Hs2Error e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kAuth);
  CHECK(e.category() == ErrorCategory::kAuth);
  CHECK(contains(e.what(), "it answers with TLS"));
  CHECK(contains(e.what(), "try --ssl"));
}

TEST_CASE("hs2 unattended: a SASL error message to a client without -l asks for -l (exit 5)") {
  // A SASL server (Hive's, for one) answers a first message that is not SASL with an ERROR
  // message: status 4, a 4-byte length, the text.
  RawServer sasl_only([](int fd) {
    read_some(fd);
    const std::string text = "Expected START status, received 128";
    std::string reply = {0x04, 0x00, 0x00, 0x00, static_cast<char>(text.size())};
    reply += text;
    (void)!::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
  });
  auto o = test_options(sasl_only.port());
  const Hs2Error e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(e.category() == ErrorCategory::kAuth);
  CHECK(std::string(e.what()) ==
        "cannot connect to 127.0.0.1:" + std::to_string(sasl_only.port()) +
            ": it answers with a SASL message: the server requires authentication, which may be "
            "LDAP; try -l -u USER (LDAP), or -k (Kerberos)");
}

TEST_CASE("hs2 unattended: plain binary against a TLS-only server names --ssl") {
  Hs2TestServerConfig cfg;
  cfg.tls_cert = tls_files().cert;
  cfg.tls_key = tls_files().key;
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  const Hs2Error e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(contains(e.what(), "--ssl"));
}

TEST_CASE("hs2 unattended: TLS against a plain server fails as TLS (exit 5), naming the flag") {
  for (auto transport : {Transport::kBinary, Transport::kSasl}) {
    Hs2TestServerConfig cfg;
    cfg.transport = transport;
    cfg.user = "alice";
    cfg.password = "pw";
    Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
    auto o = test_options(server.start());
    o.ssl = true;
    o.ca_cert = tls_files().ca;
    o.ldap = transport == Transport::kSasl;
    const Hs2Error e =
        expect_hs2_error([&] { hs2_session(o, password_credentials("pw")).connect(); });
    CHECK(e.kind() == Hs2ErrorKind::kAuth);
    CHECK(contains(e.what(), "TLS handshake with 127.0.0.1:"));
    CHECK(contains(e.what(), "try without --ssl"));
  }
  // hs2-http: a plain HTTP server (here a proxy that answers 400 to anything not HTTP).
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kHttp;
  cfg.faults.http_reject_non_http = true;
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  o.protocol = Hs2Protocol::kHttp;
  o.ssl = true;
  o.ca_cert = tls_files().ca;
  const Hs2Error e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kAuth);
  CHECK(contains(e.what(), "try without --ssl"));
}

TEST_CASE("hs2 unattended: a TLS protocol-version failure is a TLS failure (exit 5)") {
  // A TLS server that offers nothing newer than TLS 1.1; the client requires 1.2.
  RawServer old_tls([](int fd) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_security_level(ctx, 0);
    SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
    SSL_CTX_set_max_proto_version(ctx, TLS1_1_VERSION);
    SSL_CTX_use_certificate_chain_file(ctx, tls_files().cert.c_str());
    SSL_CTX_use_PrivateKey_file(ctx, tls_files().key.c_str(), SSL_FILETYPE_PEM);
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_accept(ssl);  // fails: no common version; sends the protocol_version alert
    SSL_free(ssl);
    SSL_CTX_free(ctx);
  });
  auto o = test_options(old_tls.port(), "localhost");
  o.ssl = true;
  o.ca_cert = tls_files().ca;
  const Hs2Error e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kAuth);
  CHECK(e.category() == ErrorCategory::kAuth);
  CHECK(contains(e.what(), "TLS handshake with localhost:"));
}

TEST_CASE("hs2 unattended: a statement past --statement_timeout_ms is cancelled and closed") {
  Hs2TestServerConfig cfg;
  cfg.faults.hang_at = {1};
  cfg.faults.no_long_polling = true;  // the manual clock's polls: each would be held in real time
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  o.statement_timeout_ms = 3000;
  auto clock = std::make_shared<ManualClock>();
  Hs2Session client = hs2_session(o, nullptr, {.clock = clock});
  client.connect();
  const Hs2Error e = expect_hs2_error([&] { client.execute("UPSERT INTO t VALUES ('a')"); });
  CHECK(e.kind() == Hs2ErrorKind::kTimeout);
  CHECK(e.category() == ErrorCategory::kUnavailable);
  CHECK_FALSE(e.retryable());
  CHECK(contains(e.what(), "--statement_timeout_ms 3000"));
  // The polls never waited past the limit.
  std::chrono::milliseconds waited{0};
  for (auto d : clock->slept()) waited += d;
  CHECK(waited == std::chrono::milliseconds(3000));
  const Hs2TestServerStats stats = server.stats();
  CHECK(stats.operations_cancelled == 1);
  CHECK(stats.open_operations == 0);
  CHECK(client.connected());  // the session stays usable
  CHECK(client.execute("UPSERT INTO t VALUES ('b')").rows_modified == 1);
}

TEST_CASE("hs2 unattended: with polls the server holds, --statement_timeout_ms still cancels") {
  Hs2TestServerConfig cfg;
  cfg.faults.hang_at = {1};
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  o.statement_timeout_ms = 700;  // noticed after the second hold of 500 ms
  Hs2Session client = hs2_session(o);
  client.connect();
  const Hs2Error e = expect_hs2_error([&] { client.execute("UPSERT INTO t VALUES ('a')"); });
  CHECK(e.kind() == Hs2ErrorKind::kTimeout);
  const Hs2TestServerStats stats = server.stats();
  CHECK(stats.rpcs.at("GetOperationStatus").calls == 2);
  CHECK(stats.operations_cancelled == 1);
  CHECK(stats.open_operations == 0);
}

TEST_CASE(
    "hs2 unattended: a stop request cancels the running statement, then close ends the "
    "session") {
  reset_stop();
  Hs2TestServerConfig cfg;
  cfg.faults.hang_at = {1};
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  Hs2Session client = hs2_session(o);
  client.connect();
  std::thread stopper([&] {
    // Once the server holds the statement, as SIGTERM would.
    while (server.stats().open_operations == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    request_stop(StopReason::kTerminate);
  });
  try {
    client.execute("UPSERT INTO t VALUES ('a')");
    FAIL("expected StopError");
  } catch (const StopError& e) {
    CHECK(e.reason() == StopReason::kTerminate);
    CHECK(e.category() == ErrorCategory::kTerminated);
  }
  stopper.join();
  // Nothing new starts once stopped.
  CHECK_THROWS_AS(client.execute("UPSERT INTO t VALUES ('b')"), StopError);
  client.close();
  const Hs2TestServerStats stats = server.stats();
  CHECK(stats.operations_cancelled == 1);
  CHECK(stats.operations_closed == 1);
  CHECK(stats.open_operations == 0);
  CHECK(stats.sessions_closed == 1);
  CHECK(stats.open_sessions == 0);
  CHECK(stats.statements == 1);
  reset_stop();
}

TEST_SUITE_END();
