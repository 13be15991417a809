#include "input/json_text.h"

#include <fmt/core.h>

namespace atlas2kudu {

namespace od = simdjson::ondemand;

namespace {

// JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

}  // namespace

std::string_view trim_json_token(std::string_view token) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\t' ||
                            token.back() == '\r' || token.back() == ',' || token.back() == '}' ||
                            token.back() == ']' || token.back() == ':')) {
    token.remove_suffix(1);
  }
  return token;
}

void write_canonical_json(od::value value, std::string& out) {
  switch (value.type()) {
    case od::json_type::object: {
      out.push_back('{');
      bool first = true;
      for (auto field : value.get_object()) {
        if (!first) out.push_back(',');
        first = false;
        append_json_string(field.unescaped_key(), out);
        out.push_back(':');
        write_canonical_json(field.value(), out);
      }
      out.push_back('}');
      return;
    }
    case od::json_type::array: {
      out.push_back('[');
      bool first = true;
      for (auto item : value.get_array()) {
        if (!first) out.push_back(',');
        first = false;
        write_canonical_json(item.value(), out);
      }
      out.push_back(']');
      return;
    }
    case od::json_type::string:
      append_json_string(value.get_string(), out);
      return;
    case od::json_type::number: {
      const std::string_view token = trim_json_token(value.raw_json_token());
      if (!is_json_number(token)) throw simdjson::simdjson_error(simdjson::NUMBER_ERROR);
      out += token;
      return;
    }
    case od::json_type::boolean: {
      bool b = false;
      if (value.get_bool().get(b) != simdjson::SUCCESS) {
        throw simdjson::simdjson_error(trim_json_token(value.raw_json_token()).starts_with('t')
                                           ? simdjson::T_ATOM_ERROR
                                           : simdjson::F_ATOM_ERROR);
      }
      out += b ? "true" : "false";
      return;
    }
    case od::json_type::null:
      if (!value.is_null()) throw simdjson::simdjson_error(simdjson::N_ATOM_ERROR);
      out += "null";
      return;
  }
}

std::string printable_excerpt(std::string_view text, std::size_t max) {
  std::string out;
  for (char c : text.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  if (text.size() > max) out += "...";
  return out;
}

#define ATLAS2KUDU_STRINGIFY_(x) #x
#define ATLAS2KUDU_STRINGIFY(x) ATLAS2KUDU_STRINGIFY_(x)

std::string_view json_kernel() {
  return ATLAS2KUDU_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION);
}

bool is_valid_utf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

}  // namespace atlas2kudu
