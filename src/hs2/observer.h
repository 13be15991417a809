// What the HS2 layer tells an observer while statements run on the server, so that the command
// line can log retries and reconnects and say when a statement has been waiting long (a log
// line every 10 s for a run nobody watches). hs2 never includes cli: the observer is installed
// from outside (Hs2Executor::observe, Hs2PriorState::observe).
//
//   class Watch final : public ExecutionObserver { ... };
//   Watch watch;
//   executor.observe(&watch);
//   // per statement, from the thread that runs it:
//   //   started({3, "upsert", 17, 400, "entity_flat"})
//   //   retry(..., {kRetrying, retry 1 of 5, back-off 512 ms, the error})
//   //   retry(..., {kReconnected, retry 1 of 5})
//   //   finished({3, "upsert", 17, 400, "entity_flat"})
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hs2/retry.h"

namespace atlas2kudu {

// Where a statement runs.
struct StatementAt {
  std::uint64_t window = 0;  // CompiledWindow::index; 0: the window being read (prior state)
  std::string_view phase;    // "delete" or "upsert"; "lookup" for a prior-state SELECT
  std::size_t position = 0;  // 1-based within the phase (within the window's lookups)
  std::size_t count = 0;     // statements in the phase; 0: not known (lookups)
  std::string_view table;
};

// Called from the threads that run statements, not serialised: an observer that writes
// somewhere locks for itself. A statement's started() is followed by exactly one finished(),
// whether it succeeded or failed; its retries and reconnects come in between.
class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  virtual void started(const StatementAt& at) = 0;
  virtual void retry(const StatementAt& at, const RetryNotice& notice) = 0;
  virtual void finished(const StatementAt& at) = 0;
};

// started() now and finished() when it goes out of scope, however the statement ends; retries()
// is what to hand RetryPolicy::run. Does nothing without an observer.
class ObservedStatement {
 public:
  ObservedStatement(ExecutionObserver* observer, const StatementAt& at)
      : observer_(observer), at_(at) {
    if (observer_) observer_->started(at_);
  }
  ~ObservedStatement() {
    if (observer_) observer_->finished(at_);
  }
  ObservedStatement(const ObservedStatement&) = delete;
  ObservedStatement& operator=(const ObservedStatement&) = delete;

  RetryObserver retries() const {
    if (!observer_) return {};
    return [this](const RetryNotice& notice) { observer_->retry(at_, notice); };
  }

 private:
  ExecutionObserver* observer_;
  StatementAt at_;
};

}  // namespace atlas2kudu
