// The fold on its own: events in, NetWindow out, no SQL and no I/O. What the planner and the
// equivalence tests rely on, checked row by row.
#include "compile/fold.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>

#include "atlas2kudu/compiler.h"
#include "compiler_events.h"
#include "util/digest.h"

TEST_SUITE_BEGIN("fold");

using namespace atlas2kudu;
using namespace atlas2kudu::test;

namespace {

QnDigest digest(std::string_view type, std::string_view qn) {
  return qn_digest(type, qn);
}

template <typename Row, typename Pred>
const Row* find_row(const std::vector<Row>& rows, Pred pred) {
  const auto it = std::find_if(rows.begin(), rows.end(), pred);
  return it == rows.end() ? nullptr : &*it;
}

// A NetWindow's rows view its events' text (compiler.h), so the events of every fold here are
// kept until the tests end.
NetWindow fold(Folder& folder, std::vector<Event> events) {
  static std::deque<std::vector<Event>> kept;
  const std::vector<Event>& window = kept.emplace_back(std::move(events));
  NetWindow net;
  folder.fold(window, net);
  return net;
}

}  // namespace

TEST_CASE("a rename within the window: the old digest is cancelled, the new one upserted") {
  Folder folder({});
  const NetWindow net =
      fold(folder, {create({.id = 1, .qn = "x", .ms = 1}), update({.id = 1, .qn = "y", .ms = 2})});
  const ByQnRow* x =
      find_row(net.by_qn, [&](const ByQnRow& r) { return r.digest == digest("hive_table", "x"); });
  const ByQnRow* y =
      find_row(net.by_qn, [&](const ByQnRow& r) { return r.digest == digest("hive_table", "y"); });
  REQUIRE(x);
  REQUIRE(y);
  CHECK(x->delete_first);
  CHECK_FALSE(x->upsert);
  CHECK(y->upsert);
  CHECK(y->guid == guid(1));
  // Nothing was known of the entity before its create (--prior none): a by_qn row of an earlier
  // life may map to it, so the create cleans up everything but its own digest; the rename then
  // knows the digest it replaces and deletes it guarded by the guid.
  REQUIRE(net.by_qn_cleanups.size() == 1);
  CHECK(net.by_qn_cleanups[0].guid == guid(1));
  CHECK(net.by_qn_cleanups[0].keep == std::vector<QnDigest>{digest("hive_table", "x")});
  CHECK(net.by_qn_guarded ==
        std::vector<std::pair<QnDigest, Guid>>{{digest("hive_table", "x"), guid(1)}});
  // One entity_flat row: the create's columns, then the rename's qualified_name.
  REQUIRE(net.flat.size() == 1);
  CHECK(net.flat[0].qualified_name == "y");
  CHECK(net.flat[0].created_ts == 1000);
  CHECK(net.flat[0].updated_ts == 2000);
  CHECK((net.flat[0].mask & FlatRow::kCreatedTs) != 0);
}

TEST_CASE("an entity the run knows nothing about: predicate clean-ups and cascades") {
  Folder folder({});
  const NetWindow net = fold(folder, {remove({.id = 2, .ms = 5})});
  REQUIRE(net.by_qn_cleanups.size() == 1);
  CHECK(net.by_qn_cleanups[0].guid == guid(2));
  CHECK(net.by_qn_cleanups[0].keep.empty());
  CHECK(net.edge_cascades == std::vector<Guid>{guid(2)});
  // Soft delete: state and updated_ts only, nothing else of the row is touched.
  REQUIRE(net.flat.size() == 1);
  CHECK(net.flat[0].upsert);
  CHECK(net.flat[0].state_deleted);
  CHECK(net.flat[0].mask == (FlatRow::kState | FlatRow::kUpdatedTs));
  REQUIRE(net.audit.size() == 1);
  CHECK(net.audit[0].op == Operation::kEntityDelete);
}

TEST_CASE("unknown_entities and learn: the fold asks nothing itself") {
  Folder folder({});
  const std::vector<Event> window = {update({.id = 3, .qn = "q3", .ms = 1}),
                                     relationship(Operation::kRelationshipCreate, 7, 8, "l", 2),
                                     tags(1, {{"PII", 1}}, 3), update({.id = 3, .ms = 4})};
  // Distinct, ascending, and relationship ends are not entities to look up.
  CHECK(folder.unknown_entities(window) == std::vector<Guid>{guid(1), guid(3)});

  PriorEntity stored;
  stored.guid = guid(3);
  stored.exists = true;
  stored.type_name = "hive_table";
  stored.qualified_name = "old";
  stored.props_json = R"({"owner":"a"})";
  PriorEntity absent;
  absent.guid = guid(1);
  folder.learn(std::vector<PriorEntity>{stored, absent});
  CHECK(folder.unknown_entities(window).empty());

  const NetWindow net = fold(folder, window);
  // The stored qualified name is known: a guarded delete of its digest, no predicate clean-up.
  CHECK(net.by_qn_cleanups.empty());
  CHECK(net.by_qn_guarded ==
        std::vector<std::pair<QnDigest, Guid>>{{digest("hive_table", "old"), guid(3)}});
  // The stored tag set of guid 1 is known (empty): no tag clean-up predicate.
  CHECK(net.tag_cleanups.empty());
  // props are known from the stored cell, so the row's props_json is written whole.
  const FlatRow* f3 = find_row(net.flat, [](const FlatRow& r) { return r.guid == guid(3); });
  REQUIRE(f3);
  CHECK(f3->props_json == R"({"owner":"a"})");
  CHECK(f3->qualified_name == "q3");
  // Edges: one upsert per side.
  REQUIRE(net.edge_out.size() == 1);
  CHECK(net.edge_out[0].a == guid(7));
  CHECK(net.edge_out[0].b == guid(8));
  CHECK(net.edge_out[0].b_type == "t8");
  REQUIRE(net.edge_in.size() == 1);
  CHECK(net.edge_in[0].a == guid(8));
  CHECK(net.edge_in[0].b_type == "t7");
}

TEST_CASE("knowledge carries across windows: the second window needs no clean-up") {
  Folder folder({});
  (void)fold(folder, {create({.id = 4, .qn = "a", .ms = 1}), tags(4, {{"PII", 4}}, 2)});
  CHECK(folder.unknown_entities(std::vector<Event>{update({.id = 4, .ms = 3})}).empty());
  const NetWindow net = fold(folder, {tags(4, {}, 5)});
  // The tag set shrinks to empty: a keyed delete of the known tag, not a predicate.
  CHECK(net.tag_cleanups.empty());
  REQUIRE(net.tags.size() == 1);
  CHECK(net.tags[0].tag_name == "PII");
  CHECK(net.tags[0].delete_first);
  CHECK_FALSE(net.tags[0].upsert);
}

TEST_CASE("a hard delete then a re-create lists every column of the new row") {
  CompileOptions o;
  o.tombstone = Tombstone::kHard;
  Folder folder(o);
  const NetWindow net =
      fold(folder, {create({.id = 5, .qn = "a", .ms = 1}), remove({.id = 5, .ms = 2}),
                    create({.id = 5, .qn = "b", .ms = 3})});
  REQUIRE(net.flat.size() == 1);
  CHECK(net.flat[0].delete_first);
  CHECK(net.flat[0].upsert);
  CHECK(net.flat[0].qualified_name == "b");
  CHECK(net.edge_cascades == std::vector<Guid>{guid(5)});
  // Three audit rows, in event order.
  REQUIRE(net.audit.size() == 3);
  CHECK(net.audit[1].op == Operation::kEntityDelete);
}

TEST_SUITE_END();
