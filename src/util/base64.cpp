#include "util/base64.h"

#include <fmt/core.h>
#include <openssl/evp.h>

#include <array>
#include <cstdint>

namespace atlas2kudu {

namespace {

// The value of each byte in either alphabet, -1 for bytes in neither.
constexpr std::array<std::int8_t, 256> kDecodeTable = [] {
  std::array<std::int8_t, 256> t{};
  t.fill(-1);
  constexpr std::string_view kStandard =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (std::size_t i = 0; i < kStandard.size(); ++i) {
    t[static_cast<unsigned char>(kStandard[i])] = static_cast<std::int8_t>(i);
  }
  t['-'] = 62;
  t['_'] = 63;
  return t;
}();

bool is_whitespace(unsigned char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

}  // namespace

std::string base64_encode(std::string_view data) {
  std::string out((data.size() + 2) / 3 * 4 + 1, '\0');  // EVP_EncodeBlock adds a NUL
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()),
                                static_cast<int>(data.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  std::uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (is_whitespace(c)) continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    const int v = kDecodeTable[c];
    if (v < 0 || padding) {
      throw DecodeError(DecodeError::Kind::kMalformed,
                        fmt::format("invalid Base64 at character {}", i));
    }
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace atlas2kudu
