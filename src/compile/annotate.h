// compile --annotate: a comment line before each statement naming the events behind it, so that
// a reviewer can go from a statement back to the input.
//
// Example (window of examples/, one statement each):
//   -- entity_flat: 3 rows from 5 events, examples/hive_table.jsonl:12 ..
//   examples/hive_table.jsonl:40 UPSERT INTO `atlas`.`entity_flat` (...) VALUES ...;
//   -- entity_flat: guid 0b6f3c1e-2a4d-4e8f-9c1b-5d7e8f9a0b1c; event examples/a.jsonl:7
//   DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN ('0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c');
//
// Positions are FILE:LINE of the first and last event (input order) and how many; a statement of
// one row names it (the dashed guid; for an edge, both ends and its label). File names and labels
// are input, so they go through append_comment_text (impala_sql.h): a file named "x\nDROP TABLE"
// stays inside its comment line.
//
// The events of a row are found through WindowEvents, built once per window in O(events); the
// refused-row messages (refusals.h) use it too.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "compile/fold.h"  // EdgeKey

namespace atlas2kudu {

// The window's events indexed by what they write: entity (entity and classification events, by
// guid), edge (relationship events, by ends and label), audit row (entity and classification
// events, by guid, time and sequence; relationship events write none).
class WindowEvents {
 public:
  explicit WindowEvents(const NetWindow& net);

  // Appends to `out` the indexes (into net.events, ascending) of the events that wrote row
  // `net_row` of `table`: the entity's events for entity_flat and entity_by_qn, the classification
  // events naming the tag for entity_classifications (else the entity's), the relationship events
  // of the edge (and, for an edge deleted, the ENTITY_DELETE events of its ends, which delete it
  // too), the one event of an entity_audit row. Nothing for a row out of range.
  void of_row(std::string_view table, std::size_t net_row, std::vector<std::uint32_t>& out) const;
  // Appends the indexes of the entity and classification events of `guid`.
  void of_entity(const Guid& guid, std::vector<std::uint32_t>& out) const;

 private:
  struct AuditKey {
    Guid guid;
    std::int64_t event_ts = 0, seq = 0;
    friend bool operator==(const AuditKey&, const AuditKey&) = default;
  };
  struct AuditKeyHash {
    std::size_t operator()(const AuditKey& k) const noexcept;
  };

  const NetWindow& net_;
  std::unordered_map<Guid, std::vector<std::uint32_t>, GuidHash> entity_;
  std::unordered_map<EdgeKey, std::vector<std::uint32_t>, EdgeKeyHash> edge_;
  std::unordered_map<AuditKey, std::vector<std::uint32_t>, AuditKeyHash> audit_;
};

// Sets Statement::annotation of every statement of `window`, planned from `net` with
// CompileOptions::annotate (plan.h).
void annotate_window(const NetWindow& net, CompiledWindow& window);

}  // namespace atlas2kudu
