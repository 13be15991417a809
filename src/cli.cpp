#include "atlas2kudu/cli.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "atlas2kudu/digest.h"
#include "atlas2kudu/json_text.h"
#include "atlas2kudu/progress.h"
#include "atlas2kudu/reader.h"
#include "atlas2kudu/version.h"

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

void write_text_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    throw SourceError(false, fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) {
    throw SourceError(false, fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  }
}

std::string read_stats_json(std::string_view command, const ReadStats& s, bool completed,
                            double seconds) {
  std::string out = fmt::format(
      "{{\"command\":\"{}\",\"completed\":{},\"elapsed_seconds\":{:.3f},\"sources\":{},"
      "\"records\":{},\"events\":{},\"rejected\":{},\"split_chunks\":{},\"ignored_lines\":{},"
      "\"legacy_v1\":{},\"operations\":{{",
      command, completed, seconds, s.sources, s.records, s.events, s.rejected, s.split_chunks,
      s.ignored_lines, s.legacy_v1);
  for (std::size_t i = 0; i < kOperationCount; ++i) {
    out += fmt::format("{}\"{}\":{}", i ? "," : "", to_string(static_cast<Operation>(i)),
                       s.per_operation[i]);
  }
  out += "},\"rejections\":{";
  for (std::size_t i = 0; i < kRejectCodeCount; ++i) {
    out += fmt::format("{}\"{}\":{}", i ? "," : "", to_string(static_cast<RejectCode>(i)),
                       s.per_reason[i]);
  }
  out += "}}\n";
  return out;
}

void print_read_summary(std::FILE* out, const ReadStats& s) {
  fmt::print(out, "records read      {:>12}\n", s.records);
  fmt::print(out, "events accepted   {:>12}\n", s.events);
  fmt::print(out, "records rejected  {:>12}\n", s.rejected);
  if (s.split_chunks) fmt::print(out, "split chunks      {:>12}  (held for split-message reassembly)\n", s.split_chunks);
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

int run_check(const InputOptions& in) {
  const auto started = std::chrono::steady_clock::now();
  RejectSink rejects(RejectPolicy{in.max_rejects, in.reject_file});
  Reader reader(in.files, rejects);
  Progress progress("check");
  bool completed = false;
  int status = kExitOk;
  try {
    for (Event e; reader.next(e);) progress.tick(reader.stats().records, reader.stats().events, 0);
    completed = true;
  } catch (const TooManyRejects& e) {
    fmt::print(stderr, "atlas2kudu: {}\n", e.what());
    status = kExitBadInput;
  }
  progress.done();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  print_read_summary(stdout, reader.stats());
  if (!in.stats_file.empty()) {
    write_text_file(in.stats_file, read_stats_json("check", reader.stats(), completed, seconds));
  }
  return status;
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
      "check", "Parse and validate notifications only; print counts per operation and per "
               "rejection reason");
  add_input_options(check, check_in);
  check->callback([&] { command = [&] { return run_check(check_in); }; });

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
  } catch (const SourceError& e) {
    fmt::print(stderr, "atlas2kudu: {}\n", e.what());
    return e.cannot_open() ? kExitNoInput : kExitIoError;
  } catch (const TooManyRejects& e) {
    fmt::print(stderr, "atlas2kudu: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "atlas2kudu: internal error: {}\n", e.what());
    return kExitInternal;
  }
}

}  // namespace atlas2kudu
