#include "input/input_error.h"

#include <fmt/format.h>

#include <array>
#include <iterator>

#include "util/utf8.h"

namespace atlas2kudu {

std::string_view to_string(RejectCode code) {
  static constexpr std::array<std::string_view, kRejectCodeCount> kNames = {
      "not-json",  "invalid-json",      "too-large",     "wrong-type",          "missing-field",
      "bad-guid",  "unknown-operation", "unknown-type",  "hook-topic",          "bad-encoding",
      "bad-split", "bad-relationship",  "duplicate-key", "unsupported-version",
  };
  return kNames[static_cast<std::size_t>(code)];
}

std::string format_position(const SourcePosition& pos) {
  // Names and topics may hold anything, a newline included: the position stays on its line.
  std::string out = one_line(pos.source);
  fmt::format_to(std::back_inserter(out), ":{}:{}", pos.line, pos.offset);
  if (pos.kafka && pos.kafka->topic.empty()) {
    // A console consumer's prefixes name no topic.
    fmt::format_to(std::back_inserter(out), " (partition {}, offset {})", pos.kafka->partition,
                   pos.kafka->offset);
  } else if (pos.kafka) {
    fmt::format_to(std::back_inserter(out), " ({}/{}@{})", one_line(pos.kafka->topic),
                   pos.kafka->partition, pos.kafka->offset);
  }
  return out;
}

}  // namespace atlas2kudu
