// One envelope level of a record: what a JSON object at the top of a record (or of a decoded
// message) says about the notification inside it.
//
// Three shapes reach this level, told apart by their members:
//
//   kcat -J record  {"topic":"ATLAS_ENTITIES","partition":0,"offset":7,"ts":1700000000000,
//                    "key":null,"payload":"<the Kafka value: an envelope, as text>"}
//                   -- "payload" and neither "version" nor "message"
//   envelope        {"version":{..},"msgCompressionKind":"NONE","msgSplitIdx":1,"msgSplitCount":1,
//                    "msgId":"..","msgCreationTime":1700000000000,"message":<payload>}
//                   -- "message" is the payload object, or a Base64 string when the message is
//                      GZIP-compressed or one chunk of a split message
//   bare payload    {"type":"ENTITY_NOTIFICATION_V1","operationType":..,"entity":{..}}
//                   -- no "version", no "message": the whole object is the payload
//
// parse_envelope reads the level in one forward pass. When "message" is an object, its payload
// fields are collected in that same pass (payload.h) and its exact text located, since the audit
// seq hashes the message as sent. Payload fields at the top level are collected too, for the bare
// shape. Which shape it was, and what to do next, is the decoder's business (notification.h).
//
//   Envelope env = parse_envelope(parser, padded_text, "record");
//   if (env.kcat) ...                       // decode *env.payload as the next level
//   else if (env.bare_payload()) ...        // env.top holds the payload fields
//   else if (env.message_type == string)    // env.message_string: Base64 (GZIP or a split chunk)
//   else                                    // env.message holds the payload fields,
//                                           // env.message_raw its text
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "atlas2kudu/event.h"
#include "input/payload.h"

namespace atlas2kudu {

struct Envelope {
  bool has_version = false;
  bool has_message = false;
  simdjson::ondemand::json_type message_type = simdjson::ondemand::json_type::null;
  // When "message" is an object: its text, from '{' to '}' (a view into the parsed buffer), and
  // its payload fields.
  std::string_view message_raw;
  PayloadFields message;
  // When "message" is a string: its unescaped text.
  std::string message_string;
  // Payload fields found at the top level: the payload itself when the record is bare.
  PayloadFields top;

  bool gzip = false;  // msgCompressionKind GZIP ("NONE" and null are plain)
  std::int64_t split_idx = 1;
  std::int64_t split_count = 1;  // more than 1: this is one chunk of a split message
  std::string msg_id;
  std::optional<std::int64_t> msg_creation_time;  // ms since the epoch

  // kcat -J members. `kcat` is set when the level is a kcat record rather than an envelope.
  bool kcat = false;
  std::optional<std::string> topic;
  std::optional<std::int64_t> partition;
  std::optional<std::int64_t> offset;
  std::optional<std::int64_t> kafka_ts;  // "ts", when it is a number (ms since the epoch)
  bool has_payload = false;
  std::optional<std::string> payload;  // null for a Kafka record without a value

  // Neither an envelope nor a kcat record: the level is the payload.
  bool bare_payload() const { return !kcat && !has_version && !has_message; }
  // The Kafka coordinates of a kcat record (missing members read as 0 and "").
  SourcePosition::Kafka kafka() const;
  // The times the payload falls back to when it has no event time of its own.
  EventTimeFallbacks time_fallbacks() const { return {msg_creation_time, kafka_ts}; }
};

// Parses the object in `text`, which must be followed by simdjson::SIMDJSON_PADDING readable
// bytes. `what` names the level in the error for a non-object ("record", "payload", ...). Throws
// InputError for a member of the wrong type or an unknown msgCompressionKind, and simdjson_error
// for malformed JSON. Views in the result point into `text`.
Envelope parse_envelope(simdjson::ondemand::parser& parser, std::string_view text,
                        const char* what);

}  // namespace atlas2kudu
