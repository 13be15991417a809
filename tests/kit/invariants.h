// Structural invariants of projection tables built by the reference projector from reachable
// states.
//
// They hold after every event applied by the reference projector with full knowledge
// (PriorKnowledge::kStore), from empty tables or from any store generate_store() produces. They are
// a self-check of the projector and a cheap extra assertion on anything else that writes the tables
// (an executed compiled script must satisfy them too, since it must equal the projector's result).
// They do NOT hold in general for `--prior none` on non-empty tables: a type change the run cannot
// see leaves a by_qn row under the old type (see PriorKnowledge::kInputOnly).
#pragma once

#include <optional>
#include <string>

#include "atlas2kudu/compiler.h"
#include "kudu_store.h"

namespace atlas2kudu::testkit {

// nullopt when all hold, else the first violation:
//   - edge_out and edge_in hold the same (src, elabel, dst) triples;
//   - every entity_by_qn row (d -> g, t) has an ACTIVE entity_flat row g with type_name t and
//     qn_digest(t, qualified_name) == d; a guid appears in at most one by_qn row;
//   - entity_flat.state is 'ACTIVE' or 'DELETED' (never 'DELETED' under --tombstone hard); ACTIVE
//   rows
//     have a type_name; props_json is NULL or a JSON object of at most options.props_max_bytes;
//   - entity_classifications: attrs_json is NULL or a JSON object, propagated == (source_guid !=
//   guid);
//   - entity_audit.op names an entity or classification operation.
std::optional<std::string> check_invariants(const KuduStore& store, const CompileOptions& options);

}  // namespace atlas2kudu::testkit
