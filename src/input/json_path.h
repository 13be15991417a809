// Typed access to simdjson On-Demand values, with the field's path in every error.
//
// A rejected record names the exact field that is wrong, as a path from the record's root:
//
//   message.entity.classifications[2].typeName: expected a string, got a number
//
// Path is a chain of stack frames, one per level the parser descends, and is turned into text
// only when a record is rejected, so accepted records pay nothing for it:
//
//   const Path list("message.entity.classifications");
//   std::size_t i = 0;
//   for (auto item : get_array(value, list)) {
//     const Path entry(list, i++);          // message.entity.classifications[0], [1], ...
//     get_object(item.value(), entry);      // a number there throws InputError(kWrongType,
//   }                                       //   "message.entity.classifications[0]: expected
//                                           //    an object, got a number")
//
// Each getter checks the JSON type first and throws InputError (kWrongType, or kBadGuid for
// get_guid) naming the path, the type expected and the type found. Malformed JSON met on the way
// still surfaces as simdjson_error, which the decoder reports as invalid JSON.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "atlas2kudu/event.h"
#include "input/input_error.h"

namespace atlas2kudu {

// One step of a path: a root name, a member of the parent, or an array item of the parent. Each
// step refers to its parent, so a Path must not outlive the Paths it was built from.
class Path {
 public:
  Path(const char* root) : name_(root) {}  // NOLINT: implicit from a literal root path
  Path(const Path& parent, std::string_view member) : parent_(&parent), name_(member) {}
  Path(const Path& parent, std::size_t item) : parent_(&parent), index_(item) {}

  // "message.entity.classifications[2].typeName"
  std::string str() const;

 private:
  static constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
  const Path* parent_ = nullptr;
  std::string_view name_;
  std::size_t index_ = kNoIndex;
};

// "an object", "a string", ...: how a JSON type is named in messages.
std::string_view json_type_name(simdjson::ondemand::json_type type);

// Throws InputError(kWrongType, "<path>: expected <expected>, got <the type of got>").
[[noreturn]] void wrong_type(const Path& path, std::string_view expected,
                             simdjson::ondemand::json_type got);

// The unescaped string; views memory of the parser, valid until it parses the next document.
std::string_view get_string(simdjson::ondemand::value value, const Path& path);
// As get_string, but JSON null is nullopt.
std::optional<std::string_view> get_optional_string(simdjson::ondemand::value value,
                                                    const Path& path);
// A number that fits in a signed 64-bit integer ("1.5" and "1e3" do not).
std::int64_t get_int(simdjson::ondemand::value value, const Path& path);
simdjson::ondemand::object get_object(simdjson::ondemand::value value, const Path& path);
simdjson::ondemand::array get_array(simdjson::ondemand::value value, const Path& path);
// A guid already read as text; throws InputError(kBadGuid) if it is not a UUID.
Guid get_guid(std::string_view text, const Path& path);

}  // namespace atlas2kudu
