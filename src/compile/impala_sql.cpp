#include "compile/impala_sql.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <iterator>
#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "atlas2kudu/error.h"
#include "util/ascii_case.h"
#include "util/utf8.h"

namespace atlas2kudu {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

constexpr bool plain_in_literal(unsigned char c) {
  return c >= 0x20 && c != 0x7F && c != '\\' && c != '\'';
}

// The index of the first byte of `text` that needs an escape in a string literal (below 0x20,
// 0x7F, `\` or `'`; bytes >= 0x80 never do), or text.size(). Sixteen bytes at a time with SSE2
// (every x86-64 has it), as most text has nothing to escape; a text's last bytes are read as the
// 16 (or 8) bytes that end it, overlapping what was checked; only texts under 8 bytes are read
// one byte at a time.
inline std::size_t first_to_escape(std::string_view text) {
  const char* p = text.data();
  const std::size_t n = text.size();
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i below_space = _mm_set1_epi8(0x1F);
  const __m128i quote = _mm_set1_epi8('\'');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i del = _mm_set1_epi8(0x7F);
  // One bit per byte of `v` that needs an escape. Unsigned v <= 0x1F is min(v, 0x1F) == v.
  const auto to_escape = [&](__m128i v) {
    const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(v, below_space), v);
    const __m128i special =
        _mm_or_si128(_mm_cmpeq_epi8(v, quote),
                     _mm_or_si128(_mm_cmpeq_epi8(v, backslash), _mm_cmpeq_epi8(v, del)));
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(control, special)));
  };
  const auto load16 = [p](std::size_t at) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
  };
  // The upper half loads as zeros, which would read as controls: only the low 8 bits count.
  const auto load8 = [p](std::size_t at) {
    return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + at));
  };
  if (n >= 16) {
    for (; i + 16 <= n; i += 16) {
      const unsigned mask = to_escape(load16(i));
      if (mask != 0) return i + static_cast<std::size_t>(std::countr_zero(mask));
    }
    if (i == n) return n;
    // The last 16 bytes, overlapping what was checked: only the bits of bytes i.. count.
    const unsigned mask = to_escape(load16(n - 16)) & (0xFFFFu << (16 - (n - i)));
    return mask != 0 ? n - 16 + static_cast<std::size_t>(std::countr_zero(mask)) : n;
  }
  if (n >= 8) {
    const unsigned first = to_escape(load8(0)) & 0xFF;
    if (first != 0) return static_cast<std::size_t>(std::countr_zero(first));
    const unsigned last = to_escape(load8(n - 8)) & (0xFFu << (16 - n)) & 0xFF;
    return last != 0 ? n - 8 + static_cast<std::size_t>(std::countr_zero(last)) : n;
  }
#endif
  for (; i < n; ++i) {
    if (!plain_in_literal(static_cast<unsigned char>(p[i]))) return i;
  }
  return n;
}

}  // namespace

void append_string_literal(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size() + 2);
  out.push_back('\'');
  while (true) {
    const std::size_t plain = first_to_escape(text);
    out.append(text.data(), plain);
    if (plain == text.size()) break;
    const auto c = static_cast<unsigned char>(text[plain]);
    text.remove_prefix(plain + 1);
    switch (c) {
      case '\\':
        out.append("\\\\");
        break;
      case '\'':
        out.append("\\'");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default: {
        // Three octal digits, first digit 0 or 1 (c <= 0x7F): Hive's `\[0-1][0-7][0-7]` rule.
        const char octal[4] = {'\\', static_cast<char>('0' + (c >> 6)),
                               static_cast<char>('0' + ((c >> 3) & 7)),
                               static_cast<char>('0' + (c & 7))};
        out.append(octal, 4);
      }
    }
  }
  out.push_back('\'');
}

void append_key(std::string& out, const std::array<std::uint8_t, 16>& bytes, KeyEncoding encoding) {
  // Two hex digits per byte from one table.
  static constexpr std::array<char, 512> kPairs = [] {
    std::array<char, 512> t{};
    for (std::size_t i = 0; i < 256; ++i) {
      t[2 * i] = kHexDigits[i >> 4];
      t[2 * i + 1] = kHexDigits[i & 15];
    }
    return t;
  }();
  char hex[34];
  hex[0] = '\'';
  for (std::size_t i = 0; i < 16; ++i) std::memcpy(hex + 1 + 2 * i, &kPairs[2 * bytes[i]], 2);
  hex[33] = '\'';
  if (encoding == KeyEncoding::kBinary) {
    out.append("CAST(unhex(");
    out.append(hex, 34);
    out.append(") AS BINARY)");
  } else {
    out.append(hex, 34);
  }
}

void append_int(std::string& out, std::int64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, static_cast<std::size_t>(end - digits));
}

void check_identifier(std::string_view name) {
  constexpr std::size_t kMaxName = 128;
  const bool valid = !name.empty() && name.size() <= kMaxName && is_ascii_word(name);
  if (!valid) {
    throw Error(ErrorCategory::kUsage,
                fmt::format("--database '{}': not a name Impala accepts for a database: 1 to {} "
                            "ASCII letters, digits and underscores",
                            one_line(name), kMaxName));
  }
}

void append_identifier(std::string& out, std::string_view name) {
  check_identifier(name);
  out.push_back('`');
  out.append(name);
  out.push_back('`');
}

std::string qualified_table(std::string_view database, std::string_view table) {
  std::string out;
  append_identifier(out, database);
  out.push_back('.');
  append_identifier(out, table);
  return out;
}

}  // namespace atlas2kudu
