#include "util/digest.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <fstream>
#include <string>

TEST_SUITE_BEGIN("digest");

using namespace atlas2kudu;

namespace {

// The vector file quotes both fields as JSON strings so that control characters survive.
std::string json_string(simdjson::ondemand::parser& parser, const std::string& quoted) {
  simdjson::padded_string padded(quoted);
  auto doc = parser.iterate(padded);
  std::string_view out;
  REQUIRE(doc.get_string().get(out) == simdjson::SUCCESS);
  return std::string(out);
}

}  // namespace

TEST_CASE("qn_digest matches every shared test vector") {
  std::ifstream in(std::string(ATLAS2KUDU_TEST_DATA) + "/qn_digest_vectors.tsv");
  REQUIRE(in.good());
  simdjson::ondemand::parser parser;
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto t1 = line.find('\t');
    const auto t2 = line.find('\t', t1 + 1);
    REQUIRE(t2 != std::string::npos);
    const std::string type = json_string(parser, line.substr(0, t1));
    const std::string qn = json_string(parser, line.substr(t1 + 1, t2 - t1 - 1));
    CAPTURE(line);
    CHECK(to_hex(qn_digest(type, qn)) == line.substr(t2 + 1));
    ++checked;
  }
  CHECK(checked == 11);
}

TEST_CASE("sha256 and the audit seq prefix") {
  CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // e3b0c44298fc1c14 as a signed big-endian 64-bit value.
  CHECK(sha256_prefix_i64("") == static_cast<std::int64_t>(0xe3b0c44298fc1c14ULL));
  CHECK(sha256_prefix_i64("") < 0);
}

TEST_CASE("Sha256Stream: fed in pieces, its digest taken along the way") {
  Sha256Stream s;
  CHECK(s.digest() == sha256(""));
  s.update("ab");
  const Sha256Stream at_ab = s;  // a copy keeps the state
  s.update("c");
  CHECK(s.digest() == sha256("abc"));
  CHECK(s.digest() == sha256("abc"));  // taking it changes nothing
  CHECK(at_ab.digest() == sha256("ab"));
  std::string big(100000, 'x');
  Sha256Stream pieces;
  for (std::size_t at = 0; at < big.size(); at += 777) {
    pieces.update(std::string_view(big).substr(at, 777));
  }
  CHECK(pieces.digest() == sha256(big));
}

TEST_SUITE_END();
