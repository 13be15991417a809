// One envelope level on its own: which shape a record has, and what each member says.
#include "input/envelope.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>

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
  CHECK(p.env.time_fallbacks().msg_creation_time_ms == 1700000000000);
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
  CHECK(p.env.time_fallbacks().kafka_timestamp_ms == 1700000000123);

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
  CHECK(failure("{\"msgSplitCount\":\"2\"}") == "msgSplitCount: expected an integer, got a string");
  CHECK(failure("{\"msgCompressionKind\":\"LZ4\"}") == "msgCompressionKind: unknown kind \"LZ4\"");
  CHECK(failure("{\"topic\":\"T\",\"partition\":1.5,\"payload\":null}") ==
        "partition: expected a 64-bit integer, got 1.5");
}

TEST_SUITE_END();
