// The equivalence check (tests/kit/README.md), given the SQL text: the reference projector on one
// copy of the prior state, the SQL interpreter on another, then a structural comparison. Also tools
// to make a failure readable: a one-line-per-event description and a shrinker that cuts a failing
// stream down to a minimal one.
//
// equivalence.h adds the call to the compiler (compile_to_sql); this file does not depend on it so
// the kit builds and is tested without the compiler.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/event.h"
#include "kudu_store.h"
#include "reference_projector.h"

namespace atlas2kudu::testkit {

struct EquivalenceOptions {
  // compile_to_sql() has no prior-state source, so it compiles as `--prior none`: the projector
  // must then only know what the input establishes. From empty tables both modes agree.
  PriorKnowledge prior = PriorKnowledge::kInputOnly;
  // Run the script a second time with every phase in reverse statement order (the upserts of a
  // phase never name the same row and deletes commute, so they may run in any order) and require
  // the same tables.
  bool check_reversed_phases = true;
  // Reject two UPSERTs of one phase naming the same row (order-dependence).
  bool check_phase_conflicts = true;
  // Hold every statement to options.batch_rows / options.batch_bytes (InterpreterOptions).
  bool check_batch_limits = true;
};

// nullopt when executing `sql` on a copy of `initial` gives the same tables as the reference
// projector applying `events` one at a time to another copy; else a readable reason: the SQL error
// (statement number, token) or the first differing table/row/column, prefixed with which run
// (as written / phases reversed) failed. `options` must be the options the SQL was compiled with;
// the store's key encoding must match options.key_encoding.
std::optional<std::string> check_equivalence(std::span<const Event> events,
                                             const CompileOptions& options,
                                             const KuduStore& initial, std::string_view sql,
                                             const EquivalenceOptions& check = {});

// One line per event, for failure messages: "3: ENTITY_UPDATE 0000000b.. hive_table qn='x' t=2000
// attrs={owner} tags=[PII@0000000b..] seq=...".
std::string describe_events(std::span<const Event> events);

// Greedy delta debugging: returns a subsequence of `events` (order kept) for which `fails` is still
// true and from which no single event or chunk can be removed without `fails` turning false.
// Precondition: fails(events) is true. Calls `fails` O(n log n)..O(n^2) times.
std::vector<Event> shrink_events(std::vector<Event> events,
                                 const std::function<bool(std::span<const Event>)>& fails);

}  // namespace atlas2kudu::testkit
