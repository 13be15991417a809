#include "util/keyed_hash.h"

#include <doctest/doctest.h>

#include <string>

TEST_SUITE_BEGIN("keyed_hash");

using namespace atlas2kudu;

namespace {

// The key of the SipHash paper's test vector: bytes 00 01 ... 0f.
constexpr SipKey kPaperKey{0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};

// Bytes 00 01 ... n-1, the messages of the SipHash test vectors.
std::string counting_bytes(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(i));
  return s;
}

}  // namespace

TEST_CASE("SipHash-2-4 gives the SipHash paper's test vector (appendix A)") {
  CHECK(siphash24(kPaperKey, counting_bytes(15)) == 0xa129ca6149be45e5ULL);
}

TEST_CASE("SipHash-2-4 gives the reference vectors for the empty, 1- and 8-byte messages") {
  // From the authors' reference test vectors (64-bit output, key 00..0f, message 00..n-1).
  CHECK(siphash24(kPaperKey, "") == 0x726fdb47dd0e0e31ULL);
  CHECK(siphash24(kPaperKey, counting_bytes(1)) == 0x74f839c593dc67fdULL);
  CHECK(siphash24(kPaperKey, counting_bytes(8)) == 0x93f5f5799a932462ULL);
}

TEST_CASE("feeding the bytes in pieces gives the hash of their concatenation") {
  const std::string all = counting_bytes(63);
  const std::uint64_t whole = siphash24(kPaperKey, all);
  for (std::size_t cut1 = 0; cut1 <= all.size(); cut1 += 5) {
    for (std::size_t cut2 = cut1; cut2 <= all.size(); cut2 += 7) {
      SipHasher h(kPaperKey);
      h.update(all.substr(0, cut1)).update(all.substr(cut1, cut2 - cut1)).update(all.substr(cut2));
      CHECK(h.finish() == whole);
    }
  }
}

TEST_CASE("the 16-byte SipHash is the streaming one's, for guids and digests") {
  // The reference vector for the 16-byte message 00..0f (output bytes db 9b c2 57 7f cc 2a 3f).
  CHECK(siphash24_16(kPaperKey, counting_bytes(16).data()) == 0x3f2acc7f57c29bdbULL);
  CHECK(siphash24(kPaperKey, counting_bytes(16)) == 0x3f2acc7f57c29bdbULL);
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 1000; ++i) {
    unsigned char bytes[16];
    for (unsigned char& b : bytes) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      b = static_cast<unsigned char>(x >> 56);
    }
    const SipKey key{x, ~x};
    CHECK(siphash24_16(key, bytes) ==
          siphash24(key, std::string_view(reinterpret_cast<const char*>(bytes), 16)));
  }
}

TEST_CASE("the process key is fixed within a process and not the zero key") {
  const SipKey& a = process_hash_key();
  const SipKey& b = process_hash_key();
  CHECK(&a == &b);
  CHECK((a.k0 != 0 || a.k1 != 0));
  CHECK(keyed_hash("guid") == keyed_hash(std::string("guid")));
  CHECK(keyed_hash("guid") == siphash24(a, "guid"));
  CHECK(keyed_hash("guid") != siphash24(SipKey{}, "guid"));
}

TEST_SUITE_END();
