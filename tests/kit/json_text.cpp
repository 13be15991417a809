#include "json_text.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cctype>

#include "atlas2kudu/reader.h"

namespace atlas2kudu::testkit {

std::string json_quote(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size() + 2);
  out += '"';
  for (const char ch : utf8) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

namespace {

// A strict RFC 8259 grammar check. simdjson's DOM refuses integers beyond 64 bits (BIGINT_ERROR),
// which are valid JSON and which Atlas props may hold, so validation cannot rest on it.
class Validator {
 public:
  explicit Validator(std::string_view s) : s_(s) {}
  bool run() {
    ws();
    if (!value(0)) return false;
    ws();
    return i_ == s_.size();
  }

 private:
  void ws() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }
  bool lit(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool digits() {
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    return i_ > start;
  }
  bool number() {
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
    } else if (!digits()) {
      return false;
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (!digits()) return false;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digits()) return false;
    }
    return true;
  }
  bool string() {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    ++i_;
    while (i_ < s_.size()) {
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        const char e = s_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k) {
            if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) {
              return false;
            }
          }
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        }
      }
      ++i_;
    }
    return false;
  }
  bool value(int depth) {
    // As deep as atlas2kudu ever writes a cell (the outermost value is level 1).
    if (depth >= static_cast<int>(kLargestMaxJsonDepth) || i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      for (;;) {
        ws();
        if (!string()) return false;
        ws();
        if (i_ >= s_.size() || s_[i_] != ':') return false;
        ++i_;
        ws();
        if (!value(depth + 1)) return false;
        ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        return i_ < s_.size() && s_[i_++] == '}';
      }
    }
    if (c == '[') {
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      for (;;) {
        ws();
        if (!value(depth + 1)) return false;
        ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        return i_ < s_.size() && s_[i_++] == ']';
      }
    }
    if (c == '"') return string();
    if (c == 't') return lit("true");
    if (c == 'f') return lit("false");
    if (c == 'n') return lit("null");
    return number();
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

bool json_valid(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size()) && Validator(text).run();
}

std::string json_minify(std::string_view text) {
  if (!json_valid(text)) throw JsonError(fmt::format("not JSON: {}", text.substr(0, 200)));
  std::string out(text.size(), '\0');
  std::size_t len = 0;
  if (simdjson::minify(text.data(), text.size(), out.data(), len) != simdjson::SUCCESS) {
    throw JsonError(fmt::format("not JSON: {}", text.substr(0, 200)));
  }
  out.resize(len);
  return out;
}

std::vector<std::pair<std::string, std::string>> json_object_members(std::string_view object_text) {
  // Re-serialising values from the DOM would lose the number text (and the DOM refuses big
  // integers), so walk the minified text with simdjson's on-demand API, which hands back raw
  // tokens.
  const std::string minified = json_minify(object_text);
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(minified);
  std::vector<std::pair<std::string, std::string>> members;
  try {
    simdjson::ondemand::document doc = parser.iterate(padded);
    simdjson::ondemand::object object = doc.get_object();
    for (auto field : object) {
      std::string key(std::string_view(field.unescaped_key()));
      simdjson::ondemand::value value = field.value();
      std::string_view raw;
      switch (value.type()) {
        case simdjson::ondemand::json_type::object: {
          simdjson::ondemand::object inner = value.get_object();
          raw = inner.raw_json();
          break;
        }
        case simdjson::ondemand::json_type::array: {
          simdjson::ondemand::array inner = value.get_array();
          raw = inner.raw_json();
          break;
        }
        default:
          raw = value.raw_json_token();
          break;
      }
      members.emplace_back(std::move(key), std::string(raw));
    }
  } catch (const simdjson::simdjson_error& e) {
    throw JsonError(
        fmt::format("not a JSON object ({}): {}", e.what(), object_text.substr(0, 200)));
  }
  return members;
}

std::vector<std::string> json_string_array(std::string_view array_text) {
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  simdjson::dom::array array;
  if (parser.parse(array_text.data(), array_text.size()).get(element) != simdjson::SUCCESS ||
      element.get(array) != simdjson::SUCCESS) {
    throw JsonError(fmt::format("not a JSON array: {}", array_text.substr(0, 200)));
  }
  std::vector<std::string> out;
  for (auto item : array) {
    std::string_view s;
    if (item.get(s) != simdjson::SUCCESS) {
      throw JsonError(fmt::format("not an array of strings: {}", array_text.substr(0, 200)));
    }
    out.emplace_back(s);
  }
  return out;
}

namespace {

void canonical(const simdjson::dom::element& e, std::string& out) {
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      out += '{';
      bool first = true;
      for (auto field : simdjson::dom::object(e)) {
        if (!first) out += ',';
        first = false;
        out += json_quote(field.key);
        out += ':';
        canonical(field.value, out);
      }
      out += '}';
      break;
    }
    case simdjson::dom::element_type::ARRAY: {
      out += '[';
      bool first = true;
      for (auto item : simdjson::dom::array(e)) {
        if (!first) out += ',';
        first = false;
        canonical(item, out);
      }
      out += ']';
      break;
    }
    case simdjson::dom::element_type::STRING:
      out += json_quote(std::string_view(e));
      break;
    case simdjson::dom::element_type::INT64:
      out += fmt::format("{}", std::int64_t(e));
      break;
    case simdjson::dom::element_type::UINT64:
      out += fmt::format("{}", std::uint64_t(e));
      break;
    case simdjson::dom::element_type::DOUBLE:
      // Tagged so that 1.0 (double) never equals 1 (integer).
      out += fmt::format("{}d", double(e));
      break;
    case simdjson::dom::element_type::BOOL:
      out += bool(e) ? "true" : "false";
      break;
    case simdjson::dom::element_type::NULL_VALUE:
      out += "null";
      break;
  }
}

}  // namespace

std::string json_canonical(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  const auto error = parser.parse(text.data(), text.size()).get(element);
  if (error == simdjson::NUMBER_ERROR) {
    // A number simdjson cannot hold (e.g. 30 digits): compare the minified text as written.
    return json_minify(text);
  }
  if (error != simdjson::SUCCESS) {
    throw JsonError(fmt::format("not JSON: {}", text.substr(0, 200)));
  }
  std::string out;
  canonical(element, out);
  return out;
}

}  // namespace atlas2kudu::testkit
