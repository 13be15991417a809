// Stopping a run before its end: SIGINT, SIGTERM, or the --deadline. A stop request is set once
// (the first reason wins) and read by every layer at the points where stopping leaves nothing
// half done, so that a stopped run still cancels what runs on the server, closes its sessions,
// keeps the checkpoint of the last fully applied window, writes --stats and prints its summary:
//
//   - the pipeline, after each record read and before handing a window over, the reader before
//     each record (rejected records never reach the pipeline), and the reading of a pipe or
//     terminal while it waits for data: nothing of the window being read has run yet;
//   - an HS2 session between two polls of a running statement: it cancels the statement
//     (CancelOperation), closes it, and throws StopError;
//   - the retry policy before every try and during its back-off;
//   - blocked socket I/O of the HS2 layer: connecting, the TLS and SASL handshakes, and waiting
//     for the reply of an RPC (OpenSession, ExecuteStatement while the statement is planned, a
//     poll). The binary transport's socket is shut down after kSocketStopGrace (SocketStopGuard
//     below), in which a reply already on its way still arrives; hs2-http's transfer is aborted
//     after the same grace; the session drops that connection and throws StopError. Only the
//     clean-up after the stop (CancelOperation, CloseSession) is not cut short: it is bounded by
//     the close timeout instead. A statement whose ExecuteStatement was still unanswered after the
//     grace (one being planned) cannot be cancelled any more: it ends with its session (binary HS2
//     closes the sessions of a lost connection).
// Nothing ever stops in the middle of writing a statement (compile prints whole windows).
//
// Example (what main() and `apply --deadline 30m` do):
//   install_stop_signals();            // SIGINT/SIGTERM: first one requests a stop, second exits
//   StopDeadline deadline(std::chrono::minutes(30), "--deadline 30m");
//   ...
//   for (Event e; reader.next(e);) { throw_if_stopped(); ... }
//   // after SIGTERM: StopError, category kTerminated (exit 143),
//   //   what() == "stopped by SIGTERM"
//   // after the deadline: category kUnavailable (exit 4), what() == "--deadline 30m reached"
//
// Waiting: wait_for_stop(d) sleeps up to d and returns early once a stop is requested; it is what
// the system clock's sleep uses, so every wait of the HS2 layer (polls, back-off) ends at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "atlas2kudu/error.h"

namespace atlas2kudu {

enum class StopReason : std::uint8_t { kNone, kInterrupt, kTerminate, kDeadline, kHangUp };

// "SIGINT", "SIGTERM", "deadline", "SIGHUP", "" for kNone.
std::string_view to_string(StopReason reason);

// Requests a stop, which also shuts the armed sockets down after a grace (SocketStopGuard); later
// requests keep the first reason. Async-signal-safe.
void request_stop(StopReason reason) noexcept;
bool stop_requested() noexcept;
StopReason stop_reason() noexcept;

// Sleeps up to `duration`; returns true at once when a stop is (or gets) requested.
bool wait_for_stop(std::chrono::milliseconds duration);

// Waits until `fd` has something to read (data, end of file or an error) or a stop is requested;
// false for the stop. What a read of a pipe or terminal uses, so that a run waiting on a quiet
// producer (`kafka-console-consumer ... | atlas2kudu apply`) stops at the first SIGTERM instead of
// at the producer's next record:
//   if (!wait_readable(fd)) throw StopError(stop_reason());
//   n = ::read(fd, ...);   // does not block
bool wait_readable(int fd);

// While armed, a stop request shuts the socket `fd` down (shutdown(2), SHUT_RDWR), after a grace
// of kSocketStopGrace: a watcher thread, started with the first armed socket, waits that long so
// that a call whose reply is already on its way ends by itself (an ExecuteStatement answered then
// leaves a handle the stop can cancel), and then a connect, recv, send or poll still blocked on
// the socket, in any thread, returns with an error or end of file, and the caller reports
// StopError instead (stop_requested() is set before any socket is shut down). Arming within the
// grace only registers the socket (a reply read in several pieces arms for each); arming after
// the grace shuts the socket down at once, so no wait that starts late is missed. Armed
// only around the I/O itself: a session idle between two polls keeps its connection, over which a
// stop then cancels the statement. Disarm before closing the socket, so that a later socket reusing
// the number is never shut down (a stop racing with the close can still hit it; harmless, since the
// run is stopping). At most 256 sockets are armed at once; beyond that a socket is not cut short,
// its timeouts bound it as before. Example (a recv that a SIGTERM ends):
//   SocketStopGuard guard(fd);          // or guard.arm(fd) once the socket exists
//   n = ::recv(fd, buf, len, 0);        // 0 (EOF) after the stop
//   guard.disarm();                     // before ::close(fd)
//   throw_if_stopped();
inline constexpr std::chrono::milliseconds kSocketStopGrace{1000};

// Whether a stop was requested kSocketStopGrace ago or more: when an I/O that is not a socket
// armed above (hs2-http's transfer, which libcurl runs) gives up, so that it too lets a reply
// already on its way arrive. A GetOperationStatus that Impala holds (LONG_POLLING_TIME_MS, below
// the grace) then ends by itself, and the stop still cancels the statement over that connection.
bool stop_grace_over() noexcept;

class SocketStopGuard {
 public:
  SocketStopGuard() = default;
  explicit SocketStopGuard(int fd) { arm(fd); }
  ~SocketStopGuard() { disarm(); }
  SocketStopGuard(const SocketStopGuard&) = delete;
  SocketStopGuard& operator=(const SocketStopGuard&) = delete;

  // Arms (or re-arms) the guard for `fd`; fd < 0 disarms.
  void arm(int fd) noexcept;
  void disarm() noexcept;
  bool armed() const { return slot_ >= 0; }

 private:
  int slot_ = -1;
};

// The run ends because a stop was requested. Category: kInterrupted (SIGINT), kTerminated
// (SIGTERM), kHungUp (SIGHUP), kUnavailable (deadline).
class StopError : public Error {
 public:
  explicit StopError(StopReason reason);
  StopReason reason() const { return reason_; }
  // Set when the stop ended a statement the server may have run, in whole or in part: its request
  // cut short before the server answered it (no handle is known to cancel it; it may still run),
  // or the statement cancelled while it ran (Kudu keeps the rows it wrote before the cancel).
  bool statement_may_have_run() const { return statement_may_have_run_; }
  void set_statement_may_have_run() { statement_may_have_run_ = true; }

 private:
  StopReason reason_;
  bool statement_may_have_run_ = false;
};

// Throws StopError when a stop was requested.
inline void throw_if_stopped() {
  if (stop_requested()) throw StopError(stop_reason());
}

// Installs the handlers of SIGINT, SIGTERM and SIGHUP (unless SIGHUP is ignored, as under
// nohup): the first signal requests a stop (kInterrupt, kTerminate, kHangUp); a second one ends
// the process at once with status 128 + signal number. The same signal again within
// kRepeatedSignalGrace of the first is that first one, not a second: timeout(1) and a kill of the
// process group send it to the process twice, microseconds apart, and a run stopped that way must
// still shut down cleanly. System calls are restarted (SA_RESTART), so a write in progress is never
// cut short.
inline constexpr std::chrono::milliseconds kRepeatedSignalGrace{200};
void install_stop_signals();

// Requests a kDeadline stop once `after` has passed (0: never), until destroyed. `description`
// (e.g. "--deadline 30m") names it in the StopError message.
class StopDeadline {
 public:
  StopDeadline(std::chrono::milliseconds after, std::string description);
  ~StopDeadline();
  StopDeadline(const StopDeadline&) = delete;
  StopDeadline& operator=(const StopDeadline&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// Forgets a stop request (tests, which run many "runs" in one process).
void reset_stop();

}  // namespace atlas2kudu
