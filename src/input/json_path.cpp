#include "input/json_path.h"

#include <fmt/core.h>

#include <cstdint>

#include "input/json_text.h"
#include "util/json_writer.h"

namespace atlas2kudu {

namespace od = simdjson::ondemand;

void Path::append_full(std::string& out) const {
  if (parent_) parent_->append_full(out);
  if (index_ != kNoIndex) {
    fmt::format_to(std::back_inserter(out), "[{}]", index_);
    return;
  }
  if (parent_) out += '.';
  out += name_;
}

std::string Path::str() const {
  constexpr std::size_t kHead = 96, kTail = 64;
  std::string out;
  append_full(out);
  if (out.size() > kHead + kTail + 32) {
    // Cut at character boundaries: never inside a UTF-8 sequence.
    const auto continuation = [&](std::size_t i) { return (out[i] & 0xC0) == 0x80; };
    std::size_t head = kHead, tail = out.size() - kTail;
    while (head > 0 && continuation(head)) --head;
    while (tail < out.size() && continuation(tail)) ++tail;
    out = fmt::format("{}...({} bytes)...{}", out.substr(0, head), tail - head, out.substr(tail));
  }
  return out;
}

void nesting_too_deep(const Path& path, Nesting nesting) {
  throw InputError(
      RejectCode::kTooLarge,
      fmt::format("{}: nested deeper than {} levels (--max-json-depth)", path.str(), nesting.max));
}

void MemberNames::repeated(std::string_view key, const Path& object) {
  throw InputError(
      RejectCode::kDuplicateKey,
      fmt::format("{}: member \"{}\" appears twice", object.str(), printable_excerpt(key, 80)));
}

void MemberNames::add_past_scan(std::string_view key, const Path& object) {
  if (!rest_) rest_ = std::make_unique<std::unordered_set<std::string_view, KeyedStringHash>>();
  if (!rest_->insert(key).second) repeated(key, object);
}

std::string_view json_type_name(od::json_type type) {
  switch (type) {
    case od::json_type::array:
      return "an array";
    case od::json_type::object:
      return "an object";
    case od::json_type::number:
      return "a number";
    case od::json_type::string:
      return "a string";
    case od::json_type::boolean:
      return "a boolean";
    case od::json_type::null:
      return "null";
  }
  return "an unknown value";
}

void wrong_type(const Path& path, std::string_view expected, od::json_type got) {
  throw InputError(RejectCode::kWrongType, fmt::format("{}: expected {}, got {}", path.str(),
                                                       expected, json_type_name(got)));
}

std::optional<std::string_view> get_optional_string(od::value& value, const Path& path) {
  if (take_null(value)) return std::nullopt;
  return get_string(value, path);
}

std::optional<std::int64_t> int64_if_fits(od::value& number) {
  std::int64_t out = 0;
  if (number.get_int64().get(out) == simdjson::SUCCESS) return out;
  if (!is_json_number(trim_json_token(number.raw_json_token()))) {
    throw simdjson::simdjson_error(simdjson::NUMBER_ERROR);
  }
  return std::nullopt;
}

std::int64_t get_int(od::value& value, const Path& path) {
  const od::json_type type = value.type();
  if (type != od::json_type::number) wrong_type(path, "an integer", type);
  if (const std::optional<std::int64_t> out = int64_if_fits(value)) return *out;
  throw InputError(RejectCode::kWrongType,
                   fmt::format("{}: expected a 64-bit integer, got {}", path.str(),
                               printable_excerpt(trim_json_token(value.raw_json_token()), 60)));
}

od::object get_object(od::value& value, const Path& path, Nesting nesting) {
  const od::json_type type = value.type();
  if (type != od::json_type::object) wrong_type(path, "an object", type);
  check_nesting(path, nesting);
  return value.get_object();
}

od::array get_array(od::value& value, const Path& path, Nesting nesting) {
  const od::json_type type = value.type();
  if (type != od::json_type::array) wrong_type(path, "an array", type);
  check_nesting(path, nesting);
  return value.get_array();
}

Guid get_guid(std::string_view text, const Path& path) {
  if (auto guid = Guid::parse(text)) return *guid;
  throw InputError(RejectCode::kBadGuid, fmt::format("{}: \"{}\" is not a UUID", path.str(),
                                                     printable_excerpt(text, 60)));
}

namespace {

// The one walk behind validate_json (out == nullptr) and write_canonical_json. Recursion is
// bounded by the nesting check before each container is entered.
void walk_json(od::value& value, std::string* out, const Path& path, Nesting nesting) {
  switch (value.type()) {
    case od::json_type::object: {
      check_nesting(path, nesting);
      if (out) out->push_back('{');
      bool first = true;
      MemberNames names;
      for (auto field : value.get_object()) {
        const std::string_view key = member_name(field);
        names.add(key, path);
        if (out) {
          if (!first) out->push_back(',');
          append_json_string(key, *out);
          out->push_back(':');
        }
        first = false;
        walk_json(member_value(field), out, Path(path, key), nesting.inside());
      }
      if (out) out->push_back('}');
      return;
    }
    case od::json_type::array: {
      check_nesting(path, nesting);
      if (out) out->push_back('[');
      std::size_t i = 0;
      for (auto item : value.get_array()) {
        if (out && i > 0) out->push_back(',');
        walk_json(item.value(), out, Path(path, i), nesting.inside());
        ++i;
      }
      if (out) out->push_back(']');
      return;
    }
    case od::json_type::string: {
      // Only escapes are left to check (unescaped_as_written), so a string without a backslash
      // is valid as it stands, and its canonical text (append_json_string of its value) is the
      // string as written: skipped, or copied, rather than unescaped and escaped again.
      if (auto text = json_path_detail::unescaped_as_written(value.raw_json_token().data() + 1)) {
        if (out) {
          out->push_back('"');
          out->append(*text);
          out->push_back('"');
        }
        return;
      }
      const std::string_view text = value.get_string();
      if (out) append_json_string(text, *out);
      return;
    }
    case od::json_type::number: {
      // Any size and precision is kept, so the grammar is checked here rather than by parsing.
      const std::string_view token = trim_json_token(value.raw_json_token());
      if (!is_json_number(token)) throw simdjson::simdjson_error(simdjson::NUMBER_ERROR);
      if (out) out->append(token);
      return;
    }
    case od::json_type::boolean: {
      bool b = false;
      if (value.get_bool().get(b) != simdjson::SUCCESS) {
        throw simdjson::simdjson_error(trim_json_token(value.raw_json_token()).starts_with('t')
                                           ? simdjson::T_ATOM_ERROR
                                           : simdjson::F_ATOM_ERROR);
      }
      if (out) out->append(b ? "true" : "false");
      return;
    }
    case od::json_type::null:
      if (!value.is_null()) throw simdjson::simdjson_error(simdjson::N_ATOM_ERROR);
      if (out) out->append("null");
      return;
  }
}

}  // namespace

void validate_json(od::value& value, const Path& path, Nesting nesting) {
  walk_json(value, nullptr, path, nesting);
}

void write_canonical_json(od::value& value, std::string& out, const Path& path, Nesting nesting) {
  walk_json(value, &out, path, nesting);
}

}  // namespace atlas2kudu
