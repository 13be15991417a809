#include "hs2/phase_schedule.h"

#include <algorithm>
#include <tuple>

namespace atlas2kudu {

PhaseSchedule::PhaseSchedule(std::span<const Statement> statements, std::size_t sessions)
    : statements_(statements), in_order_(sessions <= 1), table_of_(statements.size()) {
  for (std::size_t i = 0; i < statements.size(); ++i) {
    const std::string_view name = statements[i].table;
    const bool last = statements[i].after_the_rest;
    auto it = std::find_if(tables_.begin(), tables_.end(), [&](const Table& t) {
      return t.name == name && t.after_the_rest == last;
    });
    if (it == tables_.end()) it = tables_.insert(tables_.end(), Table{name, last, {}, 0, 0});
    it->waiting.push_back(i);
    it->waiting_bytes += statements[i].sql.size();
    table_of_[i] = static_cast<std::size_t>(it - tables_.begin());
    ++(last ? last_not_given_ : rest_not_done_);
  }
  for (Table& t : tables_) {
    // Taken from the back: the longest statement, and among equals the first in the phase.
    std::sort(t.waiting.begin(), t.waiting.end(), [&](std::size_t a, std::size_t b) {
      return std::make_tuple(statements[a].sql.size(), b) <
             std::make_tuple(statements[b].sql.size(), a);
    });
  }
  if (in_order_) {
    for (const bool last : {false, true}) {
      for (std::size_t i = 0; i < statements.size(); ++i) {
        if (statements[i].after_the_rest == last) order_.push_back(i);
      }
    }
  }
}

std::optional<std::size_t> PhaseSchedule::next() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (stopped_) return std::nullopt;
    if (in_order_) {
      // One session: next() comes after done() of the statement before, so the rest is done
      // when the first statement marked after_the_rest is reached.
      if (next_in_order_ == order_.size()) return std::nullopt;
      const std::size_t index = order_[next_in_order_++];
      ++tables_[table_of_[index]].running;
      if (statements_[index].after_the_rest) --last_not_given_;
      return index;
    }
    Table* best = nullptr;
    for (Table& t : tables_) {
      if (t.waiting.empty() || (t.after_the_rest && rest_not_done_ > 0)) continue;
      if (!best || t.running < best->running ||
          (t.running == best->running && t.waiting_bytes > best->waiting_bytes)) {
        best = &t;
      }
    }
    if (best) {
      const std::size_t index = best->waiting.back();
      best->waiting.pop_back();
      best->waiting_bytes -= statements_[index].sql.size();
      ++best->running;
      if (best->after_the_rest) --last_not_given_;
      return index;
    }
    if (last_not_given_ == 0 || rest_not_done_ == 0) return std::nullopt;
    rest_done_.wait(lock);
  }
}

void PhaseSchedule::done(std::size_t index) {
  std::lock_guard lock(mu_);
  --tables_[table_of_[index]].running;
  if (!statements_[index].after_the_rest && --rest_not_done_ == 0) rest_done_.notify_all();
}

void PhaseSchedule::stop() {
  std::lock_guard lock(mu_);
  stopped_ = true;
  rest_done_.notify_all();
}

bool PhaseSchedule::stopped() const {
  std::lock_guard lock(mu_);
  return stopped_;
}

}  // namespace atlas2kudu
