#include "atlas2kudu/event.h"

#include <array>

#include "util/digest.h"
#include "util/keyed_hash.h"

namespace atlas2kudu {

namespace {

// Hex digit values, -1 for anything else; parsing guids is on the reader's hot path.
constexpr std::array<std::int8_t, 256> kHexValue = [] {
  std::array<std::int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 10; ++i) t['0' + i] = static_cast<std::int8_t>(i);
  for (int i = 0; i < 6; ++i) {
    t['a' + i] = static_cast<std::int8_t>(10 + i);
    t['A' + i] = static_cast<std::int8_t>(10 + i);
  }
  return t;
}();

inline int hex_value(char c) {
  return kHexValue[static_cast<unsigned char>(c)];
}

constexpr std::array<std::string_view, kOperationCount> kOperationNames = {
    "ENTITY_CREATE",       "ENTITY_UPDATE",         "ENTITY_DELETE",
    "CLASSIFICATION_ADD",  "CLASSIFICATION_DELETE", "CLASSIFICATION_UPDATE",
    "RELATIONSHIP_CREATE", "RELATIONSHIP_UPDATE",   "RELATIONSHIP_DELETE",
};

}  // namespace

std::optional<Guid> Guid::parse(std::string_view text) {
  const bool dashed = text.size() == 36;
  if (!dashed && text.size() != 32) return std::nullopt;
  if (dashed && (text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-')) {
    return std::nullopt;
  }
  // Byte k of the guid starts at this offset in the dashed form (plain hex: 2k).
  static constexpr std::array<std::uint8_t, 16> kDashedOffset = {0,  2,  4,  6,  9,  11, 14, 16,
                                                                 19, 21, 24, 26, 28, 30, 32, 34};
  Guid g;
  int bad = 0;
  for (std::size_t k = 0; k < 16; ++k) {
    const std::size_t at = dashed ? kDashedOffset[k] : 2 * k;
    const int hi = hex_value(text[at]);
    const int lo = hex_value(text[at + 1]);
    bad |= hi | lo;
    g.bytes[k] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  if (bad < 0) return std::nullopt;
  return g;
}

std::string Guid::hex() const {
  return to_hex(bytes);
}

std::string Guid::dashed() const {
  const std::string h = hex();
  return h.substr(0, 8) + '-' + h.substr(8, 4) + '-' + h.substr(12, 4) + '-' + h.substr(16, 4) +
         '-' + h.substr(20);
}

std::size_t GuidHash::operator()(const Guid& g) const noexcept {
  return siphash13_16(process_hash_key(), g.bytes.data());
}

std::string_view to_string(Operation op) {
  return kOperationNames[static_cast<std::size_t>(op)];
}

std::optional<Operation> parse_operation(std::string_view name) {
  for (std::size_t i = 0; i < kOperationNames.size(); ++i) {
    if (kOperationNames[i] == name) return static_cast<Operation>(i);
  }
  return std::nullopt;
}

}  // namespace atlas2kudu
