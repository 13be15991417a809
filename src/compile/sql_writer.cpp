#include "compile/sql_writer.h"

#include "compile/plan.h"

namespace atlas2kudu {

SqlWindowWriter::SqlWindowWriter(const CompileOptions& options, Executor& executor)
    : options_(options), executor_(executor) {}

void SqlWindowWriter::start(std::string_view header) {
  executor_.start(header);
}

void SqlWindowWriter::write(NetWindow& net) {
  const CompiledWindow window = plan_window(net, options_);
  // The rows live on in the statements: give their memory back before the window runs.
  NetWindow planned;
  planned.info = std::move(net.info);
  net = std::move(planned);
  executor_.run_window(window);
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
