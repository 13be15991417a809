// The subcommands: what `check`, `compile`, `apply`, `ddl` and `digest` do once the command line
// is parsed (cli.cpp). Each returns its exit status; a failure that ends a run is thrown as Error
// and mapped to an exit code by run_cli, the one place that does so.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/reader.h"
#include "cli/run_log.h"
#include "compile/ddl.h"
#include "hs2/options.h"

namespace atlas2kudu {

// Options every command that reads notifications shares.
struct InputOptions {
  std::vector<std::string> files;
  std::uint64_t max_rejects = 0;
  std::string reject_file;
  std::string stats_file;
  std::string metrics_file;  // --metrics-textfile
  ReaderLimits limits;       // --max-json-depth, --max-cell-bytes, --max-split-*
  // --memory-budget. The longest record and message are read within it (fit_record_limits), by
  // check too, so that check rejects what compile and apply would; compile and apply also split
  // it into CompileOptions::knowledge_budget and window_budget.
  std::size_t memory_budget = kDefaultMemoryBudget;
  // --max-record-bytes, --max-message-bytes and --max-split-bytes given: refused rather than
  // lowered when larger than the budget allows (kRecordShare: 1/32, and 1/16 for split bytes).
  bool record_limit_given = false;
  bool message_limit_given = false;
  bool split_limit_given = false;
};

// Lowers the record, message and split byte limits of `in` to their shares of in.memory_budget
// when they were left at their defaults (naming the budget in the reason of a record past one);
// throws Error(kUsage) when one was given larger than its share allows.
void fit_record_limits(InputOptions& in);

// --deadline: the whole run's time limit (0: none). Past it the run stops as after SIGTERM (the
// running statement cancelled, the checkpoint of the last applied window kept, --stats and the
// summary written), but exits 4.
struct RunDeadline {
  std::chrono::milliseconds after{0};
  std::string text;  // as given, e.g. "45m"
};

// "90" or "90s", "30m", "2h", "1h30m" -> the duration; nullopt for anything else, "1h30" (a
// number without its unit after another), "30m1h" (units out of order) and a duration over
// kMaxDuration (which the clock a deadline is kept on could not add to the time now) included.
//   parse_duration("1h30m") == std::chrono::minutes(90)
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);
inline constexpr std::chrono::milliseconds kMaxDuration = std::chrono::hours(1000000);
// parse_duration, saying whether a text written as a duration was refused for its length.
struct DurationParse {
  std::optional<std::chrono::milliseconds> duration;
  bool too_long = false;
};
DurationParse read_duration(std::string_view text);

struct CompileCommand {
  InputOptions in;
  RunDeadline deadline;
  CompileOptions options;
  std::string output;
  bool quiet = false;
  LogFormat log_format = LogFormat::kText;  // --log-format
  // --threads: 1, 2 (read ahead on a second thread: cli/pipeline.h), or 0 for the default: 2 when
  // the process may run on two CPUs or more.
  unsigned threads = 0;
  // Connection for --prior impala (compile: only when -i is given).
  Hs2Options hs2;
  bool prior_given = false;
  bool connection_given = false;
  // Connection options typed on the command line (not from --config) other than -i, by name.
  std::vector<std::string> connection_options;
};

struct ApplyCommand {
  CompileCommand compile;
  std::string checkpoint;
};

struct DdlCommand {
  DdlOptions options;
  std::string output;
  bool fdw = false;  // print the PostgreSQL foreign tables instead of the Impala DDL
};

int run_check(InputOptions& in);
int run_compile(CompileCommand& c);
int run_apply(ApplyCommand& a);
int run_ddl(const DdlCommand& d);
int run_digest(const std::string& type_name, const std::string& qualified_name);

}  // namespace atlas2kudu
