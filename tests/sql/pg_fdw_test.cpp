// The read side on a real PostgreSQL: the shipped foreign-table files load through postgres_fdw,
// and the traversal functions of sql/atlas_traversal.sql answer like a traversal computed here.
//
//   kudu_hex, kudu_binary        the stand-in for Impala/Kudu: schema atlas with the six tables of
//                                `atlas2kudu ddl` (translated to PostgreSQL types), filled with
//                                the tables the test kit's reference projector computes
//   reader_hex, reader_binary    what a user has: sql/kudu_projections_fdw[_binary].sql and
//                                sql/atlas_traversal.sql loaded with the documented psql commands,
//                                reading the stand-in through postgres_fdw over 127.0.0.1
//
// Graphs: a hand-built one (cycles, a self-loop, fan-out, a diamond, parallel edges with different
// labels, soft and hard tombstones, an edge written after its end was deleted, tags) and seeded
// streams of the kit's generator. Every traversal is compared with expect_traversal(), a plain
// breadth-first search over the projector's edge tables.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/event.h"
#include "compile/ddl.h"
#include "kudu_store.h"
#include "pg_cluster.h"
#include "reference_projector.h"
#include "stream_generator.h"
#include "util/digest.h"

TEST_SUITE_BEGIN("pg_fdw");

using namespace atlas2kudu;
using namespace atlas2kudu::testkit;
using namespace atlas2kudu::testpg;

namespace {

const std::string kRepo = ATLAS2KUDU_SOURCE_DIR;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string hex_of(std::string_view bytes) {
  return to_hex(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

std::string_view name_of(KeyEncoding e) {
  return e == KeyEncoding::kHex ? "hex" : "binary";
}

std::string fdw_file(KeyEncoding e) {
  return kRepo + (e == KeyEncoding::kHex ? "/sql/kudu_projections_fdw.sql"
                                         : "/sql/kudu_projections_fdw_binary.sql");
}

// ---- the stand-in: `atlas2kudu ddl` with PostgreSQL types, partitioning dropped

std::string standin_ddl(KeyEncoding encoding) {
  DdlOptions o;
  o.key_encoding = encoding;
  std::istringstream impala(projection_ddl(o));
  std::string out, line;
  bool in_table = false;
  const auto unquote = [](std::string s) {
    std::replace(s.begin(), s.end(), '`', '"');
    return s;
  };
  while (std::getline(impala, line)) {
    if (line.rfind("CREATE DATABASE IF NOT EXISTS ", 0) == 0) {
      out += "CREATE SCHEMA " + unquote(line.substr(30)) + "\n";
    } else if (line.rfind("CREATE TABLE IF NOT EXISTS ", 0) == 0) {
      out += "\n" + unquote(line) + "\n";
      in_table = true;
    } else if (in_table && line == ")") {
      out += ");\n";
      in_table = false;
    } else if (in_table) {
      for (const auto& [impala_type, pg_type] :
           {std::pair{" STRING ", " text "}, std::pair{" BINARY ", " bytea "},
            std::pair{" BIGINT ", " bigint "}, std::pair{" BOOLEAN ", " boolean "}}) {
        if (const auto p = line.find(impala_type); p != std::string::npos) {
          line.replace(p, std::string_view(impala_type).size(), pg_type);
        }
      }
      out += unquote(line) + "\n";
    }
  }
  return out;
}

// A PostgreSQL expression for a text value, whatever bytes it holds.
std::string pg_text(std::string_view s) {
  return "convert_from(decode('" + hex_of(s) + "', 'hex'), 'UTF8')";
}

std::string pg_cell(const Cell& c) {
  switch (c.kind) {
    case Cell::Kind::kNull:
      return "NULL";
    case Cell::Kind::kString:
      return pg_text(c.bytes);
    case Cell::Kind::kBinary:
      return "decode('" + hex_of(c.bytes) + "', 'hex')";
    case Cell::Kind::kInt64:
      return std::to_string(c.int64);
    case Cell::Kind::kBool:
      return c.boolean ? "true" : "false";
  }
  return "NULL";
}

// Replaces the stand-in's rows with the store's, in one transaction.
std::string fill_sql(const KuduStore& store) {
  std::string sql = "BEGIN;\nTRUNCATE ";
  for (std::size_t i = 0; i < projection_schemas().size(); ++i) {
    sql += (i ? ", atlas." : "atlas.") + projection_schemas()[i].name;
  }
  sql += ";\n";
  for (const TableSchema& schema : projection_schemas()) {
    const Table& table = store.table(schema.name);
    if (table.size() == 0) continue;
    sql += "INSERT INTO atlas." + schema.name + " (";
    for (std::size_t i = 0; i < schema.columns.size(); ++i) {
      sql += (i ? ", " : "") + schema.columns[i].name;
    }
    sql += ") VALUES\n";
    bool first = true;
    for (const auto& [key, row] : table.rows()) {
      sql += first ? "  (" : ",\n  (";
      first = false;
      for (std::size_t i = 0; i < row.size(); ++i) sql += (i ? ", " : "") + pg_cell(row[i]);
      sql += ")";
    }
    sql += ";\n";
  }
  return sql + "COMMIT;\n";
}

// ---- the suite's cluster

struct Shared {
  std::unique_ptr<PgCluster> pg;
  std::string error;
};

// Both stand-ins and both readers, the readers loaded exactly as the file headers say.
void set_up(const PgCluster& pg) {
  pg.psql_ok("postgres",
             "CREATE DATABASE kudu_hex; CREATE DATABASE kudu_binary;"
             "CREATE DATABASE reader_hex; CREATE DATABASE reader_binary;");
  for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
    const std::string suffix(name_of(e));
    pg.psql_ok("kudu_" + suffix, standin_ddl(e));
    PsqlRun tables;
    tables.database = "reader_" + suffix;
    tables.variables = {{"fdw", "postgres_fdw"},
                        {"server_options", "host '127.0.0.1', port '" + std::to_string(pg.port()) +
                                               "', dbname 'kudu_" + suffix + "'"},
                        {"user_options", "user '" + pg.superuser() + "'"}};
    tables.files = {fdw_file(e)};
    RunResult r = pg.psql(tables);
    if (r.status != 0) throw std::runtime_error("loading " + fdw_file(e) + ":\n" + r.err);
    PsqlRun traversal;
    traversal.database = "reader_" + suffix;
    traversal.files = {kRepo + "/sql/atlas_traversal.sql"};
    r = pg.psql(traversal);
    if (r.status != 0) throw std::runtime_error("loading sql/atlas_traversal.sql:\n" + r.err);
  }
}

PgCluster& cluster() {
  static Shared shared = [] {
    Shared s;
    try {
      s.pg = std::make_unique<PgCluster>();
      set_up(*s.pg);
    } catch (const std::exception& e) {
      s.error = e.what();
    }
    return s;
  }();
  REQUIRE_MESSAGE(shared.pg != nullptr, "no PostgreSQL for the FDW tests: " << shared.error);
  REQUIRE_MESSAGE(shared.error.empty(), shared.error);
  return *shared.pg;
}

// ---- graphs

std::string key_hex(const Cell& c) {
  return c.kind == Cell::Kind::kBinary ? hex_of(c.bytes) : c.bytes;
}

struct Edge {
  std::string other;  // hex key of the far end
  std::string label;
  std::optional<std::string> other_type;
};

struct Graph {
  std::map<std::string, std::vector<Edge>> out, in;  // by hex key of the near end
  std::set<std::string> keys;                        // every key of an edge or an entity
  std::set<std::string> active;                      // keys of ACTIVE entity_flat rows
  std::set<std::string> labels, types;
};

Graph graph_of(const KuduStore& store) {
  Graph g;
  const auto text = [](const Cell& c) {
    return c.is_null() ? std::nullopt : std::optional<std::string>(c.bytes);
  };
  for (const auto& [key, row] : store.table("edge_out").rows()) {
    g.out[key_hex(row[0])].push_back({key_hex(row[2]), row[1].bytes, text(row[3])});
    g.keys.insert({key_hex(row[0]), key_hex(row[2])});
    g.labels.insert(row[1].bytes);
    if (!row[3].is_null()) g.types.insert(row[3].bytes);
  }
  for (const auto& [key, row] : store.table("edge_in").rows()) {
    g.in[key_hex(row[0])].push_back({key_hex(row[2]), row[1].bytes, text(row[3])});
  }
  for (const auto& [key, row] : store.table("entity_flat").rows()) {
    g.keys.insert(key_hex(row[0]));
    if (row[4] == Cell::string("ACTIVE")) g.active.insert(key_hex(row[0]));
  }
  return g;
}

struct Traversal {
  std::vector<std::string> start;  // hex keys
  std::string direction = "out";
  int depth = 3;
  std::optional<std::vector<std::string>> labels, types;
  bool active_only = false;
};

// The rows traverse() must give, as "id guid depth parent xLABELHEX" lines (parent and label "-"
// at depth 0), sorted: breadth first, each key once at its first depth, reached by the smallest
// (parent, label) in byte order among the edges reaching it in that hop; with active_only, keys
// without an ACTIVE entity_flat row are dropped (and not walked from).
std::vector<std::string> expect_traversal(const Graph& g, const Traversal& t, int id) {
  const auto allowed = [](const std::optional<std::vector<std::string>>& set,
                          const std::optional<std::string>& v) {
    return !set || (v && std::find(set->begin(), set->end(), *v) != set->end());
  };
  std::vector<std::string> lines;
  const std::string tag = std::to_string(id) + " ";
  std::set<std::string> visited(t.start.begin(), t.start.end());
  std::vector<std::string> frontier(visited.begin(), visited.end());
  for (const auto& k : frontier) lines.push_back(tag + k + " 0 - -");
  for (int d = 1; d <= t.depth && !frontier.empty(); ++d) {
    std::map<std::string, std::pair<std::string, std::string>> best;
    const auto visit = [&](const std::map<std::string, std::vector<Edge>>& side,
                           const std::string& from) {
      const auto it = side.find(from);
      if (it == side.end()) return;
      for (const Edge& e : it->second) {
        if (!allowed(t.labels, e.label) || !allowed(t.types, e.other_type)) continue;
        if (visited.count(e.other)) continue;
        const std::pair<std::string, std::string> via{from, e.label};
        const auto [slot, inserted] = best.emplace(e.other, via);
        if (!inserted && via < slot->second) slot->second = via;
      }
    };
    for (const auto& f : frontier) {
      if (t.direction != "in") visit(g.out, f);
      if (t.direction != "out") visit(g.in, f);
    }
    frontier.clear();
    for (const auto& [k, via] : best) {
      visited.insert(k);
      if (t.active_only && !g.active.count(k)) continue;
      lines.push_back(tag + k + " " + std::to_string(d) + " " + via.first + " x" +
                      hex_of(via.second));
      frontier.push_back(k);
    }
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// SQL for the reader database of one encoding.
struct Reader {
  KeyEncoding encoding;
  std::string db() const { return "reader_" + std::string(name_of(encoding)); }
  std::string standin() const { return "kudu_" + std::string(name_of(encoding)); }
  // A key column as hex text.
  std::string hex(const std::string& column) const {
    return encoding == KeyEncoding::kHex ? column : "encode(" + column + ", 'hex')";
  }
  std::string keys(const std::vector<std::string>& hex_keys) const {
    std::string out = "ARRAY[";
    for (std::size_t i = 0; i < hex_keys.size(); ++i) {
      out += i ? ", " : "";
      out += encoding == KeyEncoding::kHex ? "'" + hex_keys[i] + "'"
                                           : "decode('" + hex_keys[i] + "', 'hex')";
    }
    return out + (encoding == KeyEncoding::kHex ? "]::text[]" : "]::bytea[]");
  }
  static std::string texts(const std::optional<std::vector<std::string>>& v) {
    if (!v) return "NULL";
    std::string out = "ARRAY[";
    for (std::size_t i = 0; i < v->size(); ++i) out += (i ? ", " : "") + pg_text((*v)[i]);
    return out + "]::text[]";
  }
  std::string call(const Traversal& t, const std::string& extra = "") const {
    return "atlas_kudu.traverse(" + keys(t.start) + ", '" + t.direction + "', " +
           std::to_string(t.depth) + ", " + texts(t.labels) + ", " + texts(t.types) + extra +
           (t.active_only ? ", active_only => true)" : ")");
  }
  std::string query(const Traversal& t, int id) const {
    return "SELECT '" + std::to_string(id) + " ' || " + hex("t.guid") +
           " || ' ' || t.depth || ' ' ||" + " coalesce(" + hex("t.parent") + ", '-') || ' ' ||" +
           " coalesce('x' || encode(convert_to(t.elabel, 'UTF8'), 'hex'), '-') FROM " + call(t) +
           " AS t;\n";
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string describe(const Traversal& t) {
  std::string s = "traverse(" + std::to_string(t.start.size()) + " key(s) from " +
                  (t.start.empty() ? std::string("-") : t.start.front()) + ", " + t.direction +
                  ", depth " + std::to_string(t.depth);
  if (t.labels) s += ", " + std::to_string(t.labels->size()) + " label(s)";
  if (t.types) s += ", " + std::to_string(t.types->size()) + " type(s)";
  if (t.active_only) s += ", active only";
  return s + ")";
}

// Runs every traversal in one psql session and compares each with expect_traversal().
void check_traversals(const PgCluster& pg, const Reader& reader, const Graph& g,
                      const std::vector<Traversal>& traversals) {
  std::string script;
  std::vector<std::string> expected;
  for (std::size_t i = 0; i < traversals.size(); ++i) {
    script += reader.query(traversals[i], static_cast<int>(i));
    const auto e = expect_traversal(g, traversals[i], static_cast<int>(i));
    expected.insert(expected.end(), e.begin(), e.end());
  }
  std::sort(expected.begin(), expected.end());
  const std::vector<std::string> got = lines_of(pg.psql_ok(reader.db(), script));
  if (got == expected) return;
  // Name the first traversal that differs.
  for (std::size_t i = 0; i < traversals.size(); ++i) {
    const std::string tag = std::to_string(i) + " ";
    std::vector<std::string> want, have;
    for (const auto& l : expected) {
      if (l.rfind(tag, 0) == 0) want.push_back(l);
    }
    for (const auto& l : got) {
      if (l.rfind(tag, 0) == 0) have.push_back(l);
    }
    if (want != have) {
      std::string w, h;
      for (const auto& l : want) w += "  " + l + "\n";
      for (const auto& l : have) h += "  " + l + "\n";
      FAIL_CHECK(name_of(reader.encoding) << " keys, " << describe(traversals[i]) << "\nexpected:\n"
                                          << w << "got:\n"
                                          << h);
      return;
    }
  }
  FAIL_CHECK("traversal output has lines of no traversal");
}

// Lookups: the SQL digest of every entity's (type, qualifiedName), entity_by_qn() for each, and
// entities_by_tag() for every tag, against the store.
void check_lookups(const PgCluster& pg, const Reader& reader, const KuduStore& store) {
  std::vector<std::string> expected;
  std::map<std::string, std::string> by_qn;  // digest hex -> guid hex
  for (const auto& [key, row] : store.table("entity_by_qn").rows()) {
    by_qn[key_hex(row[0])] = key_hex(row[1]);
  }
  const auto& flat = store.table("entity_flat");
  for (const auto& [key, row] : flat.rows()) {
    if (row[1].is_null() || row[2].is_null()) continue;
    const std::string guid = key_hex(row[0]);
    const std::string digest = to_hex(qn_digest(row[1].bytes, row[2].bytes));
    expected.push_back("D " + guid + " " + digest);
    // The by_qn row's guid, when its entity_flat row still carries this type and name.
    std::string found = "-";
    if (const auto it = by_qn.find(digest); it != by_qn.end()) {
      for (const auto& [k2, r2] : flat.rows()) {
        if (key_hex(r2[0]) == it->second && r2[1] == row[1] && r2[2] == row[2]) found = it->second;
      }
    }
    expected.push_back("Q " + guid + " " + found);
  }
  for (const auto& [key, row] : store.table("entity_classifications").rows()) {
    const std::string line =
        hex_of(row[0].bytes) + " " + key_hex(row[1]) + " " + (row[2].boolean ? "true" : "false");
    expected.push_back("T " + line);
    if (!row[2].boolean) expected.push_back("U " + line);
  }
  std::sort(expected.begin(), expected.end());

  // One row per line, as "D guid digest", "Q guid found-guid", "T taghex guid propagated" (all
  // tags) and "U ..." (direct tags only).
  const std::string entities =
      " FROM atlas_kudu.entity_flat f"
      " WHERE f.type_name IS NOT NULL AND f.qualified_name IS NOT NULL";
  const std::string tags =
      " FROM (SELECT DISTINCT tag_name FROM atlas_kudu.entity_classifications) t";
  const std::string tag_row = "encode(convert_to(t.tag_name, 'UTF8'), 'hex') || ' ' || " +
                              reader.hex("c.guid") + " || ' ' || c.propagated";
  std::string script;
  script += "SELECT 'D ' || " + reader.hex("f.guid") +
            " || ' ' || atlas_kudu.qn_digest_hex(f.type_name, f.qualified_name)" + entities + ";\n";
  script += "SELECT 'Q ' || " + reader.hex("f.guid") + " || ' ' || coalesce((SELECT string_agg(" +
            reader.hex("r.guid") +
            ", ',') FROM atlas_kudu.entity_by_qn(f.type_name, f.qualified_name) r), '-')" +
            entities + ";\n";
  script +=
      "SELECT 'T ' || " + tag_row + tags + ", LATERAL atlas_kudu.entities_by_tag(t.tag_name) c;\n";
  script += "SELECT 'U ' || " + tag_row + tags +
            ", LATERAL atlas_kudu.entities_by_tag(t.tag_name, include_propagated => false) c;\n";
  const std::vector<std::string> got = lines_of(pg.psql_ok(reader.db(), script));
  CHECK_MESSAGE(got.size() == expected.size(), name_of(reader.encoding)
                                                   << " keys: " << got.size()
                                                   << " lookup rows, expected " << expected.size());
  for (std::size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
    if (got[i] != expected[i]) {
      FAIL_CHECK(name_of(reader.encoding) << " keys, first lookup difference:\nexpected: "
                                          << expected[i] << "\ngot:      " << got[i]);
      break;
    }
  }
}

// The traversals asked of a graph: from each of (up to) `starts` keys every direction at depth 1
// and at a depth that reaches everything, plus one filtered walk; then a few multi-key starts.
std::vector<Traversal> traversals_for(const Graph& g, std::size_t starts) {
  std::vector<Traversal> out;
  const std::vector<std::string> keys(g.keys.begin(), g.keys.end());
  const std::vector<std::string> labels(g.labels.begin(), g.labels.end());
  const std::vector<std::string> types(g.types.begin(), g.types.end());
  const std::size_t step = std::max<std::size_t>(1, keys.size() / std::max<std::size_t>(1, starts));
  std::size_t n = 0;
  for (std::size_t i = 0; i < keys.size() && n < starts; i += step, ++n) {
    for (const char* dir : {"out", "in", "both"}) {
      out.push_back({{keys[i]}, dir, 1, std::nullopt, std::nullopt});
      out.push_back({{keys[i]}, dir, 16, std::nullopt, std::nullopt});
    }
    Traversal filtered{{keys[i]},
                       n % 3 == 0   ? "out"
                       : n % 3 == 1 ? "in"
                                    : "both",
                       16,
                       std::nullopt,
                       std::nullopt};
    if (!labels.empty() && n % 2 == 0) {
      filtered.labels = std::vector<std::string>{labels[n % labels.size()]};
      if (labels.size() > 1) filtered.labels->push_back(labels[(n + 1) % labels.size()]);
    }
    if (!types.empty() && n % 4 != 3) {
      filtered.types = std::vector<std::string>{types[n % types.size()]};
      if (n % 2 == 1 && types.size() > 1) filtered.types->push_back(types[(n + 2) % types.size()]);
    }
    out.push_back(filtered);
    out.push_back({{keys[i]}, "both", 16, std::nullopt, std::nullopt, true});
  }
  if (keys.size() >= 3) {
    out.push_back(
        {{keys[0], keys[keys.size() / 2], keys.back()}, "both", 2, std::nullopt, std::nullopt});
    out.push_back({{keys[1], keys[1], keys[2]}, "out", 16, std::nullopt, std::nullopt});
  }
  out.push_back({{std::string(32, 'f')}, "both", 3, std::nullopt, std::nullopt});  // no such key
  out.push_back({{}, "out", 3, std::nullopt, std::nullopt});                       // no keys
  return out;
}

// ---- the hand-built graph

Guid node(int n) {
  return generator_guid(static_cast<std::size_t>(500 + n));
}

Event entity_event(Operation op, int n, const std::string& type, std::int64_t ms) {
  Event e;
  e.op = op;
  e.guid = node(n);
  e.type_name = type;
  if (op != Operation::kEntityDelete) {
    e.qualified_name = type + ".n" + std::to_string(n) + "@cl";
    e.name = "n" + std::to_string(n);
  }
  e.event_time_us = ms * 1000;
  e.audit_seq = ms * 7919 + n;
  return e;
}

Event edge_event(int src, const std::string& src_type, const std::string& label, int dst,
                 const std::string& dst_type, std::int64_t ms) {
  Event e;
  e.op = Operation::kRelationshipCreate;
  e.type_name = "rel";
  e.relationship.type_name = "rel";
  e.relationship.label = label;
  e.relationship.end1 = {node(src), src_type};
  e.relationship.end2 = {node(dst), dst_type};
  e.event_time_us = ms * 1000;
  return e;
}

// Tables T1..T9 and processes P1..P3 in a lineage with a cycle (T1 -> P1 -> T2 -> P2 -> T1), a
// self-loop (T3), a diamond with parallel edges (T4 -> T5, T4 -> T6 -> T7, T5 -> T7; T4 -> T5
// twice, with two labels), a hub with 40 outputs (P3), tags (PII on T1, propagated to T2), T8
// deleted with its edges, and T9 deleted before an edge to it was written (the edge stays).
std::vector<Event> lineage_events() {
  std::vector<Event> ev;
  std::int64_t ms = 1000;
  const std::string t = "hive_table", p = "hive_process", c = "hive_column";
  for (int n = 1; n <= 9; ++n) ev.push_back(entity_event(Operation::kEntityCreate, n, t, ++ms));
  for (int n = 11; n <= 13; ++n) ev.push_back(entity_event(Operation::kEntityCreate, n, p, ++ms));
  for (int n = 20; n < 60; ++n) ev.push_back(entity_event(Operation::kEntityCreate, n, c, ++ms));
  const auto link = [&](int s, const std::string& st, const std::string& l, int d,
                        const std::string& dt) { ev.push_back(edge_event(s, st, l, d, dt, ++ms)); };
  link(1, t, "__Process.inputs", 11, p);
  link(11, p, "__Process.outputs", 2, t);
  link(2, t, "__Process.inputs", 12, p);
  link(12, p, "__Process.outputs", 1, t);
  link(3, t, "self", 3, t);
  link(4, t, "links", 5, t);
  link(4, t, "owns", 5, t);
  link(4, t, "links", 6, t);
  link(5, t, "links", 7, t);
  link(6, t, "links", 7, t);
  link(7, t, "__Process.inputs", 13, p);
  for (int n = 20; n < 60; ++n) link(13, p, "__Process.outputs", n, c);
  link(2, t, "owns", 8, t);
  link(8, t, "owns", 4, t);
  Event tag = entity_event(Operation::kClassificationAdd, 1, t, ++ms);
  tag.qualified_name.reset();
  tag.name.reset();
  tag.classifications = {{"PII", node(1), "{}"}};
  ev.push_back(tag);
  tag = entity_event(Operation::kClassificationAdd, 2, t, ++ms);
  tag.qualified_name.reset();
  tag.name.reset();
  tag.classifications = {{"PII", node(1), "{}"}, {"Tier1", node(2), "{}"}};
  ev.push_back(tag);
  ev.push_back(entity_event(Operation::kEntityDelete, 8, t, ++ms));  // cascades T2->T8, T8->T4
  ev.push_back(entity_event(Operation::kEntityDelete, 9, t, ++ms));
  link(7, t, "links", 9, t);  // written after T9's delete: an edge to a tombstone
  return ev;
}

// NUL cannot be stored in PostgreSQL text; the generator puts it into names and labels. It
// becomes U+2400 before projecting, so digests, by_qn keys and filters stay consistent.
void replace_nul(std::string& s) {
  for (std::size_t p = s.find('\0'); p != std::string::npos; p = s.find('\0', p)) {
    s.replace(p, 1, "\xe2\x90\x80");
  }
}
void replace_nul(std::optional<std::string>& s) {
  if (s) replace_nul(*s);
}
void replace_nul(Event& e) {
  replace_nul(e.type_name);
  replace_nul(e.qualified_name);
  replace_nul(e.name);
  for (auto& c : e.classifications) replace_nul(c.type_name);
  replace_nul(e.relationship.type_name);
  replace_nul(e.relationship.label);
  replace_nul(e.relationship.end1.type_name);
  replace_nul(e.relationship.end2.type_name);
}

// The generator's streams end with few edges (its deletes cascade), so a seeded tail adds more:
// 60 edges among the stream's guids with its labels and types, three deletes (their edges go),
// then 6 edges towards the deleted entities (edges to tombstones).
std::vector<Event> densify(std::vector<Event> events, std::uint64_t seed, std::size_t guids) {
  std::mt19937_64 rng(seed * 7919);
  std::vector<std::string> labels, types;
  std::int64_t time_us = 0;
  for (const Event& e : events) {
    if (is_relationship_op(e.op)) {
      labels.push_back(e.relationship.edge_label());
    } else {
      types.push_back(e.type_name);
    }
    time_us = std::max(time_us, e.event_time_us);
  }
  REQUIRE((!labels.empty() && !types.empty()));
  const auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  const auto edge = [&](std::size_t src, std::size_t dst) {
    Event e;
    e.op = Operation::kRelationshipCreate;
    e.type_name = "rel";
    e.relationship.type_name = "rel";
    e.relationship.label = pick(labels);
    e.relationship.end1 = {generator_guid(src), pick(types)};
    e.relationship.end2 = {generator_guid(dst), pick(types)};
    e.event_time_us = time_us += 1000;
    events.push_back(e);
  };
  for (int i = 0; i < 60; ++i) edge(rng() % guids, rng() % guids);
  std::vector<std::size_t> deleted;
  for (int i = 0; i < 3; ++i) {
    Event e;
    e.op = Operation::kEntityDelete;
    deleted.push_back(rng() % guids);
    e.guid = generator_guid(deleted.back());
    e.type_name = pick(types);
    e.event_time_us = time_us += 1000;
    e.audit_seq = content_audit_seq(e);
    events.push_back(e);
  }
  for (int i = 0; i < 6; ++i) edge(rng() % guids, deleted[static_cast<std::size_t>(i) % 3]);
  return events;
}

KuduStore project_events(const std::vector<Event>& events, KeyEncoding encoding,
                         Tombstone tombstone) {
  CompileOptions o;
  o.key_encoding = encoding;
  o.tombstone = tombstone;
  KuduStore store(encoding);
  ReferenceProjector(store, o).apply(events);
  return store;
}

std::string hex_key(int n) {
  return node(n).hex();
}

}  // namespace

TEST_CASE("pg_fdw: the shipped files load through postgres_fdw with the documented psql commands") {
  PgCluster& pg = cluster();  // set_up() loaded them; here, what they created
  for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
    const Reader r{e};
    CAPTURE(name_of(e));
    CHECK(pg.psql_ok(r.db(),
                     "SELECT srvname || ' ' || fdwname FROM pg_foreign_server s JOIN "
                     "pg_foreign_data_wrapper w ON w.oid = s.srvfdw;") ==
          "atlas_kudu postgres_fdw\n");
    // Remote names: schema_name and table_name, not one dotted table_name.
    CHECK(pg.psql_ok(r.db(),
                     "SELECT ftoptions::text FROM pg_foreign_table WHERE ftrelid = "
                     "'atlas_kudu.edge_out'::regclass;") ==
          "{schema_name=atlas,table_name=edge_out,updatable=false,truncatable=false}\n");
    // Read only: writes through the foreign tables are refused, before reaching the remote side.
    for (const std::string write :
         {"INSERT INTO atlas_kudu.edge_out (src) SELECT src FROM atlas_kudu.edge_out LIMIT 1;",
          "DELETE FROM atlas_kudu.entity_flat;", "UPDATE atlas_kudu.entity_flat SET name = 'x';",
          "TRUNCATE atlas_kudu.edge_in;"}) {
      CAPTURE(write);
      PsqlRun refused;
      refused.database = r.db();
      refused.script = write;
      const RunResult w = pg.psql(refused);
      CHECK(w.status != 0);
      CHECK_MESSAGE(w.err.find("\" does not allow ") != std::string::npos, w.err);
    }
    CHECK(pg.psql_ok(r.db(), "SELECT atlas_kudu.key_type();") ==
          (e == KeyEncoding::kHex ? "text\n" : "bytea\n"));
    // Every column of every foreign table is read from the stand-in (a whole-row reference makes
    // postgres_fdw fetch them all by name).
    for (const TableSchema& t : projection_schemas()) {
      CHECK_NOTHROW(
          pg.psql_ok(r.db(), "SELECT count(to_jsonb(t)) FROM atlas_kudu." + t.name + " t;"));
    }
    // Loading again changes nothing and does not fail.
    PsqlRun again;
    again.database = r.db();
    again.variables = {{"fdw", "postgres_fdw"}, {"server_options", "host '127.0.0.1'"}};
    again.files = {fdw_file(e), kRepo + "/sql/atlas_traversal.sql"};
    const RunResult rerun = pg.psql(again);
    CHECK_MESSAGE(rerun.status == 0, rerun.err);
  }
}

TEST_CASE("pg_fdw: the foreign tables' column types are the stand-in's (the Impala DDL's)") {
  PgCluster& pg = cluster();
  const std::string columns =
      "SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' "
      "|| a.attnotnull FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN "
      "pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '%s' AND a.attnum > 0 AND "
      "c.relkind IN ('r', 'f') ORDER BY c.relname, a.attnum;";
  const auto in = [&](const std::string& schema) {
    std::string q = columns;
    q.replace(q.find("%s"), 2, schema);
    return q;
  };
  for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
    const Reader r{e};
    CAPTURE(name_of(e));
    const std::string remote = pg.psql_ok(r.standin(), in("atlas"));
    CHECK(remote.size() > 100);
    CHECK(pg.psql_ok(r.db(), in("atlas_kudu")) == remote);
  }
}

TEST_CASE("pg_fdw: the SQL qn_digest is the contract's (UTF-8, 0x1F, first 16 bytes)") {
  PgCluster& pg = cluster();
  CHECK(pg.psql_ok("reader_hex",
                   "SELECT atlas_kudu.qn_digest_hex('hive_table', 'default.customers@cl1');") ==
        "db0ed8217c95acb8134ac87cca0d782a\n");
  const std::string type = "t\xc3\xa4g", qn = "\xe6\x97\xa5\xe6\x9c\xac.'x\"\\@cl\x1f\n";
  CHECK(pg.psql_ok("reader_binary", "SELECT encode(atlas_kudu.qn_digest(" + pg_text(type) + ", " +
                                        pg_text(qn) + "), 'hex');") ==
        to_hex(qn_digest(type, qn)) + "\n");
}

TEST_CASE(
    "pg_fdw: traversals, lookups and tags on a hand-built lineage with cycles, fan-out and "
    "tombstones") {
  PgCluster& pg = cluster();
  const std::vector<Event> events = lineage_events();
  for (const Tombstone tomb : {Tombstone::kSoft, Tombstone::kHard}) {
    for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
      CAPTURE(name_of(e));
      CAPTURE(tomb == Tombstone::kSoft ? "soft" : "hard");
      const Reader r{e};
      const KuduStore store = project_events(events, e, tomb);
      pg.psql_ok(r.standin(), fill_sql(store));
      const Graph g = graph_of(store);

      // The oracle on what this graph is known to hold.
      const auto reach = [&](int from, const char* dir) {
        std::set<std::string> keys;
        for (const auto& l : expect_traversal(g, {{hex_key(from)}, dir, 16, {}, {}}, 0)) {
          keys.insert(l.substr(2, 32));
        }
        return keys;
      };
      CHECK(reach(1, "out") == std::set<std::string>{hex_key(1), hex_key(11), hex_key(2),
                                                     hex_key(12)});  // the cycle ends
      CHECK(reach(7, "out").count(hex_key(9)) == 1);  // the edge to a tombstone is followed
      const auto live = expect_traversal(g, {{hex_key(7)}, "out", 16, {}, {}, true}, 0);
      CHECK(live.size() == 42);  // ... but not with active_only: T7, P3 and its 40 columns
      CHECK(reach(2, "out").count(hex_key(8)) == 0);  // T8's edges went with it
      CHECK(reach(13, "out").size() == 41);           // the hub
      const auto diamond = expect_traversal(g, {{hex_key(4)}, "out", 2, {}, {}}, 0);
      CHECK(std::count_if(diamond.begin(), diamond.end(), [&](const std::string& l) {
              return l.find(" " + hex_key(7) + " 2 " + hex_key(5) + " ") != std::string::npos;
            }) == 1);  // T7 via T5, the smaller of T5 and T6
      CHECK(std::find(diamond.begin(), diamond.end(),
                      "0 " + hex_key(5) + " 1 " + hex_key(4) + " x" + hex_of("links")) !=
            diamond.end());  // T4 -> T5 by "links", the smaller of links and owns

      std::vector<Traversal> ts = traversals_for(g, 24);
      ts.push_back({{hex_key(1)}, "out", 16, std::vector<std::string>{"__Process.inputs"}, {}});
      ts.push_back({{hex_key(4)}, "both", 16, std::vector<std::string>{"owns", "links"}, {}});
      ts.push_back({{hex_key(7)}, "out", 16, {}, std::vector<std::string>{"hive_process"}});
      ts.push_back({{hex_key(13)}, "in", 16, {}, std::vector<std::string>{"hive_table"}});
      ts.push_back({{hex_key(3)}, "both", 16, {}, {}});  // the self-loop
      ts.push_back({{hex_key(1), hex_key(4)}, "out", 0, {}, {}});
      ts.push_back({{hex_key(7)}, "out", 16, {}, {}, true});
      ts.push_back({{hex_key(9)}, "in", 16, {}, {}, true});  // a tombstone as the start
      check_traversals(pg, r, g, ts);
      check_lookups(pg, r, store);

      // Lookups by hand: T8 is gone from entity_by_qn (deleted), T1 is found.
      CHECK(pg.psql_ok(r.db(), "SELECT " + r.hex("guid") +
                                   " || ' ' || state FROM "
                                   "atlas_kudu.entity_by_qn('hive_table', 'hive_table.n1@cl');") ==
            hex_key(1) + " ACTIVE\n");
      CHECK(pg.psql_ok(r.db(),
                       "SELECT count(*) FROM "
                       "atlas_kudu.entity_by_qn('hive_table', 'hive_table.n8@cl');") == "0\n");
      CHECK(pg.psql_ok(r.db(),
                       "SELECT string_agg(" + r.hex("guid") +
                           " || ' ' || propagated, "
                           "',' ORDER BY propagated) FROM atlas_kudu.entities_by_tag('PII');") ==
            hex_key(1) + " false," + hex_key(2) + " true\n");
      // Soft tombstones keep the entity_flat row (state DELETED), hard ones remove it.
      CHECK(pg.psql_ok(r.db(),
                       "SELECT coalesce(string_agg(state, ','), '-') FROM "
                       "atlas_kudu.entities(" +
                           r.keys({hex_key(9)}) + ");") ==
            (tomb == Tombstone::kSoft ? "DELETED\n" : "-\n"));
    }
  }
}

TEST_CASE("pg_fdw: traversals and lookups on generated streams, both tombstones") {
  PgCluster& pg = cluster();
  GeneratorConfig config;
  config.length = 400;
  config.guids = 14;
  config.type_names = 5;
  config.qualified_names = 10;
  config.tag_names = 6;
  config.edge_labels = 4;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    std::vector<Event> events = densify(generate_stream(seed, config), seed, config.guids * 2);
    for (Event& ev : events) replace_nul(ev);
    const Tombstone tomb = seed % 2 ? Tombstone::kSoft : Tombstone::kHard;
    for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
      CAPTURE(seed);
      CAPTURE(name_of(e));
      const Reader r{e};
      const KuduStore store = project_events(events, e, tomb);
      pg.psql_ok(r.standin(), fill_sql(store));
      const Graph g = graph_of(store);
      REQUIRE(store.table("edge_out").size() >= 40);  // a graph worth walking
      check_traversals(pg, r, g, traversals_for(g, 12));
      check_lookups(pg, r, store);
    }
  }
}

TEST_CASE("pg_fdw: EXPLAIN VERBOSE shows each hop's = ANY pushed into the remote SQL") {
  PgCluster& pg = cluster();
  for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
    CAPTURE(name_of(e));
    const Reader r{e};
    pg.psql_ok(r.standin(), fill_sql(project_events(lineage_events(), e, Tombstone::kSoft)));
    const std::string array = e == KeyEncoding::kHex ? "text[]" : "bytea[]";

    // A hop as a prepared statement with a generic plan: the frontier is the parameter $1.
    const std::string plans =
        pg.psql_ok(r.db(), "PREPARE hop_out(" + array +
                               ") AS SELECT dst, elabel FROM atlas_kudu.edge_out "
                               "WHERE src = ANY($1);\n"
                               "PREPARE hop_in(" +
                               array +
                               ") AS SELECT src, elabel FROM atlas_kudu.edge_in "
                               "WHERE dst = ANY($1);\n"
                               "SET plan_cache_mode = force_generic_plan;\n"
                               "EXPLAIN (VERBOSE, COSTS OFF) EXECUTE hop_out(" +
                               r.keys({hex_key(1)}) +
                               ");\n"
                               "EXPLAIN (VERBOSE, COSTS OFF) EXECUTE hop_in(" +
                               r.keys({hex_key(1)}) + ");\n");
    MESSAGE("EXPLAIN (VERBOSE) of a hop, " << name_of(e) << " keys:\n" << plans);
    CHECK(plans.find("Remote SQL: SELECT elabel, dst FROM atlas.edge_out WHERE ((src = ANY ($1::" +
                     array + ")))") != std::string::npos);
    CHECK(plans.find("Remote SQL: SELECT elabel, src FROM atlas.edge_in WHERE ((dst = ANY ($1::" +
                     array + ")))") != std::string::npos);
    CHECK(plans.find("Filter:") == std::string::npos);  // nothing left to filter locally

    // The traversal itself: every hop's plan, logged by auto_explain as the function runs.
    PsqlRun run;
    run.database = r.db();
    run.script =
        "LOAD 'auto_explain';\n"
        "SET auto_explain.log_min_duration = 0;\n"
        "SET auto_explain.log_nested_statements = on;\n"
        "SET auto_explain.log_verbose = on;\n"
        "SET auto_explain.log_level = notice;\n"
        "SELECT count(*) FROM " +
        r.call({{hex_key(1), hex_key(4)},
                "both",
                4,
                std::vector<std::string>{"links", "owns", "__Process.inputs", "__Process.outputs"},
                {}}) +
        ";\n";
    const RunResult traced = pg.psql(run);
    REQUIRE_MESSAGE(traced.status == 0, traced.err);
    const std::string& log = traced.err;
    std::vector<std::string> remote;
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);) {
      if (const auto p = line.find("Remote SQL: "); p != std::string::npos) {
        remote.push_back(line.substr(p + 12));
      }
    }
    // Four hops, each one scan of edge_out and one of edge_in, with the frontier and the labels
    // pushed down; the visited keys stay local.
    REQUIRE(remote.size() == 8);
    MESSAGE("first hop of traverse(..., 'both', 4, labels), " << name_of(e) << " keys:\n  "
                                                              << remote[0] << "\n  " << remote[1]);
    for (std::size_t i = 0; i < remote.size(); ++i) {
      CAPTURE(remote[i]);
      const bool out = i % 2 == 0;
      // The frontier as a constant array ('{...}' for text, E'{"\\x..."}' for bytea) and the
      // labels; the planner orders the two conditions by cost, so either may come first.
      const std::string quote = e == KeyEncoding::kHex ? "'{" : "E'{";
      CHECK(remote[i].find(out ? "FROM atlas.edge_out WHERE " : "FROM atlas.edge_in WHERE ") !=
            std::string::npos);
      CHECK(remote[i].find((out ? "((src = ANY (" : "((dst = ANY (") + quote) != std::string::npos);
      CHECK(remote[i].find("::" + array + ")))") != std::string::npos);
      CHECK(remote[i].find("((elabel = ANY ('{") != std::string::npos);
      CHECK(remote[i].find("<>") == std::string::npos);
    }
    CHECK(log.find("Recursive Union") == std::string::npos);

    // active_only adds one lookup per hop, also pushed down: 7 -> 13 and 9, then 13 -> 40.
    run.script = run.script.substr(0, run.script.find("SELECT count(*)")) +
                 "SELECT count(*) FROM " + r.call({{hex_key(7)}, "out", 3, {}, {}, true}) + ";\n";
    const RunResult live = pg.psql(run);
    REQUIRE_MESSAGE(live.status == 0, live.err);
    std::size_t lookups = 0;
    std::istringstream live_log(live.err);
    for (std::string line; std::getline(live_log, line);) {
      // Again either condition may come first.
      if (line.find("Remote SQL: SELECT guid FROM atlas.entity_flat WHERE ") != std::string::npos) {
        ++lookups;
        CHECK(line.find("((guid = ANY (") != std::string::npos);
        CHECK(line.find("((state = 'ACTIVE'))") != std::string::npos);
      }
    }
    CHECK(lookups == 2);
    CHECK(log.find("CTE Scan") == std::string::npos);
    CHECK(log.find("WorkTable Scan") == std::string::npos);
  }
}

TEST_CASE("pg_fdw: lineage follows Atlas's process edges downstream and upstream") {
  // dataset_process_inputs and process_dataset_outputs have the process as end1 both times, so
  // both edges are stored process -> dataset. P11 reads T1 and T2 and writes T3; P12 reads T3
  // and writes T4.
  std::vector<Event> ev;
  std::int64_t ms = 1000;
  const std::string t = "hive_table", p = "hive_process";
  for (int n = 1; n <= 4; ++n) ev.push_back(entity_event(Operation::kEntityCreate, n, t, ++ms));
  for (int n = 11; n <= 12; ++n) ev.push_back(entity_event(Operation::kEntityCreate, n, p, ++ms));
  for (const auto& [process, label, dataset] :
       std::vector<std::tuple<int, std::string, int>>{{11, "__Process.inputs", 1},
                                                      {11, "__Process.inputs", 2},
                                                      {11, "__Process.outputs", 3},
                                                      {12, "__Process.inputs", 3},
                                                      {12, "__Process.outputs", 4}}) {
    ev.push_back(edge_event(process, p, label, dataset, t, ++ms));
  }
  PgCluster& pg = cluster();
  for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
    CAPTURE(name_of(e));
    const Reader r{e};
    pg.psql_ok(r.standin(), fill_sql(project_events(ev, e, Tombstone::kSoft)));
    const auto lineage = [&](int from, const std::string& direction) {
      return pg.psql_ok(r.db(), "SELECT " + r.hex("l.guid") + " || ' ' || l.depth || ' ' || " +
                                    "coalesce(" + r.hex("l.parent") +
                                    ", '-') || ' ' || coalesce(l.elabel, '-') FROM "
                                    "atlas_kudu.lineage(" +
                                    r.keys({hex_key(from)}) + ", '" + direction +
                                    "') AS l ORDER BY l.depth, 1;");
    };
    const auto row = [](int n, int depth, int parent, const std::string& label) {
      return hex_key(n) + " " + std::to_string(depth) + " " +
             (parent ? hex_key(parent) : std::string("-")) + " " + label + "\n";
    };
    // Downstream of T1: what reads it, what that writes, ...; not T2, read beside it.
    CHECK(lineage(1, "downstream") == row(1, 0, 0, "-") + row(11, 1, 1, "__Process.inputs") +
                                          row(3, 2, 11, "__Process.outputs") +
                                          row(12, 3, 3, "__Process.inputs") +
                                          row(4, 4, 12, "__Process.outputs"));
    // Upstream of T4: what wrote it, what that read, ...
    const std::string up = lineage(4, "upstream");
    CHECK(up == row(4, 0, 0, "-") + row(12, 1, 4, "__Process.outputs") +
                    row(3, 2, 12, "__Process.inputs") + row(11, 3, 3, "__Process.outputs") +
                    (hex_key(1) < hex_key(2)
                         ? row(1, 4, 11, "__Process.inputs") + row(2, 4, 11, "__Process.inputs")
                         : row(2, 4, 11, "__Process.inputs") + row(1, 4, 11, "__Process.inputs")));
    PsqlRun bad;
    bad.database = r.db();
    bad.script = "SELECT * FROM atlas_kudu.lineage(" + r.keys({hex_key(1)}) + ", 'down');";
    const RunResult refused = pg.psql(bad);
    CHECK(refused.status != 0);
    CHECK(refused.err.find("direction must be downstream or upstream, not 'down'") !=
          std::string::npos);
  }
}

TEST_CASE("pg_fdw: a frontier over max_frontier and keys of the wrong type fail clearly") {
  PgCluster& pg = cluster();
  const Reader r{KeyEncoding::kHex};
  pg.psql_ok(r.standin(),
             fill_sql(project_events(lineage_events(), KeyEncoding::kHex, Tombstone::kSoft)));
  const auto run = [&](const std::string& sql) {
    PsqlRun p;
    p.database = r.db();
    p.script = "\\set VERBOSITY verbose\n" + sql;
    return pg.psql(p);
  };
  const Traversal hub{{hex_key(13)}, "out", 2, {}, {}};
  RunResult capped = run("SELECT count(*) FROM " + r.call(hub, ", max_frontier => 39") + ";");
  CHECK(capped.status != 0);
  CHECK(capped.err.find("54000") != std::string::npos);
  CHECK(capped.err.find("hop 1 reached 40 new keys, more than max_frontier (39)") !=
        std::string::npos);
  CHECK(capped.err.find("HINT:  Lower max_depth") != std::string::npos);
  CHECK(run("SELECT count(*) FROM " + r.call(hub, ", max_frontier => 40") + ";").out == "41\n");

  const RunResult wrong = run("SELECT * FROM atlas_kudu.traverse(ARRAY[decode('" + hex_key(1) +
                              "', 'hex')], 'out', 1);");
  CHECK(wrong.status != 0);
  CHECK(wrong.err.find("start is bytea[], but the foreign tables hold text keys") !=
        std::string::npos);
  CHECK(wrong.err.find("HINT:  Pass text[] of keys in 32 lowercase hex characters, e.g. "
                       "ARRAY['0b6f...'] (an Atlas guid without its dashes).") !=
        std::string::npos);
  // With binary keys the hint names decode(): a hex text cast to bytea is its characters.
  PsqlRun text_keys;
  text_keys.database = Reader{KeyEncoding::kBinary}.db();
  text_keys.script = "SELECT * FROM atlas_kudu.traverse(ARRAY['" + hex_key(1) + "'], 'out', 1);";
  const RunResult binary_wrong = pg.psql(text_keys);
  CHECK(binary_wrong.err.find("HINT:  Pass bytea[] of 16-byte keys, e.g. "
                              "ARRAY[decode('0b6f...', 'hex')]") != std::string::npos);
  const RunResult direction =
      run("SELECT * FROM atlas_kudu.traverse(ARRAY['" + hex_key(1) + "'], 'up', 1);");
  CHECK(direction.err.find("direction must be out, in or both, not 'up'") != std::string::npos);
}

TEST_CASE("pg_fdw: `atlas2kudu ddl --fdw` prints the shipped files; no recursive CTE in sql/") {
  for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
    const std::string command =
        std::string(ATLAS2KUDU_BINARY) + " ddl --fdw --key-encoding " + std::string(name_of(e));
    FILE* p = ::popen(command.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string printed;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) printed.append(buf, n);
    CHECK(::pclose(p) == 0);
    CHECK(printed == read_file(fdw_file(e)));
  }
  for (const char* file : {"/sql/atlas_traversal.sql", "/sql/kudu_projections_fdw.sql",
                           "/sql/kudu_projections_fdw_binary.sql"}) {
    std::istringstream in(read_file(kRepo + file));
    for (std::string line; std::getline(in, line);) {
      std::string code = line.substr(0, line.find("--"));
      std::transform(code.begin(), code.end(), code.begin(), ::toupper);
      CHECK_MESSAGE(code.find("RECURSIVE") == std::string::npos, file << ": " << line);
    }
  }
  const std::string traversal = read_file(kRepo + "/sql/atlas_traversal.sql");
  CHECK(traversal.find("FROM atlas_kudu.edge_out e '\n             'WHERE e.src = ANY($1)") !=
        std::string::npos);
  CHECK(traversal.find("FROM atlas_kudu.edge_in e '\n            'WHERE e.dst = ANY($1)") !=
        std::string::npos);
}

TEST_SUITE_END();
