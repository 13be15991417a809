// `--prior impala`: the PriorState that reads the projection tables over HS2 (the contract is in
// atlas2kudu/prior_state.h).
//
// Contract:
//   - Its own session, separate from the executor's, made by a SessionFactory (session.h; HS2 in
//     production, an in-memory fake in tests): opened on the first lookup() that has a guid to
//     ask about, closed by the destructor. Nothing is sent before that.
//   - lookup() splits the guids (ascending, distinct, as the compiler hands them over) into
//     batches of at most lookup_batch_keys() keys whose statement text is at most
//     CompileOptions::batch_bytes bytes (a single key always makes a batch), and runs per batch
//       SELECT <guid>, `type_name`, `qualified_name`, `props_json` FROM `db`.`entity_flat`
//         WHERE `guid` IN (<keys>)
//       SELECT <guid>, `tag_name` FROM `db`.`entity_classifications` WHERE `guid` IN (<keys>)
//     Keys and identifiers are written by impala_sql.h. <guid> is `guid` under --key-encoding
//     hex and lower(hex(`guid`)) under binary, so the guid always comes back as hex text.
//   - It appends exactly one PriorEntity per requested guid, in ascending guid order, and only
//     once every batch has been answered: `exists` when entity_flat has the row (NULL cells →
//     nullopt), `tags` = every entity_classifications row of the guid, sorted by tag name. A guid
//     with no rows at all is reported as known-absent (exists = false, no tags).
//   - Failures: a retryable Hs2Error (transport trouble, lost session, admission, Kudu "Timed out"
//     / "Service unavailable" / "Network error") re-runs the SELECT after reconnecting where
//     needed, up to Hs2Options::max_retries times with the executor's RetryPolicy (retry.h:
//     retry_backoff_ms doubled per attempt, capped at 30 s, +0-25 % jitter); SELECTs are
//     read-only, so re-running is always safe. Anything else, or retries exhausted, throws
//     Hs2Error of the underlying kind with the table and batch in the message. A reply of the
//     wrong shape (column count, a guid that was not asked for, a guid that is not hex) throws
//     Hs2Error(kInternal). A throwing lookup() appends nothing; lookup_in_batches() hands each
//     batch over as soon as both its SELECTs are answered, so a throw may follow some batches.
//   - Not thread-safe; the compiler calls it from one thread.
//   - Consistency: the compiler asks about a guid only the first time a run meets it, so the rows
//     read were written by earlier runs (or other writers), never by this run's own executor
//     session. -Q options (e.g. -Q KUDU_READ_MODE=READ_AT_SNAPSHOT) apply to these SELECTs too.
//
// Worked example (hex keys, batch_rows = 2, database `atlas`), guids g1 < g2 < g3 where g1 has an
// entity_flat row (hive_table, qn NULL, props {"owner":"a"}) and the tag PII, g2 only the tag
// PII, and g3 nothing:
//
//   CompileOptions compile;  compile.batch_rows = 2;  compile.prior = PriorSource::kImpala;
//   Hs2PriorState prior(settings, hs2_session_factory(settings, credentials), compile);
//   Compiler compiler(compile, prior);     // `prior` must outlive the compiler
//   // compiler.compile_window(...) calls prior.lookup({g1, g2, g3}, out), which sends
//   //   SELECT `guid`, `type_name`, `qualified_name`, `props_json` FROM `atlas`.`entity_flat`
//   //     WHERE `guid` IN ('<g1 hex>', '<g2 hex>')
//   //   SELECT `guid`, `tag_name` FROM `atlas`.`entity_classifications`
//   //     WHERE `guid` IN ('<g1 hex>', '<g2 hex>')
//   //   ... the same two for ('<g3 hex>') ...
//   // and appends
//   //   {g1, exists = true, "hive_table", nullopt, R"({"owner":"a"})", {"PII"}},
//   //   {g2, exists = false, nullopt, nullopt, nullopt, {"PII"}},
//   //   {g3, exists = false, nullopt, nullopt, nullopt, {}}
//   // Under --key-encoding binary the same SELECTs read
//   //   SELECT lower(hex(`guid`)), `type_name`, ... WHERE `guid` IN
//   //     (CAST(unhex('<g1 hex>') AS BINARY), CAST(unhex('<g2 hex>') AS BINARY))
//   prior.stats().queries;                  // 4
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/prior_state.h"
#include "hs2/clock.h"
#include "hs2/error.h"
#include "hs2/observer.h"
#include "hs2/options.h"
#include "hs2/retry.h"
#include "hs2/session.h"

namespace atlas2kudu {

struct Hs2PriorStats {
  std::uint64_t lookups = 0;     // lookup() calls that sent anything
  std::uint64_t guids = 0;       // guids asked about
  std::uint64_t found = 0;       // of which have an entity_flat row
  std::uint64_t tag_rows = 0;    // entity_classifications rows read
  std::uint64_t queries = 0;     // SELECTs answered (each counted once)
  std::uint64_t retries = 0;     // re-runs after retryable failures
  std::uint64_t reconnects = 0;  // sessions reopened to re-run a SELECT
};

// Keys per lookup batch (each at least 16): CompileOptions::batch_rows, no more than half the
// window's memory share holds in props_json cells at Kudu's limit (kDefaultMaxCellBytes, or
// --props-max-bytes if larger: 950 keys at the default budget, 105 at --memory-budget 64M), and,
// once a batch was answered (`last_bytes_per_key` > 0, the run's last batch, in any window), no
// more than an eighth of the share holds at the bytes per key that batch's answer took: a batch
// is held whole while it is read, up to three times over (the reply, its rows, the entities),
// beside the knowledge cache. The cells of the tables may be larger than --props-max-bytes (a
// run with a lower cap than the one that loaded them read 1,000 keys of 20 KB per batch: 206 MB
// at 64M), and no cap bounds the classifications (6,000 entities with 40 KB of tags: batches of
// 1,000 keys of 40 KB at the default budget); the answers bring such batches down to 380 keys at
// the default budget, 42 at 64M. The last batch alone decides, not the largest seen: a few
// large entities would otherwise make every later lookup take more round trips; the first bound
// holds whatever the last batch was.
std::size_t lookup_batch_keys(const CompileOptions& options, std::size_t last_bytes_per_key);

class Hs2PriorState final : public PriorState {
 public:
  // Its session comes from `sessions` (HS2 ones from hs2_session_factory); of the settings, the
  // endpoint (for describe()), --max_retries and --retry_backoff_ms are used. Throws
  // Error(kUsage) for a database name Impala cannot quote or batch_rows == 0. Does not connect:
  // the first lookup does, and a failure to connect then is not retried as a lookup.
  Hs2PriorState(const Hs2Settings& hs2, SessionFactory sessions, const CompileOptions& options);
  ~Hs2PriorState() override;
  Hs2PriorState(const Hs2PriorState&) = delete;
  Hs2PriorState& operator=(const Hs2PriorState&) = delete;

  // "impala (batched primary-key lookups over HS2 at <host>:<port>)".
  std::string describe() const override;
  void lookup(std::span<const Guid> guids, std::vector<PriorEntity>& out) override;
  // Calls `each` after the two SELECTs of each batch of keys (--batch-rows), with the batch's
  // entities.
  void lookup_in_batches(std::span<const Guid> guids,
                         const std::function<void(std::vector<PriorEntity>&)>& each) override;

  Hs2PriorStats stats() const;

  // Test hook: replaces the back-off sleep.
  void set_sleeper(Sleeper sleeper) { retry_.set_sleeper(std::move(sleeper)); }

  // Each SELECT started and finished, its retries and reconnects (phase "lookup", window 0);
  // null: none. Not owned.
  void observe(ExecutionObserver* observer) { observer_ = observer; }

  // The SELECT texts for one batch of keys (exposed for tests and --explain-style output).
  static std::string entity_flat_query(std::span<const Guid> guids, const CompileOptions& options);
  static std::string classifications_query(std::span<const Guid> guids,
                                           const CompileOptions& options);

 private:
  // Runs one SELECT on `table` (`where`: the keys it asks about, for messages).
  Hs2QueryResult run(const std::string& sql, std::string_view table, std::string_view where);

  Hs2Endpoint endpoint_;
  SessionFactory make_session_;
  CompileOptions options_;
  RetryPolicy retry_;
  std::unique_ptr<SqlSession> session_;
  Hs2PriorStats stats_;  // retries and reconnects are the RetryPolicy's
  ExecutionObserver* observer_ = nullptr;
  std::size_t lookup_queries_ = 0;      // SELECTs of the current lookup() so far
  std::size_t last_bytes_per_key_ = 0;  // in the last batch's answer, 0 before the first
};

}  // namespace atlas2kudu
