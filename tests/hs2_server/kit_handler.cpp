#include "kit_handler.h"

#include "kit_select.h"
#include "sql_interpreter.h"

namespace atlas2kudu::testing {

KitHandler::KitHandler(KeyEncoding encoding, std::string database)
    : store_(encoding), database_(std::move(database)) {}

StatementOutcome KitHandler::execute(const std::string& sql) {
  StatementOutcome out;
  std::lock_guard lock(mu_);
  try {
    if (is_select_statement(sql)) {  // prior-state lookups (kit_select.h)
      KitSelectResult r = run_kit_select(sql, store_, database_);
      out.is_query = true;
      out.columns = std::move(r.columns);
      out.rows = std::move(r.rows);
      return out;
    }
    testkit::InterpreterOptions options;
    options.database = database_;
    // One statement per call, as over HS2: phase-conflict checks span scripts, not statements.
    options.check_phase_conflicts = false;
    // HS2 statements carry no terminator (Impala accepts one optional ';'); scripts need it.
    std::string script = sql;
    auto last = script.find_last_not_of(" \t\r\n");
    if (last == std::string::npos || script[last] != ';') script += ";";
    testkit::ExecutionStats stats = testkit::execute_script(script, store_, options);
    for (const auto& [table, c] : stats.tables) {
      out.rows_modified += static_cast<std::int64_t>(c.rows_upserted + c.rows_deleted);
      out.row_errors += static_cast<std::int64_t>(c.row_errors);
    }
  } catch (const std::exception& e) {
    // Impala reports parse/analysis failures from ExecuteStatement itself.
    out.error = std::string("AnalysisException: ") + e.what();
    out.at_execute = true;
  }
  return out;
}

void KitHandler::with_store(const std::function<void(const testkit::KuduStore&)>& f) const {
  std::lock_guard lock(mu_);
  f(store_);
}

}  // namespace atlas2kudu::testing
