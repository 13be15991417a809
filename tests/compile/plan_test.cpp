// The planner on its own: a hand-made NetWindow in, the exact statements out (golden strings).
#include "compile/plan.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/error.h"
#include "compiler_events.h"

TEST_SUITE_BEGIN("plan");

using namespace atlas2kudu;
using namespace atlas2kudu::test;

namespace {

std::string hex(int n) {
  return guid(n).hex();
}

FlatRow flat_upsert(int id, std::uint8_t mask, std::string_view type) {
  FlatRow r;
  r.guid = guid(id);
  r.upsert = true;
  r.mask = mask;
  r.type_name = type;  // a literal: rows view their text
  r.updated_ts = 7;
  return r;
}

}  // namespace

TEST_CASE("entity_flat upserts are grouped by column set and sorted by key") {
  NetWindow net;
  net.info.index = 3;
  net.flat.push_back(flat_upsert(2, FlatRow::kTypeName | FlatRow::kUpdatedTs, "b"));
  net.flat.push_back(flat_upsert(1, FlatRow::kTypeName | FlatRow::kUpdatedTs, "a'"));
  FlatRow recreated = flat_upsert(3, FlatRow::kTypeName, "c");
  recreated.delete_first = true;
  net.flat.push_back(recreated);
  const CompiledWindow w = plan_window(net, CompileOptions{});
  CHECK(w.index == 3);
  REQUIRE(w.deletes.size() == 1);
  CHECK(w.deletes[0].sql == "DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN ('" + hex(3) + "')");
  REQUIRE(w.upserts.size() == 2);
  CHECK(w.upserts[0].sql ==
        "UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `updated_ts`) VALUES\n"
        "('" +
            hex(1) + "', 'a\\'', 7),\n('" + hex(2) + "', 'b', 7)");
  CHECK(w.upserts[0].rows == 2);
  // Re-created after a delete: every column, NULL where the row has no value.
  CHECK(w.upserts[1].sql ==
        "UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, "
        "`state`, `created_ts`, `updated_ts`, `props_json`) VALUES\n('" +
            hex(3) + "', 'c', NULL, NULL, NULL, NULL, NULL, NULL)");
}

TEST_CASE("keyed edge deletes are exact products, never OR-of-ANDs; cascades on both ends") {
  NetWindow net;
  for (int dst : {3, 2}) {
    EdgeRow r;
    r.a = guid(1);
    r.elabel = "owns";
    r.b = guid(dst);
    r.delete_first = true;
    net.edge_out.push_back(r);
  }
  net.edge_cascades = {guid(9)};
  CompileOptions o;
  o.key_encoding = KeyEncoding::kBinary;
  const CompiledWindow w = plan_window(net, o);
  const auto key = [](int n) { return "CAST(unhex('" + hex(n) + "') AS BINARY)"; };
  REQUIRE(w.deletes.size() == 5);
  CHECK(w.deletes[0].sql == "DELETE FROM `atlas`.`edge_out` WHERE `src` IN (" + key(1) +
                                ") AND `elabel` IN ('owns') AND `dst` IN (" + key(2) + ", " +
                                key(3) + ")");
  CHECK(w.deletes[0].rows == 2);
  CHECK(w.deletes[1].sql == "DELETE FROM `atlas`.`edge_out` WHERE `src` IN (" + key(9) + ")");
  CHECK(w.deletes[2].sql == "DELETE FROM `atlas`.`edge_out` WHERE `dst` IN (" + key(9) + ")");
  CHECK(w.deletes[3].sql == "DELETE FROM `atlas`.`edge_in` WHERE `dst` IN (" + key(9) + ")");
  CHECK(w.deletes[4].sql == "DELETE FROM `atlas`.`edge_in` WHERE `src` IN (" + key(9) + ")");
  for (const Statement& s : w.deletes) CHECK(s.sql.find(" OR ") == std::string::npos);
  CHECK(w.upserts.empty());
}

TEST_CASE("batch_rows cuts statements; tag clean-ups group by the kept set") {
  NetWindow net;
  for (int id = 1; id <= 5; ++id) {
    ByQnRow r;
    r.digest = guid(10 + id).bytes;
    r.guid = guid(id);
    r.type_name = "t";
    r.upsert = true;
    net.by_qn.push_back(r);
  }
  net.tag_cleanups = {{guid(1), {"PII"}}, {guid(2), {}}, {guid(3), {"PII"}}};
  CompileOptions o;
  o.batch_rows = 2;
  const CompiledWindow w = plan_window(net, o);
  REQUIRE(w.upserts.size() == 3);  // 2 + 2 + 1 rows
  CHECK(w.upserts[0].rows == 2);
  CHECK(w.upserts[2].rows == 1);
  CHECK(w.upserts[0].sql.starts_with(
      "UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES\n"));
  REQUIRE(w.deletes.size() == 2);
  CHECK(w.deletes[0].sql ==
        "DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN ('" + hex(2) + "')");
  CHECK(w.deletes[1].sql == "DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN ('" +
                                hex(1) + "', '" + hex(3) + "') AND `tag_name` NOT IN ('PII')");
}

TEST_CASE("audit rows: a redelivered event (same key) is written once") {
  NetWindow net;
  for (int i = 0; i < 2; ++i) {
    AuditRow a;
    a.guid = guid(1);
    a.event_ts = 5;
    a.seq = -1;
    a.op = Operation::kEntityUpdate;
    a.type_name = "t";
    a.detail_json = "{}";
    net.audit.push_back(a);
  }
  const CompiledWindow w = plan_window(net, CompileOptions{});
  REQUIRE(w.upserts.size() == 1);
  CHECK(w.upserts[0].sql ==
        "UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, "
        "`qualified_name`, `detail_json`) VALUES\n('" +
            hex(1) + "', 5, -1, 'ENTITY_UPDATE', 't', NULL, '{}')");
  CHECK(w.upserts[0].rows == 1);
}

TEST_CASE("Statement::part re-plans a run of rows exactly as the planner writes them alone") {
  const auto window_of = [](std::vector<int> ids) {
    NetWindow net;
    for (int id : ids) {
      net.flat.push_back(flat_upsert(id, FlatRow::kTypeName | FlatRow::kUpdatedTs, "t"));
      TagRow tag;
      tag.upsert = true;
      tag.tag_name = "PII";
      tag.guid = guid(id);
      net.tags.push_back(tag);
    }
    return net;
  };
  NetWindow all = window_of({4, 1, 3, 2});
  const CompiledWindow w = plan_window(all, CompileOptions{});
  REQUIRE(w.upserts.size() == 2);
  for (const Statement& s : w.upserts) {
    CAPTURE(s.table);
    REQUIRE(s.row_spans.size() == 4);
    // Each span is the row's tuple; net_row points at the row in the window's vector (where the
    // planner sorts rows through an index, as for entity_flat, the vector keeps its order).
    CHECK(s.sql.substr(s.row_spans[0].begin, 1) == "(");
    CHECK(s.sql.substr(s.row_spans[0].end - 1, 1) == ")");
    CHECK(s.sql.substr(s.row_spans[0].begin, s.row_spans[0].end - s.row_spans[0].begin)
              .find(hex(1)) != std::string::npos);
    const auto guid_at = [&](std::size_t net_row) {
      return s.table == "entity_flat" ? all.flat[net_row].guid : all.tags[net_row].guid;
    };
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(guid_at(s.row_spans[i].net_row) == guid(static_cast<int>(i) + 1));  // in key order
    }
    CHECK(s.part(0, 4).sql == s.sql);
  }
  // Rows 2-3 of the statements (guids 2 and 3) equal the plan of a window holding only them.
  NetWindow middle = window_of({3, 2});
  const CompiledWindow m = plan_window(middle, CompileOptions{});
  REQUIRE(m.upserts.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const Statement part = w.upserts[i].part(1, 3);
    CHECK(part.sql == m.upserts[i].sql);
    CHECK(part.rows == 2);
    CHECK(part.table == w.upserts[i].table);
    REQUIRE(part.row_spans.size() == 2);
    const Guid first = w.upserts[i].table == "entity_flat"
                           ? all.flat[part.row_spans[0].net_row].guid
                           : all.tags[part.row_spans[0].net_row].guid;
    CHECK(first == guid(2));
    CHECK(part.part(1, 2).sql == w.upserts[i].part(2, 3).sql);
  }
  // Deletes name keys only and are never split.
  CHECK_THROWS_AS(Statement{}.part(0, 1), Error);
  CHECK_THROWS_AS(w.upserts[0].part(2, 2), Error);
  CHECK_THROWS_AS(w.upserts[0].part(3, 5), Error);
}

TEST_CASE("keyed edge deletes: random pairs share a statement, narrowed by a CASE") {
  // (1, 11) (2, 12) (3, 13) (4, 14) (5, 15) and (6, 21..25): five keys to a statement.
  NetWindow net;
  const auto add = [&](int a, int b) {
    EdgeRow r;
    r.a = guid(a);
    r.elabel = "cols";
    r.b = guid(b);
    r.delete_first = true;
    net.edge_out.push_back(r);
  };
  for (int a = 5; a >= 1; --a) add(a, 10 + a);
  for (int b = 21; b <= 27; ++b) add(6, b);
  add(7, 11);
  CompileOptions o;
  o.batch_rows = 5;
  o.annotate = true;
  const CompiledWindow w = plan_window(net, o);
  const auto k = [](int n) { return "'" + hex(n) + "'"; };
  const auto list = [&](std::initializer_list<int> ns) {
    std::string s;
    for (int n : ns) s += (s.empty() ? "" : ", ") + k(n);
    return s;
  };
  REQUIRE(w.deletes.size() == 3);
  CHECK(w.deletes[0].sql ==
        "DELETE FROM `atlas`.`edge_out` WHERE `src` IN (" + list({1, 2, 3, 4, 5}) +
            ") AND `elabel` IN ('cols') AND `dst` IN (" + list({11, 12, 13, 14, 15}) +
            ") AND CASE `src` WHEN " + k(1) + " THEN `dst` IN (" + k(11) + ") WHEN " + k(2) +
            " THEN `dst` IN (" + k(12) + ") WHEN " + k(3) + " THEN `dst` IN (" + k(13) + ") WHEN " +
            k(4) + " THEN `dst` IN (" + k(14) + ") WHEN " + k(5) + " THEN `dst` IN (" + k(15) +
            ") END");
  // An a with more keys than a statement holds is cut; its parts never share a statement (an a
  // is named once in a CASE), but its last part takes the next a along.
  CHECK(w.deletes[1].sql == "DELETE FROM `atlas`.`edge_out` WHERE `src` IN (" + k(6) +
                                ") AND `elabel` IN ('cols') AND `dst` IN (" +
                                list({21, 22, 23, 24, 25}) + ")");
  CHECK(w.deletes[2].sql == "DELETE FROM `atlas`.`edge_out` WHERE `src` IN (" + list({6, 7}) +
                                ") AND `elabel` IN ('cols') AND `dst` IN (" + list({11, 26, 27}) +
                                ") AND CASE `src` WHEN " + k(6) + " THEN `dst` IN (" +
                                list({26, 27}) + ") WHEN " + k(7) + " THEN `dst` IN (" + k(11) +
                                ") END");
  std::size_t keys = 0;
  for (const Statement& s : w.deletes) {
    keys += s.rows;
    CHECK(s.deleted_rows.size() == s.rows);  // --annotate: the window row of every key
  }
  CHECK(keys == net.edge_out.size());

  // batch_bytes cuts too (400 bytes: one key to a statement here).
  o.batch_rows = 1000;
  o.batch_bytes = 400;
  const CompiledWindow small = plan_window(net, o);
  keys = 0;
  for (const Statement& s : small.deletes) {
    CHECK(s.sql.size() <= 400);
    keys += s.rows;
  }
  CHECK(keys == net.edge_out.size());
  CHECK(small.deletes.size() > w.deletes.size());
}

TEST_CASE("keyed edge deletes: a CASE holds at most 4999 WHENs, whatever batch_rows says") {
  // Impala refuses an expression of more than 10000 children: one for the CASE's operand, two per
  // WHEN.
  const auto wide_guid = [](int n) {  // guid() keeps one byte of n
    Guid g = guid(n);
    g.bytes[2] = static_cast<std::uint8_t>(n >> 8);
    g.bytes[1] = static_cast<std::uint8_t>(n >> 16);
    return g;
  };
  NetWindow net;
  for (int a = 1; a <= 5001; ++a) {
    EdgeRow r;
    r.a = wide_guid(a);
    r.elabel = "cols";
    r.b = wide_guid(100000 + a);
    r.delete_first = true;
    net.edge_out.push_back(r);
  }
  CompileOptions o;
  o.batch_rows = 6000;
  o.batch_bytes = 16 << 20;
  const CompiledWindow w = plan_window(net, o);
  REQUIRE(w.deletes.size() == 2);
  const auto whens = [](const std::string& sql) {
    std::size_t n = 0;
    for (std::size_t at = sql.find(" WHEN "); at != std::string::npos;
         at = sql.find(" WHEN ", at + 1))
      ++n;
    return n;
  };
  CHECK(w.deletes[0].rows == 4999);
  CHECK(whens(w.deletes[0].sql) == 4999);
  CHECK(w.deletes[1].rows == 2);
  CHECK(whens(w.deletes[1].sql) == 2);
}

TEST_CASE("a tag clean-up keeping more tags than an IN-list holds: several NOT IN-lists") {
  // One event may list any number of tags; Impala refuses an IN-list of more than 9999 items.
  NetWindow net;
  std::vector<std::string> keep;
  for (int i = 0; i < 10001; ++i) keep.push_back(fmt::format("T{:05}", i));
  net.tag_cleanups = {{guid(1), keep}};
  const CompiledWindow w = plan_window(net, CompileOptions{});
  REQUIRE(w.deletes.size() == 1);
  const std::string& sql = w.deletes[0].sql;
  const std::string head = "DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN ('" +
                           hex(1) + "') AND `tag_name` NOT IN ('T00000', ";
  CHECK(sql.starts_with(head));
  const std::size_t second = sql.find(") AND `tag_name` NOT IN ('T09999', 'T10000')");
  REQUIRE(second != std::string::npos);
  CHECK(sql.size() ==
        second + std::string_view(") AND `tag_name` NOT IN ('T09999', 'T10000')").size());
  CHECK(std::count(sql.begin(), sql.begin() + static_cast<std::ptrdiff_t>(second), ',') == 9998);
  CHECK(sql.find("'T09998') AND") == second - 8);
}

TEST_CASE("--batch-rows: at most 9999, the items an IN-list may hold in Impala") {
  CompileOptions o;
  o.batch_rows = kMaxBatchRows;
  CHECK_NOTHROW(validate_compile_options(o));
  o.batch_rows = kMaxBatchRows + 1;
  try {
    validate_compile_options(o);
    FAIL("validate_compile_options accepted --batch-rows 10000");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::kUsage);
    CHECK(std::string(e.what()) ==
          "--batch-rows must be at most 9999 (Impala refuses an IN-list of more keys)");
  }
}

TEST_SUITE_END();
