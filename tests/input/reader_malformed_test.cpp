// Every malformed record is reported with its exact position and reason, is written verbatim to
// the reject file, and does not disturb the records around it.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

TEST_SUITE_BEGIN("reader_malformed");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

const std::string kGood = envelope(entity_message("ENTITY_CREATE"));

std::string v2(const std::string& body) {
  return envelope("{\"type\":\"ENTITY_NOTIFICATION_V2\"," + body + "}");
}
std::string with_entity(const std::string& entity, const std::string& op = "ENTITY_UPDATE") {
  return v2("\"operationType\":\"" + op + "\",\"eventTime\":5,\"entity\":" + entity);
}
std::string relationship(const std::string& rel, const std::string& op = "RELATIONSHIP_DELETE") {
  return v2("\"operationType\":\"" + op + "\",\"eventTime\":5,\"relationship\":" + rel);
}
const std::string kGuid = "\"guid\":\"00000001-0000-4000-8000-000000000001\"";

struct Case {
  std::string name;
  std::string record;  // one line, placed as line 2 between two good records
  std::string reason;  // exact reason printed after "t.jsonl:2:<offset>: "
};

// The Kafka position a kcat record gave before it failed, printed after the offset.
std::string kafka_of(const Case& c) {
  if (c.name == "kcat payload holding two envelopes") return " (T/0@1)";
  // A position out of range is the failure itself: none to print.
  return c.name.starts_with("kcat ") && !c.name.ends_with("past int32") &&
                 !c.name.ends_with("at INT64_MAX")
             ? " (ATLAS_ENTITIES/3@17)"
             : "";
}

std::vector<Case> cases() {
  return {
      {"plain text", "hello world", "not a JSON object: \"hello world\""},
      {"bare number", "42", "not a JSON object: \"42\""},
      {"cut inside a string", "{\"version\":{\"version\":\"1.0",
       "truncated JSON: unterminated string at end of line"},
      {"cut between fields", "{\"version\":{\"version\":\"1.0.0\"},",
       "truncated JSON: 1 unclosed bracket(s) at end of line (a document that goes on over several "
       "lines must have its opening brace alone on its first line)"},
      {"trailing comma", envelope("{\"type\":\"ENTITY_NOTIFICATION_V2\",}"),
       "invalid JSON at byte 187 of the record: expected a member name (a string): \"}}\""},
      {"invalid UTF-8", envelope(entity_message("ENTITY_CREATE", "{\"qualifiedName\":\"a\xff\"}")),
       "invalid UTF-8 in JSON text at byte " +
           std::to_string(envelope(entity_message("ENTITY_CREATE", "{\"qualifiedName\":\"a\xff\"}"))
                              .find('\xff')) +
           " of the record: \"\\xff\"},\"gui...\""},
      {"message is a number", envelope("7"),
       "message: expected an object or a string, got a number"},
      {"message missing", "{\"version\":{\"version\":\"1.0.0\"},\"msgCreationTime\":1}",
       "message: missing"},
      {"message null", envelope("null"), "message: missing"},
      {"unknown notification type", envelope("{\"type\":\"ENTITY_NOTIFICATION_V3\"}"),
       "message.type: unknown notification type \"ENTITY_NOTIFICATION_V3\""},
      {"hook topic", envelope("{\"type\":\"ENTITY_PARTIAL_UPDATE_V2\",\"user\":\"hive\"}"),
       "message.type: ENTITY_PARTIAL_UPDATE_V2 is an ATLAS_HOOK message; this export is from the "
       "hook topic, export ATLAS_ENTITIES instead"},
      {"operationType missing", v2("\"eventTime\":5,\"entity\":{}"),
       "message.operationType: missing"},
      {"operationType unknown", with_entity("{}", "ENTITY_PURGE"),
       "message.operationType: unknown V2 operation \"ENTITY_PURGE\""},
      {"V2 operation in a V1 payload",
       envelope("{\"type\":\"ENTITY_NOTIFICATION_V1\",\"operationType\":\"CLASSIFICATION_ADD\"}"),
       "message.operationType: unknown V1 operation \"CLASSIFICATION_ADD\""},
      {"operationType is a number", v2("\"operationType\":3"),
       "message.operationType: expected a string, got a number"},
      {"entity missing", v2("\"operationType\":\"ENTITY_CREATE\",\"eventTime\":5"),
       "message.entity: missing"},
      {"entity is an array", with_entity("[]"), "message.entity: expected an object, got an array"},
      {"guid missing", with_entity("{\"typeName\":\"t\"}"), "message.entity.guid: missing"},
      {"guid is a placeholder", with_entity("{\"typeName\":\"t\",\"guid\":\"-72583599150177287\"}"),
       "message.entity.guid: \"-72583599150177287\" is not a UUID"},
      {"guid is a number", with_entity("{\"typeName\":\"t\",\"guid\":12}"),
       "message.entity.guid: expected a string, got a number"},
      {"typeName missing", with_entity("{" + kGuid + "}"), "message.entity.typeName: missing"},
      {"typeName empty", with_entity("{\"typeName\":\"\"," + kGuid + "}"),
       "message.entity.typeName: empty"},
      {"attributes is a string",
       with_entity("{\"typeName\":\"t\"," + kGuid + ",\"attributes\":\"x\"}"),
       "message.entity.attributes: expected an object, got a string"},
      {"qualifiedName is a number",
       with_entity("{\"typeName\":\"t\"," + kGuid + ",\"attributes\":{\"qualifiedName\":1}}"),
       "message.entity.attributes.qualifiedName: expected a string, got a number"},
      {"eventTime is a string",
       envelope(entity_message("ENTITY_CREATE", "{}", ",\"eventTime\":\"5\"")),
       "message.eventTime: expected an integer, got a string"},
      {"eventTime is fractional",
       envelope(entity_message("ENTITY_CREATE", "{}", ",\"eventTime\":1.5")),
       "message.eventTime: expected a 64-bit integer, got 1.5"},
      {"eventTime overflows",
       envelope(entity_message("ENTITY_CREATE", "{}", ",\"eventTime\":9223372036854776")),
       "message.eventTime: 9223372036854776 is out of range"},
      {"no time at all",
       "{\"version\":{\"version\":\"1.0.0\"},\"message\":" +
           entity_message("ENTITY_CREATE", "{}", "") + "}",
       "message.eventTime: missing, and no msgCreationTime or Kafka timestamp to use"},
      {"classifications is an object",
       with_entity("{\"typeName\":\"t\"," + kGuid + ",\"classifications\":{}}",
                   "CLASSIFICATION_ADD"),
       "message.entity.classifications: expected an array, got an object"},
      {"classification without typeName",
       with_entity("{\"typeName\":\"t\"," + kGuid + ",\"classifications\":[{\"entityGuid\":null}]}",
                   "CLASSIFICATION_ADD"),
       "message.entity.classifications[0].typeName: missing"},
      {"classification with an empty typeName",
       with_entity("{\"typeName\":\"t\"," + kGuid + ",\"classifications\":[{\"typeName\":\"\"}]}",
                   "CLASSIFICATION_ADD"),
       "message.entity.classifications[0].typeName: empty"},
      {"classification with a bad entityGuid",
       with_entity("{\"typeName\":\"t\"," + kGuid +
                       ",\"classifications\":[{\"typeName\":\"PII\",\"entityGuid\":\"xyz\"}]}",
                   "CLASSIFICATION_ADD"),
       "message.entity.classifications[0].entityGuid: \"xyz\" is not a UUID"},
      {"relationship delete without end2",
       relationship("{\"typeName\":\"r\",\"end1\":{" + kGuid + "}}"),
       "message.relationship: RELATIONSHIP_DELETE needs end1.guid and end2.guid to identify the "
       "edge"},
      {"relationship without label or typeName",
       relationship("{\"end1\":{" + kGuid + "},\"end2\":{" + kGuid + "}}", "RELATIONSHIP_CREATE"),
       "message.relationship: RELATIONSHIP_CREATE needs a label or typeName to name the edge"},
      {"relationship operation without relationship",
       v2("\"operationType\":\"RELATIONSHIP_CREATE\",\"eventTime\":5"),
       "message.relationship: missing"},
      {"GZIP message with bad Base64",
       "{\"version\":{\"version\":\"1.0.0\"},\"msgId\":\"m_1\",\"msgCompressionKind\":\"GZIP\","
       "\"msgSplitIdx\":1,\"msgSplitCount\":1,\"message\":\"H4sI!!!!\"}",
       "message: invalid Base64 at character 4"},
      {"GZIP message that is not gzip",
       "{\"version\":{\"version\":\"1.0.0\"},\"msgId\":\"m_1\",\"msgCompressionKind\":\"GZIP\","
       "\"msgSplitIdx\":1,\"msgSplitCount\":1,\"message\":\"aGVsbG8gd29ybGQ=\"}",
       "message: corrupt or truncated gzip data (incorrect header check)"},
      {"string message without GZIP", envelope("\"abc\""),
       "message: a string message needs msgCompressionKind GZIP"},
      {"unknown compression kind",
       "{\"version\":{\"version\":\"1.0.0\"},\"msgCompressionKind\":\"LZ4\",\"message\":\"x\"}",
       "msgCompressionKind: unknown kind \"LZ4\""},
      // Not a string: GCC 12 once left the kind uninitialised here, and these crashed.
      {"compression kind of the wrong type",
       "{\"version\":{\"version\":\"1.0.0\"},\"msgCompressionKind\":1,\"message\":{}}",
       "msgCompressionKind: expected a string, got a number"},
      {"compression kind of the wrong type in a bare payload", "{\"msgCompressionKind\":{}}",
       "message.operationType: missing"},
      {"split chunk without msgId",
       "{\"version\":{\"version\":\"1.0.0\"},\"msgCompressionKind\":\"GZIP\",\"msgSplitIdx\":0,"
       "\"msgSplitCount\":2,\"message\":\"H4sI\"}",
       "msgId: a split message chunk needs a msgId"},
      {"split index out of range",
       "{\"version\":{\"version\":\"1.0.0\"},\"msgId\":\"m_2\",\"msgCompressionKind\":\"GZIP\","
       "\"msgSplitIdx\":2,\"msgSplitCount\":2,\"message\":\"H4sI\"}",
       "msgSplitIdx: 2 is outside 0..1 (msgId m_2)"},
      // Not read as a payload lacking every member of a notification: a kcat record, at its place.
      {"kcat record without a payload member",
       "{\"topic\":\"ATLAS_ENTITIES\",\"partition\":3,\"offset\":17,\"ts\":1,\"key\":null}",
       "payload: missing (a kcat record without its value's member)"},
      {"kcat record as rpk topic consume prints it (its message in \"value\")",
       "{\"topic\":\"ATLAS_ENTITIES\",\"value\":\"{}\",\"timestamp\":1,\"partition\":3,"
       "\"offset\":17}",
       "payload: missing (a kcat -J record has its message in \"payload\"; this one's \"value\", "
       "as "
       "rpk topic consume prints it, is not read: export with kcat -J, or with rpk topic consume "
       "-f '%v\\n')"},
      {"kcat record with null payload",
       "{\"topic\":\"ATLAS_ENTITIES\",\"partition\":3,\"offset\":17,\"key\":null,\"payload\":null}",
       "payload: kcat record without a value (null)"},
      // type() sees the first byte only: "[1,2" is no array, "trash" no boolean.
      {"kcat payload that is not JSON",
       "{\"topic\":\"ATLAS_ENTITIES\",\"partition\":3,\"offset\":17,\"payload\":\"[1,2\"}",
       "payload: invalid JSON at byte 4: the end of the text inside an array"},
      {"kcat payload that is a word",
       "{\"topic\":\"ATLAS_ENTITIES\",\"partition\":3,\"offset\":17,\"payload\":\"trash\"}",
       "payload: invalid JSON at byte 0: not a JSON value (true, false, null, a number, a string, "
       "an object or an array): \"trash\""},
      {"kcat payload that is a number past 64 bits",
       "{\"topic\":\"ATLAS_ENTITIES\",\"partition\":3,\"offset\":17,\"payload\":"
       "\"123456789012345678901234567890\"}",
       "payload: expected a JSON object, got a number"},
      {"kcat payload that is JSON but no object",
       "{\"topic\":\"ATLAS_ENTITIES\",\"partition\":3,\"offset\":17,\"payload\":\"[1,2]\"}",
       "payload: expected a JSON object, got an array"},
      // Its Kafka position is read all the same: the payload's type is checked after it.
      {"kcat payload that is an object",
       "{\"topic\":\"ATLAS_ENTITIES\",\"partition\":3,\"offset\":17,\"payload\":{\"version\":{}}}",
       "payload: expected a string, got an object"},
      {"kcat payload that is a number",
       "{\"payload\":42,\"topic\":\"ATLAS_ENTITIES\",\"partition\":3,\"offset\":17}",
       "payload: expected a string, got a number"},
      {"malformed attribute value", envelope(entity_message("ENTITY_CREATE", "{\"owner\":tru}")),
       "invalid JSON at byte 234 of the record: not a JSON value (true, false, null, a number, a "
       "string, an object or an array): \"tru},\"guid\":\"00000001-00...\""},
      {"number with a leading zero", envelope(entity_message("ENTITY_CREATE", "{\"size\":012}")),
       "invalid JSON at byte 233 of the record: a number JSON does not allow: "
       "\"012},\"guid\":\"00000001-00...\""},
      {"V1 modifiedTime not ISO",
       envelope(
           "{\"type\":\"ENTITY_NOTIFICATION_V1\",\"operationType\":\"ENTITY_UPDATE\",\"entity\":"
           "{\"id\":{\"id\":\"00000001-0000-4000-8000-000000000001\",\"typeName\":\"t\"},"
           "\"values\":{},\"systemAttributes\":{\"modifiedTime\":\"yesterday\"}}}"),
       "message.entity.systemAttributes.modifiedTime: \"yesterday\" is not an ISO-8601 time "
       "(yyyy-MM-ddTHH:mm:ss[.SSS] and Z or +hh:mm)"},
      {"record is a top-level string", "\"just a string\"",
       "not a JSON object: \"\"just a string\"\""},
      {"invalid value in a member nobody reads",
       "{\"version\":{\"version\":tru},\"message\":" + entity_message("ENTITY_CREATE") + "}",
       "invalid JSON at byte 22 of the record: not a JSON value (true, false, null, a number, a "
       "string, an object or an array): \"tru},\"message\":{\"type\":\"...\""},
      {"lone surrogate in an unused field",
       envelope(entity_message("ENTITY_CREATE", "{}", ",\"eventTime\":5,\"user\":\"\\ud800\"")),
       "invalid JSON at byte 329 of the record: a \\u escape of a high surrogate without a low one "
       "after it: \"\\ud800\"}}\""},
      {"duplicate message",
       "{\"version\":{},\"message\":" + entity_message("ENTITY_CREATE") +
           ",\"message\":" + entity_message("ENTITY_DELETE") + "}",
       "record: member \"message\" appears twice"},
      {"duplicate entity",
       v2("\"operationType\":\"ENTITY_DELETE\",\"eventTime\":5,\"entity\":{\"typeName\":\"t\"," +
          kGuid + "},\"entity\":{\"typeName\":\"u\"," + kGuid + "}"),
       "message: member \"entity\" appears twice"},
      {"ts outside a kcat record is no event time",
       "{\"version\":{},\"ts\":1700000000000,\"message\":" +
           entity_message("ENTITY_CREATE", "{}", "") + "}",
       "message.eventTime: missing, and no msgCreationTime or Kafka timestamp to use"},
      {"kcat payload holding two envelopes",
       "{\"topic\":\"T\",\"partition\":0,\"offset\":1,\"payload\":\"{\\\"version\\\":{}}"
       "{\\\"version\\\":{}}\"}",
       "payload: data after the JSON object, at byte 14"},
      {"kcat partition past int32",
       "{\"topic\":\"T\",\"partition\":4294967296,\"offset\":1,\"payload\":\"{}\"}",
       "partition: 4294967296 is out of range (0..2147483647)"},
      {"kcat offset at INT64_MAX",
       "{\"topic\":\"T\",\"partition\":0,\"offset\":9223372036854775807,\"payload\":\"{}\"}",
       "offset: 9223372036854775807 is out of range (0..9223372036854775806)"},
      {"nesting past the limit",
       envelope(entity_message("ENTITY_CREATE",
                               "{\"x\":" + std::string(600, '[') + std::string(600, ']') + "}")),
       // The path, 27 + 508 * 3 bytes, keeps its first 96 bytes and last 64.
       [] {
         std::string path = "message.entity.attributes.x";
         for (int i = 0; i < 508; ++i) path += "[0]";
         return path.substr(0, 96) + "...(1391 bytes)..." + path.substr(path.size() - 64);
       }() +
           ": nested deeper than 512 levels (--max-json-depth)"},
      // On-Demand stops reading the object at the ':' and found data after it: the syntax error
      // before is the one reported, where it is.
      {"a colon where a comma is due",
       "{\"version\":{},\"message\":\"type\":\"ENTITY_NOTIFICATION_V2\"}",
       "invalid JSON at byte 30 of the record: expected ',' or '}' after a member: "
       "\":\"ENTITY_NOTIFICATION_V2...\""},
      {"NUL byte between members", std::string("{\"version\":{}\0}", 15),
       "invalid JSON at byte 13 of the record: expected ',' or '}' after a member: \"\\x00}\""},
      {"NUL byte in a string", std::string("{\"version\":{\"v\":\"a\0b\"}}", 23),
       "invalid JSON at byte 18 of the record: a control character (U+0000) in a string, where "
       "JSON needs it escaped: \"\\x00b\"}}\""},
      // (A byte order mark at a line start is skipped, as `cat` of files that each start with one
      // leaves it; elsewhere it is not JSON: framer_test.)
  };
}

}  // namespace

TEST_CASE("each malformed record gets its exact reason and position, neighbours survive") {
  const auto all = cases();
  CHECK(all.size() >= 30);
  for (const Case& c : all) {
    CAPTURE(c.name);
    const std::string text = kGood + "\n" + c.record + "\n" + kGood + "\n";
    const ReadOutcome out = read_text(text);
    REQUIRE(out.diagnostics.size() == 1);
    CHECK(out.diagnostics[0] ==
          "t.jsonl:2:" + std::to_string(kGood.size() + 1) + kafka_of(c) + ": " + c.reason);
    CHECK(out.events.size() == 2);
    CHECK(out.stats.rejected == 1);
    CHECK(out.stats.records == 3);
    // The reject file holds the record verbatim (as a JSON string, or Base64 if not UTF-8).
    CHECK(out.reject_file.find("\"line\":2,") != std::string::npos);
    CHECK(out.reject_file.find("\"reason\":") != std::string::npos);
    if (out.events.size() == 2) CHECK(out.events[1].pos.line == 3);
  }
}

TEST_CASE("the same cases cut into 7-byte reads give the same results") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    const std::string text = kGood + "\n" + c.record + "\n" + kGood + "\n";
    const ReadOutcome out = read_text(text, 7);
    REQUIRE(out.diagnostics.size() == 1);
    CHECK(out.diagnostics[0] ==
          "t.jsonl:2:" + std::to_string(kGood.size() + 1) + kafka_of(c) + ": " + c.reason);
    CHECK(out.events.size() == 2);
  }
}

TEST_CASE("inputs the fuzzers found (tests/data/fuzz) end, every record accounted for") {
  // Each file once made fuzz/fuzz_reader crash, hang or trip a sanitizer; they are read again the
  // way it reads them.
  std::size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(ATLAS2KUDU_TEST_DATA) + "/fuzz")) {
    CAPTURE(entry.path().string());
    CHECK(read_as_fuzzer(entry.path().string()).empty());
    ++files;
  }
  CHECK(files >= 1);
}

TEST_SUITE_END();
