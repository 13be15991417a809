// Tests of the reference projector (tests/kit/reference_projector.h): every worked scenario of
// tests/data/scenarios under both key encodings and both prior-knowledge modes, the props merge and
// cap rule, and the semantics the scenarios do not pin down.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "atlas2kudu/reader.h"
#include "harness.h"
#include "invariants.h"
#include "reference_projector.h"
#include "stream_generator.h"
#include "util/digest.h"

TEST_SUITE_BEGIN("kit_projector");

using namespace atlas2kudu;
using namespace atlas2kudu::testkit;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The options a scenario's `.options` file names (`--tombstone hard`, `--props-max-bytes N`).
CompileOptions scenario_options(const std::filesystem::path& jsonl) {
  CompileOptions o;
  auto path = jsonl;
  path.replace_extension(".options");
  if (!std::filesystem::exists(path)) return o;
  std::istringstream words(slurp(path));
  std::string w;
  while (words >> w) {
    if (w == "--tombstone") {
      words >> w;
      o.tombstone = w == "hard" ? Tombstone::kHard : Tombstone::kSoft;
    } else if (w == "--props-max-bytes") {
      words >> o.props_max_bytes;
    } else {
      FAIL("unknown scenario option " << w);
    }
  }
  return o;
}

std::vector<std::filesystem::path> scenarios() {
  std::vector<std::filesystem::path> out;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(ATLAS2KUDU_TEST_DATA) + "/scenarios")) {
    if (entry.path().extension() == ".jsonl") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Guid guid(int n) {
  Guid g;
  g.bytes[0] = static_cast<std::uint8_t>(n);
  g.bytes[6] = 0x40;
  g.bytes[15] = static_cast<std::uint8_t>(n);
  return g;
}

Event entity(Operation op, int g, std::string type, std::optional<std::string> qn, std::int64_t t,
             std::vector<Attribute> attrs = {}) {
  Event e;
  e.op = op;
  e.guid = guid(g);
  e.type_name = std::move(type);
  e.qualified_name = std::move(qn);
  e.attributes = std::move(attrs);
  e.event_time_us = t;
  e.audit_seq = t * 7 + g;
  return e;
}

// A JSON string value of n copies of c (built without operator+, which trips GCC 12's
// -Wrestrict false positive).
std::string json_string_of(std::size_t n, char c) {
  std::string s(n + 2, c);
  s.front() = s.back() = '"';
  return s;
}

const Row* flat(const KuduStore& s, int g) {
  return s.table("entity_flat").find({s.key(guid(g))});
}

}  // namespace

TEST_CASE("projector: every scenario, both key encodings, both prior-knowledge modes") {
  const auto all = scenarios();
  REQUIRE(all.size() >= 14);
  for (const auto& path : all) {
    CAPTURE(path.filename().string());
    const CompileOptions options = scenario_options(path);
    auto expected_path = path;
    expected_path.replace_extension(".expected.json");
    const std::string expected = slurp(expected_path);
    REQUIRE(!expected.empty());
    const std::vector<Event> events = read_all_events({path.string()});
    for (const auto enc : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
      for (const auto prior : {PriorKnowledge::kStore, PriorKnowledge::kInputOnly}) {
        const KuduStore store = project(events, options, KuduStore(enc), prior);
        const auto diff = compare_with_dump(expected, store);
        CHECK_MESSAGE(!diff, path.filename().string() << ": " << diff.value_or(""));
      }
    }
  }
}

TEST_CASE("projector: a scenario's tables do not match another scenario's dump") {
  const auto all = scenarios();
  REQUIRE(all.size() >= 2);
  auto other = all[1];
  other.replace_extension(".expected.json");
  const KuduStore store = project(read_all_events({all[0].string()}), {}, KuduStore());
  const auto diff = compare_with_dump(slurp(other), store);
  REQUIRE(diff);
  CHECK(diff->find("entity_flat") != std::string::npos);
}

TEST_CASE("projector: a scenario with its own events redelivered afterwards changes nothing") {
  // Redelivery of every event (a redelivered or replayed input changes nothing) holds
  // for these worked examples: each ends in a state that its own events re-establish.
  for (const auto& path : scenarios()) {
    CAPTURE(path.filename().string());
    const CompileOptions options = scenario_options(path);
    std::vector<Event> events = read_all_events({path.string()});
    const KuduStore once = project(events, options, KuduStore());
    const KuduStore twice = project(events, options, once);
    const auto diff = compare_stores(once, twice);
    CHECK_MESSAGE(!diff, diff.value_or(""));
  }
}

TEST_CASE("merge_props: sorted compact merge, event wins, numbers as written") {
  const std::vector<Attribute> attrs = {{"z", "1.0"}, {"a", "\"x\""}, {"m", "1e3"}, {"a", "2"}};
  CHECK(merge_props("", attrs, 1000) == R"({"a":2,"m":1e3,"z":1.0})");
  CHECK(merge_props(R"({"b":[1, 2],"z":0})", attrs, 1000) ==
        R"({"a":2,"b":[1,2],"m":1e3,"z":1.0})");
  // Keys with characters JSON must escape are quoted minimally.
  CHECK(merge_props("", std::vector<Attribute>{{"k\"\n", "true"}}, 1000) == "{\"k\\\"\\n\":true}");
  // Byte order of keys: upper case, then "_", then lower case, then non-ASCII.
  CHECK(merge_props("",
                    std::vector<Attribute>{{"\xc3\xa9", "1"}, {"b", "1"}, {"B", "1"}, {"_", "1"}},
                    1000) == "{\"B\":1,\"_\":1,\"b\":1,\"\xc3\xa9\":1}");
}

TEST_CASE("merge_props: the cap drops largest values first, ties by key, and lists them") {
  const std::vector<Attribute> attrs = {
      {"big", json_string_of(100, 'x')},
      {"b2", json_string_of(50, 'y')},
      {"b1", json_string_of(50, 'y')},
      {"n", "1"},
  };
  const std::string all = merge_props("", attrs, 10000);
  CHECK(all.size() > 200);
  // Dropping "big" is enough for 150 bytes.
  CHECK(merge_props("", attrs, 150) == R"({"_truncated":["big"],"b1":")" + std::string(50, 'y') +
                                           R"(","b2":")" + std::string(50, 'y') + R"(","n":1})");
  // Then the tie between b1 and b2 (same size) drops b1 first.
  const std::string two = merge_props("", attrs, 100);
  CHECK(two == R"({"_truncated":["b1","big"],"b2":")" + std::string(50, 'y') + R"(","n":1})");
  CHECK(two.size() <= 100);
  // The stored list accumulates, and a key supplied again leaves it.
  const std::string later = merge_props(two, std::vector<Attribute>{{"c", "3"}}, 100);
  CHECK(later ==
        R"({"_truncated":["b1","big"],"b2":")" + std::string(50, 'y') + R"(","c":3,"n":1})");
  const std::string back = merge_props(later, std::vector<Attribute>{{"big", "0"}}, 100);
  CHECK(back ==
        R"({"_truncated":["b1"],"b2":")" + std::string(50, 'y') + R"(","big":0,"c":3,"n":1})");
  CHECK_THROWS_AS(merge_props("", attrs, 10), std::length_error);
}

TEST_CASE("projector: applying to a pre-populated store uses the stored state") {
  KuduStore prior;
  const Cell g1 = prior.key(guid(1));
  prior.upsert_row("entity_flat", {{"guid", g1},
                                   {"type_name", Cell::string("T")},
                                   {"qualified_name", Cell::string("q")},
                                   {"state", Cell::string("ACTIVE")},
                                   {"created_ts", Cell::i64(1)},
                                   {"props_json", Cell::string(R"({"keep":1,"over":2})")}});
  const Cell d = prior.key(Guid{qn_digest("T", "q")});
  prior.upsert_row("entity_by_qn",
                   {{"qn_digest", d}, {"guid", g1}, {"type_name", Cell::string("T")}});

  // Type change without qualifiedName: kStore re-keys with the stored "q".
  const std::vector<Event> events = {
      entity(Operation::kEntityUpdate, 1, "U", std::nullopt, 10, {{"over", "3"}})};
  const KuduStore full = project(events, {}, prior, PriorKnowledge::kStore);
  CHECK((*flat(full, 1))[7] == Cell::string(R"({"keep":1,"over":3})"));
  CHECK((*flat(full, 1))[2] == Cell::string("q"));
  CHECK((*flat(full, 1))[5] == Cell::i64(1));  // created_ts kept by an update
  CHECK(full.table("entity_by_qn").size() == 1);
  CHECK(full.table("entity_by_qn").find({full.key(Guid{qn_digest("U", "q")})}));

  // kInputOnly (what --prior none can know): props base {} and a previous type it cannot see.
  // The row under the old type is stale and goes (the new digest needs the stored qn: no row).
  const KuduStore none = project(events, {}, prior, PriorKnowledge::kInputOnly);
  CHECK((*flat(none, 1))[7] == Cell::string(R"({"over":3})"));
  CHECK(none.table("entity_by_qn").size() == 0);
  // The same type as stored: its row stays.
  const std::vector<Event> same_type = {entity(Operation::kEntityUpdate, 1, "T", std::nullopt, 10)};
  const KuduStore same = project(same_type, {}, prior, PriorKnowledge::kInputOnly);
  CHECK(same.table("entity_by_qn").find({d}));
  CHECK(same.table("entity_by_qn").size() == 1);

  // Once the run has seen the type, a change without a known qn drops the stale by_qn row.
  const std::vector<Event> two = {entity(Operation::kEntityUpdate, 1, "T", std::nullopt, 10),
                                  entity(Operation::kEntityUpdate, 1, "U", std::nullopt, 11)};
  const KuduStore none2 = project(two, {}, prior, PriorKnowledge::kInputOnly);
  CHECK(none2.table("entity_by_qn").size() == 0);
  const KuduStore full2 = project(two, {}, prior, PriorKnowledge::kStore);
  CHECK(full2.table("entity_by_qn").find({full2.key(Guid{qn_digest("U", "q")})}));
}

TEST_CASE("projector: by_qn is deleted only where it still maps to the guid") {
  // A and B both claim q; B's create wins the row; A's rename must not remove B's mapping.
  const std::vector<Event> events = {
      entity(Operation::kEntityCreate, 1, "T", "q", 1),
      entity(Operation::kEntityCreate, 2, "T", "q", 2),
      entity(Operation::kEntityUpdate, 1, "T", "r", 3),
      entity(Operation::kEntityDelete, 1, "T", "r", 4),
  };
  const KuduStore s = project(events, {}, KuduStore());
  const auto& byqn = s.table("entity_by_qn");
  REQUIRE(byqn.size() == 1);
  const Row* row = byqn.find({s.key(Guid{qn_digest("T", "q")})});
  REQUIRE(row);
  CHECK((*row)[1] == s.key(guid(2)));
}

TEST_CASE("projector: deletes of unknown guids, tombstones and hard deletes") {
  Event tag = entity(Operation::kClassificationAdd, 3, "T", "q3", 5);
  tag.classifications = {{"PII", guid(3), "{}"}, {"X", guid(4), R"({"a":1})"}};
  Event edge;
  edge.op = Operation::kRelationshipCreate;
  edge.relationship = {std::nullopt, "owns", "", {guid(3), "T"}, {guid(4), "V"}, false};
  const std::vector<Event> events = {
      entity(Operation::kEntityDelete, 9, "T", "zz", 1, {{"ignored", "1"}}), tag, edge,
      entity(Operation::kEntityDelete, 3, "T", std::nullopt, 6)};
  const KuduStore soft = project(events, {}, KuduStore());
  // The unknown guid gets a tombstone with only state and updated_ts.
  const Row* t = flat(soft, 9);
  REQUIRE(t);
  CHECK((*t)[1].is_null());
  CHECK((*t)[4] == Cell::string("DELETED"));
  CHECK((*t)[7].is_null());
  CHECK(soft.table("entity_classifications").size() == 2);
  const Row* x = soft.table("entity_classifications").find({Cell::string("X"), soft.key(guid(3))});
  REQUIRE(x);
  CHECK((*x)[2] == Cell::boolean_value(true));  // propagated from guid 4
  CHECK((*x)[3] == soft.key(guid(4)));
  CHECK(soft.table("edge_out").size() == 0);
  CHECK(soft.table("edge_in").size() == 0);
  CHECK(soft.table("entity_by_qn").size() == 0);
  CHECK(soft.table("entity_audit").size() == 3);

  CompileOptions hard_options;
  hard_options.tombstone = Tombstone::kHard;
  const KuduStore hard = project(events, hard_options, KuduStore());
  CHECK(hard.table("entity_flat").size() == 0);
  CHECK(hard.table("entity_classifications").size() == 0);
  CHECK(hard.table("entity_audit").size() == 3);  // audit rows are never deleted
}

TEST_CASE("projector: invariants hold after every event of random streams, from random stores") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (const auto tomb : {Tombstone::kSoft, Tombstone::kHard}) {
      CompileOptions options;
      options.tombstone = tomb;
      options.props_max_bytes = seed % 2 ? 60000 : 700;
      GeneratorConfig config;
      config.big_values = seed % 2 == 0;
      KuduStore store = seed % 3 ? KuduStore() : generate_store(seed, options);
      REQUIRE_FALSE(check_invariants(store, options));
      ReferenceProjector projector(store, options);
      const auto events = generate_stream(seed, config);
      for (std::size_t i = 0; i < events.size(); ++i) {
        projector.apply(events[i]);
        const auto broken = check_invariants(store, options);
        if (broken) {
          FAIL_CHECK("seed " << seed << " event " << i + 1 << ": " << *broken << "\n"
                             << describe_events(std::span(events).first(i + 1)));
          break;
        }
      }
    }
  }
}

TEST_CASE("invariants: each violation is reported") {
  CompileOptions options;
  KuduStore s;
  const Cell g = s.key(guid(1));
  s.upsert_row("edge_out", {{"src", g}, {"elabel", Cell::string("l")}, {"dst", g}});
  CHECK(check_invariants(s, options).value_or("").find("no edge_in mirror") != std::string::npos);
  s.upsert_row("edge_in", {{"dst", g}, {"elabel", Cell::string("l")}, {"src", g}});
  CHECK_FALSE(check_invariants(s, options));
  s.upsert_row("entity_by_qn", {{"qn_digest", s.key(Guid{qn_digest("T", "q")})},
                                {"guid", g},
                                {"type_name", Cell::string("T")}});
  CHECK(check_invariants(s, options).value_or("").find("no entity_flat row") != std::string::npos);
  s.upsert_row("entity_flat", {{"guid", g},
                               {"type_name", Cell::string("T")},
                               {"qualified_name", Cell::string("other")},
                               {"state", Cell::string("ACTIVE")}});
  CHECK(check_invariants(s, options).value_or("").find("not the digest") != std::string::npos);
  s.upsert_row("entity_flat", {{"guid", g}, {"qualified_name", Cell::string("q")}});
  CHECK_FALSE(check_invariants(s, options));
  s.upsert_row("entity_flat", {{"guid", g}, {"props_json", Cell::string("[1]")}});
  CHECK(check_invariants(s, options).value_or("").find("props_json") != std::string::npos);
  s.upsert_row("entity_flat",
               {{"guid", g}, {"props_json", Cell::null()}, {"state", Cell::string("DELETED")}});
  CHECK(check_invariants(s, options).value_or("").find("not ACTIVE") != std::string::npos);
}

TEST_SUITE_END();
