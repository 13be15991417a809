#include "input/json_text.h"

#include <fmt/core.h>
#include <simdjson.h>

#include <algorithm>
#include <iterator>

#include "util/stringify.h"
#include "util/utf8.h"

namespace atlas2kudu {

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

std::string_view trim_json_token(std::string_view token) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\t' ||
                            token.back() == '\r' || token.back() == ',' || token.back() == '}' ||
                            token.back() == ']' || token.back() == ':')) {
    token.remove_suffix(1);
  }
  return token;
}

std::string_view trim_json_space(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::string printable_excerpt(std::string_view text, std::size_t max) {
  const std::string_view shown = text.substr(0, max);
  std::string out;
  for (std::size_t i = 0; i < shown.size();) {
    const auto u = static_cast<unsigned char>(shown[i]);
    if (u >= 0x20 && u < 0x7f) {
      out += shown[i++];
      continue;
    }
    char32_t cp = 0;
    const std::size_t n = u >= 0x80 ? utf8_sequence(shown.substr(i), cp) : 0;
    if (n > 0 && !shown_escaped(cp)) {
      out.append(shown.substr(i, n));
      i += n;
      continue;
    }
    for (const std::size_t end = i + std::max<std::size_t>(n, 1); i < end; ++i)
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", static_cast<unsigned char>(shown[i]));
  }
  if (text.size() > max) out += "...";
  return out;
}

std::string_view json_kernel() {
  return ATLAS2KUDU_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION);
}

bool is_valid_utf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

}  // namespace atlas2kudu
