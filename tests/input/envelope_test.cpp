// One envelope level on its own: which shape a record has, and what each member says.
#include "input/envelope.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <string>
#include <vector>

#include "input/input_error.h"

TEST_SUITE_BEGIN("envelope");

using namespace atlas2kudu;
namespace od = simdjson::ondemand;

namespace {

// Parses `text` as one level; the padded copy stays alive as long as the views into it.
struct Parsed {
  explicit Parsed(const std::string& text) : padded(text) {
    env = parse_envelope(parser, std::string_view(padded.data(), padded.size()), "record");
  }
  simdjson::padded_string padded;
  od::parser parser;
  Envelope env;
};

// Fills the stack below the caller with bytes that are not zero, so that a variable read before
// it is written holds garbage, as in a long run, rather than a fresh stack's zeros.
[[gnu::noinline]] void dirty_stack() {
  volatile unsigned char bytes[64 * 1024];
  for (auto& b : bytes) b = 0xA5;
}

std::string failure(const std::string& text) {
  try {
    Parsed parsed(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("an envelope with an object message: fields and exact message text") {
  const std::string message =
      "{\"type\":\"ENTITY_NOTIFICATION_V2\", \"operationType\" : \"ENTITY_DELETE\",\n"
      " \"entity\":{\"guid\":\"00000001-0000-4000-8000-000000000001\"}}";
  const Parsed p(
      "{\"version\":{\"version\":\"1.0.0\"},\"msgCreationTime\":1700000000000,"
      "\"message\" : " +
      message + " ,\"msgSourceIP\":\"10.0.0.1\"}");
  CHECK(p.env.has_version);
  CHECK(p.env.has_message);
  CHECK_FALSE(p.env.kcat);
  CHECK_FALSE(p.env.bare_payload());
  CHECK(p.env.message_type == od::json_type::object);
  CHECK(p.env.message_raw == message);  // as written, up to its closing brace
  CHECK(p.env.message.operation == "ENTITY_DELETE");
  CHECK(p.env.message.entity.guid_text == "00000001-0000-4000-8000-000000000001");
  CHECK(p.env.msg_creation_time == 1700000000000);
  CHECK(p.env.split_count == 1);
  CHECK_FALSE(p.env.gzip);
}

TEST_CASE("a compressed split chunk: string message, split members, GZIP") {
  const Parsed p(
      "{\"version\":{},\"msgId\":\"m_0\",\"msgCompressionKind\":\"GZIP\",\"msgSplitIdx\":2,"
      "\"msgSplitCount\":5,\"message\":\"H4sI\\u0041\"}");
  CHECK(p.env.message_type == od::json_type::string);
  CHECK(p.env.message_string == "H4sIA");  // unescaped
  CHECK(p.env.gzip);
  CHECK(p.env.msg_id == "m_0");
  CHECK(p.env.split_idx == 2);
  CHECK(p.env.split_count == 5);
}

TEST_CASE("a kcat -J record: Kafka coordinates and the payload text") {
  const Parsed p(
      "{\"topic\":\"ATLAS_ENTITIES\",\"partition\":3,\"offset\":17,\"tstype\":\"create\","
      "\"ts\":1700000000123,\"key\":null,\"payload\":\"{\\\"version\\\":{}}\"}");
  CHECK(p.env.kcat);
  CHECK_FALSE(p.env.bare_payload());
  CHECK(p.env.payload == "{\"version\":{}}");
  const SourcePosition::Kafka k = p.env.kafka();
  CHECK(k.topic == "ATLAS_ENTITIES");
  CHECK(k.partition == 3);
  CHECK(k.offset == 17);
  CHECK(p.env.kafka_ts == 1700000000123);

  const Parsed null_value("{\"topic\":\"T\",\"partition\":0,\"offset\":1,\"payload\":null}");
  CHECK(null_value.env.kcat);
  CHECK_FALSE(null_value.env.payload);
}

TEST_CASE("a bare payload: no version, no message; its fields are at the top") {
  const Parsed p(
      "{\"type\":\"ENTITY_NOTIFICATION_V1\",\"operationType\":\"ENTITY_CREATE\",\"eventTime\":5}");
  CHECK(p.env.bare_payload());
  CHECK(p.env.top.type == "ENTITY_NOTIFICATION_V1");
  CHECK(p.env.top.operation == "ENTITY_CREATE");
  CHECK(p.env.top.event_time_ms == 5);
  // A version alone makes it an envelope (whose message is missing).
  CHECK_FALSE(Parsed("{\"version\":{}}").env.bare_payload());
}

TEST_CASE("members of the wrong type are named in the error") {
  CHECK(failure("[1]") == "record: expected a JSON object, got an array");
  CHECK(failure("{\"message\":true}") == "message: expected an object or a string, got a boolean");
  // ... but a misspelt atom or a broken number is no JSON: invalid JSON (simdjson's error), as in
  // any other member, not a wrong type.
  for (const char* bad : {"tru", "fals", "12x", "-"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(Parsed(std::string("{\"message\":") + bad + "}"), simdjson::simdjson_error);
  }
  CHECK(failure("{\"version\":{},\"msgSplitCount\":\"2\"}") ==
        "msgSplitCount: expected an integer, got a string");
  CHECK(failure("{\"version\":{},\"msgCompressionKind\":\"LZ4\"}") ==
        "msgCompressionKind: unknown kind \"LZ4\"");
  // A kind that is not a string is a type error, and no kind at all.
  for (const char* kind : {"1", "true", "{}", "[\"GZIP\"]", "{\"k\":[1,\"GZIP\"]}"}) {
    CAPTURE(kind);
    const std::string text = std::string("{\"version\":{},\"msgCompressionKind\":") + kind + "}";
    dirty_stack();
    const std::string error = failure(text);
    CHECK(error.starts_with("msgCompressionKind: expected a string, got "));
    CHECK(error.find("unknown kind") == std::string::npos);
    // In a bare payload the member is not the envelope's, and passed over.
    dirty_stack();
    const Parsed bare(std::string("{\"msgCompressionKind\":") + kind + "}");
    CHECK(bare.env.bare_payload());
    CHECK_FALSE(bare.env.gzip);
  }
  CHECK(failure("{\"topic\":\"T\",\"partition\":1.5,\"payload\":null}") ==
        "partition: expected a 64-bit integer, got 1.5");
}

TEST_CASE("the version: Atlas's 1.0.0 or older is read, a newer one or no version refused") {
  const auto with_version = [](const std::string& version) {
    return "{\"version\":" + version + ",\"message\":{\"type\":\"ENTITY_NOTIFICATION_V2\"}}";
  };
  // Atlas 2.x, Atlas 0.8 (no versionParts), an object without its version (as the tests' own
  // records), a null version, and older or equal versions however written.
  for (const std::string ok :
       {R"({"version":"1.0.0","versionParts":[1]})", R"({"version":"1.0.0"})", "{}",
        R"({"version":null})", R"({"version":"1"})", R"({"version":"0.9.9"})",
        R"({"version":"1.0.0.0"})", R"({"version":"01.0"})", R"({"versionParts":[2]})"}) {
    CAPTURE(ok);
    CHECK(failure(with_version(ok)) == "accepted");
  }
  // Newer than 1.0.0, as Atlas's MessageVersion compares them: IncompatibleVersionException.
  for (const std::string newer : {"2.0.0", "1.0.1", "1.1", "1.0.0.1", "10"}) {
    CAPTURE(newer);
    try {
      Parsed parsed(with_version(R"({"version":")" + newer + R"("})"));
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(e.code() == RejectCode::kUnsupportedVersion);
      CHECK(std::string(e.what()) ==
            "version.version: \"" + newer +
                "\" is newer than 1.0.0, the notification version Atlas writes and atlas2kudu "
                "reads (Atlas's own consumer refuses it too)");
    }
  }
  for (const std::string none : {"banana", "", "1..0", "1.0.", "-1", "1.0.0-SNAPSHOT"}) {
    CAPTURE(none);
    CHECK(failure(with_version(R"({"version":")" + none + R"("})")) ==
          "version.version: \"" + none +
              "\" is no version (whole numbers and dots, such as 1.0.0)");
  }
  CHECK(failure(with_version("5")) ==
        "version: expected an object such as {\"version\":\"1.0.0\"}, got a number");
  CHECK(failure(with_version(R"("1.0.0")")) ==
        "version: expected an object such as {\"version\":\"1.0.0\"}, got a string");
  CHECK(failure(with_version(R"({"version":1})")) ==
        "version.version: expected a string such as \"1.0.0\", got a number");
  // Its JSON is checked as any member's: a name twice, and invalid JSON, come first.
  CHECK(failure(with_version(R"({"version":"1.0.0","version":"2"})")) ==
        "record.version: member \"version\" appears twice");
  CHECK_THROWS_AS(Parsed(with_version(R"({"version":"9","x":[1,]})")), simdjson::simdjson_error);
}

TEST_CASE("members in any order, with any whitespace, read the same") {
  const std::string message =
      R"({"type":"ENTITY_NOTIFICATION_V2","operationType":"ENTITY_DELETE","eventTime":5,)"
      R"("entity":{"guid":"00000001-0000-4000-8000-000000000001","typeName":"t"}})";
  std::vector<std::string> members = {
      R"("version":{"version":"1.0.0","versionParts":[1]})", R"("msgCreationTime":1700000000000)",
      R"("msgCompressionKind":"NONE")", R"("spooled":false)", R"("message":)" + message};
  std::sort(members.begin(), members.end());
  int orders = 0;
  do {
    std::string text = " {\n";
    for (std::size_t i = 0; i < members.size(); ++i) text += (i ? "\t,\r\n  " : "") + members[i];
    const Parsed p(text + " \n} \n");
    CAPTURE(text);
    CHECK(p.env.has_version);
    CHECK(p.env.message_raw == message);
    CHECK(p.env.message.operation == "ENTITY_DELETE");
    CHECK(p.env.msg_creation_time == 1700000000000);
    ++orders;
  } while (std::next_permutation(members.begin(), members.end()));
  CHECK(orders == 120);
}

TEST_CASE("members of another shape are ignored, whatever their type") {
  // An envelope with kcat-looking members, a kcat record with envelope-looking ones, and a bare
  // payload with both: only the members of the level's own shape are checked.
  const Parsed envelope(R"({"version":{},"partition":"x","ts":"y","topic":1,"message":null})");
  CHECK_FALSE(envelope.env.kcat);
  CHECK_FALSE(envelope.env.kafka_ts);
  const Parsed kcat(R"({"msgSplitCount":"x","msgCompressionKind":"LZ4","payload":"{}","ts":5})");
  CHECK(kcat.env.kcat);
  CHECK(kcat.env.kafka_ts == 5);
  const Parsed bare(R"({"type":"ENTITY_NOTIFICATION_V2","msgCreationTime":"x","partition":[]})");
  CHECK(bare.env.bare_payload());
  CHECK(bare.env.top.type == "ENTITY_NOTIFICATION_V2");
  // A payload member at the top of an envelope is not part of the payload, and not checked.
  const Parsed top_type(R"({"type":5,"version":{},"message":{"type":"ENTITY_NOTIFICATION_V2"}})");
  CHECK(top_type.env.message.type == "ENTITY_NOTIFICATION_V2");
  CHECK_FALSE(top_type.env.top.type);
}

TEST_CASE("Kafka coordinates are range-checked as the types they are") {
  CHECK(failure(R"({"partition":2147483648,"payload":null})") ==
        "partition: 2147483648 is out of range (0..2147483647)");
  CHECK(failure(R"({"partition":4294967296,"payload":null})") ==
        "partition: 4294967296 is out of range (0..2147483647)");
  CHECK(failure(R"({"partition":-1,"payload":null})") ==
        "partition: -1 is out of range (0..2147483647)");
  CHECK(failure(R"({"offset":9223372036854775807,"payload":null})") ==
        "offset: 9223372036854775807 is out of range (0..9223372036854775806)");
  CHECK(failure(R"({"offset":9223372036854775808,"payload":null})") ==
        "offset: expected a 64-bit integer, got 9223372036854775808");
  CHECK(Parsed(R"({"partition":2147483647,"offset":9223372036854775806,"payload":null})")
            .env.kafka()
            .offset == 9223372036854775806);
}

TEST_CASE("one JSON text per level: data after the object is an error") {
  CHECK(failure(R"({"version":{},"message":null} {"version":{}})") ==
        "record: data after the JSON object, at byte 30");
  CHECK(failure(R"({"payload":"x"}{})") == "record: data after the JSON object, at byte 15");
  // Other trailing bytes are refused by simdjson itself.
  CHECK_THROWS_AS(Parsed(R"({"payload":"x"}])"), simdjson::simdjson_error);
  CHECK_THROWS_AS(Parsed(R"({"payload":"x"}"x")"), simdjson::simdjson_error);
  CHECK_THROWS_AS(Parsed(R"({"payload":"x"} 1)"), simdjson::simdjson_error);
  CHECK_THROWS_AS(Parsed(R"({"payload":"x"}[1])"), simdjson::simdjson_error);
  CHECK(Parsed("{\"version\":{}} \n\t ").env.has_version);  // whitespace is fine
}

TEST_CASE("a member name twice in the envelope is rejected as duplicate-key") {
  try {
    Parsed p(R"({"version":{},"message":{"type":"ENTITY_NOTIFICATION_V2"},"message":null})");
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(e.code() == RejectCode::kDuplicateKey);
    CHECK(std::string(e.what()) == "record: member \"message\" appears twice");
  }
  // Also for members nobody reads, and past the first sixteen members.
  std::string many = R"({"version":{})";
  for (int i = 0; i < 40; ++i) many += ",\"m" + std::to_string(i) + "\":" + std::to_string(i);
  CHECK(failure(many + R"(,"m3":0})") == "record: member \"m3\" appears twice");
  CHECK(failure(many + R"(,"m33":0})") == "record: member \"m33\" appears twice");
  CHECK(failure(many + "}") == "accepted");
}

TEST_SUITE_END();
