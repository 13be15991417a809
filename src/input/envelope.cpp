#include "input/envelope.h"

#include <fmt/core.h>

#include <cstdint>
#include <limits>

#include "input/input_error.h"
#include "input/json_path.h"
#include "input/json_text.h"

namespace atlas2kudu {

namespace od = simdjson::ondemand;

namespace {

// The first error of members that count for one shape only; raised once the shape is known.
struct DeferredError {
  std::optional<InputError> error;
  void keep(const InputError& e) {
    if (!error) error = e;
  }
  void raise() const {
    if (error) throw *error;
  }
};

// Reads a member with `read`, a typed getter that either consumes the value or throws before
// touching it. A type error is kept in `deferred` and the value validated instead.
// `read` acts on what it reads itself, rather than leaving it in a variable outside for the caller
// to look at afterwards: when the getter throws, GCC 12 may have left such a variable
// uninitialised (it builds a getter's result returned in memory, such as an
// optional<string_view>, in the variable itself, and drops the variable's initialisation as a
// dead store; `{"msgCompressionKind":1}` crashed that way). Results returned in registers (an
// integer) assigned to a member are safe.
template <typename Read>
void read_or_defer(od::value& value, const Path& path, Nesting nesting, DeferredError& deferred,
                   Read&& read) {
  try {
    read(value);
  } catch (const InputError& e) {
    deferred.keep(e);
    validate_json(value, path, nesting);
  }
}

void check_range(std::int64_t v, std::int64_t low, std::int64_t high, const char* name,
                 DeferredError& deferred) {
  if (v < low || v > high) {
    deferred.keep(InputError(RejectCode::kWrongType,
                             fmt::format("{}: {} is out of range ({}..{})", name, v, low, high)));
  }
}

// Atlas compares a message's version with its own, 1.0.0, number by number (MessageVersion,
// trailing zeros ignored): a newer one is refused (IncompatibleVersionException), an older one
// read. Whether `text` is newer; nullopt when it is no dotted whole numbers ("banana", "1..0").
//   newer_than_atlas_version("1.0.0") == false, ("0.9") == false, ("1.0.1") == true
std::optional<bool> newer_than_atlas_version(std::string_view text) {
  int order = 0;  // of the numbers read so far against 1.0.0: -1 older, 1 newer
  for (std::size_t from = 0, index = 0;; ++index) {
    const std::size_t dot = text.find('.', from);
    const std::string_view part =
        text.substr(from, dot == std::string_view::npos ? std::string_view::npos : dot - from);
    if (part.empty() || part.size() > 9 ||
        part.find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
    unsigned number = 0;
    for (const char c : part) number = number * 10 + static_cast<unsigned>(c - '0');
    const unsigned atlas = index == 0 ? 1 : 0;
    if (order == 0 && number != atlas) order = number > atlas ? 1 : -1;
    if (dot == std::string_view::npos) break;
    from = dot + 1;
  }
  return order > 0;
}

// The envelope's version, {"version":"1.0.0","versionParts":[1]} (Atlas 0.8: without
// versionParts). One of another type, or a version newer than Atlas's, is kept in `deferred`;
// an object without a version string (or with null) is read as Atlas's own.
void read_version(od::value& value, const Path& path, Nesting nesting, DeferredError& deferred) {
  const od::json_type type = value.type();
  if (type != od::json_type::object) {
    deferred.keep(
        InputError(RejectCode::kWrongType, fmt::format("version: expected an object such as "
                                                       "{{\"version\":\"1.0.0\"}}, got {}",
                                                       json_type_name(type))));
    validate_json(value, path, nesting);
    return;
  }
  check_nesting(path, nesting);
  MemberNames names;
  for (auto field : value.get_object()) {
    const std::string_view key = member_name(field);
    names.add(key, path);
    od::value& member = member_value(field);
    const Path at(path, key);
    const od::json_type member_type = member.type();
    if (key != "version" || member_type != od::json_type::string) {
      if (key == "version" && member_type != od::json_type::null) {
        deferred.keep(InputError(RejectCode::kWrongType,
                                 fmt::format("version.version: expected a string such as "
                                             "\"1.0.0\", got {}",
                                             json_type_name(member_type))));
      }
      validate_json(member, at, nesting.inside());
      continue;
    }
    const std::string_view text = get_string(member, at);
    const std::optional<bool> newer = newer_than_atlas_version(text);
    if (newer && !*newer) continue;
    deferred.keep(InputError(
        RejectCode::kUnsupportedVersion,
        fmt::format("version.version: \"{}\" {}", printable_excerpt(text, 40),
                    newer ? "is newer than 1.0.0, the notification version Atlas writes and "
                            "atlas2kudu reads (Atlas's own consumer refuses it too)"
                          : "is no version (whole numbers and dots, such as 1.0.0)")));
  }
}

// Throws simdjson_error unless `doc`, of `type` (no object), is one whole JSON value;
// `whole_text` is its text without the whitespace around it.
void require_one_value(od::document& doc, od::json_type type, std::string_view whole_text,
                       const Path& path, Nesting nesting) {
  const char first = whole_text.empty() ? '\0' : whole_text.front();
  switch (type) {
    case od::json_type::array: {
      od::value items = doc.get_value();
      validate_json(items, path, nesting);
      break;
    }
    case od::json_type::string:
      (void)doc.get_string().value();
      break;
    case od::json_type::number:
      // A number simdjson cannot hold (past 64 bits) is JSON all the same: the grammar decides,
      // as for numbers inside a record (json_path.cpp).
      if (const auto n = doc.get_number(); n.error()) {
        if (is_json_number(whole_text)) return;
        throw simdjson::simdjson_error(n.error());
      }
      break;
    case od::json_type::boolean:
      // "trash" is INCORRECT_TYPE to get_bool(): said as the atom it is not.
      if (doc.get_bool().error()) {
        throw simdjson::simdjson_error(first == 't' ? simdjson::T_ATOM_ERROR
                                                    : simdjson::F_ATOM_ERROR);
      }
      break;
    case od::json_type::null:
      if (!doc.is_null().value()) throw simdjson::simdjson_error(simdjson::N_ATOM_ERROR);
      break;
    case od::json_type::object:
      break;
  }
  // Root scalars check what follows them themselves; an array's end is checked here.
  if (!doc.current_location().error()) throw simdjson::simdjson_error(simdjson::TRAILING_CONTENT);
}

}  // namespace

SourcePosition::Kafka Envelope::kafka() const {
  SourcePosition::Kafka k;
  k.topic = topic.value_or("");
  k.partition = static_cast<std::int32_t>(partition.value_or(0));
  k.offset = offset.value_or(0);
  return k;
}

Envelope parse_envelope(od::parser& parser, std::string_view text, const char* what,
                        std::uint32_t max_depth, bool write_attribute_values, std::size_t skipped) {
  Envelope env;
  od::document doc =
      parser.iterate(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING);
  const od::json_type top = doc.type();
  if (top != od::json_type::object) {
    // type() looks at the first byte only: "trash" would be "a boolean". Only text that is one
    // whole JSON value is of the wrong type; the rest is no JSON (simdjson_error: the caller's
    // "invalid JSON").
    require_one_value(doc, top, trim_json_space(text), Path(what), Nesting{1, max_depth});
    throw InputError(RejectCode::kWrongType,
                     fmt::format("{}: expected a JSON object, got {}", what, json_type_name(top)));
  }
  const Path root(what);
  const Nesting inside{1, max_depth};
  MemberNames names;
  DeferredError envelope_error;  // envelope members: count unless the level is a kcat record
  DeferredError kcat_error;      // kcat members: count only in a kcat record
  DeferredError payload_error;   // its "payload": raised by the decoder (Envelope::payload_error)
  for (auto field : doc.get_object()) {
    const std::string_view key = member_name(field);
    names.add(key, root);
    od::value& value = member_value(field);
    const Path at(root, key);
    if (key == "version") {
      env.has_version = true;
      read_version(value, at, inside, envelope_error);
    } else if (key == "message") {
      env.has_message = true;
      env.message_type = value.type();
      if (env.message_type == od::json_type::object) {
        // Parse the payload in this same pass, and find its text for the audit seq: it starts at
        // the '{' and ends at the last '}' before the token the iterator stops on afterwards.
        const char* begin = value.raw_json_token().data();
        parse_payload(value, env.message, inside, write_attribute_values);
        const char* after = text.data() + text.size();
        if (auto loc = doc.current_location(); !loc.error()) after = loc.value_unsafe();
        const char* end = after;
        while (end > begin && end[-1] != '}') --end;
        env.message_raw = std::string_view(begin, static_cast<std::size_t>(end - begin));
      } else if (env.message_type == od::json_type::string) {
        env.message_string = std::string(get_string(value, "message"));
      } else if (!take_null(value)) {
        // "tru" or "12x" is no JSON value at all: invalid JSON, as in any other member.
        validate_json(value, at, inside);
        wrong_type("message", "an object or a string", env.message_type);
      }
    } else if (key == "msgCompressionKind") {
      // The kind is looked at inside the reader, never after it (read_or_defer).
      read_or_defer(value, at, inside, envelope_error, [&](od::value& v) {
        const std::optional<std::string_view> kind = get_optional_string(v, "msgCompressionKind");
        if (kind && *kind == "GZIP") {
          env.gzip = true;
        } else if (kind && *kind != "NONE") {
          envelope_error.keep(InputError(RejectCode::kBadEncoding,
                                         fmt::format("msgCompressionKind: unknown kind \"{}\"",
                                                     printable_excerpt(*kind, 40))));
        }
      });
    } else if (key == "msgSplitIdx") {
      read_or_defer(value, at, inside, envelope_error,
                    [&](od::value& v) { env.split_idx = get_int(v, "msgSplitIdx"); });
    } else if (key == "msgSplitCount") {
      read_or_defer(value, at, inside, envelope_error,
                    [&](od::value& v) { env.split_count = get_int(v, "msgSplitCount"); });
    } else if (key == "msgId") {
      read_or_defer(value, at, inside, envelope_error, [&](od::value& v) {
        if (auto id = get_optional_string(v, "msgId")) env.msg_id = std::string(*id);
      });
    } else if (key == "msgCreationTime") {
      read_or_defer(value, at, inside, envelope_error, [&](od::value& v) {
        if (!take_null(v)) env.msg_creation_time = get_int(v, "msgCreationTime");
      });
    } else if (key == "payload") {
      env.has_payload = true;
      read_or_defer(value, at, inside, payload_error, [&](od::value& v) {
        if (auto p = get_optional_string(v, "payload")) env.payload = std::string(*p);
      });
    } else if (key == "topic") {
      read_or_defer(value, at, inside, kcat_error, [&](od::value& v) {
        if (auto t = get_optional_string(v, "topic")) env.topic = std::string(*t);
      });
    } else if (key == "partition") {
      read_or_defer(value, at, inside, kcat_error,
                    [&](od::value& v) { env.partition = get_int(v, "partition"); });
      // A Kafka partition is an int32, and never negative.
      if (env.partition) {
        check_range(*env.partition, 0, std::numeric_limits<std::int32_t>::max(), "partition",
                    kcat_error);
      }
    } else if (key == "offset") {
      read_or_defer(value, at, inside, kcat_error,
                    [&](od::value& v) { env.offset = get_int(v, "offset"); });
      // An int64, never negative; the next offset (offset + 1) must be one too.
      if (env.offset) {
        check_range(*env.offset, 0, std::numeric_limits<std::int64_t>::max() - 1, "offset",
                    kcat_error);
      }
    } else if (key == "ts") {
      // kcat writes the timestamp as a number. It is only the event time of last resort, so one
      // that is no int64, or no number, is left out, as a console CreateTime: that is no time is.
      if (value.type() != od::json_type::number) {
        validate_json(value, at, inside);
      } else {
        env.kafka_ts = int64_if_fits(value);
      }
    } else {
      env.has_value = env.has_value || key == "value";
      validate_json(value, at, inside);
    }
  }
  if (auto loc = doc.current_location(); !loc.error()) {
    const auto after = static_cast<std::size_t>(loc.value_unsafe() - text.data());
    // On-Demand may stop reading an object early at some malformed JSON (a ':' where a ',' was
    // due): a syntax error before that point is reported where it is (the decoder locates it).
    if (const auto bad = find_json_syntax_error(text); bad && bad->at < after) {
      throw simdjson::simdjson_error(simdjson::TAPE_ERROR);
    }
    throw InputError(
        RejectCode::kInvalidJson,
        fmt::format("{}: data after the JSON object, at byte {}", what, skipped + after));
  }
  // A record with kcat's topic, partition and offset but no payload member is a kcat record too:
  // rejected for its missing payload at its Kafka position, not read as a payload that lacks
  // every member of a notification.
  const bool kcat_without_payload = !env.has_payload && env.topic && env.partition && env.offset;
  env.kcat = (env.has_payload || kcat_without_payload) && !env.has_version && !env.has_message;
  if (env.kcat) {
    kcat_error.raise();
    env.payload_error = payload_error.error;
    if (kcat_without_payload) {
      env.payload_error = InputError(
          RejectCode::kMissingField,
          env.has_value ? "payload: missing (a kcat -J record has its message in \"payload\"; "
                          "this one's \"value\", as rpk topic consume prints it, is not read: "
                          "export with kcat -J, or with rpk topic consume -f '%v\\n')"
                        : "payload: missing (a kcat record without its value's member)");
    }
    return env;
  }
  if (env.has_version || env.has_message) {
    envelope_error.raise();
    return env;
  }
  // A bare payload: the whole object is the message. Read it again, as a payload.
  env = Envelope{};
  doc.rewind();
  od::value payload = doc.get_value();
  parse_payload(payload, env.top, Nesting{0, max_depth}, write_attribute_values);
  return env;
}

}  // namespace atlas2kudu
