// gunzip: inflating GZIP messages in memory without letting a bomb take more than the limit.
#include "util/gzip.h"

#include <doctest/doctest.h>

#include <string>

#include "gzip_compress.h"

TEST_SUITE_BEGIN("gzip");

using namespace atlas2kudu;
using atlas2kudu::testing::gzip_compress;

namespace {

DecodeError gunzip_failure(std::string_view data, std::size_t max_bytes, std::string& out) {
  try {
    gunzip(data, max_bytes, out);
  } catch (const DecodeError& e) {
    return e;
  }
  FAIL("gunzip succeeded");
  return DecodeError(DecodeError::Kind::kMalformed, "");
}

}  // namespace

TEST_CASE("a gzip stream inflates to its text") {
  std::string out = "previous content";
  gunzip(gzip_compress("hello, world"), 1 << 20, out);
  CHECK(out == "hello, world");
  gunzip(gzip_compress(""), 1 << 20, out);
  CHECK(out.empty());
}

TEST_CASE("output larger than the first guess grows to fit") {
  // The first buffer is four times the input; text that compresses well outgrows it many times.
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "row " + std::to_string(i % 7) + ";";
  std::string out;
  gunzip(gzip_compress(text), 1 << 20, out);
  CHECK(out == text);
}

TEST_CASE("concatenated members are one text") {
  std::string out;
  gunzip(gzip_compress("first ") + gzip_compress("second"), 1 << 20, out);
  CHECK(out == "first second");
}

TEST_CASE("a stream that ends exactly at the limit is accepted") {
  constexpr std::size_t kLimit = 64 * 1024;
  std::string out;
  gunzip(gzip_compress(std::string(kLimit, 'a')), kLimit, out);
  CHECK(out.size() == kLimit);
  CHECK(out.capacity() <= kLimit + 1);
}

TEST_CASE("a decompression bomb stops one byte past the limit") {
  // 64 MiB of zeros compress to about 64 KiB; with a 1 MiB limit only 1 MiB + 1 byte is ever held.
  constexpr std::size_t kLimit = std::size_t{1} << 20;
  const std::string bomb = gzip_compress(std::string(std::size_t{64} << 20, '0'));
  REQUIRE(bomb.size() < kLimit / 8);
  std::string out;
  const DecodeError e = gunzip_failure(bomb, kLimit, out);
  CHECK(e.kind() == DecodeError::Kind::kTooLarge);
  CHECK(std::string(e.what()) == "decompresses to more than 1048576 bytes");
  CHECK(out.size() == kLimit + 1);
  CHECK(out.capacity() <= kLimit + 1);
  CHECK(out == std::string(kLimit + 1, '0'));

  // One byte over is over.
  const DecodeError just_over =
      gunzip_failure(gzip_compress(std::string(kLimit + 1, '0')), kLimit, out);
  CHECK(just_over.kind() == DecodeError::Kind::kTooLarge);
}

TEST_CASE("corrupt and truncated streams are malformed") {
  std::string out;
  const std::string good = gzip_compress("hello, world");

  DecodeError e = gunzip_failure("", 100, out);
  CHECK(e.kind() == DecodeError::Kind::kMalformed);
  CHECK(std::string(e.what()) == "corrupt or truncated gzip data (unexpected end)");

  e = gunzip_failure(std::string_view("\x1f\x8b", 2), 100, out);
  CHECK(e.kind() == DecodeError::Kind::kMalformed);

  e = gunzip_failure("hello world", 100, out);
  CHECK(std::string(e.what()) == "corrupt or truncated gzip data (incorrect header check)");

  e = gunzip_failure(std::string_view(good).substr(0, good.size() - 4), 100, out);
  CHECK(e.kind() == DecodeError::Kind::kMalformed);

  std::string bad_crc = good;
  bad_crc[bad_crc.size() - 5] ^= 1;
  e = gunzip_failure(bad_crc, 100, out);
  CHECK(std::string(e.what()) == "corrupt or truncated gzip data (incorrect data check)");
}

TEST_SUITE_END();
