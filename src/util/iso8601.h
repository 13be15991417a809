// ISO-8601 UTC times, in the one form legacy (V1) Atlas notifications write them:
// "yyyy-MM-ddTHH:mm:ss", an optional fraction of one or more digits, then "Z".
//
// Anything else (a space for 'T', an offset instead of 'Z', no seconds, a day the month does not
// have) is refused rather than guessed at: the caller falls back to another time source or
// rejects the record. Digits of the fraction past microseconds are dropped, not rounded.
//
//   parse_iso8601_micros("2017-03-25T20:07:12.000Z")     -> 1490472432000000
//   parse_iso8601_micros("2017-03-25T20:07:12.1234567Z") -> 1490472432123456
//   parse_iso8601_micros("2017-02-30T20:07:12Z")         -> nullopt
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace atlas2kudu {

// Microseconds since 1970-01-01T00:00:00Z; nullopt if `text` is not in the form above.
std::optional<std::int64_t> parse_iso8601_micros(std::string_view text);

}  // namespace atlas2kudu
