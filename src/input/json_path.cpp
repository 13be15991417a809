#include "input/json_path.h"

#include <fmt/core.h>

#include "input/json_text.h"

namespace atlas2kudu {

namespace od = simdjson::ondemand;

std::string Path::str() const {
  std::string out = parent_ ? parent_->str() : std::string();
  if (index_ != kNoIndex) {
    out += fmt::format("[{}]", index_);
    return out;
  }
  if (parent_) out += '.';
  out += name_;
  return out;
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

std::string_view get_string(od::value value, const Path& path) {
  const od::json_type type = value.type();
  if (type != od::json_type::string) wrong_type(path, "a string", type);
  return value.get_string();
}

std::optional<std::string_view> get_optional_string(od::value value, const Path& path) {
  if (value.type() == od::json_type::null) return std::nullopt;
  return get_string(value, path);
}

std::int64_t get_int(od::value value, const Path& path) {
  const od::json_type type = value.type();
  if (type != od::json_type::number) wrong_type(path, "an integer", type);
  std::int64_t out = 0;
  if (value.get_int64().get(out) != simdjson::SUCCESS) {
    throw InputError(RejectCode::kWrongType,
                     fmt::format("{}: expected a 64-bit integer, got {}", path.str(),
                                 trim_json_token(value.raw_json_token())));
  }
  return out;
}

od::object get_object(od::value value, const Path& path) {
  const od::json_type type = value.type();
  if (type != od::json_type::object) wrong_type(path, "an object", type);
  return value.get_object();
}

od::array get_array(od::value value, const Path& path) {
  const od::json_type type = value.type();
  if (type != od::json_type::array) wrong_type(path, "an array", type);
  return value.get_array();
}

Guid get_guid(std::string_view text, const Path& path) {
  if (auto guid = Guid::parse(text)) return *guid;
  throw InputError(RejectCode::kBadGuid, fmt::format("{}: \"{}\" is not a UUID", path.str(),
                                                     printable_excerpt(text, 60)));
}

}  // namespace atlas2kudu
