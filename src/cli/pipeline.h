// The run loop shared by `compile` and `apply`: read events, cut windows, ask the prior state
// about each window's unknown entities, fold, hand the folded window to the writer. Dry run and
// execution differ only in the writer's executor.
//
//   RejectSink rejects(policy);
//   Reader reader(files, rejects);
//   Compiler compiler(options);
//   NoPriorState prior;
//   PrintExecutor printer(stdout);
//   SqlWindowWriter writer(options, printer);
//   run_pipeline(reader, compiler, prior, writer);   // throws Error (TooManyRejects, ...)
//
// A window is handed to the writer only once all its events were read: when a bad record stops
// the run (TooManyRejects), nothing of the window it fell in has been executed. Windows are cut by
// WindowCutter (compiler.h): --window-events events, or fewer when their state would outgrow the
// window's share of --memory-budget. A stop request (util/stop.h: SIGINT, SIGTERM, --deadline) is
// obeyed after each record read, with StopError: the windows handed over before are complete, the
// one being read has not started.
#pragma once

#include <cstdint>
#include <functional>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/prior_state.h"
#include "atlas2kudu/reader.h"
#include "cli/progress.h"

namespace atlas2kudu {

// Called after each window the writer has fully applied (e.g. to save a checkpoint). The reader's
// progress() at that moment is exactly what the window completed.
using WindowApplied = std::function<void(const WindowInfo&, const Reader&)>;

struct PipelineStats {
  std::uint64_t windows = 0;       // windows handed to the writer
  std::uint64_t closed_early = 0;  // ... of which closed by the memory budget
};

// Runs the whole input through `compiler` into `writer`. `progress`, `on_applied` and `stats` may
// be null; `stats` is kept up to date as windows are written, so it is complete even when the run
// stops with an exception.
void run_pipeline(Reader& reader, Compiler& compiler, PriorState& prior, WindowWriter& writer,
                  Progress* progress = nullptr, const WindowApplied& on_applied = nullptr,
                  PipelineStats* stats = nullptr);

}  // namespace atlas2kudu
