// Tests of the equivalence harness (tests/kit/harness.h) and of the kit's parts working together:
// a naive "one event at a time" SQL writer, built here from store deltas and impala_quote(), must
// be judged equivalent; broken variants of it must not.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "atlas2kudu/reader.h"
#include "equivalence.h"
#include "harness.h"
#include "sql_interpreter.h"
#include "stream_generator.h"
#include "util/digest.h"

TEST_SUITE_BEGIN("kit_harness");

using namespace atlas2kudu;
using namespace atlas2kudu::testkit;

namespace {

std::string literal(const Cell& c) {
  switch (c.kind) {
    case Cell::Kind::kNull:
      return "NULL";
    case Cell::Kind::kString:
      return impala_quote(c.bytes);
    case Cell::Kind::kBinary:
      return "CAST(unhex('" +
             to_hex(reinterpret_cast<const std::uint8_t*>(c.bytes.data()), c.bytes.size()) +
             "') AS BINARY)";
    case Cell::Kind::kInt64:
      return fmt::format("{}", c.int64);
    case Cell::Kind::kBool:
      return c.boolean ? "TRUE" : "FALSE";
  }
  return "NULL";
}

// SQL that turns `before` into `after`: a DELETE per vanished row (by full key), then one UPSERT of
// every column per new or changed row. Deliberately naive: one statement per row.
std::string delta_sql(const KuduStore& before, const KuduStore& after, const std::string& db) {
  std::string deletes, upserts;
  for (const auto& schema : projection_schemas()) {
    const auto& b = before.table(schema.name).rows();
    const auto& a = after.table(schema.name).rows();
    for (const auto& [key, row] : b) {
      if (a.count(key)) continue;
      deletes += fmt::format("DELETE FROM `{}`.`{}` WHERE ", db, schema.name);
      for (std::size_t k = 0; k < schema.key_count; ++k) {
        deletes +=
            fmt::format("{}`{}` = {}", k ? " AND " : "", schema.columns[k].name, literal(key[k]));
      }
      deletes += ";\n";
    }
    for (const auto& [key, row] : a) {
      const auto it = b.find(key);
      if (it != b.end() && it->second == row) continue;
      upserts += fmt::format("UPSERT INTO `{}`.`{}` (", db, schema.name);
      for (std::size_t c = 0; c < schema.columns.size(); ++c) {
        upserts += fmt::format("{}`{}`", c ? ", " : "", schema.columns[c].name);
      }
      upserts += ") VALUES (";
      for (std::size_t c = 0; c < row.size(); ++c) upserts += (c ? ", " : "") + literal(row[c]);
      upserts += ");\n";
    }
  }
  return deletes + upserts;
}

// The naive compiler: project event by event and write each event's delta.
std::string naive_sql(std::span<const Event> events, const CompileOptions& options,
                      const KuduStore& initial) {
  KuduStore store = initial;
  ReferenceProjector projector(store, options, PriorKnowledge::kStore);
  std::string sql = "-- naive: one event at a time\n";
  for (std::size_t i = 0; i < events.size(); ++i) {
    const KuduStore before = store;
    projector.apply(events[i]);
    sql += fmt::format("-- event {}\n", i + 1) + delta_sql(before, store, options.database);
  }
  return sql;
}

}  // namespace

TEST_CASE("harness: a naive per-event SQL writer is equivalent on random streams and stores") {
  // Statements of one event may share rows with the next event's: phases are not independent in
  // this naive script, so the phase checks are off; everything else (quoting, typing, Kudu
  // semantics, comparison) is exercised on hostile strings under both encodings.
  EquivalenceOptions check;
  check.prior = PriorKnowledge::kStore;
  check.check_reversed_phases = false;
  check.check_phase_conflicts = false;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    for (const auto enc : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
      CompileOptions options;
      options.key_encoding = enc;
      options.tombstone = seed % 2 ? Tombstone::kSoft : Tombstone::kHard;
      options.database = seed % 3 ? "atlas" : "atlas_test";
      const KuduStore initial =
          seed % 4 == 0 ? KuduStore(enc) : generate_store(seed * 31, options, 40);
      GeneratorConfig config;
      config.length = 80;
      const auto events = generate_stream(seed, config);
      const std::string sql = naive_sql(events, options, initial);
      CAPTURE(seed);
      const auto diff = check_equivalence(events, options, initial, sql, check);
      CHECK_MESSAGE(!diff, diff.value_or(""));
    }
  }
}

TEST_CASE("harness: reports wrong tables, SQL errors and order-dependent phases") {
  CompileOptions options;
  const auto events = generate_stream(3, GeneratorConfig{.length = 30});
  const KuduStore empty;
  const std::string good = naive_sql(events, options, empty);
  EquivalenceOptions lax{.prior = PriorKnowledge::kStore,
                         .check_reversed_phases = false,
                         .check_phase_conflicts = false};
  REQUIRE_FALSE(check_equivalence(events, options, empty, good, lax));

  // Dropping the last event's statements: the tables differ.
  const auto cut = good.rfind("-- event");
  const auto diff = check_equivalence(events, options, empty, good.substr(0, cut), lax);
  REQUIRE(diff);
  CHECK(diff->find("tables differ (as written)") != std::string::npos);

  // A syntax error names the statement.
  const auto bad = check_equivalence(events, options, empty, good + "DELETE FROM x;", lax);
  REQUIRE(bad);
  CHECK(bad->find("SQL (as written): statement") != std::string::npos);

  // With the phase checks on, the naive script's repeated rows in one phase are flagged.
  const auto conflict =
      check_equivalence(events, options, empty, good, {.prior = PriorKnowledge::kStore});
  REQUIRE(conflict);
  CHECK(conflict->find("of one phase") != std::string::npos);

  // Key encoding mismatch between store and options is reported, not thrown.
  CompileOptions binary = options;
  binary.key_encoding = KeyEncoding::kBinary;
  CHECK(check_equivalence(events, binary, empty, good, lax));
}

TEST_CASE("harness: a phase-correct script passes in both statement orders") {
  // Two entities renamed into each other's names: deletes first, then upserts, no row twice.
  CompileOptions options;
  const KuduStore empty;
  Event a;
  a.op = Operation::kEntityCreate;
  a.guid = generator_guid(1);
  a.type_name = "T";
  a.qualified_name = "x";
  a.event_time_us = 1000;
  a.audit_seq = 11;
  const std::vector<Event> events = {a};
  const std::string g = a.guid.hex();
  const std::string digest = to_hex(qn_digest("T", "x"));
  const std::string sql = fmt::format(
      "-- window 1 phase 2: upserts\n"
      "UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `state`, "
      "`created_ts`, `updated_ts`) VALUES ('{0}', 'T', 'x', 'ACTIVE', 1000, 1000);\n"
      "UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES ('{1}', '{0}', "
      "'T');\n"
      "UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`) VALUES ('{0}', 1000, "
      "11, 'ENTITY_CREATE');\n",
      g, digest);
  CHECK_FALSE(check_equivalence(events, options, empty, sql));
  // The audit seq matters in store-vs-store comparison.
  std::string wrong = sql;
  wrong.replace(wrong.find("11, 'ENTITY"), 2, "12");
  const auto diff = check_equivalence(events, options, empty, wrong);
  REQUIRE(diff);
  CHECK(diff->find("entity_audit") != std::string::npos);
}

TEST_CASE("harness: shrink_events finds a minimal failing stream") {
  const auto events = generate_stream(9, GeneratorConfig{.length = 60});
  // "Fails" when the stream still holds both a delete and a later create of any guid.
  const auto fails = [](std::span<const Event> s) {
    bool deleted = false;
    for (const auto& e : s) {
      if (e.op == Operation::kEntityDelete) deleted = true;
      if (deleted && e.op == Operation::kEntityCreate) return true;
    }
    return false;
  };
  REQUIRE(fails(events));
  const auto minimal = shrink_events(events, fails);
  REQUIRE(minimal.size() == 2);
  CHECK(minimal[0].op == Operation::kEntityDelete);
  CHECK(minimal[1].op == Operation::kEntityCreate);
  CHECK(describe_events(minimal).find("1: ENTITY_DELETE") == 0);
}

TEST_CASE("harness: catches a compiler that hoists every delete before every upsert") {
  // The classic net-effect bug: a row upserted by one event and deleted by a later one comes back
  // when all deletes run first. The oracle must see it on ordinary random streams.
  int caught = 0;
  const int seeds = 10;
  for (int seed = 1; seed <= seeds; ++seed) {
    CompileOptions options;
    const KuduStore empty;
    const auto events = generate_stream(static_cast<std::uint64_t>(seed), {});
    // Net effect per row, computed badly: deleted-ever rows, last full row of upserted-ever rows.
    KuduStore store = empty;
    ReferenceProjector projector(store, options);
    std::string deletes = "-- window 1 phase 1: deletes\n";
    std::map<std::pair<std::string, Key>, std::string> upserts;
    for (const auto& e : events) {
      const KuduStore before = store;
      projector.apply(e);
      const std::string delta = delta_sql(before, store, options.database);
      std::size_t pos = 0;
      while (pos < delta.size()) {
        const std::size_t end = delta.find(";\n", pos) + 2;
        const std::string st = delta.substr(pos, end - pos);
        if (st.starts_with("DELETE")) deletes += st;
        pos = end;
      }
      for (const auto& schema : projection_schemas()) {
        for (const auto& [key, row] : store.table(schema.name).rows()) {
          const auto old = before.table(schema.name).find(key);
          if (old && *old == row) continue;
          std::string sql = fmt::format("UPSERT INTO `atlas`.`{}` (", schema.name);
          for (std::size_t c = 0; c < schema.columns.size(); ++c) {
            sql += fmt::format("{}`{}`", c ? ", " : "", schema.columns[c].name);
          }
          sql += ") VALUES (";
          for (std::size_t c = 0; c < row.size(); ++c) sql += (c ? ", " : "") + literal(row[c]);
          upserts[{schema.name, key}] = sql + ");\n";
        }
      }
    }
    std::string sql = deletes + "-- window 1 phase 2: upserts\n";
    for (const auto& [k, st] : upserts) sql += st;
    // Deletes of one row may repeat across events; keep the check on table contents only.
    const auto diff =
        check_equivalence(events, options, empty, sql, {.prior = PriorKnowledge::kStore});
    if (diff) ++caught;
  }
  CHECK(caught >= seeds / 2);
}

TEST_CASE("harness: dropping the last write of any row from a correct script is caught") {
  // The naive script has one statement per line, each touching one row; the last statement that
  // touches a row decides it, so removing that statement must always show up as a difference.
  CompileOptions options;
  const KuduStore empty;
  const auto events = generate_stream(21, GeneratorConfig{.length = 40});
  const std::string sql = naive_sql(events, options, empty);
  EquivalenceOptions lax{.prior = PriorKnowledge::kStore,
                         .check_reversed_phases = false,
                         .check_phase_conflicts = false};
  REQUIRE_FALSE(check_equivalence(events, options, empty, sql, lax));
  std::vector<std::string> lines;
  for (std::size_t pos = 0; pos < sql.size();) {
    const std::size_t end = sql.find('\n', pos);
    lines.push_back(sql.substr(pos, end - pos + 1));
    pos = end + 1;
  }
  std::map<std::pair<std::string, Key>, std::size_t> last;  // row -> line of its last statement
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with("--")) continue;
    const auto st = parse_script(lines[i], empty).at(0);
    const TableSchema& schema = empty.table(st.table).schema();
    Key key(schema.key_count);
    if (st.kind == ParsedStatement::Kind::kUpsert) {
      for (std::size_t c = 0; c < schema.key_count; ++c) key[c] = st.rows[0][c];
    } else {
      for (std::size_t c = 0; c < schema.key_count; ++c) key[c] = st.conditions[c].values[0];
    }
    last[{st.table, key}] = i;
  }
  REQUIRE(last.size() > 20);
  for (const auto& row_and_line : last) {
    const std::size_t line = row_and_line.second;  // CAPTURE may not name a structured binding
    std::string mutant;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i != line) mutant += lines[i];
    }
    CAPTURE(lines[line]);
    CHECK(check_equivalence(events, options, empty, mutant, lax));
  }
}

TEST_CASE("harness: a hand-compiled net-effect script for scenario 03 (trade via temporary)") {
  const auto events = read_all_events({std::string(ATLAS2KUDU_TEST_DATA) +
                                       "/scenarios/03-qualified-name-trade-via-temporary.jsonl"});
  REQUIRE(events.size() == 5);
  const std::string g1 = events[0].guid.hex(), g2 = events[1].guid.hex();
  const std::string dx = to_hex(qn_digest("hive_table", "x"));
  const std::string dy = to_hex(qn_digest("hive_table", "y"));
  std::string audit;
  for (const auto& e : events) {
    audit += fmt::format("{}('{}', {}, {}, '{}')", audit.empty() ? "" : ", ", e.guid.hex(),
                         e.event_time_us, e.audit_seq, to_string(e.op));
  }
  // One window: a predicate delete clears whatever the two guids held under other digests, then
  // every row is written once.
  const std::string sql = fmt::format(
      "-- window 1: events 1-5\n-- window 1 phase 1: deletes\n"
      "DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('{0}', '{1}') AND `qn_digest` NOT IN "
      "('{2}', '{3}');\n"
      "-- window 1 phase 2: upserts\n"
      "UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, "
      "`created_ts`, `updated_ts`) VALUES ('{0}', 'hive_table', 'y', 'a', 'ACTIVE', 1000, 12000), "
      "('{1}', 'hive_table', 'x', 'b', 'ACTIVE', 2000, 11000);\n"
      "UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES ('{2}', '{1}', "
      "'hive_table'), ('{3}', '{0}', 'hive_table');\n"
      "UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`) VALUES {4};\n",
      g1, g2, dx, dy, audit);
  CompileOptions options;
  CHECK_FALSE(check_equivalence(events, options, KuduStore(), sql));
  // From a prior state where the guids held other names, the predicate delete keeps it exact.
  const KuduStore prior = generate_store(77, options, 30);
  KuduStore seeded = prior;
  seeded.upsert_row("entity_by_qn",
                    {{"qn_digest", seeded.key(Guid{qn_digest("hive_table", "old")})},
                     {"guid", Cell::string(g1)},
                     {"type_name", Cell::string("hive_table")}});
  const auto diff = check_equivalence(events, options, seeded, sql);
  CHECK_MESSAGE(!diff, diff.value_or(""));
  // Without the predicate delete the stale "tmp" row never existed, but "old" survives.
  const std::string no_delete = sql.substr(sql.find("-- window 1 phase 2"));
  const auto stale = check_equivalence(events, options, seeded, no_delete);
  REQUIRE(stale);
  CHECK(stale->find("entity_by_qn") != std::string::npos);
}

TEST_CASE("equivalence: explain_equivalence_failure shrinks a real disagreement") {
  // The compiler compiles as --prior none; judged against a projector that reads the prior store
  // (PriorKnowledge::kStore), a props merge onto pre-existing entities must disagree. The
  // explanation must cut the stream down to a handful of events.
  CompileOptions options;
  const KuduStore prior = generate_store(4, options);
  const auto events = generate_stream(4, GeneratorConfig{.length = 60});
  EquivalenceOptions full{.prior = PriorKnowledge::kStore};
  const auto explained = explain_equivalence_failure(events, options, prior, full);
  REQUIRE(explained);
  CHECK(explained->find("minimal failing stream (") == 0);
  const auto of = explained->find(" of 60 events");
  REQUIRE(of != std::string::npos);
  const int kept = std::stoi(explained->substr(24, of - 24));
  CHECK(kept >= 1);
  CHECK(kept <= 3);
  CHECK(explained->find("--- SQL ---") != std::string::npos);
  // The same stream is equivalent under the knowledge the compiler really has.
  CHECK_FALSE(run_equivalence(events, options, prior));
}

TEST_SUITE_END();
