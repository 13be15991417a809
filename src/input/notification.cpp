#include "input/notification.h"

#include <fmt/core.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <tuple>
#include <unordered_map>

#include "input/json_path.h"
#include "input/json_text.h"
#include "util/base64.h"
#include "util/digest.h"
#include "util/gzip.h"
#include "util/iso8601.h"

namespace atlas2kudu {

namespace od = simdjson::ondemand;

namespace {

constexpr std::size_t kPadding = simdjson::SIMDJSON_PADDING;

// Text that has to outlive the parser that produced it (unescaped strings live in the parser).
std::string copy(std::string_view s) {
  return std::string(s);
}

// A buffer with simdjson's padding after the content.
void assign_padded(std::string& buf, std::string_view content) {
  buf.reserve(content.size() + kPadding);
  buf.assign(content);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

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

struct ClassificationFields {
  std::string type_name;
  std::optional<Guid> entity_guid;
  std::string attributes_json = "{}";
};

struct AttributeSet {
  bool present = false;
  std::optional<std::string> qualified_name;
  std::optional<std::string> name;
  std::vector<Attribute> others;
};

struct EntityFields {
  bool present = false;
  std::optional<std::string> type_name;
  std::optional<std::string> guid_text;
  std::optional<std::string> v1_id_guid;
  std::optional<std::string> v1_id_type_name;
  AttributeSet attributes;  // V2 "attributes"
  AttributeSet values;      // V1 "values"
  bool has_classifications = false;
  std::vector<ClassificationFields> classifications;
  bool has_traits = false;
  std::vector<ClassificationFields> traits;  // V1 "traits" map
  std::vector<std::string> trait_names;      // V1 "traitNames"
  std::optional<std::string> modified_time;  // V1 systemAttributes.modifiedTime
};

struct EndFields {
  std::optional<Guid> guid;
  std::string type_name;
};

struct RelationshipFields {
  bool present = false;
  std::string type_name;
  std::optional<Guid> guid;
  std::string label;
  std::string status;
  std::optional<EndFields> end1, end2;
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

// What one envelope level holds. Views point into the buffer that was parsed.
struct Envelope {
  bool has_version = false;
  bool kcat = false;
  bool has_message = false;
  od::json_type message_type = od::json_type::null;
  std::string_view message_raw;  // the message object's text, when it is an object
  PayloadFields message;         // ... and its fields, parsed in the same pass
  std::string message_string;    // unescaped, when message is a string
  PayloadFields top;             // payload fields at the top level: a bare (legacy) payload
  bool gzip = false;
  std::int64_t split_idx = 1;
  std::int64_t split_count = 1;
  std::string msg_id;
  std::optional<std::int64_t> msg_creation_time;
  // kcat -J fields
  std::optional<std::string> topic;
  std::optional<std::int64_t> partition;
  std::optional<std::int64_t> offset;
  std::optional<std::int64_t> kafka_ts;
  bool has_payload = false;
  std::optional<std::string> payload;
};

void parse_attribute_object(od::value v, const Path& path, AttributeSet& out) {
  out.present = true;
  if (v.type() == od::json_type::null) return;
  for (auto field : get_object(v, path)) {
    std::string key = copy(field.unescaped_key());
    od::value value = field.value();
    if (value.type() == od::json_type::null) continue;  // null never sets a column
    if (key == "qualifiedName" || key == "name") {
      std::string text = copy(get_string(value, Path(path, key)));
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
      c.type_name = copy(get_string(value, Path(path, "typeName")));
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

EndFields parse_end(od::value v, const Path& path) {
  EndFields end;
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
        end.type_name = copy(*text);
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
          copy(get_optional_string(value, "message.relationship.typeName").value_or(""));
    } else if (key == "guid") {
      if (auto text = get_optional_string(value, "message.relationship.guid")) {
        rel.guid = get_guid(*text, "message.relationship.guid");
      }
    } else if (key == "label") {
      rel.label = copy(get_optional_string(value, "message.relationship.label").value_or(""));
    } else if (key == "status") {
      rel.status = copy(get_optional_string(value, "message.relationship.status").value_or(""));
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
      if (auto t = get_optional_string(value, "message.entity.typeName")) e.type_name = copy(*t);
    } else if (key == "guid") {
      if (auto t = get_optional_string(value, "message.entity.guid")) e.guid_text = copy(*t);
    } else if (key == "attributes") {
      parse_attribute_object(value, "message.entity.attributes", e.attributes);
    } else if (key == "values") {
      parse_attribute_object(value, "message.entity.values", e.values);
    } else if (key == "classifications") {
      if (value.type() == od::json_type::null) continue;
      e.has_classifications = true;
      std::size_t i = 0;
      const Path list("message.entity.classifications");
      for (auto item : get_array(value, list)) {
        e.classifications.push_back(parse_classification(item.value(), Path(list, i++), false));
      }
    } else if (key == "id") {
      // V1 Referenceable: {"jsonClass":..,"id":"<guid>","typeName":..,"state":..}
      if (value.type() == od::json_type::string) {
        e.v1_id_guid = copy(value.get_string());
        continue;
      }
      if (value.type() == od::json_type::null) continue;
      for (auto id_field : get_object(value, "message.entity.id")) {
        const std::string_view id_key = id_field.unescaped_key();
        if (id_key == "id") {
          if (auto t = get_optional_string(id_field.value(), "message.entity.id.id")) {
            e.v1_id_guid = copy(*t);
          }
        } else if (id_key == "typeName") {
          if (auto t = get_optional_string(id_field.value(), "message.entity.id.typeName")) {
            e.v1_id_type_name = copy(*t);
          }
        }
      }
    } else if (key == "traits") {
      if (value.type() == od::json_type::null) continue;
      e.has_traits = true;
      const Path map("message.entity.traits");
      for (auto trait : get_object(value, map)) {
        const std::string name = copy(trait.unescaped_key());
        e.traits.push_back(parse_classification(trait.value(), Path(map, name), true));
      }
    } else if (key == "traitNames") {
      if (value.type() == od::json_type::null) continue;
      std::size_t i = 0;
      const Path list("message.entity.traitNames");
      for (auto item : get_array(value, list)) {
        e.trait_names.push_back(copy(get_string(item.value(), Path(list, i++))));
      }
    } else if (key == "systemAttributes") {
      if (value.type() == od::json_type::null) continue;
      for (auto sys : get_object(value, "message.entity.systemAttributes")) {
        if (sys.unescaped_key().value() == "modifiedTime") {
          if (auto t = get_optional_string(sys.value(),
                                           "message.entity.systemAttributes.modifiedTime")) {
            e.modified_time = copy(*t);
          }
        }
      }
    }
  }
}

// Takes one member of a payload object; false if `key` is not a payload field.
bool parse_payload_field(std::string_view key, od::value value, PayloadFields& p) {
  if (key == "type") {
    if (auto t = get_optional_string(value, "message.type")) p.type = copy(*t);
  } else if (key == "operationType") {
    if (auto t = get_optional_string(value, "message.operationType")) p.operation = copy(*t);
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

void parse_payload(od::object message, PayloadFields& p) {
  for (auto field : message) parse_payload_field(field.unescaped_key(), field.value(), p);
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

struct NotificationDecoder::Impl {
  DecodeLimits limits;
  od::parser envelope_parser;
  std::string kcat_buffer;
  std::string gunzipped;
  std::string inflated_buffer;
  std::string minified;

  struct PendingSplit {
    std::int64_t count = 0;
    std::vector<std::optional<std::string>> chunks;
    std::size_t received = 0;
    bool gzip = false;
    SourcePosition first;
    std::size_t bytes = 0;
  };
  std::map<std::string, PendingSplit> pending;

  Envelope parse_envelope(std::string_view text, const char* what);
  std::optional<Event> decode_envelope_level(Envelope& env, std::string_view text,
                                             SourcePosition& pos, int depth);
  Event decode_payload(std::string_view message_raw, PayloadFields& p, const Envelope& env,
                       const SourcePosition& pos);
  std::string_view inflate_message(std::string_view base64, bool gzip);
};

Envelope NotificationDecoder::Impl::parse_envelope(std::string_view text, const char* what) {
  Envelope env;
  od::document doc = envelope_parser.iterate(text.data(), text.size(), text.size() + kPadding);
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
        parse_payload(value.get_object(), env.message);
        const char* after = text.data() + text.size();
        if (auto loc = doc.current_location(); !loc.error()) after = loc.value_unsafe();
        const char* end = after;
        while (end > begin && end[-1] != '}') --end;
        env.message_raw = std::string_view(begin, static_cast<std::size_t>(end - begin));
      } else if (env.message_type == od::json_type::string) {
        env.message_string = copy(value.get_string());
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
      if (auto id = get_optional_string(value, "msgId")) env.msg_id = copy(*id);
    } else if (key == "msgCreationTime") {
      if (value.type() != od::json_type::null) {
        env.msg_creation_time = get_int(value, "msgCreationTime");
      }
    } else if (key == "payload") {
      env.has_payload = true;
      if (auto p = get_optional_string(value, "payload")) env.payload = copy(*p);
    } else if (key == "topic") {
      if (auto t = get_optional_string(value, "topic")) env.topic = copy(*t);
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

std::string_view NotificationDecoder::Impl::inflate_message(std::string_view base64, bool gzip) {
  try {
    std::string decoded = base64_decode(base64);
    if (gzip) {
      gunzip(decoded, limits.max_inflated_bytes, gunzipped);
      assign_padded(inflated_buffer, gunzipped);
    } else {
      assign_padded(inflated_buffer, decoded);  // split without compression: Base64 only
    }
  } catch (const DecodeError& e) {
    throw InputError(
        e.kind() == DecodeError::Kind::kTooLarge ? RejectCode::kTooLarge : RejectCode::kBadEncoding,
        fmt::format("message: {}", e.what()));
  }
  return inflated_buffer;
}

std::optional<Event> NotificationDecoder::Impl::decode_envelope_level(Envelope& env,
                                                                      std::string_view text,
                                                                      SourcePosition& pos,
                                                                      int depth) {
  if (env.kcat) {
    if (depth > 0) {
      throw InputError(RejectCode::kWrongType, "kcat record nested inside a message");
    }
    SourcePosition::Kafka kafka;
    kafka.topic = env.topic.value_or("");
    kafka.partition = static_cast<std::int32_t>(env.partition.value_or(0));
    kafka.offset = env.offset.value_or(0);
    pos.kafka = std::move(kafka);
    if (!env.payload) {
      throw InputError(RejectCode::kMissingField, "payload: kcat record without a value (null)");
    }
    const std::optional<std::int64_t> ts = env.kafka_ts;
    // Nothing below refills kcat_buffer while the payload is decoded: only depth 0 gets here.
    assign_padded(kcat_buffer, trim(*env.payload));
    Envelope inner = parse_envelope(kcat_buffer, "payload");
    if (inner.kcat) throw InputError(RejectCode::kWrongType, "payload: nested kcat record");
    if (!inner.msg_creation_time && ts) inner.kafka_ts = ts;
    return decode_envelope_level(inner, kcat_buffer, pos, depth + 1);
  }

  if (!env.has_version && !env.has_message) {
    // A bare payload (legacy, no envelope): the whole document is the message.
    return decode_payload(trim(text), env.top, env, pos);
  }
  if (!env.has_message || env.message_type == od::json_type::null) {
    throw InputError(RejectCode::kMissingField, "message: missing");
  }

  if (env.split_count > 1) {
    if (depth > 1)
      throw InputError(RejectCode::kBadSplit, "split message nested in a split message");
    if (env.msg_id.empty()) {
      throw InputError(RejectCode::kBadSplit, "msgId: a split message chunk needs a msgId");
    }
    if (env.message_type != od::json_type::string) {
      throw InputError(RejectCode::kBadSplit, "message: a split message chunk must be a string");
    }
    if (env.split_count > 100000) {
      throw InputError(
          RejectCode::kBadSplit,
          fmt::format("msgSplitCount: {} chunks is more than any real message", env.split_count));
    }
    if (env.split_idx < 0 || env.split_idx >= env.split_count) {
      throw InputError(RejectCode::kBadSplit,
                       fmt::format("msgSplitIdx: {} is outside 0..{} (msgId {})", env.split_idx,
                                   env.split_count - 1, printable_excerpt(env.msg_id, 80)));
    }
    auto [it, inserted] = pending.try_emplace(env.msg_id);
    PendingSplit& split = it->second;
    if (inserted) {
      split.count = env.split_count;
      split.chunks.resize(static_cast<std::size_t>(env.split_count));
      split.gzip = env.gzip;
      split.first = pos;
    } else if (split.count != env.split_count) {
      throw InputError(
          RejectCode::kBadSplit,
          fmt::format("msgSplitCount: {} differs from {} in an earlier chunk of msgId {}",
                      env.split_count, split.count, printable_excerpt(env.msg_id, 80)));
    }
    auto& slot = split.chunks[static_cast<std::size_t>(env.split_idx)];
    if (slot) {
      if (*slot != env.message_string) {
        throw InputError(
            RejectCode::kBadSplit,
            fmt::format("msgSplitIdx: chunk {} of msgId {} arrived twice with different "
                        "content",
                        env.split_idx, printable_excerpt(env.msg_id, 80)));
      }
      return std::nullopt;  // a redelivered chunk: already held
    }
    if (std::tie(pos.source_index, pos.record) <
        std::tie(split.first.source_index, split.first.record)) {
      split.first = pos;
    }
    split.gzip = split.gzip || env.gzip;
    split.bytes += env.message_string.size();
    slot = std::move(env.message_string);
    if (++split.received < split.chunks.size()) return std::nullopt;

    std::string joined;
    joined.reserve(split.bytes);
    for (auto& chunk : split.chunks) joined += *chunk;
    const bool gzip = split.gzip;
    pos.first_record = split.first.record;
    pending.erase(it);
    // inflate_message's buffer is padded, and deeper levels refuse to inflate again (depth
    // checks above), so the inner envelope is decoded in place.
    const std::string_view inner_text = inflate_message(joined, gzip);
    Envelope inner = parse_envelope(inner_text, "message (reassembled split message)");
    if (inner.kcat || inner.split_count > 1 || inner.message_type == od::json_type::string) {
      throw InputError(RejectCode::kBadSplit,
                       "message: a reassembled split message must hold a plain envelope");
    }
    return decode_envelope_level(inner, inner_text, pos, depth + 2);
  }

  if (env.message_type == od::json_type::string) {
    if (!env.gzip) {
      throw InputError(RejectCode::kWrongType,
                       "message: a string message needs msgCompressionKind GZIP");
    }
    if (depth > 1)
      throw InputError(RejectCode::kBadEncoding, "compressed message inside a compressed message");
    const std::string_view inner_text = inflate_message(env.message_string, true);
    Envelope inner = parse_envelope(inner_text, "message (decompressed)");
    if (inner.kcat || inner.split_count > 1 || inner.message_type == od::json_type::string) {
      throw InputError(RejectCode::kBadEncoding,
                       "message: a decompressed message must hold a plain envelope");
    }
    return decode_envelope_level(inner, inner_text, pos, depth + 2);
  }
  return decode_payload(env.message_raw, env.message, env, pos);
}

Event NotificationDecoder::Impl::decode_payload(std::string_view message_raw, PayloadFields& p,
                                                const Envelope& env, const SourcePosition& pos) {
  Event event;
  event.pos = pos;

  // The audit seq hashes the message exactly as sent, minus insignificant whitespace.
  minified.resize(message_raw.size());
  std::size_t minified_size = 0;
  if (simdjson::minify(message_raw.data(), message_raw.size(), minified.data(), minified_size) !=
      simdjson::SUCCESS) {
    throw InputError(RejectCode::kInvalidJson, "message: cannot be minified");
  }
  event.audit_seq = sha256_prefix_i64(std::string_view(minified.data(), minified_size));

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
  } else if (env.msg_creation_time) {
    event.event_time_us = ms_to_us(*env.msg_creation_time, "msgCreationTime");
  } else if (env.kafka_ts) {
    event.event_time_us = ms_to_us(*env.kafka_ts, "ts");
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
    return event;
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
  return event;
}

NotificationDecoder::NotificationDecoder(DecodeLimits limits) : impl_(std::make_unique<Impl>()) {
  impl_->limits = limits;
}

NotificationDecoder::~NotificationDecoder() = default;

std::optional<Event> NotificationDecoder::decode(std::string_view text, const SourcePosition& pos) {
  SourcePosition where = pos;
  where.first_record = pos.record;
  try {
    Envelope env = impl_->parse_envelope(text, "record");
    const bool chunk = !env.kcat && env.split_count > 1;
    auto result = impl_->decode_envelope_level(env, text, where, 0);
    if (chunk) ++split_chunks_;
    return result;
  } catch (const simdjson::simdjson_error& e) {
    const simdjson::error_code code = e.error();
    if (code == simdjson::UTF8_ERROR) {
      throw InputError(RejectCode::kInvalidJson, "invalid UTF-8 in JSON text");
    }
    throw InputError(RejectCode::kInvalidJson,
                     fmt::format("invalid JSON: {}", simdjson::error_message(code)));
  }
}

std::optional<SourcePosition> NotificationDecoder::earliest_pending() const {
  std::optional<SourcePosition> earliest;
  for (const auto& [id, split] : impl_->pending) {
    const auto& f = split.first;
    if (!earliest ||
        std::tie(f.source_index, f.record) < std::tie(earliest->source_index, earliest->record)) {
      earliest = f;
    }
  }
  return earliest;
}

std::vector<IncompleteSplit> NotificationDecoder::take_incomplete() {
  std::vector<IncompleteSplit> out;
  for (auto& [id, split] : impl_->pending) {
    out.push_back(IncompleteSplit{id, split.received, split.chunks.size(), split.first});
  }
  std::sort(out.begin(), out.end(), [](const IncompleteSplit& a, const IncompleteSplit& b) {
    return a.first.record < b.first.record;
  });
  impl_->pending.clear();
  return out;
}

}  // namespace atlas2kudu
