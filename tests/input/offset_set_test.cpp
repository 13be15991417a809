// OffsetSet: the Kafka offsets a run has read, as joined ranges.
#include "input/offset_set.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>

TEST_SUITE_BEGIN("offset_set");

using namespace atlas2kudu;

TEST_CASE("offsets read in order are one range") {
  OffsetSet read;
  for (std::int64_t offset = 100; offset < 1100; ++offset) read.insert(offset);
  CHECK(read.range_count() == 1);
  CHECK_FALSE(read.contains(99));
  CHECK(read.contains(100));
  CHECK(read.contains(1099));
  CHECK_FALSE(read.contains(1100));
}

TEST_CASE("a gap is kept until it is filled, then the ranges join") {
  OffsetSet read;
  read.insert(5);
  read.insert(7);
  CHECK(read.range_count() == 2);
  CHECK_FALSE(read.contains(6));
  read.insert(6);
  CHECK(read.range_count() == 1);
  CHECK(read.contains(5));
  CHECK(read.contains(6));
  CHECK(read.contains(7));
  CHECK_FALSE(read.contains(8));
  CHECK_FALSE(read.contains(4));
}

TEST_CASE("joining at either end, and inserting again") {
  OffsetSet read;
  read.insert(10);
  read.insert(9);   // joins the range after it
  read.insert(11);  // joins the range before it
  read.insert(10);  // in the set already
  CHECK(read.range_count() == 1);
  CHECK(read.contains(9));
  CHECK(read.contains(11));
  CHECK_FALSE(read.contains(12));
  read.insert(0);
  read.insert(INT64_MAX - 1);
  CHECK(read.range_count() == 3);
  CHECK(read.contains(0));
  CHECK(read.contains(INT64_MAX - 1));
  CHECK_FALSE(read.contains(INT64_MAX - 2));
}

TEST_CASE("agrees with a plain set for shuffled offsets") {
  std::mt19937 rng(20261203);
  std::uniform_int_distribution<std::int64_t> pick(0, 400);
  OffsetSet read;
  std::set<std::int64_t> expected;
  for (int i = 0; i < 300; ++i) {
    const std::int64_t offset = pick(rng);
    read.insert(offset);
    expected.insert(offset);
  }
  std::size_t runs = 0;
  for (std::int64_t offset = -1; offset <= 401; ++offset) {
    CHECK(read.contains(offset) == (expected.count(offset) == 1));
    if (expected.count(offset) == 1 && expected.count(offset - 1) == 0) ++runs;
  }
  CHECK(read.range_count() == runs);
}

TEST_CASE("per partition: holds_offset and erase_offset, a partition left empty going") {
  std::map<KafkaPartition, std::multiset<std::int64_t>> held;
  const SourcePosition::Kafka five{"t", 0, 5};
  const SourcePosition::Kafka other_partition{"t", 1, 5};
  const SourcePosition::Kafka other_topic{"u", 0, 5};
  CHECK_FALSE(holds_offset(held, five));
  CHECK_FALSE(erase_offset(held, five));
  held[{"t", 0}].insert(5);
  held[{"t", 0}].insert(5);  // a redelivered copy: held twice
  CHECK(holds_offset(held, five));
  CHECK_FALSE(holds_offset(held, other_partition));
  CHECK_FALSE(holds_offset(held, other_topic));
  CHECK(erase_offset(held, five));  // one occurrence
  CHECK(holds_offset(held, five));
  CHECK(erase_offset(held, five));
  CHECK_FALSE(holds_offset(held, five));
  CHECK(held.empty());
  CHECK_FALSE(erase_offset(held, five));
  std::map<KafkaPartition, OffsetSet> read;
  read[{"t", 1}].insert(5);
  CHECK(holds_offset(read, other_partition));
  CHECK_FALSE(holds_offset(read, five));
}

TEST_SUITE_END();
