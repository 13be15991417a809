#include "util/digest.h"

// SHA256_Init/Update/Final are deprecated since OpenSSL 3.0 in favour of EVP_Digest*, and kept in
// libcrypto (the default provider's SHA-256 is built on them). They are used here because each
// EVP_DigestInit_ex frees and allocates the provider's context again: on this tool's texts that
// cost 200-300 ns per hash, about the time SHA-256 of a 60-byte qualified name takes itself
// (measured with OpenSSL 3.0.x on SHA-NI: 510 against 260 ns at 60 bytes, 1,250 against 1,060 ns
// at 640 bytes; bench/RESULTS.md, issue 10 part six). Running once or twice per event, that was
// several per cent of `check`.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace atlas2kudu {

namespace {

// Feeds each part in order into one SHA-256 computation.
template <typename... Parts>
Sha256 sha256_of(Parts... parts) {
  SHA256_CTX ctx;
  bool ok = SHA256_Init(&ctx) == 1;
  ((ok = ok && SHA256_Update(&ctx, parts.data(), parts.size()) == 1), ...);
  Sha256 out{};
  if (!ok || SHA256_Final(out.data(), &ctx) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 failed");
  }
  return out;
}

}  // namespace

Sha256 sha256(std::string_view data) {
  return sha256_of(data);
}

static_assert(sizeof(SHA256_CTX) == 112 && alignof(SHA256_CTX) <= 8);

Sha256Stream::Sha256Stream() {
  if (SHA256_Init(reinterpret_cast<SHA256_CTX*>(state_.data())) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 failed");
  }
}

void Sha256Stream::update(std::string_view data) {
  if (SHA256_Update(reinterpret_cast<SHA256_CTX*>(state_.data()), data.data(), data.size()) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 failed");
  }
}

Sha256 Sha256Stream::digest() const {
  SHA256_CTX copy;
  std::memcpy(&copy, state_.data(), sizeof copy);
  Sha256 out{};
  if (SHA256_Final(out.data(), &copy) != 1) throw std::runtime_error("OpenSSL SHA-256 failed");
  return out;
}

Digest16 qn_digest(std::string_view type_name, std::string_view qualified_name) {
  const Sha256 full = sha256_of(type_name, std::string_view("\x1f", 1), qualified_name);
  Digest16 out{};
  std::copy_n(full.begin(), out.size(), out.begin());
  return out;
}

std::int64_t sha256_prefix_i64(std::string_view data) {
  const Sha256 full = sha256(data);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | full[i];
  return static_cast<std::int64_t>(v);
}

std::string to_hex(const std::uint8_t* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(size * 2, '\0');
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 0xf];
  }
  return out;
}

}  // namespace atlas2kudu
