#include "kudu_store.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <set>

#include "json_text.h"
#include "util/digest.h"

namespace atlas2kudu::testkit {

namespace {

std::string c_escape(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

bool is_lower_hex32(std::string_view s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string_view type_name(ColumnType t, KeyEncoding enc) {
  switch (t) {
    case ColumnType::kKey:
      return enc == KeyEncoding::kHex ? "STRING (hex KEY)" : "BINARY (KEY)";
    case ColumnType::kString:
      return "STRING";
    case ColumnType::kInt64:
      return "BIGINT";
    case ColumnType::kBool:
      return "BOOLEAN";
  }
  return "?";
}

std::string_view kind_name(Cell::Kind k) {
  switch (k) {
    case Cell::Kind::kNull:
      return "NULL";
    case Cell::Kind::kString:
      return "STRING";
    case Cell::Kind::kBinary:
      return "BINARY";
    case Cell::Kind::kInt64:
      return "BIGINT";
    case Cell::Kind::kBool:
      return "BOOLEAN";
  }
  return "?";
}

bool is_json_column(std::string_view column) {
  return column == "props_json" || column == "attrs_json";
}

}  // namespace

std::string Cell::to_display() const {
  switch (kind) {
    case Kind::kNull:
      return "NULL";
    case Kind::kString:
      return "'" + c_escape(bytes) + "'";
    case Kind::kBinary:
      return "unhex('" + to_hex(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()) +
             "')";
    case Kind::kInt64:
      return fmt::format("{}", int64);
    case Kind::kBool:
      return boolean ? "TRUE" : "FALSE";
  }
  return "?";
}

std::strong_ordering operator<=>(const Cell& a, const Cell& b) {
  if (a.kind != b.kind) return a.kind <=> b.kind;
  switch (a.kind) {
    case Cell::Kind::kNull:
      return std::strong_ordering::equal;
    case Cell::Kind::kString:
    case Cell::Kind::kBinary: {
      // Byte order (unsigned), as Kudu orders STRING/BINARY keys.
      const int c = a.bytes.compare(b.bytes);
      return c < 0 ? std::strong_ordering::less
                   : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
    }
    case Cell::Kind::kInt64:
      return a.int64 <=> b.int64;
    case Cell::Kind::kBool:
      return a.boolean <=> b.boolean;
  }
  return std::strong_ordering::equal;
}

std::optional<std::size_t> TableSchema::find(std::string_view column) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == column) return i;
  }
  return std::nullopt;
}

const std::vector<TableSchema>& projection_schemas() {
  using T = ColumnType;
  static const std::vector<TableSchema> schemas = {
      {"entity_flat",
       {{"guid", T::kKey},
        {"type_name", T::kString},
        {"qualified_name", T::kString},
        {"name", T::kString},
        {"state", T::kString},
        {"created_ts", T::kInt64},
        {"updated_ts", T::kInt64},
        {"props_json", T::kString}},
       1},
      {"entity_by_qn", {{"qn_digest", T::kKey}, {"guid", T::kKey}, {"type_name", T::kString}}, 1},
      {"edge_out",
       {{"src", T::kKey}, {"elabel", T::kString}, {"dst", T::kKey}, {"dst_type", T::kString}},
       3},
      {"edge_in",
       {{"dst", T::kKey}, {"elabel", T::kString}, {"src", T::kKey}, {"src_type", T::kString}},
       3},
      {"entity_classifications",
       {{"tag_name", T::kString},
        {"guid", T::kKey},
        {"propagated", T::kBool},
        {"source_guid", T::kKey},
        {"attrs_json", T::kString},
        {"updated_ts", T::kInt64}},
       2},
      {"entity_audit",
       {{"guid", T::kKey},
        {"event_ts", T::kInt64},
        {"seq", T::kInt64},
        {"op", T::kString},
        {"type_name", T::kString},
        {"qualified_name", T::kString},
        {"detail_json", T::kString}},
       3},
  };
  return schemas;
}

const Row* Table::find(const Key& key) const {
  const auto it = rows_.find(key);
  return it == rows_.end() ? nullptr : &it->second;
}

KuduStore::KuduStore(KeyEncoding encoding) : encoding_(encoding) {
  for (const auto& schema : projection_schemas()) {
    tables_.emplace(schema.name, Table(&schema));
    counters_.emplace(schema.name, TableCounters{});
  }
}

void KuduStore::reset_counters() {
  for (auto& [name, c] : counters_) c = TableCounters{};
}

const Table& KuduStore::table(std::string_view name) const {
  const auto it = tables_.find(name);
  if (it == tables_.end()) throw StoreError(fmt::format("unknown table `{}`", name));
  return it->second;
}

Table& KuduStore::mutable_table(std::string_view name) {
  const auto it = tables_.find(name);
  if (it == tables_.end()) throw StoreError(fmt::format("unknown table `{}`", name));
  return it->second;
}

Cell KuduStore::key(const Guid& guid) const {
  if (encoding_ == KeyEncoding::kHex) return Cell::string(guid.hex());
  return Cell::binary(std::string(reinterpret_cast<const char*>(guid.bytes.data()), 16));
}

Guid KuduStore::guid_of(const Cell& key_cell) const {
  Guid g;
  if (encoding_ == KeyEncoding::kHex) {
    if (key_cell.kind != Cell::Kind::kString || !is_lower_hex32(key_cell.bytes)) {
      throw StoreError(fmt::format("not a hex KEY cell: {}", key_cell.to_display()));
    }
    return *Guid::parse(key_cell.bytes);
  }
  if (key_cell.kind != Cell::Kind::kBinary || key_cell.bytes.size() != 16) {
    throw StoreError(fmt::format("not a BINARY(16) KEY cell: {}", key_cell.to_display()));
  }
  std::copy(key_cell.bytes.begin(), key_cell.bytes.end(), g.bytes.begin());
  return g;
}

void KuduStore::check_cell(const TableSchema& table, std::size_t column_index,
                           const Cell& cell) const {
  const ColumnDef& col = table.columns[column_index];
  const auto fail = [&](std::string_view why) {
    throw StoreError(fmt::format("`{}`.`{}` ({}): {} {}", table.name, col.name,
                                 type_name(col.type, encoding_), why, cell.to_display()));
  };
  if (cell.is_null()) {
    if (table.is_key(column_index)) fail("primary-key column cannot be NULL:");
    return;
  }
  switch (col.type) {
    case ColumnType::kKey:
      if (encoding_ == KeyEncoding::kHex) {
        if (cell.kind != Cell::Kind::kString) {
          fail(fmt::format("type mismatch, got {}", kind_name(cell.kind)));
        }
        if (!is_lower_hex32(cell.bytes)) fail("KEY must be 32 lowercase hex characters, got");
      } else {
        if (cell.kind == Cell::Kind::kString) {
          fail("no implicit STRING->BINARY cast in Impala; write CAST(unhex('..') AS BINARY), got");
        }
        if (cell.kind != Cell::Kind::kBinary) {
          fail(fmt::format("type mismatch, got {}", kind_name(cell.kind)));
        }
        if (cell.bytes.size() != 16) fail("BINARY KEY must be 16 bytes, got");
      }
      return;
    case ColumnType::kString:
      if (cell.kind != Cell::Kind::kString) {
        fail(fmt::format("type mismatch, got {}", kind_name(cell.kind)));
      }
      return;
    case ColumnType::kInt64:
      if (cell.kind != Cell::Kind::kInt64) {
        fail(fmt::format("type mismatch, got {}", kind_name(cell.kind)));
      }
      return;
    case ColumnType::kBool:
      if (cell.kind != Cell::Kind::kBool) {
        fail(fmt::format("type mismatch, got {}", kind_name(cell.kind)));
      }
      return;
  }
}

std::size_t KuduStore::upsert(std::string_view table_name, const std::vector<std::string>& columns,
                              const std::vector<std::vector<Cell>>& rows) {
  Table& table = mutable_table(table_name);
  const TableSchema& schema = table.schema();
  // Validate everything first, so that a rejected statement changes nothing.
  std::vector<std::size_t> index;
  std::vector<bool> listed(schema.columns.size(), false);
  for (const auto& c : columns) {
    const auto i = schema.find(c);
    if (!i) throw StoreError(fmt::format("unknown column `{}` in table `{}`", c, schema.name));
    if (listed[*i]) {
      throw StoreError(fmt::format("column `{}` listed twice for table `{}`", c, schema.name));
    }
    listed[*i] = true;
    index.push_back(*i);
  }
  for (std::size_t k = 0; k < schema.key_count; ++k) {
    if (!listed[k]) {
      throw StoreError(fmt::format("UPSERT into `{}` does not list primary-key column `{}`",
                                   schema.name, schema.columns[k].name));
    }
  }
  std::set<Key> seen;
  std::vector<Key> keys;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != columns.size()) {
      throw StoreError(fmt::format("UPSERT into `{}` row {}: {} values for {} columns", schema.name,
                                   r + 1, rows[r].size(), columns.size()));
    }
    Key key(schema.key_count);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      check_cell(schema, index[c], rows[r][c]);
      if (schema.is_key(index[c])) key[index[c]] = rows[r][c];
    }
    if (!seen.insert(key).second) {
      std::string shown;
      for (const auto& k : key) shown += (shown.empty() ? "" : ", ") + k.to_display();
      throw StoreError(fmt::format(
          "UPSERT into `{}` names primary key ({}) twice (Impala does not order rows within a "
          "statement)",
          schema.name, shown));
    }
    keys.push_back(std::move(key));
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    auto [it, inserted] = table.rows_.try_emplace(keys[r]);
    if (inserted) it->second.assign(schema.columns.size(), Cell::null());
    for (std::size_t c = 0; c < columns.size(); ++c) it->second[index[c]] = rows[r][c];
  }
  counters_[schema.name].rows_upserted += rows.size();
  return rows.size();
}

void KuduStore::upsert_row(std::string_view table,
                           const std::vector<std::pair<std::string, Cell>>& columns_and_cells) {
  std::vector<std::string> columns;
  std::vector<Cell> row;
  for (const auto& [c, v] : columns_and_cells) {
    columns.push_back(c);
    row.push_back(v);
  }
  upsert(table, columns, {row});
}

bool KuduStore::delete_key(std::string_view table_name, const Key& key) {
  Table& table = mutable_table(table_name);
  const TableSchema& schema = table.schema();
  if (key.size() != schema.key_count) {
    throw StoreError(fmt::format("delete from `{}`: key has {} cells, table has {} key columns",
                                 schema.name, key.size(), schema.key_count));
  }
  for (std::size_t k = 0; k < key.size(); ++k) check_cell(schema, k, key[k]);
  if (table.rows_.erase(key) == 0) {
    ++counters_[schema.name].row_errors;
    return false;
  }
  ++counters_[schema.name].rows_deleted;
  return true;
}

void KuduStore::count_row_errors(std::string_view table, std::size_t n) {
  mutable_table(table);
  counters_.find(table)->second.row_errors += n;
}

namespace {

// A condition with its column resolved and its values in sets, checked once.
struct CompiledCondition {
  std::size_t column = 0;
  Condition::Op op = Condition::Op::kEq;
  std::set<Cell> values;                // kEq, kIn, kNotIn
  std::map<Cell, std::size_t> when;     // kCase: value -> its THEN (the first WHEN of a value)
  std::vector<CompiledCondition> then;  // kCase

  bool matches(const Row& row) const {
    const Cell& cell = row[column];
    // SQL three-valued logic: a NULL cell matches neither IN nor NOT IN, and makes a CASE NULL.
    if (cell.is_null()) return false;
    if (op == Condition::Op::kCase) {
      const auto it = when.find(cell);
      return it != when.end() && then[it->second].matches(row);
    }
    const bool in = values.count(cell) > 0;
    return op == Condition::Op::kNotIn ? !in : in;
  }
};

CompiledCondition compile_condition(const KuduStore& store, const TableSchema& schema,
                                    const Condition& cond) {
  const auto i = schema.find(cond.column);
  if (!i) {
    throw StoreError(fmt::format("unknown column `{}` in table `{}`", cond.column, schema.name));
  }
  if (cond.values.empty() || (cond.op == Condition::Op::kEq && cond.values.size() != 1) ||
      (cond.op == Condition::Op::kCase) != !cond.then.empty() ||
      (cond.op == Condition::Op::kCase && cond.then.size() != cond.values.size())) {
    throw StoreError(
        fmt::format("DELETE from `{}`: malformed condition on `{}`", schema.name, cond.column));
  }
  CompiledCondition c;
  c.column = *i;
  c.op = cond.op;
  for (std::size_t k = 0; k < cond.values.size(); ++k) {
    const Cell& v = cond.values[k];
    if (v.is_null()) {
      // `col = NULL` / `IN (NULL)` / `WHEN NULL` never matches in SQL; a compiler writing it has
      // a bug.
      throw StoreError(fmt::format("DELETE from `{}`: NULL literal in condition on `{}`",
                                   schema.name, cond.column));
    }
    store.check_cell(schema, *i, v);
    if (cond.op != Condition::Op::kCase) {
      c.values.insert(v);
      continue;
    }
    if (cond.then[k].op == Condition::Op::kCase || cond.then[k].op == Condition::Op::kNotIn) {
      throw StoreError(fmt::format("DELETE from `{}`: a THEN of the CASE on `{}` is not = or IN",
                                   schema.name, cond.column));
    }
    c.when.emplace(v, c.then.size());
    c.then.push_back(compile_condition(store, schema, cond.then[k]));
  }
  return c;
}

}  // namespace

std::size_t KuduStore::delete_where(std::string_view table_name,
                                    const std::vector<Condition>& conditions) {
  Table& table = mutable_table(table_name);
  const TableSchema& schema = table.schema();
  if (conditions.empty()) {
    throw StoreError(fmt::format("DELETE from `{}` without conditions", schema.name));
  }
  std::vector<CompiledCondition> compiled;
  for (const auto& cond : conditions) compiled.push_back(compile_condition(*this, schema, cond));
  std::size_t deleted = 0;
  for (auto it = table.rows_.begin(); it != table.rows_.end();) {
    const bool match =
        std::all_of(compiled.begin(), compiled.end(),
                    [&](const CompiledCondition& c) { return c.matches(it->second); });
    if (match) {
      it = table.rows_.erase(it);
      ++deleted;
    } else {
      ++it;
    }
  }
  counters_[schema.name].rows_deleted += deleted;
  return deleted;
}

// ---------------------------------------------------------------------------------------------
// Dump

namespace {

std::string dump_cell(const KuduStore& store, const TableSchema& schema, std::size_t i,
                      const Cell& cell) {
  if (cell.is_null()) return "null";
  if (schema.columns[i].type == ColumnType::kKey) {
    // Keys are always shown in hex, whatever the encoding.
    return "\"" + store.guid_of(cell).hex() + "\"";
  }
  switch (cell.kind) {
    case Cell::Kind::kString:
      if (is_json_column(schema.columns[i].name)) {
        try {
          return json_minify(cell.bytes);
        } catch (const JsonError&) {
          // Keep the dump valid JSON; the comparison will show the broken cell as a string.
          return json_quote("!invalid JSON: " + cell.bytes);
        }
      }
      return json_quote(cell.bytes);
    case Cell::Kind::kBinary:
      return json_quote(
          to_hex(reinterpret_cast<const std::uint8_t*>(cell.bytes.data()), cell.bytes.size()));
    case Cell::Kind::kInt64:
      return fmt::format("{}", cell.int64);
    case Cell::Kind::kBool:
      return cell.boolean ? "true" : "false";
    case Cell::Kind::kNull:
      return "null";
  }
  return "null";
}

}  // namespace

std::string KuduStore::dump() const {
  std::string out = "{\n\"format\":\"atlas2kudu-projection-dump/1\",\n";
  for (const auto& schema : projection_schemas()) {
    const Table& t = table(schema.name);
    if (schema.name == "entity_audit") {
      out += fmt::format("\"entity_audit\":{{\"row_count\":{},\"events\":[\n", t.size());
      std::size_t n = 0;
      for (const auto& [key, row] : t.rows()) {
        out += fmt::format("[{},{},{}]{}\n", dump_cell(*this, schema, 0, row[0]),
                           dump_cell(*this, schema, 1, row[1]), dump_cell(*this, schema, 3, row[3]),
                           ++n < t.size() ? "," : "");
      }
      out += "]}\n";
      continue;
    }
    out += "\"" + schema.name + "\":[\n";
    std::size_t n = 0;
    for (const auto& [key, row] : t.rows()) {
      out += "{";
      for (std::size_t i = 0; i < schema.columns.size(); ++i) {
        if (i) out += ",";
        out += json_quote(schema.columns[i].name) + ":" + dump_cell(*this, schema, i, row[i]);
      }
      out += ++n < t.size() ? "},\n" : "}\n";
    }
    out += "],\n";
  }
  out += "}\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
// Comparison

namespace {

// A table as comparable text: primary key (shown) -> column -> canonical value text.
struct NormalRow {
  std::string key;
  std::vector<std::pair<std::string, std::string>> columns;
};
using NormalTable = std::vector<NormalRow>;
using NormalDump = std::map<std::string, NormalTable>;

std::string normal_value(std::string_view column, const simdjson::dom::element& v) {
  if (is_json_column(column)) {
    if (v.is_null()) return "{}";  // NULL props/attrs equals {}
    if (v.is_string()) return "!" + json_quote(std::string_view(v));
  }
  return json_canonical(simdjson::to_string(v));
}

NormalDump normalise_dump(std::string_view text, std::string_view what) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS || !root.is_object()) {
    throw JsonError(fmt::format("{} dump is not a JSON object", what));
  }
  std::string_view format;
  if (root["format"].get(format) != simdjson::SUCCESS || format != "atlas2kudu-projection-dump/1") {
    throw JsonError(fmt::format("{} dump lacks \"format\":\"atlas2kudu-projection-dump/1\"", what));
  }
  NormalDump out;
  for (const auto& schema : projection_schemas()) {
    simdjson::dom::element t;
    if (root[schema.name].get(t) != simdjson::SUCCESS) {
      throw JsonError(fmt::format("{} dump lacks table {}", what, schema.name));
    }
    NormalTable& rows = out[schema.name];
    if (schema.name == "entity_audit") {
      int64_t count = 0;
      simdjson::dom::array events;
      if (t["row_count"].get(count) != simdjson::SUCCESS ||
          t["events"].get(events) != simdjson::SUCCESS) {
        throw JsonError(fmt::format("{} dump: entity_audit needs row_count and events", what));
      }
      rows.push_back({"row_count", {{"row_count", fmt::format("{}", count)}}});
      std::vector<std::string> tuples;
      for (auto e : events) tuples.push_back(json_canonical(simdjson::to_string(e)));
      std::sort(tuples.begin(), tuples.end());
      for (auto& tuple : tuples) rows.push_back({tuple, {}});
      continue;
    }
    simdjson::dom::array array;
    if (t.get(array) != simdjson::SUCCESS) {
      throw JsonError(fmt::format("{} dump: {} is not an array", what, schema.name));
    }
    for (auto r : array) {
      NormalRow row;
      for (std::size_t i = 0; i < schema.columns.size(); ++i) {
        simdjson::dom::element v;
        const auto& name = schema.columns[i].name;
        if (r[name].get(v) != simdjson::SUCCESS) {
          throw JsonError(
              fmt::format("{} dump: a row of {} lacks column {}", what, schema.name, name));
        }
        std::string value = normal_value(name, v);
        if (i < schema.key_count) row.key += (row.key.empty() ? "" : ", ") + value;
        row.columns.emplace_back(name, std::move(value));
      }
      rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end(),
              [](const NormalRow& a, const NormalRow& b) { return a.key < b.key; });
  }
  return out;
}

std::optional<std::string> compare_normal(const NormalDump& expected, const NormalDump& actual) {
  for (const auto& schema : projection_schemas()) {
    const NormalTable& e = expected.at(schema.name);
    const NormalTable& a = actual.at(schema.name);
    std::size_t i = 0, j = 0;
    while (i < e.size() || j < a.size()) {
      if (j == a.size() || (i < e.size() && e[i].key < a[j].key)) {
        return fmt::format("{}: row ({}) expected but missing", schema.name, e[i].key);
      }
      if (i == e.size() || a[j].key < e[i].key) {
        return fmt::format("{}: unexpected row ({})", schema.name, a[j].key);
      }
      for (std::size_t c = 0; c < e[i].columns.size(); ++c) {
        if (e[i].columns[c].second != a[j].columns[c].second) {
          return fmt::format("{}: row ({}) column {}: expected {}, got {}", schema.name, e[i].key,
                             e[i].columns[c].first, e[i].columns[c].second, a[j].columns[c].second);
        }
      }
      ++i;
      ++j;
    }
  }
  return std::nullopt;
}

std::string show_key(const KuduStore& store, const TableSchema& schema, const Key& key) {
  std::string out;
  for (std::size_t k = 0; k < key.size(); ++k) {
    out += (k ? ", " : "") + schema.columns[k].name + "=" +
           (schema.columns[k].type == ColumnType::kKey ? store.guid_of(key[k]).hex()
                                                       : key[k].to_display());
  }
  return out;
}

// Equality of two cells of column `column`, with NULL == {} for JSON columns and JSON compared
// as parsed members (value texts exact, so numbers must be kept as written).
bool same_cell(std::string_view column, const Cell& a, const Cell& b) {
  if (a == b) return true;
  if (!is_json_column(column)) return false;
  const auto members =
      [](const Cell& c) -> std::optional<std::vector<std::pair<std::string, std::string>>> {
    if (c.is_null()) return std::vector<std::pair<std::string, std::string>>{};
    try {
      return json_object_members(c.bytes);
    } catch (const JsonError&) {
      return std::nullopt;
    }
  };
  const auto ma = members(a);
  const auto mb = members(b);
  return ma && mb && *ma == *mb;
}

}  // namespace

std::optional<std::string> compare_stores(const KuduStore& expected, const KuduStore& actual,
                                          const CompareOptions& options) {
  if (expected.key_encoding() != actual.key_encoding()) {
    return std::string("stores use different key encodings");
  }
  for (const auto& schema : projection_schemas()) {
    const auto& e = expected.table(schema.name).rows();
    const auto& a = actual.table(schema.name).rows();
    const bool audit = schema.name == "entity_audit";
    auto ei = e.begin();
    auto ai = a.begin();
    while (ei != e.end() || ai != a.end()) {
      // For audit rows without seq comparison, match on (guid, event_ts, op) multisets below.
      if (audit && !options.audit_seq) break;
      if (ai == a.end() || (ei != e.end() && ei->first < ai->first)) {
        return fmt::format("{}: row ({}) expected but missing", schema.name,
                           show_key(expected, schema, ei->first));
      }
      if (ei == e.end() || ai->first < ei->first) {
        return fmt::format("{}: unexpected row ({})", schema.name,
                           show_key(actual, schema, ai->first));
      }
      // Audit rows: only the key and op are specified; the rest is free-form.
      const std::size_t columns = audit ? 4 : schema.columns.size();
      for (std::size_t c = schema.key_count; c < columns; ++c) {
        if (!same_cell(schema.columns[c].name, ei->second[c], ai->second[c])) {
          return fmt::format("{}: row ({}) column {}: expected {}, got {}", schema.name,
                             show_key(expected, schema, ei->first), schema.columns[c].name,
                             ei->second[c].to_display(), ai->second[c].to_display());
        }
      }
      ++ei;
      ++ai;
    }
    if (audit && !options.audit_seq) {
      const auto tuples = [](const KuduStore& s, const std::map<Key, Row>& rows) {
        std::vector<std::string> out;
        for (const auto& [k, r] : rows) {
          out.push_back(
              fmt::format("{} {} {}", s.guid_of(r[0]).hex(), r[1].int64, r[3].to_display()));
        }
        std::sort(out.begin(), out.end());
        return out;
      };
      const auto te = tuples(expected, e);
      const auto ta = tuples(actual, a);
      if (te != ta) {
        for (std::size_t i = 0; i < std::max(te.size(), ta.size()); ++i) {
          if (i >= ta.size() || (i < te.size() && te[i] != ta[i])) {
            return fmt::format("entity_audit: row ({}) expected, got {}", te[i],
                               i < ta.size() ? "(" + ta[i] + ")" : "nothing");
          }
          if (i >= te.size()) return fmt::format("entity_audit: unexpected row ({})", ta[i]);
        }
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> compare_with_dump(std::string_view expected_dump,
                                             const KuduStore& actual) {
  const NormalDump e = normalise_dump(expected_dump, "expected");
  const NormalDump a = normalise_dump(actual.dump(), "actual");
  return compare_normal(e, a);
}

}  // namespace atlas2kudu::testkit
