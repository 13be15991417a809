#include "input/payload.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>

#include "input/input_error.h"
#include "input/json_path.h"
#include "input/json_text.h"
#include "util/digest.h"
#include "util/iso8601.h"

namespace atlas2kudu {

namespace od = simdjson::ondemand;

namespace {

constexpr std::array<std::string_view, 12> kHookTypes = {
    "ENTITY_CREATE_V2",      "ENTITY_PARTIAL_UPDATE_V2",
    "ENTITY_FULL_UPDATE_V2", "ENTITY_DELETE_V2",
    "ENTITY_CREATE",         "ENTITY_FULL_UPDATE",
    "ENTITY_PARTIAL_UPDATE", "ENTITY_DELETE",
    "TYPE_CREATE",           "TYPE_UPDATE",
    "IMPORT_TYPES_DEF",      "IMPORT_ENTITY",
};

std::optional<Operation> parse_v1_operation(std::string_view name) {
  if (name == "ENTITY_CREATE") return Operation::kEntityCreate;
  if (name == "ENTITY_UPDATE") return Operation::kEntityUpdate;
  if (name == "ENTITY_DELETE") return Operation::kEntityDelete;
  if (name == "TRAIT_ADD") return Operation::kClassificationAdd;
  if (name == "TRAIT_DELETE") return Operation::kClassificationDelete;
  if (name == "TRAIT_UPDATE") return Operation::kClassificationUpdate;
  return std::nullopt;
}

void parse_attribute_object(od::value& v, const Path& path, Nesting nesting, bool write_values,
                            AttributeSet& out) {
  out.present = true;
  if (take_null(v)) return;
  // A repeated key rejects the record, as in every other object: which value wins would depend
  // on the reader (Atlas itself never writes one), and the result on the order of the members.
  MemberNames names;
  for (auto field : get_object(v, path, nesting)) {
    const std::string_view key = member_name(field);
    names.add(key, path);
    od::value& value = member_value(field);
    if (take_null(value)) continue;  // null never sets a column
    if (key == "qualifiedName" || key == "name") {
      std::string text(get_string(value, Path(path, key)));
      (key == "name" ? out.name : out.qualified_name) = std::move(text);
      continue;
    }
    if (!write_values) {
      validate_json(value, Path(path, key), nesting.inside());  // the walk that writes the text
      continue;
    }
    std::string json;
    write_canonical_json(value, json, Path(path, key), nesting.inside());
    out.others.push_back(Attribute{std::string(key), std::move(json)});
  }
}

ClassificationFields parse_classification(od::value& v, const Path& path, Nesting nesting,
                                          bool v1_struct) {
  ClassificationFields c;
  bool has_type = false;
  MemberNames names;
  const std::string_view attributes_key = v1_struct ? "values" : "attributes";
  for (auto field : get_object(v, path, nesting)) {
    const std::string_view key = member_name(field);
    names.add(key, path);
    od::value& value = member_value(field);
    const Path member(path, key);
    if (key == "typeName") {
      c.type_name = std::string(get_string(value, member));
      has_type = true;
    } else if (key == "entityGuid" && !v1_struct) {
      if (auto text = get_optional_string(value, member)) c.entity_guid = get_guid(*text, member);
    } else if (key == attributes_key) {
      if (take_null(value)) continue;
      const od::json_type type = value.type();
      if (type != od::json_type::object) wrong_type(member, "an object", type);
      c.attributes_json.clear();
      write_canonical_json(value, c.attributes_json, member, nesting.inside());
    } else {
      validate_json(value, member, nesting.inside());
    }
  }
  if (!has_type || c.type_name.empty()) {
    throw InputError(RejectCode::kMissingField,
                     fmt::format("{}.typeName: {}", path.str(), has_type ? "empty" : "missing"));
  }
  return c;
}

RelationshipEndFields parse_end(od::value& v, const Path& path, Nesting nesting) {
  RelationshipEndFields end;
  MemberNames names;
  for (auto field : get_object(v, path, nesting)) {
    const std::string_view key = member_name(field);
    names.add(key, path);
    od::value& value = member_value(field);
    const Path member(path, key);
    if (key == "guid") {
      if (auto text = get_optional_string(value, member)) end.guid = get_guid(*text, member);
    } else if (key == "typeName") {
      if (auto text = get_optional_string(value, member)) end.type_name = std::string(*text);
    } else {
      validate_json(value, member, nesting.inside());
    }
  }
  return end;
}

void parse_relationship(od::value& v, const Path& path, Nesting nesting, RelationshipFields& rel) {
  rel.present = true;
  MemberNames names;
  for (auto field : get_object(v, path, nesting)) {
    const std::string_view key = member_name(field);
    names.add(key, path);
    od::value& value = member_value(field);
    const Path member(path, key);
    if (key == "typeName") {
      rel.type_name = std::string(get_optional_string(value, member).value_or(""));
    } else if (key == "guid") {
      if (auto text = get_optional_string(value, member)) rel.guid = get_guid(*text, member);
    } else if (key == "label") {
      rel.label = std::string(get_optional_string(value, member).value_or(""));
    } else if (key == "status") {
      rel.status = std::string(get_optional_string(value, member).value_or(""));
    } else if (key == "end1" || key == "end2") {
      if (!take_null(value)) {
        (key == "end1" ? rel.end1 : rel.end2) = parse_end(value, member, nesting.inside());
      }
    } else {
      validate_json(value, member, nesting.inside());
    }
  }
}

// An entity's status (V1: its id's state) once it is deleted: soft-deleted, or purged after that.
bool is_deleted_status(std::string_view status) {
  return status == "DELETED" || status == "PURGED";
}

// V1 Referenceable id: {"jsonClass":..,"id":"<guid>","typeName":..,"state":..}, or the guid.
void parse_v1_id(od::value& value, const Path& path, Nesting nesting, EntityFields& e) {
  if (take_null(value)) return;
  if (value.type() == od::json_type::string) {
    e.v1_id_guid = std::string(get_string(value, path));
    return;
  }
  MemberNames names;
  for (auto id_field : get_object(value, path, nesting)) {
    const std::string_view key = member_name(id_field);
    names.add(key, path);
    od::value& id_value = member_value(id_field);
    const Path member(path, key);
    if (key == "id") {
      if (auto t = get_optional_string(id_value, member)) e.v1_id_guid = std::string(*t);
    } else if (key == "typeName") {
      if (auto t = get_optional_string(id_value, member)) e.v1_id_type_name = std::string(*t);
    } else if (key == "state" && id_value.type() == od::json_type::string) {
      e.status_deleted = is_deleted_status(get_string(id_value, member));
    } else {
      validate_json(id_value, member, nesting.inside());
    }
  }
}

void parse_system_attributes(od::value& value, const Path& path, Nesting nesting, EntityFields& e) {
  if (take_null(value)) return;
  MemberNames names;
  for (auto sys : get_object(value, path, nesting)) {
    const std::string_view key = member_name(sys);
    names.add(key, path);
    od::value& sys_value = member_value(sys);
    const Path member(path, key);
    if (key == "modifiedTime") {
      if (auto t = get_optional_string(sys_value, member)) e.modified_time = std::string(*t);
    } else {
      validate_json(sys_value, member, nesting.inside());
    }
  }
}

void parse_classification_list(od::value& value, const Path& list, Nesting nesting, bool v1_struct,
                               std::vector<ClassificationFields>& out) {
  std::size_t i = 0;
  for (auto item : get_array(value, list, nesting)) {
    const Path entry(list, i++);
    out.push_back(parse_classification(item.value(), entry, nesting.inside(), v1_struct));
  }
}

void parse_entity(od::value& v, const Path& path, Nesting nesting, bool write_attribute_values,
                  EntityFields& e) {
  e.present = true;
  MemberNames names;
  const Nesting inside = nesting.inside();
  for (auto field : get_object(v, path, nesting)) {
    const std::string_view key = member_name(field);
    names.add(key, path);
    od::value& value = member_value(field);
    const Path member(path, key);
    if (key == "typeName") {
      if (auto t = get_optional_string(value, member)) e.type_name = std::string(*t);
    } else if (key == "guid") {
      if (auto t = get_optional_string(value, member)) e.guid_text = std::string(*t);
    } else if (key == "attributes") {
      parse_attribute_object(value, member, inside, write_attribute_values, e.attributes);
    } else if (key == "values") {
      parse_attribute_object(value, member, inside, write_attribute_values, e.values);
    } else if (key == "classifications") {
      if (!take_null(value))
        parse_classification_list(value, member, inside, false, e.classifications);
    } else if (key == "id") {
      parse_v1_id(value, member, inside, e);
    } else if (key == "traits") {
      // V1: a map from trait name to the trait.
      if (take_null(value)) continue;
      e.has_traits = true;
      MemberNames trait_names;  // a trait named twice, as any repeated name, rejects the record
      for (auto trait : get_object(value, member, inside)) {
        const std::string_view name = member_name(trait);
        trait_names.add(name, member);
        e.traits.push_back(
            parse_classification(member_value(trait), Path(member, name), inside.inside(), true));
      }
    } else if (key == "traitNames") {
      if (take_null(value)) continue;
      std::size_t i = 0;
      for (auto item : get_array(value, member, inside)) {
        e.trait_names.push_back(std::string(get_string(item.value(), Path(member, i++))));
      }
    } else if (key == "systemAttributes") {
      parse_system_attributes(value, member, inside, e);
    } else if (key == "status" && value.type() == od::json_type::string) {
      // Only "DELETED" and "PURGED" are looked at; any other value, of any type, is read as before.
      e.status_deleted = is_deleted_status(get_string(value, member));
    } else {
      validate_json(value, member, inside);
    }
  }
}

std::int64_t ms_to_us(std::int64_t ms, std::string_view what) {
  constexpr std::int64_t kLimit = INT64_MAX / 1000;
  if (ms > kLimit || ms < -kLimit) {
    throw InputError(RejectCode::kWrongType, fmt::format("{}: {} is out of range", what, ms));
  }
  return ms * 1000;
}

std::vector<Classification> to_classifications(std::vector<ClassificationFields>&& in,
                                               const Guid& entity_guid) {
  std::vector<Classification> out;
  out.reserve(in.size());
  for (auto& c : in) {
    out.push_back(Classification{std::move(c.type_name), c.entity_guid.value_or(entity_guid),
                                 std::move(c.attributes_json)});
  }
  return out;
}

// The size check of text bound for one Kudu string cell; the path is formatted only on failure.
struct CellCheck {
  std::size_t max_bytes;
  void check(std::string_view text, std::string_view path, std::string_view member = {}) const {
    if (text.size() > max_bytes)
      fail(text.size(), member.empty() ? std::string(path) : fmt::format("{}.{}", path, member));
  }
  void check(std::string_view text, std::string_view list, std::size_t index,
             std::string_view member) const {
    if (text.size() > max_bytes) fail(text.size(), fmt::format("{}[{}].{}", list, index, member));
  }
  [[noreturn]] void fail(std::size_t size, const std::string& path) const {
    throw InputError(RejectCode::kTooLarge,
                     fmt::format("{}: {} bytes, more than the {} bytes of a Kudu cell "
                                 "(--max-cell-bytes)",
                                 path, size, max_bytes));
  }
};

// Kudu refuses a row whose primary key, encoded, is over 16 KiB (--max_encoded_key_size_bytes),
// failing the whole statement. Text in a key column beside two guids (entity_classifications'
// tag_name, edge_out's and edge_in's elabel) gets what they leave: Kudu's encoding of a key
// column that is not the last doubles its NUL bytes and ends it with two more, and the guids take
// at most 36 + 2 (not last) and 36 bytes.
constexpr std::size_t kMaxEncodedKeyBytes = 16 * 1024;
constexpr std::size_t kKeyBytesBesideText = 2 + 38 + 36;

void check_key_text(std::string_view text, const std::string& path, std::string_view column) {
  const std::size_t encoded =
      text.size() + static_cast<std::size_t>(std::count(text.begin(), text.end(), '\0'));
  if (encoded + kKeyBytesBesideText > kMaxEncodedKeyBytes) {
    throw InputError(
        RejectCode::kTooLarge,
        fmt::format("{}: {} bytes{}, more than the {} bytes that Kudu's 16 KiB primary key "
                    "leaves for {} beside the guids",
                    path, text.size(),
                    encoded == text.size() ? std::string() : fmt::format(" ({} encoded)", encoded),
                    kMaxEncodedKeyBytes - kKeyBytesBesideText, column));
  }
}

}  // namespace

void parse_payload(od::value& value, PayloadFields& p, Nesting nesting,
                   bool write_attribute_values) {
  const Path root("message");
  const Nesting inside = nesting.inside();
  MemberNames names;
  for (auto field : get_object(value, root, nesting)) {
    const std::string_view key = member_name(field);
    names.add(key, root);
    od::value& v = member_value(field);
    const Path member(root, key);
    if (key == "type") {
      if (auto t = get_optional_string(v, member)) p.type = std::string(*t);
    } else if (key == "operationType") {
      if (auto t = get_optional_string(v, member)) p.operation = std::string(*t);
    } else if (key == "eventTime") {
      if (!take_null(v)) p.event_time_ms = get_int(v, member);
    } else if (key == "entity") {
      if (!take_null(v)) parse_entity(v, member, inside, write_attribute_values, p.entity);
    } else if (key == "relationship") {
      if (!take_null(v)) parse_relationship(v, member, inside, p.relationship);
    } else if (key == "traits") {
      // V1 payload: the entity's traits after the change, super-types included.
      if (take_null(v)) continue;
      p.has_traits = true;
      parse_classification_list(v, member, inside, true, p.traits);
    } else {
      validate_json(v, member, inside);
    }
  }
}

void payload_to_event(PayloadFields& p, const EventTimeFallbacks& fallbacks, Event& event,
                      std::size_t max_cell_bytes) {
  const std::string_view type = p.type ? std::string_view(*p.type) : std::string_view();
  bool v1 = false;
  if (!p.type || type == "ENTITY_NOTIFICATION_V1") {
    v1 = true;
  } else if (type != "ENTITY_NOTIFICATION_V2") {
    if (std::find(kHookTypes.begin(), kHookTypes.end(), type) != kHookTypes.end()) {
      throw InputError(RejectCode::kHookTopic,
                       fmt::format("message.type: {} is an ATLAS_HOOK message; this export is from "
                                   "the hook topic, export ATLAS_ENTITIES instead",
                                   type));
    }
    throw InputError(
        RejectCode::kUnknownType,
        fmt::format("message.type: unknown notification type \"{}\"", printable_excerpt(type, 60)));
  }
  event.legacy_v1 = v1;

  if (!p.operation) throw InputError(RejectCode::kMissingField, "message.operationType: missing");
  const std::optional<Operation> op =
      v1 ? parse_v1_operation(*p.operation) : parse_operation(*p.operation);
  if (!op) {
    throw InputError(RejectCode::kUnknownOperation,
                     fmt::format("message.operationType: unknown {} operation \"{}\"",
                                 v1 ? "V1" : "V2", printable_excerpt(*p.operation, 60)));
  }
  event.op = *op;

  // Event time: eventTime; V1 systemAttributes.modifiedTime; the envelope's creation time; the
  // Kafka record timestamp (kcat's "ts", kafka-console-consumer's CreateTime:), in that order.
  if (p.event_time_ms) {
    event.event_time_us = ms_to_us(*p.event_time_ms, "message.eventTime");
  } else if (p.entity.modified_time) {
    const auto us = parse_iso8601_micros(*p.entity.modified_time);
    if (!us) {
      throw InputError(RejectCode::kWrongType,
                       fmt::format("message.entity.systemAttributes.modifiedTime: \"{}\" is not an "
                                   "ISO-8601 time (yyyy-MM-ddTHH:mm:ss[.SSS] and Z or +hh:mm)",
                                   printable_excerpt(*p.entity.modified_time, 40)));
    }
    event.event_time_us = *us;
  } else if (fallbacks.msg_creation_time_ms) {
    event.event_time_us = ms_to_us(*fallbacks.msg_creation_time_ms, "msgCreationTime");
  } else if (fallbacks.kafka_timestamp_ms) {
    event.event_time_us = ms_to_us(*fallbacks.kafka_timestamp_ms, "the Kafka timestamp");
  } else {
    throw InputError(RejectCode::kMissingField,
                     v1 ? "no event time: a V1 message has no eventTime, and it has no "
                          "message.entity.systemAttributes.modifiedTime, msgCreationTime or Kafka "
                          "timestamp to use (export it with the record's timestamp: "
                          "kafka-console-consumer --property print.timestamp=true, or kcat -J)"
                        : "message.eventTime: missing, and no msgCreationTime or Kafka timestamp "
                          "to use");
  }

  if (is_relationship_op(event.op)) {
    RelationshipFields& r = p.relationship;
    if (!r.present) throw InputError(RejectCode::kMissingField, "message.relationship: missing");
    if (!r.end1 || !r.end1->guid || !r.end2 || !r.end2->guid) {
      throw InputError(RejectCode::kBadRelationship,
                       fmt::format("message.relationship: {} needs end1.guid and end2.guid to "
                                   "identify the edge",
                                   to_string(event.op)));
    }
    if (r.label.empty() && r.type_name.empty()) {
      throw InputError(RejectCode::kBadRelationship,
                       fmt::format("message.relationship: {} needs a label or typeName to name the "
                                   "edge",
                                   to_string(event.op)));
    }
    event.guid = r.guid.value_or(Guid{});
    event.type_name = std::move(r.type_name);
    event.relationship.guid = r.guid;
    event.relationship.type_name = event.type_name;
    event.relationship.label = std::move(r.label);
    event.relationship.end1 = RelationshipEnd{*r.end1->guid, std::move(r.end1->type_name)};
    event.relationship.end2 = RelationshipEnd{*r.end2->guid, std::move(r.end2->type_name)};
    event.relationship.status_deleted = r.status == "DELETED";
    const CellCheck cell{max_cell_bytes};
    cell.check(event.type_name, "message.relationship.typeName");
    cell.check(event.relationship.label, "message.relationship.label");
    check_key_text(event.relationship.edge_label(),
                   event.relationship.label.empty() ? "message.relationship.typeName"
                                                    : "message.relationship.label",
                   "elabel");
    cell.check(event.relationship.end1.type_name, "message.relationship.end1.typeName");
    cell.check(event.relationship.end2.type_name, "message.relationship.end2.typeName");
    return;
  }

  EntityFields& e = p.entity;
  if (!e.present) throw InputError(RejectCode::kMissingField, "message.entity: missing");
  std::optional<std::string>& guid_text =
      v1 ? (e.v1_id_guid ? e.v1_id_guid : e.guid_text) : e.guid_text;
  if (!guid_text) {
    throw InputError(RejectCode::kMissingField,
                     v1 ? "message.entity.id.id: missing" : "message.entity.guid: missing");
  }
  event.guid =
      get_guid(*guid_text, v1 && e.v1_id_guid ? "message.entity.id.id" : "message.entity.guid");
  std::optional<std::string>& type_name = e.type_name ? e.type_name : e.v1_id_type_name;
  if (!type_name || type_name->empty()) {
    // A V1 entity without its own typeName has it in its id: the field named is the one read.
    const bool in_id = !e.type_name && e.v1_id_type_name;
    throw InputError(RejectCode::kMissingField, !type_name ? "message.entity.typeName: missing"
                                                : in_id    ? "message.entity.id.typeName: empty"
                                                           : "message.entity.typeName: empty");
  }
  event.type_name = std::move(*type_name);
  event.header_deleted = e.status_deleted;

  AttributeSet& attrs = v1 && e.values.present ? e.values : e.attributes;
  event.qualified_name = std::move(attrs.qualified_name);
  event.name = std::move(attrs.name);
  event.attributes = std::move(attrs.others);

  const char* tag_list = "message.entity.classifications";
  if (!v1) {
    event.classifications = to_classifications(std::move(e.classifications), event.guid);
  } else if (p.has_traits) {
    tag_list = "message.traits";
    event.classifications = to_classifications(std::move(p.traits), event.guid);
  } else if (e.has_traits) {
    tag_list = "message.entity.traits";
    event.classifications = to_classifications(std::move(e.traits), event.guid);
  } else {
    tag_list = "message.entity.traitNames";
    for (auto& name : e.trait_names) {
      event.classifications.push_back(Classification{std::move(name), event.guid, "{}"});
    }
  }

  const CellCheck cell{max_cell_bytes};
  cell.check(event.type_name,
             v1 && !e.type_name ? "message.entity.id.typeName" : "message.entity.typeName");
  const char* attrs_path =
      v1 && e.values.present ? "message.entity.values" : "message.entity.attributes";
  if (event.qualified_name) cell.check(*event.qualified_name, attrs_path, "qualifiedName");
  if (event.name) cell.check(*event.name, attrs_path, "name");
  for (std::size_t i = 0; i < event.classifications.size(); ++i) {
    const Classification& c = event.classifications[i];
    cell.check(c.type_name, tag_list, i, "typeName");
    if (c.type_name.size() + kKeyBytesBesideText > kMaxEncodedKeyBytes / 2) {
      check_key_text(c.type_name, fmt::format("{}[{}].typeName", tag_list, i), "tag_name");
    }
    cell.check(c.attributes_json, tag_list, i, v1 ? "values" : "attributes");
  }
}

std::int64_t message_audit_seq(std::string_view message_json, std::string& scratch, bool minified) {
  if (minified) return sha256_prefix_i64(message_json);
  scratch.resize(message_json.size());
  std::size_t size = 0;
  if (simdjson::minify(message_json.data(), message_json.size(), scratch.data(), size) !=
      simdjson::SUCCESS) {
    throw InputError(RejectCode::kInvalidJson, "message: cannot be minified");
  }
  return sha256_prefix_i64(std::string_view(scratch.data(), size));
}

}  // namespace atlas2kudu
