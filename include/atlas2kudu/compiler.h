// The compiler: folds Events into the net-effect Impala SQL of SPEC §3-§5.
//
// Streaming use (the CLI's `compile` and `apply` share this path; only the Executor differs):
//
//   NoPriorState prior;                       // or the Impala-backed PriorState for --prior impala
//   Compiler compiler(options, prior);
//   PrintExecutor out(stdout);                // or the HS2 executor
//   out.start(compiler.header());
//   while (reader has events) {
//     std::vector<Event> window = next options.window_events events;
//     out.run_window(compiler.compile_window(window));
//   }
//   out.finish();
//
// Windows must be handed over in input order; the compiler carries what earlier windows
// established about each entity (props, type, qualifiedName, tag set), so cutting the input into
// small windows gives the same tables as one big window. Memory: one window plus that per-entity
// state.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "atlas2kudu/event.h"
#include "atlas2kudu/executor.h"
#include "atlas2kudu/fold.h"
#include "atlas2kudu/options.h"
#include "atlas2kudu/prior_state.h"

namespace atlas2kudu {

class Compiler {
 public:
  // Throws std::invalid_argument for options no SQL can be written for (a database name Impala
  // cannot quote, props_max_bytes < 2, window_events == 0). `prior` must outlive the compiler.
  Compiler(const CompileOptions& options, PriorState& prior);

  // The script header, comment lines each "-- …\n": version, every option, the prior source.
  //   -- atlas2kudu 0.1.0 compile
  //   -- options: --database atlas --key-encoding hex --tombstone soft --prior none ...
  //   -- prior state: none (...)
  std::string header() const;

  // Compiles the next window (`events` in input order, any size; the caller cuts windows of
  // options.window_events). Window indexes and event numbers continue across calls.
  CompiledWindow compile_window(std::span<const Event> events);

  const CompileOptions& options() const { return options_; }

 private:
  CompileOptions options_;
  PriorState& prior_;
  Folder folder_;
  std::uint64_t windows_ = 0;
  std::uint64_t events_ = 0;
};

// Compiles `events` (in input order) with `options` and returns the complete dry-run script:
// header comment, then per window a comment, the delete phase and the upsert phase, each statement
// ending in ";\n". Executing the script on Kudu tables gives the same tables as applying every event
// one at a time in order (SPEC §5). Byte-identical for the same events and options.
// Uses NoPriorState; throws std::invalid_argument if options.prior is kImpala (no connection here).
std::string compile_to_sql(std::span<const Event> events, const CompileOptions& options);

}  // namespace atlas2kudu
