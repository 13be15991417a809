// The order in which the executor's sessions take the statements of one phase. Any order is
// correct: the upserts of a phase never name the same row twice, and its deletes commute. One
// session takes them in the phase's order, the order `compile` prints (a failure then names the
// statement a reader of the dry run expects, and nothing after it has run). Several sessions take
// them in an order that keeps the sessions busy on different tables and leaves the small statements
// for the end:
//   * a session asking for work gets a statement of the table with the fewest statements running
//     (so N sessions run N different tables while there are that many with work left: Kudu
//     spreads them over different tablets, and one table's slow statements do not hold up the
//     others);
//   * among those, the table with the most SQL bytes still waiting (a rough measure of the work:
//     the longest table starts first), then the table met first in the phase;
//   * within a table, the longest statement first (the phase ends with short ones, so the
//     sessions finish close together before the next phase may start).
// Statements marked after_the_rest (entity_flat's: CompiledWindow says why) are handed out only
// once every other statement is done; a session asking before then waits (next() blocks), unless
// there is nothing else left for it. One session takes the others first, then these, each in
// the phase's order (the planner puts them last: the order compile prints).
// After stop() no statement is handed out any more (a failure: the others finish the statement
// they run and take no more), and next() returns nullopt, also to a session waiting.
//
// Worked example (a phase of six statements, three sessions; with one, next() gives 0 to 5):
//   0: entity_audit 9 KB   1: entity_audit 2 KB   2: entity_by_qn 6 KB   3: edge_in 1 KB
//   4: entity_by_qn 6 KB   5: entity_flat 8 KB (after_the_rest)
//   PhaseSchedule schedule(statements, 3);
//   schedule.next();   // 2  (entity_by_qn: 12 KB waiting, the most; 2 before 4, equal sizes)
//   schedule.next();   // 0  (entity_audit: no statement running yet, 11 KB waiting)
//   schedule.next();   // 3  (edge_in: the only table with nothing running)
//   schedule.done(3);
//   schedule.next();   // 4  (every table runs one statement; entity_by_qn has the most waiting)
//   schedule.next();   // 1
//   schedule.next();   // waits: 5 must wait for 0, 1, 2 and 4 ...
//   schedule.done(0); schedule.done(1); schedule.done(2); schedule.done(4);
//                      // ... and now returns 5
//   schedule.next();   // nullopt: nothing left
//
// Thread-safe: the executor's workers share one schedule per phase.
#pragma once

#include <condition_variable>
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
  // Blocks while only statements marked after_the_rest are left and others still run.
  std::optional<std::size_t> next();
  // Statement `index` (from next()) is over, whatever its outcome.
  void done(std::size_t index);
  // Hands out nothing more.
  void stop();
  bool stopped() const;

 private:
  struct Table {
    std::string_view name;
    bool after_the_rest = false;
    std::vector<std::size_t> waiting;  // longest statement last (taken from the back)
    std::size_t waiting_bytes = 0;
    std::size_t running = 0;
  };

  std::span<const Statement> statements_;
  const bool in_order_;             // one session: the phase's own order, the rest first
  std::vector<std::size_t> order_;  // in_order_: the order statements are handed out
  std::size_t next_in_order_ = 0;
  std::size_t rest_not_done_ = 0;   // statements not marked after_the_rest, not done yet
  std::size_t last_not_given_ = 0;  // statements marked after_the_rest, not handed out yet
  mutable std::mutex mu_;
  std::condition_variable rest_done_;  // rest_not_done_ reached 0, or stop()
  std::vector<Table> tables_;          // in order of first appearance in the phase
  std::vector<std::size_t> table_of_;  // statement index -> index into tables_
  bool stopped_ = false;
};

}  // namespace atlas2kudu
