// Tests of the random stream generator (tests/kit/stream_generator.h): determinism, coverage of
// every listed case across seeds, validity of what it produces, and the case classifier itself.
#include <doctest/doctest.h>

#include <string>

#include "atlas2kudu/reader.h"
#include "harness.h"
#include "reference_projector.h"
#include "stream_generator.h"
#include "util/digest.h"

TEST_SUITE_BEGIN("kit_generator");

using namespace atlas2kudu;
using namespace atlas2kudu::testkit;

namespace {

std::set<Case> scenario_cases(const std::string& name) {
  const auto events =
      read_all_events({std::string(ATLAS2KUDU_TEST_DATA) + "/scenarios/" + name + ".jsonl"});
  return classify_stream(events);
}

}  // namespace

TEST_CASE("generator: same seed gives the same stream, other seeds differ") {
  GeneratorConfig config;
  config.length = 150;
  const auto a = generate_stream(42, config);
  const auto b = generate_stream(42, config);
  const auto c = generate_stream(43, config);
  REQUIRE(a.size() == 150);
  CHECK(describe_events(a) == describe_events(b));
  CHECK(describe_events(a) != describe_events(c));
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].audit_seq == b[i].audit_seq);
}

TEST_CASE("generator: identical events share an audit seq, different ones do not") {
  const auto events = generate_stream(7, {});
  std::map<std::int64_t, std::string> by_seq;
  for (const auto& e : events) {
    CHECK(e.audit_seq == content_audit_seq(e));
    const std::string text = describe_events(std::span(&e, 1));
    const auto [it, fresh] = by_seq.emplace(e.audit_seq, text);
    if (!fresh) CHECK(it->second == text);
  }
}

TEST_CASE("generator: across seeds every listed case occurs") {
  std::map<Case, int> seen;
  const int seeds = 30;
  for (int seed = 1; seed <= seeds; ++seed) {
    for (const Case c : classify_stream(generate_stream(static_cast<std::uint64_t>(seed)))) {
      ++seen[c];
    }
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(Case::kCount); ++i) {
    const auto c = static_cast<Case>(i);
    CAPTURE(to_string(c));
    // Each case in at least a third of the seeds: frequent enough that a short random run finds it.
    CHECK(seen[c] >= seeds / 3);
  }
}

TEST_CASE("generator: events are well-formed as the reader guarantees") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (const auto& e : generate_stream(seed)) {
      CHECK(!e.type_name.empty());
      if (is_relationship_op(e.op)) {
        CHECK(!e.relationship.edge_label().empty());
        CHECK(e.relationship.end1.guid != Guid{});
        CHECK(e.relationship.end2.guid != Guid{});
      } else {
        CHECK(e.guid != Guid{});
        for (const auto& a : e.attributes) {
          CHECK(a.name != "qualifiedName");
          CHECK(a.name != "name");
        }
      }
    }
  }
}

TEST_CASE("generator: streams project under every option; --prior none view agrees from empty") {
  for (std::uint64_t seed = 1; seed <= 25; ++seed) {
    GeneratorConfig config;
    config.big_values = seed % 2 == 0;
    const auto events = generate_stream(seed, config);
    for (const auto tomb : {Tombstone::kSoft, Tombstone::kHard}) {
      for (const auto enc : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
        CompileOptions options;
        options.tombstone = tomb;
        options.key_encoding = enc;
        options.props_max_bytes = config.big_values ? 1500 : 60000;
        CAPTURE(seed);
        const KuduStore full = project(events, options, KuduStore(enc), PriorKnowledge::kStore);
        const KuduStore none = project(events, options, KuduStore(enc), PriorKnowledge::kInputOnly);
        const auto diff = compare_stores(full, none);
        CHECK_MESSAGE(!diff, diff.value_or(""));
        CHECK(full.table("entity_flat").size() > 0);
        CHECK(full.table("entity_audit").size() > 0);
        // Props always fit the cap.
        for (const auto& [key, row] : full.table("entity_flat").rows()) {
          if (!row[7].is_null()) CHECK(row[7].bytes.size() <= options.props_max_bytes);
        }
      }
    }
  }
}

TEST_CASE("generator: random prior stores are deterministic and non-trivial") {
  CompileOptions options;
  const KuduStore a = generate_store(5, options);
  const KuduStore b = generate_store(5, options);
  CHECK_FALSE(compare_stores(a, b));
  CHECK(a.table("entity_flat").size() >= 3);
  CHECK(a.table("entity_audit").size() >= 10);
  options.key_encoding = KeyEncoding::kBinary;
  const KuduStore c = generate_store(5, options);
  CHECK(c.key_encoding() == KeyEncoding::kBinary);
  CHECK(c.table("entity_flat").size() == a.table("entity_flat").size());
}

TEST_CASE("classifier: recognises the cases of the worked scenarios") {
  CHECK(scenario_cases("01-partial-update-and-rename").count(Case::kRename));
  CHECK(scenario_cases("01-partial-update-and-rename").count(Case::kTimeGoesBackwards));
  CHECK(scenario_cases("02-qualified-name-trade").count(Case::kQnTradeDirect));
  CHECK_FALSE(scenario_cases("02-qualified-name-trade").count(Case::kQnTradeViaTemporary));
  CHECK(scenario_cases("03-qualified-name-trade-via-temporary").count(Case::kQnTradeViaTemporary));
  CHECK(
      scenario_cases("04-soft-delete-cascades-edges-keeps-tags").count(Case::kEdgeCascadeOnDelete));
  CHECK(scenario_cases("06-tag-set-shrinks-to-empty").count(Case::kDuplicateTagInSet));
  CHECK(scenario_cases("06-tag-set-shrinks-to-empty").count(Case::kTagSetShrinks));
  CHECK(scenario_cases("07-tag-set-then-empty").count(Case::kTagSetShrinksToEmpty));
  CHECK(scenario_cases("08-classification-before-create").count(Case::kClassificationBeforeCreate));
  CHECK(scenario_cases("08-classification-before-create").count(Case::kSameTimestamp));
  CHECK(scenario_cases("09-update-before-any-create").count(Case::kPartialUpdateWithoutQn) == 0);
  CHECK(scenario_cases("10-type-change").count(Case::kTypeChangeWithoutQn));
  CHECK(scenario_cases("11-delete-then-recreate-same-name").count(Case::kDeleteRecreateSameQn));
  CHECK(scenario_cases("12-relationships").count(Case::kRelationshipUpdateDeleted));
  CHECK(scenario_cases("13-redelivered-event").count(Case::kRedelivery));
  CHECK_FALSE(scenario_cases("13-redelivered-event").count(Case::kReplay));
}

TEST_CASE("generator: output is pinned (seeds cited in bug reports stay reproducible)") {
  // Only std::mt19937_64 and SHA-256 feed the generator, so this holds on every platform. A
  // deliberate generator change updates the constant (and invalidates cited seeds).
  const auto events = generate_stream(1, GeneratorConfig{.length = 50});
  CHECK(to_hex(sha256(describe_events(events))) ==
        "ddd076acaecb324f57d37042ba43e95c6c4bc2ca67196048e33420bc53ba3c10");
}

TEST_SUITE_END();
