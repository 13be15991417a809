// Golden SQL for each case of the mapping from events to rows and the ordering traps of net
// effect per window (--prior none).
// Every expected script was checked by hand against the one-event-at-a-time semantics; the
// randomized equivalence test (equivalence_test.cpp) checks the same property mechanically.
#include <doctest/doctest.h>

#include "atlas2kudu/compiler.h"
#include "compiler_events.h"

TEST_SUITE_BEGIN("compiler_golden");

using namespace atlas2kudu;
using namespace atlas2kudu::test;
using O = Operation;

namespace {

// The script without its three header lines (tested in compiler_script_test.cpp).
std::string body(std::vector<Event> events, CompileOptions options = {}) {
  std::string s = compile_to_sql(events, options);
  for (int i = 0; i < 3; ++i) s = s.substr(s.find('\n') + 1);
  return s;
}

CompileOptions hard_tombstones() {
  CompileOptions o;
  o.tombstone = Tombstone::kHard;
  return o;
}

}  // namespace

TEST_CASE(
    "golden: ENTITY_CREATE of an unknown entity: full flat row, by_qn clean-up under prior none, "
    "audit") {
  CHECK(body({create({.id = 1,
                      .qn = "db.t1@c",
                      .name = "t1",
                      .attrs = {attr("owner", "\"a\""), attr("createTime", "5")},
                      .ms = 1})}) ==
        R"sql(-- window 1: events 1-1
-- window 1 phase 1: deletes (1 statement)
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000001000040008000000000000001') AND `qn_digest` NOT IN ('de09793dfc2386f36591aaf9fc831606');
-- window 1 phase 2: upserts (3 statements)
UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES
('de09793dfc2386f36591aaf9fc831606', '00000001000040008000000000000001', 'hive_table');
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000001000040008000000000000001', 1000, 1000004, 'ENTITY_CREATE', 'hive_table', 'db.t1@c', '{"attributes":["createTime","name","owner","qualifiedName"]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `created_ts`, `updated_ts`, `props_json`) VALUES
('00000001000040008000000000000001', 'hive_table', 'db.t1@c', 't1', 'ACTIVE', 1000, 1000, '{"createTime":5,"owner":"a"}');
)sql");
}

TEST_CASE("golden: a partial update merges props and keeps created_ts and the qualifiedName") {
  CHECK(body({create({.id = 1, .qn = "q", .name = "t", .attrs = {attr("owner", "\"a\"")}, .ms = 1}),
              update({.id = 1,
                      .name = "t2",
                      .attrs = {attr("owner", "\"b\""), attr("n", "1")},
                      .ms = 2})}) ==
        R"sql(-- window 1: events 1-2
-- window 1 phase 1: deletes (1 statement)
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000001000040008000000000000001') AND `qn_digest` NOT IN ('eef327bfae727eb455798d61bf64a11c');
-- window 1 phase 2: upserts (3 statements)
UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES
('eef327bfae727eb455798d61bf64a11c', '00000001000040008000000000000001', 'hive_table');
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000001000040008000000000000001', 1000, 1000004, 'ENTITY_CREATE', 'hive_table', 'q', '{"attributes":["name","owner","qualifiedName"]}'),
('00000001000040008000000000000001', 2000, 2000108, 'ENTITY_UPDATE', 'hive_table', NULL, '{"attributes":["n","name","owner"]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `created_ts`, `updated_ts`, `props_json`) VALUES
('00000001000040008000000000000001', 'hive_table', 'q', 't2', 'ACTIVE', 1000, 2000, '{"n":1,"owner":"b"}');
)sql");
}

TEST_CASE(
    "golden: an update of an unknown entity writes only the columns it carries, and drops its "
    "by_qn rows under other types") {
  // Its stored type is unknown: if it changed, a by_qn row under the old type is stale (and the
  // new digest needs the stored qualifiedName, which is unknown too).
  CHECK(body({update({.id = 1, .name = "t2", .ms = 2})}) ==
        R"sql(-- window 1: events 1-1
-- window 1 phase 1: deletes (1 statement)
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000001000040008000000000000001') AND `type_name` NOT IN ('hive_table');
-- window 1 phase 2: upserts (2 statements)
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000001000040008000000000000001', 2000, 2000108, 'ENTITY_UPDATE', 'hive_table', NULL, '{"attributes":["name"]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `name`, `state`, `updated_ts`) VALUES
('00000001000040008000000000000001', 'hive_table', 't2', 'ACTIVE', 2000);
)sql");
}

TEST_CASE(
    "golden: update -> soft delete -> update: the delete drops by_qn and edges, props survive") {
  CHECK(body({update({.id = 1, .qn = "q", .attrs = {attr("a", "1")}, .ms = 1}),
              remove({.id = 1, .qn = "q", .attrs = {attr("b", "2")}, .ms = 2}),
              update({.id = 1, .attrs = {attr("c", "3")}, .ms = 3})}) ==
        R"sql(-- window 1: events 1-3
-- window 1 phase 1: deletes (7 statements)
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('eef327bfae727eb455798d61bf64a11c');
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('eef327bfae727eb455798d61bf64a11c') AND `guid` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000001000040008000000000000001') AND `qn_digest` NOT IN ('eef327bfae727eb455798d61bf64a11c');
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_out` WHERE `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `src` IN ('00000001000040008000000000000001');
-- window 1 phase 2: upserts (2 statements)
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000001000040008000000000000001', 1000, 1000105, 'ENTITY_UPDATE', 'hive_table', 'q', '{"attributes":["a","qualifiedName"]}'),
('00000001000040008000000000000001', 2000, 2000209, 'ENTITY_DELETE', 'hive_table', 'q', '{"attributes":["b","qualifiedName"]}'),
('00000001000040008000000000000001', 3000, 3000111, 'ENTITY_UPDATE', 'hive_table', NULL, '{"attributes":["c"]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `state`, `updated_ts`, `props_json`) VALUES
('00000001000040008000000000000001', 'hive_table', 'q', 'ACTIVE', 3000, '{"a":1,"c":3}');
)sql");
}

TEST_CASE(
    "golden: create -> hard delete -> create: keyed delete, then a full row with explicit NULLs") {
  CHECK(body({create({.id = 1, .qn = "q", .name = "n", .attrs = {attr("a", "1")}, .ms = 1}),
              remove({.id = 1, .ms = 2}), create({.id = 1, .qn = "q", .ms = 3})},
             hard_tombstones()) ==
        R"sql(-- window 1: events 1-3
-- window 1 phase 1: deletes (9 statements)
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('eef327bfae727eb455798d61bf64a11c');
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('eef327bfae727eb455798d61bf64a11c') AND `guid` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000001000040008000000000000001') AND `qn_digest` NOT IN ('eef327bfae727eb455798d61bf64a11c');
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_out` WHERE `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `src` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN ('00000001000040008000000000000001');
-- window 1 phase 2: upserts (3 statements)
UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES
('eef327bfae727eb455798d61bf64a11c', '00000001000040008000000000000001', 'hive_table');
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000001000040008000000000000001', 1000, 1000004, 'ENTITY_CREATE', 'hive_table', 'q', '{"attributes":["a","name","qualifiedName"]}'),
('00000001000040008000000000000001', 2000, 2000209, 'ENTITY_DELETE', 'hive_table', NULL, '{"attributes":[]}'),
('00000001000040008000000000000001', 3000, 3000010, 'ENTITY_CREATE', 'hive_table', 'q', '{"attributes":["qualifiedName"]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `created_ts`, `updated_ts`, `props_json`) VALUES
('00000001000040008000000000000001', 'hive_table', 'q', NULL, 'ACTIVE', 3000, 3000, '{}');
)sql");
}

TEST_CASE("golden: two entities trade qualifiedNames in one window (scenario 02)") {
  CHECK(body({create({.id = 1, .qn = "x", .name = "a", .ms = 1}),
              create({.id = 2, .qn = "y", .name = "b", .ms = 2}),
              update({.id = 1, .qn = "y", .ms = 10}), update({.id = 2, .qn = "x", .ms = 11})}) ==
        R"sql(-- window 1: events 1-4
-- window 1 phase 1: deletes (3 statements)
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('a133b929d025382590861f24933d3adc');
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('a133b929d025382590861f24933d3adc', 'f61685ff936da65f8ed7ca69a5bdd180') AND `guid` IN ('00000001000040008000000000000001', '00000002000040008000000000000002');
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000001000040008000000000000001', '00000002000040008000000000000002') AND `qn_digest` NOT IN ('a133b929d025382590861f24933d3adc', 'f61685ff936da65f8ed7ca69a5bdd180');
-- window 1 phase 2: upserts (3 statements)
UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES
('a133b929d025382590861f24933d3adc', '00000002000040008000000000000002', 'hive_table'),
('f61685ff936da65f8ed7ca69a5bdd180', '00000001000040008000000000000001', 'hive_table');
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000001000040008000000000000001', 1000, 1000004, 'ENTITY_CREATE', 'hive_table', 'x', '{"attributes":["name","qualifiedName"]}'),
('00000001000040008000000000000001', 10000, 10000132, 'ENTITY_UPDATE', 'hive_table', 'y', '{"attributes":["qualifiedName"]}'),
('00000002000040008000000000000002', 2000, 2000008, 'ENTITY_CREATE', 'hive_table', 'y', '{"attributes":["name","qualifiedName"]}'),
('00000002000040008000000000000002', 11000, 11000136, 'ENTITY_UPDATE', 'hive_table', 'x', '{"attributes":["qualifiedName"]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `created_ts`, `updated_ts`) VALUES
('00000001000040008000000000000001', 'hive_table', 'y', 'a', 'ACTIVE', 1000, 10000),
('00000002000040008000000000000002', 'hive_table', 'x', 'b', 'ACTIVE', 2000, 11000);
)sql");
}

TEST_CASE(
    "golden: a type change without qualifiedName re-keys by_qn with the stored name (scenario "
    "10)") {
  CHECK(body({create({.id = 11, .type = "DataSet", .qn = "qx", .name = "x", .ms = 1}),
              update({.id = 11, .type = "hdfs_path", .name = "x", .ms = 2})}) ==
        R"sql(-- window 1: events 1-2
-- window 1 phase 1: deletes (3 statements)
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('19d05313d5055027c106969bcd9a6759');
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('19d05313d5055027c106969bcd9a6759') AND `guid` IN ('0000000b00004000800000000000000b');
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('0000000b00004000800000000000000b') AND `qn_digest` NOT IN ('19d05313d5055027c106969bcd9a6759');
-- window 1 phase 2: upserts (3 statements)
UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES
('756e1a2efd40e565cd4fef33a12737d8', '0000000b00004000800000000000000b', 'hdfs_path');
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('0000000b00004000800000000000000b', 1000, 1000014, 'ENTITY_CREATE', 'DataSet', 'qx', '{"attributes":["name","qualifiedName"]}'),
('0000000b00004000800000000000000b', 2000, 2000118, 'ENTITY_UPDATE', 'hdfs_path', NULL, '{"attributes":["name"]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `name`, `state`, `created_ts`, `updated_ts`) VALUES
('0000000b00004000800000000000000b', 'hdfs_path', 'qx', 'x', 'ACTIVE', 1000, 2000);
)sql");
}

TEST_CASE(
    "golden: the tag set shrinks, then becomes empty: first entry wins, keyed deletes once known") {
  CHECK(body({tags(7, {{"PII_EMAIL", 7}, {"PII", 7}, {"PII", 7}, {"GDPR", 8}}, 3),
              tags(7, {{"PII_EMAIL", 7}, {"PII", 7}}, 4, O::kClassificationDelete),
              tags(7, {}, 5, O::kClassificationDelete)}) ==
        R"sql(-- window 1: events 1-3
-- window 1 phase 1: deletes (3 statements)
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000007000040008000000000000007') AND `type_name` NOT IN ('hive_table');
DELETE FROM `atlas`.`entity_classifications` WHERE `tag_name` IN ('GDPR', 'PII', 'PII_EMAIL') AND `guid` IN ('00000007000040008000000000000007');
DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN ('00000007000040008000000000000007') AND `tag_name` NOT IN ('GDPR', 'PII', 'PII_EMAIL');
-- window 1 phase 2: upserts (2 statements)
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000007000040008000000000000007', 3000, 3000319, 'CLASSIFICATION_ADD', 'hive_table', NULL, '{"attributes":[],"classifications":["GDPR","PII","PII_EMAIL"]}'),
('00000007000040008000000000000007', 4000, 4000423, 'CLASSIFICATION_DELETE', 'hive_table', NULL, '{"attributes":[],"classifications":["PII","PII_EMAIL"]}'),
('00000007000040008000000000000007', 5000, 5000426, 'CLASSIFICATION_DELETE', 'hive_table', NULL, '{"attributes":[],"classifications":[]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `state`, `updated_ts`) VALUES
('00000007000040008000000000000007', 'hive_table', 'ACTIVE', 5000);
)sql");
}

TEST_CASE(
    "golden: a tag both on the entity and propagated to it is the entity's own; of two sources, "
    "the "
    "smaller") {
  // Atlas lists direct and propagated tags together; in either order, the row is the direct one.
  Event propagated_first = tags(7, {{"PII", 8}, {"PII", 7}, {"GDPR", 8}, {"GDPR", 9}}, 3);
  propagated_first.classifications[0].attributes_json = R"({"from":"8"})";
  propagated_first.classifications[1].attributes_json = R"({"own":true})";
  // Propagated from two sources, the larger listed first: the smaller source's entry, whatever
  // the order.
  Event direct_first = tags(5, {{"PII", 5}, {"PII", 8}, {"GDPR", 9}, {"GDPR", 8}}, 4);
  direct_first.classifications[1].attributes_json = R"({"from":"8"})";
  direct_first.classifications[2].attributes_json = R"({"from":"9"})";
  direct_first.classifications[3].attributes_json = R"({"from":"8"})";
  CHECK(body({propagated_first, direct_first}) ==
        R"sql(-- window 1: events 1-2
-- window 1 phase 1: deletes (2 statements)
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000005000040008000000000000005', '00000007000040008000000000000007') AND `type_name` NOT IN ('hive_table');
DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN ('00000005000040008000000000000005', '00000007000040008000000000000007') AND `tag_name` NOT IN ('GDPR', 'PII');
-- window 1 phase 2: upserts (3 statements)
UPSERT INTO `atlas`.`entity_classifications` (`tag_name`, `guid`, `propagated`, `source_guid`, `attrs_json`, `updated_ts`) VALUES
('GDPR', '00000005000040008000000000000005', TRUE, '00000008000040008000000000000008', '{"from":"8"}', 4000),
('GDPR', '00000007000040008000000000000007', TRUE, '00000008000040008000000000000008', '{}', 3000),
('PII', '00000005000040008000000000000005', FALSE, '00000005000040008000000000000005', '{}', 4000),
('PII', '00000007000040008000000000000007', FALSE, '00000007000040008000000000000007', '{"own":true}', 3000);
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000005000040008000000000000005', 4000, 4000320, 'CLASSIFICATION_ADD', 'hive_table', NULL, '{"attributes":[],"classifications":["GDPR","PII"]}'),
('00000007000040008000000000000007', 3000, 3000319, 'CLASSIFICATION_ADD', 'hive_table', NULL, '{"attributes":[],"classifications":["GDPR","PII"]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `state`, `updated_ts`) VALUES
('00000005000040008000000000000005', 'hive_table', 'ACTIVE', 4000),
('00000007000040008000000000000007', 'hive_table', 'ACTIVE', 3000);
)sql");
}

TEST_CASE("golden: the tags of an entity deleted change its tags only, not its state or name") {
  // Atlas removes the tags propagated to an entity it soft-deletes after the delete, in a
  // CLASSIFICATION_DELETE whose header says DELETED: the entity stays DELETED, and its name stays
  // with the entity created with it since.
  Event late_tags = tags(1, {}, 4, O::kClassificationDelete);
  late_tags.qualified_name = "db.t@cl";
  late_tags.header_deleted = true;
  CHECK(body({create({.id = 1, .qn = "db.t@cl", .ms = 1}), remove({.id = 1, .ms = 2}),
              create({.id = 2, .qn = "db.t@cl", .ms = 3}), late_tags}) ==
        R"sql(-- window 1: events 1-4
-- window 1 phase 1: deletes (8 statements)
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('c816104ecd79f81707ad2594cfee4fa6');
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('c816104ecd79f81707ad2594cfee4fa6') AND `guid` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000001000040008000000000000001', '00000002000040008000000000000002') AND `qn_digest` NOT IN ('c816104ecd79f81707ad2594cfee4fa6');
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_out` WHERE `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `src` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN ('00000001000040008000000000000001');
-- window 1 phase 2: upserts (3 statements)
UPSERT INTO `atlas`.`entity_by_qn` (`qn_digest`, `guid`, `type_name`) VALUES
('c816104ecd79f81707ad2594cfee4fa6', '00000002000040008000000000000002', 'hive_table');
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000001000040008000000000000001', 1000, 1000004, 'ENTITY_CREATE', 'hive_table', 'db.t@cl', '{"attributes":["qualifiedName"]}'),
('00000001000040008000000000000001', 2000, 2000209, 'ENTITY_DELETE', 'hive_table', NULL, '{"attributes":[]}'),
('00000001000040008000000000000001', 4000, 4000417, 'CLASSIFICATION_DELETE', 'hive_table', 'db.t@cl', '{"attributes":["qualifiedName"],"classifications":[]}'),
('00000002000040008000000000000002', 3000, 3000011, 'ENTITY_CREATE', 'hive_table', 'db.t@cl', '{"attributes":["qualifiedName"]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `state`, `created_ts`, `updated_ts`) VALUES
('00000001000040008000000000000001', 'hive_table', 'db.t@cl', 'DELETED', 1000, 2000),
('00000002000040008000000000000002', 'hive_table', 'db.t@cl', 'ACTIVE', 3000, 3000);
)sql");
  // Under --tombstone hard the entity has no rows left: not even a tag row is written for it.
  CompileOptions hard;
  hard.tombstone = Tombstone::kHard;
  Event late_add = tags(1, {{"PII", 1}}, 4, O::kClassificationAdd);
  late_add.header_deleted = true;
  CHECK(body({create({.id = 1, .qn = "db.t@cl", .ms = 1}), remove({.id = 1, .ms = 2}), late_add},
             hard) ==
        R"sql(-- window 1: events 1-3
-- window 1 phase 1: deletes (9 statements)
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('c816104ecd79f81707ad2594cfee4fa6');
DELETE FROM `atlas`.`entity_by_qn` WHERE `qn_digest` IN ('c816104ecd79f81707ad2594cfee4fa6') AND `guid` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000001000040008000000000000001') AND `qn_digest` NOT IN ('c816104ecd79f81707ad2594cfee4fa6');
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_out` WHERE `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `src` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`entity_classifications` WHERE `guid` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN ('00000001000040008000000000000001');
-- window 1 phase 2: upserts (1 statement)
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000001000040008000000000000001', 1000, 1000004, 'ENTITY_CREATE', 'hive_table', 'db.t@cl', '{"attributes":["qualifiedName"]}'),
('00000001000040008000000000000001', 2000, 2000209, 'ENTITY_DELETE', 'hive_table', NULL, '{"attributes":[]}'),
('00000001000040008000000000000001', 4000, 4000316, 'CLASSIFICATION_ADD', 'hive_table', NULL, '{"attributes":[],"classifications":["PII"]}');
)sql");
}

TEST_CASE("golden: soft delete cascades to edges on both tables; an edge created later survives") {
  CHECK(body({relationship(O::kRelationshipCreate, 1, 2, "r:ab", 1),
              relationship(O::kRelationshipCreate, 3, 1, "", 2), remove({.id = 1, .ms = 3}),
              relationship(O::kRelationshipCreate, 1, 3, "r:ac", 4)}) ==
        R"sql(-- window 1: events 1-4
-- window 1 phase 1: deletes (9 statements)
DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000001000040008000000000000001') AND `elabel` IN ('r:ab') AND `dst` IN ('00000002000040008000000000000002');
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000003000040008000000000000003') AND `elabel` IN ('rel_type') AND `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000002000040008000000000000002') AND `elabel` IN ('r:ab') AND `src` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000001000040008000000000000001') AND `elabel` IN ('rel_type') AND `src` IN ('00000003000040008000000000000003');
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_out` WHERE `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000001000040008000000000000001');
DELETE FROM `atlas`.`edge_in` WHERE `src` IN ('00000001000040008000000000000001');
-- window 1 phase 2: upserts (4 statements)
UPSERT INTO `atlas`.`edge_out` (`src`, `elabel`, `dst`, `dst_type`) VALUES
('00000001000040008000000000000001', 'r:ac', '00000003000040008000000000000003', 't3');
UPSERT INTO `atlas`.`edge_in` (`dst`, `elabel`, `src`, `src_type`) VALUES
('00000003000040008000000000000003', 'r:ac', '00000001000040008000000000000001', 't1');
UPSERT INTO `atlas`.`entity_audit` (`guid`, `event_ts`, `seq`, `op`, `type_name`, `qualified_name`, `detail_json`) VALUES
('00000001000040008000000000000001', 3000, 3000212, 'ENTITY_DELETE', 'hive_table', NULL, '{"attributes":[]}');
UPSERT INTO `atlas`.`entity_flat` (`guid`, `state`, `updated_ts`) VALUES
('00000001000040008000000000000001', 'DELETED', 3000);
)sql");
}

TEST_CASE("golden: a relationship end without a typeName has a NULL type, not ''") {
  Event e = relationship(O::kRelationshipCreate, 1, 2, "r:ab", 1);
  e.relationship.end1.type_name.clear();
  CHECK(body({e}) ==
        R"sql(-- window 1: events 1-1
-- window 1 phase 1: deletes (0 statements)
-- window 1 phase 2: upserts (2 statements)
UPSERT INTO `atlas`.`edge_out` (`src`, `elabel`, `dst`, `dst_type`) VALUES
('00000001000040008000000000000001', 'r:ab', '00000002000040008000000000000002', 't2');
UPSERT INTO `atlas`.`edge_in` (`dst`, `elabel`, `src`, `src_type`) VALUES
('00000002000040008000000000000002', 'r:ab', '00000001000040008000000000000001', NULL);
)sql");
}

TEST_CASE(
    "golden: RELATIONSHIP_UPDATE with status DELETED and a label-less delete remove both sides") {
  CHECK(body({relationship(O::kRelationshipUpdate, 2, 3, "r:links", 3, true),
              relationship(O::kRelationshipDelete, 4, 5, "", 4)}) ==
        R"sql(-- window 1: events 1-2
-- window 1 phase 1: deletes (4 statements)
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000002000040008000000000000002') AND `elabel` IN ('r:links') AND `dst` IN ('00000003000040008000000000000003');
DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('00000004000040008000000000000004') AND `elabel` IN ('rel_type') AND `dst` IN ('00000005000040008000000000000005');
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000003000040008000000000000003') AND `elabel` IN ('r:links') AND `src` IN ('00000002000040008000000000000002');
DELETE FROM `atlas`.`edge_in` WHERE `dst` IN ('00000005000040008000000000000005') AND `elabel` IN ('rel_type') AND `src` IN ('00000004000040008000000000000004');
-- window 1 phase 2: upserts (0 statements)
)sql");
}

TEST_SUITE_END();
