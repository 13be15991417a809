#include "kit_handler.h"

#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "compile/ddl.h"
#include "kit_select.h"
#include "sql_interpreter.h"

namespace atlas2kudu::testing {

namespace {

bool refusals_enabled(const KitRefusals& r) {
  return r.audit_last_year != 0 || r.max_cell_bytes != 0 || !r.refused_value.empty();
}

// Why Kudu refuses `cell` of `column` (the first reason found), or nothing.
std::optional<std::string> refusal_reason(const KitRefusals& r, const std::string& column,
                                          const testkit::Cell& cell) {
  using Kind = testkit::Cell::Kind;
  if (cell.kind != Kind::kString && cell.kind != Kind::kBinary) return std::nullopt;
  if (r.max_cell_bytes != 0 && cell.bytes.size() > r.max_cell_bytes) {
    return fmt::format("value too large for column '{}' ({} bytes, maximum is {} bytes)", column,
                       cell.bytes.size(), r.max_cell_bytes);
  }
  if (!r.refused_value.empty() && cell.bytes.find(r.refused_value) != std::string::npos) {
    return fmt::format("invalid value for column '{}': contains '{}'", column, r.refused_value);
  }
  return std::nullopt;
}

// Whether the last statement of `sql` lacks its ';': an HS2 statement (Impala takes one without),
// not a script (--seed-sql of compile's output), whose comment lines after its last ';' (an
// empty phase's "-- window 1 phase 2: upserts (0 statements)") end no statement. Text with no
// statement at all lacks one too, so that it fails as Impala fails an empty statement.
bool lacks_terminator(std::string_view sql) {
  for (;;) {
    const std::size_t last = sql.find_last_not_of(" \t\r\n");
    if (last == std::string_view::npos) return true;
    sql = sql.substr(0, last + 1);
    const std::size_t line_end = sql.rfind('\n');
    const std::size_t line_start = line_end == std::string_view::npos ? 0 : line_end + 1;
    const std::size_t first = sql.find_first_not_of(" \t", line_start);
    if (!sql.substr(first).starts_with("--")) return sql.back() != ';';
    sql = sql.substr(0, line_start);
  }
}

}  // namespace

KitHandler::KitHandler(KeyEncoding encoding, std::string database)
    : store_(encoding), database_(std::move(database)) {}

KitHandler::KitHandler(KeyEncoding encoding, KitRefusals refusals)
    : store_(encoding), database_("atlas"), refusals_(std::move(refusals)) {}

void KitHandler::set_refusals(KitRefusals refusals) {
  std::lock_guard lock(mu_);
  refusals_ = std::move(refusals);
}

StatementOutcome KitHandler::execute(const std::string& sql) {
  StatementOutcome out;
  if (sql.size() > testkit::kImpalaMaxStatementBytes) {
    out.error = testkit::statement_too_long(sql.size());
    out.at_execute = true;
    return out;
  }
  try {
    if (is_select_statement(sql)) {  // prior-state lookups (kit_select.h)
      std::lock_guard lock(mu_);
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
    if (lacks_terminator(script)) script += ";";
    // Parsed outside the lock (it reads only the schemas, kudu_store.h): the sessions' statements
    // are parsed in parallel, as Impala's planners do, and only the writes take turns.
    const std::vector<testkit::ParsedStatement> parsed =
        testkit::parse_script(script, store_, options);
    std::lock_guard lock(mu_);
    if (refusals_enabled(refusals_) && parsed.size() == 1 &&
        parsed[0].kind == testkit::ParsedStatement::Kind::kUpsert) {
      return upsert_with_refusals(parsed[0]);
    }
    testkit::ExecutionStats stats = testkit::execute_statements(parsed, store_, options);
    for (const auto& [table, c] : stats.tables) {
      // A DELETE in Impala scans for the rows and deletes those it found: absent keys match
      // nothing and are not row errors (the kit's counter models Kudu's keyed delete instead).
      out.rows_modified += static_cast<std::int64_t>(c.rows_upserted + c.rows_deleted);
    }
  } catch (const std::exception& e) {
    // Impala reports parse/analysis failures from ExecuteStatement itself.
    out.error = std::string("AnalysisException: ") + e.what();
    out.at_execute = true;
  }
  return out;
}

StatementOutcome KitHandler::upsert_with_refusals(const testkit::ParsedStatement& st) {
  StatementOutcome out;
  std::optional<std::size_t> event_ts;
  if (st.table == "entity_audit" && refusals_.audit_last_year != 0) {
    for (std::size_t c = 0; c < st.columns.size(); ++c) {
      if (st.columns[c] == "event_ts") event_ts = c;
    }
  }
  const std::int64_t range_end = audit_year_start_micros(refusals_.audit_last_year + 1);
  std::vector<std::vector<testkit::Cell>> accepted;
  std::optional<std::string> first_error;
  for (const auto& row : st.rows) {
    if (event_ts && row[*event_ts].int64 >= range_end) {
      ++out.row_errors;  // NotFound: no tablet covers the key; ignored and counted
      continue;
    }
    std::optional<std::string> reason;
    for (std::size_t c = 0; c < st.columns.size() && !reason; ++c) {
      reason = refusal_reason(refusals_, st.columns[c], row[c]);
    }
    if (reason) {
      if (!first_error) first_error = *reason;
      continue;
    }
    accepted.push_back(row);
  }
  // Kudu applies the rows it accepts; without a transaction nothing is rolled back.
  if (!accepted.empty()) {
    out.rows_modified = static_cast<std::int64_t>(store_.upsert(st.table, st.columns, accepted));
  }
  if (first_error) {
    out = StatementOutcome{};
    out.error = "Kudu error(s) reported, first error: Invalid argument: " + *first_error;
  }
  return out;
}

void KitHandler::with_store(const std::function<void(const testkit::KuduStore&)>& f) const {
  std::lock_guard lock(mu_);
  f(store_);
}

}  // namespace atlas2kudu::testing
