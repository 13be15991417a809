// Executors run the statements of compiled windows. Dry run (`compile`) and execution (`apply`)
// differ only in the executor the SQL writer hands the same windows to (ninja's pattern: no
// `if (dry_run)` below main): the print executor (compile/print_executor.h) writes them as an
// impala-shell script, the HS2 executor (hs2/executor.h) runs them on Impala.
#pragma once

#include <string_view>

#include "atlas2kudu/compiler.h"

namespace atlas2kudu {

class Executor {
 public:
  virtual ~Executor() = default;
  // Called once before the first window with the script header (comment lines, each "-- ...\n").
  virtual void start(std::string_view header) = 0;
  // Runs (or prints) one window: every delete, then every upsert. Returns only when the whole
  // window is applied. Throws Error on failure.
  virtual void run_window(const CompiledWindow& window) = 0;
  // Called once after the last window.
  virtual void finish() = 0;
};

}  // namespace atlas2kudu
