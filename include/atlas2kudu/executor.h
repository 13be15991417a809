// Executors run compiled windows. Dry run (`compile`) and execution (`apply`) differ only in the
// executor they hand the same compiled windows to (ninja's pattern: no `if (dry_run)` below main).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace atlas2kudu {

// One SQL statement, ready to send or print. `sql` has no trailing ";" or newline.
struct Statement {
  std::string table;  // unqualified projection table name, e.g. "entity_flat"
  std::string sql;
  std::size_t rows = 0;  // rows named (UPSERT) or keys listed (DELETE), for reporting
};

// The net effect of one window of events. Windows run in order; within a window every delete runs
// before any upsert; the statements of one phase never name the same row twice, so they may run in
// any order or concurrently.
struct CompiledWindow {
  std::uint64_t index = 0;        // 1-based
  std::uint64_t first_event = 0;  // 1-based event numbers covered, inclusive
  std::uint64_t last_event = 0;
  std::string comment;  // one line, without "-- "
  std::vector<Statement> deletes;
  std::vector<Statement> upserts;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Called once before the first window with the script header (comment lines, each "-- ...\n").
  virtual void start(std::string_view header) = 0;
  // Runs (or prints) one window; returns only when the whole window is applied. Throws on failure.
  virtual void run_window(const CompiledWindow& window) = 0;
  // Called once after the last window.
  virtual void finish() = 0;
};

}  // namespace atlas2kudu
