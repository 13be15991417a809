// The fold: one window of events in input order -> one net operation per projection row
// (SPEC §5), plus the predicate deletes the window needs.
//
// Every event is first mapped to the row operations of SPEC §3 (what a one-event-at-a-time writer
// would run), then folded into the pending net operation of each row it touches:
//   - an UPSERT merges its columns into the pending row (later values win per column);
//   - a keyed DELETE clears the pending row and marks it `delete_first`;
//   - a predicate DELETE (edge cascade, by_qn clean-up, tag clean-up) clears and marks every
//     pending row it matches *at that point of the sequence*, and is also recorded so that the
//     delete phase applies it to the rows the window never touched before it.
// The planner (plan.h) then emits all deletes (keyed rows with `delete_first`, and the recorded
// predicates) before all upserts. Why that equals sequential application:
//   - a row untouched before a predicate has its window-start state at the predicate's time, so
//     the delete phase decides it exactly as the sequence does;
//   - a row touched before a predicate is decided by the fold itself: if the predicate matched it,
//     its net operation starts with a keyed DELETE; if not, and the delete phase removes it anyway
//     because its window-start state matched, a pending upsert that lists every column puts it
//     back (predicates only exist on tables whose upserts always write full rows);
//   - an upsert after a delete lists every column (explicit NULLs), so nothing stale survives.
//
// Example (window: create A qn=x; rename A qn=y; soft-delete B with unknown state):
//   entity_by_qn: row digest(x) -> delete_first (cancelled by the rename's guarded delete),
//                 row digest(y) -> upsert (y, A, type);
//   by_qn clean-ups: {B: keep nothing}  ->  DELETE ... WHERE `guid` IN (B)
//   edge cascades: {B}                  ->  DELETE ... WHERE `src` IN (B) / `dst` IN (B)
//
// The fold also maintains EntityKnowledge: what the input established (or the prior state told)
// about each entity, carried across windows of one run.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "atlas2kudu/digest.h"
#include "atlas2kudu/event.h"
#include "atlas2kudu/options.h"
#include "atlas2kudu/prior_state.h"
#include "atlas2kudu/props.h"

namespace atlas2kudu {

// What is known about one entity's stored state after the events folded so far.
struct EntityKnowledge {
  enum class Cell : std::uint8_t { kUnknown, kNull, kValue };
  Cell type_state = Cell::kUnknown;
  std::string type_name;
  // kValue: entity_flat.qualified_name; kNull: no qualified name and no by_qn row maps to the guid.
  Cell qn_state = Cell::kUnknown;
  std::string qualified_name;
  bool props_known = false;
  Props props;
  bool tags_known = false;
  std::vector<std::string> tags;  // sorted
};

using KnowledgeMap = std::unordered_map<Guid, EntityKnowledge>;

// Net operation of one row: `delete_first` = a keyed DELETE runs in the delete phase;
// `upsert` = an UPSERT runs in the upsert phase (listing every column if delete_first).
struct RowOp {
  bool delete_first = false;
  bool upsert = false;
};

struct FlatRow : RowOp {
  enum Column : std::uint8_t {
    kTypeName = 1,
    kQualifiedName = 2,
    kName = 4,
    kState = 8,
    kCreatedTs = 16,
    kUpdatedTs = 32,
    kPropsJson = 64,
    kAll = 127,
  };
  Guid guid;
  std::uint8_t mask = 0;  // columns set since the last delete
  std::string type_name, qualified_name, name, props_json;
  bool state_deleted = false;
  std::int64_t created_ts = 0, updated_ts = 0;
};

struct ByQnRow : RowOp {
  QnDigest digest{};
  Guid guid;
  std::string type_name;
};

// edge_out: a = src, b = dst, b_type = dst_type. edge_in: a = dst, b = src, b_type = src_type.
struct EdgeRow : RowOp {
  Guid a;
  std::string elabel;
  Guid b;
  std::string b_type;
};

struct TagRow : RowOp {
  std::string tag_name;
  Guid guid;
  bool propagated = false;
  Guid source_guid;
  std::string attrs_json;
  std::int64_t updated_ts = 0;
};

struct AuditRow {
  Guid guid;
  std::int64_t event_ts = 0;
  std::int64_t seq = 0;
  Operation op = Operation::kEntityUpdate;
  std::string type_name;
  std::optional<std::string> qualified_name;
  std::string detail_json;
};

// "Delete the rows of `guid` except those in `keep`" (keep empty: all of them).
template <typename KeepT>
struct CleanUp {
  Guid guid;
  std::vector<KeepT> keep;  // sorted, distinct
};

// The folded window. Row vectors are in first-touch order; the planner sorts them.
struct NetWindow {
  std::vector<FlatRow> flat;
  std::vector<ByQnRow> by_qn;
  std::vector<EdgeRow> edge_out;
  std::vector<EdgeRow> edge_in;
  std::vector<TagRow> tags;
  std::vector<AuditRow> audit;
  // Guarded by_qn deletes whose old digest is known: delete `digest` where it maps to `guid`.
  std::vector<std::pair<QnDigest, Guid>> by_qn_guarded;
  // by_qn clean-ups for entities whose stored digest is unknown: delete every row mapping to the
  // guid except the digests kept (the intersection over the window).
  std::vector<CleanUp<QnDigest>> by_qn_cleanups;
  // Entities whose edges are deleted from both edge tables (src = guid or dst = guid).
  std::vector<Guid> edge_cascades;
  // Tag clean-ups for entities whose stored tag set is unknown.
  std::vector<CleanUp<std::string>> tag_cleanups;
};

// Folds windows. One instance per run: it owns the knowledge carried from window to window.
class Folder {
 public:
  Folder(const CompileOptions& options, PriorState& prior);

  // Folds `events` (one window, input order). Asks the prior state about entities not yet known.
  NetWindow fold(std::span<const Event> events);

  const KnowledgeMap& knowledge() const { return knowledge_; }

 private:
  class Window;
  void learn_prior(std::span<const Event> events);

  CompileOptions options_;
  PriorState& prior_;
  KnowledgeMap knowledge_;
};

// The detail_json of an audit row (SPEC §3): what the event changed, from the event alone, so a
// replay writes the identical row. {"attributes":[sorted names incl. name/qualifiedName when
// given]} plus "classifications":[distinct tag names, sorted] for classification events. Over
// `max_bytes`: {"_truncated":true,"attributes":N,"classifications":M}, or {} if even that is over.
std::string audit_detail_json(const Event& event, std::size_t max_bytes);

}  // namespace atlas2kudu
