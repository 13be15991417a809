#include "input/json_text.h"

#include <fmt/core.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
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

namespace {

bool is_json_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The four hex digits of a \u escape at text[at] (the backslash), or -1.
long escaped_unit(std::string_view text, std::size_t at) {
  if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return -1;
  long unit = 0;
  for (std::size_t k = at + 2; k < at + 6; ++k) {
    const int h = hex_value(text[k]);
    if (h < 0) return -1;
    unit = unit * 16 + h;
  }
  return unit;
}

// Checks the string whose opening quote is at text[i]; moves i past its closing quote.
std::optional<JsonSyntaxError> skip_string(std::string_view text, std::size_t& i) {
  const std::size_t open = i++;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"') {
      ++i;
      return std::nullopt;
    }
    if (c < 0x20) {
      return JsonSyntaxError{i, fmt::format("a control character (U+{:04X}) in a string, where "
                                            "JSON needs it escaped",
                                            c)};
    }
    if (c != '\\') {
      ++i;
      continue;
    }
    if (i + 1 >= text.size()) break;
    const char e = text[i + 1];
    if (std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos) {
      i += 2;
      continue;
    }
    if (e != 'u') return JsonSyntaxError{i, "an escape JSON does not allow"};
    const long unit = escaped_unit(text, i);
    if (unit < 0) return JsonSyntaxError{i, "a \\u escape without four hex digits"};
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      return JsonSyntaxError{i, "a \\u escape of a low surrogate without a high one before it"};
    }
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      const long low = escaped_unit(text, i + 6);
      if (low < 0xDC00 || low > 0xDFFF) {
        return JsonSyntaxError{i, "a \\u escape of a high surrogate without a low one after it"};
      }
      i += 12;
      continue;
    }
    i += 6;
  }
  return JsonSyntaxError{open, "a string not closed before the end"};
}

}  // namespace

std::optional<JsonSyntaxError> find_json_syntax_error(std::string_view text) {
  // What the next token may be: a value (at the start, after ':' or an array's ','), a member
  // name (after an object's ','), or what follows a value or opens a container.
  enum class Want { kValue, kValueOrClose, kKey, kKeyOrClose, kColon, kCommaOrClose, kEnd };
  std::string open;  // '{' and '[' of the containers the position is in
  Want want = Want::kValue;
  std::size_t i = 0;
  const auto after_value = [&] { want = open.empty() ? Want::kEnd : Want::kCommaOrClose; };
  for (;;) {
    while (i < text.size() && is_json_space(text[i])) ++i;
    if (i == text.size()) {
      if (want == Want::kEnd) return std::nullopt;
      if (open.empty()) return JsonSyntaxError{i, "no JSON value"};
      return JsonSyntaxError{i, open.back() == '{' ? "the end of the text inside an object"
                                                   : "the end of the text inside an array"};
    }
    const char c = text[i];
    switch (want) {
      case Want::kEnd:
        return JsonSyntaxError{i, "more after the end of the JSON value"};
      case Want::kColon:
        if (c != ':') return JsonSyntaxError{i, "expected ':' after a member name"};
        ++i;
        want = Want::kValue;
        continue;
      case Want::kCommaOrClose:
        if (c == ',') {
          ++i;
          want = open.back() == '{' ? Want::kKey : Want::kValue;
        } else if (c == (open.back() == '{' ? '}' : ']')) {
          ++i;
          open.pop_back();
          after_value();
        } else {
          return JsonSyntaxError{i, open.back() == '{' ? "expected ',' or '}' after a member"
                                                       : "expected ',' or ']' after an element"};
        }
        continue;
      case Want::kKey:
      case Want::kKeyOrClose:
        if (c == '}' && want == Want::kKeyOrClose) {
          ++i;
          open.pop_back();
          after_value();
          continue;
        }
        if (c != '"') {
          return JsonSyntaxError{i, want == Want::kKey
                                        ? "expected a member name (a string)"
                                        : "expected a member name (a string) or '}'"};
        }
        if (auto bad = skip_string(text, i)) return bad;
        want = Want::kColon;
        continue;
      case Want::kValue:
      case Want::kValueOrClose:
        break;
    }
    if (c == ']' && want == Want::kValueOrClose) {
      ++i;
      open.pop_back();
      after_value();
      continue;
    }
    if (c == '{' || c == '[') {
      open += c;
      ++i;
      want = c == '{' ? Want::kKeyOrClose : Want::kValueOrClose;
      continue;
    }
    if (c == '"') {
      if (auto bad = skip_string(text, i)) return bad;
      after_value();
      continue;
    }
    const std::size_t start = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) ||
                               text[i] == '-' || text[i] == '+' || text[i] == '.')) {
      ++i;
    }
    const std::string_view token = text.substr(start, i - start);
    if (token.empty()) {
      return JsonSyntaxError{
          start, want == Want::kValueOrClose ? "expected a value or ']'" : "expected a value"};
    }
    if (token != "true" && token != "false" && token != "null" && !is_json_number(token)) {
      return JsonSyntaxError{start, (c == '-' || (c >= '0' && c <= '9'))
                                        ? "a number JSON does not allow"
                                        : "not a JSON value (true, false, null, a number, a "
                                          "string, an object or an array)"};
    }
    after_value();
  }
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
