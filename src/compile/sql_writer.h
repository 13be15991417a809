// The SQL writer: the WindowWriter that plans each folded window into its delete and upsert
// phases (compile/plan.h) and hands the statements to an Executor: the print executor for
// `compile`, the HS2 executor for `apply`. It also counts what it wrote, per table.
//
// When the executor reports rows the server refused or too many row errors
// (atlas2kudu/executor.h), the writer explains them with the window it planned (refusals.h):
// refused rows set aside go to the RejectSink (reject file, --max-rejects), with the events that
// wrote them; otherwise Error(kServerRejected) names the rows, their input positions and the cause.
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
#include "atlas2kudu/reader.h"

namespace atlas2kudu {

struct TableCounts {
  std::uint64_t delete_statements = 0;
  std::uint64_t upsert_statements = 0;
  std::uint64_t delete_rows = 0;  // keys listed in deletes
  std::uint64_t upsert_rows = 0;  // rows written by upserts
};

struct SqlWriteStats {
  std::uint64_t windows = 0;       // windows the executor fully ran
  std::uint64_t rows_refused = 0;  // rows the server refused, set aside in the reject file
  std::uint64_t statements = 0;    // of those windows
  std::uint64_t sql_bytes = 0;
  std::map<std::string, TableCounts> tables;  // by table name, sorted
};

class SqlWindowWriter final : public WindowWriter {
 public:
  // `executor` (and `refused_rows`, which receives the rows the executor set aside) must
  // outlive the writer.
  SqlWindowWriter(const CompileOptions& options, Executor& executor,
                  RejectSink* refused_rows = nullptr);

  void start(std::string_view header) override;
  void write(NetWindow& net) override;
  void finish() override;

  const SqlWriteStats& stats() const { return stats_; }

 private:
  CompileOptions options_;
  Executor& executor_;
  RejectSink* refused_rows_;
  SqlWriteStats stats_;
};

}  // namespace atlas2kudu
