// The dry-run executor: prints compiled windows as an impala-shell script.
//
// Output for one window (statements end in ";\n"; a phase without statements says so):
//
//   -- window 1: events 1-3 (in.json:1 .. in.json:3)
//   -- window 1 phase 1: deletes (1 statement)
//   DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('…');
//   -- window 1 phase 2: upserts (2 statements)
//   -- entity_flat: 2 rows from 3 events, in.json:1 .. in.json:3      (compile --annotate only)
//   UPSERT INTO `atlas`.`entity_flat` (`guid`, …) VALUES
//   ('…', …);
//   …
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "atlas2kudu/executor.h"

namespace atlas2kudu {

class PrintExecutor final : public Executor {
 public:
  // Writes to `out` (not owned, not closed). Throws Error(kIo) when a write fails.
  explicit PrintExecutor(std::FILE* out);
  // Appends to `*out` (not owned).
  explicit PrintExecutor(std::string* out);

  void start(std::string_view header) override;
  WindowRun run_window(const CompiledWindow& window) override;
  void finish() override;

  // Appends the text run_window prints for `window` to `out`.
  static void format_window(const CompiledWindow& window, std::string& out);

 private:
  void write(std::string_view text);

  std::FILE* file_ = nullptr;
  std::string* string_ = nullptr;
  std::string buffer_;
};

}  // namespace atlas2kudu
