// The reader on real-world exports: captures of real notifications (Atlas 2.1/2.2, Purview), the
// GZIP and split vectors, kcat and console framings, arrays, pretty-printed documents and V1
// payloads.
#include "atlas2kudu/reader.h"

#include <doctest/doctest.h>
#include <fmt/core.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "../util/gzip_compress.h"
#include "input/byte_source.h"
#include "input/framer.h"
#include "test_support.h"
#include "util/base64.h"
#include "util/digest.h"
#include "util/gzip.h"

TEST_SUITE_BEGIN("reader");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

std::string data(const std::string& name) {
  return std::string(ATLAS2KUDU_TEST_DATA) + "/notifications/" + name;
}

ReadOutcome read_file(const std::string& name,
                      std::size_t max_read = static_cast<std::size_t>(-1)) {
  return read_text(slurp(data(name)), max_read);
}

const Attribute* find_attr(const Event& e, const std::string& name) {
  for (const auto& a : e.attributes) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// The decoded content of the synthetic GZIP vector (built to mirror Atlas's compression, not
// captured).
void check_gzip_vector_event(const Event& e) {
  CHECK(e.op == Operation::kEntityUpdate);
  CHECK(e.guid.dashed() == "0b6f3c1e-2a4d-4e8f-9c1b-5d7e8f9a0b1c");
  CHECK(e.type_name == "hive_table");
  CHECK(e.qualified_name == "sales.orders@cl1");
  CHECK(e.name == "orders");
  CHECK(e.event_time_us == 1700000000001000);
  REQUIRE(e.attributes.size() == 2);
  CHECK(e.attributes[0] == Attribute{"owner", "\"etl\""});
  CHECK(e.attributes[1] == Attribute{"createTime", "1699999990000"});
}

// A one-chunk GZIP envelope around gzip-compressed bytes.
std::string gzip_envelope(std::string_view compressed) {
  return "{\"version\":{\"version\":\"1.0.0\"},\"msgId\":\"m_1\",\"msgCompressionKind\":\"GZIP\","
         "\"msgSplitIdx\":1,\"msgSplitCount\":1,\"msgCreationTime\":1700000000000,\"message\":\"" +
         base64_encode(compressed) + "\"}";
}

// One chunk of a split GZIP message.
std::string split_chunk(const std::string& msg_id, int index, int count,
                        const std::string& base64) {
  return "{\"version\":{\"version\":\"1.0.0\"},\"msgId\":\"" + msg_id +
         "\",\"msgCompressionKind\":\"GZIP\",\"msgSplitIdx\":" + std::to_string(index) +
         ",\"msgSplitCount\":" + std::to_string(count) + ",\"message\":\"" + base64 + "\"}";
}

}  // namespace

TEST_CASE("Atlas 2.1 console capture (E1)") {
  const auto out = read_file("atlas21-console.jsonl");
  CHECK(out.diagnostics.empty());
  REQUIRE(out.events.size() == 4);
  const Event& table = out.events[0];
  CHECK(table.op == Operation::kEntityCreate);
  CHECK(table.guid.dashed() == "81f18e76-3257-450c-b196-3b50c7e273be");
  CHECK(table.type_name == "hive_table");
  CHECK(table.qualified_name == "experiments.movies_info@cm");
  CHECK(table.name == "movies_info");
  CHECK(table.event_time_us == 1619751227966000);
  CHECK(table.pos.line == 1);
  CHECK(table.pos.offset == 0);
  CHECK(table.pos.record == 0);
  REQUIRE(find_attr(table, "createTime"));
  CHECK(find_attr(table, "createTime")->json == "1619751227000");
  CHECK(find_attr(table, "owner")->json == "\"impala\"");
  CHECK_FALSE(table.legacy_v1);
  const Event& db = out.events[3];
  CHECK(db.op == Operation::kEntityUpdate);
  CHECK(db.type_name == "hive_db");
  CHECK(find_attr(db, "clusterName")->json == "\"cm\"");
  CHECK(db.pos.line == 4);
  CHECK(out.stats.per_operation[static_cast<int>(Operation::kEntityCreate)] == 3);
  CHECK(out.stats.per_operation[static_cast<int>(Operation::kEntityUpdate)] == 1);
}

TEST_CASE("Atlas 2.2 spooled create, relationship create, and Purview classification shapes") {
  const auto out = read_file("atlas22-relationship-and-purview.jsonl");
  CHECK(out.diagnostics.empty());
  REQUIRE(out.events.size() == 5);
  CHECK(out.events[0].type_name == "hdfs_path");
  CHECK(find_attr(out.events[0], "path")->json == "\"gfhj\"");

  const Event& rel = out.events[1];
  CHECK(rel.op == Operation::kRelationshipCreate);
  CHECK(rel.relationship.guid->dashed() == "5fe56ca3-9dd9-44f8-bd5d-3effd14a1bc8");
  CHECK(rel.relationship.edge_label() == "r:m4i_data_attribute_business_owner_assignment");
  CHECK(rel.relationship.end1.guid.dashed() == "45e581d9-452c-4d48-98e0-452b7a109efb");
  CHECK(rel.relationship.end1.type_name == "m4i_person");
  CHECK(rel.relationship.end2.type_name == "m4i_data_attribute");
  CHECK_FALSE(rel.relationship.status_deleted);

  const Event& add = out.events[2];
  CHECK(add.op == Operation::kClassificationAdd);
  REQUIRE(add.classifications.size() == 1);
  CHECK(add.classifications[0].type_name == "MICROSOFT.FINANCIAL.US.ABA_ROUTING_NUMBER");
  CHECK(add.classifications[0].entity_guid == add.guid);
  CHECK(add.classifications[0].attributes_json == "{}");  // Purview's lastModifiedTS is ignored

  CHECK(out.events[3].op == Operation::kClassificationDelete);
  CHECK(out.events[3].classifications.empty());         // last tag removed: list absent
  CHECK(out.events[4].op == Operation::kEntityDelete);  // Purview delete without status
}

TEST_CASE("GZIP+Base64 message decodes to its inner envelope") {
  const auto out = read_file("gzip-message.jsonl");
  CHECK(out.diagnostics.empty());
  REQUIRE(out.events.size() == 1);
  check_gzip_vector_event(out.events[0]);
}

TEST_CASE("split message reassembles in order, out of order and interleaved") {
  for (const char* name : {"split-message.jsonl", "split-interleaved.jsonl"}) {
    CAPTURE(name);
    for (std::size_t max_read : {std::size_t{3}, std::size_t{1} << 20}) {
      const auto out = read_file(name, max_read);
      CHECK(out.diagnostics.empty());
      CHECK(out.stats.split_chunks == 4);
      const Event* split = nullptr;
      for (const auto& e : out.events) {
        if (e.type_name == "hive_table" && e.guid.dashed().starts_with("0b6f3c1e")) split = &e;
      }
      REQUIRE(split != nullptr);
      check_gzip_vector_event(*split);
    }
  }
  // Interleaved: the event comes out where its last chunk was read (line 8), after the three
  // unrelated records, and remembers where its first chunk was.
  const auto out = read_file("split-interleaved.jsonl");
  REQUIRE(out.events.size() == 4);
  CHECK(out.events[3].type_name == "hive_table");
  CHECK(out.events[3].pos.line == 8);
  CHECK(out.events[3].pos.first_record == 0);
  CHECK(out.events[0].pos.line == 2);
}

TEST_CASE("the audit seq of a GZIP message equals that of the same message sent plainly") {
  const auto gz = read_file("gzip-message.jsonl");
  const std::string inner =
      "{\"version\":{\"version\":\"1.0.0\",\"versionParts\":[1]},\"msgCompressionKind\":\"NONE\","
      "\"msgSplitIdx\":1,\"msgSplitCount\":1,\"msgSourceIP\":\"10.0.0.1\",\"msgCreatedBy\":\"\","
      "\"msgCreationTime\":1700000000123,\"spooled\":false,\"message\":{\"type\":"
      "\"ENTITY_NOTIFICATION_V2\",\"entity\":{\"typeName\":\"hive_table\",\"attributes\":{"
      "\"owner\":\"etl\",\"createTime\":1699999990000,\"qualifiedName\":\"sales.orders@cl1\","
      "\"name\":\"orders\"},\"guid\":\"0b6f3c1e-2a4d-4e8f-9c1b-5d7e8f9a0b1c\",\"status\":"
      "\"ACTIVE\",\"displayText\":\"orders\",\"isIncomplete\":false},\"operationType\":"
      "\"ENTITY_UPDATE\",\"eventTime\":1700000000001}}";
  const auto plain = read_text(inner + "\n");
  REQUIRE(gz.events.size() == 1);
  REQUIRE(plain.events.size() == 1);
  CHECK(gz.events[0].audit_seq == plain.events[0].audit_seq);
  // And it is the SHA-256 prefix of the minified message object.
  const std::string message =
      inner.substr(inner.find("\"message\":") + 10, inner.size() - inner.find("\"message\":") - 11);
  CHECK(plain.events[0].audit_seq == sha256_prefix_i64(message));
  // Whitespace outside the strings (here after every colon of the message) changes nothing:
  // a compact record is hashed as it is, any other minified first.
  std::string spaced = inner;
  for (std::size_t at = spaced.find("\":"); at != std::string::npos;
       at = spaced.find("\":", at + 3)) {
    spaced.insert(at + 2, " ");
  }
  const auto spaced_out = read_text(spaced + "\n");
  REQUIRE(spaced_out.events.size() == 1);
  CHECK(spaced_out.events[0].audit_seq == plain.events[0].audit_seq);
}

TEST_CASE("validation_only (check): the same events and rejections, no audit seq or values") {
  // Every framing and level a payload's attributes can come in (envelope, spaced, V1 "values",
  // bare payload, kcat payload, GZIP, split message), and bad attribute values at each: where
  // compile writes their text, check only validates them, with the same verdicts.
  const std::string attrs = R"({"qualifiedName":"q","x":{"y":[1,2]},"z":"s"})";
  const std::string spaced =
      "{ \"version\" : {\"version\":\"1.0.0\"}, \"msgCreationTime\": 1700000000000, \"message\" : "
      "{ \"type\" : \"ENTITY_NOTIFICATION_V2\", \"entity\" : { \"typeName\" : \"t\", "
      "\"guid\" : \"00000001-0000-4000-8000-000000000001\", \"attributes\" : { \"name\" : "
      "\"n\", \"a\" : [ 1 , { \"b\" : \"\\u00e9\" } ] } }, \"operationType\" : "
      "\"ENTITY_UPDATE\", \"eventTime\" : 1000 } }";
  const auto v1 = [](const std::string& values, const std::string& more) {
    return envelope(
        R"({"type":"ENTITY_NOTIFICATION_V1","operationType":"ENTITY_UPDATE","eventTime":1000,)"
        R"("entity":{"id":{"id":"00000001-0000-4000-8000-000000000002","typeName":"t"},)"
        R"("values":)" +
        values + more + "}}");
  };
  int offset = 0;  // a Kafka offset read twice would be passed over as a replay
  const auto kcat = [&offset](const std::string& payload) {
    return fmt::format(
        R"({{"topic":"ATLAS_ENTITIES","partition":0,"offset":{},"ts":1700000000000,"payload":{}}})",
        offset++, json_quote(payload));
  };
  std::string text = envelope(entity_message("ENTITY_UPDATE", attrs)) + "\n" + spaced + "\n" +
                     v1(R"({"qualifiedName":"v","owner":"o","n":[1.5e3,null,true]})", "") + "\n" +
                     entity_message("ENTITY_CREATE", attrs) + "\n" +
                     kcat(envelope(entity_message("ENTITY_DELETE", attrs))) + "\n" +
                     slurp(data("gzip-message.jsonl")) + slurp(data("split-message.jsonl"));
  REQUIRE(read_text(text).events.size() == 7);
  // Rejected in the attribute walk only: each is valid JSON up to the value, or a value no parse
  // before the walk looks at.
  const std::vector<std::pair<std::string, RejectCode>> bad_values = {
      {R"({"a":{"b":1,"b":2}})", RejectCode::kDuplicateKey},
      {R"({"a":[01]})", RejectCode::kInvalidJson},
      {R"({"a":[1.]})", RejectCode::kInvalidJson},
      {R"({"a":"\x"})", RejectCode::kInvalidJson},
      {R"({"a":tru})", RejectCode::kInvalidJson},
      {R"({"a":[[[[[[[[[[1]]]]]]]]]]})", RejectCode::kTooLarge},
  };
  std::array<std::uint64_t, kRejectCodeCount> expected{};
  for (const auto& [value, code] : bad_values) {
    text += envelope(entity_message("ENTITY_UPDATE", value)) + "\n";  // V2 attributes
    text += v1(value, "") + "\n";                                     // V1 values
    text += entity_message("ENTITY_UPDATE", value) + "\n";            // a bare payload
    text += kcat(envelope(entity_message("ENTITY_UPDATE", value))) + "\n";
    // The set the payload's generation does not use is validated all the same.
    text += envelope(entity_message("ENTITY_UPDATE", "{},\"values\":" + value)) + "\n";
    text += v1("{}", ",\"attributes\":" + value) + "\n";
    expected[static_cast<std::size_t>(code)] += 6;
  }
  ReaderLimits limits;
  limits.max_json_depth = 8;
  const ReadOutcome compile = read_text(text, limits);
  const ReadOutcome check = read_text(text, limits, static_cast<std::size_t>(-1), true);
  CHECK(compile.stats.per_reason == expected);
  CHECK(check.stats == compile.stats);
  // The same diagnostics, but for the name of each reading's reject file.
  const auto without_reject_file = [](std::vector<std::string> lines) {
    std::erase_if(lines, [](const std::string& l) { return contains(l, "more rejections"); });
    return lines;
  };
  CHECK(without_reject_file(check.diagnostics) == without_reject_file(compile.diagnostics));
  CHECK(check.reject_file == compile.reject_file);
  for (const std::string path :
       {"message.entity.attributes.a", "message.entity.values.a", "record.entity.attributes.a"}) {
    CAPTURE(path);
    CHECK(contains(compile.reject_file, fmt::format(R"({}: member \"b\" appears twice)", path)));
  }
  REQUIRE(compile.events.size() == 7);
  REQUIRE(check.events.size() == compile.events.size());
  for (std::size_t i = 0; i < compile.events.size(); ++i) {
    CAPTURE(i);
    const Event& c = compile.events[i];
    const Event& v = check.events[i];
    CHECK(c.audit_seq != 0);
    CHECK(v.audit_seq == 0);
    CHECK(v.attributes.empty());
    CHECK(v.op == c.op);
    CHECK(v.guid == c.guid);
    CHECK(v.type_name == c.type_name);
    CHECK(v.qualified_name == c.qualified_name);
    CHECK(v.name == c.name);
    CHECK(v.classifications == c.classifications);
    CHECK(v.relationship == c.relationship);
    CHECK(v.event_time_us == c.event_time_us);
    CHECK(v.legacy_v1 == c.legacy_v1);
    CHECK(v.pos.line == c.pos.line);
    CHECK(v.pos.kafka.has_value() == c.pos.kafka.has_value());
  }
  CHECK(compile.events[0].attributes.size() == 2);
  CHECK(compile.events[1].name == "n");
  CHECK(compile.events[1].attributes.size() == 1);
  CHECK(compile.events[2].qualified_name == "v");
  CHECK(compile.events[2].attributes.size() == 2);
  CHECK(compile.events[3].attributes.size() == 2);  // the bare payload
  CHECK(compile.events[4].attributes.size() == 2);  // the kcat payload
  CHECK(compile.events[4].pos.kafka);
}

TEST_CASE("insignificant whitespace does not change the audit seq; content does") {
  const std::string compact = envelope(entity_message("ENTITY_UPDATE"));
  const std::string spaced =
      "{ \"version\" : {\"version\":\"1.0.0\"}, \"msgCreationTime\": 1700000000000, \"message\" : "
      "{ \"type\" : \"ENTITY_NOTIFICATION_V2\", \"entity\" : { \"typeName\" : \"t\", "
      "\"attributes\" : "
      "{ \"qualifiedName\" : \"q\" }, \"guid\" : \"00000001-0000-4000-8000-000000000001\" }, "
      "\"operationType\" : \"ENTITY_UPDATE\", \"eventTime\" : 1000 } }";
  const auto out =
      read_text(compact + "\n" + spaced + "\n" +
                envelope(entity_message("ENTITY_UPDATE", "{\"qualifiedName\":\"r\"}")) + "\n");
  REQUIRE(out.events.size() == 3);
  CHECK(out.events[0].audit_seq == out.events[1].audit_seq);
  CHECK(out.events[0].audit_seq != out.events[2].audit_seq);
}

TEST_CASE("kcat -J records keep topic, partition and offset") {
  const auto out = read_file("kcat.jsonl");
  CHECK(out.diagnostics.empty());
  REQUIRE(out.events.size() == 4);
  REQUIRE(out.events[2].pos.kafka);
  CHECK(out.events[2].pos.kafka->topic == "ATLAS_ENTITIES");
  CHECK(out.events[2].pos.kafka->partition == 0);
  CHECK(out.events[2].pos.kafka->offset == 102);
  CHECK(out.events[2].type_name == "hive_column");
}

TEST_CASE("console prefixes are stripped and tool diagnostics skipped") {
  const auto out = read_file("console-prefixed.txt");
  CHECK(out.diagnostics.empty());
  REQUIRE(out.events.size() == 4);
  CHECK(out.stats.ignored_lines == 1);
  CHECK(out.stats.consumer_errors == 0);
  // The consumer's error lines among them: counted, the first named by its input and line.
  const auto failed = read_text(
      "% Reached end of topic ATLAS_ENTITIES [0] at offset 3\n"
      "% ERROR: Topic ATLAS_ENTITIES [0] error: Broker: Offset out of "
      "range\n% Fatal error at consume_cb:567:\n");
  CHECK(failed.stats.ignored_lines == 3);
  CHECK(failed.stats.consumer_errors == 2);
  CHECK(failed.stats.first_consumer_error ==
        "t.jsonl:2: % ERROR: Topic ATLAS_ENTITIES [0] error: Broker: Offset out of range");
  REQUIRE(out.events[1].pos.kafka);
  CHECK(out.events[1].pos.kafka->offset == 201);
  CHECK(out.events[1].pos.kafka->partition == 0);
}

TEST_CASE("a console record's CreateTime: is the event time of last resort, as kcat's ts is") {
  // No eventTime and no msgCreationTime: the Kafka timestamp is all there is.
  const std::string bare =
      "{\"version\":{\"version\":\"1.0.0\",\"versionParts\":[1]},\"msgCompressionKind\":\"NONE\","
      "\"msgSplitIdx\":1,\"msgSplitCount\":1,\"message\":" +
      entity_message("ENTITY_UPDATE", "{\"qualifiedName\":\"q\"}", "") + "}";
  const auto out = read_text("CreateTime:1700000001555\tPartition:0\tOffset:7\t" + bare +
                             "\nLogAppendTime:1700000002666\t" + bare + "\nCreateTime:-1\t" + bare +
                             "\n" + bare + "\n");
  REQUIRE(out.events.size() == 2);
  CHECK(out.events[0].event_time_us == 1700000001555000);
  CHECK(out.events[1].event_time_us == 1700000002666000);
  // A record without a timestamp (-1), and one without the prefix: nothing to fall back on.
  REQUIRE(out.diagnostics.size() == 2);
  for (const std::string& d : out.diagnostics) {
    CHECK(contains(d, "message.eventTime: missing, and no msgCreationTime or Kafka timestamp"));
  }
  // msgCreationTime comes first.
  const auto created = read_text("CreateTime:1700000001555\t" +
                                 envelope(entity_message("ENTITY_UPDATE", "{}", "")) + "\n");
  REQUIRE(created.events.size() == 1);
  CHECK(created.events[0].event_time_us == 1700000000000000);
}

TEST_CASE("a kcat ts that is no int64 is left out, as a console CreateTime: that is no time") {
  // Only the event time of last resort: the record's own eventTime stands, and without one the
  // record is rejected for that, at its Kafka position. A ts that is no JSON number is invalid
  // JSON all the same.
  int offset = 0;  // each its own, or the same offset read again is passed over
  const auto kcat = [&offset](const std::string& ts, const std::string& event_time) {
    // An envelope without msgCreationTime, which would come before the Kafka timestamp.
    const std::string payload =
        "{\"version\":{\"version\":\"1.0.0\",\"versionParts\":[1]},\"msgCompressionKind\":"
        "\"NONE\",\"msgSplitIdx\":1,\"msgSplitCount\":1,\"message\":" +
        entity_message("ENTITY_UPDATE", "{\"qualifiedName\":\"q\"}", event_time) + "}";
    return R"({"topic":"ATLAS_ENTITIES","partition":0,"offset":)" + std::to_string(offset++) +
           R"(,"ts":)" + ts + R"(,"payload":)" + json_quote(payload) + "}\n";
  };
  std::string text = kcat("99999999999999999999999", ",\"eventTime\":1000");
  text += kcat("1.5e3", ",\"eventTime\":2000");
  text += kcat("1700000000123", "");
  auto out = read_text(text);
  CHECK(out.diagnostics.empty());
  REQUIRE(out.events.size() == 3);
  CHECK(out.events[0].event_time_us == 1000000);
  CHECK(out.events[1].event_time_us == 2000000);
  CHECK(out.events[2].event_time_us == 1700000000123000);
  text = kcat("99999999999999999999999", "");
  text += kcat("01", ",\"eventTime\":1000");
  out = read_text(text);
  REQUIRE(out.diagnostics.size() == 2);
  CHECK(contains(out.diagnostics[0],
                 "(ATLAS_ENTITIES/0@3): message.eventTime: missing, and no "
                 "msgCreationTime or Kafka timestamp"));
  CHECK(contains(out.diagnostics[1],
                 "t.jsonl:2:431: invalid JSON at byte 56 of the record: a "
                 "number JSON does not allow: \"01,\"payload\""));
}

TEST_CASE("a reject line names a file whose name is no UTF-8 exactly, in source_base64") {
  SourcePosition pos;
  pos.source = "bad\xffname.jsonl";
  const std::string line =
      rejection_json(Rejection{pos, RejectCode::kNotJson, "not a JSON object", "x", 0, {}});
  CHECK(line.starts_with("{\"source\":\"bad\\ufffdname.jsonl\",\"source_base64\":\"" +
                         base64_encode(pos.source) + "\",\"line\":"));
  pos.source = "caf\xc3\xa9.jsonl";  // valid: the name alone
  CHECK_FALSE(contains(
      rejection_json(Rejection{pos, RejectCode::kNotJson, "not a JSON object", "x", 0, {}}),
      "source_base64"));
}

TEST_CASE("a console record's reject line keeps its prefixes: fixed, it reads as it was") {
  // Without them, a record whose event time was its CreateTime: could not be read again once
  // fixed, and its Kafka coordinates were lost for the next run's overlap check.
  const std::string bare =
      "{\"version\":{\"version\":\"1.0.0\",\"versionParts\":[1]},\"msgCompressionKind\":\"NONE\","
      "\"msgSplitIdx\":1,\"msgSplitCount\":1,\"message\":" +
      entity_message("ENTITY_UPDATE", "{\"qualifiedName\":\"q\",\"q\":1,\"q\":2}", "") + "}";
  const std::string prefix = "CreateTime:1700000001555\tPartition:0\tOffset:7\t";
  const std::string chunk = split_chunk("m_9", 0, 2, "aGVsbG8g");
  const auto out = read_text(prefix + bare + "\nPartition:1\tOffset:3\t" + chunk + "\n" + bare +
                             "\nPartition:0\tOffset:8\t\n");
  REQUIRE(out.diagnostics.size() == 4);
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < out.reject_file.size();) {
    const std::size_t end = out.reject_file.find('\n', at);
    lines.push_back(out.reject_file.substr(at, end - at));
    at = end + 1;
  }
  REQUIRE(lines.size() == 4);
  // The duplicate key, with its prefixes; the bare record again, with none; the empty message;
  // then the chunk of the message that never completed, held until the end with its prefixes.
  CHECK(contains(lines[0], "\"kafka\":{\"partition\":0,\"offset\":7}"));  // no topic printed
  CHECK(contains(lines[0],
                 "\"console_prefix\":\"CreateTime:1700000001555\\tPartition:0\\tOffset:7\\t\""));
  CHECK_FALSE(contains(lines[1], "console_prefix"));
  CHECK(contains(lines[2], "\"console_prefix\":\"Partition:0\\tOffset:8\\t\",\"record\":\"\"}"));
  CHECK(contains(lines[3], "\"code\":\"bad-split\""));
  CHECK(contains(lines[3], "\"console_prefix\":\"Partition:1\\tOffset:3\\t\""));

  // The first one fixed (its duplicate member taken out) and read again: its event time is the
  // CreateTime: its prefixes carry, at its Kafka position.
  simdjson::dom::parser parser;
  const simdjson::dom::element rejected = parser.parse(lines[0]);
  std::string fixed = std::string(std::string_view(rejected["console_prefix"])) +
                      std::string(std::string_view(rejected["record"]));
  CHECK(fixed == prefix + bare);  // the line as it was
  const std::string duplicate = ",\"q\":1,\"q\":2";
  fixed.replace(fixed.find(duplicate), duplicate.size(), "");
  const auto again = read_text(fixed + "\n");
  CHECK(again.diagnostics.empty());
  REQUIRE(again.events.size() == 1);
  CHECK(again.events[0].event_time_us == 1700000001555000);
  REQUIRE(again.events[0].pos.kafka);
  CHECK(again.events[0].pos.kafka->offset == 7);
}

TEST_CASE("a top-level array and concatenated pretty-printed documents read alike") {
  const auto lines = read_file("atlas21-console.jsonl");
  for (const char* name : {"array-pretty.json", "concatenated-pretty.json"}) {
    CAPTURE(name);
    const auto out = read_file(name, 5);
    CHECK(out.diagnostics.empty());
    REQUIRE(out.events.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(out.events[i].guid == lines.events[i].guid);
      CHECK(out.events[i].attributes == lines.events[i].attributes);
      CHECK(out.events[i].audit_seq == lines.events[i].audit_seq);
    }
  }
}

TEST_CASE("legacy V1 payloads, with and without envelope") {
  const auto out = read_file("v1-legacy.jsonl");
  CHECK(out.diagnostics.empty());
  REQUIRE(out.events.size() == 4);
  const Event& create = out.events[0];
  CHECK(create.legacy_v1);
  CHECK(create.op == Operation::kEntityCreate);
  CHECK(create.guid.dashed() == "40dc03dc-16d6-4281-826d-c4884cd1dad5");
  CHECK(create.type_name == "ResearchPaperAccessDataset");
  CHECK(create.qualified_name == "ResearchPaperAccessDataset.1224-WV-SP-INT-HWX");
  CHECK(create.event_time_us == 1490472433500000);  // systemAttributes.modifiedTime
  CHECK(find_attr(create, "createTime")->json == "\"2017-03-25T20:07:12.000Z\"");
  CHECK(find_attr(create, "resourceSetID")->json == "1224");

  const Event& trait = out.events[1];
  CHECK(trait.op == Operation::kClassificationAdd);
  REQUIRE(trait.classifications.size() == 1);
  CHECK(trait.classifications[0].type_name == "PII");
  CHECK(trait.classifications[0].attributes_json == "{\"level\":3}");
  CHECK(trait.classifications[0].entity_guid == trait.guid);

  CHECK(out.events[2].op == Operation::kEntityDelete);
  CHECK(out.events[2].event_time_us == 1490472499000000);  // systemAttributes null: envelope time
  CHECK(out.events[3].op == Operation::kEntityUpdate);     // bare payload, no envelope
  CHECK(out.events[3].event_time_us == 1490472500000000);
}

TEST_CASE("event positions outlive the reader that produced them") {
  const std::vector<Event> events = read_all_events({data("atlas21-console.jsonl")});
  REQUIRE(events.size() == 4);
  CHECK(events[3].pos.source == data("atlas21-console.jsonl"));
  CHECK(format_position(events[3].pos) == data("atlas21-console.jsonl") + ":4:1581");
}

TEST_CASE("a position stays on one line whatever its file name or topic holds") {
  SourcePosition pos;
  pos.source = "ex\nport\\.jsonl";
  pos.line = 7;
  pos.offset = 99;
  CHECK(format_position(pos) == "ex\\nport\\\\.jsonl:7:99");
  pos.kafka = SourcePosition::Kafka{"ATLAS\r_ENTITIES\xff", 2, 41};
  CHECK(format_position(pos) == "ex\\nport\\\\.jsonl:7:99 (ATLAS\\r_ENTITIES\\xff/2@41)");
  pos.kafka->topic.clear();  // console prefixes: no topic
  CHECK(format_position(pos) == "ex\\nport\\\\.jsonl:7:99 (partition 2, offset 41)");
}

TEST_CASE("a large file reads as the same bytes in memory, and bytes_read ends at its size") {
  // Plain files are read straight into the framer's buffer once the first megabyte (buffered to
  // look for the gzip magic) is used up; records straddle both kinds of read.
  std::string text;
  for (int n = 1; text.size() < (std::size_t{3} << 20) + 12345; ++n) {
    text += create_table_line(n, fmt::format(",\"pad\":\"{}\"", std::string(n % 997, 'x')),
                              1700000000000 + n) +
            "\n";
  }
  const ReadOutcome expected = read_text(text);
  REQUIRE(expected.events.size() > 3000);
  for (const bool gzip : {false, true}) {
    CAPTURE(gzip);
    const std::string path = tmp_path(gzip ? ".jsonl.gz" : ".jsonl");
    const std::string stored = gzip ? gzip_compress(text) : text;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(stored.data(), 1, stored.size(), f);
    std::fclose(f);
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader({path}, sink);
    std::size_t i = 0;
    std::uint64_t last_bytes = 0;
    for (Event e; reader.next(e); ++i) {
      REQUIRE(i < expected.events.size());
      CHECK(e.guid == expected.events[i].guid);
      CHECK(e.attributes == expected.events[i].attributes);
      CHECK(e.pos.line == expected.events[i].pos.line);
      CHECK(e.pos.offset == expected.events[i].pos.offset);
      CHECK(reader.bytes_read() >= last_bytes);
      last_bytes = reader.bytes_read();
      if (!gzip) {
        // Up to the end of the record read, not the framer's read-ahead (the progress line's
        // percent would run ahead of the records by a buffer).
        CHECK(last_bytes > e.pos.offset);
        CHECK(last_bytes <=
              (i + 1 < expected.events.size() ? expected.events[i + 1].pos.offset : stored.size()));
      }
    }
    CHECK(i == expected.events.size());
    CHECK(reader.bytes_read() == stored.size());
    ::unlink(path.c_str());
  }
}

TEST_CASE("gzip-compressed export files are inflated") {
  RejectSink sink(RejectPolicy{}, nullptr);
  Reader reader({data("atlas21-console.jsonl.gz")}, sink);
  int n = 0;
  for (Event e; reader.next(e);) ++n;
  CHECK(n == 4);
}

TEST_CASE("gzip inputs: members continue, a cut or appended-to file is an error") {
  const std::string good = envelope(entity_message("ENTITY_CREATE")) + "\n";
  const std::string member = gzip_compress(good);
  char path[] = "/tmp/atlas2kudu-gz-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  const std::string name = path;
  // `bytes` read from the file `at` (the temporary file unless said).
  const auto read_file_bytes = [&](const std::string& bytes,
                                   const std::string& at = std::string()) -> std::string {
    const std::string file = at.empty() ? name : at;
    std::FILE* f = std::fopen(file.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    RejectSink sink(RejectPolicy{}, nullptr);
    Reader reader({file}, sink);
    int n = 0;
    try {
      for (Event e; reader.next(e);) ++n;
    } catch (const SourceError& e) {
      CHECK(e.category() == ErrorCategory::kIo);
      return std::to_string(n) + " events, then: " + e.what();
    }
    return std::to_string(n) + " events";
  };
  CHECK(read_file_bytes(member + member + member) == "3 events");
  CHECK(read_file_bytes(member + "{\"not\":\"gzip\"}\n") ==
        "1 events, then: " + name + ": data after the last gzip member, at byte " +
            std::to_string(member.size()) + " (a damaged or appended-to file)");
  CHECK(read_file_bytes(member + std::string(1, '\x1f')) ==
        "1 events, then: " + name + ": data after the last gzip member, at byte " +
            std::to_string(member.size()) + " (a damaged or appended-to file)");
  // NUL padding to the end (a tape's or copy tool's last block) is ignored, as gzip(1) does, over
  // more than one buffer of it; anything else in it is not.
  CHECK(read_file_bytes(member + std::string(3 << 20, '\0')) == "1 events");
  CHECK(read_file_bytes(member + std::string(2 << 20, '\0') + "x" + std::string(9, '\0')) ==
        "1 events, then: " + name + ": data after the last gzip member, at byte " +
            std::to_string(member.size() + (2 << 20)) + " (a damaged or appended-to file)");
  CHECK(read_file_bytes(member.substr(0, member.size() - 4))
            .ends_with(": truncated gzip data: the file ends inside a gzip member, at byte " +
                       std::to_string(member.size() - 4)));
  std::string corrupt = member;
  corrupt[12] = static_cast<char>(corrupt[12] ^ 0x55);
  CHECK(read_file_bytes(corrupt).find(": corrupt gzip data near byte ") != std::string::npos);
  CHECK(read_file_bytes("") == "0 events");
  CHECK(read_file_bytes(good) == "1 events");  // plain text passes through
  std::remove(path);

  // A file named *.gz is gzip: empty, cut in its magic bytes, or plain text, it is an error, not
  // an export of nothing (an empty one is what `... | gzip > x.gz` killed early leaves).
  const std::string gz = name + ".gz";
  CHECK(read_file_bytes("", gz) ==
        "0 events, then: " + gz + ": truncated gzip data: the file is empty");
  CHECK(read_file_bytes("\x1f", gz) ==
        "0 events, then: " + gz +
            ": truncated gzip data: the file ends inside a gzip member, at byte 1");
  CHECK(read_file_bytes(good, gz) == "0 events, then: " + gz +
                                         ": not gzip data, though its name ends in .gz (it does "
                                         "not start with the gzip magic bytes 1f 8b)");
  CHECK(read_file_bytes(member, gz) == "1 events");
  std::remove(gz.c_str());

  // Formats it does not read are named, with the command that makes them readable, rather than
  // rejected line by line as not JSON. Their first bytes start no JSON and no console line.
  using namespace std::string_literals;
  for (const auto& format : std::vector<std::pair<std::string, std::string>>{
           {"\xFD"
            "7zXZ\0\0\x04"s,
            "xz data, which atlas2kudu does not read (UTF-8 text or gzip "
            "only); decompress it first: xz -dc FILE | atlas2kudu ... -"},
           {"BZh91AY&SY"s,
            "bzip2 data, which atlas2kudu does not read (UTF-8 text or gzip only); "
            "decompress it first: bzip2 -dc FILE | atlas2kudu ... -"},
           {"\x28\xB5\x2F\xFD\x24"s, "zstd data, "},
           {"\x04\x22\x4D\x18\x64"s, "lz4 data, "},
           {"PK\x03\x04\x14\0"s,
            "a zip archive, which atlas2kudu does not read (UTF-8 text or "
            "gzip only); extract it first: unzip -p FILE | atlas2kudu ... -"},
           {"\xFF\xFE{\0"s,
            "UTF-16 text, which atlas2kudu does not read (UTF-8 text or gzip "
            "only); convert it first: iconv -f UTF-16 -t UTF-8 FILE | atlas2kudu "
            "... -"},
           {"\xFE\xFF\0{"s, "UTF-16 text, "},
           // compile's output given back to apply (apply out.sql)
           {"-- atlas2kudu 0.1.0 compile\n-- options: --database atlas\n"s,
            "SQL written by atlas2kudu compile, not notifications; run it with impala-shell -f, "
            "or give atlas2kudu the notifications it was compiled from"}}) {
    const std::string& said = format.second;  // clang 14 captures no structured binding
    CAPTURE(said);
    CHECK(read_file_bytes(format.first).starts_with("0 events, then: " + name + ": " + said));
  }
  // Text that only starts as one of them does is read, and its line rejected as it is.
  for (const std::string start : {"BZh9 not bzip2\n", "PK\n"}) {
    CAPTURE(start);
    std::string stopped;
    try {
      read_file_bytes(start + good);
    } catch (const std::exception& e) {
      stopped = e.what();
    }
    CHECK(stopped.starts_with("stopped at the first malformed record (" + name + ":1:0)"));
  }

  // A tar archive, plain or gzip-compressed: its 512-byte header holds the magic at byte 257,
  // POSIX "ustar\0" + "00" or GNU "ustar  \0". Without this, the header and the first record
  // read as one bad record, the padding as another.
  for (const std::string& magic : {"ustar\0"
                                   "00"s,
                                   "ustar  \0"s}) {
    std::string header(512, '\0');
    header.replace(0, 11, "plain.jsonl");
    header.replace(257, magic.size(), magic);
    const std::string tar = header + good + std::string(512 - good.size() % 512, '\0');
    const std::string says =
        ": a tar archive, which atlas2kudu does not read (UTF-8 text or gzip "
        "only); extract its files to standard output first: tar -xOf FILE | "
        "atlas2kudu ... -";
    CHECK(read_file_bytes(tar) == "0 events, then: " + name + says);
    CHECK(read_file_bytes(gzip_compress(tar), gz) ==
          "0 events, then: " + gz +
              ": a tar archive (gzip-compressed), which atlas2kudu does not read (UTF-8 text or "
              "gzip only); extract its files to standard output first: tar -xzOf FILE | "
              "atlas2kudu ... -");
  }
  // Text never holds the NUL byte: a record with "ustar" at byte 257 is read.
  const std::string ustar_text = "{\"a\":\"" + std::string(251, 'x') + "ustar  \"}\n";
  REQUIRE(ustar_text.compare(257, 5, "ustar") == 0);
  std::string read_as_text;
  try {
    read_as_text = read_file_bytes(ustar_text);
  } catch (const std::exception& e) {
    read_as_text = e.what();  // its one record is not an event: rejected as such
  }
  CHECK(read_as_text.starts_with("stopped at the first malformed record (" + name + ":1:0)"));
  std::remove(gz.c_str());
  std::remove(path);
}

TEST_CASE("numbers are kept exactly as written, strings re-escaped canonically") {
  const auto out =
      read_text(envelope(entity_message(
                    "ENTITY_CREATE",
                    "{\"big\":123456789012345678901234567890,\"f\":1.0,\"e\":1E+3,\"neg\":-0.5e-7,"
                    "\"s\":\"a\\u0041\\n\\u00e9\\\"\",\"nested\":{ \"k\" : [ 1.50 , true, null ] "
                    "},\"gone\":null}")) +
                "\n");
  REQUIRE(out.events.size() == 1);
  const Event& e = out.events[0];
  CHECK(find_attr(e, "big")->json == "123456789012345678901234567890");
  CHECK(find_attr(e, "f")->json == "1.0");
  CHECK(find_attr(e, "e")->json == "1E+3");
  CHECK(find_attr(e, "neg")->json == "-0.5e-7");
  CHECK(find_attr(e, "s")->json == "\"aA\\n\xc3\xa9\\\"\"");
  CHECK(find_attr(e, "nested")->json == "{\"k\":[1.50,true,null]}");
  CHECK(find_attr(e, "gone") == nullptr);  // null never sets a column
  CHECK_FALSE(e.qualified_name);
}

TEST_CASE("fork fields are ignored (Atlan, Purview)") {
  const auto out = read_text(
      envelope(
          "{\"type\":\"ENTITY_NOTIFICATION_V2\",\"mutatedDetails\":{\"x\":[1]},\"entity\":{"
          "\"typeName\":"
          "\"Table\",\"guid\":\"00000001-0000-4000-8000-000000000001\",\"createdBy\":\"svc\","
          "\"updateTime\":1,\"deleteHandler\":\"SOFT\",\"attributes\":{\"qualifiedName\":\"q\"},"
          "\"classifications\":[{\"typeName\":\"PII\",\"lastModifiedTS\":\"1\",\"entityGuid\":"
          "\"00000002-0000-4000-8000-000000000002\",\"restrictPropagationThroughLineage\":false}]},"
          "\"operationType\":\"CLASSIFICATION_ADD\",\"eventTime\":7}") +
      "\n");
  CHECK(out.diagnostics.empty());
  REQUIRE(out.events.size() == 1);
  REQUIRE(out.events[0].classifications.size() == 1);
  CHECK(out.events[0].classifications[0].entity_guid.dashed() ==
        "00000002-0000-4000-8000-000000000002");  // propagated
}

TEST_CASE("relationship update with status DELETED and label fallback") {
  const auto out = read_text(
      envelope("{\"type\":\"ENTITY_NOTIFICATION_V2\",\"relationship\":{\"typeName\":\"hive_table_"
               "columns\","
               "\"status\":\"DELETED\",\"end1\":{\"guid\":\"00000001000040008000000000000001\","
               "\"typeName\":\"hive_table\"},\"end2\":{\"guid\":\"00000002-0000-4000-8000-"
               "000000000002\"}},"
               "\"operationType\":\"RELATIONSHIP_UPDATE\",\"eventTime\":7}") +
      "\n");
  REQUIRE(out.events.size() == 1);
  const Event& e = out.events[0];
  CHECK(e.relationship.status_deleted);
  CHECK(e.relationship.edge_label() == "hive_table_columns");
  CHECK_FALSE(e.relationship.guid);
  CHECK(e.relationship.end2.type_name.empty());
}

TEST_CASE("incomplete split message at end of input: each of its records rejected verbatim") {
  const std::string text = slurp(data("split-message.jsonl"));
  const std::size_t end0 = text.find('\n') + 1;
  const std::string first_two = text.substr(0, text.find('\n', end0) + 1);
  const auto out = read_text(first_two);
  CHECK(out.events.empty());
  REQUIRE(out.diagnostics.size() == 2);
  const std::string reason =
      "split message 5c0e2f0a-6d1b-4b7e-9a55-3f1f2d9c8e71_0 incomplete at end of input: 2 of 5 "
      "chunks arrived";
  CHECK(out.diagnostics[0] == "t.jsonl:1:0: " + reason);
  CHECK(out.diagnostics[1] == "t.jsonl:2:" + std::to_string(end0) + ": " + reason);
  CHECK(out.stats.rejected == 2);
  CHECK(out.stats.split_chunks == 0);
  CHECK(out.stats.records == out.stats.events + out.stats.rejected + out.stats.split_chunks);
  // The reject file holds both chunk records, byte for byte.
  CHECK(out.reject_file.find("\"record\":" + json_quote(first_two.substr(0, end0 - 1))) !=
        std::string::npos);
  CHECK(out.reject_file.find("\"record\":" +
                             json_quote(first_two.substr(end0, first_two.size() - end0 - 1))) !=
        std::string::npos);

  // The whole message, then two of its chunks again (an export overlapping the first): one
  // event, and the copies are said to be copies.
  const auto again = read_text(text + first_two);
  CHECK(again.events.size() == 1);
  REQUIRE(again.diagnostics.size() == 2);
  const std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  const std::size_t last_line = text.rfind('\n', text.size() - 2) + 1;  // the chunk completing it
  CHECK(again.diagnostics[0] ==
        "t.jsonl:" + std::to_string(lines + 1) + ":" + std::to_string(text.size()) + ": " + reason +
            "; a message with this msgId was completed earlier, at t.jsonl:" +
            std::to_string(lines) + ":" + std::to_string(last_line) +
            " (copies of some of its chunks, from exports that overlap? or a msgId used again)");
}

TEST_CASE("a completed split message that is bad is rejected as all of its records") {
  // Chunks whose joined text is not Base64 of gzip: every chunk record lands in the reject file.
  const std::string c1 = split_chunk("m_bad", 1, 2, "AAAA");
  const std::string c0 = split_chunk("m_bad", 0, 2, "AAAA");
  const std::string good = envelope(entity_message("ENTITY_CREATE"));
  const auto out = read_text(c1 + "\n" + good + "\n" + c0 + "\n");
  CHECK(out.events.size() == 1);
  REQUIRE(out.diagnostics.size() == 2);
  CHECK(out.diagnostics[0].starts_with("t.jsonl:1:0: message: corrupt or truncated gzip data"));
  CHECK(out.diagnostics[1].starts_with("t.jsonl:3:"));
  CHECK(out.stats.rejected == 2);
  CHECK(out.stats.records == out.stats.events + out.stats.rejected + out.stats.split_chunks);
  CHECK(out.reject_file.find(json_quote(c1)) != std::string::npos);
  CHECK(out.reject_file.find(json_quote(c0)) != std::string::npos);
}

TEST_CASE("a redelivered chunk is absorbed; a conflicting one is rejected") {
  const std::string text = slurp(data("split-message.jsonl"));
  const std::string line0 = text.substr(0, text.find('\n') + 1);
  auto out = read_text(line0 + text);
  CHECK(out.diagnostics.empty());
  CHECK(out.events.size() == 1);

  std::string conflicting = line0;
  conflicting.replace(conflicting.find("H4sI"), 4, "H4sJ");
  out = read_text(line0 + conflicting + text.substr(line0.size()));
  REQUIRE(out.diagnostics.size() == 1);
  CHECK(out.diagnostics[0].find(
            "chunk 0 of msgId 5c0e2f0a-6d1b-4b7e-9a55-3f1f2d9c8e71_0 arrived twice with "
            "different content") != std::string::npos);
  CHECK(out.events.size() == 1);
}

TEST_CASE("framing: truncation is found on its own line, pretty documents span lines") {
  const std::string good = envelope(entity_message("ENTITY_CREATE"));
  // A line cut right after a comma, followed by good lines: only the cut line is rejected.
  auto out = read_text(good.substr(0, good.find("\"msgSplitIdx\"")) + "\n" + good + "\n" + good);
  CHECK(out.events.size() == 2);
  REQUIRE(out.diagnostics.size() == 1);
  CHECK(out.diagnostics[0] ==
        "t.jsonl:1:0: truncated JSON: 1 unclosed bracket(s) at end of line (a document that goes "
        "on over several lines must have its opening brace alone on its first line)");
  // The last line without a newline is fine; cut at end of input is reported there.
  out = read_text(good + "\n" + good.substr(0, good.find("1.0.0") + 2));
  CHECK(out.events.size() == 1);
  REQUIRE(out.diagnostics.size() == 1);
  CHECK(out.diagnostics[0] == "t.jsonl:2:" + std::to_string(good.size() + 1) +
                                  ": truncated JSON: unterminated string at end of input (the "
                                  "last record, cut short by the end of the input: was the input "
                                  "still being written?)");
  // Two documents on one line, and CRLF line ends.
  out = read_text(good + good + "\r\n" + good + "\r\n");
  CHECK(out.events.size() == 3);
  CHECK(out.diagnostics.empty());
  CHECK(out.events[1].pos.offset == good.size());
  CHECK(out.events[2].pos.line == 2);
  // An unclosed top-level array.
  out = read_text("[" + good + ",\n" + good);
  CHECK(out.events.size() == 2);
  REQUIRE(out.diagnostics.size() == 1);
  CHECK(
      out.diagnostics[0].ends_with("truncated JSON: the top-level array that starts here is not "
                                   "closed at end of input "
                                   "(the last record, cut short by the end of the input: was "
                                   "the input still being written?)"));
  // A lone "{" before records of one line each is one bad record: it once opened a document
  // that took every line after it, to the end of the input, into one bad record.
  std::string stray = good;
  for (const std::string& line : {std::string("{"), good, good}) stray += "\n" + line;
  out = read_text(stray + "\n");
  CHECK(out.events.size() == 3);
  REQUIRE(out.diagnostics.size() == 1);
  CHECK(out.diagnostics[0] == "t.jsonl:2:" + std::to_string(good.size() + 1) +
                                  ": not a JSON document: its next line starts with '{' where a "
                                  "member name belongs (a stray line of its own before the "
                                  "records that follow?)");
  // Unclosed at the end of the input, it is still reported there.
  out = read_text(good + "\n{\n");
  CHECK(out.events.size() == 1);
  REQUIRE(out.diagnostics.size() == 1);
  CHECK(out.diagnostics[0] == "t.jsonl:2:" + std::to_string(good.size() + 1) +
                                  ": truncated JSON: 1 unclosed bracket(s) at end of input (the "
                                  "last record, cut short by the end of the input: was the input "
                                  "still being written?)");
  // Blank lines and whitespace-only input produce nothing.
  out = read_text("\n\n   \n\t\n");
  CHECK(out.events.empty());
  CHECK(out.diagnostics.empty());
  CHECK(out.stats.records == 0);
}

TEST_CASE("records over the size limit are rejected without holding them") {
  const std::string good = envelope(entity_message("ENTITY_CREATE"));
  const std::string big =
      envelope(entity_message("ENTITY_CREATE", "{\"blob\":\"" + std::string(5000, 'x') + "\"}"));
  const auto out = read_text(good + "\n" + big + "\n" + good + "\n", 100, 2048);
  CHECK(out.events.size() == 2);
  REQUIRE(out.diagnostics.size() == 1);
  CHECK(out.diagnostics[0] == "t.jsonl:2:" + std::to_string(good.size() + 1) + ": record of " +
                                  std::to_string(big.size()) +
                                  " bytes is longer than the 2048 byte limit (--max-record-bytes)");
  // The reject file keeps its first bytes (as many as the limit, at most 4 KiB) and says how long
  // it was.
  CHECK(out.reject_file.find("\"record\":" + json_quote(big.substr(0, 2048)) +
                             ",\"record_truncated\":true,\"record_bytes\":" +
                             std::to_string(big.size()) + "}") != std::string::npos);
}

TEST_CASE("a GZIP message may inflate up to max_inflated_bytes, not one byte more") {
  constexpr std::size_t kLimit = 64 * 1024;
  const ReaderLimits limits{.max_inflated_bytes = kLimit};
  // An inner envelope padded with an attribute to exactly the limit, and one byte longer.
  auto with_pad = [](std::size_t n) {
    return envelope(entity_message(
        "ENTITY_CREATE", "{\"qualifiedName\":\"q\",\"pad\":\"" + std::string(n, 'x') + "\"}"));
  };
  const std::size_t pad = kLimit - with_pad(0).size();
  REQUIRE(with_pad(pad).size() == kLimit);

  auto out = read_text(gzip_envelope(gzip_compress(with_pad(pad))) + "\n", limits);
  CHECK(out.diagnostics.empty());
  REQUIRE(out.events.size() == 1);
  CHECK(find_attr(out.events[0], "pad")->json == fmt::format("\"{}\"", std::string(pad, 'x')));

  out = read_text(gzip_envelope(gzip_compress(with_pad(pad + 1))) + "\n", limits);
  CHECK(out.events.empty());
  REQUIRE(out.diagnostics.size() == 1);
  CHECK(out.diagnostics[0] ==
        "t.jsonl:1:0: message: decompresses to more than 65536 bytes (--max-message-bytes)");
  CHECK(out.stats.per_reason[static_cast<std::size_t>(RejectCode::kTooLarge)] == 1);
}

TEST_CASE("invalid JSON inside a record names the text it is in") {
  // The record's own text may be fine while the message it carries is not: the reader must know
  // which text to look at, and counts the byte from that text's start.
  const std::string kcat = R"({"topic":"ATLAS_ENTITIES","partition":0,"offset":1,"payload":)" +
                           json_quote("{\"version\":1,\"message\":{\"type\":\"x\",,\"a\":1}}") +
                           "}";
  const std::pair<std::string, std::string> cases[] = {
      {gzip_envelope(gzip_compress(R"({"type":"ENTITY_NOTIFICATION_V2","entity":{)")),
       "t.jsonl:1:0: message (decompressed): invalid JSON at byte 43: the end of the text inside "
       "an object"},
      // ... with the record's Kafka position, read before its payload failed.
      {kcat,
       "t.jsonl:1:0 (ATLAS_ENTITIES/0@1): payload: invalid JSON at byte 35: expected a member "
       "name (a string): \",\"a\":1}}\""},
      // A payload with whitespace before its JSON: counted from the payload's first byte.
      {R"({"topic":"T","partition":0,"offset":5,"payload":"   {\"version\":tru}"})",
       "t.jsonl:1:0 (T/0@5): payload: invalid JSON at byte 14: not a JSON value (true, false, "
       "null, a number, a string, an object or an array): \"tru}\""},
      {R"({"topic":"T","partition":0,"offset":6,"payload":"  {\"version\":{}} x"})",
       "t.jsonl:1:0 (T/0@6): payload: invalid JSON at byte 17: more after the end of the JSON "
       "value: \"x\""},
      // The record itself.
      {R"({"version":1,"message":{"type":"x",,"a":1}})",
       "t.jsonl:1:0: invalid JSON at byte 35 of the record: expected a member name (a string): "
       "\",\"a\":1}}\""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.first);
    const auto out = read_text(c.first + "\n");
    REQUIRE(out.diagnostics.size() == 1);
    CHECK(out.diagnostics[0] == c.second);
  }
}

TEST_CASE("a split message without GZIP is held to --max-message-bytes too") {
  // Base64 only: the message is as long as it decodes to, which the limit bounds as it does a
  // decompressed one (it once passed whatever its size).
  constexpr std::size_t kLimit = 64 * 1024;
  const std::string message = envelope(entity_message(
      "ENTITY_CREATE", "{\"qualifiedName\":\"q\",\"pad\":\"" + std::string(kLimit, 'x') + "\"}"));
  const std::string base64 = base64_encode(message);
  const auto chunk = [&](int index, std::string_view part) {
    return "{\"version\":{\"version\":\"1.0.0\"},\"msgId\":\"plain\",\"msgCompressionKind\":"
           "\"NONE\",\"msgSplitIdx\":" +
           std::to_string(index) + ",\"msgSplitCount\":2,\"message\":\"" + std::string(part) +
           "\"}\n";
  };
  const std::string text = chunk(0, std::string_view(base64).substr(0, 40000)) +
                           chunk(1, std::string_view(base64).substr(40000));
  const std::string reason = fmt::format(
      "message: decodes to {} bytes, more than {} (--max-message-bytes)", message.size(), kLimit);
  auto out = read_text(text, ReaderLimits{.max_inflated_bytes = kLimit});
  CHECK(out.events.empty());
  REQUIRE(out.diagnostics.size() == 2);  // the message is rejected as each of its chunks
  CHECK(out.diagnostics[0].ends_with(reason));
  CHECK(out.diagnostics[1].ends_with(reason));
  out = read_text(text, ReaderLimits{.max_inflated_bytes = message.size()});
  CHECK(out.diagnostics.empty());
  CHECK(out.events.size() == 1);
}

TEST_CASE("a decompression bomb is rejected after inflating no more than the limit") {
  // 16 MiB of zeros gzip to about 16 KiB: a small record, a huge message.
  constexpr std::size_t kLimit = 64 * 1024;
  const std::string bomb = gzip_compress(std::string(std::size_t{16} << 20, '0'));
  REQUIRE(bomb.size() < kLimit);
  const std::string record = gzip_envelope(bomb);
  const std::string good = envelope(entity_message("ENTITY_CREATE"));
  const auto out = read_text(good + "\n" + record + "\n" + good + "\n",
                             ReaderLimits{.max_inflated_bytes = kLimit});
  CHECK(out.events.size() == 2);
  REQUIRE(out.diagnostics.size() == 1);
  CHECK(out.diagnostics[0] ==
        "t.jsonl:2:" + std::to_string(good.size() + 1) +
            ": message: decompresses to more than 65536 bytes (--max-message-bytes)");
  CHECK(out.stats.per_reason[static_cast<std::size_t>(RejectCode::kTooLarge)] == 1);

  // The same bomb as a split message is stopped the same way, where its last chunk was read.
  const std::string base64 = base64_encode(bomb);
  const std::size_t half = base64.size() / 2;
  const std::string chunk1 = split_chunk("m_9", 1, 2, base64.substr(half));
  const std::string chunk0 = split_chunk("m_9", 0, 2, base64.substr(0, half));
  const auto split =
      read_text(chunk1 + "\n" + chunk0 + "\n", ReaderLimits{.max_inflated_bytes = kLimit});
  REQUIRE(split.diagnostics.size() == 2);  // both chunk records
  CHECK(split.diagnostics[0] ==
        "t.jsonl:1:0: message: decompresses to more than 65536 bytes (--max-message-bytes)");
  CHECK(split.diagnostics[1] ==
        "t.jsonl:2:" + std::to_string(chunk1.size() + 1) +
            ": message: decompresses to more than 65536 bytes (--max-message-bytes)");

  // What the decoder holds while inflating it: the output buffer never grows past limit + 1.
  std::string inflated;
  CHECK_THROWS_AS(gunzip(bomb, kLimit, inflated), DecodeError);
  CHECK(inflated.size() == kLimit + 1);
  CHECK(inflated.capacity() <= kLimit + 1);
}

TEST_CASE("appending to a reject file cut mid-line first drops the partial line") {
  char path[] = "/tmp/atlas2kudu-rejects-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  const auto write_file = [&](const std::string& text) {
    std::FILE* f = std::fopen(path, "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  const auto append_one = [&] {
    RejectSink sink(RejectPolicy{.max_rejects = 10, .reject_file = path, .append = true}, nullptr);
    SourcePosition pos;
    pos.source = "in.jsonl";
    sink.reject(Rejection{pos, RejectCode::kNotJson, "not a JSON object", "x", 0, {}});
  };
  const std::string whole = "{\"source\":\"in.jsonl\",\"line\":1}\n";
  // A failed run's disk filled up in the middle of its second line.
  write_file(whole + "{\"source\":\"in.js");
  append_one();
  std::string text = slurp(path);
  CHECK(text.starts_with(whole + "{\"source\":\"in.jsonl\","));
  CHECK(text.find("in.js\"") == std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  // A file of one partial line (over 64 KiB, so the search back spans reads) is emptied.
  write_file("{\"record\":\"" + std::string(70000, 'a'));
  append_one();
  text = slurp(path);
  CHECK(text.starts_with("{\"source\":\"in.jsonl\","));
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  // Whole lines are kept as they are.
  write_file(whole);
  append_one();
  CHECK(slurp(path).starts_with(whole + "{\"source\":\"in.jsonl\","));
  std::remove(path);
}

TEST_SUITE_END();
