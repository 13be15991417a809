#include "cli/cli.h"

#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/prior_state.h"
#include "atlas2kudu/reader.h"
#include "cli/checkpoint.h"
#include "cli/exit_codes.h"
#include "cli/hs2_flags.h"
#include "cli/pipeline.h"
#include "cli/progress.h"
#include "compile/ddl.h"
#include "compile/print_executor.h"
#include "compile/sql_writer.h"
#include "hs2/executor.h"
#include "hs2/options.h"
#include "hs2/prior_state.h"
#include "input/json_text.h"
#include "util/digest.h"
#include "util/version.h"

namespace atlas2kudu {

namespace {

// Options every command that reads notifications shares.
struct InputOptions {
  std::vector<std::string> files;
  std::uint64_t max_rejects = 0;
  std::string reject_file;
  std::string stats_file;
};

void add_input_options(CLI::App* cmd, InputOptions& in) {
  cmd->add_option("FILE", in.files,
                  "Notification exports to read in order; '-' or none reads stdin; *.gz and gzip "
                  "data are inflated");
  cmd->add_option("--max-rejects", in.max_rejects,
                  "Go on past malformed records, failing only once more than N were rejected "
                  "(default 0: stop at the first)");
  cmd->add_option("--reject-file", in.reject_file,
                  "Write each rejected record verbatim, with reason and position, as a JSON line");
  cmd->add_option("--stats", in.stats_file, "Write a JSON summary of the run to FILE");
}

// An option taking one of a fixed set of words, stored as the matching enum value.
template <typename E>
CLI::Option* add_choice(CLI::App* cmd, const std::string& name, E& target,
                        std::vector<std::pair<std::string, E>> choices, const std::string& help) {
  std::vector<std::string> words;
  std::string default_word;
  for (const auto& [word, value] : choices) {
    words.push_back(word);
    if (value == target) default_word = word;
  }
  return cmd
      ->add_option_function<std::string>(
          name,
          [&target, choices](const std::string& word) {
            for (const auto& [w, value] : choices) {
              if (w == word) target = value;
            }
          },
          help)
      ->check(CLI::IsMember(words))
      ->default_str(default_word);
}

const std::vector<std::pair<std::string, KeyEncoding>> kKeyEncodings = {
    {"hex", KeyEncoding::kHex}, {"binary", KeyEncoding::kBinary}};
constexpr const char* kKeyEncodingHelp =
    "KEY columns as 32-char lowercase hex STRING (any Impala) or 16-byte BINARY (Impala >= 4.4)";

void write_text_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    throw Error(ErrorCategory::kIo,
                fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) {
    throw Error(ErrorCategory::kIo,
                fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  }
}

std::string read_stats_json(std::string_view command, const ReadStats& s, bool completed,
                            double seconds) {
  std::string out = fmt::format("{{\"command\":\"{}\",\"completed\":{},\"elapsed_seconds\":{:.3f},",
                                command, completed, seconds);
  append_read_stats_json(s, out);
  out += "}\n";
  return out;
}

// The --stats JSON for compile/apply: the reader's counts plus windows, statements, per table.
// `extra_members` (",\"name\":value,...") is added inside the object, e.g. apply's execution
// counts.
std::string run_stats_json(std::string_view command, const ReadStats& s, const SqlWriteStats& run,
                           bool completed, double seconds, std::string_view extra_members = {}) {
  std::string out = fmt::format("{{\"command\":\"{}\",\"completed\":{},\"elapsed_seconds\":{:.3f},",
                                command, completed, seconds);
  append_read_stats_json(s, out);
  out += fmt::format(",\"windows\":{},\"statements\":{},\"sql_bytes\":{}", run.windows,
                     run.statements, run.sql_bytes);
  out += ",\"tables\":{";
  bool first = true;
  for (const auto& [name, t] : run.tables) {
    out += fmt::format(
        "{}\"{}\":{{\"delete_statements\":{},\"delete_keys\":{},\"upsert_statements\":{},"
        "\"upsert_rows\":{}}}",
        first ? "" : ",", name, t.delete_statements, t.delete_rows, t.upsert_statements,
        t.upsert_rows);
    first = false;
  }
  out += '}';
  out += extra_members;
  out += "}\n";
  return out;
}

void print_read_summary(std::FILE* out, const ReadStats& s) {
  fmt::print(out, "records read      {:>12}\n", s.records);
  fmt::print(out, "events accepted   {:>12}\n", s.events);
  fmt::print(out, "records rejected  {:>12}\n", s.rejected);
  if (s.split_chunks)
    fmt::print(out, "split chunks      {:>12}  (held for split-message reassembly)\n",
               s.split_chunks);
  if (s.ignored_lines) {
    fmt::print(out, "ignored lines     {:>12}  (kafka-console-consumer/kcat diagnostics)\n",
               s.ignored_lines);
  }
  if (s.legacy_v1) fmt::print(out, "legacy V1 events  {:>12}\n", s.legacy_v1);
  fmt::print(out, "\n{:<24}{:>12}\n", "operation", "events");
  for (std::size_t i = 0; i < kOperationCount; ++i) {
    fmt::print(out, "{:<24}{:>12}\n", to_string(static_cast<Operation>(i)), s.per_operation[i]);
  }
  if (s.rejected) {
    fmt::print(out, "\n{:<24}{:>12}\n", "rejection reason", "records");
    for (std::size_t i = 0; i < kRejectCodeCount; ++i) {
      if (s.per_reason[i]) {
        fmt::print(out, "{:<24}{:>12}\n", to_string(static_cast<RejectCode>(i)), s.per_reason[i]);
      }
    }
  }
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

int run_check(const InputOptions& in) {
  RejectSink rejects(RejectPolicy{in.max_rejects, in.reject_file});
  Reader reader(in.files, rejects);
  Progress progress("check");
  const RunOutcome outcome = run_reporting_failures(progress, [&] {
    for (Event e; reader.next(e);) progress.tick(reader.stats().records, reader.stats().events);
  });
  print_read_summary(stdout, reader.stats());
  if (!in.stats_file.empty()) {
    write_text_file(in.stats_file,
                    read_stats_json("check", reader.stats(), outcome.completed, outcome.seconds));
  }
  return outcome.status;
}

// A file written under a temporary name and renamed into place on commit(), so a run that stops
// half way (bad input, full disk) never leaves a partial script where a reviewer expects a whole
// one. Without a path it writes to stdout.
class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)) {
    if (path_.empty() || path_ == "-") {
      file_ = stdout;
      return;
    }
    temp_ = path_ + ".partial";
    file_ = std::fopen(temp_.c_str(), "w");
    if (file_ == nullptr) {
      throw Error(ErrorCategory::kIo,
                  fmt::format("{}: cannot create: {}", temp_, std::strerror(errno)));
    }
  }
  ~OutputFile() {
    if (file_ != nullptr && file_ != stdout) {
      std::fclose(file_);
      std::remove(temp_.c_str());
    }
  }
  std::FILE* get() const { return file_; }
  void commit() {
    if (file_ == stdout) {
      if (std::fflush(stdout) != 0) throw Error(ErrorCategory::kIo, "stdout: write failed");
      return;
    }
    std::FILE* f = std::exchange(file_, nullptr);
    if (std::fclose(f) != 0 || std::rename(temp_.c_str(), path_.c_str()) != 0) {
      std::remove(temp_.c_str());
      throw Error(ErrorCategory::kIo,
                  fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
    }
  }

 private:
  std::string path_;
  std::string temp_;
  std::FILE* file_ = nullptr;
};

struct CompileCommand {
  InputOptions in;
  CompileOptions options;
  std::string output;
  bool quiet = false;
  // Connection for --prior impala (compile: only when -i is given).
  Hs2Options hs2;
  bool prior_given = false;
  bool connection_given = false;
};

// The PriorState the options ask for: `none`, or batched lookups over HS2.
std::unique_ptr<PriorState> make_prior_state(const CompileCommand& c, const Hs2Settings* hs2,
                                             const SessionFactory& sessions) {
  if (c.options.prior == PriorSource::kImpala) {
    return std::make_unique<Hs2PriorState>(*hs2, sessions, c.options);
  }
  return std::make_unique<NoPriorState>();
}

void add_compile_options(CLI::App* cmd, CompileCommand& c) {
  add_input_options(cmd, c.in);
  CompileOptions& o = c.options;
  cmd->add_option("--database", o.database, "Database holding the projection tables")
      ->capture_default_str();
  add_choice(cmd, "--key-encoding", o.key_encoding, kKeyEncodings, kKeyEncodingHelp);
  add_choice(cmd, "--tombstone", o.tombstone,
             {{"soft", Tombstone::kSoft}, {"hard", Tombstone::kHard}},
             "ENTITY_DELETE: soft = state DELETED on entity_flat, tags kept; hard = remove "
             "the entity's rows");
  add_choice(cmd, "--prior", o.prior,
             {{"none", PriorSource::kNone}, {"impala", PriorSource::kImpala}},
             "Stored state for keys the input does not establish: none (input only) or "
             "impala (primary-key lookups over HS2)");
  cmd->add_option("--props-max-bytes", o.props_max_bytes,
                  "Cap on props_json; the largest values are dropped first and listed under "
                  "\"_truncated\"")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::size_t{65536}));
  cmd->add_option("--window-events", o.window_events,
                  "Events per window: each window's net effect runs as deletes, then upserts")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--batch-rows", o.batch_rows, "Rows (or keys) per statement at most")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--batch-bytes", o.batch_bytes,
                  "Bytes per statement at most (Impala's limit is 16 MiB)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1024}, std::size_t{16} << 20));
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
  Reader reader(c.in.files, rejects);
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
    write_text_file(c.in.stats_file,
                    run_stats_json("compile", read, run, outcome.completed, outcome.seconds));
  }
  return outcome.status;
}

struct ApplyCommand {
  CompileCommand compile;
  std::string checkpoint;
};

int run_apply(ApplyCommand& a) {
  CompileCommand& c = a.compile;
  const Hs2Settings settings = validate_hs2_options(c.hs2);
  const SessionFactory sessions = hs2_session_factory(settings, resolve_hs2_credentials(settings));
  const std::unique_ptr<PriorState> prior = make_prior_state(c, &settings, sessions);
  Compiler compiler(c.options);
  RejectSink rejects(RejectPolicy{c.in.max_rejects, c.in.reject_file});
  Reader reader(c.in.files, rejects);
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
    std::string execution = fmt::format(
        ",\"applied_windows\":{},\"applied_statements\":{},\"rows_modified\":{},"
        "\"row_errors\":{},\"retries\":{},\"reconnects\":{},\"rows_modified_by_table\":{{",
        hs2.windows, hs2.statements, hs2.rows_modified, hs2.row_errors, hs2.retries,
        hs2.reconnects);
    bool first = true;
    for (const auto& [table, rows] : hs2.rows_by_table) {
      execution += fmt::format("{}\"{}\":{}", first ? "" : ",", table, rows);
      first = false;
    }
    execution += '}';
    write_text_file(c.in.stats_file, run_stats_json("apply", read, run, outcome.completed,
                                                    outcome.seconds, execution));
  }
  return outcome.status;
}

struct DdlCommand {
  DdlOptions options;
  std::string output;
};

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

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{
      "atlas2kudu: compile Apache Atlas entity-change notifications into Impala UPSERT/DELETE "
      "statements on Kudu projection tables, print them (compile) or run them over HiveServer2 "
      "(apply).\nSee man atlas2kudu for the full reference."};
  app.set_version_flag("--version", std::string(kVersion));
  app.require_subcommand(1);
  app.fallthrough(false);

  std::function<int()> command;

  InputOptions check_in;
  CLI::App* check = app.add_subcommand(
      "check",
      "Parse and validate notifications only; print counts per operation and per "
      "rejection reason");
  add_input_options(check, check_in);
  check->callback([&] { command = [&] { return run_check(check_in); }; });

  CompileCommand compile_cmd;
  CLI::App* compile = app.add_subcommand(
      "compile",
      "Dry run: compile notifications into the Impala SQL that apply would run, and "
      "print it (or write it with -o)");
  add_compile_options(compile, compile_cmd);
  compile->add_option("-o,--output", compile_cmd.output,
                      "Write the SQL to FILE (replaced only when the run succeeds)");
  compile->add_flag("-q,--quiet", compile_cmd.quiet, "No summary line on stderr");
  add_hs2_options(compile, &compile_cmd.hs2);
  compile->callback([&] {
    compile_cmd.prior_given = compile->get_option("--prior")->count() > 0;
    compile_cmd.connection_given = compile->get_option("--impalad")->count() > 0;
    command = [&] { return run_compile(compile_cmd); };
  });

  ApplyCommand apply_cmd;
  apply_cmd.compile.options.prior = PriorSource::kImpala;  // SPEC §3: the default for apply
  CLI::App* apply = app.add_subcommand(
      "apply",
      "Compile notifications and run the statements on Impala over HiveServer2, window "
      "by window (deletes, then upserts)");
  add_compile_options(apply, apply_cmd.compile);
  add_hs2_options(apply, &apply_cmd.compile.hs2);
  apply->add_flag("-q,--quiet", apply_cmd.compile.quiet, "No summary on stderr");
  apply->add_option("--checkpoint", apply_cmd.checkpoint,
                    "After each applied window, record in FILE how far the input was applied; a "
                    "rerun with the same FILE skips it");
  apply->callback([&] { command = [&] { return run_apply(apply_cmd); }; });

  DdlCommand ddl_cmd;
  CLI::App* ddl = app.add_subcommand(
      "ddl", "Print the CREATE TABLE statements of the six Kudu projection tables");
  ddl->add_option("--database", ddl_cmd.options.database, "Database to create them in")
      ->capture_default_str();
  add_choice(ddl, "--key-encoding", ddl_cmd.options.key_encoding, kKeyEncodings, kKeyEncodingHelp);
  ddl->add_option("--partitions", ddl_cmd.options.partitions,
                  "Hash partitions per table, on its leading key column")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000));
  ddl->add_option("--audit-first-year", ddl_cmd.options.first_year,
                  "entity_audit: first yearly RANGE partition on event_ts")
      ->capture_default_str()
      ->check(CLI::Range(1970, 9999));
  ddl->add_option("--audit-last-year", ddl_cmd.options.last_year,
                  "entity_audit: last yearly RANGE partition on event_ts")
      ->capture_default_str()
      ->check(CLI::Range(1970, 9999));
  ddl->add_option("-o,--output", ddl_cmd.output, "Write the DDL to FILE");
  ddl->callback([&] { command = [&] { return run_ddl(ddl_cmd); }; });

  std::string digest_type, digest_qn;
  CLI::App* digest = app.add_subcommand(
      "digest", "Print the qn_digest (hex) of TYPE_NAME and QUALIFIED_NAME, the entity_by_qn key");
  digest->add_option("TYPE_NAME", digest_type, "Atlas type name, e.g. hive_table")->required();
  digest->add_option("QUALIFIED_NAME", digest_qn, "qualifiedName, e.g. sales.orders@cl1")
      ->required();
  digest->callback([&] { command = [&] { return run_digest(digest_type, digest_qn); }; });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  // The one place where failures become exit codes (man page, EXIT STATUS).
  try {
    return command();
  } catch (const Error& e) {
    fmt::print(stderr, "atlas2kudu: {}\n", e.what());
    return exit_code_for(e.category());
  } catch (const std::system_error& e) {
    fmt::print(stderr, "atlas2kudu: {}\n", e.what());
    return kExitIoError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "atlas2kudu: internal error: {}\n", e.what());
    return kExitInternal;
  }
}

}  // namespace atlas2kudu
