// Impala SQL text: literals, identifiers and batched statements (the subset is docs/sql-subset.md).
//
// Everything the compiler writes into a statement goes through these functions, so the escaping
// rules live in one place. Example (hex keys):
//
//   std::string s;
//   append_string_literal(s, "it's\n");           // s == R"('it\'s\n')"
//   append_key(s, guid.bytes, KeyEncoding::kHex);   // ... '0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c'
//   append_key(s, guid.bytes, KeyEncoding::kBinary);
//       // ... CAST(unhex('0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c') AS BINARY)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "atlas2kudu/compiler.h"
#include "util/utf8.h"

namespace atlas2kudu {

// Appends `text` (valid UTF-8) as a single-quoted Impala string literal. Escapes `\` `'` LF CR TAB
// by name and every other control byte (0x00-0x1F, 0x7F) as a three-digit octal `\ooo`, so NUL is
// `\000` (never `\0`, which Hive's unescaper reads as octal when digits follow). Never writes `\%`
// or `\_` (Hive keeps their backslash). Bytes >= 0x80 pass through unchanged: Impala reads the
// statement as UTF-8. The result round-trips through Hive's unescapeSQLString for any valid UTF-8.
void append_string_literal(std::string& out, std::string_view text);

// Appends `text` for the inside of a `-- ` comment line, so that nothing in it can end the comment
// and start a statement: a file named "x\nDROP TABLE t;--" stays one comment line. It is the
// one-line form of util/utf8.h, which stderr's diagnostics use too.
//   append_comment_text(s, "a\nb\\c\xff")   // s == R"(a\nb\\c\xff)"
inline void append_comment_text(std::string& out, std::string_view text) {
  append_one_line(out, text);
}
inline std::string comment_text(std::string_view text) {
  return one_line(text);
}

// Appends a 16-byte key (guid or qn_digest) in the chosen encoding: '<32 lowercase hex>' or
// CAST(unhex('<32 lowercase hex>') AS BINARY).
void append_key(std::string& out, const std::array<std::uint8_t, 16>& bytes, KeyEncoding encoding);

// Appends a signed decimal BIGINT literal.
void append_int(std::string& out, std::int64_t value);

// Appends a backtick-quoted identifier. Throws Error(kUsage) for a name Impala does not accept:
// its names are 1 to 128 ASCII letters, digits and underscores, quoted or not (the metastore's
// rule; quoting only lets a name be a reserved word), so `a.b`, `x y` and `a;b` would be
// refused by the server at the first statement rather than here.
void append_identifier(std::string& out, std::string_view name);

// `db`.`table`
std::string qualified_table(std::string_view database, std::string_view table);

// Throws Error(kUsage) unless append_identifier accepts `name`; for validating options.
void check_identifier(std::string_view name);

}  // namespace atlas2kudu
