// Rows the server refused or skipped, explained with what only the window knows: the events that
// wrote each row (with their input positions) and, for entity_audit row errors, the range
// partitions to add. The SQL writer (sql_writer.h) calls these when the executor reports refused
// rows or too many row errors (atlas2kudu/executor.h).
//
// Example (window 2 of a run, one entity_flat row refused for its props_json):
//   events_of_row(net, "entity_flat", 3)          // every event of the window on that entity
//   refused_rows_message(net, window, rows)
//   // "window 2 (events 5-9; a.jsonl:5 .. a.jsonl:9): the server refused 1 row:
//   //    upsert phase, statement 1 of 3 (table entity_flat), row 2 of 4, written by a.jsonl:7:0
//   //    (ENTITY_UPDATE 00000001-… hive_table): Kudu error(s) reported, first error: Invalid
//   //    argument: value too large for column 'props_json' ...
//   //  The run stopped in window 2, which did not finish (a --checkpoint does not record it):
//   //  its one delete statement ran;
//   //  upsert statement 1 applied its other 3 rows; with --sessions 1 (the default), upsert
//   //  statements 2-3 did not run (with more sessions, ...); no later window ran. To set such rows
//   //  aside ... --reject-file FILE ..."
//   row_errors_message(net, window, e, "atlas")
//   // "window 3 (events 101-150; a.jsonl:101 .. a.jsonl:150): 1119 row errors, more than
//   --max-row-errors 0 allows ...
//   //  entity_audit: ... ALTER TABLE `atlas`.`entity_audit` ADD IF NOT EXISTS RANGE PARTITION
//   //  1924992000000000 <= VALUES < 1956528000000000;  -- 2031"
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/executor.h"
#include "atlas2kudu/reader.h"

namespace atlas2kudu {

// The events of the window that wrote row `net_row` of `table` (input order): the entity's events
// for entity_flat, entity_by_qn and entity_classifications (the classification events naming the
// tag), the relationship events of the edge, the one event of an entity_audit row.
std::vector<const Event*> events_of_row(const NetWindow& net, std::string_view table,
                                        std::size_t net_row);

// A refused row as the reject file records it.
RowRefusal describe_refused_row(const NetWindow& net, const CompiledWindow& window,
                                const RefusedRow& row);

// Why the run stops when rows were refused and there is no --reject-file: each row with the
// positions of its events and the server's reason, what of the window ran and what did not, and
// what to do. What ran follows from how the HS2 executor stops (hs2/executor.h), told from the
// rows alone: every statement of an earlier phase; the statements with refused rows, but for
// those rows; with one session, the statements of the phase before them and none after; with
// several (refused rows in more than one statement say so), only those started before the
// refusal, which the window cannot tell; nothing of a later phase or window. `rows` come from one
// phase (RowsRefused).
std::string refused_rows_message(const NetWindow& net, const CompiledWindow& window,
                                 const std::vector<RefusedRow>& rows);

// Why the run stops at too many row errors: per table, counts and likely cause; for entity_audit
// the years of the rows concerned and the ALTER TABLE … ADD RANGE PARTITION statements to run.
std::string row_errors_message(const NetWindow& net, const CompiledWindow& window,
                               const TooManyRowErrors& error, std::string_view database);

}  // namespace atlas2kudu
