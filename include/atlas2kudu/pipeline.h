// The run loop shared by `compile` and `apply`: read events, cut windows, compile each window, hand
// it to the executor. Dry run and execution differ only in the Executor passed in.
//
//   RejectSink rejects(policy);
//   Reader reader(files, rejects);
//   NoPriorState prior;
//   Compiler compiler(options, prior);
//   PrintExecutor printer(stdout);
//   RunStats stats;
//   run_pipeline(reader, compiler, printer, stats);   // throws TooManyRejects, SourceError, ...
//
// A window is handed to the executor only once all its events were read: when a bad record stops
// the run (TooManyRejects), nothing of the window it fell in has been executed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/executor.h"
#include "atlas2kudu/progress.h"
#include "atlas2kudu/reader.h"

namespace atlas2kudu {

struct TableCounts {
  std::uint64_t delete_statements = 0;
  std::uint64_t upsert_statements = 0;
  std::uint64_t delete_rows = 0;  // keys listed in deletes
  std::uint64_t upsert_rows = 0;  // rows written by upserts
};

struct RunStats {
  std::uint64_t windows = 0;
  std::uint64_t statements = 0;
  std::uint64_t sql_bytes = 0;
  std::map<std::string, TableCounts> tables;  // by table name, sorted
};

// Called after each window the executor has fully applied (e.g. to save a checkpoint). The
// reader's progress() at that moment is exactly what the window completed.
using WindowApplied = std::function<void(const CompiledWindow&, const Reader&)>;

// Runs the whole input through `compiler` into `executor`. `progress` and `on_applied` may be null.
void run_pipeline(Reader& reader, Compiler& compiler, Executor& executor, RunStats& stats,
                  Progress* progress = nullptr, const WindowApplied& on_applied = nullptr);

// The --stats JSON for compile/apply: the reader's counts plus windows, statements, per table.
// `extra_members` (",\"name\":value,...") is added inside the object, e.g. apply's execution counts.
std::string run_stats_json(std::string_view command, const ReadStats& read, const RunStats& run,
                           bool completed, double seconds, std::string_view extra_members = {});

}  // namespace atlas2kudu
