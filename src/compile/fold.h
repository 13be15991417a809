// The fold (compiler.h, steps 1-3): one window of events in input order -> NetWindow, the net
// operation of every projection row it touches plus the predicate deletes it needs.
//
// The Folder also keeps EntityKnowledge: what the input established (or the prior state told)
// about each entity, carried from window to window of one run. The fold never does I/O: the
// caller learns prior state first (Compiler::learn).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/event.h"
#include "atlas2kudu/prior_state.h"
#include "compile/props.h"

namespace atlas2kudu {

// What is known about one entity's stored state after the events folded so far.
struct EntityKnowledge {
  enum class Cell : std::uint8_t { kUnknown, kNull, kValue };
  Cell type_state = Cell::kUnknown;
  std::string type_name;
  // kValue: entity_flat.qualified_name; kNull: no qualified name and no by_qn row maps to the guid.
  Cell qn_state = Cell::kUnknown;
  std::string qualified_name;
  // qn_digest(type_name, qualified_name) when digest_valid: renames compare against it on every
  // event, and SHA-256 is the most expensive step of the fold.
  bool digest_valid = false;
  QnDigest digest{};
  bool props_known = false;
  Props props;
  bool tags_known = false;
  std::vector<std::string> tags;  // sorted
};

using KnowledgeMap = std::unordered_map<Guid, EntityKnowledge>;

// Folds windows. One instance per run: it owns the knowledge carried from window to window.
class Folder {
 public:
  explicit Folder(const CompileOptions& options);

  // Compiler::unknown_entities.
  std::vector<Guid> unknown_entities(std::span<const Event> events) const;
  // Compiler::learn.
  void learn(std::span<const PriorEntity> prior);
  // Folds `events` (one window, input order) into `net` (empty rows, info already set).
  void fold(std::span<const Event> events, NetWindow& net);

  const KnowledgeMap& knowledge() const { return knowledge_; }

 private:
  class Window;

  CompileOptions options_;
  KnowledgeMap knowledge_;
};

// The detail_json of an audit row (SPEC §3): what the event changed, from the event alone, so a
// replay writes the identical row. {"attributes":[sorted names incl. name/qualifiedName when
// given]} plus "classifications":[distinct tag names, sorted] for classification events. Over
// `max_bytes`: {"_truncated":true,"attributes":N,"classifications":M}, or {} if even that is over.
std::string audit_detail_json(const Event& event, std::size_t max_bytes);

}  // namespace atlas2kudu
