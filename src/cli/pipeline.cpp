#include "cli/pipeline.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "util/resident_memory.h"
#include "util/stop.h"

namespace atlas2kudu {

namespace {

// What follows the fold of every window or part of one (WindowParts), whichever way it was read.
// `reader_at_end`: the reader, when its position is the end of `net` (the window's last part).
void hand_over(NetWindow& net, WindowWriter& writer, bool cut_closed_early,
               const Reader* reader_at_end, const WindowApplied& on_applied, PipelineStats* stats) {
  // The events stay until the window is written: the rows view their text, and a row the
  // server refuses is traced back to the events that made it (net.events views them).
  // A reader of the SQL learns why this window is shorter than --window-events (a part that
  // WindowParts ended says so already).
  if (cut_closed_early) net.info.comment += kClosedEarlyComment;
  // Pages kept for reuse go back before the statements are built too, if they are over the
  // ceiling: the pages the statements need may not be among them (another size, the other
  // thread's), and a window's statements add tens of MB at once (a window of 20 KB cells split
  // in parts: 271 MB without this check, 256 MB with it at the default budget).
  keep_resident_memory_under_ceiling(true);
  writer.write(net);
  keep_resident_memory_under_ceiling(true);
  if (stats) {
    ++stats->windows;
    if (cut_closed_early || !reader_at_end) ++stats->closed_early;
  }
  if (on_applied) on_applied(net.info, reader_at_end);
}

// Folds window[i] (WindowParts::add). Memory a window frees is kept for the next one until a
// check finds the resident set over its ceiling (util/resident_memory.h), and the fold, not the
// reading, allocates most of a window (rows, knowledge brought back from the spill file): it
// checks too. Checked only while reading: at the default budget, the fold of a window of 1,763
// small updates of 20 KB entities, after windows that created them, took the resident set from
// 237 to 290 MB, and the release before its statements brought it down to 163 MB (the rest were
// pages the windows before had freed). With this check the run peaked at 233 MB.
std::optional<NetWindow> fold_next(WindowParts& parts, std::span<const Event> window,
                                   std::size_t i) {
  keep_resident_memory_under_ceiling();
  return parts.add(window, i);
}

// Folds window[folded, read) in parts and writes every part that ends (WindowParts::add).
void fold_parts(WindowParts& parts, std::span<const Event> window, std::size_t& folded,
                std::size_t read, WindowWriter& writer, const WindowApplied& on_applied,
                PipelineStats* stats) {
  for (; folded < read; ++folded) {
    if (std::optional<NetWindow> part = fold_next(parts, window, folded)) {
      hand_over(*part, writer, false, nullptr, on_applied, stats);
    }
  }
}

enum class ReadStep { kEnd, kMore, kWindowComplete };

constexpr std::size_t kWholeWindow = static_cast<std::size_t>(-1);

// Reads the next record into `window`: kEnd at the end of the input (nothing added), else the
// event is added and counted by `cut`, kWindowComplete if it completes the window. A stop request
// is obeyed here, after each record: nothing of the window being read has run yet.
ReadStep read_event(Reader& reader, std::vector<Event>& window, Progress* progress,
                    WindowCutter& cut) {
  window.emplace_back();
  bool read = false;
  try {
    read = reader.next(window.back());
  } catch (...) {
    window.pop_back();  // the window holds the events read, whatever ends the reading
    throw;
  }
  if (!read) {
    window.pop_back();
    return ReadStep::kEnd;
  }
  if (progress) progress->tick(reader);
  keep_resident_memory_under_ceiling();
  throw_if_stopped();
  return cut.add(window.back()) ? ReadStep::kWindowComplete : ReadStep::kMore;
}

// A stop while a window is read (a pipe's producer gone quiet, say) names that window and what of
// it was read; nothing of it has run: "reading window 3 (events 5-6; -:9 .. -:10): stopped by
// SIGTERM", or "reading window 3 (from event 5): ..." before its first event.
void name_window_being_read(StopError& e, const Compiler& compiler, std::span<const Event> read) {
  e.add_context("reading " + compiler.next_window_name(read) + ": ");
}

void run_in_turn(Reader& reader, Compiler& compiler, PriorState& prior, WindowWriter& writer,
                 Progress* progress, const WindowApplied& on_applied, PipelineStats* stats,
                 const WindowStarting& on_starting, const FirstWindowEnd& first_window_read) {
  const std::size_t window_events = compiler.options().window_events;
  std::vector<Event> window;
  window.reserve(std::min<std::size_t>(window_events, 1 << 16));
  WindowCutter cut(compiler.options());
  WindowParts parts(compiler);
  bool more = true;
  bool first = true;
  while (more) {
    window.clear();
    cut.start();
    ReadStep step = ReadStep::kMore;
    try {
      for (;;) {
        while (step == ReadStep::kMore) step = read_event(reader, window, progress, cut);
        // The first window goes on, past what --window-events and the budget say, until it
        // covers the window an earlier run stopped in (FirstWindowEnd says when).
        if (!first || step != ReadStep::kWindowComplete || !first_window_read ||
            first_window_read(reader, window)) {
          break;
        }
        step = ReadStep::kMore;
      }
      throw_if_stopped();
    } catch (StopError& e) {
      name_window_being_read(e, compiler, window);
      throw;
    }
    first = false;
    more = step != ReadStep::kEnd;
    if (window.empty()) break;
    prepare_window(compiler, prior, window);
    if (on_starting) on_starting(KnowledgeSnapshot(compiler, window), window);
    parts.begin(window.size());
    std::size_t folded = 0;
    fold_parts(parts, window, folded, window.size(), writer, on_applied, stats);
    NetWindow net = parts.end(window);
    hand_over(net, writer, cut.this_closed_early(), &reader, on_applied, stats);
  }
}

// The second thread of the read-ahead: reads one window at a time into `window`, whose capacity
// holds a whole window (so that its events never move while the folding thread reads them), and
// publishes the events read in batches. After a window it waits for the next start(): the reader
// is never ahead of the window being folded and written, so memory is as in run_in_turn and the
// reader's position, when a window is applied, is that window's end.
class ReadAhead {
 public:
  ReadAhead(Reader& reader, const CompileOptions& options, Progress* progress,
            std::vector<Event>& window)
      : reader_(reader), cut_(options), progress_(progress), window_(window) {
    thread_ = std::thread([this] { run(); });
  }
  ~ReadAhead() {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Clears the window and reads the next one.
  void start() {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      published_ = 0;
      complete_ = false;
      go_ = true;
    }
    cv_.notify_all();
  }
  // Waits until more than `taken` events of the window are read, or the window is complete
  // (kWholeWindow: until it is complete); returns how many are read. Rethrows what reading threw
  // (the window is then not folded).
  std::size_t wait(std::size_t taken, bool& complete) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return published_ > taken || complete_; });
    if (error_) std::rethrow_exception(error_);
    complete = complete_;
    return published_;
  }
  // The events of the window read so far (after wait() rethrew what reading threw, all of them).
  std::size_t read() {
    const std::lock_guard<std::mutex> lock(mu_);
    return published_;
  }
  // After a complete window: false once the input has ended.
  bool more() const { return more_; }
  const WindowCutter& cut() const { return cut_; }

 private:
  // Events published at a time: one lock and wake-up per batch instead of per event.
  static constexpr std::size_t kBatch = 64;

  void run() {
    // Signals go to the folding thread, as when there is one thread: its system calls are the
    // ones a stop interrupts. This one sees a stop after each record, as run_in_turn does.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return go_ || quit_; });
        if (quit_) return;
        go_ = false;
      }
      std::exception_ptr error;
      std::size_t read = 0;
      try {
        window_.clear();
        cut_.start();
        for (ReadStep step = ReadStep::kMore; step == ReadStep::kMore;) {
          if (window_.size() == window_.capacity()) {
            throw Error(ErrorCategory::kInternal, "read-ahead: the window outgrew its capacity");
          }
          step = read_event(reader_, window_, progress_, cut_);
          if (step == ReadStep::kEnd) {
            more_ = false;
            break;
          }
          ++read;
          if (read % kBatch == 0 && step == ReadStep::kMore) publish(read, false, nullptr);
          if (quit_.load(std::memory_order_relaxed)) return;
        }
      } catch (...) {
        error = std::current_exception();
        read = window_.size();  // with the event read as the stop came, as on one thread
      }
      publish(read, true, error);
    }
  }
  void publish(std::size_t read, bool complete, std::exception_ptr error) {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      published_ = read;
      complete_ = complete;
      error_ = std::move(error);
    }
    cv_.notify_all();
  }
  Reader& reader_;
  WindowCutter cut_;
  Progress* progress_;
  std::vector<Event>& window_;
  bool more_ = true;  // written by the thread before it publishes a complete window

  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t published_ = 0;
  bool complete_ = false;
  bool go_ = false;
  std::atomic<bool> quit_{false};  // set under mu_, also read without it after each record
  std::exception_ptr error_;
  std::thread thread_;
};

// Whether it ran: without a second thread (`ulimit -u`, the system's limit on threads) nothing has
// been read, and the caller reads in turn instead.
bool run_read_ahead(Reader& reader, Compiler& compiler, WindowWriter& writer, Progress* progress,
                    const WindowApplied& on_applied, PipelineStats* stats) {
  std::vector<Event> window;
  window.reserve(compiler.options().window_events);
  std::optional<ReadAhead> started;
  try {
    started.emplace(reader, compiler.options(), progress, window);
  } catch (const std::system_error&) {
    return false;
  }
  ReadAhead& ahead = *started;
  WindowParts parts(compiler);
  // Sizes the fold's indexes: the last window's event count, after the first window.
  std::size_t expected = 1024;
  bool more = true;
  while (more) {
    ahead.start();
    parts.begin(expected);
    std::size_t folded = 0;
    std::size_t read = 0;
    try {
      for (bool complete = false; !complete;) {
        read = ahead.wait(parts.full() ? kWholeWindow : folded, complete);
        // Folded as they arrive, up to a full part: a part is written only once the whole window
        // is read, as on one thread (a bad record further on stops the run before anything of
        // the window has run). The window's storage never moves (ReadAhead).
        while (folded < read && !parts.full()) {
          (void)fold_next(parts, std::span<const Event>(window.data(), read), folded++);
        }
      }
      throw_if_stopped();
    } catch (StopError& e) {
      name_window_being_read(e, compiler, std::span<const Event>(window.data(), ahead.read()));
      throw;
    }
    more = ahead.more();
    if (read == 0) break;
    const std::span<const Event> events(window.data(), read);
    fold_parts(parts, events, folded, read, writer, on_applied, stats);
    expected = read;
    NetWindow net = parts.end(events);
    hand_over(net, writer, ahead.cut().this_closed_early(), &reader, on_applied, stats);
  }
  return true;
}

}  // namespace

bool read_ahead_possible(const Compiler& compiler, const PriorState& prior) {
  return prior.knows_nothing() && compiler.options().window_events <= kMaxReadAheadWindow;
}

void run_pipeline(Reader& reader, Compiler& compiler, PriorState& prior, WindowWriter& writer,
                  Progress* progress, const WindowApplied& on_applied, PipelineStats* stats,
                  bool read_ahead, const WindowStarting& on_starting,
                  const FirstWindowEnd& first_window_read) {
  writer.start(compiler.header(prior.describe()));
  const bool read_ahead_ran = read_ahead && !on_starting && !first_window_read &&
                              read_ahead_possible(compiler, prior) &&
                              run_read_ahead(reader, compiler, writer, progress, on_applied, stats);
  if (!read_ahead_ran) {
    run_in_turn(reader, compiler, prior, writer, progress, on_applied, stats, on_starting,
                first_window_read);
  }
  writer.finish();
}

}  // namespace atlas2kudu
