// The subcommands: what `check`, `compile`, `apply`, `ddl` and `digest` do once the command line
// is parsed (cli.cpp). Each returns its exit status; a failure that ends a run is thrown as Error
// and mapped to an exit code by run_cli, the one place that does so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "compile/ddl.h"
#include "hs2/options.h"

namespace atlas2kudu {

// Options every command that reads notifications shares.
struct InputOptions {
  std::vector<std::string> files;
  std::uint64_t max_rejects = 0;
  std::string reject_file;
  std::string stats_file;
};

struct CompileCommand {
  InputOptions in;
  CompileOptions options;
  // --memory-budget: split into options.knowledge_budget and options.window_budget by the command.
  std::size_t memory_budget = kDefaultMemoryBudget;
  std::string output;
  bool quiet = false;
  // Connection for --prior impala (compile: only when -i is given).
  Hs2Options hs2;
  bool prior_given = false;
  bool connection_given = false;
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

int run_check(const InputOptions& in);
int run_compile(CompileCommand& c);
int run_apply(ApplyCommand& a);
int run_ddl(const DdlCommand& d);
int run_digest(const std::string& type_name, const std::string& qualified_name);

}  // namespace atlas2kudu
