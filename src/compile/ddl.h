// DDL of the six Kudu projection tables, as printed by `atlas2kudu ddl` and stored in
// sql/kudu_projections.sql (the default options; a test keeps the file equal to this output), and
// the PostgreSQL foreign tables over them, as printed by `atlas2kudu ddl --fdw` and stored in
// sql/kudu_projections_fdw.sql (hex keys) and sql/kudu_projections_fdw_binary.sql (binary keys).
//
// Example: projection_ddl({.database = "atlas", .key_encoding = KeyEncoding::kHex,
//                          .partitions = 16}) contains
//
//   CREATE TABLE IF NOT EXISTS `atlas`.`entity_by_qn` (
//     `qn_digest` STRING NOT NULL,
//     `guid` STRING NULL,
//     `type_name` STRING NULL,
//     PRIMARY KEY (`qn_digest`)
//   )
//   PARTITION BY HASH (`qn_digest`) PARTITIONS 16
//   STORED AS KUDU;
//
// Every table is hash-partitioned on its leading key column; entity_audit also has yearly RANGE
// partitions on event_ts (microseconds UTC) so retention is ALTER TABLE … DROP RANGE PARTITION.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "atlas2kudu/compiler.h"

namespace atlas2kudu {

struct DdlOptions {
  std::string database = "atlas";
  KeyEncoding key_encoding = KeyEncoding::kHex;
  int partitions = 16;  // hash partitions per table, >= 2 (Kudu's minimum)
  // entity_audit range partitions: one below first_year, then one per year up to last_year.
  int first_year = 2024;
  int last_year = 2030;
};

// entity_audit.event_ts of YEAR-01-01T00:00:00Z (microseconds UTC): the bounds of the yearly
// range partitions.  audit_year_start_micros(2031) == 1924992000000000
std::int64_t audit_year_start_micros(int year);

// The UTC year an event_ts (microseconds) falls in.  audit_year_of(1924992000000000) == 2031
int audit_year_of(std::int64_t event_ts_micros);

// The statement that adds the yearly range partition of `year` to entity_audit, as the DDL lays
// them out (no ";"):
//   ALTER TABLE `atlas`.`entity_audit` ADD IF NOT EXISTS RANGE PARTITION
//   1924992000000000 <= VALUES < 1956528000000000
std::string audit_add_range_partition_sql(std::string_view database, int year);

// The complete script: CREATE DATABASE IF NOT EXISTS, then the six CREATE TABLE IF NOT EXISTS
// statements, each ending in ";\n". Throws Error(kUsage) for a database name Impala
// cannot quote, partitions < 2, or first_year > last_year.
std::string projection_ddl(const DdlOptions& options);

// The psql script that creates the foreign tables PostgreSQL readers use: the wrapper's extension,
// the server `atlas_kudu`, a user mapping and the six tables in schema `atlas_kudu`, with the same
// column names, order and NOT NULL keys as projection_ddl() and PostgreSQL types for its Impala
// types (STRING text, BINARY bytea, BIGINT bigint, BOOLEAN boolean). `database` is the default of
// the remote schema; partitions and years do not apply. Example (default options):
//
//   CREATE FOREIGN TABLE IF NOT EXISTS atlas_kudu.edge_out (
//     src      text NOT NULL,
//     elabel   text NOT NULL,
//     dst      text NOT NULL,
//     dst_type text
//   ) SERVER atlas_kudu
//     OPTIONS (:schema_option :'remote_schema', :table_option 'edge_out');
//
// where the `:name` parts are psql variables the script documents and defaults. Throws
// Error(kUsage) for a database name Impala cannot quote.
std::string foreign_table_ddl(const DdlOptions& options);

}  // namespace atlas2kudu
