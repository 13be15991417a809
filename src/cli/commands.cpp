#include "cli/commands.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "atlas2kudu/error.h"
#include "atlas2kudu/prior_state.h"
#include "atlas2kudu/reader.h"
#include "cli/checkpoint.h"
#include "cli/exit_codes.h"
#include "cli/metrics.h"
#include "cli/output_guard.h"
#include "cli/pipeline.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "cli/run_log.h"
#include "compile/print_executor.h"
#include "compile/spill_store.h"
#include "compile/sql_writer.h"
#include "hs2/credentials.h"
#include "hs2/executor.h"
#include "hs2/prior_state.h"
#include "hs2/session.h"
#include "input/byte_source.h"
#include "util/atomic_file.h"
#include "util/diagnostic.h"
#include "util/digest.h"
#include "util/iso8601.h"
#include "util/os_error.h"
#include "util/resident_memory.h"
#include "util/stop.h"
#include "util/utf8.h"

namespace atlas2kudu {

namespace {

// Where SQL goes: stdout, or a file replaced atomically on commit() so that a run that stops half
// way (bad input, full disk) never leaves a partial script where a reviewer expects a whole one.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path) {
    if (!path.empty() && path != "-") file_.emplace(path, 0644);
  }
  std::FILE* get() const { return file_ ? file_->stream() : stdout; }
  // Throws Error(kIo), or kOutputClosed when standard output's reader went away.
  void write(std::string_view text, std::string_view what) {
    if (std::fwrite(text.data(), 1, text.size(), get()) == text.size()) return;
    if (errno == EPIPE) throw Error(ErrorCategory::kOutputClosed, "stdout: the reader went away");
    throw Error(ErrorCategory::kIo,
                fmt::format("{}: cannot write {}: {}", file_ ? file_->path() : "stdout", what,
                            os_error_text(errno)));
  }
  void commit() {
    if (file_) {
      file_->commit();
    } else if (std::fflush(stdout) != 0) {
      if (errno == EPIPE) throw Error(ErrorCategory::kOutputClosed, "stdout: the reader went away");
      throw Error(ErrorCategory::kIo,
                  fmt::format("stdout: write failed: {}", os_error_text(errno)));
    }
  }

 private:
  std::optional<AtomicFile> file_;
};

void write_text_file(const std::string& path, const std::string& text) {
  write_file_atomically(path, text, 0644);
}

// The end of a run that got as far as its summary: --stats, then --metrics-textfile. A file that
// cannot be written (a full disk) is named, then one line says what the run itself did and which
// files are missing. A run that succeeded then ends with 74, and both files say so where they can
// be written: when only the metrics failed, the stats file is written again with 74, or removed
// if that fails, so that no file says exit status 0. A run that failed keeps its own status.
// Returns the status.
int write_run_reports(const InputOptions& in, RunReport& report) {
  const int run_status = report.exit_status;
  std::vector<std::string> missing;
  // False, after saying so, when the file could not be written.
  const auto attempt = [&](const std::string& path, const auto& write) {
    if (path.empty()) return false;
    try {
      write();
      return true;
    } catch (const Error& e) {
      print_diagnostic(stderr, "atlas2kudu: {}\n", e.what());
      missing.push_back(path);  // never twice: the stats file is written again only if it was
      if (report.exit_status == kExitOk) {
        report.exit_status = exit_code_for(e.category());
        report.error = e.what();
      }
      return false;
    }
  };
  const auto write_stats = [&] { write_text_file(in.stats_file, stats_json(report)); };
  const bool stats_written = attempt(in.stats_file, write_stats);
  const bool metrics_written =
      attempt(in.metrics_file, [&] { write_metrics_textfile(in.metrics_file, report); });
  if (stats_written && !metrics_written && report.exit_status != run_status &&
      !attempt(in.stats_file, write_stats)) {
    std::remove(in.stats_file.c_str());  // it says exit status 0
  }
  if (!missing.empty()) {
    print_diagnostic(
        stderr, "atlas2kudu: the run itself {}; not written: {}\n",
        run_status == kExitOk ? "succeeded" : fmt::format("ended with exit status {}", run_status),
        fmt::join(missing, ", "));
  }
  return report.exit_status;
}

// How a reading run ended. Bad input past --max-rejects, HS2 failures and stop requests (SIGINT,
// SIGTERM, --deadline) end the run but not the report: the summary and --stats still describe
// what was done.
struct RunOutcome {
  bool completed = false;
  bool output_closed = false;  // standard output's reader went away (e.g. `| head`)
  int status = kExitOk;
  StopReason stopped_by = StopReason::kNone;
  double seconds = 0;
  std::int64_t start_micros = 0;  // wall clock
  std::int64_t end_micros = 0;
  std::string error;  // the message printed for the failure; empty: none
};

RunOutcome run_reporting_failures(Progress& progress, const std::function<void()>& body) {
  const auto started = std::chrono::steady_clock::now();
  RunOutcome outcome;
  outcome.start_micros = wall_clock_micros();
  std::string failure;
  const auto stopped = [&](const StopError& e) {
    failure = e.what();
    outcome.status = exit_code_for(e.category());
    outcome.stopped_by = e.reason();
  };
  try {
    body();
    outcome.completed = true;
  } catch (const StopError& e) {
    stopped(e);
  } catch (const Error& e) {
    if (e.category() == ErrorCategory::kOutputClosed && stop_requested()) {
      // A stop came first, and the reader went away while the window was still being printed
      // (`timeout 60 atlas2kudu compile ... | consumer`): the run ends by the stop, not as a
      // reader that had all it wanted (exit 0).
      stopped(StopError(stop_reason()));
    } else {
      outcome.status = exit_code_for(e.category());
      outcome.output_closed = e.category() == ErrorCategory::kOutputClosed;
      if (!outcome.output_closed) failure = e.what();  // the reader had all it wanted
    }
  } catch (const std::bad_alloc&) {
    // Named, and reported as every failure is (summary, --stats, metrics): a limit on the
    // process's memory, not a bug.
    rlimit limit{};
    const bool limited = ::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
    failure = fmt::format(
        "out of memory: an allocation failed ({}; --memory-budget bounds the run's resident "
        "memory, not its address space, which is larger)",
        limited ? fmt::format("`ulimit -v` allows {:.1f} MiB of address space",
                              static_cast<double>(limit.rlim_cur) / (1 << 20))
                : std::string("the machine or a container's limit has no more to give"));
    outcome.status = kExitInternal;
  } catch (const std::system_error& e) {
    // A thread that cannot start (`ulimit -u`), where the run could not do without one.
    failure = fmt::format("system error: {}", e.what());
    outcome.status = kExitInternal;
  }
  progress.done();
  if (!failure.empty()) print_diagnostic(stderr, "atlas2kudu: {}\n", failure);
  outcome.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  outcome.end_micros = wall_clock_micros();
  outcome.error = failure;
  return outcome;
}

// The files a run writes; an empty path is not written. The checkpoint's FILE.window and
// FILE.lock are among them: `--stats run.ckpt.window` replaced the knowledge a resumed run needs,
// and the resume then refused the checkpoint (exit 65, "start over").
std::vector<RunOutput> run_outputs(const InputOptions& in, const std::string& sql_output = {},
                                   const std::string& checkpoint = {}) {
  std::vector<RunOutput> outputs{{"-o", sql_output, OutputKind::kSql},
                                 {"--stats", in.stats_file, OutputKind::kStats},
                                 {"--metrics-textfile", in.metrics_file, OutputKind::kMetrics},
                                 {"--reject-file", in.reject_file, OutputKind::kRejects},
                                 {"--checkpoint", checkpoint, std::nullopt}};
  if (!checkpoint.empty()) {
    outputs.push_back(
        {"--checkpoint's window file", checkpoint_window_path(checkpoint), std::nullopt});
    outputs.push_back({"--checkpoint's lock file", checkpoint_lock_path(checkpoint), std::nullopt});
  }
  return outputs;
}

// Before the run reads or writes anything: output files it must not replace, inputs that do not
// open, outputs it could not create or that name an input or each other (cli/output_guard.h),
// and a word on stderr when the input is the terminal (no FILE given, most often by mistake), so
// that a run waiting for it does not look hung.
void before_reading(std::string_view command, const InputOptions& in,
                    const std::vector<RunOutput>& outputs) {
  check_run_paths(in.files, outputs);
  const bool reads_stdin =
      in.files.empty() || std::find(in.files.begin(), in.files.end(), "-") != in.files.end();
  if (reads_stdin && isatty(STDIN_FILENO) == 1) {
    print_diagnostic(stderr,
                     "atlas2kudu {}: reading notifications from the terminal (no FILE given); end "
                     "with Ctrl-D, or stop with Ctrl-C\n",
                     command);
  }
}

// A run that fails before its report (a bad option, a locked checkpoint, a password helper that
// fails, a --stats file that cannot be written) still leaves its exit status in
// --metrics-textfile, and in --stats too once that path is found safe to write (before_reading
// passed, or failed on another output and --stats passes alone): a monitor reading it must not be
// left with an earlier run's success. A run stopped this early (a signal or --deadline while
// --ldap_password_cmd runs) prints `stopped_summary`'s line after the message, as a stop in the
// run's work does.
int reporting_early_failures(std::string_view command, const InputOptions& in,
                             const std::vector<RunOutput>& outputs,
                             const std::function<int()>& body,
                             const std::function<void(const RunReport&)>& stopped_summary = {}) {
  const std::int64_t started = wall_clock_micros();
  bool outputs_checked = false;
  try {
    before_reading(command, in, outputs);
    outputs_checked = true;
    return body();
  } catch (const Error& e) {
    const std::int64_t ended = wall_clock_micros();
    const ReadStats nothing_read;
    RunReport report{.command = command,
                     .exit_status = exit_code_for(e.category()),
                     .seconds = static_cast<double>(ended - started) / 1e6,
                     .start_micros = started,
                     .end_micros = ended,
                     .error = e.what(),
                     .read = &nothing_read};
    // The same sections as a run that got further, empty: a monitor reads the same keys.
    const SqlWriteStats nothing_written;
    const MemoryReport no_memory_used{.budget = in.memory_budget};
    const Hs2RunStats nothing_applied;
    if (command != "check") {
      report.write = &nothing_written;
      report.memory = &no_memory_used;
    }
    if (command == "apply") report.execution = &nothing_applied;
    const auto* stop = dynamic_cast<const StopError*>(&e);
    if (stop != nullptr) report.stopped_by = stop->reason();
    // The run reports its first failure, not one of these. Each file is written only where it
    // passes its own checks: --metrics-textfile on the checkpoint's FILE.window, refused, had
    // created it all the same, and the next run refused the checkpoint.
    const RunOutput metrics{"--metrics-textfile", in.metrics_file, OutputKind::kMetrics};
    // (An empty path is no file: the AtomicFile of "" made a temporary file in the current
    // directory, renamed to nothing, then removed.)
    if (!in.metrics_file.empty() &&
        (outputs_checked || safe_to_write_alone(in.files, outputs, metrics))) {
      try {
        write_metrics_textfile(in.metrics_file, report);
      } catch (const Error&) {
      }
    }
    const RunOutput stats{"--stats", in.stats_file, OutputKind::kStats};
    if (!in.stats_file.empty() &&
        (outputs_checked || safe_to_write_alone(in.files, outputs, stats))) {
      try {
        write_text_file(in.stats_file, stats_json(report));
      } catch (const Error&) {
      }
    }
    if (stop == nullptr || !stopped_summary) throw;
    print_diagnostic(stderr, "atlas2kudu: {}\n", e.what());
    stopped_summary(report);
    return report.exit_status;
  }
}

// --memory-budget into the compiler's shares. Knowledge evicted past its share is looked up again
// only by `apply --prior impala`, whose tables hold what every earlier window wrote; everywhere
// else (a dry run's statements never reach the tables) it is spilled to disk.
void use_memory_budget(CompileCommand& c, bool applies) {
  fit_record_limits(c.in);
  const MemoryShares shares = split_memory_budget(c.in.memory_budget);
  c.options.knowledge_budget = shares.knowledge;
  c.options.window_budget = shares.window;
  c.options.memory_budget = c.in.memory_budget;
  c.options.evicted = applies && c.options.prior == PriorSource::kImpala
                          ? EvictedKnowledge::kLookUpAgain
                          : EvictedKnowledge::kSpill;
  // The allocator keeps freed pages for the next window until resident memory nears the budget.
  set_resident_memory_ceiling(resident_ceiling_for_budget(c.in.memory_budget));
  // Below the default budget, releases come often enough that huge pages cost more than they
  // save, and break the budget (resident_memory.h): main() turned them off. At the default and
  // above the host decides: with huge pages, compile of 100 MB takes a quarter less CPU, and its
  // peak stays within 256 MiB.
  if (c.in.memory_budget >= kDefaultMemoryBudget) allow_transparent_huge_pages(true);
  // A spill directory that cannot be made fails the run now, before a window is applied. Every
  // run may spill: apply --prior impala too, what a window looks up past the budget.
  SpillStore::check_parent(c.options.spill_dir);
}

RunReport report_of(std::string_view command, const RunOutcome& outcome) {
  return RunReport{.command = command,
                   .completed = outcome.completed,
                   .exit_status = outcome.status,
                   .stopped_by = outcome.stopped_by,
                   .seconds = outcome.seconds,
                   .start_micros = outcome.start_micros,
                   .end_micros = outcome.end_micros,
                   .error = outcome.error};
}

// Row errors are failures past --max-row-errors, but each one is logged as it is reported. A
// delete's are rows already deleted (Hs2RunStats::rows_already_deleted), harmless: a line of
// the run's log (RunLog::already_deleted), not a diagnostic.
void log_row_errors(const StatementDone& done, RunLog& log, int sessions) {
  if (done.result.row_errors <= 0) return;
  if (done.phase == "delete") {
    log.already_deleted(
        {done.window.index, done.phase, done.position, done.count, done.statement.table},
        static_cast<std::uint64_t>(done.result.row_errors), sessions);
    return;
  }
  print_diagnostic(
      stderr,
      "atlas2kudu: window {}, {} phase, statement {} of {} (table {}): {} row error{}: "
      "rows the server skipped and only counted\n",
      done.window.index, done.phase, done.position, done.count, done.statement.table,
      done.result.row_errors, done.result.row_errors == 1 ? "" : "s");
}

// Each window's own counts for the log: the run's totals at the end of the window, less those at
// the end of the window before.
struct RunTotals {
  std::uint64_t statements = 0;
  std::int64_t rows = 0;
  std::int64_t row_errors = 0;
  std::uint64_t retries = 0;
  std::uint64_t rows_already_deleted = 0;
};

class WindowLogger {
 public:
  explicit WindowLogger(RunLog& log) : log_(log), last_(std::chrono::steady_clock::now()) {}
  // `executed`: false for compile (WindowLogLine::executed).
  void applied(const WindowInfo& window, const RunTotals& now, bool executed = true) {
    const auto at = std::chrono::steady_clock::now();
    log_.window(WindowLogLine{
        .executed = executed,
        .index = window.index,
        .events = window.last_event + 1 - window.first_event,
        .statements = now.statements - before_.statements,
        .rows = now.rows - before_.rows,
        .row_errors = now.row_errors - before_.row_errors,
        .retries = now.retries - before_.retries,
        .rows_already_deleted = now.rows_already_deleted - before_.rows_already_deleted,
        .seconds = std::chrono::duration<double>(at - last_).count(),
        .closed_early = window.comment.ends_with(kClosedEarlyComment)});
    before_ = now;
    last_ = at;
  }

 private:
  RunLog& log_;
  std::chrono::steady_clock::time_point last_;
  RunTotals before_;
};

// Rows and keys the statements written so far name (a dry run's "rows").
std::int64_t planned_rows(const SqlWriteStats& stats) {
  std::uint64_t rows = 0;
  for (const auto& [table, t] : stats.tables) rows += t.delete_rows + t.upsert_rows;
  return static_cast<std::int64_t>(rows);
}

// Whether compile or apply draws the progress line: on a terminal, with text log lines. JSON log
// lines stay bare JSON objects, which a redrawn line and its escapes would break.
bool progress_line(const CompileCommand& c) {
  return Progress::default_enabled() && c.log_format == LogFormat::kText;
}

// The log of a compile or apply run: window lines where no progress line is drawn, without -q;
// retries, reconnects and waits always (on a terminal, over the progress line).
RunLog run_log(std::string_view command, const CompileCommand& c) {
  const bool drawn = progress_line(c);
  return RunLog(command, c.log_format, true, !drawn && !c.quiet, stderr, drawn);
}

// The PriorState the options ask for: `none`, or batched lookups over HS2.
// `observer` (may be null) hears of the lookups' SELECTs.
std::unique_ptr<PriorState> make_prior_state(const CompileCommand& c, const Hs2Settings* hs2,
                                             const SessionFactory& sessions,
                                             ExecutionObserver* observer = nullptr) {
  if (c.options.prior == PriorSource::kImpala) {
    auto lookups = std::make_unique<Hs2PriorState>(*hs2, sessions, c.options);
    lookups->observe(observer);
    return lookups;
  }
  return std::make_unique<NoPriorState>();
}

// What the lookups of --prior impala did; nothing for --prior none.
std::optional<Hs2PriorStats> lookup_stats(const PriorState& prior) {
  if (const auto* lookups = dynamic_cast<const Hs2PriorState*>(&prior)) return lookups->stats();
  return std::nullopt;
}

}  // namespace

DurationParse read_duration(std::string_view text) {
  if (text.empty()) return {};
  // A bare number is seconds; otherwise every number has its unit, hours before minutes before
  // seconds, each at most once: "1h30" (read as 1h and 30 seconds) is refused, not guessed.
  const bool bare = text.find_first_not_of("0123456789") == std::string_view::npos;
  constexpr std::string_view kUnits = "hms";
  std::size_t next_unit = 0;  // the units before it are used
  std::chrono::milliseconds total{0};
  bool too_long = false;
  std::size_t i = 0;
  while (i < text.size()) {
    std::uint64_t n = 0;
    const std::size_t digits = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      // Past what any duration below the cap needs, the number's value no longer matters.
      if (n <= std::uint64_t{1} << 40) n = n * 10 + static_cast<std::uint64_t>(text[i] - '0');
      ++i;
    }
    if (i == digits) return {};
    if (i == text.size() && !bare) return {};
    const std::size_t unit = i < text.size() ? kUnits.find(text[i++]) : kUnits.find('s');
    if (unit == std::string_view::npos || unit < next_unit) return {};
    next_unit = unit + 1;
    const std::uint64_t seconds_per = unit == 0 ? 3600 : unit == 1 ? 60 : 1;
    const auto cap = static_cast<std::uint64_t>(kMaxDuration.count() / 1000);
    if (n > cap / seconds_per) {
      too_long = true;
      continue;
    }
    total += std::chrono::seconds(static_cast<std::int64_t>(n * seconds_per));
  }
  if (too_long || total > kMaxDuration) return {std::nullopt, true};
  return {total, false};
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  return read_duration(text).duration;
}

void fit_record_limits(InputOptions& in) {
  // The longest record and message must be readable within the budget: lowered to fit when left
  // at their defaults, refused when given larger.
  const auto fit = [&](std::size_t& limit, std::string& source, bool given, std::string_view option,
                       std::string_view why, std::size_t share) {
    const std::size_t largest = in.memory_budget / share;
    if (limit <= largest) return;
    if (!given) {
      limit = largest;
      source = fmt::format("{}, 1/{} of --memory-budget {}", option, share,
                           memory_budget_text(in.memory_budget));
      return;
    }
    const std::uint64_t mib = std::uint64_t{1} << 20;
    throw Error(ErrorCategory::kUsage,
                fmt::format("{} {}: {}, more than --memory-budget {} allows; give at most {} (1/{} "
                            "of the budget), or --memory-budget {}M or more",
                            option, limit, why, memory_budget_text(in.memory_budget), largest,
                            share, (std::uint64_t{limit} * share + mib - 1) / mib));
  };
  ReaderLimits& l = in.limits;
  fit(l.max_record_bytes, l.record_limit_source, in.record_limit_given, "--max-record-bytes",
      "reading a record that long can take about nine times its size", kRecordShare);
  fit(l.max_inflated_bytes, l.message_limit_source, in.message_limit_given, "--max-message-bytes",
      "reading a message that long can take about nine times its size", kRecordShare);
  // Chunks waiting for the rest of their message: two messages' worth at the limit.
  fit(l.max_split_bytes, l.split_limit_source, in.split_limit_given, "--max-split-bytes",
      "holding that many bytes of split message chunks, then reading the message they make, "
      "takes several times that",
      kRecordShare / 2);
}

namespace {

int check_run(InputOptions& in) {
  fit_record_limits(in);
  RejectSink rejects(RejectPolicy{in.max_rejects, in.reject_file}, stderr,
                     Progress::default_enabled());
  Reader reader(in.files, rejects, in.limits);
  reader.validation_only();  // check writes no rows
  Progress progress("check", Progress::Counts::kRecords);
  progress.set_input_size(input_size(in.files));
  RunOutcome outcome = run_reporting_failures(progress, [&] {
    for (Event e; reader.next(e);) {
      progress.tick(reader);
      throw_if_stopped();
    }
  });
  // The report is check's product on stdout; a run that failed before reading a record has none.
  if (outcome.status == kExitOk || outcome.stopped_by != StopReason::kNone ||
      reader.stats().records > 0) {
    try {
      OutputFile out("-");
      // A report of the part read, said so: its counts look like the whole input's otherwise.
      if (!outcome.completed) {
        out.write(
            "stopped before the end of the input (see standard error): the counts are of "
            "the records read until then\n",
            "the report");
      }
      out.write(read_summary(reader.stats()), "the report");
      out.commit();
    } catch (const Error& e) {
      if (outcome.status == kExitOk && e.category() != ErrorCategory::kOutputClosed) {
        outcome.status = exit_code_for(e.category());
        outcome.error = e.what();
        print_diagnostic(stderr, "atlas2kudu: {}\n", e.what());
      }
    }
  }
  RunReport report = report_of("check", outcome);
  report.read = &reader.stats();
  report.input_bytes = reader.bytes_read();
  return write_run_reports(in, report);
}

// Whether the pipeline should read ahead on a second thread (cli/pipeline.h): asked for, or by
// default when the process may use two CPUs; and only for regular files (those input_size()
// sums, `input_bytes` when it has a value), whose reads never wait on a producer that may stay
// quiet.
bool read_ahead_wanted(const CompileCommand& c, std::optional<std::uint64_t> input_bytes) {
  unsigned threads = c.threads;
  if (threads == 0) {
    cpu_set_t cpus;
    threads = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 2 ? 2 : 1;
  }
  return threads >= 2 && input_bytes.has_value();
}

// validate_hs2_options, and a warning that a run without certificate checks must not pass
// unseen (impala-shell warns too): its password or token goes to whoever answers.
Hs2Settings checked_hs2_settings(std::string_view command, const Hs2Options& options) {
  Hs2Settings settings = validate_hs2_options(options);
  if (options.ssl && options.ssl_insecure_skip_verify) {
    print_diagnostic(stderr,
                     "atlas2kudu {}: warning: --ssl_insecure_skip_verify: the certificate and name "
                     "of {} are not checked; whoever answers there gets what this run sends{}\n",
                     command, format_endpoint(settings.endpoint().host, settings.endpoint().port),
                     options.ldap || options.jwt ? ", the password or token included" : "");
  }
  return settings;
}

int compile_run(CompileCommand& c) {
  // compile reads stored state when it is given a connection (-i), unless --prior says otherwise.
  if (!c.prior_given) {
    c.options.prior = c.connection_given ? PriorSource::kImpala : PriorSource::kNone;
    // `compile -k FILE` expecting apply's default server (localhost) would otherwise get SQL that
    // assumes nothing stored, silently.
    if (!c.connection_given && !c.connection_options.empty()) {
      print_diagnostic(
          stderr,
          "atlas2kudu compile: warning: {} without -i: no prior state is read (compile "
          "reads it only from the Impala that -i names), so the SQL assumes none is "
          "stored; give -i, or --prior none to say so\n",
          fmt::join(c.connection_options, ", "));
    }
  }
  use_memory_budget(c, false);
  std::optional<Hs2Settings> settings;
  SessionFactory sessions;
  if (c.options.prior == PriorSource::kImpala)
    settings.emplace(checked_hs2_settings("compile", c.hs2));
  const StopDeadline deadline(c.deadline.after, "--deadline " + c.deadline.text);
  RunLog log = run_log("compile", c);
  if (settings) {
    sessions = hs2_session_factory(*settings, resolve_hs2_credentials(*settings),
                                   [&log](const HttpWait& wait) { log.http_wait(wait); });
  }
  std::optional<ServerWatch> watch;  // the prior-state lookups' retries, reconnects and waits
  if (settings) watch.emplace(log);
  WindowLogger windows(log);
  const std::unique_ptr<PriorState> prior =
      make_prior_state(c, settings ? &*settings : nullptr, sessions, watch ? &*watch : nullptr);
  Compiler compiler(c.options);
  // The SQL's temporary file first: a run that cannot create it ends before the reject file,
  // written in place, is emptied.
  OutputFile output(c.output);
  RejectSink rejects(RejectPolicy{c.in.max_rejects, c.in.reject_file}, stderr, progress_line(c));
  Reader reader(c.in.files, rejects, c.in.limits);
  PrintExecutor printer(output.get());
  SqlWindowWriter writer(c.options, printer);
  Progress progress("compile", Progress::Counts::kRecordsAndStatements, progress_line(c));
  const std::optional<std::uint64_t> input_bytes = input_size(c.in.files);
  progress.set_input_size(input_bytes);
  PipelineStats pipeline;
  const RunOutcome outcome = run_reporting_failures(progress, [&] {
    run_pipeline(
        reader, compiler, *prior, writer, &progress,
        [&](const WindowInfo& window, const Reader*) {
          const std::int64_t rows = planned_rows(writer.stats());
          progress.set_written(writer.stats().statements, static_cast<std::uint64_t>(rows));
          windows.applied(window, {writer.stats().statements, rows}, false);
          if (watch) watch->reading(window.index + 1);
        },
        &pipeline, read_ahead_wanted(c, input_bytes));
    output.commit();
  });
  const MemoryReport memory{c.in.memory_budget,
                            pipeline.closed_early,
                            compiler.knowledge_stats(),
                            unused_memory_releases(),
                            transparent_huge_pages_allowed(),
                            c.options.evicted == EvictedKnowledge::kLookUpAgain};
  RunReport report = report_of("compile", outcome);
  report.read = &reader.stats();
  report.input_bytes = reader.bytes_read();
  report.write = &writer.stats();
  report.memory = &memory;
  const std::optional<Hs2PriorStats> lookups = lookup_stats(*prior);
  if (lookups) {
    report.lookups = &*lookups;
    report.unreadable_props = &compiler.unreadable_props();
  }
  if (settings) report.http_waits = log.http_waits();
  print_unreadable_props(stderr, report);
  print_read_warnings(stderr, report, c.quiet);
  if (!c.quiet && !outcome.output_closed) {
    const bool to_file = !c.output.empty() && c.output != "-";
    print_compile_summary(stderr, report,
                          to_file               ? SqlDestination::kFile
                          : std::ferror(stdout) ? SqlDestination::kStdoutFailed
                                                : SqlDestination::kStdout);
  }
  return write_run_reports(c.in, report);
}

// apply --checkpoint: standard input and pipes have no identity, so a later run reads them again
// in full. Last, that replays what was applied last (harmless); before another input, a rerun
// would apply them after that input a second time, taking its rows back to older states. (Every
// input opened before this is called: before_reading.)
void refuse_unrecognisable_before_others(const std::vector<std::string>& files) {
  for (std::size_t i = 0; i + 1 < files.size(); ++i) {
    if (names_a_regular_file(files[i])) continue;
    const bool is_stdin = files[i] == "-";
    throw Error(ErrorCategory::kUsage,
                fmt::format("--checkpoint: {} comes before {}: a later run cannot tell how much "
                            "of it was applied and reads it again in full, which would apply it "
                            "after {} a second time, taking rows back to older states. Give it "
                            "last, or save it to a file first",
                            is_stdin ? std::string("- (standard input)")
                                     : one_line(files[i]) + " (not a regular file)",
                            one_line(files[i + 1]), one_line(files[i + 1])));
  }
}

int apply_run(ApplyCommand& a) {
  CompileCommand& c = a.compile;
  if (!a.checkpoint.empty()) refuse_unrecognisable_before_others(c.in.files);
  use_memory_budget(c, true);
  const Hs2Settings settings = checked_hs2_settings("apply", c.hs2);
  // One run at a time per checkpoint, decided before anything else happens (exit 75).
  std::optional<CheckpointLock> lock;
  if (!a.checkpoint.empty()) lock.emplace(a.checkpoint);
  const StopDeadline deadline(c.deadline.after, "--deadline " + c.deadline.text);
  RunLog log = run_log("apply", c);  // outlives the sessions, which tell it of HTTP waits
  const SessionFactory sessions =
      hs2_session_factory(settings, resolve_hs2_credentials(settings),
                          [&log](const HttpWait& wait) { log.http_wait(wait); });
  ServerWatch watch(log);  // outlives the prior state and the executor, which report to it
  WindowLogger windows(log);
  const std::unique_ptr<PriorState> prior = make_prior_state(c, &settings, sessions, &watch);
  // A resumed run appends: the reject file's earlier lines describe records it skips.
  RejectSink rejects(RejectPolicy{c.in.max_rejects, c.in.reject_file, !a.checkpoint.empty()},
                     stderr, progress_line(c));
  Reader reader(c.in.files, rejects, c.in.limits);
  std::optional<CheckpointFile> checkpoint;
  if (!a.checkpoint.empty()) {
    Reader::ResumeNotice resumed;
    if (!c.quiet) {
      resumed = [&a](std::string_view source, const SourceMark& applied) {
        if (applied.complete) {
          // Not "skipping": records appended since that run are read and applied now.
          print_diagnostic(stderr,
                           "atlas2kudu apply: {}: an earlier run applied it to its end, {} "
                           "record{}; only records added since are read ({})\n",
                           one_line(source), applied.next_record,
                           applied.next_record == 1 ? "" : "s", one_line(a.checkpoint));
        } else if (applied.next_record > 0) {
          print_diagnostic(stderr,
                           "atlas2kudu apply: resuming {} after its first {} record{}, applied "
                           "by an earlier run ({})\n",
                           one_line(source), applied.next_record,
                           applied.next_record == 1 ? "" : "s", one_line(a.checkpoint));
        }
      };
    }
    checkpoint.emplace(
        a.checkpoint, reader, std::move(resumed),
        CheckpointTarget{format_endpoint(settings.endpoint().host, settings.endpoint().port),
                         c.options.database});
    if (c.options.prior != PriorSource::kImpala) checkpoint->forget_window_knowledge();
    if (!checkpoint->discarded_window_knowledge().empty()) {
      // Said even with -q: a window an earlier run stopped in is now folded from the tables.
      print_diagnostic(stderr,
                       "atlas2kudu apply: warning: {} was removed unused: {}; a window an "
                       "earlier run stopped in and did not record, if any, is folded from what "
                       "the tables hold now\n",
                       one_line(checkpoint->window_knowledge_path()),
                       checkpoint->discarded_window_knowledge());
    }
  }
  Compiler compiler(c.options);
  if (checkpoint) {
    compiler.continue_numbering(checkpoint->state().windows_applied,
                                checkpoint->state().events_applied);
    watch.reading(checkpoint->state().windows_applied + 1);
    if (c.options.prior == PriorSource::kImpala && checkpoint->assume_window_knowledge(compiler)) {
      if (!c.quiet) {
        const std::size_t events = checkpoint->stopped_window_events();
        print_diagnostic(
            stderr,
            "atlas2kudu apply: the window an earlier run stopped in{} is folded again{} "
            "from what that run read before it ({}), not from the rows it wrote\n",
            events ? fmt::format(" ({} event{})", events, events == 1 ? "" : "s") : std::string(),
            events ? ", read as one window," : "", one_line(checkpoint->window_knowledge_path()));
      }
    }
  }
  Hs2Executor executor(settings, sessions);
  executor.observe(&watch);
  // Rows the server refuses: set aside in the reject file when there is one, else the run stops.
  executor.set_aside_refused_rows(!c.in.reject_file.empty());
  executor.on_statement([&log, sessions = settings.options().sessions](const StatementDone& done) {
    log_row_errors(done, log, sessions);
  });
  SqlWindowWriter writer(c.options, executor, &rejects);
  Progress progress("apply", Progress::Counts::kRecordsAndStatements, progress_line(c));
  const std::optional<std::uint64_t> input_bytes = input_size(c.in.files);
  progress.set_input_size(input_bytes);
  const WindowApplied applied = [&](const WindowInfo& window, const Reader* at_window_end) {
    // A part of a window is recorded with the window's last part: a rerun reads the whole
    // window again.
    if (checkpoint && at_window_end) checkpoint->window_applied(window, *at_window_end);
    if (checkpoint && !at_window_end) checkpoint->part_applied(window);
    const Hs2RunStats hs2 = executor.stats();
    progress.set_written(writer.stats().statements, hs2.rows_modified);
    windows.applied(window, {hs2.statements, hs2.rows_modified, hs2.row_errors, hs2.retries,
                             hs2.rows_already_deleted});
    watch.reading(window.index + 1);
  };
  PipelineStats pipeline;
  const RunOutcome outcome = run_reporting_failures(progress, [&] {
    WindowStarting starting;
    FirstWindowEnd first_window_read;
    if (checkpoint && c.options.prior == PriorSource::kImpala) {
      starting = [&](const KnowledgeSnapshot& knowledge, std::span<const Event> window) {
        checkpoint->window_starting(knowledge, window, reader);
      };
      // The first window covers the one an earlier run stopped in.
      first_window_read = [&](const Reader& r, std::span<const Event> window) {
        return checkpoint->first_window_may_close(r, window);
      };
    }
    run_pipeline(reader, compiler, *prior, writer, &progress, applied, &pipeline,
                 read_ahead_wanted(c, input_bytes), starting, first_window_read);
    if (checkpoint) checkpoint->run_completed(reader);
  });
  // Sessions end before the report: a stopped run's statements were cancelled and closed, and
  // the server is told the sessions are over.
  executor.finish();
  if (c.options.prior == PriorSource::kNone && reader.stats().skipped > 0) {
    // Said even with -q: the tables may not be what an uninterrupted run leaves.
    print_diagnostic(stderr,
                     "atlas2kudu apply: warning: with --prior none this run knows nothing of the "
                     "{} record{} it skipped (--checkpoint): the props_json of entities they "
                     "touched starts again from this run's attributes, so rows may differ from "
                     "an uninterrupted run's; resume with --prior impala to read that state from "
                     "the tables\n",
                     reader.stats().skipped, reader.stats().skipped == 1 ? "" : "s");
  }
  Hs2RunStats hs2 = executor.stats();
  // A window whose refused rows went past --max-rejects ran its statements, but the run failed
  // before it was done (recorded, counted as progress): applied are the windows written in full.
  hs2.windows = writer.stats().windows;
  const MemoryReport memory{c.in.memory_budget,
                            pipeline.closed_early,
                            compiler.knowledge_stats(),
                            unused_memory_releases(),
                            transparent_huge_pages_allowed(),
                            c.options.evicted == EvictedKnowledge::kLookUpAgain};
  RunReport report = report_of("apply", outcome);
  report.read = &reader.stats();
  report.input_bytes = reader.bytes_read();
  report.write = &writer.stats();
  report.memory = &memory;
  report.execution = &hs2;
  if (checkpoint) report.checkpoint = &*checkpoint;
  const std::optional<Hs2PriorStats> lookups = lookup_stats(*prior);
  if (lookups) {
    report.lookups = &*lookups;
    report.unreadable_props = &compiler.unreadable_props();
  }
  report.http_waits = log.http_waits();
  print_unreadable_props(stderr, report);
  print_read_warnings(stderr, report, c.quiet);
  print_inputs_held_back(stderr, report);
  if (!c.quiet) {
    print_apply_summary(stderr, report, a.checkpoint);
  } else {
    print_rerun_point(stderr, report, a.checkpoint);
  }
  return write_run_reports(c.in, report);
}

}  // namespace

int run_check(InputOptions& in) {
  return reporting_early_failures("check", in, run_outputs(in), [&] { return check_run(in); });
}

int run_compile(CompileCommand& c) {
  return reporting_early_failures(
      "compile", c.in, run_outputs(c.in, c.output), [&] { return compile_run(c); },
      [&](const RunReport& stopped) {
        const SqlWriteStats nothing_written;
        RunReport report = stopped;
        report.write = &nothing_written;
        print_read_warnings(stderr, report, c.quiet);
        if (!c.quiet) {
          print_compile_summary(stderr, report,
                                c.output.empty() || c.output == "-" ? SqlDestination::kStdout
                                                                    : SqlDestination::kFile);
        }
      });
}

int run_apply(ApplyCommand& a) {
  return reporting_early_failures(
      "apply", a.compile.in, run_outputs(a.compile.in, {}, a.checkpoint),
      [&] { return apply_run(a); },
      [&](const RunReport& stopped) {
        const Hs2RunStats nothing_run;
        RunReport report = stopped;
        report.execution = &nothing_run;
        print_read_warnings(stderr, report, a.compile.quiet);
        if (!a.compile.quiet) print_apply_summary(stderr, report, a.checkpoint);
        // Said even with -q, as print_rerun_point is: the stop came before the checkpoint was
        // read, so the file is as it was.
        if (!a.checkpoint.empty()) {
          print_nothing_recorded(stderr, a.checkpoint,
                                 std::filesystem::exists(std::filesystem::path(a.checkpoint)));
        }
      });
}

int run_ddl(const DdlCommand& d) {
  check_single_output({"-o", d.output, OutputKind::kSql});
  OutputFile output(d.output);
  const std::string sql = d.fdw ? foreign_table_ddl(d.options) : projection_ddl(d.options);
  output.write(sql, "the DDL");
  output.commit();
  return kExitOk;
}

int run_digest(const std::string& type_name, const std::string& qualified_name) {
  // No accepted record holds a name that is not UTF-8 (the reader rejects it), so no row can
  // have its digest: a typo of the shell's quoting more likely than a name to look up.
  for (const auto& [what, name] :
       {std::pair<const char*, const std::string&>{"TYPE_NAME", type_name},
        {"QUALIFIED_NAME", qualified_name}}) {
    const std::size_t valid = valid_utf8_prefix(name);
    if (valid == name.size()) continue;
    throw Error(ErrorCategory::kUsage,
                fmt::format("{} {}: not UTF-8 (byte 0x{:02x} at offset {}); Atlas names are UTF-8, "
                            "and no row can hold this one",
                            what, one_line(name), static_cast<unsigned char>(name[valid]), valid));
  }
  OutputFile out("-");
  out.write(to_hex(qn_digest(type_name, qualified_name)) + "\n", "the digest");
  out.commit();
  return kExitOk;
}

}  // namespace atlas2kudu
