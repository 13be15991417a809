#include "compile/props.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "atlas2kudu/error.h"
#include "input/json_path.h"
#include "input/json_text.h"
#include "util/json_writer.h"

namespace atlas2kudu {

namespace {

std::size_t json_string_size(std::string_view text) {
  std::size_t n = 2;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
      n += 2;
    } else if (c < 0x20) {
      n += 6;
    } else {
      n += 1;
    }
  }
  return n;
}

// Byte size of the serialized object, kept incrementally so capping a wide object stays linear.
struct SizeModel {
  std::size_t member_bytes = 0;  // sum of "key":value
  std::size_t members = 0;
  std::size_t truncated_bytes = 0;  // sum of "key"
  std::size_t truncated = 0;

  std::size_t total() const {
    const std::size_t entries = members + (truncated ? 1 : 0);
    std::size_t n = 2 + member_bytes + (entries ? entries - 1 : 0);
    if (truncated) n += json_string_size(kTruncatedKey) + 1 + 2 + truncated_bytes + (truncated - 1);
    return n;
  }
};

// One member of the merged object before it is written: an old member (its `"key":value` bytes
// are copied as they are) or an attribute of the event.
struct Merged {
  static constexpr std::uint32_t kAttribute = 0xFFFFFFFF;
  std::string_view key;    // decoded
  std::string_view value;  // JSON text
  std::uint32_t old_index = kAttribute;
  bool dropped = false;
};

// Drops members while the object is over `max_bytes`: the largest value first, ties broken by
// key so the choice never depends on input order; their keys join `truncated`. Only called when
// the text written without drops is over the cap.
void apply_cap(const Props& props, std::vector<Merged>& merged, std::vector<std::string>& truncated,
               std::size_t max_bytes) {
  std::vector<std::size_t> key_bytes(merged.size());
  SizeModel size;
  for (std::size_t i = 0; i < merged.size(); ++i) {
    const Merged& m = merged[i];
    key_bytes[i] = m.old_index == Merged::kAttribute ? json_string_size(m.key)
                                                     : props.key_json_size(m.old_index);
    size.member_bytes += key_bytes[i] + 1 + m.value.size();
  }
  size.members = merged.size();
  for (const auto& k : truncated) size.truncated_bytes += json_string_size(k);
  size.truncated = truncated.size();
  if (size.total() <= max_bytes) return;

  std::vector<std::size_t> order(merged.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Merged& ma = merged[a];
    const Merged& mb = merged[b];
    if (ma.value.size() != mb.value.size()) return ma.value.size() > mb.value.size();
    return ma.key < mb.key;
  });
  for (const std::size_t i : order) {
    if (size.total() <= max_bytes) break;
    Merged& m = merged[i];
    m.dropped = true;
    size.member_bytes -= key_bytes[i] + 1 + m.value.size();
    --size.members;
    size.truncated_bytes += key_bytes[i];
    ++size.truncated;
    truncated.emplace_back(m.key);
  }
  std::sort(truncated.begin(), truncated.end());
  // Last resort for absurdly small caps: keep the sorted prefix of dropped keys that fits.
  while (!truncated.empty() && size.total() > max_bytes) {
    size.truncated_bytes -= json_string_size(truncated.back());
    --size.truncated;
    truncated.pop_back();
  }
}

void append_truncated(std::string& out, const std::vector<std::string>& truncated) {
  append_json_string(kTruncatedKey, out);
  out += ":[";
  for (std::size_t i = 0; i < truncated.size(); ++i) {
    if (i) out.push_back(',');
    append_json_string(truncated[i], out);
  }
  out.push_back(']');
}

std::uint32_t offset(std::size_t n) {
  if (n > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(ErrorCategory::kInternal, "a props_json cell of 4 GiB or more");
  }
  return static_cast<std::uint32_t>(n);
}

}  // namespace

std::string_view Props::key(std::size_t i) const {
  const Member& m = members_[i];
  if (m.escaped_at == kPlainKey) {
    return std::string_view(json_).substr(m.begin + 1, m.value_begin - m.begin - 3);
  }
  std::uint32_t size = 0;
  std::memcpy(&size, escaped_keys_.data() + m.escaped_at, sizeof size);
  return std::string_view(escaped_keys_).substr(m.escaped_at + sizeof size, size);
}

std::size_t Props::heap_bytes(std::size_t malloc_header) const {
  const auto text = [&](const std::string& s) {
    return s.capacity() > 15 ? s.capacity() + 1 + malloc_header : 0;
  };
  const auto array = [&](const auto& v) {
    return v.capacity() ? v.capacity() * sizeof(v[0]) + malloc_header : 0;
  };
  std::size_t n = text(json_) + array(members_) + text(escaped_keys_) + array(truncated_);
  for (const std::string& key : truncated_) n += text(key);
  return n;
}

void merge_attributes(Props& props, std::span<const Attribute> attributes, std::size_t max_bytes) {
  // Sorting the event's attributes and merging them with the sorted members keeps this
  // O(n log n): inserting one by one into the sorted vector was quadratic (an event with 100,000
  // attributes took minutes). Called for every entity event: the scratch lists and the text
  // being written reuse their memory, and the result is copied into the props' own blocks.
  thread_local std::vector<const Attribute*> incoming, latest;
  thread_local std::vector<Merged> merged;
  thread_local std::vector<Props::Member> members;
  thread_local std::string json, escaped_keys;
  incoming.clear();
  latest.clear();
  bool reserved_key = false;
  for (const Attribute& a : attributes) {
    if (a.name == kTruncatedKey) {
      reserved_key = true;  // reserved: recorded as dropped rather than a second "_truncated"
    } else {
      incoming.push_back(&a);
    }
  }
  const auto by_name = [](const Attribute* x, const Attribute* y) { return x->name < y->name; };
  if (incoming.size() <= 16) {
    // A handful, as nearly always: an insertion sort (stable) allocates no merge buffer.
    for (std::size_t i = 1; i < incoming.size(); ++i) {
      const Attribute* a = incoming[i];
      std::size_t j = i;
      for (; j > 0 && by_name(a, incoming[j - 1]); --j) incoming[j] = incoming[j - 1];
      incoming[j] = a;
    }
  } else {
    std::stable_sort(incoming.begin(), incoming.end(), by_name);
  }
  // A repeated name: the last one wins (stable sort keeps event order within a name).
  for (const Attribute* a : incoming) {
    if (!latest.empty() && latest.back()->name == a->name) {
      latest.back() = a;
    } else {
      latest.push_back(a);
    }
  }

  // The members after the merge, in key order: the event's value wins.
  merged.clear();
  std::size_t old = 0;
  const auto keep_old = [&] {
    Merged m;
    m.key = props.key(old);
    m.value = props.value(old);
    m.old_index = static_cast<std::uint32_t>(old++);
    merged.push_back(m);
  };
  for (const Attribute* a : latest) {
    while (old < props.members_.size() && props.key(old) < a->name) keep_old();
    if (old < props.members_.size() && props.key(old) == a->name) ++old;
    Merged m;
    m.key = a->name;
    m.value = a->json;
    merged.push_back(m);
  }
  while (old < props.members_.size()) keep_old();

  // A key that comes back is no longer dropped.
  std::vector<std::string> truncated;
  if (!props.truncated_.empty() || reserved_key) {
    truncated.reserve(props.truncated_.size() + 1);
    auto back = latest.begin();
    for (const std::string& key : props.truncated_) {
      while (back != latest.end() && (*back)->name < key) ++back;
      if (back != latest.end() && (*back)->name == key) continue;
      truncated.push_back(key);
    }
    if (reserved_key) {
      auto at = std::lower_bound(truncated.begin(), truncated.end(), kTruncatedKey);
      if (at == truncated.end() || *at != kTruncatedKey) truncated.emplace(at, kTruncatedKey);
    }
  }

  // The text, with "_truncated" in its sorted place; written again without the dropped members
  // in the rare case that it is over the cap.
  const auto write = [&] {
    json.clear();
    members.clear();
    escaped_keys.clear();
    json.push_back('{');
    bool truncated_written = truncated.empty();
    for (const Merged& m : merged) {
      if (m.dropped) continue;
      if (!truncated_written && m.key > kTruncatedKey) {
        append_truncated(json, truncated);
        json.push_back(',');
        truncated_written = true;
      }
      Props::Member member;
      member.begin = offset(json.size());
      if (m.old_index != Merged::kAttribute) {
        const Props::Member& was = props.members_[m.old_index];
        json.append(props.json_, was.begin, was.value_end - was.begin);
        member.value_begin = offset(json.size() - m.value.size());
        member.escaped_at = was.escaped_at == Props::kPlainKey ? Props::kPlainKey : 0;
      } else {
        append_json_string(m.key, json);
        member.escaped_at = json.size() - member.begin == m.key.size() + 2 ? Props::kPlainKey : 0;
        json.push_back(':');
        member.value_begin = offset(json.size());
        json.append(m.value);
      }
      if (member.escaped_at != Props::kPlainKey) {
        member.escaped_at = offset(escaped_keys.size());
        const std::uint32_t size = offset(m.key.size());
        escaped_keys.append(reinterpret_cast<const char*>(&size), sizeof size);
        escaped_keys.append(m.key);
      }
      member.value_end = offset(json.size());
      members.push_back(member);
      json.push_back(',');
    }
    if (!truncated_written) {
      append_truncated(json, truncated);
      json.push_back(',');
    }
    if (json.size() > 1) json.pop_back();  // the last comma
    json.push_back('}');
  };
  write();
  if (json.size() > max_bytes) {
    apply_cap(props, merged, truncated, max_bytes);
    write();
  }

  props.json_.assign(json);
  props.members_.assign(members.begin(), members.end());
  props.escaped_keys_.assign(escaped_keys);
  props.truncated_ = std::move(truncated);
}

void append_json(std::string& out, const Props& props) {
  out.append(props.json());
}

std::string to_json(const Props& props) {
  return std::string(props.json());
}

namespace {

// The text of `value` as stored, after checking all of it: On-Demand skips what it is not asked
// to read, so the value is walked completely (validate_json checks every scalar, and numbers of
// any size stay valid), containers in a second pass over their own text.
std::string validated_text(simdjson::ondemand::value value, simdjson::ondemand::parser& inner) {
  const Path path("props_json");
  const simdjson::ondemand::json_type type = value.type();
  if (type != simdjson::ondemand::json_type::object &&
      type != simdjson::ondemand::json_type::array) {
    const std::string_view raw = trim_json_token(value.raw_json_token());
    validate_json(value, path, Nesting{1, kLargestMaxJsonDepth});
    return std::string(raw);
  }
  const std::string_view raw = type == simdjson::ondemand::json_type::object
                                   ? std::string_view(value.get_object().value().raw_json())
                                   : std::string_view(value.get_array().value().raw_json());
  const simdjson::padded_string copy(raw);
  simdjson::ondemand::document doc = inner.iterate(copy);
  simdjson::ondemand::value whole = doc.get_value();
  validate_json(whole, path, Nesting{1, kLargestMaxJsonDepth});
  return std::string(raw);
}

}  // namespace

std::optional<Props> parse_props(std::string_view text) {
  // simdjson wants padding after the text; stored cells are small, so copy them once.
  const simdjson::padded_string padded(text);
  simdjson::ondemand::parser parser, inner;
  Props props;
  std::vector<Attribute> attrs;
  try {
    simdjson::ondemand::document doc = parser.iterate(padded);
    for (auto field : doc.get_object()) {
      Attribute a;
      a.name = std::string(std::string_view(field.unescaped_key()));
      simdjson::ondemand::value value = field.value();
      if (a.name == kTruncatedKey) {
        for (auto item : value.get_array()) {
          props.truncated_.emplace_back(std::string_view(item.get_string()));
        }
        continue;
      }
      a.json = validated_text(value, inner);
      attrs.push_back(std::move(a));
    }
    // Out of bounds once the object was the whole document; a location means content after it.
    if (!doc.current_location().error()) return std::nullopt;
  } catch (const simdjson::simdjson_error&) {
    return std::nullopt;  // the caller merges from {}
  } catch (const InputError&) {
    return std::nullopt;  // nested deeper than any props_json we write
  }
  std::sort(props.truncated_.begin(), props.truncated_.end());
  props.truncated_.erase(std::unique(props.truncated_.begin(), props.truncated_.end()),
                         props.truncated_.end());
  // No cap: a stored cell is taken as it is.
  merge_attributes(props, attrs, static_cast<std::size_t>(-1));
  return props;
}

bool matches_its_text(const Props& props) {
  const std::optional<Props> parsed = parse_props(props.json());
  if (!parsed || parsed->json() != props.json() || parsed->size() != props.size() ||
      parsed->truncated() != props.truncated()) {
    return false;
  }
  for (std::size_t i = 0; i < props.size(); ++i) {
    if (parsed->key(i) != props.key(i) || parsed->value(i) != props.value(i)) return false;
  }
  return true;
}

}  // namespace atlas2kudu
