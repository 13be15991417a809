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
//   for (auto item : get_array(value, list, nesting)) {
//     const Path entry(list, i++);          // message.entity.classifications[0], [1], ...
//     get_object(item.value(), entry,       // a number there throws InputError(kWrongType,
//                nesting.inside());         //   "message.entity.classifications[0]: expected
//   }                                       //    an object, got a number")
//
// On-Demand reads a document front to back, once: every value must be consumed exactly once and
// in document order, whatever order the members come in. The getters here each consume their
// value completely (or, when they throw, leave the record rejected). Values the decoder has no use
// for go through validate_json, never past it: skipping a value would leave its content unchecked
// ("tru", "01", "[1,,2]", lone surrogates), and a record is accepted only if all of it is valid
// JSON (RFC 8259).
//
// Nesting is bounded: a container nested deeper than Nesting::max (--max-json-depth) is rejected
// before it is entered, so no hostile record can make a recursive walk run out of stack.
//
// Each getter checks the JSON type first and throws InputError (kWrongType, or kBadGuid for
// get_guid) naming the path, the type expected and the type found. Malformed JSON met on the way
// surfaces as simdjson_error, which the decoder reports as invalid JSON.
#pragma once

#include <simdjson.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "atlas2kudu/event.h"
#include "input/input_error.h"
#include "util/keyed_hash.h"

namespace atlas2kudu {

// One step of a path: a root name, a member of the parent, or an array item of the parent. Each
// step refers to its parent, so a Path must not outlive the Paths it was built from.
class Path {
 public:
  Path(const char* root) : name_(root) {}  // NOLINT: implicit from a literal root path
  Path(const Path& parent, std::string_view member) : parent_(&parent), name_(member) {}
  Path(const Path& parent, std::size_t item) : parent_(&parent), index_(item) {}

  // "message.entity.classifications[2].typeName"; a path over 192 bytes keeps its first 96 and
  // last 64 ("message.entity.attributes.x[0][0]...(1440 bytes)...[0][0]"), so that a message
  // about 512 levels of nesting or a megabyte-long member name stays readable.
  std::string str() const;

 private:
  void append_full(std::string& out) const;

  static constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
  const Path* parent_ = nullptr;
  std::string_view name_;
  std::size_t index_ = kNoIndex;
};

// How deep a value sits in its JSON text: the number of objects and arrays around it (0 for the
// root), and the most levels of nesting allowed. A container at depth d is level d + 1; entering
// one past `max` levels is an error.
//   {"a":[{}]}  -> the root object is level 1, the array level 2, the inner object level 3
struct Nesting {
  std::uint32_t depth = 0;
  std::uint32_t max = kDefaultMaxJsonDepth;
  // The nesting of the members or items of a container at this nesting.
  Nesting inside() const { return {depth + 1, max}; }
};

// Throws InputError(kTooLarge, "<path>: nested deeper than <max> levels ...") when a container at
// `nesting` would be past the limit.
inline void check_nesting(const Path& path, Nesting nesting) {
  [[noreturn]] void nesting_too_deep(const Path& path, Nesting nesting);
  if (nesting.depth >= nesting.max) nesting_too_deep(path, nesting);
}

// The member names of one object, to reject a name given twice. Two members of one name are
// read differently by different JSON readers (first wins, last wins, merged), so in any object
// of a record, down to the values of attributes, the record is rejected instead. Linear in the
// number of members: a short scan for the usual dozen, a keyed hash set past that.
class MemberNames {
 public:
  // `key` must stay valid while this object is in use (member_name's names live as long as the
  // document). Throws InputError(kDuplicateKey, "<object>: member \"<key>\" appears twice").
  void add(std::string_view key, const Path& object) {
    // Length and first byte tell nearly all names apart; compare the bytes only when they match.
    const std::uint64_t tag = static_cast<std::uint64_t>(key.size()) << 8 |
                              (key.empty() ? 0u : static_cast<unsigned char>(key.front()));
    for (std::size_t i = 0; i < count_; ++i) {
      if (tags_[i] == tag && std::memcmp(names_[i], key.data(), key.size()) == 0) {
        repeated(key, object);
      }
    }
    if (count_ < kScan) {
      tags_[count_] = tag;
      names_[count_++] = key.data();
    } else {
      add_past_scan(key, object);
    }
  }

 private:
  static constexpr std::size_t kScan = 16;
  [[noreturn]] static void repeated(std::string_view key, const Path& object);
  void add_past_scan(std::string_view key, const Path& object);
  // One per object of every record: left uninitialized (only the first count_ are read), and the
  // set made only for objects of more than kScan members.
  std::array<std::uint64_t, kScan> tags_;  // the whole length: records may hold 16 MiB keys
  std::array<const char*, kScan> names_;
  std::size_t count_ = 0;
  std::unique_ptr<std::unordered_set<std::string_view, KeyedStringHash>> rest_;
};

// "an object", "a string", ...: how a JSON type is named in messages.
std::string_view json_type_name(simdjson::ondemand::json_type type);

// Throws InputError(kWrongType, "<path>: expected <expected>, got <the type of got>").
[[noreturn]] void wrong_type(const Path& path, std::string_view expected,
                             simdjson::ondemand::json_type got);

// True, consuming it, if `value` is JSON null; false, consuming nothing, for any other type.
// A misspelt literal ("nul", "nullx") is invalid JSON, never null.
inline bool take_null(simdjson::ondemand::value& value) {
  if (value.type() != simdjson::ondemand::json_type::null) return false;
  if (!value.is_null()) throw simdjson::simdjson_error(simdjson::N_ATOM_ERROR);
  return true;
}

namespace json_path_detail {

// The bytes of `word` equal to the byte repeated in `pattern`, as their high bits. Exact up to the
// first such byte (a borrow can only set bits above it), which is all the scan below reads.
constexpr std::uint64_t bytes_equal(std::uint64_t word, std::uint64_t pattern) {
  const std::uint64_t x = word ^ pattern;
  return (x - 0x0101010101010101) & ~x & 0x8080808080808080;
}

// The text between the quotes of a string token without a backslash (stage 1 has checked its
// UTF-8 and that no control character is raw, so it is the string's value as it stands); nullopt
// when the string has escapes. `raw` points just after the opening quote. Eight bytes at a time:
// the closing quote is in the document, and the document is padded (SIMDJSON_PADDING), so the
// last word read stays in its buffer.
inline std::optional<std::string_view> unescaped_as_written(const char* raw) {
  static_assert(std::endian::native == std::endian::little);
  for (std::size_t at = 0;; at += 8) {
    std::uint64_t word;
    std::memcpy(&word, raw + at, sizeof word);
    const std::uint64_t hits =
        bytes_equal(word, 0x2222222222222222) | bytes_equal(word, 0x5c5c5c5c5c5c5c5c);
    if (hits == 0) continue;
    const std::size_t end = at + static_cast<std::size_t>(std::countr_zero(hits) / 8);
    if (raw[end] == '\\') return std::nullopt;
    return std::string_view(raw, end);
  }
}

}  // namespace json_path_detail

// The unescaped string, valid while the document's text is and until the parser parses the next
// document: a string without escapes (nearly all) is a view of the text itself, one with escapes
// is unescaped into the parser's memory.
// Inline, with member_name: they run for nearly every token of every record.
inline std::string_view get_string(simdjson::ondemand::value& value, const Path& path) {
  const simdjson::ondemand::json_type type = value.type();
  if (type != simdjson::ondemand::json_type::string) wrong_type(path, "a string", type);
  const std::string_view token = value.raw_json_token();
  if (auto text = json_path_detail::unescaped_as_written(token.data() + 1)) return *text;
  return value.get_string();
}
// A member's name, unescaped, with the same validity: `field.unescaped_key()` without copying
// names that have no escape.
// Throws simdjson_error when iterating the object failed.
inline std::string_view member_name(simdjson::simdjson_result<simdjson::ondemand::field>& field) {
  if (field.error() != simdjson::SUCCESS) throw simdjson::simdjson_error(field.error());
  simdjson::ondemand::field& member = field.value_unsafe();
  if (auto name = json_path_detail::unescaped_as_written(member.key().raw())) return *name;
  return member.unescaped_key();
}

// The value of the member whose name member_name() just read: a reference to the one held in
// `field`, not a copy.
//
// Why values go by reference here and in the functions below (and in the decoders that call
// them): an ondemand::value that simdjson has just built is written with narrower stores (its
// iterator pointer, its depth), and copying it, to a local or to an argument passed by value,
// reads it back 16 bytes at a time before those stores are done: a store-forwarding stall, on
// every member of every record. By reference, check took 19% less CPU (bench/RESULTS.md, part
// nineteen).
inline simdjson::ondemand::value& member_value(
    simdjson::simdjson_result<simdjson::ondemand::field>& field) {
  return field.value_unsafe().value();
}

// As get_string, but JSON null is nullopt.
std::optional<std::string_view> get_optional_string(simdjson::ondemand::value& value,
                                                    const Path& path);
// A number that fits in a signed 64-bit integer ("1.5" and "1e3" do not).
std::int64_t get_int(simdjson::ondemand::value& value, const Path& path);
// A number value (the caller checked its type) as a signed 64-bit integer, or nullopt when it is
// a JSON number that is none ("1.5", "1e3", 2^63); throws simdjson_error(NUMBER_ERROR) for a
// number JSON does not allow ("01"). get_int, for a member that may be left out instead.
std::optional<std::int64_t> int64_if_fits(simdjson::ondemand::value& number);
// The object or array to iterate, after the type and nesting checks.
simdjson::ondemand::object get_object(simdjson::ondemand::value& value, const Path& path,
                                      Nesting nesting);
simdjson::ondemand::array get_array(simdjson::ondemand::value& value, const Path& path,
                                    Nesting nesting);
// A guid already read as text; throws InputError(kBadGuid) if it is not a UUID.
Guid get_guid(std::string_view text, const Path& path);

// Consumes `value` completely, checking all of it: every string's escapes, every number against
// the JSON grammar, every literal, every comma and colon, and the nesting limit. For the values a
// decoder does not use. Throws simdjson_error for invalid JSON, InputError for nesting.
void validate_json(simdjson::ondemand::value& value, const Path& path, Nesting nesting);

// As validate_json, and appends the value to `out` as compact JSON: strings unescaped and
// re-escaped canonically (append_json_string), numbers with exactly the digits they were written
// with (12345678901234567890 and 1.0 stay as written), object members in their order.
//   {"a" : [1.50, "x\u0041"] }  ->  {"a":[1.50,"xA"]}
void write_canonical_json(simdjson::ondemand::value& value, std::string& out, const Path& path,
                          Nesting nesting);

}  // namespace atlas2kudu
