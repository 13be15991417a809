// The compiler: folds Events into the net-effect Impala SQL of SPEC §3-§5.
#pragma once

#include <span>
#include <string>

#include "atlas2kudu/event.h"
#include "atlas2kudu/options.h"

namespace atlas2kudu {

// Compiles `events` (in input order) with `options` and returns the complete dry-run script:
// header comment, then per window a comment, the delete phase and the upsert phase, each statement
// ending in ";\n". Executing the script on Kudu tables gives the same tables as applying every event
// one at a time in order (SPEC §5). Byte-identical for the same events and options.
std::string compile_to_sql(std::span<const Event> events, const CompileOptions& options);

}  // namespace atlas2kudu
