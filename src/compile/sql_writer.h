// The SQL writer: the WindowWriter that plans each folded window into its delete and upsert
// phases (compile/plan.h) and hands the statements to an Executor: the print executor for
// `compile`, the HS2 executor for `apply`. It also counts what it wrote, per table.
//
//   PrintExecutor printer(stdout);
//   SqlWindowWriter writer(options, printer);
//   writer.start(header);
//   writer.write(net);          // plan_window(net) -> printer.run_window(...)
//   writer.finish();
//   writer.stats().statements;  // over the run
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/executor.h"

namespace atlas2kudu {

struct TableCounts {
  std::uint64_t delete_statements = 0;
  std::uint64_t upsert_statements = 0;
  std::uint64_t delete_rows = 0;  // keys listed in deletes
  std::uint64_t upsert_rows = 0;  // rows written by upserts
};

struct SqlWriteStats {
  std::uint64_t windows = 0;     // windows the executor fully ran
  std::uint64_t statements = 0;  // of those windows
  std::uint64_t sql_bytes = 0;
  std::map<std::string, TableCounts> tables;  // by table name, sorted
};

class SqlWindowWriter final : public WindowWriter {
 public:
  // `executor` must outlive the writer.
  SqlWindowWriter(const CompileOptions& options, Executor& executor);

  void start(std::string_view header) override;
  void write(NetWindow& net) override;
  void finish() override;

  const SqlWriteStats& stats() const { return stats_; }

 private:
  CompileOptions options_;
  Executor& executor_;
  SqlWriteStats stats_;
};

}  // namespace atlas2kudu
