// The order in which the executor's sessions take the statements of one phase. The statements of
// a phase never name the same row twice, so any order is correct. One session takes them in the
// phase's order, the order `compile` prints (a failure then names the statement a reader of the
// dry run expects, and nothing after it has run). Several sessions take them in an order that
// keeps the sessions busy on different tables and leaves the small statements for the end:
//   * a session asking for work gets a statement of the table with the fewest statements running
//     (so N sessions run N different tables while there are that many with work left: Kudu
//     spreads them over different tablets, and one table's slow statements do not hold up the
//     others);
//   * among those, the table with the most SQL bytes still waiting (a rough measure of the work:
//     the longest table starts first), then the table met first in the phase;
//   * within a table, the longest statement first (the phase ends with short ones, so the
//     sessions finish close together before the next phase may start).
// After stop() no statement is handed out any more (a failure: the others finish the statement
// they run and take no more).
//
// Worked example (a phase of five statements, three sessions; with one, next() gives 0 to 4):
//   0: entity_audit 9 KB   1: entity_audit 2 KB   2: entity_flat 6 KB   3: edge_in 1 KB
//   4: entity_flat 6 KB
//   PhaseSchedule schedule(statements, 3);
//   schedule.next();   // 2  (entity_flat: 12 KB waiting, the most; 2 before 4, equal sizes)
//   schedule.next();   // 0  (entity_audit: no statement running yet, 11 KB waiting)
//   schedule.next();   // 3  (edge_in: the only table with nothing running)
//   schedule.done(3);
//   schedule.next();   // 4  (every table runs one statement; entity_flat has the most waiting)
//   schedule.next();   // 1
//   schedule.next();   // nullopt: nothing left
//
// Thread-safe: the executor's workers share one schedule per phase.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"

namespace atlas2kudu {

class PhaseSchedule {
 public:
  // `statements` must outlive the schedule; `sessions` is how many workers share it.
  PhaseSchedule(std::span<const Statement> statements, std::size_t sessions);

  // The index of the next statement to run, or nullopt when none is left or after stop().
  std::optional<std::size_t> next();
  // Statement `index` (from next()) is over, whatever its outcome.
  void done(std::size_t index);
  // Hands out nothing more.
  void stop();
  bool stopped() const;

 private:
  struct Table {
    std::string_view name;
    std::vector<std::size_t> waiting;  // longest statement last (taken from the back)
    std::size_t waiting_bytes = 0;
    std::size_t running = 0;
  };

  std::span<const Statement> statements_;
  const bool in_order_;  // one session: the phase's own order
  std::size_t next_in_order_ = 0;
  mutable std::mutex mu_;
  std::vector<Table> tables_;          // in order of first appearance in the phase
  std::vector<std::size_t> table_of_;  // statement index -> index into tables_
  bool stopped_ = false;
};

}  // namespace atlas2kudu
