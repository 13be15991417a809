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
// parse_envelope reads the level in one forward pass, its members in whatever order they come.
// When "message" is an object, its payload fields are collected in that same pass (payload.h) and
// its exact text located, since the audit seq hashes the message as sent. Every member is
// validated, used or not, and nothing but whitespace may follow the object. Which shape the level
// has is only known at its end, so the members of the other shapes cannot reject it: a kcat
// member of the wrong type in an envelope (or an envelope member in a kcat record) is ignored,
// and a bare payload is read by a second pass over the same document once the first found neither
// "version" nor "message" nor "payload". A member name given twice rejects the level
// (kDuplicateKey). What to do next is the decoder's business (notification.h).
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
#include "input/input_error.h"
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
  // The payload fields when the level is a bare payload (bare_payload()).
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
  std::optional<std::int64_t> kafka_ts;  // "ts", when it is an integer (ms since the epoch)
  bool has_payload = false;
  bool has_value = false;              // a "value" member: where rpk topic consume puts the message
  std::optional<std::string> payload;  // null for a Kafka record without a value
  // A kcat record's "payload" that is no string (an object, a number): the decoder raises it once
  // it has taken the record's Kafka position, so that the rejection names the position too.
  std::optional<InputError> payload_error;

  // Neither an envelope nor a kcat record: the level is the payload.
  bool bare_payload() const { return !kcat && !has_version && !has_message; }
  // The Kafka coordinates of a kcat record (missing members read as 0 and "").
  SourcePosition::Kafka kafka() const;
};

// Parses the object in `text`, which must be followed by simdjson::SIMDJSON_PADDING readable
// bytes. `what` names the level in the error for a non-object ("record", "payload", ...). Throws
// InputError for a member of the wrong type, a Kafka partition or offset out of range, an unknown
// msgCompressionKind, a repeated member name or nesting past `max_depth`, and simdjson_error for
// malformed JSON (data after the object included). Views in the result point into `text`.
// `write_attribute_values`: parse_payload's, for the payload fields in `message` and `top`.
// `skipped`: whitespace trimmed off the front of `text` as the record held it, counted into the
// byte position of data after the object.
Envelope parse_envelope(simdjson::ondemand::parser& parser, std::string_view text, const char* what,
                        std::uint32_t max_depth = kDefaultMaxJsonDepth,
                        bool write_attribute_values = true, std::size_t skipped = 0);

}  // namespace atlas2kudu
