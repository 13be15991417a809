// DecodeError: bytes in an encoding (Base64, gzip) that do not decode, or that decode to more
// than the caller allows. The util layer knows nothing about records or rejections, so it says
// only what is wrong with the bytes; the input layer catches the error and rejects the record that
// carried them, naming the field ("message: invalid Base64 at character 4").
//
//   try {
//     gunzip(bytes, 65536, out);
//   } catch (const DecodeError& e) {
//     // e.kind() == DecodeError::Kind::kTooLarge
//     // e.what() == "decompresses to more than 65536 bytes"
//   }
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace atlas2kudu {

class DecodeError : public std::runtime_error {
 public:
  enum class Kind : std::uint8_t {
    kMalformed,  // not valid in the encoding: a bad character, a corrupt or truncated stream
    kTooLarge,   // valid so far, but the decoded bytes would pass the caller's limit
  };

  DecodeError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace atlas2kudu
