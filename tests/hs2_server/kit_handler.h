// StatementHandler backed by the test kit (tests/kit): the Kudu-semantics store and the SQL
// interpreter that reads SQL exactly as Impala lexes it. With it, the HS2 test server behaves like
// an Impala daemon in front of the six projection tables, so end-to-end runs of `atlas2kudu apply`
// can be compared with the reference projector.
//
// Statements outside the interpreter's subset (docs/sql-subset.md) fail at ExecuteStatement with
// "AnalysisException: <interpreter message>", which the client classifies as definite.
// SELECT statements go to kit_select.h, which answers the prior-state lookups
// (--prior impala) and rejects every other SELECT shape the same way.
//
// Row errors are reported the way Impala reports them for Kudu tables (kudu_ignore_conflicts,
// its default): a DELETE is a scan followed by deletes of the rows found, so keys that are absent
// are simply not found and are NOT row errors; a row Kudu refuses as NotFound (a key in no range
// partition) is skipped and counted in num_row_errors while the statement succeeds; any other
// Kudu error on a row (a cell over the size limit) fails the statement with
// "Kudu error(s) reported, first error: ...", the other rows staying applied (no rollback).
// KitRefusals turns the last two on.
//
// Example:
//   auto kit = std::make_shared<KitHandler>(KeyEncoding::kHex);
//   kit->set_refusals({.audit_last_year = 2030});   // `ddl --audit-last-year 2030`
//   Hs2TestServer server({}, kit);
//   ... run the executor against it ...
//   kit->with_store([](const testkit::KuduStore& s) { CHECK(s.table("entity_flat").size() == 3);
//   });
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

#include "atlas2kudu/compiler.h"
#include "kudu_store.h"
#include "sql_interpreter.h"
#include "statement_handler.h"

namespace atlas2kudu::testing {

// Rows a real cluster refuses. Zero/empty members are off.
struct KitRefusals {
  // entity_audit was created with `atlas2kudu ddl --audit-last-year Y`: rows whose event_ts is at
  // or after Y+1-01-01 fall in no range partition. Kudu answers NotFound; Impala skips them and
  // counts them as row errors.
  int audit_last_year = 0;
  // Kudu's --max_cell_size_bytes: an UPSERT with a STRING/BINARY cell longer than this fails with
  // "Kudu error(s) reported, first error: Invalid argument: value too large for column ...".
  std::size_t max_cell_bytes = 0;
  // An UPSERT with a STRING cell containing this text fails the same way ("Invalid argument:
  // invalid value for column ..."): one literal the cluster will not store.
  std::string refused_value{};
};

class KitHandler : public StatementHandler {
 public:
  explicit KitHandler(KeyEncoding encoding = KeyEncoding::kHex, std::string database = "atlas");
  KitHandler(KeyEncoding encoding, KitRefusals refusals);
  StatementOutcome execute(const std::string& sql) override;
  // Runs `f` on the store under the handler's lock (statements arrive from several sessions).
  void with_store(const std::function<void(const testkit::KuduStore&)>& f) const;
  void set_refusals(KitRefusals refusals);

 private:
  // An UPSERT under KitRefusals: the rows the cluster accepts are written; out-of-range rows are
  // counted as row errors; a refused value fails the statement.
  StatementOutcome upsert_with_refusals(const testkit::ParsedStatement& statement);

  mutable std::mutex mu_;
  testkit::KuduStore store_;
  std::string database_;
  KitRefusals refusals_;
};

}  // namespace atlas2kudu::testing
