// Hashes that give projection rows stable keys.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace atlas2kudu {

using Sha256 = std::array<std::uint8_t, 32>;
using Digest16 = std::array<std::uint8_t, 16>;

Sha256 sha256(std::string_view data);

// SHA-256 fed in pieces, whose digest of what it was fed so far may be taken at any point while
// feeding goes on; copies are cheap (no allocation), to keep the state at some point:
//   Sha256Stream s;  s.update("ab");  s.update("c");  s.digest() == sha256("abc")
class Sha256Stream {
 public:
  Sha256Stream();
  void update(std::string_view data);
  Sha256 digest() const;

 private:
  alignas(8) std::array<std::uint8_t, 112> state_;  // OpenSSL's SHA256_CTX
};

// The contract's secondary key: first 16 bytes of SHA-256(type_name || 0x1F || qualified_name),
// over the UTF-8 bytes as given. Example:
//   qn_digest("hive_table", "default.customers@cl1") -> db0ed8217c95acb8134ac87cca0d782a
Digest16 qn_digest(std::string_view type_name, std::string_view qualified_name);

// The first 8 bytes of SHA-256(data), big-endian, as a signed 64-bit value (entity_audit's seq).
std::int64_t sha256_prefix_i64(std::string_view data);

// Lowercase hex of arbitrary bytes.
std::string to_hex(const std::uint8_t* data, std::size_t size);
template <std::size_t N>
std::string to_hex(const std::array<std::uint8_t, N>& bytes) {
  return to_hex(bytes.data(), N);
}

}  // namespace atlas2kudu
