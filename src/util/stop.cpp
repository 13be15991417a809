#include "util/stop.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <mutex>

namespace atlas2kudu {

namespace {

std::atomic<std::uint8_t> g_reason{0};
// Stops requested so far (reset_stop forgets a stop, for tests; this count goes on), so that the
// socket watcher tells a new stop from the one it has handled.
std::atomic<unsigned> g_stops{0};
// The stop whose grace is over, its armed sockets shut down (0: none yet).
std::atomic<unsigned> g_cut{0};
// When the stop was requested (CLOCK_MONOTONIC, nanoseconds; 0 until stored, just after the
// reason).
std::atomic<std::int64_t> g_stop_ns{0};
// A pipe that becomes readable once a stop is requested (one byte, never drained until
// reset_stop), so that any number of threads can wait for it with poll() and a timeout.
int g_pipe[2] = {-1, -1};
std::once_flag g_pipe_once;
std::mutex g_description_mu;
std::string g_deadline_description = "--deadline";

// The sockets a stop shuts down (SocketStopGuard): fd + 1, 0 for a free slot, so that the
// zero-initialised array is all free.
constexpr int kStopSockets = 256;
std::atomic<int> g_sockets[kStopSockets];

void shutdown_sockets() noexcept {
  for (std::atomic<int>& slot : g_sockets) {
    const int fd = slot.load() - 1;
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  }
}

void make_pipe() {
  std::call_once(g_pipe_once, [] {
    if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
  });
}

// The first stop signal's number (claimed by the handler that takes it) and when it came
// (CLOCK_MONOTONIC, nanoseconds; 0 until that handler has stored it).
std::atomic<int> g_first_signal{0};
std::atomic<std::int64_t> g_first_signal_ns{0};

std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

StopReason reason_of_signal(int signo) noexcept {
  switch (signo) {
    case SIGINT:
      return StopReason::kInterrupt;
    case SIGHUP:
      return StopReason::kHangUp;
    default:
      return StopReason::kTerminate;
  }
}

void on_stop_signal(int signo) {
  const int saved_errno = errno;
  const std::int64_t now = monotonic_ns();
  // The handler may run in any thread, and in two at once: the first to claim the signal is the
  // first; the others compare with it (its time may not be stored yet: then it is now).
  int first = 0;
  if (!g_first_signal.compare_exchange_strong(first, signo)) {
    // The same signal again at once is the first one delivered twice (timeout(1) signals the
    // process and then its group): not the second signal that ends the run.
    const std::int64_t first_ns = g_first_signal_ns.load();
    const auto grace = std::chrono::nanoseconds(kRepeatedSignalGrace).count();
    if (signo == first && (first_ns == 0 || now - first_ns < grace)) {
      errno = saved_errno;
      return;
    }
    ::_exit(128 + signo);  // the second signal: at once
  }
  g_first_signal_ns.store(now);
  request_stop(reason_of_signal(signo));
  errno = saved_errno;
}

ErrorCategory category_of(StopReason reason) {
  switch (reason) {
    case StopReason::kInterrupt:
      return ErrorCategory::kInterrupted;
    case StopReason::kTerminate:
      return ErrorCategory::kTerminated;
    case StopReason::kHangUp:
      return ErrorCategory::kHungUp;
    default:
      return ErrorCategory::kUnavailable;
  }
}

std::string message_of(StopReason reason) {
  if (reason == StopReason::kDeadline) {
    std::lock_guard lock(g_description_mu);
    return g_deadline_description + " reached";
  }
  return "stopped by " + std::string(to_string(reason));
}

}  // namespace

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kInterrupt:
      return "SIGINT";
    case StopReason::kTerminate:
      return "SIGTERM";
    case StopReason::kDeadline:
      return "deadline";
    case StopReason::kHangUp:
      return "SIGHUP";
    case StopReason::kNone:
      break;
  }
  return "";
}

void request_stop(StopReason reason) noexcept {
  std::uint8_t none = 0;
  if (g_reason.compare_exchange_strong(none, static_cast<std::uint8_t>(reason))) {
    g_stop_ns = monotonic_ns();
    ++g_stops;
    if (g_pipe[1] >= 0) {
      const char byte = 1;
      (void)!::write(g_pipe[1], &byte, 1);
    }
  }
  // The sockets armed now are shut down by the watcher after kSocketStopGrace (SocketStopGuard);
  // a guard armed from now on sees the reason and shuts its socket down itself.
}

bool stop_requested() noexcept {
  return g_reason.load(std::memory_order_relaxed) != 0;
}

StopReason stop_reason() noexcept {
  return static_cast<StopReason>(g_reason.load());
}

bool stop_grace_over() noexcept {
  if (!stop_requested()) return false;
  const std::int64_t at = g_stop_ns.load();
  return at != 0 && monotonic_ns() - at >= std::chrono::nanoseconds(kSocketStopGrace).count();
}

bool wait_for_stop(std::chrono::milliseconds duration) {
  make_pipe();
  const auto until = std::chrono::steady_clock::now() + duration;
  for (;;) {
    if (stop_requested()) return true;
    // Rounded up: a wait of 1 ms must not end at once because 0.99 ms are left.
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    if (g_pipe[0] < 0) {  // no pipe: plain sleep, a little at a time
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(50)));
      continue;
    }
    pollfd p{g_pipe[0], POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 60000)));
  }
}

bool wait_readable(int fd) {
  make_pipe();
  for (;;) {
    if (stop_requested()) return false;
    pollfd p[2] = {{fd, POLLIN, 0}, {g_pipe[0], POLLIN, 0}};
    // Without the pipe (pipe2 failed), look at the stop flag every 100 ms.
    const int n = ::poll(p, g_pipe[0] >= 0 ? 2 : 1, g_pipe[0] >= 0 ? -1 : 100);
    if (n < 0 && errno != EINTR) return true;  // let the read report what is wrong
    if (n > 0 && p[0].revents != 0) return true;
  }
}

namespace {

// Started with the first armed socket: once a stop is requested, gives the calls in flight
// kSocketStopGrace to end by themselves (a reply already on its way keeps the statement's handle,
// so it can still be cancelled), then shuts down every socket still armed. Runs for the life of
// the process (after reset_stop, for tests, it waits for the next stop).
void start_watcher() noexcept {
  static std::once_flag once;
  try {
    std::call_once(once, [] {
      make_pipe();
      std::thread([] {
        unsigned handled = 0;  // the stop (g_stops) whose sockets were shut down last
        for (;;) {
          if (!stop_requested()) {
            if (g_pipe[0] >= 0) {
              pollfd p{g_pipe[0], POLLIN, 0};
              ::poll(&p, 1, 1000);
            } else {
              std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            continue;
          }
          const unsigned stop = g_stops.load();
          if (stop == handled) {  // done with this one; the pipe stays readable until a reset
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
          }
          handled = stop;
          std::this_thread::sleep_for(kSocketStopGrace);
          if (stop_requested() && g_stops.load() == stop) {
            g_cut = stop;  // before the registry is read: see SocketStopGuard::arm
            shutdown_sockets();
          }
        }
      }).detach();
    });
  } catch (...) {
    // No thread: sockets are then only bounded by their timeouts, as before.
  }
}

}  // namespace

void SocketStopGuard::arm(int fd) noexcept {
  disarm();
  if (fd < 0) return;
  start_watcher();
  for (int i = 0; i < kStopSockets; ++i) {
    int free = 0;
    if (g_sockets[i].compare_exchange_strong(free, fd + 1)) {
      slot_ = i;
      break;
    }
  }
  // Within a stop's grace the socket only joins the registry: a call in flight reads its reply in
  // several pieces, and each piece arms anew. Once the watcher has cut this stop's sockets, a
  // socket armed later is cut here. Registered before g_cut is read, as the watcher sets g_cut
  // before it reads the registry: one of the two shuts the socket down (sequentially consistent
  // atomics). Without a free slot, the same at least.
  if (stop_requested() && g_cut.load() == g_stops.load()) ::shutdown(fd, SHUT_RDWR);
}

void SocketStopGuard::disarm() noexcept {
  if (slot_ < 0) return;
  g_sockets[slot_].store(0);
  slot_ = -1;
}

StopError::StopError(StopReason reason)
    : Error(category_of(reason), message_of(reason)), reason_(reason) {}

void install_stop_signals() {
  make_pipe();
  struct sigaction sa {};
  sa.sa_handler = &on_stop_signal;
  // One handler at a time in a thread: the others wait until it has claimed its signal.
  sigemptyset(&sa.sa_mask);
  for (const int signo : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, signo);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  // Under nohup a hang-up is meant to pass unnoticed: keep it ignored.
  struct sigaction hup {};
  if (::sigaction(SIGHUP, nullptr, &hup) == 0 && hup.sa_handler != SIG_IGN)
    ::sigaction(SIGHUP, &sa, nullptr);
}

StopDeadline::StopDeadline(std::chrono::milliseconds after, std::string description) {
  if (after.count() <= 0) return;
  {
    std::lock_guard lock(g_description_mu);
    g_deadline_description = std::move(description);
  }
  make_pipe();
  thread_ = std::thread([this, until = std::chrono::steady_clock::now() + after] {
    std::unique_lock lock(mu_);
    if (!cv_.wait_until(lock, until, [this] { return done_; })) {
      request_stop(StopReason::kDeadline);
    }
  });
}

StopDeadline::~StopDeadline() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void reset_stop() {
  make_pipe();
  g_reason = 0;
  g_stop_ns = 0;
  g_first_signal = 0;
  g_first_signal_ns = 0;
  char buf[16];
  while (g_pipe[0] >= 0 && ::read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

}  // namespace atlas2kudu
