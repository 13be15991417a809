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
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "atlas2kudu/event.h"

namespace atlas2kudu {

inline constexpr std::string_view kTruncatedKey = "_truncated";

struct Props {
  // (decoded key, value JSON text), sorted by key, keys distinct, never kTruncatedKey.
  std::vector<std::pair<std::string, std::string>> members;
  // Keys dropped by the cap, sorted, distinct, none of them in `members`.
  std::vector<std::string> truncated;

  friend bool operator==(const Props&, const Props&) = default;
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
// from {}.
std::optional<Props> parse_props(std::string_view text);

}  // namespace atlas2kudu
