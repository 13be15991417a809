#include "util/digest.h"

#include <openssl/evp.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace atlas2kudu {

namespace {

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
struct MdDeleter {
  void operator()(EVP_MD* md) const { EVP_MD_free(md); }
};

// SHA-256 runs once or twice per event (audit seq, qn_digest). OpenSSL 3 looks the algorithm up
// in its provider tables on every EVP_sha256() init, which cost more than hashing a short text:
// the implementation is fetched once per process, and each thread reuses one context.
EVP_MD_CTX* sha256_context() {
  static const std::unique_ptr<EVP_MD, MdDeleter> md(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  thread_local const std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  if (!md || !ctx || EVP_DigestInit_ex(ctx.get(), md.get(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 initialisation failed");
  }
  return ctx.get();
}

// Feeds each part in order into one SHA-256 computation.
template <typename... Parts>
Sha256 sha256_of(Parts... parts) {
  EVP_MD_CTX* ctx = sha256_context();
  bool ok = true;
  ((ok = ok && EVP_DigestUpdate(ctx, parts.data(), parts.size()) == 1), ...);
  Sha256 out{};
  unsigned int len = 0;
  if (!ok || EVP_DigestFinal_ex(ctx, out.data(), &len) != 1 || len != out.size()) {
    throw std::runtime_error("OpenSSL SHA-256 failed");
  }
  return out;
}

}  // namespace

Sha256 sha256(std::string_view data) {
  return sha256_of(data);
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
