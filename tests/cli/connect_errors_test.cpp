// The common connection mistakes, through the real binary against the standalone HS2 test server
// (or a closed port, or a name under .invalid, which RFC 6761 guarantees never resolves): each is
// named as "atlas2kudu: cannot connect to HOST:PORT: WHAT; try FLAG", with the documented exit
// status (4 for connection failures, 5 for authentication and TLS).
#include <doctest/doctest.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "binary_test_util.h"
#include "connect_errors_loopback.h"
#include "hs2_test_util.h"

TEST_SUITE_BEGIN("connect_errors");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

const std::string kInput = data("notifications/gzip-message.jsonl");

// A loopback port nothing listens on: bound, never listened to, closed again.
int closed_port() {
  const LoopbackSocket s = bind_loopback(SOCK_STREAM, 0, false);
  ::close(s.fd);
  return s.port;
}

// The one line the run ends with on stderr, before the summary.
std::string error_line(const Run& r) {
  const auto at = r.err.find("atlas2kudu: cannot connect to ");
  if (at == std::string::npos) return r.err;
  return r.err.substr(at, r.err.find('\n', at) - at);
}

// A loopback server that answers each connection (at most 8, within 20 s) with fixed bytes once
// the client has paused for 200 ms (its SASL START and initial response read), then keeps the
// connection `hold_ms` and closes it for writing, reading until the client closes (so that no
// reset loses what it sent).
class FixedReplyServer {
 public:
  FixedReplyServer(std::string reply, int hold_ms) : reply_(std::move(reply)), hold_ms_(hold_ms) {
    const LoopbackSocket s = bind_loopback(SOCK_STREAM);
    fd_ = s.fd;
    port_ = s.port;
    thread_ = std::thread([this] { serve(); });
  }
  ~FixedReplyServer() {
    ::shutdown(fd_, SHUT_RDWR);  // ends the accept wait
    thread_.join();
    ::close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int served = 0; served < 8 && std::chrono::steady_clock::now() < until; ++served) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20000) != 1 || (p.revents & POLLIN) == 0) return;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      for (pollfd q{c, POLLIN, 0}; ::poll(&q, 1, 200) == 1 && ::read(c, buf, sizeof buf) > 0;) {
      }
      (void)!::write(c, reply_.data(), reply_.size());
      std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms_));
      ::shutdown(c, SHUT_WR);
      for (pollfd q{c, POLLIN, 0}; ::poll(&q, 1, 5000) == 1 && ::read(c, buf, sizeof buf) > 0;) {
      }
      ::close(c);
    }
  }

  std::string reply_;
  int hold_ms_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_CASE("binary HS2 against an hs2-http port: try --protocol hs2-http (exit 4)") {
  TestServer http("--transport http --http-reject-non-http");
  const Run r = run("apply -i " + http.address() + " " + kInput);
  CHECK(r.status == 4);
  CHECK(error_line(r) == "atlas2kudu: cannot connect to " + http.address() +
                             ": it answers in HTTP (HTTP/1.1 400 Bad Request), as an hs2-http "
                             "port (impalad: 28000) does, not binary HS2 (impalad: 21050); try "
                             "--protocol hs2-http");
  // With --ssl the ClientHello has no line end, so an HTTP server waits for more: the timeout
  // names both ways out.
  TestServer quiet_http("--transport http");
  const Run tls =
      run("apply --ssl -t 500 --connect_max_tries 1 -i " + quiet_http.address() + " " + kInput);
  CHECK(tls.status == 4);
  CHECK(contains(error_line(tls),
                 "no TLS on this port: try without --ssl; an hs2-http port, "
                 "impalad's 28000, waits for a request line: try --protocol "
                 "hs2-http)"));
}

TEST_CASE("hs2-http against a binary HS2 port: try --protocol hs2 (exit 4)") {
  TestServer binary("--transport binary");
  const Run r =
      run("apply --protocol hs2-http --connect_max_tries 1 -i " + binary.address() + " " + kInput);
  CHECK(r.status == 4);
  const std::string line = error_line(r);
  CHECK(line.starts_with("atlas2kudu: cannot connect to " + binary.address() +
                         ": it closed the connection without an HTTP reply ("));
  CHECK(
      line.ends_with("as a binary HS2 port (impalad: 21050) or a port that expects TLS does; "
                     "try --protocol hs2, or --ssl"));
}

TEST_CASE("no -l against a server that requires LDAP: try -l -u USER") {
  {  // binary: the SASL server hangs up on a message that is not SASL (exit 4)
    TestServer sasl("--transport sasl --user etl", "HS2_TEST_SERVER_PASSWORD=secret");
    const Run r = run("apply --connect_max_tries 1 -i " + sasl.address() + " " + kInput);
    CHECK(r.status == 4);
    const std::string line = error_line(r);
    CHECK(line.starts_with("atlas2kudu: cannot connect to " + sasl.address() +
                           ": it closed the connection without answering OpenSession ("));
    CHECK(
        line.ends_with("); the server may require LDAP authentication; try -l -u USER (-k for "
                       "Kerberos; --protocol hs2-http if it is an hs2-http port (impalad: "
                       "28000))"));
  }
  {  // hs2-http: 401 with a Basic challenge (exit 5)
    TestServer http("--transport http --user etl", "HS2_TEST_SERVER_PASSWORD=secret");
    const Run r = run("apply --protocol hs2-http -i " + http.address() + " " + kInput);
    CHECK(r.status == 5);
    CHECK(error_line(r) == "atlas2kudu: cannot connect to " + http.address() +
                               ": the server requires authentication (HTTP 401 with Basic "
                               "realm=\"impala\"); try -l -u USER (LDAP)");
  }
}

TEST_CASE("-l against a server whose reply is no SASL message: not HS2's SASL (exit 4)") {
  // Neither an internal error (a START status) nor an authentication failure (a length past any
  // SASL message, a message cut short by -t or by the connection's end): the wrong service.
  struct Case {
    std::string reply;
    int hold_ms;
    std::string says;
  };
  using namespace std::string_literals;
  const std::string hs2_port =
      "; try -i with impalad's HS2 port (21050; 28000 with --protocol hs2-http)";
  const std::vector<Case> cases = {
      // START, which only a client sends: as without -l.
      {"\x01\x00\x00\x00\x05PLAIN"s, 0,
       ": it answers with bytes that are not HS2 ('\\x01\\x00\\x00\\x00\\x05'...): another "
       "service listens there" +
           hs2_port},
      {"\x02\xff\xff\xff\xff"s, 0,
       ": it answers the SASL handshake with a message of 4294967295 bytes, which no SASL server "
       "sends: it does not speak HS2's SASL there" +
           hs2_port},
      {"\x02\x00\x00\x00\x10"
       "ABC"s,
       3000,
       ": it answers the SASL handshake with a message cut short (3 of its 16 bytes, then: "
       "THRIFT_EAGAIN (timed out)): it does not speak HS2's SASL there" +
           hs2_port},
      {"\x05\x00\x00\x00\x10"
       "ABC"s,
       0,
       ": it answers the SASL handshake with a message cut short (3 of its 16 bytes, then: the "
       "connection closed): it does not speak HS2's SASL there" +
           hs2_port},
  };
  for (const Case& c : cases) {
    CAPTURE(c.says);
    FixedReplyServer server(c.reply, c.hold_ms);
    const Run r =
        run("apply -l -u etl --auth_creds_ok_in_clear --ldap_password_cmd 'echo pw' -t 1000 "
            "--connect_max_tries 1 -i " +
            server.address() + " " + kInput);
    CHECK(r.status == 4);
    CHECK(error_line(r) == "atlas2kudu: cannot connect to " + server.address() + c.says);
  }
}

TEST_CASE("no --ssl against a TLS port: try --ssl (exit 5)") {
  // OpenSSL closes without an alert on bytes that are not TLS; a ClientHello on a second
  // connection tells a TLS port from one that requires authentication. (A server that answers the
  // plain message with a TLS record is named at once: hs2_unattended's "a plain connection
  // answered with TLS asks for --ssl".)
  const TlsFiles& tls = tls_files();
  TestServer server("--transport binary --tls-cert " + tls.cert + " --tls-key " + tls.key);
  const Run r = run("apply --connect_max_tries 1 -i " + server.address() + " " + kInput);
  CHECK(r.status == 5);
  const std::string line = error_line(r);
  CHECK(line.starts_with("atlas2kudu: cannot connect to " + server.address() +
                         ": it closed the connection without answering OpenSession ("));
  CHECK(
      line.ends_with("), and it answers a TLS ClientHello: the server expects TLS; try --ssl "
                     "(and --ca_cert FILE if its CA is not a system one)"));
}

TEST_CASE("LDAP (SASL) without --ssl against a TLS port: try --ssl, not the password (exit 5)") {
  // A TLS-only SASL port hangs up on the plain SASL start, just as Impala does on a wrong
  // password; a ClientHello on a second connection tells the two apart.
  const TlsFiles& tls = tls_files();
  const std::string ldap = " -l -u etl --auth_creds_ok_in_clear --connect_max_tries 1 ";
  TestServer server("--transport sasl --user etl --tls-cert " + tls.cert + " --tls-key " + tls.key,
                    "HS2_TEST_SERVER_PASSWORD=secret");
  Run r = run("apply" + ldap + "--ldap_password_cmd 'echo secret' -i " + server.address() + " " +
              kInput);
  CHECK(r.status == 5);
  std::string line = error_line(r);
  CHECK(line.starts_with("atlas2kudu: cannot connect to " + server.address() +
                         ": it closed the connection during SASL negotiation ("));
  CHECK(
      line.ends_with("), and it answers a TLS ClientHello: the server expects TLS; try --ssl "
                     "(and --ca_cert FILE if its CA is not a system one)"));
  // A wrong password on a plain SASL port is still named as such.
  TestServer plain("--transport sasl --user etl", "HS2_TEST_SERVER_PASSWORD=secret");
  r = run("apply" + ldap + "--ldap_password_cmd 'echo wrong' -i " + plain.address() + " " + kInput);
  CHECK(r.status == 5);
  line = error_line(r);
  CHECK(contains(line, "SASL PLAIN authentication failed"));
  CHECK_FALSE(contains(line, "TLS"));
}

TEST_CASE("a port nothing listens on: impalad's ports named (exit 4)") {
  const std::string endpoint = "127.0.0.1:" + std::to_string(closed_port());
  Run r = run("apply --retry_backoff_ms 10 -i " + endpoint + " " + kInput);
  CHECK(r.status == 4);
  CHECK(error_line(r) == "atlas2kudu: cannot connect to " + endpoint + ": nothing listens on " +
                             endpoint +
                             " (connection refused, 4 tries); impalad's HS2 port is 21050 (hs2) "
                             "or 28000 (hs2-http); try -i 127.0.0.1:21050");
  r = run("apply --protocol hs2-http --connect_max_tries 2 -i " + endpoint + " " + kInput);
  CHECK(r.status == 4);
  CHECK(error_line(r) == "atlas2kudu: cannot connect to " + endpoint + ": nothing listens on " +
                             endpoint +
                             " (connection refused, 2 tries); impalad's HS2 port is 21050 (hs2) "
                             "or 28000 (hs2-http); try -i 127.0.0.1:28000");
}

TEST_CASE("a host name that does not resolve: cannot resolve HOST (exit 4)") {
  Run r = run("apply --connect_max_tries 1 -i atlas2kudu-test.invalid:21050 " + kInput);
  CHECK(r.status == 4);
  CHECK(error_line(r) ==
        "atlas2kudu: cannot connect to atlas2kudu-test.invalid:21050: cannot resolve "
        "atlas2kudu-test.invalid; try -i with a host name or address that resolves");
  r = run("apply --protocol hs2-http --connect_max_tries 1 -i atlas2kudu-test.invalid " + kInput);
  CHECK(r.status == 4);
  CHECK(error_line(r) ==
        "atlas2kudu: cannot connect to atlas2kudu-test.invalid:28000: cannot resolve "
        "atlas2kudu-test.invalid; try -i with a host name or address that resolves");
}

TEST_CASE(
    "a HiveServer2 that is not Impala (no CloseImpalaOperation): named, not retried (exit 4)") {
  TestServer plain("--plain-hs2");
  const std::string unknown = "CloseImpalaOperation: " + plain.address() +
                              " does not know this call (Invalid method name: "
                              "'CloseImpalaOperation'): atlas2kudu needs an Impala daemon (3.3 or "
                              "later) there, not another HiveServer2\n";
  // The first statement that ends is a prior-state read (--prior impala, the default) ...
  Run r = run("apply -i " + plain.address() + " " + kInput);
  CHECK(r.status == 4);
  CHECK(contains(r.err, "atlas2kudu: window 1 (events 1-1; " + kInput + ":1 .. " + kInput +
                            ":1), prior-state lookup (entity_flat, keys 1-1 of 1): " + unknown));
  // ... or the first UPSERT; either way once, with no retry.
  r = run("apply --prior none -i " + plain.address() + " " + kInput);
  CHECK(r.status == 4);
  CHECK(contains(r.err, unknown));
  CHECK(contains(r.err, "0 windows applied"));
  CHECK(contains(r.err, " 0 retries"));
}

TEST_CASE("hs2-http without --ssl against a TLS port, and --ssl against a plain one (exit 5)") {
  const TlsFiles& tls = tls_files();
  TestServer https("--transport http --tls-cert " + tls.cert + " --tls-key " + tls.key);
  Run r =
      run("apply --protocol hs2-http --connect_max_tries 1 -i " + https.address() + " " + kInput);
  CHECK(r.status == 5);
  CHECK(error_line(r) == "atlas2kudu: cannot connect to " + https.address() +
                             ": it closed the connection without an HTTP reply (Empty reply from "
                             "server), and it answers a TLS ClientHello: the server expects TLS; "
                             "try --ssl (and --ca_cert FILE if its CA is not a system one)");
  // The reverse: a plain HTTP port waits for the rest of the "request" the ClientHello began, so
  // the handshake times out (-t); a plain request on a second connection tells it from a silent
  // server. (-t bounds the probe as well: 2 s, so that a loaded machine still gets its answer.)
  TestServer http("--transport http");
  r = run("apply --protocol hs2-http --ssl --ca_cert " + tls.ca + " -t 2000 -i " + http.address() +
          " " + kInput);
  CHECK(r.status == 5);
  CHECK(error_line(r).starts_with("atlas2kudu: cannot connect to " + http.address() +
                                  ": no answer to the TLS handshake ("));
  CHECK(error_line(r).ends_with(
      " milliseconds), and it answers plain HTTP: it does not speak TLS; try without --ssl"));
  // A silent server is still only a timeout (exit 4).
  TestServer silent("--silent");
  r = run("apply --protocol hs2-http --ssl --ca_cert " + tls.ca +
          " -t 500 --connect_max_tries 1 -i " + silent.address() + " " + kInput);
  CHECK(r.status == 4);
  CHECK(contains(r.err, "a silent server, or no TLS on this port"));
}

TEST_CASE("a server that requires a client certificate (mutual TLS): said so, exit 5") {
  // TLS 1.3 refuses after the client's handshake has finished (at its first read: it was taken
  // for a server wanting LDAP, or an HTTP port's hang-up), TLS 1.2 inside the handshake after
  // asking for a certificate. Both protocols, with and without -l.
  const TlsFiles& tls = tls_files();
  for (const std::string version : {"", " --tls-max-1.2"}) {
    for (const std::string transport : {"binary", "sasl", "http"}) {
      CAPTURE(version);
      CAPTURE(transport);
      TestServer server("--transport " + transport + " --user etl --tls-require-client-cert" +
                            version + " --tls-cert " + tls.cert + " --tls-key " + tls.key,
                        "HS2_TEST_SERVER_PASSWORD=secret");
      const std::string flags = transport == "binary" ? ""
                                : transport == "sasl"
                                    ? " -l -u etl --ldap_password_cmd 'echo secret'"
                                    : " --protocol hs2-http";
      const Run r = run("apply --ssl --ca_cert " + tls.ca + " --connect_max_tries 1" + flags +
                        " -i " + server.address() + " " + kInput);
      CHECK(r.status == 5);
      const std::string line = r.err.substr(0, r.err.find('\n'));
      // With TLS 1.3 the request may meet the closed connection before the alert is read: then
      // both causes a close after the request can have are said.
      const bool alert_read = line.starts_with("atlas2kudu: TLS: " + server.address() +
                                               " requires a client certificate (mutual TLS), "
                                               "which atlas2kudu does not present: the server, "
                                               "or a load balancer before it, refused the "
                                               "connection (");
      CHECK((alert_read ||
             (version.empty() && line.starts_with("atlas2kudu: TLS: " + server.address() +
                                                  " asked for a client "
                                                  "certificate, which atlas2kudu "
                                                  "does not present, then closed "
                                                  "the connection ("))));
      if (alert_read) {
        CHECK(contains(line,
                       version.empty() ? "alert certificate required" : "alert handshake failure"));
        CHECK(line.ends_with("); connect to a port (or load balancer) that does not require one"));
      }
    }
  }
}

TEST_CASE(
    "hs2-http: a first request that -t cuts after a 503 on the same connection is no connect "
    "failure (exit 4)") {
  // The 503's connection is reused for the retry: libcurl reports no connect or TLS handshake
  // for it, and none failed (they were taken for a connect that never finished, and with --ssl
  // a second connection probed for plain HTTP). Without TLS and with it.
  const TlsFiles& tls = tls_files();
  const std::string hangs = " --http-503 1 --retry-after 0 --http-silent-after-503";
  for (const bool with_tls : {false, true}) {
    CAPTURE(with_tls);
    TestServer server(
        "--transport http" + hangs +
        (with_tls ? " --tls-cert " + tls.cert + " --tls-key " + tls.key : std::string()));
    const Run r = run("apply --protocol hs2-http -t 1000 --connect_max_tries 2 " +
                      (with_tls ? "--ssl --ca_cert " + tls.ca + " " : std::string()) + "-i " +
                      server.address() + " " + kInput);
    CHECK(r.status == 4);
    CHECK(contains(error_line(r), "atlas2kudu: cannot connect to " + server.address() +
                                      ": it accepted the connection but sent no HTTP reply within "
                                      "-t 1000 ms ("));
    CHECK_FALSE(contains(r.err, "no answer to the connect"));
    CHECK_FALSE(contains(r.err, "TLS"));
  }
}

TEST_CASE(
    "hs2-http through a proxy of the environment: its failure is the proxy's, not impalad's") {
  TestServer server("--transport http");
  const int unused_port = closed_port();  // a proxy that is down
  // Whatever the machine's own proxy settings: none of them is inherited.
  const std::string proxy = "no_proxy= NO_PROXY= http_proxy=http://squid:Pr0xyPw@127.0.0.1:" +
                            std::to_string(unused_port);
  const std::string args =
      "apply -q --protocol hs2-http --connect_max_tries 1 -i " + server.address() + " " + kInput;
  Run r = run(args, "/dev/null", proxy);
  CHECK(r.status == 4);
  CHECK(contains(r.err, "atlas2kudu: cannot connect to " + server.address() +
                            ": the request went to the proxy that $http_proxy names (http://"
                            "squid:****@127.0.0.1:" +
                            std::to_string(unused_port) + "), which failed: "));
  CHECK(contains(r.err,
                 "; try no_proxy=127.0.0.1 in the environment to connect directly, or a "
                 "proxy that works\n"));
  CHECK_FALSE(contains(r.err, "nothing listens"));
  CHECK_FALSE(contains(r.err, "Pr0xyPw"));
  // no_proxy as libcurl reads it: the address itself, or its network, goes direct.
  for (const std::string no_proxy : {"localhost,127.0.0.1", "10.0.0.0/8 127.0.0.0/8"}) {
    CAPTURE(no_proxy);
    r = run(args, "/dev/null", proxy + " no_proxy='" + no_proxy + "'");
    CHECK(r.status == 0);
  }
  // A domain suffix does not cover an address: libcurl goes to the proxy, and the message says so.
  r = run(args, "/dev/null", proxy + " no_proxy=.0.0.1");
  CHECK(r.status == 4);
  CHECK(contains(r.err, "the request went to the proxy"));
  // A URL libcurl cannot read is quoted whole in its words: the password is not, whether it
  // holds an unencoded '@', the URL has a leading space or no host after "user:password@".
  const std::string stats = tmp_path(".stats.json");
  for (const std::string url :
       {"http://squid:Pr0@xyPw@127.0.0.1:1", " http://squid:Pr0xyPw@h:1", "http://squid:Pr0xyPw@",
        "http://squid:Pr0/xyPw@127.0.0.1:1", "http://squid:Pr0#xy?Pw@127.0.0.1:1"}) {
    CAPTURE(url);
    r = run(args + " --stats " + stats, "/dev/null",
            "no_proxy= NO_PROXY= http_proxy='" + url + "'");
    CHECK(r.status == 4);
    CHECK(contains(r.err, "http://squid:****@"));
    CHECK_FALSE(contains(r.err, "xyPw"));
    CHECK_FALSE(contains(slurp(stats), "xyPw"));
  }
  std::remove(stats.c_str());
}

TEST_CASE("hs2-http: what other HTTP statuses say, and their exit status") {
  struct Case {
    int status;
    int exit_status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {404, 4,
       "/cliservice answered HTTP 404 Not Found (impalad serves any path; a gateway in "
       "front of it may not); try --http_path with the path the gateway serves HS2 on"},
      {302, 4,
       "/cliservice redirects (HTTP 302) to https://elsewhere.invalid/; redirects are not "
       "followed, so that credentials go only where -i says; try -i and --http_path "
       "naming where it redirects, with --ssl (it redirects to https)"},
      {407, 5, ": a proxy on the way requires authentication (HTTP 407); try without the proxy"},
      {403, 5, " refused this user (HTTP 403 Forbidden)"},
      {418, 4,
       "/cliservice answered HTTP 418, not an HS2 reply; try -i with an hs2-http port "
       "(impalad: 28000)"},
      // Another server on the port (a web UI), answering 200 with a page.
      {200, 4,
       "/cliservice answered HTTP 200 with 57 bytes of text/html, starting '<!DOCTYPE "
       "html>\\n<html><body>impalad web ', not an HS2 (Thrift) reply; try -i with an "
       "hs2-http port (impalad: 28000; its web UI is 25000)"},
      // A gateway whose backend failed: exit 4, as the server being down is (a statement that
      // meets it is retried).
      {500, 4,
       "/cliservice answered HTTP 500 (a server error, or a gateway whose backend "
       "failed)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.status);
    TestServer server(fmt::format("--transport http --http-status {}", c.status));
    const Run r = run("apply --protocol hs2-http --max_retries 1 --retry_backoff_ms 1 -i " +
                      server.address() + " " + kInput);
    CHECK(r.status == c.exit_status);
    CHECK(contains(r.err, c.says));
    CHECK(contains(r.err, server.address()));
  }
}

TEST_CASE("hs2-http: a redirect to https on the same host asks for --ssl (exit 4)") {
  struct Case {
    std::string location;
    std::string try_this;
  };
  const std::vector<Case> cases = {
      {"https://{host}/cliservice", "try --ssl"},
      {"https://127.0.0.1:28443/hs2", "try --ssl -i 127.0.0.1:28443 --http_path hs2"},
      {"http://{host}/other", "try --http_path other"},
      {"https://elsewhere.invalid/",
       "try -i and --http_path naming where it redirects, with --ssl (it redirects to https)"},
      // A password in the location is not repeated.
      {"https://u:s3cret@{host}/cliservice", "try --ssl"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.location);
    TestServer server("--transport http --http-status 301 --http-location '" + c.location + "'");
    const Run r = run("apply --protocol hs2-http --connect_max_tries 1 -i " + server.address() +
                      " " + kInput);
    CHECK(r.status == 4);
    std::string location = c.location;
    if (location.find("{host}") != std::string::npos)
      location.replace(location.find("{host}"), 6, server.address());
    if (location.find("s3cret") != std::string::npos) {
      CHECK(!contains(r.err, "s3cret"));
      location.replace(location.find("s3cret"), 6, "****");
    }
    CHECK(error_line(r) == "atlas2kudu: cannot connect to " + server.address() + ": http://" +
                               server.address() + "/cliservice redirects (HTTP 301) to " +
                               location +
                               "; redirects are not followed, so that credentials go only where "
                               "-i says; " +
                               c.try_this);
  }
}

TEST_CASE("hs2-http: a connection lost after replies is a lost connection, not a wrong port") {
  // libcurl re-sends a request once by itself when a kept-alive connection dies: each try of the
  // statement meets two drops.
  TestServer server("--transport http --handler kit --drop-at 1 2 3 4 5 6");
  const Run r =
      run("apply --protocol hs2-http --prior none --max_retries 2 --retry_backoff_ms 1 "
          "-i " +
          server.address() + " " + kInput);
  CHECK(r.status == 4);
  CHECK(contains(r.err, "giving up after 2 retries: HTTP request failed: the connection to " +
                            server.address() +
                            " was lost before the reply (Empty reply from "
                            "server)"));
  CHECK_FALSE(contains(r.err, "--protocol hs2"));
  // An HTTP session outlives its connection: each new connection closed the one before's. The
  // last, lost with the run's last try, is left to the server's --disconnected_session_timeout
  // (a run that ends does not connect again only to close it).
  const std::string stats = server.report();
  CHECK(json_number(stats, "sessions_opened") == 3);
  CHECK(json_number(stats, "open_sessions") == 1);
}

TEST_CASE("a reply slower than --socket_timeout_ms: the limit is named (exit 4)") {
  TestServer slow("--latency-ms 3000");
  const Run r = run("apply --prior none --socket_timeout_ms 300 --max_retries 0 -i " +
                    slow.address() + " " + kInput);
  CHECK(r.status == 4);
  CHECK(contains(r.err, "ExecuteStatement: no reply from " + slow.address() +
                            " within --socket_timeout_ms 300 ms (raise it for a server slow to "
                            "answer; 0: no limit)\n"));
  // hs2-http names it too (it was libcurl's "HTTP request failed: Operation timed out ...").
  TestServer slow_http("--transport http --latency-ms 3000");
  const Run http =
      run("apply --protocol hs2-http --prior none --socket_timeout_ms 300 "
          "--max_retries 0 -i " +
          slow_http.address() + " " + kInput);
  CHECK(http.status == 4);
  CHECK(contains(http.err, "no HTTP reply from " + slow_http.address() +
                               " within --socket_timeout_ms 300 ms (Operation timed out after "));
  CHECK(contains(http.err, "; raise it for a server slow to answer; 0: no limit)\n"));
}

TEST_SUITE_END();
