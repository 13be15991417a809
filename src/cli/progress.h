// Progress on stderr, only when stderr is a terminal (cron logs and pipes get run_log.h's lines
// instead) and the log lines are text (--log-format json keeps the terminal's lines JSON). One
// line, rewritten in place at most four times a second, at a record read (it is drawn as records
// come: the first at the first record read a quarter of a second or more after the start, however
// few came before, as from a pipe of a quiet topic); for inputs that are all
// regular files (their size known: gzip counts its compressed bytes) it ends with the percent of
// bytes read and the time left at the rate so far:
//   apply: 1200000 records, 1199990 events, 412 statements, 401877 rows, 412000 records/s,
//       37% of 1.2 GiB, ETA 1m35s          (one line)
// The rows are those the statements name (compile) or the server modified (apply), as in the
// window lines (run_log.h).
// stdin and pipes show no percent.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace atlas2kudu {

class Reader;

class Progress {
 public:
  enum class Counts { kRecords, kRecordsAndStatements };  // check writes no statements
  Progress(std::string label, Counts counts, bool enabled = default_enabled(),
           std::FILE* out = stderr);
  // The inputs' total size in bytes (input_size()); none: no percent.
  void set_input_size(std::optional<std::uint64_t> bytes) { input_size_ = bytes; }
  // Cheap enough to call per record: it reads the coarse clock (a few ns, no system call).
  void tick(const Reader& reader);
  // Statements and rows written so far, shown from the next tick on (which may run on the
  // read-ahead thread).
  void set_written(std::uint64_t statements, std::uint64_t rows) {
    statements_.store(statements, std::memory_order_relaxed);
    rows_.store(rows, std::memory_order_relaxed);
  }
  // Clears the progress line.
  void done();

  static bool default_enabled();

 private:
  std::string label_;
  Counts counts_;
  bool enabled_;
  std::FILE* out_;
  bool shown_ = false;
  std::atomic<std::uint64_t> statements_{0};
  std::atomic<std::uint64_t> rows_{0};
  std::optional<std::uint64_t> input_size_;
  std::chrono::nanoseconds start_;  // CLOCK_MONOTONIC_COARSE
  std::chrono::nanoseconds last_;
};

// The summed size of `files` when every one is a regular file ("-", none given, a pipe or a
// missing file: nullopt).
std::optional<std::uint64_t> input_size(const std::vector<std::string>& files);

// 512 bytes, 31.4 KiB, 30.7 MiB, 1.2 GiB: sizes for people.
std::string human_bytes(std::uint64_t n);

// "1 event", "2 events": a count and its noun for people.
std::string counted(std::uint64_t n, std::string_view one, std::string_view many);

// 45s, 3m20s, 1h02m: a duration for people, to the second below an hour.
std::string human_duration(double seconds);

}  // namespace atlas2kudu
