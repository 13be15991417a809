#include "compile/props.h"

#include <algorithm>
#include <numeric>

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
  std::vector<std::size_t> key_sizes(props.members.size());
  for (std::size_t i = 0; i < props.members.size(); ++i) {
    key_sizes[i] = json_string_size(props.members[i].first);
    size.member_bytes += key_sizes[i] + 1 + props.members[i].second.size();
  }
  size.members = props.members.size();
  for (const auto& k : props.truncated) size.truncated_bytes += json_string_size(k);
  size.truncated = props.truncated.size();
  if (size.total() <= max_bytes) return;

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
  auto key_less = [](const auto& m, std::string_view k) { return m.first < k; };
  for (const Attribute& a : attributes) {
    if (a.name == kTruncatedKey) {
      // Reserved: record it as dropped rather than emit a second "_truncated" key.
      auto t = std::lower_bound(props.truncated.begin(), props.truncated.end(), a.name);
      if (t == props.truncated.end() || *t != a.name) props.truncated.insert(t, a.name);
      continue;
    }
    auto it = std::lower_bound(props.members.begin(), props.members.end(), a.name, key_less);
    if (it != props.members.end() && it->first == a.name) {
      it->second = a.json;
    } else {
      props.members.insert(it, {a.name, a.json});
    }
    auto t = std::lower_bound(props.truncated.begin(), props.truncated.end(), a.name);
    if (t != props.truncated.end() && *t == a.name) props.truncated.erase(t);
  }
  apply_cap(props, max_bytes);
}

void append_json(std::string& out, const Props& props) {
  out.push_back('{');
  bool first = true;
  bool truncated_written = props.truncated.empty();
  auto write_truncated = [&] {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(kTruncatedKey, out);
    out.append(":[");
    for (std::size_t i = 0; i < props.truncated.size(); ++i) {
      if (i) out.push_back(',');
      append_json_string(props.truncated[i], out);
    }
    out.push_back(']');
    truncated_written = true;
  };
  for (const auto& [key, value] : props.members) {
    if (!truncated_written && std::string_view(key) > kTruncatedKey) write_truncated();
    if (!first) out.push_back(',');
    first = false;
    append_json_string(key, out);
    out.push_back(':');
    out.append(value);
  }
  if (!truncated_written) write_truncated();
  out.push_back('}');
}

std::string to_json(const Props& props) {
  std::string out;
  append_json(out, props);
  return out;
}

namespace {

// A small reader for the top level of a JSON object; values are returned as their raw text.
class ObjectReader {
 public:
  explicit ObjectReader(std::string_view text) : s_(text) {}

  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool consume(char c) {
    skip_ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool at_end() {
    skip_ws();
    return i_ == s_.size();
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool hex4(std::uint32_t& v) {
    if (i_ + 4 > s_.size()) return false;
    v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        return false;
    }
    return true;
  }

  // Decodes a JSON string at the cursor.
  bool string(std::string& out) {
    if (!consume('"')) return false;
    out.clear();
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      switch (e) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && i_ + 1 < s_.size() && s_[i_] == '\\' &&
              s_[i_ + 1] == 'u') {
            i_ += 2;
            std::uint32_t lo = 0;
            if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }

  // Returns the raw text of the value at the cursor (strings, numbers, literals, nested).
  bool raw_value(std::string_view& out) {
    skip_ws();
    const std::size_t start = i_;
    int depth = 0;
    bool in_string = false;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (in_string) {
        if (c == '\\')
          ++i_;
        else if (c == '"')
          in_string = false;
        ++i_;
        if (depth == 0 && !in_string) break;
        continue;
      }
      if (c == '"') {
        in_string = true;
        ++i_;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (depth == 0) break;
        --depth;
        ++i_;
        if (depth == 0) break;
        continue;
      }
      if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r')) break;
      ++i_;
    }
    if (depth != 0 || in_string || i_ == start) return false;
    out = s_.substr(start, i_ - start);
    return true;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<Props> parse_props(std::string_view text) {
  ObjectReader r(text);
  if (!r.consume('{')) return std::nullopt;
  Props props;
  std::vector<Attribute> attrs;
  if (!r.consume('}')) {
    do {
      Attribute a;
      std::string_view value;
      if (!r.string(a.name) || !r.consume(':') || !r.raw_value(value)) return std::nullopt;
      if (a.name == kTruncatedKey) {
        ObjectReader list(value);
        if (!list.consume('[')) return std::nullopt;
        if (!list.consume(']')) {
          do {
            std::string key;
            if (!list.string(key)) return std::nullopt;
            props.truncated.push_back(std::move(key));
          } while (list.consume(','));
          if (!list.consume(']')) return std::nullopt;
        }
        continue;
      }
      a.json = std::string(value);
      attrs.push_back(std::move(a));
    } while (r.consume(','));
    if (!r.consume('}')) return std::nullopt;
  }
  if (!r.at_end()) return std::nullopt;
  std::sort(props.truncated.begin(), props.truncated.end());
  props.truncated.erase(std::unique(props.truncated.begin(), props.truncated.end()),
                        props.truncated.end());
  // No cap: a stored cell is taken as it is.
  merge_attributes(props, attrs, static_cast<std::size_t>(-1));
  return props;
}

}  // namespace atlas2kudu
