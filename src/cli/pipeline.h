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
// window's share of --memory-budget; a window whose rows outgrow it all the same is folded and
// handed over in parts (WindowParts, compiler.h), every part after the whole window was read, and
// only the last with the reader (WindowApplied). A stop request (util/stop.h: SIGINT, SIGTERM,
// --deadline) is obeyed after each record read, with StopError: the windows handed over before
// are complete, the one being read has not started.
//
// With `read_ahead`, a second thread reads and parses each window while this one folds the events
// already read (Compiler::begin_window), so that a window costs about the longer of the two plus
// its writing instead of their sum. The output is the same byte for byte: the windows are cut and
// folded exactly as on one thread. The reading thread stops at the end of each window until the
// window has been written, so memory is as on one thread and the guarantees above hold unchanged.
// It is used only when nothing asks the prior state (a lookup needs the whole window before the
// first event is folded) and --window-events is at most kMaxReadAheadWindow (the window's events
// must not move while they are folded); the caller also keeps it to regular files, whose reads
// never wait on a producer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/prior_state.h"
#include "atlas2kudu/reader.h"
#include "cli/progress.h"

namespace atlas2kudu {

// Called after each window the writer has fully applied (e.g. to save a checkpoint), with the
// reader when its progress() at that moment is exactly what the window completed; with null
// after a part of a window that ended before its last event (WindowParts, compiler.h), when
// nothing but the whole window may be recorded as done.
using WindowApplied = std::function<void(const WindowInfo&, const Reader*)>;

// Called with what the compiler knows of a window's entities before folding it (a
// KnowledgeSnapshot, to write out before the fold begins) and the window's events, once its prior
// state is learnt and before any of it is folded (e.g. to keep it beside the checkpoint: a window
// applied again after a failure inside it is folded from it, in a first window that reads at
// least as far: FirstWindowEnd).
using WindowStarting =
    std::function<void(const KnowledgeSnapshot& knowledge, std::span<const Event> window)>;

// Whether the first window, `window` so far, may close once --window-events or --memory-budget
// would close it (CheckpointFile::first_window_may_close): a resumed run's first window covers
// the window the run it resumes stopped in, since that run may have written cells of any of its
// events, and a shorter window would fold the rest from the tables that hold them.
using FirstWindowEnd = std::function<bool(const Reader& reader, std::span<const Event> window)>;

struct PipelineStats {
  std::uint64_t windows = 0;       // windows handed to the writer
  std::uint64_t closed_early = 0;  // ... of which closed by the memory budget
};

// Runs the whole input through `compiler` into `writer`. `progress`, `on_applied` and `stats` may
// be null; `stats` is kept up to date as windows are written, so it is complete even when the run
// stops with an exception.
// `on_starting` and `first_window_read` rule out the read-ahead (which folds events before the
// window is whole).
void run_pipeline(Reader& reader, Compiler& compiler, PriorState& prior, WindowWriter& writer,
                  Progress* progress = nullptr, const WindowApplied& on_applied = nullptr,
                  PipelineStats* stats = nullptr, bool read_ahead = false,
                  const WindowStarting& on_starting = nullptr,
                  const FirstWindowEnd& first_window_read = nullptr);

// The largest --window-events the read-ahead takes (a window's events are allocated up front).
inline constexpr std::size_t kMaxReadAheadWindow = std::size_t{1} << 16;

// True if run_pipeline would read ahead when asked to.
bool read_ahead_possible(const Compiler& compiler, const PriorState& prior);

}  // namespace atlas2kudu
