#include "cli/commands.h"

#include <fmt/core.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "atlas2kudu/error.h"
#include "atlas2kudu/prior_state.h"
#include "atlas2kudu/reader.h"
#include "cli/checkpoint.h"
#include "cli/exit_codes.h"
#include "cli/pipeline.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "compile/print_executor.h"
#include "compile/sql_writer.h"
#include "hs2/credentials.h"
#include "hs2/executor.h"
#include "hs2/prior_state.h"
#include "hs2/session.h"
#include "util/atomic_file.h"
#include "util/digest.h"

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
  void commit() {
    if (file_) {
      file_->commit();
    } else if (std::fflush(stdout) != 0) {
      throw Error(ErrorCategory::kIo,
                  fmt::format("stdout: write failed: {}", std::strerror(errno)));
    }
  }

 private:
  std::optional<AtomicFile> file_;
};

void write_text_file(const std::string& path, const std::string& text) {
  write_file_atomically(path, text, 0644);
}

// How a reading run ended. Bad input past --max-rejects and HS2 failures end the run but not the
// report: the summary and --stats still describe what was done.
struct RunOutcome {
  bool completed = false;
  int status = kExitOk;
  double seconds = 0;
};

RunOutcome run_reporting_failures(Progress& progress, const std::function<void()>& body) {
  const auto started = std::chrono::steady_clock::now();
  RunOutcome outcome;
  std::string failure;
  try {
    body();
    outcome.completed = true;
  } catch (const Error& e) {
    failure = e.what();
    outcome.status = exit_code_for(e.category());
  }
  progress.done();
  if (!failure.empty()) fmt::print(stderr, "atlas2kudu: {}\n", failure);
  outcome.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

// The PriorState the options ask for: `none`, or batched lookups over HS2.
std::unique_ptr<PriorState> make_prior_state(const CompileCommand& c, const Hs2Settings* hs2,
                                             const SessionFactory& sessions) {
  if (c.options.prior == PriorSource::kImpala) {
    return std::make_unique<Hs2PriorState>(*hs2, sessions, c.options);
  }
  return std::make_unique<NoPriorState>();
}

}  // namespace

int run_check(const InputOptions& in) {
  RejectSink rejects(RejectPolicy{in.max_rejects, in.reject_file});
  Reader reader(in.files, rejects, in.limits);
  Progress progress("check");
  const RunOutcome outcome = run_reporting_failures(progress, [&] {
    for (Event e; reader.next(e);) progress.tick(reader.stats().records, reader.stats().events);
  });
  print_read_summary(stdout, reader.stats());
  if (!in.stats_file.empty()) {
    write_text_file(in.stats_file, stats_json({.command = "check",
                                               .completed = outcome.completed,
                                               .seconds = outcome.seconds,
                                               .read = &reader.stats()}));
  }
  return outcome.status;
}

int run_compile(CompileCommand& c) {
  // SPEC §3: compile reads stored state when it is given a connection, unless told otherwise.
  if (!c.prior_given) {
    c.options.prior = c.connection_given ? PriorSource::kImpala : PriorSource::kNone;
  }
  std::optional<Hs2Settings> settings;
  SessionFactory sessions;
  if (c.options.prior == PriorSource::kImpala) {
    settings.emplace(validate_hs2_options(c.hs2));
    sessions = hs2_session_factory(*settings, resolve_hs2_credentials(*settings));
  }
  const std::unique_ptr<PriorState> prior =
      make_prior_state(c, settings ? &*settings : nullptr, sessions);
  Compiler compiler(c.options);
  RejectSink rejects(RejectPolicy{c.in.max_rejects, c.in.reject_file});
  Reader reader(c.in.files, rejects, c.in.limits);
  OutputFile output(c.output);
  PrintExecutor printer(output.get());
  SqlWindowWriter writer(c.options, printer);
  Progress progress("compile");
  const RunOutcome outcome = run_reporting_failures(progress, [&] {
    run_pipeline(reader, compiler, *prior, writer, &progress,
                 [&](const WindowInfo&, const Reader&) {
                   progress.set_statements(writer.stats().statements);
                 });
    output.commit();
  });
  const SqlWriteStats& run = writer.stats();
  const ReadStats& read = reader.stats();
  if (!c.quiet) {
    fmt::print(stderr,
               "atlas2kudu compile: {} events ({} records, {} rejected) in {} window{} -> {} "
               "statement{}, {:.1f} KiB of SQL{}\n",
               read.events, read.records, read.rejected, run.windows, run.windows == 1 ? "" : "s",
               run.statements, run.statements == 1 ? "" : "s", run.sql_bytes / 1024.0,
               outcome.completed ? "" : "; stopped, no output written");
  }
  if (!c.in.stats_file.empty()) {
    write_text_file(c.in.stats_file, stats_json({.command = "compile",
                                                 .completed = outcome.completed,
                                                 .seconds = outcome.seconds,
                                                 .read = &read,
                                                 .write = &run}));
  }
  return outcome.status;
}

int run_apply(ApplyCommand& a) {
  CompileCommand& c = a.compile;
  const Hs2Settings settings = validate_hs2_options(c.hs2);
  const SessionFactory sessions = hs2_session_factory(settings, resolve_hs2_credentials(settings));
  const std::unique_ptr<PriorState> prior = make_prior_state(c, &settings, sessions);
  Compiler compiler(c.options);
  RejectSink rejects(RejectPolicy{c.in.max_rejects, c.in.reject_file});
  Reader reader(c.in.files, rejects, c.in.limits);
  std::optional<CheckpointFile> checkpoint;
  if (!a.checkpoint.empty()) checkpoint.emplace(a.checkpoint, reader);
  Hs2Executor executor(settings, sessions);
  SqlWindowWriter writer(c.options, executor);
  Progress progress("apply");
  const WindowApplied applied = [&](const WindowInfo& window, const Reader& r) {
    progress.set_statements(writer.stats().statements);
    if (checkpoint) checkpoint->window_applied(window, r);
  };
  const RunOutcome outcome = run_reporting_failures(progress, [&] {
    run_pipeline(reader, compiler, *prior, writer, &progress, applied);
    if (checkpoint) checkpoint->run_completed(reader);
  });
  const ReadStats& read = reader.stats();
  const SqlWriteStats& run = writer.stats();
  const Hs2RunStats hs2 = executor.stats();
  if (!c.quiet) {
    if (read.skipped) {
      fmt::print(stderr, "atlas2kudu apply: {} records skipped, applied by an earlier run ({})\n",
                 read.skipped, a.checkpoint);
    }
    fmt::print(stderr,
               "atlas2kudu apply: {} events ({} records, {} rejected), {} window{} applied, {} "
               "statements, {} rows modified, {} row errors, {} retries, {:.1f} s{}\n",
               read.events, read.records, read.rejected, hs2.windows, hs2.windows == 1 ? "" : "s",
               hs2.statements, hs2.rows_modified, hs2.row_errors, hs2.retries, outcome.seconds,
               outcome.completed ? "" : " (stopped)");
    for (const auto& [table, rows] : hs2.rows_by_table) {
      fmt::print(stderr, "  {:<24}{:>12} rows modified\n", table, rows);
    }
  }
  if (!c.in.stats_file.empty()) {
    write_text_file(c.in.stats_file, stats_json({.command = "apply",
                                                 .completed = outcome.completed,
                                                 .seconds = outcome.seconds,
                                                 .read = &read,
                                                 .write = &run,
                                                 .execution = &hs2}));
  }
  return outcome.status;
}

int run_ddl(const DdlCommand& d) {
  OutputFile output(d.output);
  const std::string sql = projection_ddl(d.options);
  if (std::fwrite(sql.data(), 1, sql.size(), output.get()) != sql.size()) {
    throw Error(ErrorCategory::kIo, "cannot write the DDL");
  }
  output.commit();
  return kExitOk;
}

int run_digest(const std::string& type_name, const std::string& qualified_name) {
  fmt::print("{}\n", to_hex(qn_digest(type_name, qualified_name)));
  return kExitOk;
}

}  // namespace atlas2kudu
