// The plan: a folded window (compiler.h, NetWindow) -> the statements of its delete and upsert
// phases.
//
// Deletes, in this order (any order would do; they commute):
//   keyed deletes of rows whose net operation starts with DELETE, as IN-lists on key columns
//   grouped by the leading key. Composite keys: tags as products that name exactly the wanted
//   keys (`tag_name` IN (…) AND `guid` IN (…)); edges per label, as many keys to a statement as
//   the batch allows, the product of the IN-lists narrowed by a CASE on the leading key that
//   names each one's wanted trailing keys (left out when the product is exact:
//   `src` IN (a1, a2) AND `elabel` IN ('l') AND `dst` IN (b1, b2)
//   AND CASE `src` WHEN a1 THEN `dst` IN (b2) WHEN a2 THEN `dst` IN (b1) END);
//   guarded by_qn deletes (`qn_digest` IN (…) AND `guid` IN (…)); by_qn clean-ups (`guid` IN (…)
//   AND `qn_digest` NOT IN (…)); edge cascades (`src` IN (…), `dst` IN (…) on both edge tables);
//   tag clean-ups (`guid` IN (…) AND `tag_name` NOT IN (…), one group per distinct kept set).
// Never OR-of-ANDs over composite keys, nor a CASE without the IN-lists: Kudu filters with the
// IN-lists (Impala pushes each IN conjunct down on its own), skipping the tablets and key ranges
// they exclude, and would otherwise scan the table; Impala evaluates the CASE on the rows Kudu
// returns (every existing edge of the label in the product). A CASE also keeps the expression
// shallow, where an OR chain of 1000 pairs would pass Impala's expression depth limit (1000); it
// holds at most 4999 WHENs (Impala's limit of 10000 children per expression).
// Upserts: one statement group per table (entity_flat: per column set), rows sorted by key.
// Every statement holds at most options.batch_rows rows (keys named; for an edge delete with a
// CASE, the pairs it accepts) and, unless a single row is larger, at most options.batch_bytes
// bytes; batch_rows is at most kMaxBatchRows (validate_compile_options), so that every IN-list
// stays within Impala's limit. Rows are sorted by key and groups by their content, so the output
// is byte-identical for the same input.
//
// Example (hex keys, database atlas):
//   DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('…01') AND `elabel` IN ('owns')
//     AND `dst` IN ('…02')
//   UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES
//   ('…', '…01', 'hive_table')
#pragma once

#include "atlas2kudu/compiler.h"

namespace atlas2kudu {

// The statements of `net` (its smaller row vectors are sorted in place), with the window's info.
CompiledWindow plan_window(NetWindow& net, const CompileOptions& options);

}  // namespace atlas2kudu
