// compile --annotate (compile/annotate.h): a comment line before each statement naming the events
// behind it, which never changes the statements themselves.
#include <doctest/doctest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "compiler_events.h"
#include "stream_generator.h"

TEST_SUITE_BEGIN("annotate");

using namespace atlas2kudu;
using namespace atlas2kudu::test;
using O = Operation;

namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The script without its comment lines.
std::string statements_only(const std::string& sql) {
  std::string out;
  for (const std::string& line : lines(sql)) {
    if (line.rfind("-- ", 0) != 0) out += line + "\n";
  }
  return out;
}

// The annotation lines: the comment lines that are neither header nor window/phase lines.
std::vector<std::string> annotations(const std::string& sql) {
  std::vector<std::string> out;
  for (const std::string& line : lines(sql)) {
    if (line.rfind("-- ", 0) == 0 && line.rfind("-- window ", 0) != 0 &&
        line.rfind("-- atlas2kudu ", 0) != 0 && line.rfind("-- options: ", 0) != 0 &&
        line.rfind("-- prior state: ", 0) != 0) {
      out.push_back(line);
    }
  }
  return out;
}

// Gives the events the positions a reader would: `source`:1, :2, ...
void place(std::vector<Event>& events, std::string_view source) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    events[i].pos.source = source;
    events[i].pos.line = i + 1;
    events[i].pos.offset = i * 100;
    events[i].pos.record = i;
  }
}

CompileOptions annotated(CompileOptions o = {}) {
  o.annotate = true;
  return o;
}

std::size_t count(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("annotate: each statement names its rows, events and their positions") {
  std::vector<Event> events = {
      create({.id = 1, .qn = "db.t1@c", .name = "t1", .ms = 1}),
      create({.id = 2, .qn = "db.t2@c", .name = "t2", .ms = 2}),
      update({.id = 1, .name = "t1b", .ms = 3}),
      relationship(O::kRelationshipCreate, 1, 2, "owns", 4),
  };
  place(events, "in.jsonl");
  const std::string sql = compile_to_sql(events, annotated());
  const std::vector<std::string> notes = annotations(sql);
  // entity_flat: both entities in one statement, from events 1 .. 3.
  CHECK(sql.find("-- entity_flat: 2 rows from 3 events, in.jsonl:1 .. in.jsonl:3\nUPSERT INTO "
                 "`atlas`.`entity_flat`") != std::string::npos);
  // A single-row statement names its row: the edge, with both ends and its label.
  CHECK(sql.find("-- edge_out: edge 00000001-0000-4000-8000-000000000001 -> "
                 "00000002-0000-4000-8000-000000000002 (owns); event in.jsonl:4\nUPSERT INTO "
                 "`atlas`.`edge_out`") != std::string::npos);
  // The by_qn clean-ups of the two unknown entities (prior none): two keys, their creates and
  // the update of entity 1.
  CHECK(sql.find("-- entity_by_qn: 2 keys from 3 events, in.jsonl:1 .. in.jsonl:3\nDELETE FROM") !=
        std::string::npos);
  // Relationship events write no audit row.
  CHECK(sql.find("-- entity_audit: 3 rows from 3 events, in.jsonl:1 .. in.jsonl:3\n") !=
        std::string::npos);
  // One annotation per statement, right before it.
  const std::vector<std::string> all = lines(sql);
  std::size_t statements = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].rfind("UPSERT ", 0) == 0 || all[i].rfind("DELETE ", 0) == 0) {
      ++statements;
      REQUIRE(i > 0);
      CHECK(all[i - 1].rfind("-- ", 0) == 0);
      CHECK(all[i - 1].rfind("-- window ", 0) != 0);
    }
  }
  CHECK(statements == notes.size());
  CHECK(sql.find("-- options: ") != std::string::npos);
  CHECK(lines(sql)[1].find(" --annotate") != std::string::npos);
}

TEST_CASE("annotate: a single-row statement names the dashed guid and its one event") {
  std::vector<Event> events = {remove({.id = 7, .ms = 9})};
  place(events, "a.jsonl");
  CompileOptions o = annotated();
  o.tombstone = Tombstone::kHard;
  const std::string sql = compile_to_sql(events, o);
  CHECK(sql.find("-- entity_flat: guid 00000007-0000-4000-8000-000000000007; event a.jsonl:1\n"
                 "DELETE FROM `atlas`.`entity_flat`") != std::string::npos);
  CHECK(sql.find("-- edge_out: guid 00000007-0000-4000-8000-000000000007; event a.jsonl:1\n"
                 "DELETE FROM `atlas`.`edge_out` WHERE `src`") != std::string::npos);
}

TEST_CASE("annotate: file names and labels cannot end the comment line and inject SQL") {
  const std::string hostile = "x.jsonl\nDROP TABLE `atlas`.`entity_flat`;\r\n-- \xe2\x80\xa8y";
  std::vector<Event> events = {
      create({.id = 1, .qn = "q1", .ms = 1}),
      relationship(O::kRelationshipCreate, 1, 2, "l\nDELETE FROM t;", 2),
  };
  place(events, hostile);
  const std::string sql = compile_to_sql(events, annotated());
  CHECK(sql.find("DROP TABLE") != std::string::npos);  // named, but inside a comment:
  for (const std::string& line : lines(sql)) {
    // The file name only ever appears in comments; the label also in its string literals.
    if (line.find("DROP TABLE") != std::string::npos) CHECK(line.rfind("-- ", 0) == 0);
    CHECK(line.rfind("DELETE FROM t", 0) != 0);
    CHECK(line.find('\r') == std::string::npos);
    CHECK(line.find("\xe2\x80\xa8") == std::string::npos);
  }
  CHECK(sql.find("x.jsonl\\nDROP TABLE `atlas`.`entity_flat`;\\r\\n-- \\u2028y:1") !=
        std::string::npos);
  CHECK(sql.find("(l\\nDELETE FROM t;)") != std::string::npos);
  CHECK(statements_only(sql) == statements_only(compile_to_sql(events, {})));
}

TEST_CASE(
    "annotate: generated streams: the statements are those of the run without, and every "
    "statement has events") {
  std::mt19937_64 rng(20261130);
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    testkit::GeneratorConfig c;
    c.length = 5 + rng() % 60;
    c.guids = 2 + rng() % 7;
    c.tag_names = 1 + rng() % 4;
    c.edge_labels = 1 + rng() % 3;
    std::vector<Event> events = testkit::generate_stream(seed, c);
    place(events, "gen.jsonl");
    CompileOptions o;
    o.tombstone = rng() % 2 ? Tombstone::kHard : Tombstone::kSoft;
    o.key_encoding = rng() % 2 ? KeyEncoding::kBinary : KeyEncoding::kHex;
    const std::size_t windows[] = {1, 3, 8, 1000};
    o.window_events = windows[rng() % std::size(windows)];
    const std::size_t rows[] = {1, 2, 3, 1000};
    o.batch_rows = rows[rng() % std::size(rows)];
    const std::string plain = compile_to_sql(events, o);
    const std::string notes = compile_to_sql(events, annotated(o));
    CHECK_MESSAGE(statements_only(notes) == statements_only(plain), "seed " << seed);
    CHECK_MESSAGE(count(notes, "no event of this window") == 0, "seed " << seed);
    CHECK_MESSAGE(annotations(notes).size() == count(plain, ";\n"), "seed " << seed);
    CHECK_MESSAGE(annotations(plain).empty(), "seed " << seed);
  }
}

TEST_SUITE_END();
