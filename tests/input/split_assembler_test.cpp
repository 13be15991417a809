// The split assembler on its own: chunks in any order, interleaved, redelivered; inconsistent
// chunks; what is still pending, and where its earliest chunk was.
#include "input/split_assembler.h"

#include <doctest/doctest.h>

#include <string>

#include "input/input_error.h"

TEST_SUITE_BEGIN("split_assembler");

using namespace atlas2kudu;

namespace {

SourcePosition at(std::uint64_t record, std::uint32_t source_index = 0) {
  SourcePosition pos;
  pos.source = "t.jsonl";
  pos.source_index = source_index;
  pos.line = record + 1;
  pos.offset = record * 100;
  pos.record = record;
  pos.first_record = record;
  return pos;
}

SplitChunk chunk(std::string_view msg_id, std::int64_t index, std::int64_t count, std::string text,
                 bool gzip = true) {
  return SplitChunk{msg_id, index, count, gzip, std::move(text)};
}

// "SOURCE_INDEX:RECORD" of the earliest pending chunk, or "none".
std::string earliest(const SplitAssembler& splits) {
  const auto pos = splits.earliest_pending();
  return pos ? std::to_string(pos->source_index) + ":" + std::to_string(pos->record) : "none";
}

// The reason of the InputError(kBadSplit) that adding `c` throws.
std::string bad_split(SplitAssembler& splits, SplitChunk c, const SourcePosition& pos) {
  try {
    splits.add(std::move(c), pos);
  } catch (const InputError& e) {
    CHECK(e.code() == RejectCode::kBadSplit);
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("chunks in order complete the message at the last one") {
  SplitAssembler splits;
  CHECK_FALSE(splits.add(chunk("m", 0, 3, "aa"), at(0)));
  CHECK_FALSE(splits.add(chunk("m", 1, 3, "bb"), at(1)));
  const auto whole = splits.add(chunk("m", 2, 3, "cc"), at(2));
  REQUIRE(whole);
  CHECK(whole->text == "aabbcc");
  CHECK(whole->gzip);
  CHECK(whole->first.record == 0);
  CHECK(whole->first.line == 1);
  CHECK(earliest(splits) == "none");
  CHECK(splits.take_incomplete().empty());
}

TEST_CASE("chunks out of order are joined in index order") {
  SplitAssembler splits;
  CHECK_FALSE(splits.add(chunk("m", 2, 3, "cc"), at(5)));
  CHECK_FALSE(splits.add(chunk("m", 0, 3, "aa"), at(6)));
  const auto whole = splits.add(chunk("m", 1, 3, "bb"), at(7));
  REQUIRE(whole);
  CHECK(whole->text == "aabbcc");
  CHECK(whole->first.record == 5);  // the chunk read first, whatever its index
}

TEST_CASE("interleaved messages complete independently") {
  SplitAssembler splits;
  CHECK_FALSE(splits.add(chunk("a", 0, 2, "a0"), at(0)));
  CHECK_FALSE(splits.add(chunk("b", 1, 2, "b1", false), at(1)));
  const auto b = splits.add(chunk("b", 0, 2, "b0", false), at(2));
  REQUIRE(b);
  CHECK(b->text == "b0b1");
  CHECK_FALSE(b->gzip);
  CHECK(b->first.record == 1);
  CHECK(earliest(splits) == "0:0");
  const auto a = splits.add(chunk("a", 1, 2, "a1"), at(3));
  REQUIRE(a);
  CHECK(a->text == "a0a1");
  CHECK(a->first.record == 0);
  CHECK(earliest(splits) == "none");
}

TEST_CASE("a message is GZIP if any of its chunks says so") {
  SplitAssembler splits;
  splits.add(chunk("m", 0, 2, "x", false), at(0));
  const auto whole = splits.add(chunk("m", 1, 2, "y", true), at(1));
  REQUIRE(whole);
  CHECK(whole->gzip);
}

TEST_CASE("a redelivered identical chunk is absorbed") {
  SplitAssembler splits;
  CHECK_FALSE(splits.add(chunk("m", 0, 2, "aa"), at(0)));
  CHECK_FALSE(splits.add(chunk("m", 0, 2, "aa"), at(1)));
  CHECK(earliest(splits) == "0:0");
  const auto whole = splits.add(chunk("m", 1, 2, "bb"), at(2));
  REQUIRE(whole);
  CHECK(whole->text == "aabb");
  // A copy arriving after completion starts a new message (and waits for the rest).
  CHECK_FALSE(splits.add(chunk("m", 1, 2, "bb"), at(3)));
  CHECK(earliest(splits) == "0:3");
}

TEST_CASE("a second chunk at an index with different text is rejected; the held one stays") {
  SplitAssembler splits;
  splits.add(chunk("m_0", 0, 2, "aa"), at(0));
  CHECK(bad_split(splits, chunk("m_0", 0, 2, "zz"), at(1)) ==
        "msgSplitIdx: chunk 0 of msgId m_0 arrived twice with different content");
  const auto whole = splits.add(chunk("m_0", 1, 2, "bb"), at(2));
  REQUIRE(whole);
  CHECK(whole->text == "aabb");
}

TEST_CASE("a count that differs from an earlier chunk's is rejected") {
  SplitAssembler splits;
  splits.add(chunk("m_1", 0, 3, "aa"), at(0));
  CHECK(bad_split(splits, chunk("m_1", 1, 4, "bb"), at(1)) ==
        "msgSplitCount: 4 differs from 3 in an earlier chunk of msgId m_1");
  REQUIRE(splits.take_incomplete().size() == 1);
}

TEST_CASE("an index outside 0..count-1 or an absurd count is rejected, holding nothing") {
  SplitAssembler splits;
  CHECK(bad_split(splits, chunk("m_2", 2, 2, "x"), at(0)) ==
        "msgSplitIdx: 2 is outside 0..1 (msgId m_2)");
  CHECK(bad_split(splits, chunk("m_2", -1, 2, "x"), at(0)) ==
        "msgSplitIdx: -1 is outside 0..1 (msgId m_2)");
  CHECK(bad_split(splits, chunk("m_2", 0, SplitAssembler::kMaxChunks + 1, "x"), at(0)) ==
        "msgSplitCount: 100001 chunks is more than any real message");
  CHECK(earliest(splits) == "none");
  CHECK(splits.take_incomplete().empty());
}

TEST_CASE("incomplete messages are handed back by their earliest chunk, once") {
  SplitAssembler splits;
  splits.add(chunk("late", 0, 3, "x"), at(4));
  splits.add(chunk("early", 1, 5, "x"), at(1));
  splits.add(chunk("early", 3, 5, "x"), at(2));
  splits.add(chunk("done", 0, 2, "x"), at(3));
  splits.add(chunk("done", 1, 2, "x"), at(5));
  const auto incomplete = splits.take_incomplete();
  REQUIRE(incomplete.size() == 2);
  CHECK(incomplete[0].msg_id == "early");
  CHECK(incomplete[0].received == 2);
  CHECK(incomplete[0].expected == 5);
  CHECK(incomplete[0].first.record == 1);
  CHECK(incomplete[1].msg_id == "late");
  CHECK(incomplete[1].received == 1);
  CHECK(incomplete[1].expected == 3);
  CHECK(incomplete[1].first.line == 5);
  CHECK(splits.take_incomplete().empty());
  CHECK(earliest(splits) == "none");
}

TEST_CASE("the earliest pending chunk follows what is still held, across sources") {
  SplitAssembler splits;
  CHECK(earliest(splits) == "none");
  splits.add(chunk("b", 0, 2, "x"), at(7, 1));
  CHECK(earliest(splits) == "1:7");
  splits.add(chunk("a", 0, 2, "x"), at(9, 0));  // an earlier source comes first
  CHECK(earliest(splits) == "0:9");
  splits.add(chunk("c", 0, 2, "x"), at(2, 1));
  CHECK(earliest(splits) == "0:9");
  splits.add(chunk("a", 1, 2, "x"), at(10, 1));  // "a" completes
  CHECK(earliest(splits) == "1:2");
  splits.add(chunk("c", 1, 2, "x"), at(11, 1));
  CHECK(earliest(splits) == "1:7");
  splits.add(chunk("b", 1, 2, "x"), at(12, 1));
  CHECK(earliest(splits) == "none");
}

TEST_SUITE_END();
