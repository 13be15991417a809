// StatementHandler backed by the test kit (tests/kit): the Kudu-semantics store and the SQL
// interpreter that reads SQL exactly as Impala lexes it. With it, the HS2 test server behaves like
// an Impala daemon in front of the six projection tables, so end-to-end runs of `atlas2kudu apply`
// can be compared with the reference projector.
//
// Statements outside the interpreter's subset (docs/sql-subset.md) fail at ExecuteStatement with
// "AnalysisException: <interpreter message>", which the client classifies as definite.
// SELECT statements go to kit_select.h, which answers the prior-state lookups (SPEC §3
// --prior impala) and rejects every other SELECT shape the same way.
//
// Example:
//   auto kit = std::make_shared<KitHandler>(KeyEncoding::kHex);
//   Hs2TestServer server({}, kit);
//   ... run the executor against it ...
//   kit->with_store([](const testkit::KuduStore& s) { CHECK(s.table("entity_flat").size() == 3);
//   });
#pragma once

#include <functional>
#include <mutex>

#include "atlas2kudu/compiler.h"
#include "kudu_store.h"
#include "statement_handler.h"

namespace atlas2kudu::testing {

class KitHandler : public StatementHandler {
 public:
  explicit KitHandler(KeyEncoding encoding = KeyEncoding::kHex, std::string database = "atlas");
  StatementOutcome execute(const std::string& sql) override;
  // Runs `f` on the store under the handler's lock (statements arrive from several sessions).
  void with_store(const std::function<void(const testkit::KuduStore&)>& f) const;

 private:
  mutable std::mutex mu_;
  testkit::KuduStore store_;
  std::string database_;
};

}  // namespace atlas2kudu::testing
