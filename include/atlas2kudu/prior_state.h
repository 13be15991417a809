// Prior state: what the projection tables already hold for the entities a window touches.
//
// The compiler needs stored state for three things the input may not establish itself: the props
// merge base, the old (type_name, qualified_name) of a rename, and the old tag set. Before folding
// each window it asks its PriorState, once, about every entity guid of that window it does not
// already carry state for (state the input established in earlier windows of the same run is
// carried by the compiler and never looked up again).
//
// Contract for implementations:
//   - lookup() receives distinct guids in ascending byte order and appends at most one
//     PriorEntity per guid to `out`, in any order. A guid left out is "unknown": the compiler
//     then writes exact SQL anyway (predicate deletes for renames and tag removals) and merges
//     props from {}.
//   - A returned PriorEntity is a promise about the store at the start of the window:
//     `exists` false means no entity_flat row; `tags` lists every entity_classifications row of
//     the guid. Returning wrong state makes the output wrong; when in doubt, leave the guid out.
//   - lookup() may throw; the compiler lets the exception through and compiles nothing for
//     the window.
//
// Example (an Impala-backed implementation, batched primary-key lookups over HS2):
//
//   SELECT `guid`, `type_name`, `qualified_name`, `props_json` FROM `atlas`.`entity_flat`
//     WHERE `guid` IN ('…', '…');
//   SELECT `guid`, `tag_name` FROM `atlas`.`entity_classifications` WHERE `guid` IN ('…', '…');
//   -> out = {PriorEntity{guid, exists = true, type_name = "hive_table",
//                         qualified_name = "db.t@c", props_json = R"({"owner":"a"})",
//                         tags = {"PII"}}, ...}
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "atlas2kudu/event.h"

namespace atlas2kudu {

struct PriorEntity {
  Guid guid;
  bool exists = false;  // an entity_flat row exists
  // Stored cells (nullopt = NULL); ignored when !exists.
  std::optional<std::string> type_name;
  std::optional<std::string> qualified_name;
  std::optional<std::string> props_json;
  std::vector<std::string> tags;  // tag_name of every entity_classifications row of this guid
};

class PriorState {
 public:
  virtual ~PriorState() = default;
  // One line for the SQL header, e.g. "none (only what this input establishes)".
  virtual std::string describe() const = 0;
  // See the contract above.
  virtual void lookup(std::span<const Guid> guids, std::vector<PriorEntity>& out) = 0;
  // lookup() for a caller that holds less at once (prepare_window): calls `each` with what was
  // found of each batch of `guids` as soon as the batch is read; `each` may move from the
  // entries. A throw may come after some batches were handed over. By default, one call with all
  // of lookup()'s answer.
  virtual void lookup_in_batches(std::span<const Guid> guids,
                                 const std::function<void(std::vector<PriorEntity>&)>& each);
  // True for a source that never knows anything (lookup() appends nothing whatever it is asked):
  // the compiler then does not work out the question.
  virtual bool knows_nothing() const { return false; }
};

// `--prior none`: knows nothing; every guid stays unknown.
class NoPriorState final : public PriorState {
 public:
  std::string describe() const override;
  void lookup(std::span<const Guid> guids, std::vector<PriorEntity>& out) override;
  bool knows_nothing() const override { return true; }
};

}  // namespace atlas2kudu
