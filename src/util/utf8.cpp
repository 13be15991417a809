#include "util/utf8.h"

#include <fmt/format.h>

#include <cstdint>
#include <iterator>

namespace atlas2kudu {

std::size_t utf8_sequence(std::string_view s, char32_t& code_point) {
  if (s.empty()) return 0;
  const auto b0 = static_cast<unsigned char>(s[0]);
  std::size_t n = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  code_point = cp;
  return n;
}

std::size_t valid_utf8_prefix(std::string_view s) {
  std::size_t at = 0;
  for (char32_t cp = 0; at < s.size();) {
    const std::size_t n =
        static_cast<unsigned char>(s[at]) < 0x80 ? 1 : utf8_sequence(s.substr(at), cp);
    if (n == 0) break;
    at += n;
  }
  return at;
}

bool shown_escaped(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

void append_one_line(std::string& out, std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      if (c == '\\') out.push_back('\\');
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t n = c >= 0x80 ? utf8_sequence(text.substr(i), cp) : 0;
    if (n > 0 && !shown_escaped(cp)) {
      out.append(text.substr(i, n));
    } else if (n > 0) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<std::uint32_t>(cp));
    } else if (c == '\n') {
      out.append("\\n");
    } else if (c == '\r') {
      out.append("\\r");
    } else if (c == '\t') {
      out.append("\\t");
    } else {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", c);
    }
    i += n > 0 ? n : 1;
  }
}

std::size_t first_control_byte(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7f) return i;
  }
  return std::string_view::npos;
}

std::string one_line(std::string_view text) {
  std::string out;
  append_one_line(out, text);
  return out;
}

std::string joined_lines(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const std::size_t end = text.find_first_of("\r\n");
    append_one_line(out, text.substr(0, end));
    if (end == std::string_view::npos) break;
    out += ' ';
    const bool crlf = text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n';
    text.remove_prefix(end + (crlf ? 2 : 1));
  }
  return out;
}

}  // namespace atlas2kudu
