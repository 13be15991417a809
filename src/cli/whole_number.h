// The check of every numeric option: a whole decimal number within its bounds, with a message a
// person can read.
//
// CLI11's own checks accept more and say less: an unsigned option took "-1" (wrapped round to the
// largest value: `--max-rejects -1` meant unlimited), "0x10" (hex) and a number past 2^64
// (saturated), and PositiveNumber's message printed its upper bound as a double of 300 digits.
//
//   ->check(whole_number(1))        // --window-events 0:
//   //   --window-events: expected a whole number of at least 1, got '0'
//   ->check(whole_number(2, 1000))  // --partitions 1001:
//   //   --partitions: expected a whole number from 2 to 1000, got '1001'
#pragma once

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

namespace atlas2kudu {

inline CLI::Validator whole_number(std::uint64_t min,
                                   std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  const bool unbounded = max == std::numeric_limits<std::uint64_t>::max();
  const std::string bounds = unbounded && min == 0 ? std::string()
                             : unbounded           ? fmt::format(" of at least {}", min)
                                                   : fmt::format(" from {} to {}", min, max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* const end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || stop != end || value < min || value > max) {
          return fmt::format("expected a whole number{}, got '{}'", bounds, text);
        }
        return {};
      },
      "");
}

}  // namespace atlas2kudu
