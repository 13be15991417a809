// The check of every numeric option: a whole decimal number within its bounds, with a message a
// person can read.
//
// CLI11's own checks accept more and say less: an unsigned option took "-1" (wrapped round to the
// largest value: `--max-rejects -1` meant unlimited), "0x10" (hex) and a number past 2^64
// (saturated), and PositiveNumber's message printed its upper bound as a double of 300 digits.
//
//   ->transform(whole_number(1))        // --window-events 0:
//   //   --window-events: expected a whole number of at least 1, got '0'
//   ->transform(whole_number(2, 1000))  // --partitions 1001:
//   //   --partitions: expected a whole number from 2 to 1000, got '1001'
//   ->transform(whole_number(0))        // --max-rejects 99999999999999999999999:
//   //   --max-rejects: 99999999999999999999999 is too large (at most 18446744073709551615)
//   // --max-rejects 010 is ten (decimal, as written; not octal 8)
//
// Sizes (--memory-budget) take a suffix, and are rewritten to their number of bytes:
//   ->transform(byte_size(64 << 20, "64M", max))  // --memory-budget 12X:
//   //   --memory-budget: expected a size such as 512M or 2G (a whole number of bytes, with an
//   //   optional k, m, g or t suffix: powers of 1024), got '12X'
#pragma once

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace atlas2kudu {

// `unit`, when given, is named in the refusal: "-t 10s" reads "expected a whole number of
// milliseconds from 0 to 2147483647, got '10s'".
inline CLI::Validator whole_number(std::uint64_t min,
                                   std::uint64_t max = std::numeric_limits<std::uint64_t>::max(),
                                   std::string_view unit = {}) {
  const bool unbounded = max == std::numeric_limits<std::uint64_t>::max();
  const std::string of_unit = unit.empty() ? std::string() : fmt::format(" of {}", unit);
  const std::string bounds = unbounded && min == 0 ? of_unit
                             : unbounded           ? fmt::format("{} of at least {}", of_unit, min)
                                         : fmt::format("{} from {} to {}", of_unit, min, max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* const end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (!text.empty() && error == std::errc::result_out_of_range && stop == end && unbounded) {
          return fmt::format("{} is too large (at most {})", text, max);
        }
        if (text.empty() || error != std::errc() || stop != end || value < min || value > max) {
          return fmt::format("expected a whole number{}, got '{}'", bounds, text);
        }
        // CLI11 then reads the text with base 0: "010" would be octal 8, "08" no number.
        text = std::to_string(value);
        return {};
      },
      "");
}

// A whole number of bytes with an optional k, m, g or t suffix (powers of 1024; upper case, and
// "kb" or "kib" after the number, alike), at least `min` (spelt `min_text` in messages) and at
// most `max`.
inline CLI::Validator byte_size(std::uint64_t min, std::string min_text, std::uint64_t max) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::string expected = fmt::format(
            "expected a size such as 512M or 2G (a whole number of bytes, with an optional k, "
            "m, g or t suffix: powers of 1024), got '{}'",
            text);
        std::uint64_t value = 0;
        const char* const begin = text.data();
        const char* const end = begin + text.size();
        const auto [stop, error] = std::from_chars(begin, end, value);
        if (stop == begin || (error != std::errc() && error != std::errc::result_out_of_range)) {
          return expected;
        }
        std::string unit(stop, end);
        for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        // "b" alone is bytes; "ib" only after a unit letter ("kib", not "64ib").
        if (unit.size() == 3 && unit.ends_with("ib")) {
          unit.resize(1);
        } else if (!unit.empty() && unit.size() <= 2 && unit.back() == 'b') {
          unit.pop_back();
        }
        const std::string_view units = "kmgt";
        if (unit.size() > 1 || (unit.size() == 1 && units.find(unit[0]) == std::string::npos)) {
          return expected;
        }
        const int shift = unit.empty() ? 0 : 10 * (static_cast<int>(units.find(unit[0])) + 1);
        if (error == std::errc::result_out_of_range || value > (max >> shift)) {
          return fmt::format("'{}' is too large (at most {} bytes)", text, max);
        }
        if ((value << shift) < min)
          return fmt::format("expected at least {}, got '{}'", min_text, text);
        text = std::to_string(value << shift);
        return {};
      },
      "");
}

}  // namespace atlas2kudu
