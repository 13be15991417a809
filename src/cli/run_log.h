// The log of a run nobody watches: when stderr is not a terminal (cron, systemd, a pipe into a
// log shipper), `compile` and `apply` write one line per window, one per retry and reconnect, and
// one every 10 s while a statement waits on the server. On a terminal the live progress line
// (progress.h) counts the windows' work instead, but the retry, reconnect and waiting lines are
// written all the same, over the progress line (cleared first; it is drawn again below at its
// next update): a server that went away or a statement that hangs is never met in silence.
//
// Text (--log-format text, the default): an ISO 8601 UTC time, "atlas2kudu COMMAND:", the window,
// then what happened (each example is one line):
//   2026-11-30T23:41:07Z atlas2kudu apply: window 3: 50000 events, 412 statements,
//       61234 rows, 0 row errors, 0 retries, 2.41 s
//   2026-11-30T23:41:09Z atlas2kudu apply: window 4: retry 1 of 3 in 0.5 s:
//       upsert statement 17 of 400 (table entity_flat): <the server's message>
//   2026-11-30T23:41:09Z atlas2kudu apply: window 4: reconnected for retry 1 of 3:
//       upsert statement 17 of 400 (table entity_flat)
//   2026-11-30T23:41:30Z atlas2kudu apply: window 4: still waiting on the server after 20 s:
//       upsert statement 17 of 400 (table entity_flat)
//   2026-11-30T23:41:45Z atlas2kudu apply: window 5: still waiting on the server after 10 s:
//       prior-state lookup 1 (table entity_flat)
// JSON (--log-format json): the same, one object per line, keys in this order:
//   {"time":"2026-11-30T23:41:07Z","command":"apply","event":"window","window":3,"events":50000,
//    "statements":412,"rows":61234,"row_errors":0,"retries":0,"rows_already_deleted":0,
//    "elapsed_seconds":2.41}
//   {"time":...,"event":"retry","window":4,"phase":"upsert","statement":17,"statements":400,
//    "table":"entity_flat","retry":1,"max_retries":3,"backoff_seconds":0.500,"error":"..."}
//   {"time":...,"event":"reconnect",...,"retry":1,"max_retries":3}
//   {"time":...,"event":"waiting",...,"waited_seconds":20}
// Prior-state lookups (--prior impala: apply's default, compile -i) are "phase":"lookup" with
// "statements":0; their retries are not counted in the window line's (nor in --stats' "retries"),
// which are the statements', but in --stats' "prior_lookups" and the summary. `rows`: rows
// modified as the server reported them (apply), rows and keys in the statements (compile).
// `elapsed`: from the end of the window before (or the start) to this one applied.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "hs2/http_wait.h"
#include "hs2/observer.h"
#include "util/json_writer.h"

namespace atlas2kudu {

enum class LogFormat { kText, kJson };

// One window's counts for the log.
struct WindowLogLine {
  // False for compile: nothing ran, so there are no row errors or retries to report, and the line
  // leaves them out rather than print zeros.
  bool executed = true;
  std::uint64_t index = 0;
  std::uint64_t events = 0;
  std::uint64_t statements = 0;
  std::int64_t rows = 0;
  std::int64_t row_errors = 0;
  std::uint64_t retries = 0;
  // Rows deletes found already deleted (Hs2RunStats::rows_already_deleted): in the JSON line
  // whenever it ran, in the text line when there were any.
  std::uint64_t rows_already_deleted = 0;
  double seconds = 0;
  // The window closed early on --memory-budget (its comment ends with kClosedEarlyComment):
  // WindowCutter closed it, or it is a part WindowParts ended.
  bool closed_early = false;
};

class RunLog {
 public:
  // `windows`: write window lines (false with -q, and on a terminal); retries, reconnects and
  // waits are written whenever the log is enabled. `enabled` false: nothing at all.
  // `over_progress_line`: each line first clears the terminal's line (Progress draws there).
  RunLog(std::string_view command, LogFormat format, bool enabled, bool windows,
         std::FILE* out = stderr, bool over_progress_line = false);

  void window(const WindowLogLine& line);
  void retry(const StatementAt& at, const RetryNotice& notice);
  void waiting(const StatementAt& at, std::chrono::seconds waited);
  // A delete statement whose `rows` its scan found were deleted by another statement before the
  // delete reached them (Hs2RunStats::rows_already_deleted). Written as window lines are (not
  // with -q, nor on a terminal, where the summary counts them), event "already-deleted".
  // `sessions`: the run's --sessions; with one, no statement of the run ran beside it.
  //   window 2: delete statement 3 of 9 (table edge_out): 2 rows already deleted when the
  //       delete reached them (by another statement: one of this run's other sessions, or
  //       another writer's); not counted as row errors
  //   (with --sessions 1: "... (by another writer's statement); ...")
  //   {"time":...,"event":"already-deleted","window":2,"phase":"delete","statement":3,
  //    "statements":9,"table":"edge_out","rows":2}
  void already_deleted(const StatementAt& at, std::uint64_t rows, int sessions);
  // hs2-http's wait on a 502/503/504 (hs2/http_wait.h), as it starts. Counted
  // even when the log is disabled: --stats and the metrics report them (http_waits).
  void http_wait(const HttpWait& wait);
  std::uint64_t http_waits() const { return http_waits_.load(); }

 private:
  // Writes one line: `text` after the time and command, or the JSON object of the time,
  // command, event name and what `members` writes.
  void write(std::string_view event, std::string_view text,
             const std::function<void(JsonWriter&)>& members);

  std::string command_;
  LogFormat format_;
  bool enabled_;
  bool windows_;
  std::FILE* out_;
  bool over_progress_line_;
  std::mutex mu_;
  std::atomic<std::uint64_t> http_waits_{0};  // from the threads of --sessions
};

// Installed on the HS2 executor (Hs2Executor::observe): logs retries and reconnects, and every
// `interval` a statement has been waiting on the server, a line saying so (from a thread of its
// own, which the destructor ends). The wait is timed from the start of the statement's current
// try: a retry's back-off is not waiting on the server.
class ServerWatch final : public ExecutionObserver {
 public:
  static constexpr std::chrono::seconds kInterval{10};

  explicit ServerWatch(RunLog& log, std::chrono::seconds interval = kInterval);
  ~ServerWatch() override;

  void started(const StatementAt& at) override;
  void retry(const StatementAt& at, const RetryNotice& notice) override;
  void finished(const StatementAt& at) override;

  // The window being read, which the prior-state lookups (StatementAt::window 0) are for.
  void reading(std::uint64_t window) { reading_ = window; }

 private:
  StatementAt placed(StatementAt at) const;

  struct Running {
    std::chrono::steady_clock::time_point since;
    int reported = 0;  // waiting lines written so far
  };
  void watch();

  RunLog& log_;
  std::chrono::seconds interval_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool done_ = false;
  std::map<const StatementAt*, Running> running_;  // valid between started() and finished()
  std::atomic<std::uint64_t> reading_{1};
  std::thread thread_;
};

}  // namespace atlas2kudu
