// An in-memory model of the six Kudu projection tables (`atlas2kudu ddl`), with Kudu's write
// semantics.
//
// This is the test oracle's notion of "the tables". Both sides of an equivalence check write to a
// KuduStore: the reference projector (reference_projector.h) directly, the compiled SQL through the
// interpreter (sql_interpreter.h). Two stores are then compared with compare_stores().
//
// Kudu semantics modelled (Impala's UPSERT and DELETE on Kudu tables):
//   - UPSERT of an existing row writes only the listed columns; on insert every unlisted column is
//     NULL (no column of ours has a default).
//   - Deleting a key that is absent is a row error: counted, never a failure.
//   - A predicate DELETE removes every row matching all conditions.
// On top of Kudu, the store is deliberately strict so that compiler bugs surface as exceptions
// (StoreError) instead of silently diverging tables: a statement naming one primary key twice, an
// UPSERT without every key column, unknown tables/columns, NULL keys, type mismatches (no implicit
// STRING->BINARY cast, as in Impala), and KEY cells that are not canonical (32 lowercase hex chars
// under hex encoding, 16 bytes under binary encoding).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/event.h"

namespace atlas2kudu::testkit {

// Any violation of the store's contract. The message names table, column and value.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One typed cell. STRING and BINARY are distinct kinds: Impala never converts between them
// implicitly, so the store must not either.
struct Cell {
  enum class Kind : std::uint8_t { kNull, kString, kBinary, kInt64, kBool };
  Kind kind = Kind::kNull;
  std::string bytes;       // kString, kBinary
  std::int64_t int64 = 0;  // kInt64
  bool boolean = false;    // kBool

  static Cell null() { return {}; }
  static Cell string(std::string s) { return {Kind::kString, std::move(s), 0, false}; }
  static Cell binary(std::string b) { return {Kind::kBinary, std::move(b), 0, false}; }
  static Cell i64(std::int64_t v) { return {Kind::kInt64, {}, v, false}; }
  static Cell boolean_value(bool v) { return {Kind::kBool, {}, 0, v}; }

  bool is_null() const { return kind == Kind::kNull; }
  // For people: 'text' (C-escaped), unhex('..'), 42, TRUE, NULL.
  std::string to_display() const;

  friend bool operator==(const Cell&, const Cell&) = default;
  friend std::strong_ordering operator<=>(const Cell& a, const Cell& b);
};

// SQL type of a column. kKey is STRING or BINARY depending on the store's KeyEncoding.
enum class ColumnType : std::uint8_t { kKey, kString, kInt64, kBool };

struct ColumnDef {
  std::string name;
  ColumnType type;
};

struct TableSchema {
  std::string name;
  std::vector<ColumnDef> columns;  // primary-key columns first, in key order
  std::size_t key_count = 0;

  // Index of `column`, or nullopt.
  std::optional<std::size_t> find(std::string_view column) const;
  bool is_key(std::size_t index) const { return index < key_count; }
};

// The six tables, in the order `atlas2kudu ddl` creates them.
const std::vector<TableSchema>& projection_schemas();

// A primary key (key_count cells) and a full row (one cell per column, NULL where unset).
using Key = std::vector<Cell>;
using Row = std::vector<Cell>;

// A DELETE condition: `col = v`, `col IN (v, ...)`, `col NOT IN (v, ...)`, or
// `CASE col WHEN v1 THEN c1 WHEN v2 THEN c2 ... END` (kCase: values are v1, v2, ... and then the
// conditions c1, c2, ..., each `=` or IN on another column). As in SQL, the first WHEN equal to
// the cell decides; a NULL cell or one no WHEN names makes the CASE NULL, which matches nothing.
struct Condition {
  enum class Op : std::uint8_t { kEq, kIn, kNotIn, kCase };
  std::string column;
  Op op = Op::kEq;
  std::vector<Cell> values;       // exactly one for kEq
  std::vector<Condition> then{};  // kCase: one per value
};

class Table {
 public:
  explicit Table(const TableSchema* schema) : schema_(schema) {}
  const TableSchema& schema() const { return *schema_; }
  const std::map<Key, Row>& rows() const { return rows_; }
  std::size_t size() const { return rows_.size(); }
  const Row* find(const Key& key) const;

  friend bool operator==(const Table& a, const Table& b) { return a.rows_ == b.rows_; }

 private:
  friend class KuduStore;
  const TableSchema* schema_;
  std::map<Key, Row> rows_;  // ordered by primary key: dumps and diffs come out sorted
};

// Per-table counters, as HS2 would report them (rows_modified, num_row_errors).
struct TableCounters {
  std::size_t rows_upserted = 0;
  std::size_t rows_deleted = 0;
  std::size_t row_errors = 0;  // deletes of absent keys
};

// The six tables, their schemas and the key encoding are fixed at construction: table(name),
// its schema() and check_cell() may be read from one thread while another, holding the lock that
// guards the rows, changes rows (the HS2 test server parses statements outside that lock).
class KuduStore {
 public:
  explicit KuduStore(KeyEncoding encoding = KeyEncoding::kHex);

  KeyEncoding key_encoding() const { return encoding_; }

  // Throws StoreError for a table name outside the six.
  const Table& table(std::string_view name) const;
  const std::map<std::string, TableCounters, std::less<>>& counters() const { return counters_; }
  void reset_counters();

  // The KEY cell of a guid under this store's encoding.
  Cell key(const Guid& guid) const;
  // Guid from a KEY cell of this store (throws when the cell is not a canonical key).
  Guid guid_of(const Cell& key_cell) const;

  // One UPSERT statement: `columns` must include every key column; each row has one cell per
  // listed column. Validates the whole statement before changing anything (a rejected statement
  // leaves the store untouched). Returns rows written.
  std::size_t upsert(std::string_view table, const std::vector<std::string>& columns,
                     const std::vector<std::vector<Cell>>& rows);

  // Convenience for one row given as (column, cell) pairs.
  void upsert_row(std::string_view table,
                  const std::vector<std::pair<std::string, Cell>>& columns_and_cells);

  // Deletes the row with this primary key. An absent key is a row error (counted, returns false).
  bool delete_key(std::string_view table, const Key& key);

  // Deletes every row matching all conditions (at least one condition). Values are type-checked
  // like UPSERT cells. Returns rows deleted.
  std::size_t delete_where(std::string_view table, const std::vector<Condition>& conditions);

  // Records `n` row errors against `table` (used by the SQL interpreter for keyed deletes that
  // named absent keys).
  void count_row_errors(std::string_view table, std::size_t n);

  // Checks that `cell` may be stored in column `column_index` of `table` (NULL allowed only for
  // non-key columns). Throws StoreError naming the table and column.
  void check_cell(const TableSchema& table, std::size_t column_index, const Cell& cell) const;

  // The scenario dump format `atlas2kudu-projection-dump/1` (tests/data/scenarios/README.md).
  std::string dump() const;

  friend bool operator==(const KuduStore& a, const KuduStore& b) { return a.tables_ == b.tables_; }

 private:
  Table& mutable_table(std::string_view name);

  KeyEncoding encoding_;
  std::map<std::string, Table, std::less<>> tables_;
  std::map<std::string, TableCounters, std::less<>> counters_;
};

// How strictly two stores are compared.
struct CompareOptions {
  // entity_audit: compare `seq` too (true for store-vs-store equivalence; the scenario dumps omit
  // it). type_name, qualified_name and detail_json of audit rows are never compared: their
  // content is free-form.
  bool audit_seq = true;
};

// Structural comparison. nullopt when equal, else a readable description of the first difference
// (table, primary key, column, both values). NULL props_json/attrs_json equals "{}"; JSON columns
// are compared as parsed JSON (key order and value text kept, whitespace ignored).
std::optional<std::string> compare_stores(const KuduStore& expected, const KuduStore& actual,
                                          const CompareOptions& options = {});

// Compares a store with a dump text in `atlas2kudu-projection-dump/1` (a scenario's
// `.expected.json`). nullopt when equal, else the first difference.
std::optional<std::string> compare_with_dump(std::string_view expected_dump,
                                             const KuduStore& actual);

}  // namespace atlas2kudu::testkit
