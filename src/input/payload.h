// The notification payload: the V2 and legacy V1 field models, and one payload -> one Event.
//
// A payload is the object in an envelope's `message` (envelope.h), or a whole record that has no
// envelope. Atlas writes two generations of it:
//
//   V2  {"type":"ENTITY_NOTIFICATION_V2","operationType":"CLASSIFICATION_ADD","eventTime":1000,
//        "entity":{"typeName":"hive_table","guid":"<uuid>","attributes":{"qualifiedName":..},
//                  "classifications":[{"typeName":"PII","entityGuid":"<uuid>"}]}}
//       or, for RELATIONSHIP_*, "relationship":{"typeName":..,"label":..,"end1":{"guid":..},..}
//   V1  {"type":"ENTITY_NOTIFICATION_V1","operationType":"TRAIT_ADD",
//        "entity":{"id":{"id":"<uuid>","typeName":..},"values":{..},"traitNames":["PII"],
//                  "systemAttributes":{"modifiedTime":"2017-03-25T20:07:12.000Z"}},
//        "traits":[{"typeName":"PII","values":{..}}]}
//       (a payload without "type" is read as V1).
//
// Reading takes two steps, because the envelope reads its members and its payload's in one
// forward pass (simdjson On-Demand), and which of the collected fields count is only known at the
// end (V1 or V2, and the envelope's own times as fallbacks):
//
//   PayloadFields fields;
//   parse_payload(message_value, fields, Nesting{.depth = 1});   // the envelope's "message"
//   Event event;
//   payload_to_event(fields, EventTimeFallbacks{.msg_creation_time_ms = 1700000000000}, event);
//
// Members may come in any order, with any whitespace between them: each is read once, where it
// is. Members the payload does not use are validated, not skipped (json_path.h). A member name
// given twice in any object of the payload, attributes and the values inside them included,
// rejects the record (kDuplicateKey).
//
// Every error is an InputError whose reason starts with the field's path ("message.entity.guid:
// ..."); a bare payload is reported with the same "message." paths, except for what the first
// pass over its level finds, while it still reads it as an envelope (envelope.h): a repeated
// member name and nesting past the limit are named from the level, as in
// "record.entity.attributes.a: member \"b\" appears twice" or "record: member \"type\" appears
// twice".
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/event.h"
#include "atlas2kudu/reader.h"
#include "input/json_path.h"

namespace atlas2kudu {

// One V2 classification, or one V1 trait (a "struct" with "values" instead of "attributes").
struct ClassificationFields {
  std::string type_name;
  std::optional<Guid> entity_guid;     // V2 only: set when the tag was propagated
  std::string attributes_json = "{}";  // canonical JSON object text
};

// An entity's V2 "attributes" or V1 "values". qualifiedName and name are kept apart as decoded
// text; every other non-null attribute keeps its JSON text, in input order (none when
// parse_payload is told not to write them).
struct AttributeSet {
  bool present = false;
  std::optional<std::string> qualified_name;
  std::optional<std::string> name;
  std::vector<Attribute> others;
};

// Both generations' entity fields: which ones count is decided by payload_to_event.
struct EntityFields {
  bool present = false;
  std::optional<std::string> type_name;
  std::optional<std::string> guid_text;               // V2 "guid"
  std::optional<std::string> v1_id_guid;              // V1 "id": a guid string, or {"id":..}
  std::optional<std::string> v1_id_type_name;         // V1 "id": {"typeName":..}
  AttributeSet attributes;                            // V2 "attributes"
  AttributeSet values;                                // V1 "values"
  std::vector<ClassificationFields> classifications;  // V2 "classifications"
  bool has_traits = false;
  std::vector<ClassificationFields> traits;  // V1 "traits" map
  std::vector<std::string> trait_names;      // V1 "traitNames"
  std::optional<std::string> modified_time;  // V1 systemAttributes.modifiedTime
  bool status_deleted = false;               // V2 "status", V1 "id"."state": "DELETED" or "PURGED"
};

struct RelationshipEndFields {
  std::optional<Guid> guid;
  std::string type_name;
};

struct RelationshipFields {
  bool present = false;
  std::string type_name;
  std::optional<Guid> guid;
  std::string label;
  std::string status;
  std::optional<RelationshipEndFields> end1, end2;
};

struct PayloadFields {
  std::optional<std::string> type;
  std::optional<std::string> operation;
  std::optional<std::int64_t> event_time_ms;
  EntityFields entity;
  RelationshipFields relationship;
  bool has_traits = false;
  std::vector<ClassificationFields> traits;  // V1 message-level "traits" list
};

// Reads the payload object `value` into `fields`, consuming and validating all of it, checking
// each field's type and copying its text out of the parser. `nesting` is the object's own
// (json_path.h). Throws InputError, or simdjson_error for invalid JSON.
// `write_attribute_values` false: the entity's attributes other than qualifiedName and name are
// validated by the walk that would write their JSON text (json_path.h), but not written
// (AttributeSet::others stays empty), for a reader whose events become no rows (check). The same
// payloads are accepted and rejected either way: no check looks at that text. Classification
// attributes are written either way, since payload_to_event checks their size.
void parse_payload(simdjson::ondemand::value& value, PayloadFields& fields, Nesting nesting,
                   bool write_attribute_values = true);

// Where the event time comes from when the payload has no eventTime (and, for V1, no
// systemAttributes.modifiedTime): the envelope's msgCreationTime, then the Kafka record's
// timestamp (kcat's "ts", kafka-console-consumer's CreateTime:). Both in milliseconds since the
// epoch.
struct EventTimeFallbacks {
  std::optional<std::int64_t> msg_creation_time_ms = std::nullopt;
  std::optional<std::int64_t> kafka_timestamp_ms = std::nullopt;
};

// Fills every Event field the payload decides: op, guid, type_name, qualified_name, name,
// attributes, classifications, relationship, event_time_us and legacy_v1 (pos and audit_seq are
// the caller's). Moves text out of `fields`. Checks, in this order: the notification type (an
// ATLAS_HOOK type is kHookTopic: the wrong topic was exported), the operation (V1 TRAIT_* map to
// CLASSIFICATION_*), the event time, then the entity or the relationship the operation needs,
// and last that no text bound for a string cell is longer than `max_cell_bytes` (Kudu refuses a
// whole row with a cell over its max_cell_size_bytes): kTooLarge naming the field and its size.
void payload_to_event(PayloadFields& fields, const EventTimeFallbacks& fallbacks, Event& event,
                      std::size_t max_cell_bytes = kDefaultMaxCellBytes);

// The audit seq of a payload: SHA-256 of its JSON text minus insignificant whitespace, so a
// redelivered or re-pretty-printed message keeps its seq. `scratch` is reused between calls.
// `minified`: the caller knows the text has no whitespace outside its strings, so it is hashed
// as it is (the same seq, without the copy). Throws InputError(kInvalidJson) if the text cannot be
// minified.
std::int64_t message_audit_seq(std::string_view message_json, std::string& scratch,
                               bool minified = false);

}  // namespace atlas2kudu
