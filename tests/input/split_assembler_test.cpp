// The split assembler on its own: chunks in any order, interleaved, redelivered; inconsistent
// chunks; the bounds on what it holds; what is still pending, and where its earliest chunk was.
#include "input/split_assembler.h"

#include <doctest/doctest.h>

#include <optional>
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

// The text of the record read at `pos` in these tests.
std::string record_text(const SourcePosition& pos) {
  return "record " + std::to_string(pos.source_index) + ":" + std::to_string(pos.record);
}

// Adds `c`, read at `pos` from a record whose text is record_text(pos).
std::optional<AssembledMessage> add(SplitAssembler& splits, SplitChunk c,
                                    const SourcePosition& pos) {
  return splits.add(std::move(c), pos, record_text(pos));
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

// The reason of the InputError that adding `c` throws, which must have `code`.
std::string refused(SplitAssembler& splits, SplitChunk c, const SourcePosition& pos,
                    RejectCode code = RejectCode::kBadSplit) {
  try {
    add(splits, std::move(c), pos);
  } catch (const InputError& e) {
    CHECK(e.code() == code);
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("chunks in order complete the message at the last one") {
  SplitAssembler splits;
  CHECK_FALSE(add(splits, chunk("m", 0, 3, "aa"), at(0)));
  CHECK_FALSE(add(splits, chunk("m", 1, 3, "bb"), at(1)));
  const auto whole = add(splits, chunk("m", 2, 3, "cc"), at(2));
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
  CHECK_FALSE(add(splits, chunk("m", 2, 3, "cc"), at(5)));
  CHECK_FALSE(add(splits, chunk("m", 0, 3, "aa"), at(6)));
  const auto whole = add(splits, chunk("m", 1, 3, "bb"), at(7));
  REQUIRE(whole);
  CHECK(whole->text == "aabbcc");
  CHECK(whole->first.record == 5);  // the chunk read first, whatever its index
}

TEST_CASE("interleaved messages complete independently") {
  SplitAssembler splits;
  CHECK_FALSE(add(splits, chunk("a", 0, 2, "a0"), at(0)));
  CHECK_FALSE(add(splits, chunk("b", 1, 2, "b1", false), at(1)));
  const auto b = add(splits, chunk("b", 0, 2, "b0", false), at(2));
  REQUIRE(b);
  CHECK(b->text == "b0b1");
  CHECK_FALSE(b->gzip);
  CHECK(b->first.record == 1);
  CHECK(earliest(splits) == "0:0");
  const auto a = add(splits, chunk("a", 1, 2, "a1"), at(3));
  REQUIRE(a);
  CHECK(a->text == "a0a1");
  CHECK(a->first.record == 0);
  CHECK(earliest(splits) == "none");
}

TEST_CASE("a message is GZIP if any of its chunks says so") {
  SplitAssembler splits;
  add(splits, chunk("m", 0, 2, "x", false), at(0));
  const auto whole = add(splits, chunk("m", 1, 2, "y", true), at(1));
  REQUIRE(whole);
  CHECK(whole->gzip);
}

TEST_CASE("a redelivered identical chunk is absorbed") {
  SplitAssembler splits;
  CHECK_FALSE(add(splits, chunk("m", 0, 2, "aa"), at(0)));
  CHECK_FALSE(add(splits, chunk("m", 0, 2, "aa"), at(1)));
  CHECK(earliest(splits) == "0:0");
  const auto whole = add(splits, chunk("m", 1, 2, "bb"), at(2));
  REQUIRE(whole);
  CHECK(whole->text == "aabb");
  // A copy arriving after completion starts a new message (and waits for the rest).
  CHECK_FALSE(add(splits, chunk("m", 1, 2, "bb"), at(3)));
  CHECK(earliest(splits) == "0:3");
}

TEST_CASE("a second chunk at an index with different text is rejected; the held one stays") {
  SplitAssembler splits;
  add(splits, chunk("m_0", 0, 2, "aa"), at(0));
  CHECK(refused(splits, chunk("m_0", 0, 2, "zz"), at(1)) ==
        "msgSplitIdx: chunk 0 of msgId m_0 arrived twice with different content");
  const auto whole = add(splits, chunk("m_0", 1, 2, "bb"), at(2));
  REQUIRE(whole);
  CHECK(whole->text == "aabb");
}

TEST_CASE("a count that differs from an earlier chunk's is rejected") {
  SplitAssembler splits;
  add(splits, chunk("m_1", 0, 3, "aa"), at(0));
  CHECK(refused(splits, chunk("m_1", 1, 4, "bb"), at(1)) ==
        "msgSplitCount: 4 differs from 3 in an earlier chunk of msgId m_1");
  REQUIRE(splits.take_incomplete().size() == 1);
}

TEST_CASE("an index outside 0..count-1 or an absurd count is rejected, holding nothing") {
  SplitAssembler splits;
  CHECK(refused(splits, chunk("m_2", 2, 2, "x"), at(0)) ==
        "msgSplitIdx: 2 is outside 0..1 (msgId m_2)");
  CHECK(refused(splits, chunk("m_2", -1, 2, "x"), at(0)) ==
        "msgSplitIdx: -1 is outside 0..1 (msgId m_2)");
  CHECK(earliest(splits) == "none");
  CHECK(splits.take_incomplete().empty());
}

TEST_CASE("every record of an incomplete message is handed back, in input order, once") {
  SplitAssembler splits;
  add(splits, chunk("late", 0, 3, "x"), at(4));
  add(splits, chunk("early", 1, 5, "x"), at(1));
  add(splits, chunk("early", 3, 5, "x"), at(2));
  add(splits, chunk("done", 0, 2, "x"), at(3));
  add(splits, chunk("done", 1, 2, "x"), at(5));
  add(splits, chunk("early", 1, 5, "x"), at(0, 1));  // a redelivered copy, in a later source
  add(splits, chunk("other", 0, 2, "y"), at(0, 1));
  const auto incomplete = splits.take_incomplete();
  REQUIRE(incomplete.size() == 5);
  CHECK(incomplete[0].msg_id == "early");
  CHECK(incomplete[0].received == 2);
  CHECK(incomplete[0].expected == 5);
  CHECK(incomplete[0].record.pos.record == 1);
  CHECK(incomplete[0].record.text == "record 0:1");
  CHECK(incomplete[1].msg_id == "early");
  CHECK(incomplete[1].record.text == "record 0:2");
  CHECK(incomplete[2].msg_id == "late");
  CHECK(incomplete[2].received == 1);
  CHECK(incomplete[2].expected == 3);
  CHECK(incomplete[2].record.pos.line == 5);
  // Source 1 after every record of source 0, whatever the record indexes.
  CHECK(incomplete[3].record.text == "record 1:0");
  CHECK(incomplete[4].record.text == "record 1:0");
  CHECK(splits.take_incomplete().empty());
  CHECK(earliest(splits) == "none");
  CHECK(splits.bytes_held() == 0);
}

TEST_CASE("a completed message hands back the other records it was read from") {
  SplitAssembler splits;
  add(splits, chunk("m", 1, 3, "bb"), at(2));
  add(splits, chunk("m", 1, 3, "bb"), at(3));  // redelivered: its record is kept too
  add(splits, chunk("m", 0, 3, "aa"), at(4));
  const auto whole = add(splits, chunk("m", 2, 3, "cc"), at(9));
  REQUIRE(whole);
  CHECK(whole->text == "aabbcc");
  REQUIRE(whole->records.size() == 3);
  CHECK(whole->records[0].text == "record 0:2");
  CHECK(whole->records[1].text == "record 0:3");
  CHECK(whole->records[2].text == "record 0:4");
  CHECK(whole->records[2].pos.line == 5);
  CHECK(splits.bytes_held() == 0);
}

TEST_CASE("the Kafka positions of the records held are known until their message completes") {
  SplitAssembler splits;
  const auto kafka_at = [](std::uint64_t record, std::int64_t offset) {
    SourcePosition pos = at(record);
    pos.kafka = SourcePosition::Kafka{"ATLAS_ENTITIES", 0, offset};
    return pos;
  };
  const SourcePosition::Kafka first{"ATLAS_ENTITIES", 0, 10};
  const SourcePosition::Kafka second{"ATLAS_ENTITIES", 0, 11};
  CHECK_FALSE(splits.holds(first));
  add(splits, chunk("m", 0, 3, "aa"), kafka_at(0, 10));
  add(splits, chunk("m", 1, 3, "bb"), kafka_at(1, 11));
  CHECK(splits.holds(first));
  CHECK(splits.holds(second));
  CHECK_FALSE(splits.holds({"ATLAS_ENTITIES", 1, 10}));  // another partition
  CHECK_FALSE(splits.holds({"OTHER", 0, 10}));           // another topic
  REQUIRE(add(splits, chunk("m", 2, 3, "cc"), kafka_at(2, 12)));
  CHECK_FALSE(splits.holds(first));  // read with their message: the reader knows them now
  CHECK_FALSE(splits.holds(second));
  add(splits, chunk("n", 0, 2, "x"), kafka_at(3, 13));
  CHECK(splits.holds({"ATLAS_ENTITIES", 0, 13}));
  (void)splits.take_incomplete();
  CHECK_FALSE(splits.holds({"ATLAS_ENTITIES", 0, 13}));
}

TEST_CASE("chunks of a msgId completed earlier say where it completed, as long as it is recalled") {
  // Two console exports that overlap, the second starting within a split message: its chunks
  // come again after the message completed, and can never complete a second one.
  SplitAssembler splits;
  CHECK_FALSE(add(splits, chunk("m_1", 0, 3, "a"), at(0)));
  CHECK_FALSE(add(splits, chunk("m_1", 1, 3, "b"), at(1)));
  REQUIRE(add(splits, chunk("m_1", 2, 3, "c"), at(2)));
  CHECK_FALSE(add(splits, chunk("m_1", 2, 3, "c"), at(0, 1)));
  CHECK_FALSE(add(splits, chunk("m_2", 0, 2, "x"), at(1, 1)));  // never completed before
  const auto incomplete = splits.take_incomplete();
  REQUIRE(incomplete.size() == 2);
  CHECK(incomplete[0].msg_id == "m_1");
  CHECK(incomplete[0].completed_earlier_at == "t.jsonl:3:200");
  CHECK(incomplete[1].completed_earlier_at.empty());

  // Only the last kCompletionsRemembered completions are recalled.
  SplitAssembler many;
  for (std::size_t i = 0; i <= SplitAssembler::kCompletionsRemembered; ++i) {
    const std::string id = "n_" + std::to_string(i);
    REQUIRE(add(many, chunk(id, 0, 2, "a"), at(2 * i)) == std::nullopt);
    REQUIRE(add(many, chunk(id, 1, 2, "b"), at(2 * i + 1)));
  }
  CHECK_FALSE(add(many, chunk("n_0", 0, 2, "a"), at(0, 1)));  // the oldest: forgotten
  CHECK_FALSE(add(many, chunk("n_1", 0, 2, "a"), at(1, 1)));
  const auto again = many.take_incomplete();
  REQUIRE(again.size() == 2);
  CHECK(again[0].completed_earlier_at.empty());
  CHECK(again[1].completed_earlier_at == "t.jsonl:4:300");
}

TEST_CASE("the bounds: chunks per message, messages pending, bytes held") {
  SplitAssembler splits(SplitLimits{.max_messages = 2, .max_chunks = 4, .max_bytes = 200});
  CHECK(refused(splits, chunk("m_big", 0, 5, "x"), at(0), RejectCode::kTooLarge) ==
        "msgSplitCount: 5 chunks (msgId m_big), more than 4 (--max-split-chunks)");
  CHECK(refused(splits, chunk("m_huge", 0, INT64_MAX, "x"), at(0), RejectCode::kTooLarge) ==
        "msgSplitCount: 9223372036854775807 chunks (msgId m_huge), more than 4 "
        "(--max-split-chunks)");
  CHECK_FALSE(add(splits, chunk("a", 0, 4, "aa"), at(1)));
  CHECK_FALSE(add(splits, chunk("b", 0, 4, "bb"), at(2)));
  CHECK(refused(splits, chunk("c", 0, 2, "cc"), at(3), RejectCode::kTooLarge) ==
        "msgId c: 2 split messages are already waiting for chunks (--max-split-messages)");
  // "record 0:N" (10 bytes) + "aa" per chunk: 24 bytes held so far.
  CHECK(splits.bytes_held() == 24);
  SplitAssembler one(SplitLimits{.max_messages = 1, .max_chunks = 4, .max_bytes = 200});
  CHECK_FALSE(add(one, chunk("a", 0, 4, "aa"), at(1)));
  CHECK(refused(one, chunk("b", 0, 2, "bb"), at(2), RejectCode::kTooLarge) ==
        "msgId b: 1 split message is already waiting for chunks (--max-split-messages)");
  CHECK(refused(splits, chunk("a", 1, 4, std::string(180, 'z')), at(4), RejectCode::kTooLarge) ==
        "msgId a: holding this chunk would take split messages past 200 bytes "
        "(--max-split-bytes)");
  CHECK(splits.bytes_held() == 24);
  CHECK_FALSE(add(splits, chunk("a", 1, 4, std::string(100, 'z')), at(5)));
  CHECK(splits.bytes_held() == 134);
  // A console line's prefixes, kept with its record, are not counted (the limit means what it did
  // before they were kept).
  CHECK_FALSE(splits.add(chunk("b", 1, 4, std::string(56, 'y')), at(6), record_text(at(6)),
                         "CreateTime:1700000000000\tPartition:0\tOffset:7\t"));
  CHECK(splits.bytes_held() == 200);
  CHECK(refused(splits, chunk("b", 2, 4, ""), at(7), RejectCode::kTooLarge) ==
        "msgId b: holding this chunk would take split messages past 200 bytes "
        "(--max-split-bytes)");
  // Nothing refused was held: the two messages keep four records between them.
  const auto incomplete = splits.take_incomplete();
  REQUIRE(incomplete.size() == 4);
  CHECK(incomplete[3].record.console_prefix == "CreateTime:1700000000000\tPartition:0\tOffset:7\t");
}

TEST_CASE("a chunk claiming a huge count allocates nothing for the chunks it did not bring") {
  // 1000 messages each claiming 1000 chunks: what is held is what arrived, a few bytes each.
  SplitAssembler splits;
  for (int i = 0; i < 1000; ++i) {
    CHECK_FALSE(add(splits, chunk("m" + std::to_string(i), 0, 1000, "x"), at(i)));
  }
  CHECK(splits.bytes_held() < 30 * 1000);
}

TEST_CASE("the smallest Kafka offset held, per partition") {
  SplitAssembler splits;
  const auto with_kafka = [](std::uint64_t record, std::int32_t partition, std::int64_t offset) {
    SourcePosition pos = at(record);
    pos.kafka = SourcePosition::Kafka{"T", partition, offset};
    return pos;
  };
  CHECK(splits.pending_kafka_offsets().empty());
  add(splits, chunk("a", 0, 2, "x"), with_kafka(0, 0, 10));
  add(splits, chunk("b", 0, 2, "x"), with_kafka(1, 1, 20));
  add(splits, chunk("c", 0, 3, "x"), with_kafka(2, 1, 25));
  add(splits, chunk("c", 1, 3, "x"), with_kafka(3, 0, 5));  // one message over two partitions
  add(splits, chunk("d", 0, 2, "x"), at(4));                // no Kafka coordinates
  const auto offsets = splits.pending_kafka_offsets();
  REQUIRE(offsets.size() == 2);
  CHECK(offsets.at({"T", 0}) == 5);
  CHECK(offsets.at({"T", 1}) == 20);
  add(splits, chunk("c", 2, 3, "x"), with_kafka(5, 1, 26));  // "c" completes
  // "a" alone would hold partition 0 at 10, but a resume would then pass c's chunk at offset 5
  // over and read the others (partition 1 from 20): c stays whole by holding partition 0 at 5.
  CHECK(splits.pending_kafka_offsets().at({"T", 0}) == 5);
  add(splits, chunk("a", 1, 2, "x"), with_kafka(6, 0, 11));
  add(splits, chunk("b", 1, 2, "x"), with_kafka(7, 1, 21));
  CHECK(splits.pending_kafka_offsets().empty());  // "d" has no Kafka coordinates
}

TEST_CASE("the earliest pending chunk follows what is still held, across sources") {
  SplitAssembler splits;
  CHECK(earliest(splits) == "none");
  add(splits, chunk("b", 0, 2, "x"), at(7, 1));
  CHECK(earliest(splits) == "1:7");
  add(splits, chunk("a", 0, 2, "x"), at(9, 0));  // an earlier source comes first
  CHECK(earliest(splits) == "0:9");
  add(splits, chunk("c", 0, 2, "x"), at(2, 1));
  CHECK(earliest(splits) == "0:9");
  add(splits, chunk("a", 1, 2, "x"), at(10, 1));  // "a" completes
  // "c" waits from 1:2, but a resume there would read a's last chunk (1:10) without its first
  // (0:9): the point stays before both.
  CHECK(earliest(splits) == "0:9");
  add(splits, chunk("c", 1, 2, "x"), at(11, 1));
  CHECK(earliest(splits) == "0:9");  // "b" from 1:7 cuts "c" (1:2, 1:11), which cuts "a"
  add(splits, chunk("b", 1, 2, "x"), at(12, 1));
  CHECK(earliest(splits) == "none");
}

TEST_CASE("a message completed while another waits is not cut by the resume point") {
  // The header's example: 2 M chunk 0, 3 N chunk 0, 6 M chunk 1; N waits.
  SplitAssembler splits;
  add(splits, chunk("M", 0, 2, "x"), at(2));
  add(splits, chunk("N", 0, 2, "x"), at(3));
  CHECK(add(splits, chunk("M", 1, 2, "x"), at(6)).has_value());
  CHECK(earliest(splits) == "0:2");
  // A message wholly after the point is read again whole, and one wholly before it not at all:
  // neither moves it.
  add(splits, chunk("P", 0, 2, "x"), at(8));
  CHECK(add(splits, chunk("P", 1, 2, "x"), at(9)).has_value());
  CHECK(earliest(splits) == "0:2");
  CHECK(add(splits, chunk("N", 1, 2, "x"), at(10)).has_value());
  CHECK(earliest(splits) == "none");
  // Nothing waits: what completed meanwhile is forgotten, and holds nothing later.
  add(splits, chunk("Q", 0, 2, "x"), at(12));
  CHECK(earliest(splits) == "0:12");

  // By Kafka offset: records below a partition's offset are passed over by a resume, so a
  // message with a chunk on each side pulls the offset back, in every partition it has records in.
  const auto with_kafka = [](std::uint64_t record, std::int32_t partition, std::int64_t offset) {
    SourcePosition pos = at(record);
    pos.kafka = SourcePosition::Kafka{"T", partition, offset};
    return pos;
  };
  SplitAssembler kafka;
  add(kafka, chunk("M", 0, 2, "x"), with_kafka(0, 0, 10));
  add(kafka, chunk("M2", 0, 2, "x"), with_kafka(1, 1, 40));
  add(kafka, chunk("N", 0, 2, "x"), with_kafka(2, 0, 15));
  CHECK(add(kafka, chunk("M", 1, 2, "x"), with_kafka(3, 0, 20)).has_value());
  CHECK(add(kafka, chunk("M2", 1, 2, "x"), with_kafka(4, 0, 21)).has_value());
  const auto offsets = kafka.pending_kafka_offsets();
  REQUIRE(offsets.size() == 2);
  CHECK(offsets.at({"T", 0}) == 10);  // M's first chunk
  CHECK(offsets.at({"T", 1}) == 40);  // M2's first chunk, in a partition N has nothing in
  CHECK(earliest(kafka) == "0:0");
}

TEST_SUITE_END();
