// Base64 (RFC 4648, '=' padding).
//
// Encoding writes the standard alphabet. Decoding reads what Atlas's own decoder (Apache
// commons-codec) writes and accepts: like it, it takes both the standard ("+/") and the URL-safe
// ("-_") alphabet and skips whitespace anywhere. Padding is optional and leftover bits of an
// incomplete last group are dropped; any other byte, or data after '=' padding, is an error.
//
//   base64_encode("hello")       -> "aGVsbG8="
//   base64_decode("aGVs\nbG8")   -> "hello"
//   base64_decode("-_8=")        -> "\xfb\xff" (same as "+/8=")
//   base64_decode("aGV*")        -> throws DecodeError(kMalformed, "invalid Base64 at character 3")
#pragma once

#include <string>
#include <string_view>

#include "util/decode_error.h"

namespace atlas2kudu {

// Standard Base64 of `data`, padded (OpenSSL's EVP_EncodeBlock).
std::string base64_encode(std::string_view data);

// The bytes `text` encodes. Throws DecodeError(kMalformed) naming the 0-based index in `text` of
// the first character outside both alphabets, or of the first non-'=' character after padding.
std::string base64_decode(std::string_view text);

}  // namespace atlas2kudu
