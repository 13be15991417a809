#include "hs2/sasl_transport.h"

#include <fmt/core.h>
#include <sasl/sasl.h>
#include <thrift/transport/TTransportException.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "hs2/error.h"
#include "util/utf8.h"

namespace atlas2kudu {

using apache::thrift::transport::TTransport;
using apache::thrift::transport::TTransportException;

namespace {

void put_be32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

std::uint32_t get_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// sasl_client_init is process-global and not thread-safe; sessions connect concurrently.
// Cyrus keeps global mechanism lists and, unless the application installs mutex callbacks,
// does not lock them. Sessions negotiate concurrently (--sessions N), so every call into Cyrus is
// made under this lock; negotiation is a few calls per connection, never on the data path.
std::mutex& cyrus_mutex() {
  static std::mutex mu;
  return mu;
}

void init_cyrus_once() {
  static std::once_flag once;
  static int rc = SASL_OK;
  std::call_once(once, [] { rc = sasl_client_init(nullptr); });
  if (rc != SASL_OK)
    throw Hs2Error(Hs2ErrorKind::kInternal, fmt::format("SASL: sasl_client_init failed: {}",
                                                        sasl_errstring(rc, nullptr, nullptr)));
}

// Reads `len` bytes into `buf` from `got` on, fewer only at end of file; `got` counts them as
// they come, so that a caller that catches a timeout knows how far the reply came.
void read_counted(TTransport& t, std::uint8_t* buf, std::uint32_t len, std::uint32_t& got) {
  while (got < len) {
    const std::uint32_t n = t.read(buf + got, len - got);
    if (n == 0) return;
    got += n;
  }
}

// The longest negotiation message read: GSSAPI's tokens are a few KiB, PLAIN's replies empty.
constexpr std::uint32_t kMaxSaslMessage = std::uint32_t{1} << 20;

}  // namespace

void write_sasl_message(TTransport& t, SaslStatus status, std::string_view payload) {
  std::uint8_t header[5];
  header[0] = static_cast<std::uint8_t>(status);
  put_be32(header + 1, static_cast<std::uint32_t>(payload.size()));
  t.write(header, sizeof header);
  if (!payload.empty())
    t.write(reinterpret_cast<const std::uint8_t*>(payload.data()),
            static_cast<std::uint32_t>(payload.size()));
  t.flush();
}

std::pair<SaslStatus, std::string> read_sasl_message(TTransport& t, std::uint32_t max_len) {
  std::uint8_t header[5];
  t.readAll(header, sizeof header);  // readAll loops over short reads, throws on EOF
  std::uint32_t len = get_be32(header + 1);
  if (len > max_len)
    throw TTransportException(TTransportException::CORRUPTED_DATA,
                              fmt::format("SASL: negotiation message of {} bytes", len));
  std::string payload(len, '\0');
  if (len) t.readAll(reinterpret_cast<std::uint8_t*>(payload.data()), len);
  return {static_cast<SaslStatus>(header[0]), std::move(payload)};
}

std::string SaslMechanism::failure_message(SaslFailure failure, std::string_view detail) const {
  switch (failure) {
    case SaslFailure::kNoMechanism:
      return fmt::format("SASL {}: Cyrus SASL has no plugin for it: {}", name(), detail);
    case SaslFailure::kClient:
      return fmt::format("SASL {}: {}", name(), detail);
    case SaslFailure::kServerRefused:
      // The server's own words, on one line and with no byte that a terminal would act on.
      return fmt::format("SASL {} authentication failed: server said: {}", name(),
                         detail.empty() ? "(no reason)" : joined_lines(detail));
    case SaslFailure::kConnectionClosed:
      break;
  }
  // Impala closes the connection without BAD/ERROR when the password is wrong.
  return fmt::format(
      "SASL {} authentication failed (connection closed during SASL negotiation: {})", name(),
      detail);
}

SaslClientTransport::SaslClientTransport(std::shared_ptr<TTransport> inner,
                                         std::unique_ptr<SaslMechanism> mechanism,
                                         std::string service, std::string host)
    : inner_(std::move(inner)),
      mechanism_(std::move(mechanism)),
      service_(std::move(service)),
      host_(std::move(host)) {}

SaslClientTransport::~SaslClientTransport() {
  dispose_connection();  // before mechanism_, whose callbacks Cyrus may still hold
}

void SaslClientTransport::dispose_connection() noexcept {
  if (conn_) {
    std::lock_guard lock(cyrus_mutex());
    sasl_dispose(&conn_);
  }
}

bool SaslClientTransport::isOpen() const {
  return negotiated_ && inner_->isOpen();
}

bool SaslClientTransport::peek() {
  return rpos_ < rbuf_.size() || inner_->peek();
}

void SaslClientTransport::open() {
  if (!inner_->isOpen()) inner_->open();
  try {
    negotiate();
  } catch (const TTransportException& e) {
    inner_->close();
    throw SaslConnectionClosed(
        mechanism_->failure_message(SaslFailure::kConnectionClosed, e.what()), e.what());
  } catch (...) {
    inner_->close();
    throw;
  }
  negotiated_ = true;
}

void SaslClientTransport::negotiate() {
  mechanism_->prepare();  // outside the Cyrus lock: other sessions negotiate meanwhile
  init_cyrus_once();
  const char* mechanism = mechanism_->name();
  std::unique_lock lock(cyrus_mutex());
  if (conn_) sasl_dispose(&conn_);
  int rc = sasl_client_new(service_.c_str(), host_.c_str(), nullptr, nullptr,
                           mechanism_->callbacks(), 0, &conn_);
  if (rc != SASL_OK)
    throw Hs2Error(Hs2ErrorKind::kInternal, fmt::format("SASL: sasl_client_new failed: {}",
                                                        sasl_errstring(rc, nullptr, nullptr)));
  sasl_security_properties_t props{};
  props.min_ssf = 0;
  props.max_ssf = 0;  // no security layer: Impala never wraps frames
  props.maxbufsize = 0;
  props.security_flags = 0;
  sasl_setprop(conn_, SASL_SEC_PROPS, &props);

  const char* out = nullptr;
  unsigned out_len = 0;
  const char* chosen = nullptr;
  rc = sasl_client_start(conn_, mechanism, nullptr, &out, &out_len, &chosen);
  if (rc != SASL_OK && rc != SASL_CONTINUE) {
    const std::string detail = sasl_errdetail(conn_);
    lock.unlock();  // failure_message may take time (GSSAPI may ask the KDC)
    throw Hs2Error(
        Hs2ErrorKind::kAuth,
        mechanism_->failure_message(
            rc == SASL_NOMECH ? SaslFailure::kNoMechanism : SaslFailure::kClient, detail));
  }
  lock.unlock();
  write_sasl_message(*inner_, SaslStatus::kStart, mechanism);
  try {
    // The initial response (for PLAIN: the password) is written straight from Cyrus's buffer, so
    // no copy of it is made here.
    write_sasl_message(*inner_, SaslStatus::kOk, std::string_view(out ? out : "", out_len));
  } catch (const TTransportException&) {
    // A server that refuses the mechanism answers START with BAD and closes the connection, maybe
    // before the initial response arrives: its answer may still be waiting to be read.
    auto [status, payload] = read_reply();  // throws again if there is none
    if (status == SaslStatus::kBad || status == SaslStatus::kError)
      throw Hs2Error(Hs2ErrorKind::kAuth,
                     mechanism_->failure_message(SaslFailure::kServerRefused, payload));
    throw;
  }
  for (;;) {
    auto [status, payload] = read_reply();
    switch (status) {
      case SaslStatus::kComplete:
        return;
      case SaslStatus::kOk: {
        std::string detail;
        {
          std::lock_guard step_lock(cyrus_mutex());
          rc = sasl_client_step(conn_, payload.data(), static_cast<unsigned>(payload.size()),
                                nullptr, &out, &out_len);
          if (rc != SASL_OK && rc != SASL_CONTINUE) detail = sasl_errdetail(conn_);
        }
        if (rc != SASL_OK && rc != SASL_CONTINUE)
          throw Hs2Error(Hs2ErrorKind::kAuth,
                         mechanism_->failure_message(SaslFailure::kClient, detail));
        write_sasl_message(*inner_, SaslStatus::kOk, std::string_view(out ? out : "", out_len));
        break;
      }
      case SaslStatus::kBad:
      case SaslStatus::kError:
        throw Hs2Error(Hs2ErrorKind::kAuth,
                       mechanism_->failure_message(SaslFailure::kServerRefused, payload));
      case SaslStatus::kStart:  // read_reply lets no START through
        throw Hs2Error(Hs2ErrorKind::kInternal, "SASL: a START message from the server");
    }
  }
}

std::pair<SaslStatus, std::string> SaslClientTransport::read_reply() {
  std::uint8_t header[5];
  std::uint32_t got = 0;
  std::string payload;
  std::uint32_t payload_got = 0;
  // What came before the reply stopped, for the message of a message cut short.
  const auto cut_short = [&](std::string_view then) {
    return got < sizeof header
               ? SaslNotSasl(fmt::format("it answers the SASL handshake with a message cut short "
                                         "({} bytes of its 5-byte header, then: {})",
                                         got, then))
               : SaslNotSasl(fmt::format("it answers the SASL handshake with a message cut short "
                                         "({} of its {} bytes, then: {})",
                                         payload_got, payload.size(), then));
  };
  try {
    read_counted(*inner_, header, sizeof header, got);
    if (got == 0) {
      // The hang-up with which Impala refuses a password or ticket.
      throw TTransportException(TTransportException::END_OF_FILE, "No more data to read.");
    }
    if (got < sizeof header) throw cut_short("the connection closed");
    const std::uint8_t status = header[0];
    const std::uint32_t len = get_be32(header + 1);
    if (!server_sasl_status(status)) {
      throw SaslNotSasl(fmt::format(
          "it answers the SASL handshake with bytes that are not SASL ('{}'...)",
          one_line(std::string_view(reinterpret_cast<const char*>(header), sizeof header))));
    }
    if (len > kMaxSaslMessage) {
      throw SaslNotSasl(fmt::format(
          "it answers the SASL handshake with a message of {} bytes, which no SASL server sends",
          len));
    }
    payload.assign(len, '\0');
    read_counted(*inner_, reinterpret_cast<std::uint8_t*>(payload.data()), len, payload_got);
    if (payload_got < len) throw cut_short("the connection closed");
    return {static_cast<SaslStatus>(status), std::move(payload)};
  } catch (const TTransportException& e) {
    if (got == 0) throw;
    throw cut_short(e.what());
  }
}

void SaslClientTransport::close() {
  negotiated_ = false;
  rbuf_.clear();
  rpos_ = 0;
  wbuf_.clear();
  inner_->close();
}

uint32_t SaslClientTransport::read(uint8_t* buf, uint32_t len) {
  while (rpos_ == rbuf_.size()) {  // skips empty frames: returning 0 would read as EOF
    // Next frame: 4-byte length, then the payload; readAll handles splits across TCP reads.
    std::uint8_t header[4];
    inner_->readAll(header, 4);
    std::uint32_t frame = get_be32(header);
    if (frame > (std::uint32_t{1} << 30))
      throw TTransportException(TTransportException::CORRUPTED_DATA,
                                fmt::format("SASL: frame of {} bytes", frame));
    rbuf_.resize(frame);
    rpos_ = 0;
    if (frame) inner_->readAll(rbuf_.data(), frame);
  }
  uint32_t n = static_cast<uint32_t>(std::min<std::size_t>(len, rbuf_.size() - rpos_));
  std::memcpy(buf, rbuf_.data() + rpos_, n);
  rpos_ += n;
  return n;
}

void SaslClientTransport::write(const uint8_t* buf, uint32_t len) {
  wbuf_.insert(wbuf_.end(), buf, buf + len);
}

void SaslClientTransport::flush() {
  // One frame per Thrift message (the protocol flushes once per call).
  std::uint8_t header[4];
  put_be32(header, static_cast<std::uint32_t>(wbuf_.size()));
  std::vector<std::uint8_t> out;
  out.swap(wbuf_);
  inner_->write(header, 4);
  if (!out.empty()) inner_->write(out.data(), static_cast<std::uint32_t>(out.size()));
  inner_->flush();
}

}  // namespace atlas2kudu
