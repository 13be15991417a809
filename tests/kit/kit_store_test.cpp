// Tests of the Kudu store model (tests/kit/kudu_store.h): Kudu write semantics, strictness, dump
// and comparison.
#include <doctest/doctest.h>

#include <string>

#include "kudu_store.h"

TEST_SUITE_BEGIN("kit_store");

using namespace atlas2kudu;
using namespace atlas2kudu::testkit;

namespace {

Guid guid(int n) {
  Guid g;
  g.bytes[0] = static_cast<std::uint8_t>(n);
  g.bytes[15] = static_cast<std::uint8_t>(n);
  return g;
}

}  // namespace

TEST_CASE("store: UPSERT merges listed columns into an existing row, NULLs the rest on insert") {
  KuduStore s;
  const Cell g = s.key(guid(1));
  s.upsert("entity_flat", {"guid", "type_name", "name", "created_ts"},
           {{g, Cell::string("t"), Cell::string("n1"), Cell::i64(5)}});
  const Row* row = s.table("entity_flat").find({g});
  REQUIRE(row);
  CHECK((*row)[1] == Cell::string("t"));
  CHECK((*row)[2].is_null());  // qualified_name: not listed on insert
  CHECK((*row)[5] == Cell::i64(5));

  s.upsert("entity_flat", {"guid", "name", "qualified_name"},
           {{g, Cell::string("n2"), Cell::string("q")}});
  row = s.table("entity_flat").find({g});
  CHECK((*row)[1] == Cell::string("t"));   // kept
  CHECK((*row)[2] == Cell::string("q"));   // set
  CHECK((*row)[3] == Cell::string("n2"));  // overwritten
  CHECK((*row)[5] == Cell::i64(5));        // kept
  CHECK(s.counters().at("entity_flat").rows_upserted == 2);

  // An explicit NULL clears the column: listed means written.
  s.upsert("entity_flat", {"guid", "name"}, {{g, Cell::null()}});
  CHECK(s.table("entity_flat").find({g})->at(3).is_null());
}

TEST_CASE("store: deleting an absent key is a counted row error, not a failure") {
  KuduStore s;
  const Cell g = s.key(guid(1));
  CHECK_FALSE(s.delete_key("entity_flat", {g}));
  CHECK(s.counters().at("entity_flat").row_errors == 1);
  s.upsert_row("entity_flat", {{"guid", g}});
  CHECK(s.delete_key("entity_flat", {g}));
  CHECK(s.counters().at("entity_flat").rows_deleted == 1);
  CHECK(s.table("entity_flat").size() == 0);
}

TEST_CASE("store: predicate DELETE removes every matching row; NULL cells never match") {
  KuduStore s;
  for (int src = 1; src <= 3; ++src) {
    for (int dst = 1; dst <= 3; ++dst) {
      s.upsert_row("edge_out", {{"src", s.key(guid(src))},
                                {"elabel", Cell::string(src == 2 ? "b" : "a")},
                                {"dst", s.key(guid(dst))}});
    }
  }
  CHECK(s.table("edge_out").size() == 9);
  const auto n =
      s.delete_where("edge_out", {{"src", Condition::Op::kIn, {s.key(guid(1)), s.key(guid(2))}},
                                  {"dst", Condition::Op::kNotIn, {s.key(guid(3))}}});
  CHECK(n == 4);
  CHECK(s.table("edge_out").size() == 5);
  // dst_type is NULL everywhere: neither = nor NOT IN matches a NULL.
  CHECK(s.delete_where("edge_out", {{"dst_type", Condition::Op::kNotIn, {Cell::string("x")}}}) ==
        0);
  CHECK(s.delete_where("edge_out", {{"elabel", Condition::Op::kEq, {Cell::string("b")}}}) == 1);
}

TEST_CASE("store: rejects duplicate keys, missing keys, unknown names, type mismatches") {
  KuduStore s;
  const Cell g = s.key(guid(1));
  const auto rejects = [](auto&& f, std::string_view needle) {
    try {
      f();
    } catch (const StoreError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, e.what());
      return;
    }
    FAIL("no StoreError, expected one mentioning " << needle);
  };
  rejects([&] { s.upsert("entity_flat", {"guid"}, {{g}, {g}}); }, "twice");
  rejects([&] { s.upsert("entity_flat", {"name"}, {{Cell::string("x")}}); }, "`guid`");
  rejects([&] { s.upsert("entity_flatt", {"guid"}, {{g}}); }, "unknown table");
  rejects(
      [&] {
        s.upsert("entity_flat", {"guid", "nam"}, {{g, Cell::string("x")}});
      },
      "unknown column `nam`");
  rejects(
      [&] {
        s.upsert("entity_flat", {"guid", "created_ts"}, {{g, Cell::string("1")}});
      },
      "type mismatch");
  rejects([&] { s.upsert("entity_flat", {"guid"}, {{Cell::string("ABC")}}); }, "lowercase hex");
  rejects([&] { s.upsert("entity_flat", {"guid"}, {{Cell::null()}}); }, "cannot be NULL");
  rejects([&] { s.delete_where("entity_flat", {}); }, "without conditions");
  rejects(
      [&] {
        s.delete_where("entity_flat", {{"guid", Condition::Op::kIn, {Cell::null()}}});
      },
      "NULL");
  // A rejected statement changes nothing, even rows before the bad one.
  rejects(
      [&] {
        s.upsert("entity_flat", {"guid", "state"},
                 {{g, Cell::string("ACTIVE")}, {Cell::string("zz"), Cell::string("ACTIVE")}});
      },
      "lowercase hex");
  CHECK(s.table("entity_flat").size() == 0);

  KuduStore b(KeyEncoding::kBinary);
  rejects([&] { b.upsert("entity_flat", {"guid"}, {{Cell::string(guid(1).hex())}}); },
          "no implicit STRING->BINARY cast");
  rejects([&] { b.upsert("entity_flat", {"guid"}, {{Cell::binary("short")}}); }, "16 bytes");
  b.upsert("entity_flat", {"guid"}, {{b.key(guid(1))}});
  CHECK(b.guid_of(b.table("entity_flat").rows().begin()->first[0]) == guid(1));
}

TEST_CASE("store: dump shows hex keys under both encodings and parsed JSON columns") {
  for (const auto enc : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
    KuduStore s(enc);
    s.upsert_row("entity_flat", {{"guid", s.key(guid(2))},
                                 {"name", Cell::string("a\"b\n")},
                                 {"created_ts", Cell::i64(-1)},
                                 {"props_json", Cell::string("{\"k\":1.0}")}});
    s.upsert_row("entity_classifications", {{"tag_name", Cell::string("PII")},
                                            {"guid", s.key(guid(2))},
                                            {"propagated", Cell::boolean_value(true)}});
    const std::string d = s.dump();
    CHECK(d.find("\"guid\":\"0200000000000000000000000000000"
                 "2\"") != std::string::npos);
    CHECK(d.find("\"name\":\"a\\\"b\\n\"") != std::string::npos);
    CHECK(d.find("\"props_json\":{\"k\":1.0}") != std::string::npos);
    CHECK(d.find("\"propagated\":true") != std::string::npos);
    CHECK(d.find("\"row_count\":0") != std::string::npos);
    // A store equals its own dump.
    CHECK_FALSE(compare_with_dump(d, s));
  }
  // A props cell as deep as atlas2kudu writes one (--max-json-depth 1000) is shown as JSON;
  // one level more is not JSON any run wrote.
  for (const int depth : {1000, 1001}) {
    CAPTURE(depth);
    KuduStore s(KeyEncoding::kHex);
    const std::string deep = std::string(static_cast<std::size_t>(depth) - 1, '[') +
                             std::string(static_cast<std::size_t>(depth) - 1, ']');
    s.upsert_row("entity_flat",
                 {{"guid", s.key(guid(3))}, {"props_json", Cell::string("{\"d\":" + deep + "}")}});
    const std::string d = s.dump();
    CHECK((d.find("\"props_json\":{\"d\":" + deep + "}") != std::string::npos) == (depth == 1000));
    CHECK((d.find("\"props_json\":\"!invalid JSON: ") != std::string::npos) == (depth == 1001));
    CHECK_FALSE(compare_with_dump(d, s));
  }
}

TEST_CASE("store: comparison reports the first difference; NULL props equals {}") {
  KuduStore a, b;
  const Cell g = a.key(guid(3));
  a.upsert_row("entity_flat", {{"guid", g}, {"props_json", Cell::string("{}")}});
  b.upsert_row("entity_flat", {{"guid", g}});
  CHECK_FALSE(compare_stores(a, b));

  b.upsert_row("entity_flat", {{"guid", g}, {"props_json", Cell::string("{\"n\":1}")}});
  a.upsert_row("entity_flat", {{"guid", g}, {"props_json", Cell::string("{\"n\":1.0}")}});
  auto diff = compare_stores(a, b);
  REQUIRE(diff);
  CHECK(diff->find("entity_flat") != std::string::npos);
  CHECK(diff->find("props_json") != std::string::npos);
  CHECK(diff->find(guid(3).hex()) != std::string::npos);

  // Same members, whitespace apart: equal.
  b.upsert_row("entity_flat", {{"guid", g}, {"props_json", Cell::string("{ \"n\" : 1.0 }")}});
  CHECK_FALSE(compare_stores(a, b));

  b.upsert_row("entity_by_qn", {{"qn_digest", b.key(guid(9))}, {"guid", g}});
  diff = compare_stores(a, b);
  REQUIRE(diff);
  CHECK(diff->find("entity_by_qn: unexpected row") != std::string::npos);

  // Audit rows: with audit_seq=false only (guid, event_ts, op) multisets matter.
  KuduStore c, d;
  c.upsert_row("entity_audit", {{"guid", g},
                                {"event_ts", Cell::i64(1)},
                                {"seq", Cell::i64(1)},
                                {"op", Cell::string("ENTITY_CREATE")}});
  d.upsert_row("entity_audit", {{"guid", g},
                                {"event_ts", Cell::i64(1)},
                                {"seq", Cell::i64(2)},
                                {"op", Cell::string("ENTITY_CREATE")}});
  CHECK(compare_stores(c, d));
  CHECK_FALSE(compare_stores(c, d, {.audit_seq = false}));
}

TEST_CASE("store: comparison with a dump text names table, row and column") {
  KuduStore s;
  s.upsert_row("entity_flat", {{"guid", s.key(guid(1))}, {"state", Cell::string("ACTIVE")}});
  std::string expected = s.dump();
  const auto at = expected.find("ACTIVE");
  expected.replace(at, 6, "DELETED");
  const auto diff = compare_with_dump(expected, s);
  REQUIRE(diff);
  CHECK(diff->find("entity_flat") != std::string::npos);
  CHECK(diff->find("state") != std::string::npos);
  CHECK(diff->find("DELETED") != std::string::npos);
}

TEST_SUITE_END();
