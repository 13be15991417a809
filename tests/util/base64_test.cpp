// Base64: the encoder the reject file uses and the lenient decoder GZIP messages need.
#include "util/base64.h"

#include <doctest/doctest.h>

#include <string>

TEST_SUITE_BEGIN("base64");

using namespace atlas2kudu;

namespace {

// The 0-based character index a malformed text is reported at.
std::string decode_failure(std::string_view text) {
  try {
    base64_decode(text);
  } catch (const DecodeError& e) {
    CHECK(e.kind() == DecodeError::Kind::kMalformed);
    return e.what();
  }
  return "decoded";
}

}  // namespace

TEST_CASE("the standard alphabet, padded or not") {
  CHECK(base64_decode("aGVsbG8=") == "hello");
  CHECK(base64_decode("aGVsbG8") == "hello");
  CHECK(base64_decode("aGVsbA==") == "hell");
  CHECK(base64_decode("aGVsbA") == "hell");
  CHECK(base64_decode("") == "");
  CHECK(base64_decode("+/8=") == "\xfb\xff");
}

TEST_CASE("the URL-safe alphabet decodes like the standard one") {
  CHECK(base64_decode("-_8=") == "\xfb\xff");
  CHECK(base64_decode("-_8=") == base64_decode("+/8="));
  CHECK(base64_decode("a-_b") == base64_decode("a+/b"));
}

TEST_CASE("whitespace anywhere is skipped") {
  CHECK(base64_decode("aGVs\nbG8") == "hello");
  CHECK(base64_decode(" aG\tVs\r\nbG8=\n") == "hello");
  CHECK(base64_decode("aGVsbG8=\n") == "hello");
}

TEST_CASE("bad characters are reported at their index in the text") {
  CHECK(decode_failure("aGV*") == "invalid Base64 at character 3");
  CHECK(decode_failure("H4sI!!!!") == "invalid Base64 at character 4");
  CHECK(decode_failure("aG\nV.") == "invalid Base64 at character 4");  // whitespace counts
  CHECK(decode_failure("aGVs\xc3\xa9") == "invalid Base64 at character 4");
  CHECK(decode_failure(std::string_view("aG\0V", 4)) == "invalid Base64 at character 2");
  // Data after padding is not Base64 either.
  CHECK(decode_failure("aGVsbA==bG8=") == "invalid Base64 at character 8");
}

TEST_CASE("decode inverts encode for every byte value") {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3},
                        std::size_t{255}, std::size_t{256}}) {
    CAPTURE(n);
    const std::string bytes = all.substr(0, n);
    CHECK(base64_decode(base64_encode(bytes)) == bytes);
  }
  CHECK(base64_encode("hello") == "aGVsbG8=");
}

TEST_SUITE_END();
