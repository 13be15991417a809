#include "cli/cli.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/error.h"
#include "cli/commands.h"
#include "cli/config_file.h"
#include "cli/exit_codes.h"
#include "cli/hs2_flags.h"
#include "cli/suggest.h"
#include "cli/whole_number.h"
#include "input/framer.h"
#include "input/json_text.h"
#include "util/ascii_case.h"
#include "util/diagnostic.h"
#include "util/utf8.h"
#include "util/version.h"

namespace atlas2kudu {

namespace {

// The help's note on a limit that --memory-budget bounds (fit_record_limits).
std::string budget_bound(std::size_t option_default, std::size_t share) {
  return fmt::format(
      "(default {0} or 1/{1} of --memory-budget, whichever is less: {2} at the "
      "default budget; never more than 1/{1})",
      option_default, share, kDefaultMemoryBudget / share);
}

void add_input_options(CLI::App* cmd, InputOptions& in) {
  cmd->add_option("FILE", in.files,
                  "Notification exports to read in order; '-' or none reads stdin; *.gz and gzip "
                  "data are inflated");
  cmd->add_option("--max-rejects", in.max_rejects,
                  "Go on past malformed records, failing only once more than N were rejected "
                  "(default 0: stop at the first)")
      ->transform(whole_number(0));
  cmd->add_option("--reject-file", in.reject_file,
                  "Write each rejected record verbatim, with reason and position, as a JSON line")
      ->type_name("FILE");
  cmd->add_option("--stats", in.stats_file,
                  "Write a JSON summary of the run to FILE (schema in man atlas2kudu, STATS FILE)")
      ->type_name("FILE");
  cmd->add_option("--metrics-textfile", in.metrics_file,
                  "At the end of every run, replace FILE atomically with the run's metrics in "
                  "Prometheus text format, for node_exporter's textfile collector (man "
                  "atlas2kudu, METRICS)")
      ->type_name("FILE");
  // Bounds on what one record may make the reader hold or do; past one the record is rejected
  // (too-large), never allocated.
  ReaderLimits& l = in.limits;
  cmd->add_option("--max-record-bytes", l.max_record_bytes,
                  "Reject a record (one line or JSON document of the input) longer than N bytes " +
                      budget_bound(kDefaultMaxRecordBytes, kRecordShare))
      ->transform(whole_number(1024, std::uint64_t{1} << 34));
  cmd->add_option("--max-message-bytes", l.max_inflated_bytes,
                  "Reject a GZIP or split message that decompresses to more than N bytes " +
                      budget_bound(kDefaultMaxMessageBytes, kRecordShare))
      ->transform(whole_number(1024, std::uint64_t{1} << 34));
  cmd->add_option("--max-cell-bytes", l.max_cell_bytes,
                  "Reject an event whose type (a relationship end's too), qualifiedName, name, tag "
                  "or label text (or a tag's attributes) is longer than N bytes: Kudu refuses "
                  "such a row (its "
                  "max_cell_size_bytes)")
      ->capture_default_str()
      ->transform(whole_number(1, std::uint64_t{1} << 30));
  cmd->add_option("--max-json-depth", l.max_json_depth,
                  "Reject a record whose JSON nests objects and arrays more than N levels deep")
      ->capture_default_str()
      ->transform(whole_number(8, kLargestMaxJsonDepth));
  cmd->add_option("--max-split-messages", l.max_split_messages,
                  "Split messages that may wait for their chunks at once; a chunk of one more is "
                  "rejected")
      ->capture_default_str()
      ->transform(whole_number(1));
  cmd->add_option("--max-split-chunks", l.max_split_chunks,
                  "Reject a split message chunk whose msgSplitCount is above N")
      ->capture_default_str()
      ->transform(whole_number(2, std::uint64_t{1} << 20));
  cmd->add_option("--max-split-bytes", l.max_split_bytes,
                  "Bytes of split message chunks held at once, in all; a chunk that would pass "
                  "it is rejected " +
                      budget_bound(kDefaultMaxSplitBytes, kRecordShare / 2))
      ->transform(whole_number(1));
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

// Whether the limits that --memory-budget may lower were given (fit_record_limits).
void note_record_limits(CLI::App* cmd, InputOptions& in) {
  in.record_limit_given = cmd->get_option("--max-record-bytes")->count() > 0;
  in.message_limit_given = cmd->get_option("--max-message-bytes")->count() > 0;
  in.split_limit_given = cmd->get_option("--max-split-bytes")->count() > 0;
}

// `apply -u FILE` with the user name left out: FILE became the user, and the run read standard
// input, at 3 a.m. from cron /dev/null: nothing applied, exit 0. A -u naming a file when no FILE
// is left to read is refused.
void refuse_user_naming_the_input(const CLI::App* cmd, const std::string& user,
                                  const InputOptions& in) {
  struct stat st {};
  if (cmd->get_option("--user")->count() == 0 || ::stat(user.c_str(), &st) != 0 ||
      !S_ISREG(st.st_mode)) {
    return;
  }
  if (in.files.empty()) {
    throw CLI::ValidationError("-u/--user " + one_line(user),
                               "names a file, and no FILE is left to read (the run would read "
                               "standard input): give the user name right after -u (-u NAME "
                               "FILE)");
  }
  // With other inputs, one named as an export is (a.jsonl, exports/b.json.gz): that input would
  // go unread. A user named like a file that happens to be here ("etl") is let be.
  const bool named_as_export = user.find('/') != std::string::npos || user.ends_with(".jsonl") ||
                               user.ends_with(".json") || user.ends_with(".gz");
  if (named_as_export) {
    throw CLI::ValidationError("-u/--user " + one_line(user),
                               "names an input file, which would not be read: give the user name "
                               "right after -u (-u NAME FILE...)");
  }
}

CLI::Option* add_memory_budget(CLI::App* cmd, std::size_t& budget, const std::string& help) {
  return cmd->add_option("--memory-budget", budget, help)
      ->transform(byte_size(kMinMemoryBudget, "64M", std::numeric_limits<std::uint64_t>::max() / 2))
      ->type_name("SIZE")
      ->default_str("256M");
}

void add_compile_options(CLI::App* cmd, CompileCommand& c) {
  add_input_options(cmd, c.in);
  cmd->add_option_function<std::string>(
         "--deadline",
         [&c](const std::string& text) {
           const DurationParse parsed = read_duration(text);
           const auto d = parsed.duration;
           if (parsed.too_long) {
             throw CLI::ValidationError(
                 "--deadline",
                 fmt::format("too long: at most {}h (some 114 years)",
                             std::chrono::duration_cast<std::chrono::hours>(kMaxDuration).count()));
           }
           if (!d)
             throw CLI::ValidationError(
                 "--deadline",
                 "expected e.g. 90s, 45m, 2h or 1h30m (hours, minutes, seconds in that order, "
                 "each number with its unit but a bare number of seconds)");
           c.deadline = RunDeadline{*d, text};
         },
         "Stop the run once this long has passed (e.g. 45m, 2h, 1h30m; default: none), as on "
         "SIGTERM but with exit 4 (apply cancels its running statement and keeps its checkpoint)")
      ->type_name("DURATION");
  CompileOptions& o = c.options;
  cmd->add_option("-d,--database", o.database, "Database holding the projection tables")
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
      ->transform(whole_number(2, 65536));
  cmd->add_option("--window-events", o.window_events,
                  "Events per window: each window's net effect runs as deletes, then upserts")
      ->capture_default_str()
      ->transform(whole_number(1));
  cmd->add_option("--batch-rows", o.batch_rows,
                  fmt::format("Rows (or keys) per statement at most (up to {}: Impala refuses an "
                              "IN-list of more keys)",
                              kMaxBatchRows))
      ->capture_default_str()
      ->transform(whole_number(1, kMaxBatchRows));
  cmd->add_option("--batch-bytes", o.batch_bytes,
                  "Bytes per statement at most (Impala's limit is 16 MiB)")
      ->capture_default_str()
      ->transform(whole_number(1024, std::uint64_t{16} << 20));
  add_memory_budget(cmd, c.in.memory_budget,
                    "Peak memory to stay within, e.g. 256M or 2G (at least 64M): entity knowledge "
                    "beyond its share spills to a temporary file (or, for apply --prior impala, is "
                    "read again from the tables), windows close early rather than outgrow theirs, "
                    "and it bounds --max-record-bytes and --max-message-bytes (1/32 of it)");
  cmd->add_option("--threads", c.threads,
                  "2: read and parse the input on a second thread while the first folds the "
                  "window (regular input files, nothing asked of the prior state; same output); "
                  "1: one thread. Default: 2 when the process may use two CPUs")
      ->transform(whole_number(1, 2))
      ->type_name("N");
  add_choice(cmd, "--log-format", c.log_format,
             {{"text", LogFormat::kText}, {"json", LogFormat::kJson}},
             "Log lines (one per retry, reconnect and 10 s waiting on the server; per window too "
             "where no progress line is drawn) as text (ISO 8601 time first) or JSON objects "
             "(no progress line then, on a terminal either)");
  cmd->add_option("--spill-dir", o.spill_dir,
                  "Directory for the temporary knowledge spill file (default: $TMPDIR, else /tmp); "
                  "the file is unlinked as soon as it is created")
      ->check(CLI::ExistingDirectory);
}

// The options of ddl that make no sense with --fdw (the foreign tables have no partitions). Not
// CLI11's excludes(): it counts a flag given as --fdw=false as given.
constexpr std::string_view kKuduOnlyDdlOptions[] = {"--partitions", "--audit-first-year",
                                                    "--audit-last-year"};

// The ways to authenticate, one at a time, each with the options that only it reads. A production
// [atlas2kudu] section with `ldap = true` must not stop `apply -k` on the command line.
struct AuthenticationFlags {
  std::string_view flag;
  std::vector<std::string_view> its_options;
};
const std::vector<AuthenticationFlags>& authentication_flags() {
  static const std::vector<AuthenticationFlags> all = {
      {"--kerberos", {"--kerberos_service_name", "--kerberos_host_fqdn"}},
      {"--ldap", {"--ldap_password_cmd"}},
      {"--jwt", {"--jwt_cmd"}},
  };
  return all;
}

// The authentication flag whose `o` is, or that `o` is one of the options of; null for others.
const AuthenticationFlags* authentication_of(const CLI::Option* o) {
  const std::string name = "--" + o->get_lnames().front();
  for (const AuthenticationFlags& a : authentication_flags()) {
    if (name == a.flag ||
        std::find(a.its_options.begin(), a.its_options.end(), name) != a.its_options.end())
      return &a;
  }
  return nullptr;
}

// The options of `sub` that, given, exclude `o`: ddl's --fdw and kKuduOnlyDdlOptions each other,
// and each authentication flag the other ones with their options.
std::vector<const CLI::Option*> options_excluding(const CLI::App& sub, const CLI::Option* o) {
  if (const AuthenticationFlags* own = authentication_of(o)) {
    std::vector<const CLI::Option*> others;
    for (const AuthenticationFlags& a : authentication_flags()) {
      if (&a == own) continue;
      if (const CLI::Option* flag = sub.get_option_no_throw(std::string(a.flag)))
        others.push_back(flag);
    }
    return others;
  }
  const CLI::Option* fdw = sub.get_name() == "ddl" ? sub.get_option_no_throw("--fdw") : nullptr;
  if (fdw == nullptr) return {};
  std::vector<const CLI::Option*> kudu_only;
  for (std::string_view name : kKuduOnlyDdlOptions) {
    kudu_only.push_back(sub.get_option_no_throw(std::string(name)));
  }
  if (o == fdw) return kudu_only;
  if (std::find(kudu_only.begin(), kudu_only.end(), o) != kudu_only.end()) return {fdw};
  return {};
}

// Everything the command line registers, built once per parse (the --config pass builds it anew).
struct CommandLine {
  CLI::App app{
      "atlas2kudu: compile Apache Atlas entity-change notifications into Impala UPSERT/DELETE "
      "statements on Kudu projection tables, print them (compile) or run them over HiveServer2 "
      "(apply).\nSee man atlas2kudu for the full reference.",
      "atlas2kudu"};  // the name "Usage:" lines start with
  std::function<int()> command;
  std::string config_path;
  InputOptions check_in;
  CompileCommand compile_cmd;
  ApplyCommand apply_cmd;
  DdlCommand ddl_cmd;
  std::string digest_type, digest_qn;

  CommandLine();
};

CommandLine::CommandLine() {
  // The version, the JSON kernel this build parses with (meson option cpu_baseline), and the
  // framer's scan on this CPU (input/framer.h, Kernel).
  const std::string version =
      fmt::format("atlas2kudu {} (simdjson {}, framer {})", kVersion, json_kernel(),
                  Framer::kernel_name(Framer::default_kernel()));
  app.set_version_flag("-V,--version", version);
  app.require_subcommand(1);
  app.fallthrough(false);

  CLI::App* check = app.add_subcommand(
      "check",
      "Parse and validate notifications only; print counts per operation and per "
      "rejection reason");
  add_input_options(check, check_in);
  add_memory_budget(check, check_in.memory_budget,
                    "The --memory-budget of the compile or apply runs to check for, e.g. 256M or "
                    "2G (at least 64M): it bounds --max-record-bytes and --max-message-bytes "
                    "(1/32 of it) as in those runs, so that check rejects what they would");
  check->callback([this, check] {
    note_record_limits(check, check_in);
    command = [this] { return run_check(check_in); };
  });

  CLI::App* compile = app.add_subcommand(
      "compile",
      "Dry run: compile notifications into Impala SQL and print it (or write it with -o): the "
      "SQL apply would run, when given -i and apply's connection options (without, the SQL for "
      "tables holding nothing else: see --prior)");
  add_compile_options(compile, compile_cmd);
  // compile's default depends on -i (commands.cpp): said so rather than "=none".
  compile->get_option("--prior")->default_str("")->description(
      compile->get_option("--prior")->get_description() +
      ". Default: impala when -i (or impalad in the --config file) is given, else "
      "none (the SQL is then for tables that hold nothing the input does not establish: run on "
      "tables that do, it would replace the props_json of entities first seen as updates)");
  compile
      ->add_option("-o,--output", compile_cmd.output,
                   "Write the SQL to FILE (replaced only when the run succeeds)")
      ->type_name("FILE");
  compile->add_flag("-q,--quiet", compile_cmd.quiet,
                    "No summary line and no window log lines on stderr");
  compile->add_flag("--annotate", compile_cmd.options.annotate,
                    "Before each statement, a comment naming the events behind it: FILE:LINE of "
                    "the first and last and how many, and the guid of a single-row statement");
  add_hs2_options(compile, &compile_cmd.hs2);
  compile->get_option("--impalad")
      ->description(
          "Impala daemon host[:port] to read the tables' stored state from (--prior impala), as "
          "apply does; compile connects nowhere without -i or --prior impala (then to "
          "localhost). Port default 21050 (hs2-http: 28000)");
  compile->callback([this, compile] {
    note_record_limits(compile, compile_cmd.in);
    refuse_user_naming_the_input(compile, compile_cmd.hs2.user, compile_cmd.in);
    compile_cmd.prior_given = compile->get_option("--prior")->count() > 0;
    compile_cmd.connection_given = compile->get_option("--impalad")->count() > 0;
    for (const CLI::Option* o : compile->get_options()) {
      if (o->get_group() != kHs2OptionsGroup || o->count() == 0 || o->check_lname("impalad"))
        continue;
      if (o->get_expected_max() == 0 && !o->as<bool>()) continue;  // --ssl=false: not asked for
      compile_cmd.connection_options.push_back(
          o->get_snames().empty() ? "--" + o->get_lnames().front() : "-" + o->get_snames().front());
    }
    command = [this] { return run_compile(compile_cmd); };
  });

  apply_cmd.compile.options.prior = PriorSource::kImpala;  // the default for apply
  CLI::App* apply = app.add_subcommand(
      "apply",
      "Compile notifications and run the statements on Impala over HiveServer2, window "
      "by window (deletes, then upserts)");
  add_compile_options(apply, apply_cmd.compile);
  add_hs2_options(apply, &apply_cmd.compile.hs2);
  apply->add_flag("-q,--quiet", apply_cmd.compile.quiet,
                  "No summary, no window log lines and no already-deleted lines on stderr "
                  "(retries, reconnects and waits still logged; --stats counts everything)");
  apply
      ->add_option("--checkpoint", apply_cmd.checkpoint,
                   "After each applied window, record in FILE how far the input was applied; a "
                   "rerun with the same FILE skips it. One run at a time per FILE (FILE.lock)")
      ->type_name("FILE");
  apply
      ->add_option("--max-row-errors", apply_cmd.compile.hs2.max_row_errors,
                   "Row errors (rows the server skipped and only counted, e.g. entity_audit rows "
                   "in no range partition) allowed over the run; past it the run fails (exit 3)")
      ->capture_default_str()
      ->transform(whole_number(0, std::numeric_limits<std::int64_t>::max()));
  apply->callback([this, apply] {
    note_record_limits(apply, apply_cmd.compile.in);
    refuse_user_naming_the_input(apply, apply_cmd.compile.hs2.user, apply_cmd.compile.in);
    command = [this] { return run_apply(apply_cmd); };
  });

  CLI::App* ddl = app.add_subcommand(
      "ddl",
      "Print the CREATE TABLE statements of the six Kudu projection tables, or with --fdw the "
      "PostgreSQL foreign tables over them");
  ddl->add_option("-d,--database", ddl_cmd.options.database, "Database to create them in")
      ->capture_default_str();
  add_choice(ddl, "--key-encoding", ddl_cmd.options.key_encoding, kKeyEncodings, kKeyEncodingHelp);
  ddl->add_option("--partitions", ddl_cmd.options.partitions,
                  "Hash partitions per table, on its leading key column")
      ->capture_default_str()
      ->transform(whole_number(2, 1000));
  ddl->add_option("--audit-first-year", ddl_cmd.options.first_year,
                  "entity_audit: first yearly RANGE partition on event_ts")
      ->capture_default_str()
      ->transform(whole_number(1970, 9999));
  ddl->add_option("--audit-last-year", ddl_cmd.options.last_year,
                  "entity_audit: last yearly RANGE partition on event_ts")
      ->capture_default_str()
      ->transform(whole_number(1970, 9999));
  ddl->add_flag("--fdw", ddl_cmd.fdw,
                "Print the PostgreSQL foreign tables over the projections instead, a psql script "
                "(sql/kudu_projections_fdw.sql, or _binary.sql with --key-encoding binary); "
                "--database names the remote schema; not with --partitions, --audit-first-year "
                "or --audit-last-year");
  ddl->add_option("-o,--output", ddl_cmd.output, "Write the DDL to FILE")->type_name("FILE");
  ddl->callback([this, ddl] {
    for (std::string_view name : kKuduOnlyDdlOptions) {
      if (ddl_cmd.fdw && ddl->get_option(std::string(name))->count() > 0) {
        throw CLI::ExcludesError(std::string(name), "--fdw");
      }
    }
    command = [this] { return run_ddl(ddl_cmd); };
  });

  CLI::App* digest = app.add_subcommand(
      "digest", "Print the qn_digest (hex) of TYPE_NAME and QUALIFIED_NAME, the entity_by_qn key");
  digest->add_option("TYPE_NAME", digest_type, "Atlas type name, e.g. hive_table")->required();
  digest->add_option("QUALIFIED_NAME", digest_qn, "qualifiedName, e.g. sales.orders@cl1")
      ->required();
  digest->callback([this] { command = [this] { return run_digest(digest_type, digest_qn); }; });

  for (CLI::App* sub : app.get_subcommands({})) {
    // `atlas2kudu apply --version` too: a version asked after the command is still the version.
    sub->set_version_flag("-V,--version", version);
    sub->add_option("--config", config_path,
                    "Read options from FILE ([atlas2kudu] section, impala-shell's --config_file "
                    "style); the command line wins")
        ->type_name("FILE");
  }
}

// The subcommand the arguments name (parsed or not), else nullptr.
CLI::App* chosen_subcommand(CLI::App& app, const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a.starts_with("-")) continue;
    for (CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == a) return sub;
    }
    return nullptr;  // the first word is not a subcommand
  }
  return nullptr;
}

// Whether `sub` has the long option `canonical` (spelled with dashes), in either spelling.
bool has_long_option(const CLI::App& sub, const std::string& canonical) {
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& n : o->get_lnames()) {
      if (canonical_option_key("--" + n) == canonical) return true;
    }
  }
  return false;
}

// One option's spellings on the command line: "--database", "-d".
std::vector<std::string> spellings(const CLI::Option& o) {
  std::vector<std::string> out;
  for (const std::string& n : o.get_lnames()) out.push_back("--" + n);
  for (const std::string& n : o.get_snames()) out.push_back("-" + n);
  return out;
}

std::vector<std::string> option_names(const CLI::App& sub) {
  std::vector<std::string> out;
  for (const CLI::Option* o : sub.get_options()) {
    const std::vector<std::string> names = spellings(*o);
    out.insert(out.end(), names.begin(), names.end());
  }
  return out;
}

// The values the arguments give the option that CLI11 calls `name` ("--config"), in its long and
// short spellings, each on one line: "a.conf", "b.conf".
std::vector<std::string> values_given(const CLI::App& sub, const std::string& name,
                                      const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options()) {
    std::vector<std::string> all = spellings(*o);
    if (o->get_type_size() > 0 && std::find(all.begin(), all.end(), name) != all.end()) {
      names = std::move(all);
    }
  }
  std::vector<std::string> values;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    for (const std::string& n : names) {
      if (args[i] == n && i + 1 < args.size()) {
        values.push_back(one_line(args[i + 1]));
      } else if (n.starts_with("--") && args[i].starts_with(n + "=")) {
        values.push_back(one_line(std::string_view(args[i]).substr(n.size() + 1)));
      }
    }
  }
  return values;
}

// Where each option the --config file gave was set ("--batch-rows" -> "FILE:LINE").
using ConfigOrigins = std::map<std::string, std::string>;

// "FILE:LINE: " for a message that starts with an option the --config file gave, followed by one
// of the characters in `after` ("--batch-rows: expected ..."); else "". Option names are never a
// prefix of one another followed by such a character, so at most one matches.
std::string config_line_of(const ConfigOrigins& origins, std::string_view what,
                           std::string_view after) {
  for (const auto& [name, where] : origins) {
    if (what.size() > name.size() && what.starts_with(name) &&
        after.find(what[name.size()]) != std::string_view::npos) {
      return where + ": ";
    }
  }
  // "-k/--kerberos and -l/--ldap are mutually exclusive" when the file gave them: their lines,
  // "FILE:16 and FILE:10: ...", as the file is where to look (its LDAP lines left in when its
  // Kerberos ones were taken in, say).
  constexpr std::string_view kExclusive = " are mutually exclusive";
  if (what.ends_with(kExclusive)) {
    std::vector<std::string> lines;
    std::string_view names = what.substr(0, what.size() - kExclusive.size());
    for (std::size_t from = 0; from <= names.size();) {
      std::size_t to = names.find(" and ", from);
      if (to == std::string_view::npos) to = names.size();
      const std::string_view spellings = names.substr(from, to - from);  // "-k/--kerberos"
      for (std::size_t a = 0; a <= spellings.size();) {
        std::size_t b = spellings.find('/', a);
        if (b == std::string_view::npos) b = spellings.size();
        const auto it = origins.find(std::string(spellings.substr(a, b - a)));
        if (it != origins.end()) {
          lines.push_back(it->second);
          break;
        }
        a = b + 1;
      }
      from = to + 5;
    }
    if (!lines.empty()) return fmt::format("{}: ", fmt::join(lines, " and "));
  }
  // CLI11's "--partitions excludes --fdw" when the file gave the second: its line all the same.
  constexpr std::string_view kExcludes = " excludes ";
  if (const std::size_t at = what.find(kExcludes); at != std::string_view::npos) {
    const std::string_view other = what.substr(at + kExcludes.size());
    for (const auto& [name, where] : origins) {
      if (other == name) return where + ": ";
    }
  }
  return {};
}

// Whether `name` ("--password", "--ldap-passwd", "--PASSWORD") is a flag meant to give a password
// in argv, which no option does.
bool is_password_flag(const std::string& name) {
  return name.starts_with("--") && to_lower_ascii(name).find("passw") != std::string::npos;
}

// Whether `word` is the name of another tool's password option as such ("--ldap_password",
// "--password"): letters, '-' and '_' only. After -l it is the option typed by habit, not the
// secret, and named as it is; "--Hunter2" or "--passw0rd!" still reads as a value of -l.
bool names_a_password_option(const std::string& word) {
  if (!is_password_flag(word)) return false;
  return std::all_of(word.begin() + 2, word.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || c == '-' || c == '_'; });
}

// A usage error whose words are atlas2kudu's own and show nothing the user typed after a flag
// that may precede a secret: report_usage_error prints it as it is. (Masking the word after -l
// wherever it stands in such a message garbled it: "-l the" made "... password comes from".)
class SecretFreeUsageError final : public CLI::ValidationError {
 public:
  explicit SecretFreeUsageError(const std::string& message) : CLI::ValidationError(message) {}
};

// Where a password comes from instead, for the messages about such a flag.
constexpr std::string_view kPasswordSources =
    "--ldap_password_cmd, $ATLAS2KUDU_LDAP_PASSWORD or a prompt";

// For the flags whose secret comes from a command: where it comes from, as a hint.
std::string where_the_secret_comes_from(const CLI::Option& flag) {
  if (flag.check_name("--jwt")) return "; the token comes from --jwt_cmd CMD";
  if (flag.check_name("--ldap")) return "; the password comes from --ldap_password_cmd CMD";
  return {};
}

// The option of `sub` that `name` ("--ldap", "-l") names, or null.
const CLI::Option* option_named(const CLI::App& sub, const std::string& name) {
  for (const CLI::Option* o : sub.get_options()) {
    if (o->check_name(name)) return o;
  }
  return nullptr;
}

// Whether `arg` is --ldap or --jwt, or -l or -j alone or ending a cluster of short flags ("-ql"):
// the argument after it is then no value of it, but may be the secret all the same. With `sub`,
// the letters before must be flags of it ("-ul" gives -u the value "l"); without (a message
// about no command, or one without the flag: ddl -l), they must be letters.
bool ends_with_secret_flag(const CLI::App* sub, const std::string& arg) {
  if (arg == "--ldap" || arg == "--jwt") return true;
  if (arg.size() < 2 || arg[0] != '-' || arg[1] == '-') return false;
  for (std::size_t i = 1; i < arg.size(); ++i) {
    const char c = arg[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
    if (i + 1 == arg.size()) return c == 'l' || c == 'j';
    if (sub != nullptr) {
      const CLI::Option* o = option_named(*sub, std::string("-") + c);
      if (o == nullptr || o->get_expected_max() != 0) return false;
    }
  }
  return false;
}

// Whether the word after `option`, typed where no command takes it, may be a secret: after -l or
// -j (alone or ending a cluster), a password-like flag, or the helper of a password or token
// (whose command line may hold one).
bool may_precede_secret(const std::string& option) {
  return ends_with_secret_flag(nullptr, option) || is_password_flag(option) ||
         option == "--ldap_password_cmd" || option == "--jwt_cmd";
}

// Whether `arg` reads as an option of `sub` (or "-", standard input), not as a value.
bool reads_as_option(const CLI::App& sub, const std::string& arg) {
  if (arg == "-") return true;
  if (arg.starts_with("--")) return option_named(sub, arg.substr(0, arg.find('='))) != nullptr;
  return arg.size() >= 2 && arg[0] == '-' && option_named(sub, arg.substr(0, 2)) != nullptr;
}

// The flags given a value, refused before CLI11 parses the command line, without the value: it is
// most often the secret itself, typed by habit from tools whose flag takes it, and the message
// goes to cron logs (CLI11 would print "Could not convert: --jwt = eyJ...", "-=hunter2", or the
// characters after a short flag as an option of their own: "-Hunter2"). Throws a usage error for
//   --FLAG=VALUE with a VALUE other than true/false, yes/no, on/off, 1/0 (as in --config), even
//   with --help (CLI11 reports the value before the help);
//   -l or -j with anything after it in a cluster of short options ("-lHunter2", "-ql=x",
//   "-lu etl": give -l alone or last), and '=' after a short flag ("-q=1");
//   an argument after -l, -j, --ldap or --jwt (alone or ending a cluster) that is no option and
//   names nothing on disk ("--jwt eyJ..."): it would be read as an input and named in "cannot
//   open";
//   an option that takes a value followed by another option ("-u -i HOST", "-o -h": the help
//   would be printed and the run exit 0, having done nothing);
//   -V or --version with any argument other than the subcommand (before it too).
// Only for the command line as typed, after the subcommand but for -V (the --config file's flags
// are checked where it is read); the second, third and last not when it asks for --help.
void refuse_flag_values(CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* sub = chosen_subcommand(app, args);
  if (sub == nullptr) return;
  const auto options_end = std::find(args.begin(), args.end(), "--");
  auto first = std::find(args.begin(), options_end, sub->get_name());
  if (first == options_end) return;
  ++first;
  const auto refuse = [](const std::string& flag, const std::string& how, const char* what,
                         const CLI::Option& o) {
    throw SecretFreeUsageError(
        fmt::format("{} is a flag: give it {} ({} not shown: it may be a secret){}", flag, how,
                    what, where_the_secret_comes_from(o)));
  };
  // -V with a run's arguments would print the version and exit 0, having done nothing: in cron,
  // a success every night. impala-shell's -V is --verbose, which habit types.
  const auto is_version = [](const std::string& a) { return a == "-V" || a == "--version"; };
  const auto is_help = [](const std::string& a) { return a == "-h" || a == "--help"; };
  const auto version = std::find_if(args.begin(), options_end, is_version);
  if (version != options_end && std::none_of(args.begin(), options_end, is_help) &&
      std::any_of(args.begin(), args.end(),
                  [&](const std::string& a) { return !is_version(a) && a != sub->get_name(); })) {
    throw SecretFreeUsageError(fmt::format(
        "{} prints the version and exits, doing nothing else: give it alone (impala-shell's -V "
        "is --verbose; atlas2kudu prints its progress and summary unless -q)",
        *version));
  }
  bool help = false;
  for (auto it = first; it != options_end; ++it) {
    const std::string& a = *it;
    if (a == "-h" || a == "--help") help = true;
    if (!a.starts_with("--")) continue;
    const std::size_t equals = a.find('=');
    const CLI::Option* o = option_named(*sub, a.substr(0, equals));
    if (o == nullptr || o->get_expected_max() != 0 || equals == std::string::npos) continue;
    if (parse_config_bool(a.substr(equals + 1)) < 0) {
      refuse(a.substr(0, equals), "without a value, or with =true or =false", "the value given is",
             *o);
    }
  }
  for (auto it = first; it != options_end; ++it) {
    const std::string& a = *it;
    if (a.size() > 2 && a[0] == '-' && a[1] != '-' && !(a[1] >= '0' && a[1] <= '9')) {
      for (std::size_t i = 1; i < a.size(); ++i) {
        const CLI::Option* o = option_named(*sub, std::string("-") + a[i]);
        if (o == nullptr) break;  // CLI11's own error, masked (report_usage_error)
        if (o->get_expected_max() != 0) {
          // The rest is this option's value. One letter that is a flag's (`-ul PASSWORD`): the
          // flag was meant, and what follows would be an input named in "cannot open".
          const std::string rest = a.substr(i + 1);
          const CLI::Option* flag = rest.size() == 1 ? option_named(*sub, "-" + rest) : nullptr;
          if (flag != nullptr && flag->get_expected_max() == 0) {
            throw SecretFreeUsageError(fmt::format(
                "{}: -{} takes the letter after it, {}, as its value, not as the flag -{}: give "
                "-{} VALUE -{}",
                a, a[i], rest, rest, a[i], rest));
          }
          break;
        }
        const bool last = i + 1 == a.size();
        if (!last && (!where_the_secret_comes_from(*o).empty() || a[i + 1] == '=')) {
          refuse(std::string("-") + a[i], "on its own or last in a cluster of short options",
                 "what follows it is", *o);
        }
      }
    }
    const auto next = it + 1;
    // An option that takes a value, followed by another option: CLI11 takes that option for the
    // value (-u -i HOST: the user "-i", HOST an input, and the run connects to localhost).
    // A value that only starts as an option that takes one ("-u -bob") is a value; a cluster that
    // starts with a flag ("-u -lPASSWORD") is not.
    const auto next_is_option = [&] {
      if (next == options_end || *next == "-" || !reads_as_option(*sub, *next)) return false;
      if (next->starts_with("--")) return true;
      const CLI::Option* n = option_named(*sub, next->substr(0, 2));
      return next->size() == 2 || (n != nullptr && n->get_expected_max() == 0);
    };
    if ((a.starts_with("--") ? a.find('=') == std::string::npos : a.size() == 2) &&
        next_is_option()) {
      const CLI::Option* o = option_named(*sub, a);
      if (o != nullptr && o->get_expected_min() > 0) {
        throw SecretFreeUsageError(fmt::format(
            "{} takes a value, but the argument after it, {}, is an option: give {} VALUE", a,
            next->starts_with("--") ? next->substr(0, next->find('=')) : next->substr(0, 2), a));
      }
    }
    if (help || next == options_end || !ends_with_secret_flag(sub, a) ||
        reads_as_option(*sub, *next) || names_a_password_option(*next))
      continue;
    const std::string flag = a.starts_with("--") ? a : std::string("-") + a.back();
    const CLI::Option* o = option_named(*sub, flag);
    if (o == nullptr) continue;  // a command without it (ddl -l): CLI11's error, masked
    struct stat st {};
    if (::stat(next->c_str(), &st) == 0) continue;  // an input file after the flag
    refuse(flag, "without a value",
           "the argument after it names no file, so it is not read as an input; it is", *o);
  }
}

// impala-shell's options with no namesake in atlas2kudu, and what stands for each here.
const std::map<std::string, std::string, std::less<>> kImpalaShellOptions = {
    {"--config_file", "here it is --config FILE"},
    {"-v", "the version is -V (or --version) here"},
    {"--verbose", "atlas2kudu prints its progress and summary unless -q, and logs each retry"},
    {"-f", "atlas2kudu runs the SQL it compiles itself; run compile's output with impala-shell -f"},
    {"--query_file",
     "atlas2kudu runs the SQL it compiles itself; run compile's output with impala-shell -f"},
    {"-B", "atlas2kudu prints no result rows: apply's summary counts rows per table"},
    {"--delimited", "atlas2kudu prints no result rows: apply's summary counts rows per table"},
    {"--output_delimiter", "atlas2kudu prints no result rows"},
    {"--print_header", "atlas2kudu prints no result rows"},
    {"--var", "the statements are compiled from the notifications: no variables"},
};

// "check, compile and apply".
std::string in_prose(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t k = 0; k < words.size(); ++k) {
    out += (k == 0 ? "" : k + 1 == words.size() ? " and " : ", ") + words[k];
  }
  return out;
}

// "atlas2kudu: <what CLI11 says>", a near match for a mistyped option or subcommand, and where
// to look; for a bad value the --config file gave (`origins`), its FILE:LINE first.
void report_usage_error(CLI::App& app, const CLI::ParseError& e,
                        const std::vector<std::string>& args, const ConfigOrigins& origins) {
  std::string hint;
  // A bad value from the --config file: the file's line first, as for its other errors. CLI11
  // quotes the value as given ("got '8<ESC>[2J'"): on one line, escaped, as other messages show
  // what a user or a file wrote.
  std::string what = config_line_of(origins, e.what(), " :") + one_line(e.what());
  const CLI::App* sub = chosen_subcommand(app, args);
  if (dynamic_cast<const SecretFreeUsageError*>(&e) != nullptr) {
    print_diagnostic(stderr, "atlas2kudu: {}\nRun 'atlas2kudu {}--help' for the options.\n", what,
                     sub ? sub->get_name() + " " : std::string());
    return;
  }
  // An option CLI11 did not expect is named without its value: "--ldap_password=x" or "-px" may
  // hold a secret typed by habit (beeline's -p), and this message goes to cron logs.
  const auto mask = [&what](const std::string& text, const std::string& as) {
    for (auto at = what.find(text); at != std::string::npos; at = what.find(text, at + as.size()))
      what.replace(at, text.size(), as);
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    // The word after -l, -j, --ldap or --jwt, also in a command without them (ddl --ldap PW),
    // and after an option the command does not have, whose value it may be (ddl --password PW,
    // which CLI11 lists as "PW --password").
    const bool after_unknown_option =
        i > 0 && sub != nullptr && args[i - 1].starts_with("-") && args[i - 1].size() > 1 &&
        args[i - 1].find('=') == std::string::npos && !reads_as_option(*sub, args[i - 1]);
    if (i > 0 && (ends_with_secret_flag(sub, args[i - 1]) || after_unknown_option) &&
        !(sub != nullptr && reads_as_option(*sub, a)) && !names_a_password_option(a)) {
      // Replaced wherever it stands when long enough not to be part of other words; in CLI11's
      // list of words it did not expect, also when short ("ab"), word by word.
      if (a.size() >= 3) mask(a, "...");
      constexpr std::string_view kList = "not expected: ";
      if (const std::size_t list = what.find(kList); list != std::string::npos) {
        std::string words = what.substr(list + kList.size());
        std::string masked;
        for (std::size_t from = 0; from <= words.size();) {
          std::size_t to = words.find(' ', from);
          if (to == std::string::npos) to = words.size();
          const std::string word = words.substr(from, to - from);
          masked += (masked.empty() ? "" : " ") + (word == a ? std::string("...") : word);
          from = to + 1;
        }
        what = what.substr(0, list + kList.size()) + masked;
      }
    }
    if (!a.starts_with("-") || a == "-" || a == "--") continue;
    std::string shown;
    if (a.starts_with("--") && a.find('=') != std::string::npos) {
      shown = a.substr(0, a.find('=')) + "=...";
    } else if (!a.starts_with("--") && a.size() > 2 && !(a[1] >= '0' && a[1] <= '9')) {
      shown = a.substr(0, 2) + "...";
    } else {
      continue;
    }
    mask(a, shown);
    // CLI11 names what follows the flags of a cluster as an option of its own: "-qpHunter2"
    // gives "-pHunter2".
    if (!a.starts_with("--")) {
      for (std::size_t k = 2; k + 1 < a.size(); ++k) {
        mask(" -" + a.substr(k), " -" + a.substr(k, 1) + "...");
      }
    }
  }
  // CLI11's words for an option given twice: "--database: At Most 1 required but received 2".
  if (const auto at = what.find(": At Most 1 required but received "); at != std::string::npos) {
    const std::string name = what.substr(0, at);
    std::vector<std::string> given;
    if (sub != nullptr) given = values_given(*sub, name, args);
    what = given.size() > 1 ? fmt::format("{}: given more than once ({}); it takes one value", name,
                                          fmt::join(given, ", "))
                            : name + ": given more than once; it takes one value";
  }
  if (sub == nullptr) {
    std::vector<std::string> commands;
    for (const CLI::App* s : app.get_subcommands({})) commands.push_back(s->get_name());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a.starts_with("-")) continue;
      const std::string& before = i > 0 ? args[i - 1] : a;
      if (i > 0 && before.starts_with("-") && before != "--" &&
          before.find('=') == std::string::npos && before != "-h" && before != "--help" &&
          before != "-V" && before != "--version") {
        // "atlas2kudu --config c.ini ddl", "atlas2kudu -l PASSWORD apply": the word after an
        // option was taken for the command. It is shown only after an option that takes a value
        // and no secret: the value of -l, --password, an unknown flag or a cluster of short
        // flags ("-pHunter2", shown as "-p...") would be a password in a log.
        const bool cluster = !before.starts_with("--") && before.size() > 2;
        const std::string shown = cluster ? before.substr(0, 2) + "..." : before;
        std::vector<std::string> owners;  // the commands that have the option
        const CLI::Option* option = nullptr;
        for (const CLI::App* s : app.get_subcommands({})) {
          if (cluster) break;
          if (const CLI::Option* o = option_named(*s, before)) {
            owners.push_back(s->get_name());
            option = o;
          }
        }
        std::string command = owners.empty() ? "COMMAND" : owners.front();
        for (std::size_t j = i + 1; j < args.size(); ++j) {
          if (std::find(owners.begin(), owners.end(), args[j]) != owners.end()) {
            command = args[j];
            break;
          }
        }
        const bool shows_value =
            option != nullptr && option->get_expected_max() != 0 && !may_precede_secret(before);
        // A flag's next word is no value of it, unless the flag is -l or -j, whose next word
        // may be the password typed by habit.
        const bool harmless_flag =
            option != nullptr && option->get_expected_max() == 0 && !may_precede_secret(before);
        const std::string not_shown = shows_value || harmless_flag
                                          ? ""
                                          : " (the word after it is not shown: it may be a secret)";
        if (cluster) {
          what = fmt::format("{}: options go after the command{}", shown, not_shown);
        } else if (owners.empty() && is_password_flag(before)) {
          what = fmt::format(
              "{} is no option of atlas2kudu: no option takes a password, which ps would show "
              "(the word after it is not shown); with apply -l, it comes from {}",
              before, kPasswordSources);
        } else if (owners.empty()) {
          what = fmt::format("{} is no option of atlas2kudu itself{}", shown, not_shown);
        } else {
          const std::string of =
              owners.size() == commands.size() ? "every command" : in_prose(owners);
          what = fmt::format(
              "{} is an option of {}: give the command first, as in 'atlas2kudu {} {}{}'{}", before,
              of, command, before, shows_value ? " " + a : std::string(), not_shown);
        }
        break;
      }
      if (i > 0 && before == "--") {
        // Whatever follows "--" is no option; at the command's place it is not shown: it may be
        // the value of an option before it (--password -- PW).
        what =
            "'--' before the command: the command comes first, as in 'atlas2kudu COMMAND "
            "[OPTIONS] -- FILE...' (the word after it is not shown: it may be a secret)";
        break;
      }
      // The first word that is no option was meant as the command.
      what = fmt::format("unknown command '{}'", a);
      if (const auto m = closest_match(a, commands)) {
        hint = fmt::format(" (did you mean {}?)", *m);
      } else if (const auto command =
                     std::find_first_of(args.begin() + static_cast<long>(i) + 1, args.end(),
                                        commands.begin(), commands.end());
                 command != args.end()) {
        // "atlas2kudu entities.jsonl compile": a file before the command.
        hint = fmt::format(" (the command comes first, as in 'atlas2kudu {} {}')", *command,
                           one_line(a));
      }
      break;
    }
  } else {
    const std::vector<std::string> known = option_names(*sub);
    // An option of the command given before it ("atlas2kudu --partitions=8 ddl"): CLI11 read it
    // as the program's own.
    for (const std::string& a : args) {
      if (a == sub->get_name()) break;
      if (!a.starts_with("--") || option_named(*sub, a.substr(0, a.find('='))) == nullptr) continue;
      const std::string name = a.substr(0, a.find('='));
      hint = fmt::format(
          " ({} is an option of {}: give it after the command, as in 'atlas2kudu {} "
          "{}{}')",
          name, sub->get_name(), sub->get_name(), name,
          a.find('=') == std::string::npos ? "" : "=...");
      break;
    }
    // digest's names are any text: one that starts with '-' ("-sales") was read as an option,
    // and the name went missing ("QUALIFIED_NAME is required").
    if (sub->get_name() == "digest" && what.ends_with(" is required")) {
      const auto dash = std::find_if(std::find(args.begin(), args.end(), "digest"), args.end(),
                                     [](const std::string& a) { return a.starts_with("-"); });
      if (dash != args.end() && *dash != "--") {
        hint =
            " (an argument starting with '-' was read as an option, and digest has none: a "
            "name that starts with '-' goes after '--', as in 'atlas2kudu digest TYPE_NAME -- "
            "QUALIFIED_NAME')";
      }
    }
    // An input named like an option ("-x.jsonl", an export's odd name): where it goes. Its name
    // is not repeated (CLI11's words show "-x..."), only that such a file exists.
    for (const std::string& a : args) {
      if (!hint.empty()) break;
      if (!a.starts_with("-") || a == "-" || a == "--" || reads_as_option(*sub, a)) continue;
      struct stat st {};
      if (::stat(a.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;
      hint = fmt::format(
          " (a FILE whose name starts with '-' goes after '--', as in 'atlas2kudu {} [OPTIONS] -- "
          "FILE', or as ./FILE)",
          sub->get_name());
    }
    // impala-shell's options that have no namesake here, typed by habit: what stands for them.
    for (const std::string& a : args) {
      if (!hint.empty()) break;
      const std::string name = a.substr(0, a.find('='));
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      if (const auto it = kImpalaShellOptions.find(name); it != kImpalaShellOptions.end()) {
        hint = fmt::format(" (impala-shell's {}: {})", name, it->second);
      }
    }
    for (const std::string& a : args) {
      if (!hint.empty()) break;
      if (!a.starts_with("-") || a == "-" || a == "--") continue;
      if (a.size() > 1 && a[1] >= '0' && a[1] <= '9') continue;  // a negative number, a value
      const std::string name = a.substr(0, a.find('='));
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      if (name.starts_with("-") && !name.starts_with("--") && name.size() > 2) continue;  // -Qx=y
      // Any two one-letter flags are one edit apart: "-p (did you mean -h?)" would only mislead.
      if (!name.starts_with("--")) continue;
      if (const auto m = closest_match(name, known)) {
        hint = fmt::format(" (did you mean {}?)", *m);
        break;
      }
      // Only where the message is about the flag: "-l is a flag: ..." has its own hint.
      if (is_password_flag(name) && option_named(*sub, "--ldap_password_cmd") != nullptr &&
          what.find(name) != std::string::npos) {
        hint = fmt::format(
            " (no option takes a password, which ps would show: with -l, it comes from {})",
            kPasswordSources);
        break;
      }
    }
    // An option of another command ("compile --checkpoint", "check -i"): which ones have it, as
    // a --config file's key is named.
    // CLI11 lists the words: "... was not expected: --sessions=...", "... were not expected:
    // 5 --window-events" (the option's value first).
    const std::size_t list = what.find(" expected: ");
    if (hint.empty() && what.starts_with("The following argument") && list != std::string::npos) {
      const std::string words = what.substr(list + std::string_view(" expected: ").size());
      for (std::size_t from = 0; from < words.size() && hint.empty();) {
        std::size_t to = words.find(' ', from);
        if (to == std::string::npos) to = words.size();
        const std::string word = words.substr(from, to - from);
        from = to + 1;
        if (!word.starts_with("-")) continue;
        const std::string name = word.substr(0, word.find('='));
        std::vector<std::string> owners;
        for (const CLI::App* s : app.get_subcommands({})) {
          if (s != sub && option_named(*s, name) != nullptr) owners.push_back(s->get_name());
        }
        if (!owners.empty()) {
          hint = fmt::format(" ({} is an option of {}, not of {})", name, in_prose(owners),
                             sub->get_name());
        }
      }
    }
  }
  print_diagnostic(stderr, "atlas2kudu: {}{}\nRun 'atlas2kudu {}--help' for the options.\n", what,
                   hint, sub ? sub->get_name() + " " : std::string());
}

// The arguments with the --config file's options inserted right after the subcommand, leaving
// out those the command line gives itself. Throws Error(kUsage) naming FILE:LINE for a key that
// is no option (with a near match) or a flag value that is no boolean.
std::vector<std::string> with_config_file(CommandLine& cli, const std::vector<std::string>& args,
                                          const std::map<std::string, std::string>& all_names,
                                          ConfigOrigins& origins) {
  std::vector<std::string> command_names;
  for (const CLI::App* s : cli.app.get_subcommands({})) command_names.push_back(s->get_name());
  const ConfigFile config = read_config_file(cli.config_path, command_names);
  CLI::App* sub = chosen_subcommand(cli.app, args);
  if (sub == nullptr) throw Error(ErrorCategory::kInternal, "--config without a subcommand");
  std::map<std::string, const CLI::Option*> own;  // canonical name -> option of this subcommand
  std::set<const CLI::Option*> given;
  for (const CLI::Option* o : sub->get_options()) {
    for (const std::string& n : o->get_lnames()) own.emplace(canonical_option_key("--" + n), o);
    if (o->count() > 0) given.insert(o);
  }
  std::vector<std::string> names;
  for (const auto& [canonical, name] : all_names) names.push_back(name);
  std::vector<std::string> added;  // an empty entry: a flag set to false
  struct FromFile {
    std::size_t index;  // in `added`
    std::string where;
    bool command_section;
  };
  std::map<const CLI::Option*, FromFile> from_file;
  const auto take = [&](const ConfigEntry& entry, bool this_command_only) {
    const std::string canonical = "--" + canonical_config_key(entry.key);
    const auto it = own.find(canonical);
    if (it == own.end()) {
      std::vector<std::string> owners;  // the commands that have the option
      for (CLI::App* other : cli.app.get_subcommands({})) {
        if (has_long_option(*other, canonical)) owners.push_back(other->get_name());
      }
      if (!this_command_only && !owners.empty()) return;  // another command's option
      if (!owners.empty()) {
        throw Error(ErrorCategory::kUsage,
                    fmt::format("{}: '{}' is an option of atlas2kudu {}, not of {}", entry.where,
                                entry.key, fmt::join(owners, " and "), sub->get_name()));
      }
      // Near matches among every command's options: [atlas2kudu] serves them all, so the key is
      // said to be no option of any command there ("max_rejcts" under digest: max-rejects is
      // check's, compile's and apply's).
      const auto m = closest_match("--" + to_lower_ascii(entry.key), names);
      throw Error(ErrorCategory::kUsage,
                  fmt::format("{}: '{}' is not an option of atlas2kudu{}{}", entry.where, entry.key,
                              this_command_only ? " " + sub->get_name() : std::string(),
                              m ? fmt::format(" (did you mean {}?)", m->substr(2)) : ""));
    }
    if (canonical == "--help" || canonical == "--version") {
      // The run would print the help or version and exit 0 having done nothing: in cron, a
      // success every night.
      throw Error(ErrorCategory::kUsage,
                  fmt::format("{}: {} is for the command line, not a --config file", entry.where,
                              entry.key));
    }
    if (canonical == "--config") {
      throw Error(ErrorCategory::kUsage,
                  fmt::format("{}: a --config file cannot name another one; give --config on the "
                              "command line",
                              entry.where));
    }
    const CLI::Option* o = it->second;
    if (given.count(o)) return;  // the command line wins
    // [atlas2kudu]'s options are for the commands that have them; one the command line excludes
    // (partitions = 32 for `ddl --fdw`) does not apply to this run.
    if (!this_command_only) {
      const std::vector<const CLI::Option*> excluded = options_excluding(*sub, o);
      // A flag given as false (--fdw=false) excludes nothing.
      const auto set_on_command_line = [&](const CLI::Option* x) {
        return given.count(x) > 0 && (x->get_expected_max() != 0 || x->as<bool>());
      };
      if (std::any_of(excluded.begin(), excluded.end(), set_on_command_line)) {
        return;
      }
      // The options of an authentication the command line turns off (--ldap=false) do not
      // apply either.
      if (const AuthenticationFlags* own = authentication_of(o)) {
        const CLI::Option* flag = sub->get_option_no_throw(std::string(own->flag));
        if (flag != nullptr && flag != o && given.count(flag) > 0 && !flag->as<bool>()) return;
      }
    }
    const std::string name = "--" + o->get_lnames().front();
    std::string arg = name + "=" + entry.value;
    if (o->get_expected_max() == 0) {  // a flag
      const int b = parse_config_bool(entry.value);
      if (b < 0) {
        throw Error(ErrorCategory::kUsage,
                    fmt::format("{}: {} is a flag: expected true or false (the value given is "
                                "not shown: it may be a secret)",
                                entry.where, entry.key));
      }
      arg = b == 1 ? name : std::string();
    } else if (entry.value.empty()) {
      // "--memory-budget=" would make the parser take the next argument as the value.
      throw Error(ErrorCategory::kUsage,
                  fmt::format("{}: {} has no value; give one, or leave the line out for the "
                              "default",
                              entry.where, entry.key));
    }
    // Once per section; [atlas2kudu.COMMAND] wins over [atlas2kudu]. A repeatable option (-Q)
    // takes one value per line.
    const auto earlier = from_file.find(o);
    origins[name] = entry.where;  // the last one taken is the one used
    // Messages about -i, -s, -u, -Q, -b and -o name the option by its short name.
    for (const std::string& short_name : o->get_snames()) origins["-" + short_name] = entry.where;
    if (o->get_expected_max() > 1) {
      added.push_back(std::move(arg));
    } else if (earlier == from_file.end()) {
      from_file.emplace(o, FromFile{added.size(), entry.where, this_command_only});
      added.push_back(std::move(arg));
    } else if (earlier->second.command_section == this_command_only) {
      throw Error(ErrorCategory::kUsage,
                  fmt::format("{}: {} is set again (first at {})", entry.where, entry.key,
                              earlier->second.where));
    } else {
      added[earlier->second.index] = std::move(arg);
      earlier->second = FromFile{earlier->second.index, entry.where, true};
    }
  };
  for (const ConfigEntry& e : config.common) take(e, false);
  const std::vector<CLI::App*> commands = cli.app.get_subcommands({});
  for (const auto& [command, entries] : config.per_command) {
    // A lambda may not capture a structured binding before C++20's P1091 (clang 16).
    const std::string& command_name = command;
    const bool known = std::any_of(commands.begin(), commands.end(), [&](const CLI::App* s) {
      return s->get_name() == command_name;
    });
    if (!known) {
      std::vector<std::string> command_names;
      for (const CLI::App* s : commands) command_names.push_back(s->get_name());
      std::vector<std::string> sections = command_names;
      sections.push_back("query_options");
      const auto m = closest_match(to_lower_ascii(command), sections);  // [atlas2kudu.DDL] too
      throw Error(ErrorCategory::kUsage,
                  fmt::format("{}: [atlas2kudu.{}] names no command{} (sections: [atlas2kudu], "
                              "[atlas2kudu.query_options], and [atlas2kudu.COMMAND] for {})",
                              config.per_command_where.at(command), command,
                              m ? fmt::format(" (did you mean [atlas2kudu.{}]?)", *m) : "",
                              fmt::join(command_names, ", ")));
    }
    if (command != sub->get_name()) continue;
    for (const ConfigEntry& e : entries) take(e, true);
  }
  if (const CLI::Option* q = sub->get_option_no_throw("--query_option")) {
    const std::vector<std::string>& on_command_line =
        q->count() ? q->results() : std::vector<std::string>{};
    std::map<std::string, const ConfigEntry*> seen;  // lower-case name → where first set
    for (const ConfigEntry& e : config.query_options) {
      // Impala's query option names know no case: -Q MEM_LIMIT=1g overrides mem_limit = 2g, and
      // MEM_LIMIT = 2g after mem_limit = 3g sets the same option twice.
      const auto [first, fresh] = seen.emplace(to_lower_ascii(e.key), &e);
      if (!fresh) {
        throw Error(ErrorCategory::kUsage,
                    fmt::format("{}: query option {} is set again (first as {} at {}; Impala "
                                "reads option names whatever their case)",
                                e.where, e.key, first->second->key, first->second->where));
      }
      const std::string key = to_lower_ascii(e.key) + "=";
      const bool overridden =
          std::any_of(on_command_line.begin(), on_command_line.end(),
                      [&](const std::string& kv) { return to_lower_ascii(kv).starts_with(key); });
      if (!overridden) added.push_back("--query_option=" + e.key + "=" + e.value);
    }
  }
  std::vector<std::string> out;
  bool inserted = false;
  for (const std::string& a : args) {
    out.push_back(a);
    if (!inserted && a == sub->get_name()) {
      std::copy_if(added.begin(), added.end(), std::back_inserter(out),
                   [](const std::string& arg) { return !arg.empty(); });
      inserted = true;
    }
  }
  return out;
}

// Every long option name the subcommands register, by the spelling with dashes: "--max-rejects"
// -> "--max-rejects", "--ca-cert" -> "--ca_cert". Both spellings are accepted everywhere.
std::map<std::string, std::string> long_names(CLI::App& app) {
  std::map<std::string, std::string> out;
  for (CLI::App* sub : app.get_subcommands({})) {
    for (const CLI::Option* o : sub->get_options()) {
      for (const std::string& name : o->get_lnames()) {
        out.emplace(canonical_option_key("--" + name), "--" + name);
      }
    }
  }
  return out;
}

// The arguments with every long option name written as it is registered (both "--foo_bar" and
// "--foo-bar" are accepted); "--" ends the options, as usual.
std::vector<std::string> normalized_args(int argc, char** argv,
                                         const std::map<std::string, std::string>& names) {
  std::vector<std::string> args;
  bool options_end = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") options_end = true;
    if (!options_end && a.size() > 2 && a.starts_with("--")) {
      const std::size_t eq = a.find('=');
      const std::string name = a.substr(0, eq);
      if (const auto it = names.find(canonical_option_key(name)); it != names.end()) {
        a = it->second + (eq == std::string::npos ? std::string() : a.substr(eq));
      }
    }
    args.push_back(std::move(a));
  }
  return args;
}

// The status of --help or --version once their text (CLI11 writes it to std::cout) is out: like
// any output, one that cannot be written fails the run (74), and a reader that went away ends it
// quietly (0, as for `| head`).
int printed(int status) {
  // errno is the failed write's: CLI11 wrote the text with std::endl, which flushed it.
  std::cout.flush();
  if (std::cout.good() || errno == EPIPE) return status;
  print_diagnostic(stderr, "atlas2kudu: stdout: write failed: {}\n",
                   errno != 0 ? std::strerror(errno) : "unknown error");
  return kExitIoError;
}

// Parses `args`; returns false with `exit_status` set when parsing ended the run: --help and
// --version (0), or a usage error (64, reported with the "atlas2kudu:" prefix and a near match).
// `typed`: the command line as the user typed it, not merged with the --config file's options.
bool parse(CommandLine& cli, const std::vector<std::string>& args, int& exit_status,
           const ConfigOrigins& origins = {}, bool typed = true) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 consumes it from the end
  try {
    if (typed) refuse_flag_values(cli.app, args);
    // "--memory-budget=" would make CLI11 take the next argument as the value: "--memory-budget=
    // 512M" passed, and "--memory-budget= FILE" blamed the file.
    for (const std::string& a : args) {
      if (a == "--") break;
      if (a.size() > 3 && a.starts_with("--") && a.find('=') == a.size() - 1) {
        throw CLI::ValidationError(a.substr(0, a.size() - 1),
                                   "nothing after the '='; put the value right after it, or drop "
                                   "the '=' and give the value as the next argument");
      }
    }
    // --help wins over the rest of the line, as its description says: CLI11 checks the other
    // options' values first, so `ddl --help --partitions 1` ended in --partitions' refusal.
    if (const auto help =
            std::find_if(args.begin(), std::find(args.begin(), args.end(), "--"),
                         [](const std::string& a) { return a == "-h" || a == "--help"; });
        help != args.end() && *help != "--") {
      std::vector<std::string> asked = {*help};
      if (const CLI::App* sub = chosen_subcommand(cli.app, args)) asked.push_back(sub->get_name());
      reversed = std::move(asked);  // already reversed: CLI11 reads its last element first
    }
    cli.app.parse(reversed);
    // An empty value, most often an unset variable in a script ("--reject-file \"$REJECTS\""),
    // read as the option left out: the rejects went nowhere, the SQL to stdout.
    if (const CLI::App* sub = chosen_subcommand(cli.app, args)) {
      for (const CLI::Option* o : sub->get_options()) {
        if (o->get_expected_max() == 0 || o->count() == 0) continue;
        const std::vector<std::string>& given = o->results();
        if (std::find(given.begin(), given.end(), std::string()) == given.end()) continue;
        if (o->get_name() == "FILE") {
          throw CLI::ValidationError(
              "FILE", "an empty name (an unset variable?); give a file, or - for standard input");
        }
        if (!o->nonpositional()) continue;  // digest's TYPE_NAME and QUALIFIED_NAME: any text
        throw CLI::ValidationError(o->get_name(false, true),
                                   "an empty value (an unset variable?); give one, or leave the "
                                   "option out");
      }
    }
    return true;
  } catch (const CLI::CallForHelp& e) {
    exit_status = printed(cli.app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    exit_status = printed(cli.app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    exit_status = printed(cli.app.exit(e));
  } catch (const CLI::ParseError& e) {
    report_usage_error(cli.app, e, args, origins);
    exit_status = kExitUsage;
  }
  return false;
}

}  // namespace

int run_cli(int argc, char** argv) {
  auto cli = std::make_unique<CommandLine>();
  const std::map<std::string, std::string> names = long_names(cli->app);
  std::vector<std::string> args = normalized_args(argc, argv, names);
  // `atlas2kudu help [COMMAND]`, as git and many other tools take it: `[COMMAND] --help`.
  // A name that is no command is reported as one, with the nearest command.
  if (!args.empty() && args.front() == "help" && args.size() > 2) {
    print_diagnostic(stderr,
                     "atlas2kudu: help takes one command name at most (help COMMAND), got {}\n"
                     "Run 'atlas2kudu --help' for the options.\n",
                     args.size() - 1);
    return kExitUsage;
  }
  if (!args.empty() && args.front() == "help") {
    const std::vector<CLI::App*> commands = cli->app.get_subcommands({});
    const bool known = args.size() == 2 &&
                       std::any_of(commands.begin(), commands.end(),
                                   [&](const CLI::App* c) { return c->get_name() == args[1]; });
    // `help help`: the help, as `help` alone gives it (help is no command of CLI11's).
    args = args.size() == 1 || args[1] == "help" ? std::vector<std::string>{"--help"}
           : known                               ? std::vector<std::string>{args[1], "--help"}
                                                 : std::vector<std::string>{args[1]};
  }
  int status = kExitOk;
  if (!parse(*cli, args, status)) return status;

  // The one place where failures become exit codes (man page, EXIT STATUS).
  ConfigOrigins origins;
  try {
    if (!cli->config_path.empty()) {
      // Again, with the file's options before the command line's (which win).
      std::vector<std::string> merged = with_config_file(*cli, args, names, origins);
      // compile warns of the connection options typed without -i, not of a file's (one shared
      // with apply, whose server is localhost by default, may well have no impalad).
      std::vector<std::string> typed_connection = cli->compile_cmd.connection_options;
      cli = std::make_unique<CommandLine>();
      if (!parse(*cli, std::move(merged), status, origins, false)) return status;
      cli->compile_cmd.connection_options = std::move(typed_connection);
    }
    return cli->command();
  } catch (const Error& e) {
    // A value refused once the command runs (a combination of options: "--max-record-bytes N:
    // ... more than --memory-budget allows") is named at the --config file's line when the file
    // gave the option the message starts with.
    const std::string where =
        e.category() == ErrorCategory::kUsage ? config_line_of(origins, e.what(), " :") : "";
    // A reader that went away (`ddl | head -5`) had all it wanted: quiet, as cat(1) is.
    if (e.category() != ErrorCategory::kOutputClosed)
      print_diagnostic(stderr, "atlas2kudu: {}{}\n", where, e.what());
    return exit_code_for(e.category());
  } catch (const std::exception& e) {
    print_diagnostic(stderr, "atlas2kudu: internal error: {}\n", e.what());
    return kExitInternal;
  }
}

}  // namespace atlas2kudu
