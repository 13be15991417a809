#include "compile/props.h"

#include <simdjson.h>

#include <algorithm>
#include <numeric>

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

void apply_cap(Props& props, std::size_t max_bytes) {
  SizeModel size;
  for (const auto& [key, value] : props.members)
    size.member_bytes += json_string_size(key) + 1 + value.size();
  size.members = props.members.size();
  for (const auto& k : props.truncated) size.truncated_bytes += json_string_size(k);
  size.truncated = props.truncated.size();
  if (size.total() <= max_bytes) return;  // nearly always: nothing to drop, nothing allocated
  std::vector<std::size_t> key_sizes(props.members.size());
  for (std::size_t i = 0; i < props.members.size(); ++i) {
    key_sizes[i] = json_string_size(props.members[i].first);
  }

  // Largest value first; ties broken by key so the choice never depends on input order.
  std::vector<std::size_t> order(props.members.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& ma = props.members[a];
    const auto& mb = props.members[b];
    if (ma.second.size() != mb.second.size()) return ma.second.size() > mb.second.size();
    return ma.first < mb.first;
  });
  std::vector<bool> dropped(props.members.size(), false);
  for (const std::size_t i : order) {
    if (size.total() <= max_bytes) break;
    dropped[i] = true;
    size.member_bytes -= key_sizes[i] + 1 + props.members[i].second.size();
    --size.members;
    size.truncated_bytes += key_sizes[i];
    ++size.truncated;
  }
  std::vector<std::pair<std::string, std::string>> kept;
  kept.reserve(size.members);
  for (std::size_t i = 0; i < props.members.size(); ++i) {
    if (dropped[i]) {
      props.truncated.push_back(std::move(props.members[i].first));
    } else {
      kept.push_back(std::move(props.members[i]));
    }
  }
  props.members = std::move(kept);
  std::sort(props.truncated.begin(), props.truncated.end());
  // Last resort for absurdly small caps: keep the sorted prefix of dropped keys that fits.
  while (!props.truncated.empty() && size.total() > max_bytes) {
    size.truncated_bytes -= json_string_size(props.truncated.back());
    --size.truncated;
    props.truncated.pop_back();
  }
}

}  // namespace

void merge_attributes(Props& props, std::span<const Attribute> attributes, std::size_t max_bytes) {
  // Sorting the event's attributes and merging them with the sorted members keeps this
  // O(n log n): inserting one by one into the sorted vector was quadratic (an event with 100,000
  // attributes took minutes). Called for every entity event: the pointer lists reuse their
  // memory, and the members are updated in place when the event brings no new key.
  thread_local std::vector<const Attribute*> incoming, latest;
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

  // Values of keys that are members already are set in place (an update of the same
  // attributes, nearly always); the first new key rebuilds the list, where the event's values
  // win again.
  bool all_known = true;
  for (auto m = props.members.begin(); const Attribute* a : latest) {
    while (m != props.members.end() && m->first < a->name) ++m;
    if (m == props.members.end() || m->first != a->name) {
      all_known = false;
      break;
    }
    (m++)->second = a->json;
  }
  if (!all_known) {
    std::vector<std::pair<std::string, std::string>> members;
    members.reserve(props.members.size() + latest.size());
    auto old = props.members.begin();
    for (const Attribute* a : latest) {
      while (old != props.members.end() && old->first < a->name) {
        members.push_back(std::move(*old++));
      }
      if (old != props.members.end() && old->first == a->name) ++old;
      members.emplace_back(a->name, a->json);
    }
    while (old != props.members.end()) members.push_back(std::move(*old++));
    props.members = std::move(members);
  }

  // A key that comes back is no longer dropped.
  if (!props.truncated.empty() || reserved_key) {
    std::vector<std::string> truncated;
    truncated.reserve(props.truncated.size() + 1);
    auto back = latest.begin();
    for (std::string& key : props.truncated) {
      while (back != latest.end() && (*back)->name < key) ++back;
      if (back != latest.end() && (*back)->name == key) continue;
      truncated.push_back(std::move(key));
    }
    if (reserved_key) {
      auto at = std::lower_bound(truncated.begin(), truncated.end(), kTruncatedKey);
      if (at == truncated.end() || *at != kTruncatedKey) truncated.emplace(at, kTruncatedKey);
    }
    props.truncated = std::move(truncated);
  }
  apply_cap(props, max_bytes);
}

void append_json(std::string& out, const Props& props) {
  JsonWriter w(out);
  w.begin_object();
  bool truncated_written = props.truncated.empty();
  const auto write_truncated = [&] {
    w.key(kTruncatedKey).begin_array();
    for (const std::string& key : props.truncated) w.value(key);
    w.end_array();
    truncated_written = true;
  };
  for (const auto& [key, value] : props.members) {
    if (!truncated_written && std::string_view(key) > kTruncatedKey) write_truncated();
    w.key(key).raw(value);
  }
  if (!truncated_written) write_truncated();
  w.end_object();
}

std::string to_json(const Props& props) {
  std::string out;
  append_json(out, props);
  return out;
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
    validate_json(value, path, Nesting{1});
    return std::string(raw);
  }
  const std::string_view raw = type == simdjson::ondemand::json_type::object
                                   ? std::string_view(value.get_object().value().raw_json())
                                   : std::string_view(value.get_array().value().raw_json());
  const simdjson::padded_string copy(raw);
  simdjson::ondemand::document doc = inner.iterate(copy);
  simdjson::ondemand::value whole = doc.get_value();
  validate_json(whole, path, Nesting{1});
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
          props.truncated.emplace_back(std::string_view(item.get_string()));
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
  std::sort(props.truncated.begin(), props.truncated.end());
  props.truncated.erase(std::unique(props.truncated.begin(), props.truncated.end()),
                        props.truncated.end());
  // No cap: a stored cell is taken as it is.
  merge_attributes(props, attrs, static_cast<std::size_t>(-1));
  return props;
}

}  // namespace atlas2kudu
