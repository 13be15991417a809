// The client side of Thrift's SASL transport as Impala speaks it (research §B.3), with Cyrus
// libsasl2 doing the mechanism. Thrift 0.17's C++ library has none.
//
// Negotiation message: 1 status byte (START=1 OK=2 BAD=3 ERROR=4 COMPLETE=5) + 4-byte big-endian
// length + payload. We send START("PLAIN"), then OK(initial response), then answer each OK until
// the server says COMPLETE. Afterwards every flush() sends one frame (4-byte big-endian length +
// payload); reads concatenate frame payloads, because the server may split one reply into several
// frames and a frame may arrive split across TCP reads.
//
// No security layer is negotiated: Impala never wraps, so confidentiality comes from TLS below.
//
// Example:
//   auto sock = std::make_shared<TSocket>("db1", 21050);
//   auto sasl = std::make_shared<SaslClientTransport>(sock, "PLAIN", "impala", "db1", "alice",
//                                                     password);
//   sasl->open();   // throws Hs2Error(kAuth) "SASL authentication failed: ..." if rejected
#pragma once

#include <thrift/transport/TVirtualTransport.h>

#include <memory>
#include <string>
#include <vector>

namespace atlas2kudu {

enum class SaslStatus : std::uint8_t { kStart = 1, kOk = 2, kBad = 3, kError = 4, kComplete = 5 };

// Shared by client and test server: writes/reads one negotiation message.
void write_sasl_message(apache::thrift::transport::TTransport& t, SaslStatus status,
                        const std::string& payload);
// Throws TTransportException(END_OF_FILE) on EOF; rejects payloads above `max_len`.
std::pair<SaslStatus, std::string> read_sasl_message(apache::thrift::transport::TTransport& t,
                                                     std::uint32_t max_len = 1u << 20);

class SaslClientTransport
    : public apache::thrift::transport::TVirtualTransport<SaslClientTransport> {
 public:
  SaslClientTransport(std::shared_ptr<apache::thrift::transport::TTransport> inner,
                      std::string mechanism, std::string service, std::string host,
                      std::string user, std::string password);
  ~SaslClientTransport() override;

  bool isOpen() const override;
  bool peek() override;
  void open() override;
  void close() override;
  uint32_t read(uint8_t* buf, uint32_t len);
  void write(const uint8_t* buf, uint32_t len);
  void flush() override;

  // Exposed for the Cyrus callbacks (C linkage cannot reach private members).
  struct Secrets;

 private:
  void negotiate();

  std::shared_ptr<apache::thrift::transport::TTransport> inner_;
  std::string mechanism_, service_, host_;
  std::unique_ptr<Secrets> secrets_;
  bool negotiated_ = false;
  std::vector<std::uint8_t> rbuf_;
  std::size_t rpos_ = 0;
  std::vector<std::uint8_t> wbuf_;
};

}  // namespace atlas2kudu
