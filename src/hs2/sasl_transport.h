// The client side of Thrift's SASL transport as Impala speaks it on its binary port when LDAP or
// Kerberos is on (the framing of Impala's TSaslTransport and Python's thrift_sasl), with Cyrus
// libsasl2 doing the mechanism. Thrift 0.17's C++ library has none.
//
// Negotiation message: 1 status byte (START=1 OK=2 BAD=3 ERROR=4 COMPLETE=5) + 4-byte big-endian
// length + payload. We send START(mechanism name), then OK(initial response), then answer each OK
// until the server says COMPLETE. Afterwards every flush() sends one frame (4-byte big-endian
// length + payload); reads concatenate frame payloads, because the server may split one reply
// into several frames and a frame may arrive split across TCP reads.
//
// Which mechanism, and what it answers when Cyrus asks for a user name or a password, is not
// decided here: the transport is handed a SaslMechanism by the Authenticator (auth.h). The
// transport only frames and negotiates, so GSSAPI is one more SaslMechanism, not a change here.
//
// No security layer is negotiated: Impala never wraps, so confidentiality comes from TLS below.
//
// Example (what the LDAP authenticator in auth.cpp does):
//   auto sock = std::make_shared<TSocket>("db1", 21050);
//   std::unique_ptr<SaslMechanism> plain = ...;   // name() "PLAIN", answers user and password
//   auto sasl = std::make_shared<SaslClientTransport>(sock, std::move(plain), "impala", "db1");
//   sasl->open();   // throws Hs2Error(kAuth) "SASL PLAIN authentication failed: ..." if rejected
#pragma once

#include <sasl/sasl.h>
#include <thrift/transport/TVirtualTransport.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hs2/error.h"

namespace atlas2kudu {

enum class SaslStatus : std::uint8_t { kStart = 1, kOk = 2, kBad = 3, kError = 4, kComplete = 5 };

// Whether `byte` is a status a SASL server sends: OK, BAD, ERROR or COMPLETE (START is the
// client's). A first byte of a reply that is none is another service's, or not SASL at all.
constexpr bool server_sasl_status(std::uint8_t byte) {
  return byte >= static_cast<std::uint8_t>(SaslStatus::kOk) &&
         byte <= static_cast<std::uint8_t>(SaslStatus::kComplete);
}

// Shared by client and test server: writes/reads one negotiation message.
void write_sasl_message(apache::thrift::transport::TTransport& t, SaslStatus status,
                        std::string_view payload);
// Throws TTransportException(END_OF_FILE) on EOF; rejects payloads above `max_len`.
std::pair<SaslStatus, std::string> read_sasl_message(apache::thrift::transport::TTransport& t,
                                                     std::uint32_t max_len = 1u << 20);

// How a SASL negotiation failed.
enum class SaslFailure {
  kNoMechanism,       // Cyrus has no plugin for the mechanism (SASL_NOMECH); detail: Cyrus's text
  kClient,            // the mechanism failed on this side; detail: Cyrus's text
  kServerRefused,     // the server answered BAD or ERROR; detail: its text
  kConnectionClosed,  // the server closed the connection, which is how Impala rejects credentials
};

// One SASL client mechanism as Cyrus sees it: its name and the callbacks that answer Cyrus's
// questions (authentication id, password, ...). Made by an Authenticator for one connection and
// owned by its SaslClientTransport, which keeps it alive as long as Cyrus may call back; the
// callbacks' context pointers point into the mechanism object.
class SaslMechanism {
 public:
  virtual ~SaslMechanism() = default;
  virtual const char* name() const = 0;  // "PLAIN"
  // Terminated by SASL_CB_LIST_END.
  virtual const sasl_callback_t* callbacks() = 0;
  // The message of the Hs2Error(kAuth) the transport throws when the negotiation fails, e.g.
  // "SASL PLAIN authentication failed: server said: invalid password". A mechanism that knows
  // more about its failures (GSSAPI: which Kerberos step failed) says so here.
  virtual std::string failure_message(SaslFailure failure, std::string_view detail) const;
  // Called once per negotiation before Cyrus is: what may take long or fail on this side
  // (GSSAPI: the KDC exchange for the service ticket) is done here, where it can be bounded and
  // explained. Throws Hs2Error(kAuth) (or StopError) to end the negotiation before it starts.
  virtual void prepare() {}
};

// The Hs2Error(kAuth) of a negotiation the server ended by closing the connection: a refused
// password or ticket (Impala's way of saying no), but also a TLS-only port, which closes on a
// first message that is not TLS. The session tells the two apart with a TLS ClientHello.
class SaslConnectionClosed : public Hs2Error {
 public:
  SaslConnectionClosed(const std::string& message, std::string transport_error)
      : Hs2Error(Hs2ErrorKind::kAuth, message), transport_error_(std::move(transport_error)) {}
  // Thrift's words for the hang-up, e.g. "No more data to read."
  const std::string& transport_error() const { return transport_error_; }

 private:
  std::string transport_error_;
};

// A negotiation reply that no SASL server sends: a status byte other than OK, BAD, ERROR or
// COMPLETE, a length past the limit, or a message cut short (the connection closed, or -t ran
// out, inside it). The server does not speak HS2's SASL: another service, or the wrong port. The
// message says what came, without the endpoint, which the session adds:
//   "it answers the SASL handshake with a message of 4294967295 bytes, which no SASL server sends"
// (kMismatch, exit 4: not an authentication failure.)
class SaslNotSasl : public Hs2Error {
 public:
  explicit SaslNotSasl(const std::string& what) : Hs2Error(Hs2ErrorKind::kMismatch, what) {}
};

class SaslClientTransport
    : public apache::thrift::transport::TVirtualTransport<SaslClientTransport> {
 public:
  // `service` and `host` name the server to Cyrus (Impala's service name is "impala").
  SaslClientTransport(std::shared_ptr<apache::thrift::transport::TTransport> inner,
                      std::unique_ptr<SaslMechanism> mechanism, std::string service,
                      std::string host);
  ~SaslClientTransport() override;

  bool isOpen() const override;
  bool peek() override;
  void open() override;
  void close() override;
  uint32_t read(uint8_t* buf, uint32_t len);
  void write(const uint8_t* buf, uint32_t len);
  void flush() override;

 private:
  void negotiate();
  // The server's next negotiation message; SaslNotSasl when it is none. A connection closed (or
  // silent) before its first byte stays a TTransportException: Impala's way of refusing.
  std::pair<SaslStatus, std::string> read_reply();
  void dispose_connection() noexcept;

  std::shared_ptr<apache::thrift::transport::TTransport> inner_;
  std::unique_ptr<SaslMechanism> mechanism_;
  std::string service_, host_;
  sasl_conn_t* conn_ = nullptr;
  bool negotiated_ = false;
  std::vector<std::uint8_t> rbuf_;
  std::size_t rpos_ = 0;
  std::vector<std::uint8_t> wbuf_;
};

}  // namespace atlas2kudu
