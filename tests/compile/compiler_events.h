// Event builders for the compiler tests: short, readable streams without JSON.
#pragma once

// Designated initializers below leave the other EntitySpec fields at their defaults on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/event.h"

namespace atlas2kudu::test {

// Guid 0000000n-0000-4000-8000-00000000000n, like the scenario files.
inline Guid guid(int n) {
  Guid g;
  g.bytes[3] = static_cast<std::uint8_t>(n);
  g.bytes[6] = 0x40;
  g.bytes[8] = 0x80;
  g.bytes[15] = static_cast<std::uint8_t>(n);
  return g;
}

struct EntitySpec {
  int id = 1;
  std::string type = "hive_table";
  std::optional<std::string> qn;
  std::optional<std::string> name;
  std::vector<Attribute> attrs;
  std::int64_t ms = 1;
};

inline Event entity(Operation op, const EntitySpec& s) {
  Event e;
  e.op = op;
  e.guid = guid(s.id);
  e.type_name = s.type;
  e.qualified_name = s.qn;
  e.name = s.name;
  e.attributes = s.attrs;
  e.event_time_us = s.ms * 1000;
  // Distinct per (op, guid, time, content) like the hash of a real message.
  e.audit_seq = static_cast<std::int64_t>(static_cast<std::uint64_t>(s.ms) * 1000003u +
                                          static_cast<std::uint64_t>(op) * 101u +
                                          static_cast<std::uint64_t>(s.id));
  return e;
}
inline Event create(const EntitySpec& s) {
  return entity(Operation::kEntityCreate, s);
}
inline Event update(const EntitySpec& s) {
  return entity(Operation::kEntityUpdate, s);
}
inline Event remove(const EntitySpec& s) {
  return entity(Operation::kEntityDelete, s);
}

// A classification event whose complete tag set is `tags` (name, entity guid id).
inline Event tags(int id, std::vector<std::pair<std::string, int>> set, std::int64_t ms,
                  Operation op = Operation::kClassificationAdd) {
  Event e = entity(op, EntitySpec{.id = id, .type = "hive_table", .ms = ms});
  for (auto& [name, source] : set) {
    e.classifications.push_back(Classification{name, guid(source), "{}"});
  }
  return e;
}

inline Event relationship(Operation op, int src, int dst, std::string label, std::int64_t ms,
                          bool status_deleted = false) {
  Event e;
  e.op = op;
  e.type_name = "rel_type";
  e.relationship.type_name = "rel_type";
  e.relationship.label = std::move(label);
  e.relationship.end1 = RelationshipEnd{guid(src), "t" + std::to_string(src)};
  e.relationship.end2 = RelationshipEnd{guid(dst), "t" + std::to_string(dst)};
  e.relationship.status_deleted = status_deleted;
  e.event_time_us = ms * 1000;
  return e;
}

inline Attribute attr(std::string name, std::string json) {
  return Attribute{std::move(name), std::move(json)};
}

}  // namespace atlas2kudu::test
