#include "hs2/phase_schedule.h"

#include <algorithm>
#include <tuple>

namespace atlas2kudu {

PhaseSchedule::PhaseSchedule(std::span<const Statement> statements, std::size_t sessions)
    : statements_(statements), in_order_(sessions <= 1), table_of_(statements.size()) {
  for (std::size_t i = 0; i < statements.size(); ++i) {
    const std::string_view name = statements[i].table;
    auto it = std::find_if(tables_.begin(), tables_.end(),
                           [&](const Table& t) { return t.name == name; });
    if (it == tables_.end()) it = tables_.insert(tables_.end(), Table{name, {}, 0, 0});
    it->waiting.push_back(i);
    it->waiting_bytes += statements[i].sql.size();
    table_of_[i] = static_cast<std::size_t>(it - tables_.begin());
  }
  for (Table& t : tables_) {
    // Taken from the back: the longest statement, and among equals the first in the phase.
    std::sort(t.waiting.begin(), t.waiting.end(), [&](std::size_t a, std::size_t b) {
      return std::make_tuple(statements[a].sql.size(), b) <
             std::make_tuple(statements[b].sql.size(), a);
    });
  }
}

std::optional<std::size_t> PhaseSchedule::next() {
  std::lock_guard lock(mu_);
  if (stopped_) return std::nullopt;
  if (in_order_) {
    if (next_in_order_ == statements_.size()) return std::nullopt;
    const std::size_t index = next_in_order_++;
    ++tables_[table_of_[index]].running;
    return index;
  }
  Table* best = nullptr;
  for (Table& t : tables_) {
    if (t.waiting.empty()) continue;
    if (!best || t.running < best->running ||
        (t.running == best->running && t.waiting_bytes > best->waiting_bytes)) {
      best = &t;
    }
  }
  if (!best) return std::nullopt;
  const std::size_t index = best->waiting.back();
  best->waiting.pop_back();
  best->waiting_bytes -= statements_[index].sql.size();
  ++best->running;
  return index;
}

void PhaseSchedule::done(std::size_t index) {
  std::lock_guard lock(mu_);
  --tables_[table_of_[index]].running;
}

void PhaseSchedule::stop() {
  std::lock_guard lock(mu_);
  stopped_ = true;
}

bool PhaseSchedule::stopped() const {
  std::lock_guard lock(mu_);
  return stopped_;
}

}  // namespace atlas2kudu
