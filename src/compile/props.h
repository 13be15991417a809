// props_json: the entity attributes that are not hot columns, as one capped JSON object.
//
// A Props value is the decoded form of a stored props_json cell: members sorted by key, each value
// kept as the JSON text the notification carried (numbers keep their digits), plus the sorted list
// of keys the size cap dropped. Merging an event lets the event win per key; the cap is applied
// after every merge, exactly as a one-event-at-a-time writer would store it.
//
// Example with max_bytes = 40:
//
//   Props p;                                        // {}
//   merge_attributes(p, {{"owner","\"a\""}, {"n","1"}}, 40);
//   to_json(p)      == R"({"n":1,"owner":"a"})"
//   merge_attributes(p, {{"big","\"xxxxxxxxxxxxxxxxxxxxxxxx\""}}, 40);
//   to_json(p)      == R"({"_truncated":["big"],"n":1,"owner":"a"})"
//
// Cap rule: while the serialized object is longer than max_bytes, drop the member with the longest
// value text (ties: the smaller key first) and add its key to "_truncated". A key that comes back
// with a value that fits is removed from "_truncated" again. If even the object of all dropped keys
// does not fit, "_truncated" keeps the sorted prefix that fits (and "{}" is the last resort), so
// the result is always valid JSON within the cap. "_truncated" is reserved: an attribute of that
// name is treated as dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "atlas2kudu/event.h"

namespace atlas2kudu {

inline constexpr std::string_view kTruncatedKey = "_truncated";

struct EntityKnowledge;  // compile/knowledge_store.h

// The members live in the cell's own text: writing the cell is one copy, and an entity's props
// are at most four heap blocks however many attributes it has (the knowledge store keeps one per
// entity it knows, so their size decides how many fit in --memory-budget).
class Props {
 public:
  // to_json(*this): {"key":value,...}, keys sorted, "_truncated" in its sorted place.
  std::string_view json() const { return json_.empty() ? std::string_view("{}") : json_; }
  // The members in key order: the decoded key and the value's JSON text. Keys are distinct and
  // never kTruncatedKey.
  std::size_t size() const { return members_.size(); }
  std::string_view key(std::size_t i) const;
  std::string_view value(std::size_t i) const {
    const Member& m = members_[i];
    return std::string_view(json_).substr(m.value_begin, m.value_end - m.value_begin);
  }
  // Keys dropped by the cap, sorted, distinct, none of them a member.
  const std::vector<std::string>& truncated() const { return truncated_; }

  // The size of key(i) as written in json(), with its quotes.
  std::size_t key_json_size(std::size_t i) const {
    return members_[i].value_begin - 1 - members_[i].begin;
  }
  // Heap bytes held (capacities, plus `malloc_header` per block), for the knowledge store's budget.
  std::size_t heap_bytes(std::size_t malloc_header) const;

  friend bool operator==(const Props& a, const Props& b) { return a.json() == b.json(); }

 private:
  friend void merge_attributes(Props&, std::span<const Attribute>, std::size_t);
  friend std::optional<Props> parse_props(std::string_view);
  // The spill file's byte form of an entity's knowledge (knowledge_store.cpp).
  friend void encode_knowledge(const EntityKnowledge&, std::string&);
  friend void decode_knowledge(std::string_view, EntityKnowledge&);

  // One member: `"key":value` is json_[begin, value_end). A key written with escapes is kept
  // decoded in escaped_keys_ at escaped_at (a 4-byte length, then the bytes); the others are
  // the bytes between their quotes.
  static constexpr std::uint32_t kPlainKey = 0xFFFFFFFF;
  struct Member {
    std::uint32_t begin;
    std::uint32_t value_begin;
    std::uint32_t value_end;
    std::uint32_t escaped_at;
  };
  std::string json_;
  std::vector<Member> members_;
  std::string escaped_keys_;
  std::vector<std::string> truncated_;
};

// Merges `attributes` (event order; a repeated name: the last wins) into `props`, then applies
// the cap of `max_bytes` (--props-max-bytes).
void merge_attributes(Props& props, std::span<const Attribute> attributes, std::size_t max_bytes);

// Compact JSON object text with keys sorted ("_truncated" in its sorted place).
std::string to_json(const Props& props);
void append_json(std::string& out, const Props& props);

// Parses a stored props_json cell: one valid JSON object (RFC 8259, every value checked, nothing
// after it but whitespace), "_truncated" read back as the dropped list, each other value kept as
// the text stored. Returns nullopt for anything else, e.g. {"a":tru}; the caller then merges
// from {} (and counts the cell: UnreadableProps, compiler.h). Values may nest up to
// kLargestMaxJsonDepth levels (reader.h; the cell itself is level 1), whatever this run's
// --max-json-depth: a run with a larger one stored them, and merging onto {} would drop every
// attribute of the cell.
std::optional<Props> parse_props(std::string_view text);

// Whether `props` is what parse_props reads from its own text, which is to_json's: the same text,
// members and dropped keys. True of every Props that merge_attributes and parse_props make; false
// of one decoded from bytes encode_knowledge did not write that still hold together (a key that
// is not valid JSON text, members out of order), which a damaged FILE.window could hand a resumed
// run:
//   {"a":1,"b":2} with members (a, b)    -> true
//   {"b":2,"a":1} with members (b, a)    -> false (parse_props sorts them: {"a":1,"b":2})
//   {"\x14":0} (a raw control byte)      -> false (not JSON)
bool matches_its_text(const Props& props);

}  // namespace atlas2kudu
