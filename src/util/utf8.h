// UTF-8 as RFC 3629 defines it, and the one-line form of a text that may hold anything.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace atlas2kudu {

// The length of the valid UTF-8 sequence at the start of `s`, and its code point; 0 (and
// `code_point` unchanged) if none starts there: overlong forms, surrogates, code points past
// U+10FFFF and truncated sequences are not valid.
//   utf8_sequence("\xc3\xa9!", cp)   // 2, cp == U+00E9
//   utf8_sequence("\xc0\xaf", cp)    // 0 (an overlong '/')
std::size_t utf8_sequence(std::string_view s, char32_t& code_point);

// The length of the longest prefix of `s` that is valid UTF-8: where the first byte that starts
// no valid sequence is (s.size() when there is none).
//   valid_utf8_prefix("caf\xc3\xa9 \xff!")   // 6
std::size_t valid_utf8_prefix(std::string_view s);

// Characters a message shows escaped though they are valid UTF-8: C1 controls (U+0080-U+009F:
// U+009B starts a terminal escape sequence, U+0085 ends a line), the characters other tools end
// lines at (U+2028, U+2029), the invisible format and direction marks (U+200B-U+200F,
// U+202A-U+202E, U+2060-U+2069), which can make a line read as something it is not, and the
// byte order mark U+FEFF.
bool shown_escaped(char32_t code_point);

// Appends `text` so that it stays on one line, whatever it holds: file names, Kafka topics and
// server messages reach SQL comments and stderr, and a name such as "x\nDROP TABLE t;--" must
// neither end a `-- ` comment (and start a statement) nor forge a line of diagnostics.
// Printable ASCII and valid UTF-8 pass through; a backslash is doubled; LF, CR and TAB are
// written \n, \r, \t; every other control byte, DEL and every byte that is not part of valid
// UTF-8 as \xHH; the characters of shown_escaped() as \u0085, \u202e, ...
//   append_one_line(s, "a\nb\\c\xff")   // s == R"(a\nb\\c\xff)"
void append_one_line(std::string& out, std::string_view text);
std::string one_line(std::string_view text);

// The position of the first ASCII control byte (below 0x20, or DEL) in `text`, or npos: what a
// one-line value sent as is (an HTTP header's, a user name) must not hold.
//   first_control_byte("eyJ.a\r\nX: 1") == 5
std::size_t first_control_byte(std::string_view text);

// A server's message, whose lines are parts of one sentence ("Query 4a:0
// failed:\nAnalysisException:
// ..."), as one line: each line break (LF, CR, CRLF) becomes a space, the rest as one_line() does.
//   joined_lines("Query 1 failed:\r\nboom\x1b[2J")   // "Query 1 failed: boom\\x1b[2J"
std::string joined_lines(std::string_view text);

}  // namespace atlas2kudu
