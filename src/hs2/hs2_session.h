// The real SqlSession: one HiveServer2 session with Impala, used the way impala-shell runs DML:
//   OpenSession(V6) → ExecuteStatement (async, -Q options in confOverlay) → poll
//   GetOperationStatus (at once, then poll_interval) → CloseImpalaOperation (rows_modified summed
//   over partitions, num_row_errors).
// Three round trips per statement that finishes by the first check. Unlike impala-shell, no
// GetLog after success: it only prints the log's warnings, and the counts this tool reports come
// with CloseImpalaOperation. After ERROR_STATE the log is read (GetLog, then the close), since the
// Kudu status may be only there.
// Failures are classified as session.h describes: transport trouble is kTransient (and drops the
// connection, whose byte stream is out of step), a lost session kSessionLost, a rejected statement
// kDefinite with the server's message. connect() retries the transport's open on transient
// failures, --connect_max_tries tries in all, with the RetryPolicy's back-off; OpenSession and
// statements are never re-run here.
//
// Example:
//   Hs2Session session(settings, make_authenticator(settings, credentials));
//   session.connect();                                   // transport + OpenSession
//   session.ping();                                      // "impalad version 4.4.0 ..."
//   Hs2DmlResult r = session.execute("UPSERT INTO `atlas`.`t` VALUES ('k', 1)");
//   session.close();                                     // CloseSession, bounded by 5 s
// Tests watch the waits instead of sleeping (clock.h):
//   auto clock = std::make_shared<ManualClock>();
//   Hs2Session session(settings, auth, {.clock = clock});
//   session.execute(sql);   // the server answered RUNNING 12 times:
//                           // clock->slept == {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1} ms
//                           // (poll_interval: 1 ms until 32 ms have passed, then 2 ms, ...)
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "hs2/auth.h"
#include "hs2/clock.h"
#include "hs2/credentials.h"
#include "hs2/options.h"
#include "hs2/session.h"
#include "hs2/transport.h"

namespace atlas2kudu {

// How long to wait before the next GetOperationStatus, given the time since ExecuteStatement
// returned (the first check is immediate): a sixteenth of that time, at least 1 ms and at most 1 s.
// The end of a statement that ran T is then noticed by T + T/16 (plus one round trip), and a
// statement under 32 ms within 1 ms: a 20 ms statement costs at most 21 ms, where impyla's fixed
// steps (10 ms until 50 ms, 50 ms until 1 s, 100 ms until 10 s, 500 ms until 60 s, then 1 s)
// notice it only at 30 ms if it ran just over 20 ms, and impala-shell's (100 ms for the first
// 10 s) at 100 ms. The steps grow with the time already spent, so long statements are polled
// less than by those fixed steps:
//   elapsed 0-31 ms: 1 ms; 32 ms: 2 ms; 160 ms: 10 ms; 1.6 s: 100 ms; 16 s and later: 1 s
// (about 20 polls for a 20 ms statement, 90 for 1 s, 180 for 60 s; impyla: 3, 25, 215). With an
// eighth instead, a 20 ms statement took 0.75 ms longer on average (bench/RESULTS.md part
// thirty-one) for the same number of polls; only statements past 32 ms are polled more.
std::chrono::milliseconds poll_interval(std::chrono::milliseconds elapsed);

// A server whose OpenSession reply lists LONG_POLLING_TIME_MS (Impala 4.5 and later) is asked to
// hold each poll of a running statement up to kLongPoll, in the confOverlay of every statement,
// unless -Q sets that option (its value is then the hold). A poll held that long (at least half
// of it) is followed by the next at once; poll_interval applies otherwise. The end of a statement
// is then seen within a round trip, in one poll per kLongPoll:
//   a 20 ms statement: 1 poll (20 without it); 1 s: 2 or 3 (90); 60 s: 120 (180).
// Below kSocketStopGrace, so that a stop lets a held poll end by itself and still cancels the
// statement over its connection (util/stop.h).
inline constexpr std::string_view kLongPollOption = "LONG_POLLING_TIME_MS";
inline constexpr std::chrono::milliseconds kLongPoll{500};

// Replacements for what a session uses from the outside world; empty members are the real ones.
struct Hs2SessionHooks {
  // Reads the time for polling, and waits: polls, connect back-off, HTTP Retry-After.
  std::shared_ptr<Clock> clock = nullptr;
  // Makes the (unopened) transport of each connect; default make_hs2_transport.
  std::function<std::shared_ptr<Hs2Transport>()> make_transport = nullptr;
  // hs2-http's waits on 502/503/504 (transport.h); empty: not told.
  HttpWaitNotice http_wait = nullptr;
};

class Hs2Session final : public SqlSession {
 public:
  using Hooks = Hs2SessionHooks;

  Hs2Session(Hs2Settings settings, std::shared_ptr<const Authenticator> authenticator,
             Hooks hooks = {});
  ~Hs2Session() override;
  Hs2Session(const Hs2Session&) = delete;
  Hs2Session& operator=(const Hs2Session&) = delete;

  void connect() override;
  bool connected() const override;
  Hs2DmlResult execute(std::string_view sql) override;
  Hs2QueryResult query(std::string_view sql) override;
  void drop() noexcept override;
  // CloseSession bounded by Hs2Options::close_timeout_ms, so that a hung server cannot hang the
  // end of a run even with --socket_timeout_ms 0.
  void close() noexcept override;

  // PingImpalaHS2Service: the server's version string.
  std::string ping();
  // OpenSession's configuration map (Impala lists every query option it knows).
  const std::map<std::string, std::string>& server_configuration() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace atlas2kudu
