#include "compile/sql_writer.h"

#include <fmt/core.h>

#include "compile/annotate.h"
#include "compile/plan.h"
#include "compile/refusals.h"

namespace atlas2kudu {

SqlWindowWriter::SqlWindowWriter(const CompileOptions& options, Executor& executor,
                                 RejectSink* refused_rows)
    : options_(options), executor_(executor), refused_rows_(refused_rows) {}

void SqlWindowWriter::start(std::string_view header) {
  executor_.start(header);
}

void SqlWindowWriter::write(NetWindow& net) {
  CompiledWindow window = plan_window(net, options_);
  if (options_.annotate) annotate_window(net, window);
  WindowRun run;
  try {
    run = executor_.run_window(window);
  } catch (const RowsRefused& e) {
    throw Error(ErrorCategory::kServerRejected, refused_rows_message(net, window, e.rows));
  } catch (const TooManyRowErrors& e) {
    throw Error(ErrorCategory::kServerRejected,
                row_errors_message(net, window, e, options_.database));
  }
  if (!run.refused.empty()) {
    if (refused_rows_ == nullptr) {
      throw Error(ErrorCategory::kInternal, "rows set aside without a reject sink");
    }
    std::vector<RowRefusal> rows;
    rows.reserve(run.refused.size());
    for (const RefusedRow& r : run.refused) rows.push_back(describe_refused_row(net, window, r));
    stats_.rows_refused += rows.size();
    // May throw TooManyRejects: the window is then not counted as written.
    refused_rows_->refused_rows(rows, fmt::format("window {}", window.index));
  }
  ++stats_.windows;
  for (const Statement& s : window.deletes) {
    TableCounts& t = stats_.tables[s.table];
    ++t.delete_statements;
    t.delete_rows += s.rows;
    stats_.sql_bytes += s.sql.size();
  }
  for (const Statement& s : window.upserts) {
    TableCounts& t = stats_.tables[s.table];
    ++t.upsert_statements;
    t.upsert_rows += s.rows;
    stats_.sql_bytes += s.sql.size();
  }
  stats_.statements += window.deletes.size() + window.upserts.size();
}

void SqlWindowWriter::finish() {
  executor_.finish();
}

}  // namespace atlas2kudu
