// ISO-8601 times, in the form legacy (V1) Atlas notifications write them: "yyyy-MM-ddTHH:mm:ss",
// an optional fraction of one or more digits, then "Z"; or, as another writer may, an offset
// from UTC instead of "Z" ("+02:00", "-05:30"), taken into account.
//
// Anything else (a space for 'T', "+0200", no seconds, a day the month does not have) is refused
// rather than guessed at: the caller falls back to another time source or rejects the record.
// Digits of the fraction past microseconds are dropped, not rounded.
//
//   parse_iso8601_micros("2017-03-25T20:07:12.000Z")      -> 1490472432000000
//   parse_iso8601_micros("2017-03-25T22:07:12.000+02:00") -> 1490472432000000
//   parse_iso8601_micros("2017-03-25T20:07:12.1234567Z")  -> 1490472432123456
//   parse_iso8601_micros("2017-02-30T20:07:12Z")          -> nullopt
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace atlas2kudu {

// Microseconds since 1970-01-01T00:00:00Z; nullopt if `text` is not in a form above.
std::optional<std::int64_t> parse_iso8601_micros(std::string_view text);

// The whole second holding `micros` (rounded down, also before 1970), in the form above without
// a fraction: format_iso8601_seconds(1490472432123456) == "2017-03-25T20:07:12Z".
std::string format_iso8601_seconds(std::int64_t micros);

// The wall clock now, in microseconds since 1970 (for the times in logs, --stats and metrics).
std::int64_t wall_clock_micros();

}  // namespace atlas2kudu
