// Base64 (RFC 4648, standard alphabet, '=' padding).
#pragma once

#include <string>
#include <string_view>

namespace atlas2kudu {

// Standard Base64 of `data`, padded (OpenSSL's EVP_EncodeBlock).
std::string base64_encode(std::string_view data);

}  // namespace atlas2kudu
