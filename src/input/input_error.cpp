#include "input/input_error.h"

#include <fmt/core.h>

#include <array>

namespace atlas2kudu {

std::string_view to_string(RejectCode code) {
  static constexpr std::array<std::string_view, kRejectCodeCount> kNames = {
      "not-json",  "invalid-json",      "too-large",     "wrong-type", "missing-field",
      "bad-guid",  "unknown-operation", "unknown-type",  "hook-topic", "bad-encoding",
      "bad-split", "bad-relationship",  "duplicate-key",
  };
  return kNames[static_cast<std::size_t>(code)];
}

std::string format_position(const SourcePosition& pos) {
  std::string out = fmt::format("{}:{}:{}", pos.source, pos.line, pos.offset);
  if (pos.kafka) {
    out += fmt::format(" ({}/{}@{})", pos.kafka->topic, pos.kafka->partition, pos.kafka->offset);
  }
  return out;
}

}  // namespace atlas2kudu
