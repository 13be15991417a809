// Payload -> Event on its own: which V1/V2 fields win, the operation mapping, the event time
// fallbacks, and the audit seq.
#include "input/payload.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <string>
#include <vector>

#include "input/input_error.h"

TEST_SUITE_BEGIN("payload");

using namespace atlas2kudu;

namespace {

constexpr std::string_view kGuid = "00000001-0000-4000-8000-000000000001";

Event to_event(const std::string& payload, EventTimeFallbacks fallbacks = {},
               std::uint32_t max_depth = kDefaultMaxJsonDepth,
               std::size_t max_cell_bytes = kDefaultMaxCellBytes) {
  const simdjson::padded_string padded(payload);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc = parser.iterate(padded);
  PayloadFields fields;
  simdjson::ondemand::value value = doc.get_value();
  parse_payload(value, fields, Nesting{0, max_depth});
  Event event;
  payload_to_event(fields, fallbacks, event, max_cell_bytes);
  return event;
}

// The InputError that decoding `payload` throws, as "code: reason"; "invalid JSON" for a
// simdjson error.
std::string failure(const std::string& payload, EventTimeFallbacks fallbacks = {},
                    std::uint32_t max_depth = kDefaultMaxJsonDepth,
                    std::size_t max_cell_bytes = kDefaultMaxCellBytes) {
  try {
    to_event(payload, fallbacks, max_depth, max_cell_bytes);
  } catch (const InputError& e) {
    return std::string(to_string(e.code())) + ": " + e.what();
  } catch (const simdjson::simdjson_error&) {
    return "invalid JSON";
  }
  return "accepted";
}

// Every order of `members` (JSON members, without braces), each as one object text.
std::vector<std::string> all_orders(std::vector<std::string> members) {
  std::sort(members.begin(), members.end());
  std::vector<std::string> out;
  do {
    std::string object = "{";
    for (std::size_t i = 0; i < members.size(); ++i) object += (i ? " , " : "") + members[i];
    out.push_back(object + "}");
  } while (std::next_permutation(members.begin(), members.end()));
  return out;
}

std::string v1_entity(const std::string& extra = "") {
  return R"("entity":{"id":{"id":")" + std::string(kGuid) +
         R"(","typeName":"t"},"values":{"qualifiedName":"q","owner":"o"})" + extra + "}";
}

}  // namespace

TEST_CASE("an empty V1 typeName is named where it was read: the entity's, else its id's") {
  const std::string v1_empty_id = R"("entity":{"id":{"id":")" + std::string(kGuid) +
                                  R"(","typeName":""},"values":{"qualifiedName":"q"}})";
  CHECK(failure(R"({"operationType":"ENTITY_UPDATE","eventTime":1,)" + v1_empty_id + "}") ==
        "missing-field: message.entity.id.typeName: empty");
}

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

TEST_CASE("an entity header that says DELETED is marked: V2 status, V1 id.state") {
  const std::string v2 =
      R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"CLASSIFICATION_DELETE",)"
      R"("eventTime":1,"entity":{"typeName":"t","guid":")" +
      std::string(kGuid) + R"(","status":)";
  CHECK(to_event(v2 + R"("DELETED"}})").header_deleted);
  CHECK(to_event(v2 + R"("PURGED"}})").header_deleted);
  CHECK_FALSE(to_event(v2 + R"("ACTIVE"}})").header_deleted);
  CHECK_FALSE(to_event(v2 + R"(null}})").header_deleted);
  CHECK_FALSE(to_event(v2 + R"(7}})").header_deleted);  // read as before: any other value passes
  CHECK(failure(v2 + R"([}})") == "invalid JSON");      // but it must be JSON
  const std::string v1 = R"({"operationType":"TRAIT_DELETE","eventTime":1,"entity":{"id":{"id":")" +
                         std::string(kGuid) + R"(","typeName":"t","state":)";
  CHECK(to_event(v1 + R"("DELETED"}}})").header_deleted);
  CHECK_FALSE(to_event(v1 + R"("ACTIVE"}}})").header_deleted);
}

TEST_CASE("attribute values are kept as canonical JSON: whitespace out, escapes normalized") {
  const Event e = to_event(
      "{\"type\":\"ENTITY_NOTIFICATION_V2\",\"operationType\":\"ENTITY_CREATE\",\"eventTime\":1,"
      "\"entity\":{\"typeName\":\"t\",\"guid\":\"" +
      std::string(kGuid) +
      "\",\"attributes\":{"
      "\"plain\" : \"no escapes\"  ,\n"
      "\"escaped\":\"\\u0041\\/\\\"q\\\"\\t\" ,"
      "\"nested\": { \"k\" : [ \"a b\" , 1.50 , true , null ] } ,"
      "\"last\":\"end\"\n}}}");
  REQUIRE(e.attributes.size() == 4);
  CHECK(e.attributes[0] == Attribute{"plain", "\"no escapes\""});
  CHECK(e.attributes[1] == Attribute{"escaped", "\"A/\\\"q\\\"\\t\""});
  CHECK(e.attributes[2] == Attribute{"nested", "{\"k\":[\"a b\",1.50,true,null]}"});
  CHECK(e.attributes[3] == Attribute{"last", "\"end\""});
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
        "missing-field: no event time: a V1 message has no eventTime, and it has no "
        "message.entity.systemAttributes.modifiedTime, msgCreationTime or Kafka timestamp to use "
        "(export it with the record's timestamp: kafka-console-consumer --property "
        "print.timestamp=true, or kcat -J)");
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

TEST_CASE("member order never matters: every order of a V1 trait and a V2 classification") {
  // A trait's "values":{} as its last member once made a sibling key be read as a trait.
  for (const std::string& trait :
       all_orders({R"("typeName":"PII")", R"("values":{})", R"("jsonClass":"struct")"})) {
    CAPTURE(trait);
    for (const std::string& entity :
         all_orders({R"("id":{"id":")" + std::string(kGuid) + R"(","typeName":"t"})",
                     R"("values":{"qualifiedName":"q"})", R"("traits":{"PII":)" + trait + "}",
                     R"("traitNames":["PII"])"})) {
      const Event e =
          to_event(R"({"operationType":"TRAIT_ADD","eventTime":1,"entity":)" + entity + "}");
      REQUIRE(e.classifications.size() == 1);
      CHECK(e.classifications[0] == Classification{"PII", e.guid, "{}"});
      CHECK(e.qualified_name == "q");
    }
  }
  for (const std::string& tag : all_orders(
           {R"("typeName":"A")", R"("attributes":{})",
            R"("entityGuid":"00000002-0000-4000-8000-000000000002")", R"("propagate":true)"})) {
    CAPTURE(tag);
    for (const std::string& payload :
         all_orders({R"("type":"ENTITY_NOTIFICATION_V2")",
                     R"("operationType":"CLASSIFICATION_ADD")", R"("eventTime":3)",
                     R"("entity":{"attributes":{},"classifications":[)" + tag + "," + tag +
                         R"(],"typeName":"t","guid":")" + std::string(kGuid) + R"("})"})) {
      const Event e = to_event(payload);
      REQUIRE(e.classifications.size() == 2);
      CHECK(e.classifications[1].type_name == "A");
      CHECK(e.classifications[1].attributes_json == "{}");
      CHECK(e.classifications[1].entity_guid.dashed() == "00000002-0000-4000-8000-000000000002");
      CHECK(e.event_time_us == 3000);
    }
  }
}

TEST_CASE("values the decoder does not use must be valid JSON too") {
  const std::string head = R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"ENTITY_CREATE",)"
                           R"("eventTime":1,"entity":{"typeName":"t","guid":")" +
                           std::string(kGuid) + R"(","attributes":{"qualifiedName":"q"},"x":)";
  for (const char* bad : {"tru", "nul", "falsey", "01", "1.", "-", "[1,,2]", "[1,]", "{1}",
                          R"({"a" 1})", R"("\ud800")", R"("\udc00x")", R"("\x")"}) {
    CAPTURE(bad);
    CHECK(failure(head + bad + "}}") == "invalid JSON");
    // Where the decoder reads the value, and in skipped members of the payload itself.
    CHECK(failure(R"({"type":"ENTITY_NOTIFICATION_V2","unused":)" + std::string(bad) + "}") ==
          "invalid JSON");
  }
  // Valid values of any kind and size are fine, numbers past 64 bits included.
  CHECK(to_event(head + R"([1.5e300,-0,123456789012345678901234567890,"\ud83d\ude00",null,{}]}})")
            .qualified_name == "q");
  // A null that is not spelt right is not null.
  CHECK(failure(head + R"(1},"relationship":nulx})") == "invalid JSON");
}

TEST_CASE("a member name twice in the payload's objects is a duplicate-key rejection") {
  const std::string guid = R"("guid":")" + std::string(kGuid) + R"(")";
  const std::string ok_entity = R"({"typeName":"t",)" + guid + "}";
  CHECK(failure(R"({"operationType":"ENTITY_CREATE","eventTime":1,"entity":)" + ok_entity +
                R"(,"operationType":"ENTITY_DELETE"})") ==
        "duplicate-key: message: member \"operationType\" appears twice");
  CHECK(failure(R"({"operationType":"ENTITY_CREATE","eventTime":1,"entity":{"typeName":"t",)" +
                guid + "," + guid + "}}") ==
        "duplicate-key: message.entity: member \"guid\" appears twice");
  CHECK(failure(R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"CLASSIFICATION_ADD",)"
                R"("eventTime":1,"entity":{"typeName":"t",)" +
                guid +
                R"(,"classifications":[{"typeName":"A"},{"typeName":"A","typeName":"B"}]}})") ==
        "duplicate-key: message.entity.classifications[1]: member \"typeName\" appears twice");
  CHECK(failure(R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"RELATIONSHIP_CREATE",)"
                R"("eventTime":1,"relationship":{"label":"l","end1":{)" +
                guid + "," + guid + R"(}}})") ==
        "duplicate-key: message.relationship.end1: member \"guid\" appears twice");
  // The name is compared unescaped.
  CHECK(failure(R"({"operationType":"ENTITY_CREATE","eventTime":1,"entity":)" + ok_entity +
                R"(,"entit\u0079":null})") ==
        "duplicate-key: message: member \"entity\" appears twice");
  // Inside attributes and the values in them too, however many attributes there are: which
  // value wins would depend on the reader and on the members' order.
  const std::string head = R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"ENTITY_CREATE",)"
                           R"("eventTime":1,"entity":{"typeName":"t",)" +
                           guid + R"(,"attributes":)";
  std::string attrs = R"({"qualifiedName":"q1")";
  for (int i = 0; i < 100000; ++i) attrs += ",\"a" + std::to_string(i) + "\":" + std::to_string(i);
  const Event e = to_event(head + attrs + "}}}");
  CHECK(e.qualified_name == "q1");
  REQUIRE(e.attributes.size() == 100000);
  CHECK(e.attributes[99999] == Attribute{"a99999", "99999"});
  CHECK(failure(head + attrs + R"(,"a7":"last"}}})") ==
        "duplicate-key: message.entity.attributes: member \"a7\" appears twice");
  CHECK(failure(head + R"({"qualifiedName":"a","qualifiedName":"b"}}})") ==
        "duplicate-key: message.entity.attributes: member \"qualifiedName\" appears twice");
  CHECK(failure(head + R"({"p":1,"p":null}}})") ==
        "duplicate-key: message.entity.attributes: member \"p\" appears twice");
  CHECK(failure(head + R"({"p":{"x":1,"y":[{"z":1,"z":2}]}}}})") ==
        "duplicate-key: message.entity.attributes.p.y[0]: member \"z\" appears twice");
  // Around the 16 names kept on the stack before they are indexed: the first and the last
  // repeated, after the count has passed 16 or not.
  for (int n : {15, 16, 17, 18, 40}) {
    CAPTURE(n);
    std::string few = "{";
    for (int i = 0; i < n; ++i) few += "\"a" + std::to_string(i) + "\":" + std::to_string(i) + ",";
    CHECK(failure(head + few + "\"a0\":\"first again\"}}}") ==
          "duplicate-key: message.entity.attributes: member \"a0\" appears twice");
    const std::string last = "a" + std::to_string(n - 1);
    CHECK(failure(head + few + "\"" + last + "\":\"last again\"}}}") ==
          "duplicate-key: message.entity.attributes: member \"" + last + "\" appears twice");
  }
  // A classification's attributes too.
  CHECK(failure(R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"CLASSIFICATION_ADD",)"
                R"("eventTime":1,"entity":{"typeName":"t",)" +
                guid + R"(,"classifications":[{"typeName":"PII","attributes":{"x":1,"x":2}}]}})") ==
        "duplicate-key: message.entity.classifications[0].attributes: member \"x\" appears twice");
  // V1: the traits map (a trait named twice was once taken twice, the only object of a record
  // whose names went unchecked), the id, the system attributes.
  const std::string v1 = R"({"type":"ENTITY_NOTIFICATION_V1","operationType":"TRAIT_ADD",)"
                         R"("eventTime":1,"entity":{"typeName":"t","id":{"id":")" +
                         std::string(kGuid) + R"("},)";
  CHECK(failure(v1 + R"("traits":{"PII":{"typeName":"PII"}}}})") == "accepted");
  CHECK(failure(v1 + R"("traits":{"PII":{"typeName":"PII"},"PII":{"typeName":"PII"}}}})") ==
        "duplicate-key: message.entity.traits: member \"PII\" appears twice");
  CHECK(failure(v1 + R"("traits":{"A":{"typeName":"A","values":{"v":1,"v":1}}}}})") ==
        "duplicate-key: message.entity.traits.A.values: member \"v\" appears twice");
  CHECK(failure(v1 + R"("systemAttributes":{"modifiedTime":"x","modifiedTime":"y"}}})") ==
        "duplicate-key: message.entity.systemAttributes: member \"modifiedTime\" appears twice");
  CHECK(failure(R"({"type":"ENTITY_NOTIFICATION_V1","operationType":"ENTITY_CREATE",)"
                R"("eventTime":1,"entity":{"typeName":"t","id":{"id":"a","id":"b"}}})") ==
        "duplicate-key: message.entity.id: member \"id\" appears twice");
}

TEST_CASE("nesting is bounded before it is entered") {
  const std::string head = R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"ENTITY_CREATE",)"
                           R"("eventTime":1,"entity":{"typeName":"t","guid":")" +
                           std::string(kGuid) + R"(","attributes":{"x":)";
  // Payload level 1, entity 2, attributes 3: an attribute of k nested arrays reaches level 3 + k.
  const auto nested = [&](int k) {
    return head + std::string(k, '[') + std::string(k, ']') + "}}}";
  };
  CHECK(failure(nested(7), {}, 10) == "accepted");
  CHECK(failure(nested(8), {}, 10) ==
        "too-large: message.entity.attributes.x[0][0][0][0][0][0][0]: nested deeper than 10 "
        "levels (--max-json-depth)");
  // Deep enough to overflow any stack if it were recursed into: rejected, not crashed.
  CHECK(failure(nested(200000)).starts_with("too-large: message.entity.attributes.x[0]"));
  CHECK(failure(R"({"unused":)" + std::string(200000, '[') + std::string(200000, ']') + "}")
            .ends_with("nested deeper than 512 levels (--max-json-depth)"));
  CHECK(failure(nested(509)) == "accepted");
  CHECK(failure(nested(510)).starts_with("too-large: "));
}

TEST_CASE("a string bound for a Kudu cell over max_cell_bytes rejects the event") {
  const std::string guid = R"("guid":")" + std::string(kGuid) + R"(")";
  const auto entity = [&](const std::string& qn, const std::string& tag) {
    return R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"CLASSIFICATION_ADD","eventTime":1,)"
           R"("entity":{"typeName":"t",)" +
           guid + R"(,"attributes":{"qualifiedName":")" + qn +
           R"("},"classifications":[)"
           R"({"typeName":"A"},{"typeName":")" +
           tag + R"("}]}})";
  };
  CHECK(failure(entity(std::string(100, 'q'), "B"), {}, kDefaultMaxJsonDepth, 100) == "accepted");
  CHECK(failure(entity(std::string(101, 'q'), "B"), {}, kDefaultMaxJsonDepth, 100) ==
        "too-large: message.entity.attributes.qualifiedName: 101 bytes, more than the 100 bytes "
        "of a Kudu cell (--max-cell-bytes)");
  CHECK(failure(entity("q", std::string(101, 'T')), {}, kDefaultMaxJsonDepth, 100) ==
        "too-large: message.entity.classifications[1].typeName: 101 bytes, more than the 100 "
        "bytes of a Kudu cell (--max-cell-bytes)");
  // Bytes of the decoded UTF-8 text: "\u00e9" is two bytes.
  std::string accents;
  for (int i = 0; i < 51; ++i) accents += "\\u00e9";
  CHECK(failure(entity(accents, "B"), {}, kDefaultMaxJsonDepth, 100)
            .starts_with("too-large: message.entity.attributes.qualifiedName: 102 bytes"));
  // A relationship's label and end types too; and the default is Kudu's 64 KiB.
  CHECK(failure(R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"RELATIONSHIP_CREATE",)"
                R"("eventTime":1,"relationship":{"label":")" +
                std::string(65537, 'l') + R"(","end1":{)" + guid + R"(},"end2":{)" + guid +
                "}}}") ==
        "too-large: message.relationship.label: 65537 bytes, more than the 65536 bytes of a Kudu "
        "cell (--max-cell-bytes)");
}

TEST_CASE("a tag name or edge label over what Kudu's 16 KiB primary key leaves rejects the event") {
  // Kudu refuses the row (and fails the statement) when its encoded key is over 16 KiB: the text
  // gets 16384 - 76 bytes beside the guids, a NUL byte counting twice.
  const std::string guid = R"("guid":")" + std::string(kGuid) + R"(")";
  const auto tag = [&](const std::string& name) {
    return R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"CLASSIFICATION_ADD","eventTime":1,)"
           R"("entity":{"typeName":"t",)" +
           guid + R"(,"classifications":[{"typeName":")" + name + R"("}]}})";
  };
  const auto edge = [&](const std::string& label, const std::string& type_name) {
    return R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"RELATIONSHIP_CREATE",)"
           R"("eventTime":1,"relationship":{"typeName":")" +
           type_name + R"(","label":")" + label + R"(","end1":{)" + guid + R"(},"end2":{)" + guid +
           "}}}";
  };
  CHECK(failure(tag(std::string(16308, 'T'))) == "accepted");
  CHECK(failure(tag(std::string(16309, 'T'))) ==
        "too-large: message.entity.classifications[0].typeName: 16309 bytes, more than the 16308 "
        "bytes that Kudu's 16 KiB primary key leaves for tag_name beside the guids");
  std::string nuls = std::string(16000, 'T');
  for (int i = 0; i < 309; ++i) nuls += "\\u0000";
  CHECK(failure(tag(nuls)) ==
        "too-large: message.entity.classifications[0].typeName: 16309 bytes (16618 encoded), more "
        "than the 16308 bytes that Kudu's 16 KiB primary key leaves for tag_name beside the guids");
  CHECK(failure(edge(std::string(16308, 'l'), "t")) == "accepted");
  CHECK(failure(edge(std::string(16309, 'l'), "t")) ==
        "too-large: message.relationship.label: 16309 bytes, more than the 16308 bytes that "
        "Kudu's 16 KiB primary key leaves for elabel beside the guids");
  // Without a label, the typeName is the edge's label.
  CHECK(failure(edge("", std::string(16309, 't'))) ==
        "too-large: message.relationship.typeName: 16309 bytes, more than the 16308 bytes that "
        "Kudu's 16 KiB primary key leaves for elabel beside the guids");
}

TEST_SUITE_END();
