// Payload -> Event on its own: which V1/V2 fields win, the operation mapping, the event time
// fallbacks, and the audit seq.
#include "input/payload.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>

#include "input/input_error.h"

TEST_SUITE_BEGIN("payload");

using namespace atlas2kudu;

namespace {

constexpr std::string_view kGuid = "00000001-0000-4000-8000-000000000001";

Event to_event(const std::string& payload, EventTimeFallbacks fallbacks = {}) {
  const simdjson::padded_string padded(payload);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc = parser.iterate(padded);
  PayloadFields fields;
  for (auto member : doc.get_object()) {
    parse_payload_field(member.unescaped_key(), member.value(), fields);
  }
  Event event;
  payload_to_event(fields, fallbacks, event);
  return event;
}

// The InputError that decoding `payload` throws, as "code: reason".
std::string failure(const std::string& payload, EventTimeFallbacks fallbacks = {}) {
  try {
    to_event(payload, fallbacks);
  } catch (const InputError& e) {
    return std::string(to_string(e.code())) + ": " + e.what();
  }
  return "accepted";
}

std::string v1_entity(const std::string& extra = "") {
  return R"("entity":{"id":{"id":")" + std::string(kGuid) +
         R"(","typeName":"t"},"values":{"qualifiedName":"q","owner":"o"})" + extra + "}";
}

}  // namespace

TEST_CASE("V1 operations map onto the V2 set; a payload without type is V1") {
  const struct {
    const char* v1;
    Operation op;
  } cases[] = {{"ENTITY_CREATE", Operation::kEntityCreate},
               {"ENTITY_UPDATE", Operation::kEntityUpdate},
               {"ENTITY_DELETE", Operation::kEntityDelete},
               {"TRAIT_ADD", Operation::kClassificationAdd},
               {"TRAIT_DELETE", Operation::kClassificationDelete},
               {"TRAIT_UPDATE", Operation::kClassificationUpdate}};
  for (const auto& c : cases) {
    CAPTURE(c.v1);
    const Event typed = to_event(R"({"type":"ENTITY_NOTIFICATION_V1","operationType":")" +
                                 std::string(c.v1) + R"(","eventTime":1,)" + v1_entity() + "}");
    CHECK(typed.op == c.op);
    CHECK(typed.legacy_v1);
    const Event untyped = to_event(R"({"operationType":")" + std::string(c.v1) +
                                   R"(","eventTime":1,)" + v1_entity() + "}");
    CHECK(untyped.op == c.op);
    CHECK(untyped.legacy_v1);
  }
  CHECK(failure(R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"TRAIT_ADD"})") ==
        "unknown-operation: message.operationType: unknown V2 operation \"TRAIT_ADD\"");
}

TEST_CASE("V1 entities: id.id and values, not guid and attributes") {
  const Event e = to_event(R"({"operationType":"ENTITY_UPDATE","eventTime":1,)" +
                           v1_entity(R"(,"guid":"00000002-0000-4000-8000-000000000002",)"
                                     R"("attributes":{"qualifiedName":"not this"})") +
                           "}");
  CHECK(e.guid.dashed() == kGuid);
  CHECK(e.type_name == "t");
  CHECK(e.qualified_name == "q");
  REQUIRE(e.attributes.size() == 1);
  CHECK(e.attributes[0] == Attribute{"owner", "\"o\""});
}

TEST_CASE("the event time: eventTime, V1 modifiedTime, msgCreationTime, Kafka timestamp") {
  const std::string modified = R"(,"systemAttributes":{"modifiedTime":"1970-01-01T00:00:02.000Z"})";
  const EventTimeFallbacks both{.msg_creation_time_ms = 3, .kafka_timestamp_ms = 4};
  CHECK(to_event(R"({"operationType":"ENTITY_UPDATE","eventTime":1,)" + v1_entity(modified) + "}",
                 both)
            .event_time_us == 1000);
  CHECK(to_event(R"({"operationType":"ENTITY_UPDATE",)" + v1_entity(modified) + "}", both)
            .event_time_us == 2000000);
  CHECK(to_event(R"({"operationType":"ENTITY_UPDATE",)" + v1_entity() + "}", both).event_time_us ==
        3000);
  CHECK(to_event(R"({"operationType":"ENTITY_UPDATE",)" + v1_entity() + "}",
                 EventTimeFallbacks{.kafka_timestamp_ms = 4})
            .event_time_us == 4000);
  CHECK(failure(R"({"operationType":"ENTITY_UPDATE",)" + v1_entity() + "}") ==
        "missing-field: message.eventTime: missing, and no msgCreationTime or Kafka timestamp to "
        "use");
  CHECK(failure(R"({"operationType":"ENTITY_UPDATE",)" + v1_entity() + "}",
                EventTimeFallbacks{.msg_creation_time_ms = INT64_MAX}) ==
        "wrong-type: msgCreationTime: 9223372036854775807 is out of range");
}

TEST_CASE("V1 tags: the message's traits, else the entity's traits, else traitNames") {
  const std::string names = R"(,"traitNames":["N"])";
  const std::string entity_traits = R"(,"traits":{"E":{"typeName":"E","values":{"k":1}}})";
  const std::string message_traits = R"("traits":[{"typeName":"M","values":null}],)";
  const std::string head = R"({"operationType":"TRAIT_ADD","eventTime":1,)";

  Event e = to_event(head + message_traits + v1_entity(entity_traits + names) + "}");
  REQUIRE(e.classifications.size() == 1);
  CHECK(e.classifications[0] == Classification{"M", e.guid, "{}"});

  e = to_event(head + v1_entity(entity_traits + names) + "}");
  REQUIRE(e.classifications.size() == 1);
  CHECK(e.classifications[0] == Classification{"E", e.guid, "{\"k\":1}"});

  e = to_event(head + v1_entity(names) + "}");
  REQUIRE(e.classifications.size() == 1);
  CHECK(e.classifications[0] == Classification{"N", e.guid, "{}"});
}

TEST_CASE("ATLAS_HOOK message types point at the wrong topic; others are unknown") {
  CHECK(failure(R"({"type":"ENTITY_CREATE_V2"})") ==
        "hook-topic: message.type: ENTITY_CREATE_V2 is an ATLAS_HOOK message; this export is from "
        "the hook topic, export ATLAS_ENTITIES instead");
  CHECK(failure(R"({"type":"IMPORT_TYPES_DEF"})").starts_with("hook-topic: "));
  CHECK(failure(R"({"type":"SOMETHING_ELSE"})") ==
        "unknown-type: message.type: unknown notification type \"SOMETHING_ELSE\"");
}

TEST_CASE("a relationship event carries its ends and label") {
  const Event e = to_event(
      R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"RELATIONSHIP_CREATE","eventTime":9,)"
      R"("relationship":{"typeName":"r","label":"l","guid":"00000003000040008000000000000003",)"
      R"("end1":{"guid":"00000001-0000-4000-8000-000000000001","typeName":"a"},)"
      R"("end2":{"guid":"00000002-0000-4000-8000-000000000002"}}})");
  CHECK(e.op == Operation::kRelationshipCreate);
  CHECK_FALSE(e.legacy_v1);
  CHECK(e.guid.dashed() == "00000003-0000-4000-8000-000000000003");
  CHECK(e.relationship.edge_label() == "l");
  CHECK(e.relationship.end1 == RelationshipEnd{*Guid::parse(kGuid), "a"});
  CHECK(e.relationship.end2.guid.dashed() == "00000002-0000-4000-8000-000000000002");
  CHECK_FALSE(e.relationship.status_deleted);
}

TEST_CASE("the audit seq ignores insignificant whitespace only") {
  std::string scratch;
  const std::int64_t compact = message_audit_seq(R"({"a":[1,2],"b":"x y"})", scratch);
  CHECK(message_audit_seq("{ \"a\" : [ 1 , 2 ] ,\n \"b\" : \"x y\" }", scratch) == compact);
  CHECK(message_audit_seq(R"({"a":[1,2],"b":"x  y"})", scratch) != compact);
  CHECK(message_audit_seq(R"({"b":"x y","a":[1,2]})", scratch) != compact);  // order counts
}

TEST_SUITE_END();
