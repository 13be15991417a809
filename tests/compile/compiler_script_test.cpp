// The script around the statements: header, windows, phases, batching, determinism, and state
// carried from window to window.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <stdexcept>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/error.h"
#include "compile/print_executor.h"
#include "compiler_events.h"

TEST_SUITE_BEGIN("compiler_script");

using namespace atlas2kudu;
using namespace atlas2kudu::test;
using O = Operation;

namespace {

std::vector<Event> many_entities(int n) {
  std::vector<Event> out;
  for (int i = 1; i <= n; ++i) {
    out.push_back(create({.id = i,
                          .qn = "db.t" + std::to_string(i) + "@c",
                          .name = "t",
                          .attrs = {attr("owner", "\"someone with a long name\"")},
                          .ms = i}));
  }
  for (int i = 1; i <= n; ++i) out.push_back(remove({.id = i, .ms = 1000 + i}));
  return out;
}

void check_limits(const std::vector<Statement>& statements, const CompileOptions& o) {
  for (const Statement& s : statements) {
    CAPTURE(s.sql);
    CHECK(s.rows >= 1);
    CHECK(s.rows <= o.batch_rows);
    if (s.rows > 1) CHECK(s.sql.size() <= o.batch_bytes);
  }
}

}  // namespace

TEST_CASE("header names the version, every option and the prior source") {
  CompileOptions o;
  o.database = "meta";
  o.key_encoding = KeyEncoding::kBinary;
  o.tombstone = Tombstone::kHard;
  o.props_max_bytes = 1000;
  o.window_events = 7;
  o.batch_rows = 3;
  o.batch_bytes = 9999;
  NoPriorState prior;
  Compiler c(o);
  CHECK(c.header(prior.describe()) ==
        "-- atlas2kudu 0.1.0 compile\n"
        "-- options: --database meta --key-encoding binary --tombstone hard --prior none "
        "--props-max-bytes 1000 --window-events 7 --batch-rows 3 --batch-bytes 9999\n"
        "-- prior state: none (only what this input establishes; renames and tag removals use "
        "predicate deletes, props of entities first seen here merge from {}, and a type change "
        "of one without its qualifiedName drops its entity_by_qn row)\n");
  // --memory-budget decides where windows close early: named when it is not the default (the
  // default's header stays as it was).
  o.memory_budget = std::size_t{64} << 20;
  CHECK(Compiler(o).header(prior.describe()).find("--batch-bytes 9999 --memory-budget 64M\n") !=
        std::string::npos);
  CHECK(memory_budget_text(std::size_t{2} << 30) == "2G");
  CHECK(memory_budget_text(std::size_t{1100} << 20) == "1100M");
  CHECK(memory_budget_text(1000000000) == "1000000000");
}

TEST_CASE("options no SQL can be written for are refused") {
  NoPriorState prior;
  CompileOptions o;
  o.database = "a`b";
  CHECK_THROWS_AS(Compiler{o}, Error);
  o = {};
  o.props_max_bytes = 1;
  CHECK_THROWS_AS(Compiler{o}, Error);
  o = {};
  o.prior = PriorSource::kImpala;
  CHECK_THROWS_AS(compile_to_sql(std::vector<Event>{}, o), Error);
}

TEST_CASE("windows: comments, numbering, positions and phases") {
  CompileOptions o;
  o.window_events = 2;
  std::vector<Event> ev = {create({.id = 1, .qn = "q", .ms = 1}),
                           update({.id = 1, .name = "n", .ms = 2}),
                           relationship(O::kRelationshipCreate, 1, 2, "l", 3)};
  ev[0].pos.source = "in.json";
  ev[0].pos.line = 1;
  ev[1].pos.source = "in.json";
  ev[1].pos.line = 2;
  const std::string sql = compile_to_sql(ev, o);
  CHECK(sql.find("-- window 1: events 1-2 (in.json:1 .. in.json:2)\n"
                 "-- window 1 phase 1: deletes (1 statement)\n") != std::string::npos);
  CHECK(sql.find("-- window 2: events 3-3\n-- window 2 phase 1: deletes (0 statements)\n"
                 "-- window 2 phase 2: upserts (2 statements)\n") != std::string::npos);

  NoPriorState prior;
  Compiler c(o);
  const CompiledWindow w1 = compile_window(c, prior, std::span(ev).first(2));
  const CompiledWindow w2 = compile_window(c, prior, std::span(ev).subspan(2));
  CHECK(w1.index == 1);
  CHECK(w2.index == 2);
  CHECK(w2.first_event == 3);
  CHECK(w2.last_event == 3);
  REQUIRE(w2.upserts.size() == 2);
  CHECK(w2.upserts[0].table == "edge_out");
  CHECK(w2.upserts[1].table == "edge_in");
  std::string printed;
  PrintExecutor::format_window(w2, printed);
  CHECK(printed ==
        "-- window 2: events 3-3\n"
        "-- window 2 phase 1: deletes (0 statements)\n"
        "-- window 2 phase 2: upserts (2 statements)\n" +
            w2.upserts[0].sql + ";\n" + w2.upserts[1].sql + ";\n");
}

TEST_CASE("a file name in a window comment cannot end the comment") {
  CompileOptions o;
  std::vector<Event> ev = {create({.id = 1, .qn = "q", .ms = 1})};
  ev[0].pos.source = "x\nDROP TABLE atlas.entity_flat;--\r\xe2\x80\xa8\\";
  ev[0].pos.line = 7;
  const std::string sql = compile_to_sql(ev, o);
  CHECK(sql.find("-- window 1: events 1-1 (x\\nDROP TABLE atlas.entity_flat;--\\r\\u2028\\\\:7 .. "
                 "x\\nDROP TABLE atlas.entity_flat;--\\r\\u2028\\\\:7)\n") != std::string::npos);
  // Every line is a comment or a statement the compiler wrote.
  std::size_t at = 0;
  while (at < sql.size()) {
    const std::size_t nl = sql.find('\n', at);
    const std::string line = sql.substr(at, nl - at);
    CAPTURE(line);
    CHECK((line.starts_with("-- ") || line.starts_with("UPSERT INTO ") ||
           line.starts_with("DELETE FROM ") || line.starts_with("  ") || line.starts_with("(")));
    at = nl + 1;
  }
}

TEST_CASE("batching: rows and bytes per statement") {
  for (const std::size_t rows : {1u, 3u, 10u, 1000u}) {
    for (const std::size_t bytes : {200u, 700u, 4u << 20}) {
      CompileOptions o;
      o.batch_rows = rows;
      o.batch_bytes = bytes;
      NoPriorState prior;
      Compiler c(o);
      const auto ev = many_entities(25);
      const CompiledWindow w = compile_window(c, prior, ev);
      CAPTURE(rows);
      CAPTURE(bytes);
      check_limits(w.deletes, o);
      check_limits(w.upserts, o);
      std::size_t flat_rows = 0;
      for (const Statement& s : w.upserts) {
        if (s.table == "entity_flat") flat_rows += s.rows;
      }
      CHECK(flat_rows == 25);
      if (rows == 10 && bytes == (4u << 20)) {
        // 25 flat rows, 25 audit rows x 2 events: 3 + 5 statements.
        std::size_t flat = 0, audit = 0;
        for (const Statement& s : w.upserts) {
          flat += s.table == "entity_flat";
          audit += s.table == "entity_audit";
        }
        CHECK(flat == 3);
        CHECK(audit == 5);
      }
    }
  }
}

TEST_CASE("keyed deletes of composite keys name exactly the wanted keys") {
  CompileOptions o;
  o.batch_rows = 4;
  std::vector<Event> ev;
  // Two sources x three destinations with one label: two exact products of three keys (four
  // keys to a statement); a second label apart; two pairs of a third label narrowed by a CASE.
  for (int s : {1, 2}) {
    for (int d : {5, 6, 7}) ev.push_back(relationship(O::kRelationshipDelete, s, d, "a", 1));
  }
  ev.push_back(relationship(O::kRelationshipDelete, 3, 9, "c", 2));
  ev.push_back(relationship(O::kRelationshipDelete, 4, 8, "c", 3));
  ev.push_back(relationship(O::kRelationshipDelete, 1, 5, "b", 4));
  NoPriorState prior;
  Compiler c(o);
  const CompiledWindow w = compile_window(c, prior, ev);
  std::vector<std::string> out;
  std::size_t out_keys = 0;
  for (const Statement& s : w.deletes) {
    CHECK(s.rows <= 4);
    if (s.table != "edge_out") continue;
    out_keys += s.rows;
    out.push_back(s.sql);
    CHECK(s.sql.find(" OR ") == std::string::npos);
  }
  CHECK(out_keys == 9);
  const auto k = [](int n) { return fmt::format("'0000000{0}00004000800000000000000{0}'", n); };
  REQUIRE(out.size() == 4);
  CHECK(out[0] == "DELETE FROM `atlas`.`edge_out` WHERE `src` IN (" + k(1) +
                      ") AND `elabel` IN ('a') AND `dst` IN (" + k(5) + ", " + k(6) + ", " + k(7) +
                      ")");
  CHECK(out[1] == "DELETE FROM `atlas`.`edge_out` WHERE `src` IN (" + k(2) +
                      ") AND `elabel` IN ('a') AND `dst` IN (" + k(5) + ", " + k(6) + ", " + k(7) +
                      ")");
  CHECK(out[2] == "DELETE FROM `atlas`.`edge_out` WHERE `src` IN (" + k(1) +
                      ") AND `elabel` IN ('b') AND `dst` IN (" + k(5) + ")");
  CHECK(out[3] == "DELETE FROM `atlas`.`edge_out` WHERE `src` IN (" + k(3) + ", " + k(4) +
                      ") AND `elabel` IN ('c') AND `dst` IN (" + k(8) + ", " + k(9) +
                      ") AND CASE `src` WHEN " + k(3) + " THEN `dst` IN (" + k(9) + ") WHEN " +
                      k(4) + " THEN `dst` IN (" + k(8) + ") END");
}

TEST_CASE("output is byte-identical for the same input and options") {
  std::vector<Event> ev = many_entities(40);
  for (int i = 1; i <= 40; ++i) {
    ev.push_back(tags(i, {{"T" + std::to_string(i % 3), i}, {"PII", 1}}, 5000 + i));
    ev.push_back(
        relationship(O::kRelationshipCreate, i, 41 - i, "l" + std::to_string(i % 2), 6000 + i));
  }
  CompileOptions o;
  o.batch_rows = 7;
  const std::string first = compile_to_sql(ev, o);
  // A compiler whose hash maps have seen other keys first must still print the same text.
  NoPriorState prior;
  Compiler warm(o);
  (void)compile_window(warm, prior, many_entities(90));
  for (int run = 0; run < 3; ++run) CHECK(compile_to_sql(ev, o) == first);
}

TEST_CASE("state established in earlier windows is carried: renames and tag removals go keyed") {
  CompileOptions o;
  o.window_events = 1;
  const std::string sql = compile_to_sql(
      std::vector<Event>{create({.id = 1, .qn = "x", .ms = 1}),
                         update({.id = 1, .qn = "y", .ms = 2}), tags(1, {{"A", 1}, {"B", 1}}, 3),
                         tags(1, {{"B", 1}}, 4, O::kClassificationDelete)},
      o);
  // Window 2 knows the old name: a guarded keyed delete, no clean-up scan.
  CHECK(sql.find("-- window 2: events 2-2\n-- window 2 phase 1: deletes (1 statement)\n"
                 "DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN "
                 "('a133b929d025382590861f24933d3adc') AND `guid` IN "
                 "('00000001000040008000000000000001');\n") != std::string::npos);
  // Window 3 does not know the stored tag set yet; window 4 does.
  CHECK(sql.find("DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN "
                 "('00000001000040008000000000000001') AND `tag_name` NOT IN ('A', 'B');\n") !=
        std::string::npos);
  CHECK(sql.find("-- window 4 phase 1: deletes (1 statement)\n"
                 "DELETE FROM `atlas`.`entity_classifications` WHERE `tag_name` IN ('A') AND "
                 "`guid` IN ('00000001000040008000000000000001');\n") != std::string::npos);
}

TEST_SUITE_END();
