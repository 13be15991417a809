// The sequential reference projector: the mapping of events to rows applied one event at a time, in
// input order, to a KuduStore. It is the "applying each event's operations one at a time in input
// order" side of the equivalence property (tests/kit/README.md), written for clarity, never for
// speed.
//
// Semantics chosen where the mapping rules leave room (the compiler must match them;
// tests/kit/README.md lists them with their reasons):
//   - CLASSIFICATION_* headers update entity_flat and entity_by_qn exactly like ENTITY_UPDATE (a
//     classification event's entity header merges as an update), then replace the tag set, then
//     append the audit row.
//   - props_json is written only when the event carries attributes (otherwise the stored value is
//     already the merge result). See merge_props() for the cap rule.
//   - by_qn: with a target digest D (from the event's qualifiedName, or, on a type change without
//     one, from the stored qualifiedName), rows of this guid under other digests are deleted, then
//     (D, guid, type) is upserted. On reachable states a guid has at most one by_qn row, so this is
//     "delete the old digest only where it still maps to this guid".
//   - Deletes: soft upserts (guid, state='DELETED', updated_ts) only, so a delete of an unknown
//     guid leaves a tombstone row with NULL type/name; the delete header's attributes, type and
//     name are not merged. Hard deletes remove the entity_flat row, by_qn rows of the guid, edges
//     with the guid at either end (both tables) and classification rows of the guid.
//   - entity_audit: (guid, event_ts, audit_seq) -> op, the event's type_name, its qualifiedName
//     (NULL when absent) and a small detail_json; relationship events write no audit row.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/event.h"
#include "kudu_store.h"

namespace atlas2kudu::testkit {

// Where the projector takes the "stored state" that merging needs (--prior).
enum class PriorKnowledge {
  // Read it from the store: what `--prior impala` gives the compiler. From empty tables (the
  // scenarios) this is also what `--prior none` gives, since then the input established all of it.
  kStore,
  // Use only what earlier events of this run established (what `--prior none` gives the compiler on
  // non-empty tables): the props merge base is {} for an entity whose props this run has not
  // written; a type change without qualifiedName re-keys only when this run saw the qualifiedName
  // (else it deletes the guid's by_qn rows, which are stale), and is noticed only when this run saw
  // the previous type. Renames and tag removals are exact either way.
  kInputOnly,
};

// props_json after merging `attributes` (in order, later wins) into `stored` (a JSON object text,
// empty or "{}" for none) and applying the cap of --props-max-bytes:
//   1. members = stored members except "_truncated", then each attribute (event wins per key);
//   2. truncated = stored "_truncated" list minus keys this event supplies again;
//   3. render {members..., "_truncated": sorted truncated (only when non-empty)} with keys in byte
//      order, compact, values as their JSON text, keys quoted by json_quote();
//   4. while the text is longer than `cap` bytes: drop the member with the largest value text
//      (ties: smallest key first), add its key to truncated, render again.
// Throws std::length_error when even {"_truncated":[...all keys...]} exceeds the cap.
std::string merge_props(std::string_view stored, std::span<const Attribute> attributes,
                        std::size_t cap);

class ReferenceProjector {
 public:
  // `store` is the prior state and receives every change; it must outlive the projector. The key
  // encoding is the store's; `options` gives tombstone and props_max_bytes (the rest is unused).
  ReferenceProjector(KuduStore& store, const CompileOptions& options,
                     PriorKnowledge prior = PriorKnowledge::kStore);

  void apply(const Event& event);
  void apply(std::span<const Event> events) {
    for (const auto& e : events) apply(e);
  }

 private:
  // What the projector believes the stored entity_flat columns are (see PriorKnowledge).
  struct Known {
    std::optional<std::optional<std::string>> type;  // outer nullopt: unknown
    std::optional<std::optional<std::string>> qn;
    std::optional<std::string> props;  // nullopt: unknown; "" : none
  };
  Known prior_of(const Guid& guid) const;

  void entity_header(const Event& e, bool create);
  void entity_delete(const Event& e);
  void classifications(const Event& e);
  void relationship(const Event& e);
  void audit(const Event& e);
  void delete_edges_of(const Guid& guid);

  KuduStore& store_;
  CompileOptions options_;
  PriorKnowledge prior_;
  std::unordered_map<Guid, Known> known_;  // kInputOnly: what this run established
};

// Convenience: a copy of `initial` with `events` applied.
KuduStore project(std::span<const Event> events, const CompileOptions& options,
                  const KuduStore& initial, PriorKnowledge prior = PriorKnowledge::kStore);

}  // namespace atlas2kudu::testkit
