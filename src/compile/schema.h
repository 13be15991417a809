// The six projection tables, written down once: names, columns in order, types, primary keys.
// The DDL (compile/ddl.h), the SQL planner (compile/plan.h) and the HS2 prior-state reader
// (hs2/prior_state.h) all take column names, order and keys from here.
//
//   | table                  | primary key              | other columns |
//   |------------------------|--------------------------|--------------------------------------------|
//   | entity_flat            | guid                     | type_name, qualified_name, name, state, |
//   |                        |                          | created_ts, updated_ts, props_json | |
//   entity_by_qn           | qn_digest                | guid, type_name | | edge_out | src, elabel,
//   dst         | dst_type                                   | | edge_in                | dst,
//   elabel, src         | src_type                                   | | entity_classifications |
//   tag_name, guid           | propagated, source_guid, attrs_json,       | | | | updated_ts | |
//   entity_audit           | guid, event_ts, seq      | op, type_name, qualified_name, detail_json
//   |
//
// KEY columns hold a 16-byte guid or qn_digest, as STRING hex or BINARY (KeyEncoding). Every
// table is hash-partitioned on its first column; entity_audit also has RANGE partitions on
// event_ts.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace atlas2kudu::schema {

enum class ColumnType { kKey, kString, kBigint, kBoolean };

struct Column {
  std::string_view name;
  ColumnType type;
};

struct Table {
  std::string_view name;
  std::span<const Column> columns;  // in DDL order; the first `key_columns` form the primary key
  std::size_t key_columns;
  std::string_view range_column;  // empty: hash partitions only

  std::string_view column(std::size_t i) const { return columns[i].name; }
  std::string_view hash_column() const { return columns.front().name; }
};

// Column positions, for code that builds rows or reads them back by position.
enum EntityFlatColumn : std::size_t {
  kFlatGuid,
  kFlatTypeName,
  kFlatQualifiedName,
  kFlatName,
  kFlatState,
  kFlatCreatedTs,
  kFlatUpdatedTs,
  kFlatPropsJson,
  kFlatColumnCount,
};
enum EntityClassificationsColumn : std::size_t {
  kTagTagName,
  kTagGuid,
  kTagPropagated,
  kTagSourceGuid,
  kTagAttrsJson,
  kTagUpdatedTs,
  kTagColumnCount,
};

extern const Table kEntityFlat;
extern const Table kEntityByQn;
extern const Table kEdgeOut;
extern const Table kEdgeIn;
extern const Table kEntityClassifications;
extern const Table kEntityAudit;

// The six tables in DDL order.
std::span<const Table* const> tables();

}  // namespace atlas2kudu::schema
