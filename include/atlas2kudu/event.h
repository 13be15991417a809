// The typed event model: one Event per Atlas entity-change notification.
//
// The reader (reader.h) turns every accepted notification into exactly one Event; the compiler
// (compiler.h) folds Events into SQL. Nothing downstream of the reader looks at JSON framing,
// envelopes, compression or V1/V2 differences: those are resolved here.
//
// Example: this V2 notification
//
//   {"version":{...},"msgCreationTime":1700000000999,"message":{"type":"ENTITY_NOTIFICATION_V2",
//    "entity":{"typeName":"hive_table","guid":"00000001-0000-4000-8000-000000000001",
//              "attributes":{"owner":"a","createTime":5,"qualifiedName":"db.t1@c","name":"t1"}},
//    "operationType":"ENTITY_CREATE","eventTime":1000}}
//
// becomes
//
//   Event{op = kEntityCreate, guid = 00000001000040008000000000000001, type_name = "hive_table",
//         qualified_name = "db.t1@c", name = "t1",
//         attributes = {{"owner", "\"a\""}, {"createTime", "5"}},   // JSON text, as written
//         event_time_us = 1000000, audit_seq = <SHA-256 of the minified message, first 8 bytes>}
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace atlas2kudu {

// A 16-byte UUID. Atlas writes guids as 36-char dashed lowercase text; we also accept 32-char
// plain hex and any letter case. Anything else is an input error.
struct Guid {
  std::array<std::uint8_t, 16> bytes{};

  // Parses "0b6f3c1e-2a4d-4e8f-9c1b-5d7e8f9a0b1c" or "0B6F3C1E2A4D4E8F9C1B5D7E8F9A0B1C".
  static std::optional<Guid> parse(std::string_view text);
  // 32 lowercase hex characters, the `--key-encoding hex` column value.
  std::string hex() const;
  // 36-char dashed lowercase form, for messages to people.
  std::string dashed() const;

  friend auto operator<=>(const Guid&, const Guid&) = default;
};

// Guids are chosen by whoever wrote the input, so hash tables keyed by them use a keyed hash
// (SipHash-1-3 under a random per-process key, util/keyed_hash.h) that crafted guids cannot
// flood. std::hash<Guid> is this. Being random per process, it must never decide an output order.
struct GuidHash {
  std::size_t operator()(const Guid& g) const noexcept;
};

// The nine V2 operation types. V1 payloads map onto them: TRAIT_ADD -> kClassificationAdd,
// TRAIT_DELETE -> kClassificationDelete, TRAIT_UPDATE -> kClassificationUpdate.
enum class Operation : std::uint8_t {
  kEntityCreate,
  kEntityUpdate,
  kEntityDelete,
  kClassificationAdd,
  kClassificationDelete,
  kClassificationUpdate,
  kRelationshipCreate,
  kRelationshipUpdate,
  kRelationshipDelete,
};
inline constexpr std::size_t kOperationCount = 9;

// "ENTITY_CREATE", ... exactly as Atlas spells the V2 operationType.
std::string_view to_string(Operation op);
// Parses a V2 operationType name; nullopt for anything else.
std::optional<Operation> parse_operation(std::string_view name);

inline bool is_entity_op(Operation op) {
  return op <= Operation::kEntityDelete;
}
inline bool is_classification_op(Operation op) {
  return op >= Operation::kClassificationAdd && op <= Operation::kClassificationUpdate;
}
inline bool is_relationship_op(Operation op) {
  return op >= Operation::kRelationshipCreate;
}

// Where a record came from. `source` names the file ("-" for stdin); the string it views is owned
// by the Reader and lives as long as the Reader. Lines are 1-based, byte offsets 0-based, both
// counted in the decompressed text of the source.
struct SourcePosition {
  std::string_view source;
  std::uint32_t source_index = 0;  // 0-based position of the source among the run's inputs
  std::uint64_t line = 0;
  std::uint64_t offset = 0;
  // 0-based index of the record within its source (every framed record counts, rejected or not).
  // A split message's event carries the index of the chunk that completed it; `first_record` is
  // the index of its earliest chunk, in the source `first_source_index` (chunks may be spread over
  // several inputs), so a resume point must not pass it. Otherwise both equal this record's.
  std::uint64_t record = 0;
  std::uint32_t first_source_index = 0;
  std::uint64_t first_record = 0;

  // kcat -J framing keeps the Kafka coordinates of the record.
  struct Kafka {
    std::string topic;
    std::int32_t partition = 0;
    std::int64_t offset = 0;
  };
  std::optional<Kafka> kafka;
};

// One attribute other than qualifiedName and name. `json` is the value's JSON text with
// insignificant whitespace removed; numbers keep the digits they were written with (no
// precision loss), strings keep their quotes and escapes. Null values never appear here.
struct Attribute {
  std::string name;
  std::string json;

  friend bool operator==(const Attribute&, const Attribute&) = default;
};

// One entry of the entity's complete tag set after the change (every CLASSIFICATION_* event lists
// all of the entity's tags, not only the one that changed). Atlas lists super-type
// entries and may repeat a name; the event keeps the list as given, the compiler takes the first
// entry per distinct type_name.
struct Classification {
  std::string type_name;
  // The entity the tag is directly attached to: differs from the event's guid for propagated tags.
  Guid entity_guid;
  // The classification's `attributes` as a JSON object text ("{}" when absent).
  std::string attributes_json = "{}";

  friend bool operator==(const Classification&, const Classification&) = default;
};

struct RelationshipEnd {
  Guid guid;
  std::string type_name;

  friend bool operator==(const RelationshipEnd&, const RelationshipEnd&) = default;
};

// RELATIONSHIP_* payloads. The reader guarantees end1, end2 and a non-empty edge label
// (label, else typeName) on every relationship event, since a delete without the full
// (src, elabel, dst) cannot be applied (contract: "Do not ship sync without one of these").
struct Relationship {
  std::optional<Guid> guid;  // the relationship's own guid, when given
  std::string type_name;
  std::string label;            // as given; may be empty
  RelationshipEnd end1;         // src
  RelationshipEnd end2;         // dst
  bool status_deleted = false;  // status == "DELETED": an update that is really a delete

  // The edge label: the relationship's `label`, else its `typeName`.
  const std::string& edge_label() const { return label.empty() ? type_name : label; }

  friend bool operator==(const Relationship&, const Relationship&) = default;
};

// "events.jsonl:12:3456" (kcat records add " (topic/partition@offset)", console records with
// partition and offset prefixes " (partition 0, offset 41)"). A name or topic that
// holds a control character is written in its one-line form (util/utf8.h), so that a position
// never spans lines.
std::string format_position(const SourcePosition& pos);

struct Event {
  Operation op = Operation::kEntityUpdate;
  // Entity guid for entity and classification events; for relationship events the relationship's
  // guid if present, else zero (the edge is identified by relationship.end1/label/end2).
  Guid guid;
  // Entity typeName (relationship typeName for relationship events).
  std::string type_name;
  std::optional<std::string> qualified_name;  // decoded text, when the event carries it
  std::optional<std::string> name;            // decoded text, when the event carries it
  // Every other non-null attribute, in input order (none from Reader::validation_only).
  std::vector<Attribute> attributes;
  std::vector<Classification> classifications;  // complete tag set after the change
  Relationship relationship;                    // RELATIONSHIP_* only
  // eventTime (ms) x 1000; V1 falls back to systemAttributes.modifiedTime, then msgCreationTime.
  std::int64_t event_time_us = 0;
  // entity_audit's seq: first 8 bytes, big-endian, of SHA-256 over the minified `message` JSON,
  // as a signed 64-bit value. Identical for a redelivered message. 0 from a reader that computes
  // none (Reader::validation_only).
  std::int64_t audit_seq = 0;
  bool legacy_v1 = false;  // came from an ENTITY_NOTIFICATION_V1 (or untyped) payload
  // The entity header says the entity is deleted: V2 `status`, V1 `id.state` "DELETED" (or
  // "PURGED"). Never a delete by itself (operationType decides that), but a CLASSIFICATION_* event
  // with such a header changes only the entity's tags (none under --tombstone hard, which left the
  // entity no rows): Atlas sends one for an entity it has just soft-deleted (its propagated tags
  // removed after the delete), and that header must not make the entity ACTIVE again, nor take its
  // qualifiedName's entity_by_qn row back from an entity created since.
  bool header_deleted = false;
  SourcePosition pos;
};

}  // namespace atlas2kudu

template <>
struct std::hash<atlas2kudu::Guid> : atlas2kudu::GuidHash {};
