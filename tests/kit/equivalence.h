// The equivalence oracle wired to the compiler: compile_to_sql(events, options), then
// check_equivalence() (harness.h). The only part of the kit that depends on the compiler.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/event.h"
#include "harness.h"
#include "kudu_store.h"

namespace atlas2kudu::testkit {

// (a) applies the reference projector to a copy of `initial`, (b) executes
// compile_to_sql(events, options) with the SQL interpreter on another copy (as written and with
// every phase reversed), (c) compares. nullopt when equivalent, else the reason followed by the SQL
// (cut to its first 200 lines) for the report.
std::optional<std::string> run_equivalence(std::span<const Event> events,
                                           const CompileOptions& options, const KuduStore& initial,
                                           const EquivalenceOptions& check = {});

// run_equivalence over a failing stream, shrunk to a minimal failing one (shrink_events), with
// the events listed (describe_events). nullopt when `events` passes.
std::optional<std::string> explain_equivalence_failure(std::span<const Event> events,
                                                       const CompileOptions& options,
                                                       const KuduStore& initial,
                                                       const EquivalenceOptions& check = {});

}  // namespace atlas2kudu::testkit
