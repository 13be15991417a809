// The subcommands: what `check`, `compile`, `apply`, `ddl` and `digest` do once the command line
// is parsed (cli.cpp). Each returns its exit status; a failure that ends a run is thrown as Error
// and mapped to an exit code by run_cli, the one place that does so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/reader.h"
#include "compile/ddl.h"
#include "hs2/options.h"

namespace atlas2kudu {

// Options every command that reads notifications shares.
struct InputOptions {
  std::vector<std::string> files;
  std::uint64_t max_rejects = 0;
  std::string reject_file;
  std::string stats_file;
  ReaderLimits limits;  // --max-json-depth, --max-cell-bytes, --max-split-*
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

struct ApplyCommand {
  CompileCommand compile;
  std::string checkpoint;
};

struct DdlCommand {
  DdlOptions options;
  std::string output;
};

int run_check(const InputOptions& in);
int run_compile(CompileCommand& c);
int run_apply(ApplyCommand& a);
int run_ddl(const DdlCommand& d);
int run_digest(const std::string& type_name, const std::string& qualified_name);

}  // namespace atlas2kudu
