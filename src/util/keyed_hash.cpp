#include "util/keyed_hash.h"

#include <sys/random.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

namespace atlas2kudu {

namespace {

SipKey random_key() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      break;
    }
  }
  if (got < sizeof bytes) {
    // No getrandom (very old kernels): std::random_device, mixed with the clock.
    std::random_device device;
    for (std::size_t i = got; i < sizeof bytes; ++i)
      bytes[i] = static_cast<unsigned char>(device());
    const auto now =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    for (std::size_t i = 0; i < 8; ++i) bytes[i] ^= static_cast<unsigned char>(now >> (8 * i));
  }
  SipKey key;
  std::memcpy(&key.k0, bytes, 8);
  std::memcpy(&key.k1, bytes + 8, 8);
  return key;
}

}  // namespace

SipHasher& SipHasher::update(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::size_t fill = total_ % 8;
  total_ += size;
  // Complete a word started by an earlier update.
  while (fill != 0 && size > 0) {
    tail_ |= std::uint64_t{*p++} << (8 * fill);
    --size;
    if (++fill == 8) {
      state_.compress(tail_);
      tail_ = 0;
      fill = 0;
    }
  }
  for (; size >= 8; size -= 8, p += 8) {
    std::uint64_t m = 0;
    for (int i = 0; i < 8; ++i) m |= std::uint64_t{p[i]} << (8 * i);
    state_.compress(m);
  }
  for (std::size_t i = 0; i < size; ++i) tail_ |= std::uint64_t{p[i]} << (8 * (fill + i));
  return *this;
}

std::uint64_t siphash13(const SipKey& key, std::string_view bytes) {
  return SipHasher(key).update(bytes).finish();
}

const SipKey& process_hash_key() {
  static const SipKey key = random_key();
  return key;
}

std::uint64_t keyed_hash(std::string_view bytes) {
  return siphash13(process_hash_key(), bytes);
}

}  // namespace atlas2kudu
