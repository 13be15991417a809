// Builds the transport stack the settings describe:
//   hs2:       TSocket [→ TLS] → whatever the Authenticator (auth.h) wraps it in:
//              TBufferedTransport without auth, SASL frames with -l (never framed without SASL)
//   hs2-http:  libcurl POST per message (TLS, 502/503/504 retries, cookies); the Authenticator
//              sets Basic or Bearer on the handle
// The returned transport is not open; open() connects and performs the TLS and SASL handshakes
// under the connect timeout (-t), after which the socket uses --socket_timeout_ms.
//
// Example:
//   auto t = make_hs2_transport(settings, *make_authenticator(settings, credentials));
//   t->open();                // Hs2Error(kAuth) if the certificate or the password is refused,
//                             // TTransportException if the server cannot be reached
//   t->set_rpc_timeout(200);  // bound the next RPCs (e.g. a final CloseSession) to 200 ms
#pragma once

#include <thrift/transport/TVirtualTransport.h>

#include <functional>
#include <memory>
#include <string_view>

#include "hs2/auth.h"
#include "hs2/clock.h"
#include "hs2/http_wait.h"
#include "hs2/options.h"

namespace atlas2kudu {

// A Thrift transport with the one knob a session turns after opening it. Read and write it as a
// TTransport (as TBinaryProtocol does): like every TVirtualTransport base, Hs2Transport's own
// read()/write() names are Thrift's non-virtual defaults, not the implementation's.
class Hs2Transport : public apache::thrift::transport::TTransportDefaults {
 public:
  // Receive (and send) timeout of the RPCs that follow, 0 = none; for hs2-http the
  // whole-request timeout.
  virtual void set_rpc_timeout(int ms) = 0;
  // Whether a stop request (util/stop.h) cuts the I/O in progress short: on (the default) for the
  // work of a run, connecting included, so that SIGTERM or --deadline need not wait for a silent
  // server; off for the clean-up after a stop (CancelOperation, CloseSession), which must reach
  // the server and is bounded by the close timeout instead. The cut-short call throws a transport
  // error while stop_requested() holds, which the session turns into StopError. The binary
  // transport shuts its socket down (SocketStopGuard, armed only while it reads, writes or
  // opens), hs2-http aborts the transfer (libcurl's progress callback, within about a second).
  virtual void set_stoppable(bool on) { (void)on; }
  // After a flush() that a stop cut short: whether the request may have reached the server whole,
  // so that the server may run it. hs2-http's flush() is the whole exchange: true once the body
  // was sent and no answer that refuses it came back (a 502 or 504, from a gateway that may have
  // passed the request on, counts as arrived; a 503 or 401 not). The binary transport's flush()
  // only hands the bytes to the socket, and a request it did not finish sending is never run:
  // false.
  virtual bool cut_request_may_have_arrived() const { return false; }
};

// `sleep` is what hs2-http waits with between 502/503/504 retries; empty: really sleeps.
// `on_wait`: told of each such wait (http_wait.h; empty: nobody).
std::shared_ptr<Hs2Transport> make_hs2_transport(const Hs2Settings& settings,
                                                 const Authenticator& authenticator,
                                                 Sleeper sleep = {}, HttpWaitNotice on_wait = {});

// Whether host:port answers a TLS ClientHello with a TLS record (a ServerHello or an alert). Asked
// only after a plain connection was closed without a word (OpenSSL sends no alert for bytes that
// are not TLS), to tell a TLS port from one that requires authentication. One connection, bounded
// by `timeout_ms`; false on any failure.
bool answers_tls(const std::string& host, int port, int timeout_ms);

// Whether host:port answers a plain HTTP request with an HTTP status line. Asked only after a TLS
// handshake got no answer (a plain HTTP server waits for the rest of what it takes for a
// request). One connection, bounded by `timeout_ms`; false on any failure.
bool answers_plain_http(const std::string& host, int port, int timeout_ms);

// Mutes Thrift's own error printing (TSocket writes every socket error to stderr itself): the HS2
// layer reports each failure once, classified, through Hs2Error. Process-wide; the program calls
// it once at start-up.
void quiet_thrift_logging();

}  // namespace atlas2kudu
