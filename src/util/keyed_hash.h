// Keyed hashing for hash tables whose keys come from the input: SipHash-1-3 under a random key
// drawn once per process.
//
// Guids, qualifiedName digests, tag names and edge labels are chosen by whoever wrote the export.
// With an unkeyed hash (or one that is trivially invertible, as a mix of the guid's bytes is), a
// crafted set of keys lands in one bucket and every table lookup turns linear: 40,000 such guids
// took 30 s to fold instead of 0.3 s. SipHash is a pseudo-random function of its 128-bit key, so
// without the key nobody can predict which keys collide. The key is random per process, which
// makes the iteration order of our hash tables random too: nothing that reaches the output may
// depend on it (the planner sorts every row list; a test compiles the same input in several
// processes and compares the SQL).
//
// SipHash-1-3 (one compression round per 8-byte word, three to finish) rather than the paper's
// conservative SipHash-2-4: it is what CPython's str/bytes hash (since 3.11) and Rust's HashMap
// use for this same purpose, hash-flooding resistance of in-memory tables, where an attacker only
// sees timing, never a hash value. It costs 6 rounds for a guid instead of 10; the fold hashes a
// guid or a digest for nearly every table lookup of every event.
//
//   SipHasher h(process_hash_key());
//   h.update(guid.bytes.data(), 16).update(label);
//   std::size_t bucket_hash = h.finish();
//
//   siphash13({0x0706050403020100, 0x0f0e0d0c0b0a0908}, "\x00\x01...\x0e" (15 bytes))
//       == 0xd320d86d2a519956   // the reference vector (key 00..0f, message 00..0e)
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace atlas2kudu {

// The 128-bit key as two little-endian 64-bit words (k0 = key bytes 0-7, k1 = bytes 8-15).
struct SipKey {
  std::uint64_t k0 = 0;
  std::uint64_t k1 = 0;
};

namespace sip {

// The four words of SipHash's state, with its steps (1 round per word, 3 to finish); the streaming
// SipHasher and the inline 16-byte hash below are both made of them.
struct State {
  std::uint64_t v0, v1, v2, v3;

  explicit State(const SipKey& key)
      : v0(key.k0 ^ 0x736f6d6570736575ULL),
        v1(key.k1 ^ 0x646f72616e646f6dULL),
        v2(key.k0 ^ 0x6c7967656e657261ULL),
        v3(key.k1 ^ 0x7465646279746573ULL) {}

  static constexpr std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  // One 8-byte word of the message (little-endian), with its compression round.
  void compress(std::uint64_t m) {
    v3 ^= m;
    round();
    v0 ^= m;
  }
  // `last`: the remaining bytes with the length modulo 256 in its top byte.
  std::uint64_t finish(std::uint64_t last) {
    compress(last);
    v2 ^= 0xff;
    for (int i = 0; i < 3; ++i) round();
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

}  // namespace sip

// SipHash-1-3 (SipHash: Aumasson and Bernstein, 2012) over bytes fed in any number of pieces: the
// result depends only on the concatenation.
class SipHasher {
 public:
  explicit SipHasher(const SipKey& key) : state_(key) {}
  SipHasher& update(const void* data, std::size_t size);
  SipHasher& update(std::string_view bytes) { return update(bytes.data(), bytes.size()); }
  std::uint64_t finish() const {
    sip::State s = state_;
    return s.finish(tail_ | (static_cast<std::uint64_t>(total_ & 0xff) << 56));
  }

 private:
  sip::State state_;
  std::uint64_t tail_ = 0;  // bytes not yet compressed, little-endian
  std::size_t total_ = 0;   // bytes fed so far
};

std::uint64_t siphash13(const SipKey& key, std::string_view bytes);

// siphash13(key, 16 bytes at p), inline and without the streaming state: guids and qualifiedName
// digests are 16 bytes, and the fold hashes one for nearly every table lookup of every event.
inline std::uint64_t siphash13_16(const SipKey& key, const void* p) {
  std::uint64_t m0, m1;
  std::memcpy(&m0, p, 8);  // little-endian words, as SipHash reads them (x86-64, aarch64)
  std::memcpy(&m1, static_cast<const char*>(p) + 8, 8);
  if constexpr (std::endian::native == std::endian::big) {
    m0 = __builtin_bswap64(m0);
    m1 = __builtin_bswap64(m1);
  }
  sip::State s(key);
  s.compress(m0);
  s.compress(m1);
  return s.finish(std::uint64_t{16} << 56);
}

// The process's key: drawn from the kernel's random source (getrandom) on first use, then fixed.
const SipKey& process_hash_key();

// siphash13 under process_hash_key().
std::uint64_t keyed_hash(std::string_view bytes);

// For unordered containers keyed by text: std::hash<std::string> is a fixed public function.
struct KeyedStringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return keyed_hash(s); }
  std::size_t operator()(const std::string& s) const noexcept { return keyed_hash(s); }
};

}  // namespace atlas2kudu
