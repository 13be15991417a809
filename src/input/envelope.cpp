#include "input/envelope.h"

#include <fmt/core.h>

#include "input/input_error.h"
#include "input/json_path.h"
#include "input/json_text.h"

namespace atlas2kudu {

namespace od = simdjson::ondemand;

SourcePosition::Kafka Envelope::kafka() const {
  SourcePosition::Kafka k;
  k.topic = topic.value_or("");
  k.partition = static_cast<std::int32_t>(partition.value_or(0));
  k.offset = offset.value_or(0);
  return k;
}

Envelope parse_envelope(od::parser& parser, std::string_view text, const char* what) {
  Envelope env;
  od::document doc =
      parser.iterate(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING);
  const od::json_type top = doc.type();
  if (top != od::json_type::object) {
    throw InputError(RejectCode::kWrongType,
                     fmt::format("{}: expected a JSON object, got {}", what, json_type_name(top)));
  }
  for (auto field : doc.get_object()) {
    const std::string_view key = field.unescaped_key();
    od::value value = field.value();
    if (key == "version") {
      env.has_version = true;
    } else if (key == "message") {
      env.has_message = true;
      env.message_type = value.type();
      if (env.message_type == od::json_type::object) {
        // Parse the payload in this same pass, and find its text for the audit seq: it starts at
        // the '{' and ends at the last '}' before the token the iterator stops on afterwards.
        const char* begin = value.raw_json_token().data();
        for (auto member : value.get_object()) {
          parse_payload_field(member.unescaped_key(), member.value(), env.message);
        }
        const char* after = text.data() + text.size();
        if (auto loc = doc.current_location(); !loc.error()) after = loc.value_unsafe();
        const char* end = after;
        while (end > begin && end[-1] != '}') --end;
        env.message_raw = std::string_view(begin, static_cast<std::size_t>(end - begin));
      } else if (env.message_type == od::json_type::string) {
        env.message_string = std::string(value.get_string().value());
      } else if (env.message_type != od::json_type::null) {
        wrong_type("message", "an object or a string", env.message_type);
      }
    } else if (key == "msgCompressionKind") {
      const auto kind = get_optional_string(value, "msgCompressionKind");
      if (kind && *kind == "GZIP") {
        env.gzip = true;
      } else if (kind && *kind != "NONE") {
        throw InputError(
            RejectCode::kBadEncoding,
            fmt::format("msgCompressionKind: unknown kind \"{}\"", printable_excerpt(*kind, 40)));
      }
    } else if (key == "msgSplitIdx") {
      env.split_idx = get_int(value, "msgSplitIdx");
    } else if (key == "msgSplitCount") {
      env.split_count = get_int(value, "msgSplitCount");
    } else if (key == "msgId") {
      if (auto id = get_optional_string(value, "msgId")) env.msg_id = std::string(*id);
    } else if (key == "msgCreationTime") {
      if (value.type() != od::json_type::null) {
        env.msg_creation_time = get_int(value, "msgCreationTime");
      }
    } else if (key == "payload") {
      env.has_payload = true;
      if (auto p = get_optional_string(value, "payload")) env.payload = std::string(*p);
    } else if (key == "topic") {
      if (auto t = get_optional_string(value, "topic")) env.topic = std::string(*t);
    } else if (key == "partition") {
      env.partition = get_int(value, "partition");
    } else if (key == "offset") {
      env.offset = get_int(value, "offset");
    } else if (key == "ts") {
      if (value.type() == od::json_type::number) env.kafka_ts = get_int(value, "ts");
    } else {
      parse_payload_field(key, value, env.top);
    }
  }
  env.kcat = env.has_payload && !env.has_version && !env.has_message;
  return env;
}

}  // namespace atlas2kudu
