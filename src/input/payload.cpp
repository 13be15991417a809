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

void parse_attribute_object(od::value v, const Path& path, AttributeSet& out) {
  out.present = true;
  if (v.type() == od::json_type::null) return;
  for (auto field : get_object(v, path)) {
    std::string key(field.unescaped_key().value());
    od::value value = field.value();
    if (value.type() == od::json_type::null) continue;  // null never sets a column
    if (key == "qualifiedName" || key == "name") {
      std::string text(get_string(value, Path(path, key)));
      (key == "name" ? out.name : out.qualified_name) = std::move(text);
      continue;
    }
    std::string json;
    write_canonical_json(value, json);
    // A repeated key: the later value wins, as in Atlas's own (Jackson) reading.
    auto it = std::find_if(out.others.begin(), out.others.end(),
                           [&](const Attribute& a) { return a.name == key; });
    if (it != out.others.end()) {
      it->json = std::move(json);
    } else {
      out.others.push_back(Attribute{std::move(key), std::move(json)});
    }
  }
}

ClassificationFields parse_classification(od::value v, const Path& path, bool v1_struct) {
  ClassificationFields c;
  bool has_type = false;
  for (auto field : get_object(v, path)) {
    const std::string_view key = field.unescaped_key();
    od::value value = field.value();
    if (key == "typeName") {
      c.type_name = std::string(get_string(value, Path(path, "typeName")));
      has_type = true;
    } else if (key == "entityGuid" && !v1_struct) {
      const Path guid_path(path, "entityGuid");
      if (auto text = get_optional_string(value, guid_path)) {
        c.entity_guid = get_guid(*text, guid_path);
      }
    } else if (key == (v1_struct ? "values" : "attributes")) {
      if (value.type() == od::json_type::null) continue;
      get_object(value, Path(path, key));  // type check only
      c.attributes_json.clear();
      write_canonical_json(value, c.attributes_json);
    }
  }
  if (!has_type || c.type_name.empty()) {
    throw InputError(RejectCode::kMissingField, fmt::format("{}.typeName: missing", path.str()));
  }
  return c;
}

RelationshipEndFields parse_end(od::value v, const Path& path) {
  RelationshipEndFields end;
  for (auto field : get_object(v, path)) {
    const std::string_view key = field.unescaped_key();
    od::value value = field.value();
    if (key == "guid") {
      const Path guid_path(path, "guid");
      if (auto text = get_optional_string(value, guid_path)) {
        end.guid = get_guid(*text, guid_path);
      }
    } else if (key == "typeName") {
      if (auto text = get_optional_string(value, Path(path, "typeName"))) {
        end.type_name = std::string(*text);
      }
    }
  }
  return end;
}

void parse_relationship(od::value v, RelationshipFields& rel) {
  rel.present = true;
  for (auto field : get_object(v, "message.relationship")) {
    const std::string_view key = field.unescaped_key();
    od::value value = field.value();
    if (key == "typeName") {
      rel.type_name =
          std::string(get_optional_string(value, "message.relationship.typeName").value_or(""));
    } else if (key == "guid") {
      if (auto text = get_optional_string(value, "message.relationship.guid")) {
        rel.guid = get_guid(*text, "message.relationship.guid");
      }
    } else if (key == "label") {
      rel.label =
          std::string(get_optional_string(value, "message.relationship.label").value_or(""));
    } else if (key == "status") {
      rel.status =
          std::string(get_optional_string(value, "message.relationship.status").value_or(""));
    } else if (key == "end1") {
      if (value.type() != od::json_type::null)
        rel.end1 = parse_end(value, "message.relationship.end1");
    } else if (key == "end2") {
      if (value.type() != od::json_type::null)
        rel.end2 = parse_end(value, "message.relationship.end2");
    }
  }
}

void parse_entity(od::value v, EntityFields& e) {
  e.present = true;
  for (auto field : get_object(v, "message.entity")) {
    const std::string_view key = field.unescaped_key();
    od::value value = field.value();
    if (key == "typeName") {
      if (auto t = get_optional_string(value, "message.entity.typeName"))
        e.type_name = std::string(*t);
    } else if (key == "guid") {
      if (auto t = get_optional_string(value, "message.entity.guid")) e.guid_text = std::string(*t);
    } else if (key == "attributes") {
      parse_attribute_object(value, "message.entity.attributes", e.attributes);
    } else if (key == "values") {
      parse_attribute_object(value, "message.entity.values", e.values);
    } else if (key == "classifications") {
      if (value.type() == od::json_type::null) continue;
      std::size_t i = 0;
      const Path list("message.entity.classifications");
      for (auto item : get_array(value, list)) {
        e.classifications.push_back(parse_classification(item.value(), Path(list, i++), false));
      }
    } else if (key == "id") {
      // V1 Referenceable: {"jsonClass":..,"id":"<guid>","typeName":..,"state":..}
      if (value.type() == od::json_type::string) {
        e.v1_id_guid = std::string(value.get_string().value());
        continue;
      }
      if (value.type() == od::json_type::null) continue;
      for (auto id_field : get_object(value, "message.entity.id")) {
        const std::string_view id_key = id_field.unescaped_key();
        if (id_key == "id") {
          if (auto t = get_optional_string(id_field.value(), "message.entity.id.id")) {
            e.v1_id_guid = std::string(*t);
          }
        } else if (id_key == "typeName") {
          if (auto t = get_optional_string(id_field.value(), "message.entity.id.typeName")) {
            e.v1_id_type_name = std::string(*t);
          }
        }
      }
    } else if (key == "traits") {
      if (value.type() == od::json_type::null) continue;
      e.has_traits = true;
      const Path map("message.entity.traits");
      for (auto trait : get_object(value, map)) {
        const std::string name(trait.unescaped_key().value());
        e.traits.push_back(parse_classification(trait.value(), Path(map, name), true));
      }
    } else if (key == "traitNames") {
      if (value.type() == od::json_type::null) continue;
      std::size_t i = 0;
      const Path list("message.entity.traitNames");
      for (auto item : get_array(value, list)) {
        e.trait_names.push_back(std::string(get_string(item.value(), Path(list, i++))));
      }
    } else if (key == "systemAttributes") {
      if (value.type() == od::json_type::null) continue;
      for (auto sys : get_object(value, "message.entity.systemAttributes")) {
        if (sys.unescaped_key().value() == "modifiedTime") {
          if (auto t = get_optional_string(sys.value(),
                                           "message.entity.systemAttributes.modifiedTime")) {
            e.modified_time = std::string(*t);
          }
        }
      }
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

}  // namespace

bool parse_payload_field(std::string_view key, od::value value, PayloadFields& p) {
  if (key == "type") {
    if (auto t = get_optional_string(value, "message.type")) p.type = std::string(*t);
  } else if (key == "operationType") {
    if (auto t = get_optional_string(value, "message.operationType")) p.operation = std::string(*t);
  } else if (key == "eventTime") {
    if (value.type() != od::json_type::null) p.event_time_ms = get_int(value, "message.eventTime");
  } else if (key == "entity") {
    if (value.type() != od::json_type::null) parse_entity(value, p.entity);
  } else if (key == "relationship") {
    if (value.type() != od::json_type::null) parse_relationship(value, p.relationship);
  } else if (key == "traits") {
    // V1 payload: the entity's traits after the change, super-types included.
    if (value.type() == od::json_type::null) return true;
    p.has_traits = true;
    std::size_t i = 0;
    const Path list("message.traits");
    for (auto item : get_array(value, list)) {
      p.traits.push_back(parse_classification(item.value(), Path(list, i++), true));
    }
  } else {
    return false;
  }
  return true;
}

void payload_to_event(PayloadFields& p, const EventTimeFallbacks& fallbacks, Event& event) {
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
  // Kafka record timestamp (kcat), in that order.
  if (p.event_time_ms) {
    event.event_time_us = ms_to_us(*p.event_time_ms, "message.eventTime");
  } else if (p.entity.modified_time) {
    const auto us = parse_iso8601_micros(*p.entity.modified_time);
    if (!us) {
      throw InputError(RejectCode::kWrongType,
                       fmt::format("message.entity.systemAttributes.modifiedTime: \"{}\" is not an "
                                   "ISO-8601 UTC time",
                                   printable_excerpt(*p.entity.modified_time, 40)));
    }
    event.event_time_us = *us;
  } else if (fallbacks.msg_creation_time_ms) {
    event.event_time_us = ms_to_us(*fallbacks.msg_creation_time_ms, "msgCreationTime");
  } else if (fallbacks.kafka_timestamp_ms) {
    event.event_time_us = ms_to_us(*fallbacks.kafka_timestamp_ms, "ts");
  } else {
    throw InputError(
        RejectCode::kMissingField,
        "message.eventTime: missing, and no msgCreationTime or Kafka timestamp to use");
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
    throw InputError(RejectCode::kMissingField, "message.entity.typeName: missing");
  }
  event.type_name = std::move(*type_name);

  AttributeSet& attrs = v1 && e.values.present ? e.values : e.attributes;
  event.qualified_name = std::move(attrs.qualified_name);
  event.name = std::move(attrs.name);
  event.attributes = std::move(attrs.others);

  if (!v1) {
    event.classifications = to_classifications(std::move(e.classifications), event.guid);
  } else if (p.has_traits) {
    event.classifications = to_classifications(std::move(p.traits), event.guid);
  } else if (e.has_traits) {
    event.classifications = to_classifications(std::move(e.traits), event.guid);
  } else {
    for (auto& name : e.trait_names) {
      event.classifications.push_back(Classification{std::move(name), event.guid, "{}"});
    }
  }
}

std::int64_t message_audit_seq(std::string_view message_json, std::string& scratch) {
  scratch.resize(message_json.size());
  std::size_t size = 0;
  if (simdjson::minify(message_json.data(), message_json.size(), scratch.data(), size) !=
      simdjson::SUCCESS) {
    throw InputError(RejectCode::kInvalidJson, "message: cannot be minified");
  }
  return sha256_prefix_i64(std::string_view(scratch.data(), size));
}

}  // namespace atlas2kudu
