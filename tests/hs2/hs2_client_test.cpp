// Hs2Session against the in-process HS2 test server over every transport (loopback only). Waits
// are observed on a ManualClock, not measured.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "hs2/error.h"
#include "hs2/hs2_session.h"
#include "hs2/transport.h"
#include "hs2_test_server.h"
#include "hs2_test_util.h"
#include "statement_handler.h"

TEST_SUITE_BEGIN("hs2_client");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;
using Transport = Hs2TestServerConfig::Transport;
using std::chrono::milliseconds;

namespace {

// Passes everything to the real transport and records the RPC timeouts the session sets.
class RecordingTransport final
    : public apache::thrift::transport::TVirtualTransport<RecordingTransport, Hs2Transport> {
 public:
  RecordingTransport(std::shared_ptr<Hs2Transport> inner, std::vector<int>* timeouts)
      : inner_(std::move(inner)), io_(*inner_), timeouts_(timeouts) {}
  bool isOpen() const override { return io_.isOpen(); }
  bool peek() override { return io_.peek(); }
  void open() override { io_.open(); }
  void close() override { io_.close(); }
  uint32_t read(uint8_t* buf, uint32_t len) { return io_.read(buf, len); }
  void write(const uint8_t* buf, uint32_t len) { io_.write(buf, len); }
  void flush() override { io_.flush(); }
  void set_rpc_timeout(int ms) override {
    timeouts_->push_back(ms);
    inner_->set_rpc_timeout(ms);
  }

 private:
  std::shared_ptr<Hs2Transport> inner_;
  apache::thrift::transport::TTransport& io_;  // I/O through the virtual interface
  std::vector<int>* timeouts_;
};

void upsert_and_check(Hs2Session& client, KeySetHandler& handler) {
  auto r = client.execute("UPSERT INTO `atlas`.`t` (`k`, `v`) VALUES ('a', 1), ('b', 2)");
  CHECK(r.has_dml_result);
  CHECK(r.rows_modified == 2);
  CHECK(r.row_errors == 0);
  CHECK(handler.tables().at("atlas.t") == std::set<std::string>{"a", "b"});
}

}  // namespace

TEST_CASE("hs2 client: binary transport runs DML and reads counts from CloseImpalaOperation") {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.faults.running_polls = 3;  // the client must poll through RUNNING
  Hs2TestServer server(cfg, handler);
  auto o = test_options(server.start());
  o.query_options = {"MEM_LIMIT=2g", "REQUEST_POOL=etl"};
  Hs2Session client = hs2_session(o);
  client.connect();
  CHECK(client.connected());
  CHECK(client.ping() == "atlas2kudu hs2_test_server");
  CHECK(client.server_configuration().count("MEM_LIMIT") == 1);
  upsert_and_check(client, *handler);
  // -Q options travel in every statement's confOverlay, with the poll hold the server offers.
  CHECK(server.stats().confoverlay_keys ==
        std::vector<std::string>{"LONG_POLLING_TIME_MS=500", "MEM_LIMIT=2g", "REQUEST_POOL=etl"});

  auto d = client.execute("DELETE FROM `atlas`.`t` WHERE `k` IN ('a', 'zz')");
  CHECK(d.rows_modified == 1);

  auto q = client.query("SELECT `k` FROM `atlas`.`t`");
  REQUIRE(q.columns == std::vector<std::string>{"key"});
  REQUIRE(q.rows.size() == 1);
  CHECK(q.rows[0][0] == std::optional<std::string>{"b"});
  client.close();
  CHECK_FALSE(client.connected());
}

TEST_CASE("hs2 client: a rejected statement is definite and carries the server's message") {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServer server({}, handler);
  Hs2Session client = hs2_session(test_options(server.start()));
  client.connect();
  auto e = expect_hs2_error([&] { client.execute("UPSERT syntax error here"); });
  CHECK(e.kind() == Hs2ErrorKind::kDefinite);
  CHECK(std::string(e.what()).find("AnalysisException") != std::string::npos);
  CHECK(e.category() == ErrorCategory::kServerRejected);
  // The session survives a rejected statement.
  upsert_and_check(client, *handler);
}

TEST_CASE("hs2 client: an ERROR_STATE with a Kudu timeout is retryable") {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.faults.fail_at[1] = "Kudu error(s) reported, first error: Timed out: Write timed out";
  cfg.faults.fail_at[2] = "Admission for query exceeded timeout 60000ms in pool root.default";
  Hs2TestServer server(cfg, handler);
  Hs2Session client = hs2_session(test_options(server.start()));
  client.connect();
  auto e1 = expect_hs2_error([&] { client.execute("UPSERT INTO t VALUES ('a')"); });
  CHECK(e1.kind() == Hs2ErrorKind::kTransient);
  auto e2 = expect_hs2_error([&] { client.execute("UPSERT INTO t VALUES ('a')"); });
  CHECK(e2.kind() == Hs2ErrorKind::kTransient);
  CHECK(client.execute("UPSERT INTO t VALUES ('a')").rows_modified == 1);
}

TEST_CASE("hs2 client: a dropped connection is transient and reconnecting recovers") {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.faults.drop_at = {1};
  Hs2TestServer server(cfg, handler);
  Hs2Session client = hs2_session(test_options(server.start()));
  client.connect();
  auto e = expect_hs2_error([&] { client.execute("UPSERT INTO t VALUES ('a')"); });
  CHECK(e.kind() == Hs2ErrorKind::kTransient);
  CHECK_FALSE(client.connected());
  CHECK(handler->statements().empty());  // dropped before running
  client.connect();
  CHECK(client.execute("UPSERT INTO t VALUES ('a')").rows_modified == 1);
}

TEST_CASE("hs2 client: connection refused is transient after --connect_max_tries") {
  int port;
  {
    Hs2TestServer server({}, std::make_shared<KeySetHandler>());
    port = server.start();
  }  // stopped: nothing listens there now
  auto o = test_options(port);
  auto e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kTransient);
  CHECK(e.category() == ErrorCategory::kUnavailable);
}

TEST_CASE("hs2 client: a refusal on impalad's usual port asks if it runs; on localhost, names -i") {
  CHECK(unreachable_message("db1", 21050, false, "connect() failed: Connection refused", 4) ==
        "cannot connect to db1:21050: nothing listens on db1:21050 (connection refused, 4 "
        "tries); impalad's HS2 port is 21050 (hs2) or 28000 (hs2-http): is impalad running "
        "there?");
  CHECK(unreachable_message("localhost", 28000, true, "Couldn't connect to server", 1) ==
        "cannot connect to localhost:28000: nothing listens on localhost:28000 (connection "
        "refused); impalad's HS2 port is 21050 (hs2) or 28000 (hs2-http): is impalad running "
        "there? (a run without -i connects to localhost)");
}

TEST_CASE("hs2 client: SASL PLAIN with the right password, split frames") {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kSasl;
  cfg.user = "alice";
  cfg.password = "correct horse";
  cfg.faults.sasl_split_frames = true;
  Hs2TestServer server(cfg, handler);
  auto o = test_options(server.start());
  o.ldap = true;
  o.auth_creds_ok_in_clear = true;
  Hs2Session client = hs2_session(o, password_credentials("correct horse"));
  client.connect();
  upsert_and_check(client, *handler);
}

TEST_CASE("hs2 client: SASL PLAIN with a wrong password fails clearly, without the password") {
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kSasl;
  cfg.user = "alice";
  cfg.password = "correct horse";
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  o.ldap = true;
  o.auth_creds_ok_in_clear = true;
  auto e =
      expect_hs2_error([&] { hs2_session(o, password_credentials("battery staple")).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kAuth);
  CHECK(e.category() == ErrorCategory::kAuth);
  std::string msg = e.what();
  CHECK(msg.find("SASL PLAIN authentication failed") != std::string::npos);
  CHECK(msg.find("invalid username or password") != std::string::npos);
  CHECK(msg.find("battery staple") == std::string::npos);
  CHECK(server.stats().sasl_failures == 1);
  // The server's words name the user as given: escaped, never a terminal's control sequence.
  o.user = "al\x1b[2Jice";
  e = expect_hs2_error([&] { hs2_session(o, password_credentials("battery staple")).connect(); });
  msg = e.what();
  CHECK(msg.find("\x1b") == std::string::npos);
  CHECK(msg.find("al\\x1b[2Jice") != std::string::npos);
}

TEST_CASE("hs2 client: SASL PLAIN without TLS is refused unless --auth_creds_ok_in_clear") {
  auto o = test_options(1);
  o.ldap = true;
  auto e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kUsage);
  CHECK(std::string(e.what()).find("--auth_creds_ok_in_clear") != std::string::npos);
}

TEST_CASE("hs2 client: TLS verifies the chain and the host name") {
  const auto& tls = tls_files();
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.tls_cert = tls.cert;
  cfg.tls_key = tls.key;
  Hs2TestServer server(cfg, handler);
  const int port = server.start();

  SUBCASE("trusted CA, name in SAN (DNS and IP)") {
    for (const char* host : {"localhost", "127.0.0.1"}) {
      auto o = test_options(port, host);
      o.ssl = true;
      o.ca_cert = tls.ca;
      Hs2Session client = hs2_session(o);
      client.connect();
      CHECK(client.execute("UPSERT INTO t VALUES ('a')").rows_modified == 1);
    }
  }
  SUBCASE("untrusted CA is refused") {
    auto o = test_options(port, "localhost");
    o.ssl = true;
    o.ca_cert = tls.other_ca;
    auto e = expect_hs2_error([&] { hs2_session(o).connect(); });
    CHECK(e.kind() == Hs2ErrorKind::kAuth);
    CHECK(std::string(e.what()).find("not trusted") != std::string::npos);
  }
  SUBCASE("system CAs do not trust a private CA") {
    auto o = test_options(port, "localhost");
    o.ssl = true;
    auto e = expect_hs2_error([&] { hs2_session(o).connect(); });
    CHECK(e.kind() == Hs2ErrorKind::kAuth);
  }
  SUBCASE("explicit insecure flag skips verification") {
    auto o = test_options(port, "localhost");
    o.ssl = true;
    o.ssl_insecure_skip_verify = true;
    Hs2Session client = hs2_session(o);
    client.connect();
    CHECK(client.connected());
  }
}

TEST_CASE("hs2 client: TLS certificate for another host name is refused") {
  const auto& tls = tls_files();
  Hs2TestServerConfig cfg;
  cfg.tls_cert = tls.wrong_cert;
  cfg.tls_key = tls.wrong_key;
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  const int port = server.start();
  for (const char* host : {"localhost", "127.0.0.1"}) {
    auto o = test_options(port, host);
    o.ssl = true;
    o.ca_cert = tls.ca;
    auto e = expect_hs2_error([&] { hs2_session(o).connect(); });
    CHECK(e.kind() == Hs2ErrorKind::kAuth);
    CHECK(std::string(e.what()).find("mismatch") != std::string::npos);
  }
}

TEST_CASE("hs2 client: SASL PLAIN over TLS") {
  const auto& tls = tls_files();
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kSasl;
  cfg.user = "alice";
  cfg.password = "pw";
  cfg.tls_cert = tls.cert;
  cfg.tls_key = tls.key;
  Hs2TestServer server(cfg, handler);
  auto o = test_options(server.start(), "localhost");
  o.ssl = true;
  o.ca_cert = tls.ca;
  o.ldap = true;
  Hs2Session client = hs2_session(o, password_credentials("pw"));
  client.connect();
  upsert_and_check(client, *handler);
}

TEST_CASE("hs2 client: HTTP with Basic auth keeps and resends the impala.auth cookie") {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kHttp;
  cfg.user = "alice";
  cfg.password = "pw";
  Hs2TestServer server(cfg, handler);
  auto o = test_options(server.start());
  o.protocol = Hs2Protocol::kHttp;
  o.ldap = true;
  o.auth_creds_ok_in_clear = true;
  Hs2Session client = hs2_session(o, password_credentials("pw"));
  client.connect();
  upsert_and_check(client, *handler);
  auto st = server.stats();
  // OpenSession was authenticated by Basic and got the cookie; every later request carried it.
  CHECK(st.http_requests >= 4);
  CHECK(st.http_cookie_auth == st.http_requests - 1);
}

TEST_CASE("hs2 client: HTTP wrong password is an authentication failure") {
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kHttp;
  cfg.user = "alice";
  cfg.password = "pw";
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  o.protocol = Hs2Protocol::kHttp;
  o.ldap = true;
  o.auth_creds_ok_in_clear = true;
  auto e = expect_hs2_error([&] { hs2_session(o, password_credentials("nope")).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kAuth);
  CHECK(std::string(e.what()).find("401") != std::string::npos);
  CHECK(std::string(e.what()).find("nope") == std::string::npos);
}

TEST_CASE("hs2 client: HTTP 503 is retried after Retry-After seconds") {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kHttp;
  cfg.faults.http_503 = 1;
  cfg.faults.retry_after_s = 1;
  Hs2TestServer server(cfg, handler);
  auto o = test_options(server.start());
  o.protocol = Hs2Protocol::kHttp;
  o.connect_max_tries = 3;
  auto clock = std::make_shared<ManualClock>();
  std::vector<HttpWait> waits;  // told before the wait: the log shows it as it starts
  Hs2Session client = hs2_session(o, nullptr, {.clock = clock, .http_wait = [&](const HttpWait& w) {
                                                 CHECK(clock->slept().empty());
                                                 waits.push_back(w);
                                               }});
  client.connect();
  CHECK(server.stats().http_503_sent == 1);
  CHECK(clock->slept() == std::vector<milliseconds>{milliseconds(1000)});  // Retry-After: 1
  REQUIRE(waits.size() == 1);
  CHECK(waits[0].status == 503);
  CHECK(waits[0].endpoint == "127.0.0.1:" + std::to_string(server.port()));
  CHECK(waits[0].next_try == 2);
  CHECK(waits[0].max_tries == 3);
  CHECK(waits[0].wait_seconds == 1);
  CHECK(waits[0].retry_after);
  CHECK(waits[0].text() == "HTTP 503 from 127.0.0.1:" + std::to_string(server.port()) +
                               ": try 2 of 3 in 1 s (Retry-After)");
  upsert_and_check(client, *handler);
}

TEST_CASE("hs2 client: an HTTP wait without Retry-After reads as our own back-off") {
  CHECK(HttpWait{502, "lb.example:28000", 2, 4, 0, false}.text() ==
        "HTTP 502 from lb.example:28000: try 2 of 4 at once");
  CHECK(HttpWait{504, "lb.example:28000", 3, 4, 1, false}.text() ==
        "HTTP 504 from lb.example:28000: try 3 of 4 in 1 s");
}

TEST_CASE("hs2 client: HTTP 503 beyond --connect_max_tries is transient") {
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kHttp;
  cfg.faults.http_503 = 10;
  cfg.faults.retry_after_s = 0;
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start());
  o.protocol = Hs2Protocol::kHttp;
  o.connect_max_tries = 2;
  auto e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kTransient);
  CHECK(std::string(e.what()).find("503") != std::string::npos);
}

TEST_CASE("hs2 client: HTTPS with Bearer token, verified against the test CA") {
  const auto& tls = tls_files();
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kHttp;
  cfg.bearer_token = "header.payload.signature";
  cfg.tls_cert = tls.cert;
  cfg.tls_key = tls.key;
  Hs2TestServer server(cfg, handler);
  const int port = server.start();
  auto o = test_options(port, "localhost");
  o.protocol = Hs2Protocol::kHttp;
  o.ssl = true;
  o.ca_cert = tls.ca;
  o.jwt = true;
  const auto creds = jwt_credentials("header.payload.signature");
  {
    Hs2Session client = hs2_session(o, creds);
    client.connect();
    upsert_and_check(client, *handler);
  }
  o.ca_cert = tls.other_ca;
  auto e = expect_hs2_error([&] { hs2_session(o, creds).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kAuth);
  CHECK(std::string(e.what()).find("header.payload.signature") == std::string::npos);
}

TEST_CASE(
    "hs2 client: --ca_cert naming the server's own certificate, not its CA's: refused on both") {
  // libcurl alone would end the chain at a leaf of the bundle; OpenSSL's binary transport does not.
  const auto& tls = tls_files();
  for (const Transport transport : {Transport::kBinary, Transport::kHttp}) {
    CAPTURE(static_cast<int>(transport));
    Hs2TestServerConfig cfg;
    cfg.transport = transport;
    cfg.tls_cert = tls.cert;
    cfg.tls_key = tls.key;
    Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
    auto o = test_options(server.start(), "localhost");
    o.protocol = transport == Transport::kHttp ? Hs2Protocol::kHttp : Hs2Protocol::kBinary;
    o.ssl = true;
    o.ca_cert = tls.cert;
    const Hs2Error e = expect_hs2_error([&] { hs2_session(o).connect(); });
    CHECK(e.kind() == Hs2ErrorKind::kAuth);
    o.ca_cert = tls.ca;
    Hs2Session client = hs2_session(o);
    client.connect();
    CHECK(client.connected());
  }
}

TEST_CASE("hs2 client: HTTPS refuses a certificate for another host name") {
  const auto& tls = tls_files();
  Hs2TestServerConfig cfg;
  cfg.transport = Transport::kHttp;
  cfg.tls_cert = tls.wrong_cert;
  cfg.tls_key = tls.wrong_key;
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto o = test_options(server.start(), "localhost");
  o.protocol = Hs2Protocol::kHttp;
  o.ssl = true;
  o.ca_cert = tls.ca;
  auto e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kAuth);
  CHECK(std::string(e.what()) ==
        "TLS: the certificate of localhost:" + std::to_string(server.port()) +
            " is not trusted for 'localhost': hostname mismatch; it names "
            "DNS:wrong.example; try -i with a name it names, and the same "
            "port");
}

TEST_CASE("hs2 client: an RPC slower than --socket_timeout_ms is a transient timeout") {
  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.faults.latency_ms = 600;
  Hs2TestServer server(cfg, handler);
  auto o = test_options(server.start());
  o.socket_timeout_ms = 150;
  Hs2Session client = hs2_session(o);
  client.connect();
  // With test_options' 10 s the reply would arrive after 600 ms and the statement succeed.
  auto e = expect_hs2_error([&] { client.execute("UPSERT INTO t VALUES ('a')"); });
  CHECK(e.kind() == Hs2ErrorKind::kTransient);
  CHECK(std::string(e.what()) ==
        "ExecuteStatement: no reply from 127.0.0.1:" + std::to_string(server.port()) +
            " within --socket_timeout_ms 150 ms (raise it for a server slow to answer; 0: no "
            "limit)");
  CHECK_FALSE(client.connected());
}

TEST_CASE("hs2 client: a TLS handshake the server never answers ends at the connect timeout") {
  // A listening socket that nobody accept()s: the kernel completes TCP, nobody speaks TLS.
  const LoopbackListener listener = listen_on_loopback();
  const int fd = listener.fd;
  auto o = test_options(listener.port, "localhost");
  o.ssl = true;
  o.ca_cert = tls_files().ca;
  o.connect_timeout_ms = 200;
  o.connect_max_tries = 1;
  // Without the connect timeout the handshake would wait forever; closing the listening socket
  // resets the pending connection and ends it, and the test fails instead of hanging.
  Watchdog watchdog(std::chrono::seconds(20), [fd] { ::shutdown(fd, SHUT_RDWR); });
  auto e = expect_hs2_error([&] { hs2_session(o).connect(); });
  CHECK_FALSE(watchdog.disarm());
  ::close(fd);
  CHECK(e.kind() == Hs2ErrorKind::kTransient);
  CHECK(std::string(e.what()).find("no answer within -t 200 ms (TLS handshake with localhost:") !=
        std::string::npos);
  CHECK(std::string(e.what()).find("got no answer") != std::string::npos);
}

TEST_CASE("hs2 client: OpenSession is bounded by -t, CloseSession by close_timeout_ms") {
  for (auto transport : {Transport::kBinary, Transport::kHttp}) {
    Hs2TestServerConfig cfg;
    cfg.transport = transport;
    cfg.faults.close_session_latency_ms = 1000;
    Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
    auto o = test_options(server.start());
    if (transport == Transport::kHttp) o.protocol = Hs2Protocol::kHttp;
    o.socket_timeout_ms = 0;
    o.close_timeout_ms = 200;
    const Hs2Settings settings = validate_hs2_options(o);
    const auto auth = make_authenticator(settings, nullptr);
    std::vector<int> timeouts;
    Hs2Session::Hooks hooks;
    hooks.make_transport = [&] {
      return std::make_shared<RecordingTransport>(make_hs2_transport(settings, *auth), &timeouts);
    };
    Hs2Session client(settings, auth, hooks);
    client.connect();
    // OpenSession under -t (test_options: 5000), then statements without a timeout
    // (--socket_timeout_ms 0).
    CHECK(timeouts == std::vector<int>{5000, 0});
    client.close();
    CHECK(timeouts == std::vector<int>{5000, 0, 200});
    CHECK_FALSE(client.connected());
  }
}

TEST_CASE("hs2 client: GetOperationStatus is polled on the schedule, waited on the clock") {
  // A sixteenth of the time already spent, between 1 ms and 1 s.
  CHECK(poll_interval(milliseconds(0)) == milliseconds(1));
  CHECK(poll_interval(milliseconds(31)) == milliseconds(1));
  CHECK(poll_interval(milliseconds(32)) == milliseconds(2));
  CHECK(poll_interval(milliseconds(160)) == milliseconds(10));
  CHECK(poll_interval(milliseconds(1600)) == milliseconds(100));
  CHECK(poll_interval(milliseconds(15999)) == milliseconds(999));
  CHECK(poll_interval(milliseconds(16000)) == milliseconds(1000));
  CHECK(poll_interval(milliseconds(60000)) == milliseconds(1000));
  CHECK(poll_interval(std::chrono::hours(2)) == milliseconds(1000));

  auto handler = std::make_shared<KeySetHandler>();
  Hs2TestServerConfig cfg;
  cfg.faults.running_polls = 36;
  Hs2TestServer server(cfg, handler);
  auto clock = std::make_shared<ManualClock>();
  Hs2Session client = hs2_session(test_options(server.start()), nullptr, {.clock = clock});
  client.connect();
  CHECK(client.execute("UPSERT INTO t VALUES ('a')").rows_modified == 1);
  // The first check at once; then 1 ms steps for the first 32 ms of (manual) time, 2 ms after.
  std::vector<milliseconds> expected(32, milliseconds(1));
  expected.insert(expected.end(), 4, milliseconds(2));
  CHECK(clock->slept() == expected);
  // Three round trips for a statement: execute, the status checks, the close (no GetLog).
  const auto rpcs = server.stats().rpcs;
  CHECK(rpcs.at("ExecuteStatement").calls == 1);
  CHECK(rpcs.at("GetOperationStatus").calls == 37);
  CHECK(rpcs.at("CloseImpalaOperation").calls == 1);
  CHECK(rpcs.count("GetLog") == 0);
}

TEST_CASE(
    "hs2 client: a server that holds polls (Impala 4.5) sees the end of a statement at once") {
  Hs2TestServerConfig cfg;
  cfg.faults.execution_ms = 200;
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  auto clock = std::make_shared<ManualClock>();
  Hs2Session client = hs2_session(test_options(server.start()), nullptr, {.clock = clock});
  client.connect();
  CHECK(client.execute("UPSERT INTO t VALUES ('a')").rows_modified == 1);
  CHECK(server.stats().confoverlay_keys == std::vector<std::string>{"LONG_POLLING_TIME_MS=500"});
  // One poll, held by the server until the statement ended; no wait of the client's own.
  CHECK(server.stats().rpcs.at("GetOperationStatus").calls == 1);
  CHECK(clock->slept().empty());
}

TEST_CASE("hs2 client: a statement longer than the hold is polled again at once, a hold apart") {
  Hs2TestServerConfig cfg;
  cfg.faults.execution_ms = 1100;
  Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
  Hs2Session client = hs2_session(test_options(server.start()));
  client.connect();
  CHECK(client.execute("UPSERT INTO t VALUES ('a')").rows_modified == 1);
  // Held 500 ms, 500 ms, then until the end (where 1 ms steps growing by a sixteenth take 60).
  CHECK(server.stats().rpcs.at("GetOperationStatus").calls == 3);
}

TEST_CASE("hs2 client: the poll hold is not asked of an older Impala, and -Q sets or clears it") {
  SUBCASE("an Impala before 4.5 does not list the option: not sent, polled in steps") {
    Hs2TestServerConfig cfg;
    cfg.faults.no_long_polling = true;
    cfg.faults.running_polls = 3;
    Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
    auto clock = std::make_shared<ManualClock>();
    Hs2Session client = hs2_session(test_options(server.start()), nullptr, {.clock = clock});
    client.connect();
    CHECK(client.execute("UPSERT INTO t VALUES ('a')").rows_modified == 1);
    CHECK(server.stats().confoverlay_keys.empty());
    CHECK(clock->slept() == std::vector<milliseconds>(3, milliseconds(1)));
  }
  SUBCASE("-Q with the option set by the user against such a server: its refusal, definite") {
    Hs2TestServerConfig cfg;
    cfg.faults.no_long_polling = true;
    Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
    auto o = test_options(server.start());
    o.query_options = {"long_polling_time_ms=100"};
    Hs2Session client = hs2_session(o);
    client.connect();
    const Hs2Error e = expect_hs2_error([&] { client.execute("UPSERT INTO t VALUES ('a')"); });
    CHECK(e.kind() == Hs2ErrorKind::kDefinite);
    CHECK(std::string(e.what()).find("Invalid query option: long_polling_time_ms") !=
          std::string::npos);
  }
  SUBCASE("-Q long_polling_time_ms=0 (any case) is the user's: sent once, polls in steps") {
    Hs2TestServerConfig cfg;
    cfg.faults.running_polls = 3;
    Hs2TestServer server(cfg, std::make_shared<KeySetHandler>());
    auto o = test_options(server.start());
    o.query_options = {"long_polling_time_ms=0"};
    auto clock = std::make_shared<ManualClock>();
    Hs2Session client = hs2_session(o, nullptr, {.clock = clock});
    client.connect();
    CHECK(client.execute("UPSERT INTO t VALUES ('a')").rows_modified == 1);
    CHECK(server.stats().confoverlay_keys == std::vector<std::string>{"long_polling_time_ms=0"});
    CHECK(clock->slept() == std::vector<milliseconds>(3, milliseconds(1)));
  }
  SUBCASE("--statement_timeout_ms below the hold shortens it") {
    Hs2TestServer server({}, std::make_shared<KeySetHandler>());
    auto o = test_options(server.start());
    o.statement_timeout_ms = 200;
    Hs2Session client = hs2_session(o);
    client.connect();
    CHECK(client.execute("UPSERT INTO t VALUES ('a')").rows_modified == 1);
    CHECK(server.stats().confoverlay_keys == std::vector<std::string>{"LONG_POLLING_TIME_MS=200"});
  }
}

TEST_CASE("hs2 client: refused connects are retried with the retry back-off") {
  int port;
  {
    Hs2TestServer server({}, std::make_shared<KeySetHandler>());
    port = server.start();
  }  // stopped: nothing listens there now
  auto o = test_options(port);
  o.connect_max_tries = 3;
  o.retry_backoff_ms = 100;
  auto clock = std::make_shared<ManualClock>();
  auto e = expect_hs2_error([&] { hs2_session(o, nullptr, {.clock = clock}).connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kTransient);
  const std::string endpoint = "127.0.0.1:" + std::to_string(port);
  CHECK(std::string(e.what()) ==
        "cannot connect to " + endpoint + ": nothing listens on " + endpoint +
            " (connection refused, 3 tries); impalad's HS2 port is 21050 (hs2) or 28000 "
            "(hs2-http); try -i 127.0.0.1:21050");
  const std::vector<milliseconds> slept = clock->slept();
  REQUIRE(slept.size() == 2);
  CHECK(slept[0] >= milliseconds(100));
  CHECK(slept[0] <= milliseconds(125));
  CHECK(slept[1] >= milliseconds(200));
  CHECK(slept[1] <= milliseconds(250));
}

TEST_CASE("hs2 client: refused after the server answered: it went away, no other port advised") {
  auto server =
      std::make_unique<Hs2TestServer>(Hs2TestServerConfig{}, std::make_shared<KeySetHandler>());
  const int port = server->start();
  auto o = test_options(port);
  o.connect_max_tries = 2;
  auto clock = std::make_shared<ManualClock>();
  Hs2Session client = hs2_session(o, nullptr, {.clock = clock});
  client.connect();
  CHECK(client.execute("UPSERT INTO t VALUES ('a')").rows_modified == 1);
  server.reset();  // stopped: nothing listens there now
  auto e = expect_hs2_error([&] { client.connect(); });
  CHECK(e.kind() == Hs2ErrorKind::kTransient);
  const std::string endpoint = "127.0.0.1:" + std::to_string(port);
  CHECK(std::string(e.what()) == "cannot connect to " + endpoint + ": nothing listens on " +
                                     endpoint +
                                     " any more (connection refused, 2 tries); it answered "
                                     "earlier in this run: has impalad stopped or restarted?");
}

TEST_SUITE_END();
