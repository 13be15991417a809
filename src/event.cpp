#include "atlas2kudu/event.h"

#include <array>

#include "atlas2kudu/digest.h"

namespace atlas2kudu {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
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
  Guid g;
  std::size_t out = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (dashed && (i == 8 || i == 13 || i == 18 || i == 23)) {
      if (text[i] != '-') return std::nullopt;
      ++i;
      continue;
    }
    const int hi = hex_value(text[i]);
    const int lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    g.bytes[out++] = static_cast<std::uint8_t>(hi << 4 | lo);
    i += 2;
  }
  return g;
}

std::string Guid::hex() const { return to_hex(bytes); }

std::string Guid::dashed() const {
  const std::string h = hex();
  return h.substr(0, 8) + '-' + h.substr(8, 4) + '-' + h.substr(12, 4) + '-' + h.substr(16, 4) +
         '-' + h.substr(20);
}

std::size_t GuidHash::operator()(const Guid& g) const noexcept {
  // Guids are random (UUIDv4), so any 8 bytes are a good hash; mix both halves for safety
  // against crafted sequential guids.
  std::uint64_t a = 0, b = 0;
  for (int i = 0; i < 8; ++i) {
    a = (a << 8) | g.bytes[i];
    b = (b << 8) | g.bytes[i + 8];
  }
  return static_cast<std::size_t>(a ^ (b * 0x9e3779b97f4a7c15ULL));
}

std::string_view to_string(Operation op) { return kOperationNames[static_cast<std::size_t>(op)]; }

std::optional<Operation> parse_operation(std::string_view name) {
  for (std::size_t i = 0; i < kOperationNames.size(); ++i) {
    if (kOperationNames[i] == name) return static_cast<Operation>(i);
  }
  return std::nullopt;
}

}  // namespace atlas2kudu
