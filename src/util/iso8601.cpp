#include "util/iso8601.h"

#include <fmt/chrono.h>

#include <chrono>
#include <ctime>

namespace atlas2kudu {

std::optional<std::int64_t> parse_iso8601_micros(std::string_view s) {
  // yyyy-MM-ddTHH:mm:ss[.fraction](Z|+hh:mm|-hh:mm)
  auto num = [&](std::size_t at, std::size_t len, int& out) {
    if (at + len > s.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int y, mo, d, h, mi, sec;
  if (s.size() < 20 || !num(0, 4, y) || s[4] != '-' || !num(5, 2, mo) || s[7] != '-' ||
      !num(8, 2, d) || s[10] != 'T' || !num(11, 2, h) || s[13] != ':' || !num(14, 2, mi) ||
      s[16] != ':' || !num(17, 2, sec)) {
    return std::nullopt;
  }
  std::size_t i = 19;
  std::int64_t micros = 0;
  if (s[i] == '.') {
    ++i;
    int digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (digits < 6) micros = micros * 10 + (s[i] - '0');
      ++digits;
      ++i;
    }
    if (digits == 0) return std::nullopt;
    for (int k = digits; k < 6; ++k) micros *= 10;
  }
  // 'Z', or an offset from UTC, +hh:mm or -hh:mm (another writer than Atlas's serializer).
  int offset_minutes = 0;
  if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh, om;
    if (!num(i + 1, 2, oh) || s[i + 3] != ':' || !num(i + 4, 2, om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_minutes = (s[i] == '+' ? 1 : -1) * (oh * 60 + om);
  } else if (i + 1 != s.size() || s[i] != 'Z') {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year{y},
                                         std::chrono::month{static_cast<unsigned>(mo)},
                                         std::chrono::day{static_cast<unsigned>(d)}};
  if (!date.ok()) return std::nullopt;
  const std::int64_t days = std::chrono::sys_days{date}.time_since_epoch().count();
  return ((days * 24 + h) * 60 + mi - offset_minutes) * 60 * 1000000LL + sec * 1000000LL + micros;
}

std::int64_t wall_clock_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string format_iso8601_seconds(std::int64_t micros) {
  std::int64_t seconds = micros / 1000000;
  if (micros % 1000000 < 0) --seconds;
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(static_cast<std::time_t>(seconds)));
}

}  // namespace atlas2kudu
