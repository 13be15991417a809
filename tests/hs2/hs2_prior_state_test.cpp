// Hs2PriorState (--prior impala) against the in-process HS2 test server with the test kit's Kudu
// store behind it: lookups return exactly the store's state, the compiler with HS2 prior state is
// exact on top of tables written by an earlier run, and failures are retried or reported.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/reader.h"
#include "compile/impala_sql.h"
#include "compile/print_executor.h"
#include "harness.h"
#include "hs2/executor.h"
#include "hs2/prior_state.h"
#include "hs2_test_server.h"
#include "hs2_test_util.h"
#include "kit_handler.h"
#include "kit_select.h"
#include "reference_projector.h"
#include "stream_generator.h"

TEST_SUITE_BEGIN("hs2_prior_state");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;
using testkit::Cell;
using testkit::KuduStore;

namespace {

Guid guid(std::string_view hex) {
  return *Guid::parse(hex);
}

// One line per entity, every field, so two answers compare as text with a readable diff.
std::string show(const std::vector<PriorEntity>& v) {
  auto opt = [](const std::optional<std::string>& s) {
    return s ? Cell::string(*s).to_display() : std::string("NULL");
  };
  std::ostringstream out;
  for (const PriorEntity& p : v) {
    out << p.guid.hex() << (p.exists ? " exists" : " absent");
    if (p.exists)
      out << " type=" << opt(p.type_name) << " qn=" << opt(p.qualified_name)
          << " props=" << opt(p.props_json);
    out << " tags=[";
    for (const auto& t : p.tags) out << Cell::string(t).to_display() << ",";
    out << "]\n";
  }
  return out.str();
}

// What the store holds for `guids` (ascending): the answer the contract asks for.
std::vector<PriorEntity> expected_prior(const KuduStore& store, std::span<const Guid> guids) {
  std::vector<PriorEntity> out;
  for (const Guid& g : guids) {
    PriorEntity p;
    p.guid = g;
    const auto cell = [](const Cell& c) {
      return c.is_null() ? std::nullopt : std::optional<std::string>(c.bytes);
    };
    if (const testkit::Row* row = store.table("entity_flat").find({store.key(g)})) {
      p.exists = true;
      p.type_name = cell((*row)[1]);
      p.qualified_name = cell((*row)[2]);
      p.props_json = cell((*row)[7]);
    }
    for (const auto& [key, row] : store.table("entity_classifications").rows())
      if (key[1] == store.key(g)) p.tags.push_back(key[0].bytes);
    std::sort(p.tags.begin(), p.tags.end());
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PriorEntity> lookup(Hs2PriorState& prior, std::vector<Guid> guids) {
  std::sort(guids.begin(), guids.end());
  guids.erase(std::unique(guids.begin(), guids.end()), guids.end());
  std::vector<PriorEntity> out;
  prior.lookup(guids, out);
  return out;
}

std::string key_literal(const Guid& g, KeyEncoding e) {
  std::string s;
  append_key(s, g.bytes, e);
  return s;
}

std::string str(std::string_view s) {
  std::string out;
  append_string_literal(out, s);
  return out;
}

const Guid kG1 = guid("10000000000000000000000000000001");
const Guid kG2 = guid("20000000000000000000000000000002");
const Guid kG3 = guid("30000000000000000000000000000003");
const Guid kG4 = guid("40000000000000000000000000000004");
const Guid kG5 = guid("50000000000000000000000000000005");

// Five guids covering every case: full row with NULL qn and two tags; tags only; nothing;
// tombstone with every cell NULL but state; awkward text in every STRING column.
std::vector<std::string> fixture_sql(KeyEncoding e) {
  auto k = [&](const Guid& g) { return key_literal(g, e); };
  return {
      "UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `state`, `props_json`) VALUES (" +
          k(kG1) + ", 'hive_table', 'ACTIVE', '{\"owner\":\"a\"}'), (" + k(kG4) +
          ", NULL, 'DELETED', NULL), (" + k(kG5) + ", " + str("ty'pe\\é") + ", 'ACTIVE', " +
          str("{\"k\":\"line\\nbreak\",\"n\":1e3}") + ")",
      "UPSERT INTO `atlas`.`entity_flat` (`guid`, `qualified_name`, `name`) VALUES (" + k(kG5) +
          ", " + str("db.t@c\n\t\x01 ünï") + ", 'n')",
      "UPSERT INTO `atlas`.`entity_classifications` (`tag_name`, `guid`, `propagated`) VALUES "
      "('Z', " +
          k(kG1) + ", FALSE), ('PII', " + k(kG1) + ", FALSE), ('PII', " + k(kG2) + ", TRUE), (" +
          str("tåg 'x'") + ", " + k(kG5) + ", FALSE)",
  };
}

struct Fixture {
  std::shared_ptr<KitHandler> kit;
  std::unique_ptr<Hs2TestServer> server;
  Hs2Options options;

  explicit Fixture(KeyEncoding e, FaultPlan faults = {}) : kit(std::make_shared<KitHandler>(e)) {
    Hs2TestServerConfig cfg;
    cfg.faults = std::move(faults);
    server = std::make_unique<Hs2TestServer>(cfg, kit);
    options = test_options(server->start());
  }
  void execute(const std::vector<std::string>& statements) {
    Hs2Session client = hs2_session(options);
    client.connect();
    for (const auto& s : statements) client.execute(s);
    client.close();
  }
  std::vector<PriorEntity> expected(std::span<const Guid> guids) const {
    std::vector<PriorEntity> out;
    kit->with_store([&](const KuduStore& s) { out = expected_prior(s, guids); });
    return out;
  }
};

}  // namespace

TEST_CASE("hs2 prior: the SELECTs it sends, per key encoding") {
  CompileOptions o;
  o.database = "at_las";
  const std::vector<Guid> two = {kG1, kG2};
  CHECK(Hs2PriorState::entity_flat_query(two, o) ==
        "SELECT `guid`, `type_name`, `qualified_name`, `props_json` FROM `at_las`.`entity_flat` "
        "WHERE `guid` IN ('10000000000000000000000000000001', "
        "'20000000000000000000000000000002')");
  CHECK(Hs2PriorState::classifications_query(two, o) ==
        "SELECT `guid`, `tag_name` FROM `at_las`.`entity_classifications` WHERE `guid` IN "
        "('10000000000000000000000000000001', '20000000000000000000000000000002')");
  o.key_encoding = KeyEncoding::kBinary;
  CHECK(Hs2PriorState::classifications_query(std::span(two).first(1), o) ==
        "SELECT lower(hex(`guid`)), `tag_name` FROM `at_las`.`entity_classifications` WHERE "
        "`guid` IN (CAST(unhex('10000000000000000000000000000001') AS BINARY))");
  o.database = "bad`name";
  const Hs2Settings settings = validate_hs2_options({});
  CHECK_THROWS_AS(Hs2PriorState(settings, hs2_session_factory(settings, nullptr), o), Error);
  o.database = "atlas";
  o.batch_rows = 0;
  CHECK_THROWS_AS(Hs2PriorState(settings, hs2_session_factory(settings, nullptr), o), Error);
}

TEST_CASE("hs2 prior: lookups return exactly the stored state, NULL cells, tags, absent guids") {
  for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
    CAPTURE(static_cast<int>(e));
    Fixture f(e);
    f.execute(fixture_sql(e));
    CompileOptions o;
    o.key_encoding = e;
    o.batch_rows = 2;
    Hs2PriorState prior(validate_hs2_options(f.options), hs2_sessions(f.options), o);
    CHECK(prior.describe().find("127.0.0.1:") != std::string::npos);
    // Lazy session: nothing is sent for an empty lookup.
    const int connections_before = f.server->stats().connections;
    std::vector<PriorEntity> none;
    prior.lookup({}, none);
    CHECK(none.empty());
    CHECK(f.server->stats().connections == connections_before);

    const std::vector<Guid> all = {kG1, kG2, kG3, kG4, kG5};
    const std::vector<PriorEntity> got = lookup(prior, all);
    CHECK(show(got) == show(f.expected(all)));
    REQUIRE(got.size() == 5);
    CHECK(got[0].exists);
    CHECK(got[0].type_name == "hive_table");
    CHECK(!got[0].qualified_name);
    CHECK(got[0].props_json == R"({"owner":"a"})");
    CHECK(got[0].tags == std::vector<std::string>{"PII", "Z"});
    CHECK(!got[1].exists);
    CHECK(got[1].tags == std::vector<std::string>{"PII"});
    CHECK(!got[2].exists);
    CHECK(got[2].tags.empty());
    CHECK(got[3].exists);
    CHECK((!got[3].type_name && !got[3].qualified_name && !got[3].props_json));
    CHECK(got[4].type_name == "ty'pe\\é");
    CHECK(got[4].qualified_name == "db.t@c\n\t\x01 ünï");
    CHECK(got[4].props_json == "{\"k\":\"line\\nbreak\",\"n\":1e3}");
    CHECK(got[4].tags == std::vector<std::string>{"tåg 'x'"});
    // 3 batches of at most 2 keys, two SELECTs each, one session.
    const Hs2PriorStats st = prior.stats();
    CHECK(st.queries == 6);
    CHECK(st.lookups == 1);
    CHECK(st.guids == 5);
    CHECK(st.found == 3);
    CHECK(st.tag_rows == 4);
    CHECK(st.retries == 0);
    CHECK(f.server->stats().connections == connections_before + 1);
  }
}

TEST_CASE("hs2 prior: batches obey batch_rows and batch_bytes") {
  Fixture f(KeyEncoding::kBinary);
  f.execute(fixture_sql(KeyEncoding::kBinary));
  std::vector<Guid> guids;
  for (std::size_t i = 0; i < 7; ++i) guids.push_back(testkit::generator_guid(i));
  guids.insert(guids.end(), {kG1, kG2, kG3, kG4, kG5});
  std::sort(guids.begin(), guids.end());
  const auto expected = show(f.expected(guids));
  CompileOptions o;
  o.key_encoding = KeyEncoding::kBinary;
  struct Case {
    std::size_t rows, bytes, queries;
  };
  const std::size_t two_keys = Hs2PriorState::entity_flat_query({guids.data(), 2}, o).size();
  for (const Case c : {Case{1000, std::size_t{4} << 20, 2}, Case{5, std::size_t{4} << 20, 6},
                       Case{1000, two_keys, 12}, Case{1000, two_keys + 10, 12},
                       Case{3, two_keys - 1, 24}, Case{1, 1, 24}}) {
    CAPTURE(c.rows);
    CAPTURE(c.bytes);
    o.batch_rows = c.rows;
    o.batch_bytes = c.bytes;
    Hs2PriorState prior(validate_hs2_options(f.options), hs2_sessions(f.options), o);
    CHECK(show(lookup(prior, guids)) == expected);
    CHECK(prior.stats().queries == c.queries);
  }
}

TEST_CASE("hs2 prior: batches are sized by the bytes per key the last batch returned") {
  CompileOptions o;
  // Half the window's share in cells at Kudu's limit; then an eighth at the last batch's size.
  CHECK(lookup_batch_keys(o, 0) == 950);
  CHECK(lookup_batch_keys(o, 40 << 10) == 380);
  CHECK(lookup_batch_keys(o, 2000) == 950);
  o.props_max_bytes = 2000;  // a lower cap does not mean smaller stored cells
  CHECK(lookup_batch_keys(o, 0) == 950);
  o.batch_rows = 100;
  CHECK(lookup_batch_keys(o, 0) == 100);
  o = CompileOptions{};
  o.window_budget = split_memory_budget(std::size_t{64} << 20).window;
  CHECK(lookup_batch_keys(o, 0) == 105);
  CHECK(lookup_batch_keys(o, 40 << 10) == 42);
  CHECK(lookup_batch_keys(o, std::size_t{1} << 30) == 16);  // at least 16

  // 40 entities with 12 tags of 3,000 bytes (about 36.5 KB an answer) sort first, then 100 small
  // ones. A share of 8 MiB: batches of at most 64 keys (half of it in 64 KiB cells), and 28 after
  // a batch of the large ones (an eighth of it at 36.5 KB), in the next lookup too.
  Fixture f(KeyEncoding::kHex);
  std::vector<Guid> big, small;
  std::vector<std::string> sql;
  for (int i = 0; i < 140; ++i) {
    Guid g = guid(fmt::format("{:02x}000000000000000000000000000000", i));
    (i < 40 ? big : small).push_back(g);
    const std::string key = key_literal(g, KeyEncoding::kHex);
    sql.push_back("UPSERT INTO `atlas`.`entity_flat` (`guid`, `type_name`, `state`) VALUES (" +
                  key + ", 'hive_table', 'ACTIVE')");
    for (int t = 0; t < (i < 40 ? 12 : 1); ++t) {
      sql.push_back(
          "UPSERT INTO `atlas`.`entity_classifications` (`tag_name`, `guid`, `propagated`) "
          "VALUES ('" +
          fmt::format("{:02}{}", t, std::string(i < 40 ? 3000 : 10, 'x')) + "', " + key +
          ", FALSE)");
    }
  }
  f.execute(sql);
  o = CompileOptions{};
  o.window_budget = 2 * 64 * kDefaultMaxCellBytes;
  Hs2PriorState prior(validate_hs2_options(f.options), hs2_sessions(f.options), o);
  const auto batches = [&](const std::vector<Guid>& guids) {
    std::vector<std::size_t> sizes;
    std::vector<PriorEntity> got;
    prior.lookup_in_batches(guids, [&](std::vector<PriorEntity>& found) {
      sizes.push_back(found.size());
      for (PriorEntity& p : found) got.push_back(std::move(p));
    });
    CHECK(show(got) == show(f.expected(guids)));
    return sizes;
  };
  CHECK(batches(big) == std::vector<std::size_t>{40});
  // The first batch of the next lookup is sized by the large answers; small answers bring the
  // size back up to the first bound, not to --batch-rows.
  CHECK(batches(small) == std::vector<std::size_t>{28, 64, 8});
  CHECK(batches(big) == std::vector<std::size_t>{40});
  CHECK(batches(big) == std::vector<std::size_t>{28, 12});
  CHECK(prior.stats().queries == 2 * 7);
}

TEST_CASE("hs2 prior: lookups equal the store after random runs, both encodings") {
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    CAPTURE(seed);
    CompileOptions o;
    o.key_encoding = seed % 2 ? KeyEncoding::kHex : KeyEncoding::kBinary;
    o.tombstone = seed % 3 ? Tombstone::kSoft : Tombstone::kHard;
    o.batch_rows = 1 + seed % 4;
    o.batch_bytes = seed % 5 == 0 ? 150 : std::size_t{4} << 20;
    testkit::GeneratorConfig gc;
    gc.length = 60;
    gc.guids = 4 + seed % 6;
    const std::vector<Event> events = testkit::generate_stream(seed, gc);
    Fixture f(o.key_encoding);
    std::vector<std::string> statements;
    CompileOptions compile = o;
    compile.batch_bytes = std::size_t{4} << 20;
    NoPriorState none;
    Compiler compiler(compile);
    for (std::size_t i = 0; i < events.size(); i += 20) {
      const CompiledWindow w = compile_window(
          compiler, none,
          std::span(events).subspan(i, std::min<std::size_t>(20, events.size() - i)));
      for (const auto& s : w.deletes) statements.push_back(s.sql);
      for (const auto& s : w.upserts) statements.push_back(s.sql);
    }
    f.execute(statements);
    std::vector<Guid> guids;
    for (std::size_t i = 0; i < 2 * gc.guids + 3; ++i) guids.push_back(testkit::generator_guid(i));
    std::sort(guids.begin(), guids.end());
    const std::vector<PriorEntity> expected = f.expected(guids);
    CHECK(std::any_of(expected.begin(), expected.end(), [](const auto& p) { return p.exists; }));
    Hs2PriorState prior(validate_hs2_options(f.options), hs2_sessions(f.options), o);
    CHECK(show(lookup(prior, guids)) == show(expected));
  }
}

TEST_CASE(
    "hs2 prior: a second run compiled with HS2 prior state is exact on the first run's tables") {
  // The point of --prior impala: props merges, renames, type changes and tag removals of entities
  // created by an earlier run come out as if both runs were one sequence of events; also when
  // the compiler forgets what it learnt and looks it up again after every window.
  int differs_without_prior = 0;
  int seeds = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    ++seeds;
    CompileOptions o;
    o.key_encoding = seed % 2 ? KeyEncoding::kHex : KeyEncoding::kBinary;
    o.tombstone = seed % 3 ? Tombstone::kSoft : Tombstone::kHard;
    o.window_events = 1 + seed % 6;
    o.batch_rows = 1 + seed % 4;
    testkit::GeneratorConfig gc;
    gc.length = 12 + seed % 30;
    gc.guids = 2 + seed % 5;
    gc.big_values = seed % 11 == 0;
    if (gc.big_values) o.props_max_bytes = 2500;
    const std::vector<Event> first = testkit::generate_stream(seed + 5'000'000, gc);
    gc.start_time_us = 9'000'000'000;
    const std::vector<Event> second = testkit::generate_stream(seed + 6'000'000, gc);

    const KuduStore after_first = testkit::project(first, o, KuduStore(o.key_encoding));
    const KuduStore expected = testkit::project(second, o, after_first);
    const KuduStore input_only =
        testkit::project(second, o, after_first, testkit::PriorKnowledge::kInputOnly);
    if (testkit::compare_stores(expected, input_only)) ++differs_without_prior;

    auto kit = std::make_shared<KitHandler>(o.key_encoding);
    Hs2TestServer server({}, kit);
    Hs2Options hs2 = test_options(server.start());
    hs2.sessions = 1 + seed % 2;
    std::string second_sql;
    std::optional<std::string> failure;
    try {
      Hs2Executor executor(validate_hs2_options(hs2), hs2_sessions(hs2));
      executor.start("");
      {
        CompileOptions first_options = o;
        first_options.prior = PriorSource::kNone;
        NoPriorState none;
        Compiler compiler(first_options);
        for (std::size_t i = 0; i < first.size(); i += o.window_events)
          executor.run_window(compile_window(
              compiler, none,
              std::span(first).subspan(i, std::min(o.window_events, first.size() - i))));
      }
      o.prior = PriorSource::kImpala;
      // Every other seed keeps (almost) no knowledge between windows, as apply --prior impala
      // does past its --memory-budget: evicted entities are read from the tables again, which
      // hold what the earlier windows wrote.
      const bool forgetful = seed % 2 == 0;
      if (forgetful) {
        o.knowledge_budget = seed % 4 == 0 ? 0 : 600;
        o.evicted = EvictedKnowledge::kLookUpAgain;
      }
      Hs2PriorState prior(validate_hs2_options(hs2), hs2_sessions(hs2), o);
      Compiler compiler(o);
      second_sql = compiler.header(prior.describe());
      for (std::size_t i = 0; i < second.size(); i += o.window_events) {
        const CompiledWindow w = compile_window(
            compiler, prior,
            std::span(second).subspan(i, std::min(o.window_events, second.size() - i)));
        PrintExecutor::format_window(w, second_sql);
        executor.run_window(w);
      }
      executor.finish();
      CHECK(prior.stats().lookups > 0);
      if (o.knowledge_budget == 0 && second.size() > o.window_events) {
        CHECK(compiler.knowledge_stats().evicted > 0);
        // What a window learnt is spilled while it is folded (nothing fits a budget of 0), and
        // forgotten with the spill at its end: every window asks about all its entities again.
        std::uint64_t asked = 0;
        for (std::size_t i = 0; i < second.size(); i += o.window_events) {
          std::set<Guid> entities;
          for (std::size_t j = i; j < std::min(i + o.window_events, second.size()); ++j) {
            if (!is_relationship_op(second[j].op)) entities.insert(second[j].guid);
          }
          asked += entities.size();
        }
        CHECK(prior.stats().guids == asked);
      }
      kit->with_store(
          [&](const KuduStore& actual) { failure = testkit::compare_stores(expected, actual); });
    } catch (const std::exception& e) {
      failure = std::string("run failed: ") + e.what();
    }
    if (failure) {
      FAIL_CHECK("seed " << seed << ": " << *failure << "\nfirst run:\n"
                         << testkit::describe_events(first) << "second run:\n"
                         << testkit::describe_events(second) << second_sql);
      break;
    }
    // With the stored state known, no predicate clean-up is needed.
    CHECK(second_sql.find("NOT IN") == std::string::npos);
    CHECK(second_sql.find("-- prior state: impala (") != std::string::npos);
  }
  CHECK(seeds == 200);
  // The test has teeth: without prior state the tables would differ for many of these seeds.
  MESSAGE(differs_without_prior << " of 200 seeds differ under --prior none");
  CHECK(differs_without_prior >= 40);
}

TEST_CASE("hs2 prior: transient failures are retried, definite ones throw") {
  // Statements 1-3 load the fixture; the first lookup's SELECTs are statements 4 and 5.
  struct Case {
    const char* name;
    FaultPlan faults;
    std::uint64_t retries, reconnects;
  };
  std::vector<Case> cases;
  {
    FaultPlan f;
    f.drop_at = {4};
    cases.push_back({"connection dropped", f, 1, 1});
  }
  {
    FaultPlan f;
    f.fail_at[5] = "Kudu error: Timed out: scan timed out after 30s";
    cases.push_back({"Kudu timed out", f, 1, 0});
  }
  {
    FaultPlan f;
    f.fail_at[4] = "Admission for query exceeded timeout 60000ms in pool root.etl";
    f.drop_at = {5};
    cases.push_back({"admission then drop", f, 2, 1});
  }
  {
    FaultPlan f;
    f.expire_sessions_at = {5};
    cases.push_back({"session expired", f, 1, 1});
  }
  const std::vector<Guid> all = {kG1, kG2, kG3, kG4, kG5};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Fixture f(KeyEncoding::kHex, c.faults);
    f.execute(fixture_sql(KeyEncoding::kHex));
    CompileOptions o;
    Hs2Options hs2 = f.options;
    hs2.retry_backoff_ms = 100;
    Hs2PriorState prior(validate_hs2_options(hs2), hs2_sessions(hs2), o);
    std::vector<int> sleeps;
    prior.set_sleeper([&](std::chrono::milliseconds ms) { sleeps.push_back(ms.count()); });
    CHECK(show(lookup(prior, all)) == show(f.expected(all)));
    CHECK(prior.stats().retries == c.retries);
    CHECK(prior.stats().reconnects == c.reconnects);
    CHECK(prior.stats().queries == 2);
    REQUIRE(sleeps.size() == c.retries);
    CHECK(sleeps[0] >= 100);
    CHECK(sleeps[0] <= 125);
    if (sleeps.size() > 1) CHECK(sleeps[1] >= 200);
  }
}

TEST_CASE("hs2 prior: a definite error throws at once and appends nothing") {
  const std::vector<Guid> all = {kG1, kG2, kG3, kG4, kG5};
  {
    FaultPlan faults;
    faults.fail_at[5] = "AnalysisException: Could not resolve table reference";
    Fixture f(KeyEncoding::kHex, faults);
    f.execute(fixture_sql(KeyEncoding::kHex));
    Hs2PriorState prior(validate_hs2_options(f.options), hs2_sessions(f.options), {});
    prior.set_sleeper(
        [](std::chrono::milliseconds) { FAIL("a definite error must not be retried"); });
    std::vector<PriorEntity> out;
    try {
      prior.lookup(all, out);
      FAIL("lookup should have thrown");
    } catch (const Hs2Error& e) {
      CHECK(e.kind() == Hs2ErrorKind::kDefinite);
      CHECK(std::string(e.what()).find("prior-state lookup (entity_classifications, keys 1-5 "
                                       "of 5)") != std::string::npos);
      CHECK(std::string(e.what()).find("Could not resolve table") != std::string::npos);
    }
    CHECK(out.empty());
    CHECK(prior.stats().retries == 0);
  }
}

TEST_CASE("hs2 prior: retries are bounded by max_retries") {
  const std::vector<Guid> all = {kG1, kG2, kG3, kG4, kG5};
  {
    FaultPlan faults;
    for (int i = 4; i <= 8; ++i) faults.fail_at[i] = "Kudu error: Service unavailable: leader";
    Fixture f(KeyEncoding::kHex, faults);
    f.execute(fixture_sql(KeyEncoding::kHex));
    Hs2Options hs2 = f.options;
    hs2.max_retries = 2;
    Hs2PriorState prior(validate_hs2_options(hs2), hs2_sessions(hs2), {});
    std::vector<int> sleeps;
    prior.set_sleeper([&](std::chrono::milliseconds ms) { sleeps.push_back(ms.count()); });
    std::vector<PriorEntity> out;
    try {
      prior.lookup(all, out);
      FAIL("lookup should have thrown");
    } catch (const Hs2Error& e) {
      CHECK(e.kind() == Hs2ErrorKind::kTransient);
      CHECK(std::string(e.what()).find("giving up after 2 retries") != std::string::npos);
    }
    CHECK(out.empty());
    CHECK(sleeps.size() == 2);
    CHECK(f.server->stats().statements == 3 + 3);
  }
}

TEST_CASE(
    "hs2 prior: an unreachable server fails the first connect, as apply's does; not retried") {
  const std::vector<Guid> all = {kG1, kG2, kG3, kG4, kG5};
  {
    int port = 0;
    {
      Hs2TestServer gone({}, std::make_shared<KitHandler>());
      port = gone.start();
    }
    Hs2Options hs2 = test_options(port);
    hs2.max_retries = 1;
    Hs2PriorState prior(validate_hs2_options(hs2), hs2_sessions(hs2), {});
    int sleeps = 0;
    prior.set_sleeper([&](std::chrono::milliseconds) { ++sleeps; });
    std::vector<PriorEntity> out;
    try {
      prior.lookup(all, out);
      FAIL("the lookup did not fail");
    } catch (const Hs2Error& e) {
      CHECK(std::string(e.what()).starts_with("cannot connect to "));
    }
    // Its own connect tries, then the failure: the lookup retries (with their back-off) are for
    // a server lost after the first connect (`compile --prior impala` took 40 s to say nothing
    // listens).
    CHECK(sleeps == 0);
    CHECK(out.empty());
  }
}

TEST_CASE("hs2 prior: the kit handler answers only the lookup SELECT shape") {
  for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
    Fixture f(e);
    f.execute(fixture_sql(e));
    Hs2Session client = hs2_session(f.options);
    client.connect();
    const std::string k1 = key_literal(kG1, e);
    const std::string guid_col = e == KeyEncoding::kHex ? "`guid`" : "lower(hex(`guid`))";
    const Hs2QueryResult r = client.query("SELECT " + guid_col +
                                          ", `propagated`, `updated_ts` FROM "
                                          "`atlas`.`entity_classifications` WHERE `guid` IN (" +
                                          k1 + ")");
    CHECK(r.columns ==
          std::vector<std::string>{e == KeyEncoding::kHex ? "guid" : "lower(hex(guid))",
                                   "propagated", "updated_ts"});
    REQUIRE(r.rows.size() == 2);  // PII, Z in key order
    CHECK(r.rows[0][0] == kG1.hex());
    CHECK(r.rows[0][1] == "false");
    CHECK(!r.rows[0][2]);
    const std::vector<std::string> bad_statements = {
        std::string("SELECT * FROM `atlas`.`entity_flat` WHERE `guid` IN (") + k1 + ")",
        "SELECT `guid` FROM `atlas`.`entity_flat`",
        "SELECT `guid` FROM `atlas`.`entity_flat` WHERE `guid` = " + k1,
        "SELECT `guid` FROM `atlas`.`entity_flat` WHERE `nope` IN (" + k1 + ")",
        "SELECT `guid` FROM `other`.`entity_flat` WHERE `guid` IN (" + k1 + ")",
        "SELECT guid FROM `atlas`.`entity_flat` WHERE `guid` IN (" + k1 + ")",
        // A STRING literal never matches a BINARY key, nor a cast literal a STRING key.
        e == KeyEncoding::kHex
            ? "SELECT `guid` FROM `atlas`.`entity_flat` WHERE `guid` IN (" +
                  key_literal(kG1, KeyEncoding::kBinary) + ")"
            : "SELECT `guid` FROM `atlas`.`entity_flat` WHERE `guid` IN ('" + kG1.hex() + "')",
    };
    for (const std::string& bad : bad_statements) {
      CAPTURE(bad);
      try {
        client.query(bad);
        FAIL("accepted");
      } catch (const Hs2Error& err) {
        CHECK(err.kind() == Hs2ErrorKind::kDefinite);
        CHECK(std::string(err.what()).find("AnalysisException") != std::string::npos);
      }
    }
    client.close();
  }
  CHECK(is_select_statement("  -- c\n select `a`"));
  CHECK(!is_select_statement("SELECTED"));
  CHECK(!is_select_statement("UPSERT INTO `atlas`.`x` VALUES ('select')"));
}

TEST_CASE("the test server's SELECT refuses an IN-list of more than 9999 values, as Impala does") {
  const KuduStore store;
  const auto select = [&](int n) {
    std::string sql = "SELECT `guid` FROM `atlas`.`entity_flat` WHERE `guid` IN (";
    for (int i = 0; i < n; ++i) sql += fmt::format("{}'{:032x}'", i ? ", " : "", i);
    return run_kit_select(sql + ")", store, "atlas");
  };
  CHECK(select(9999).rows.empty());
  CHECK_THROWS_WITH_AS(select(10000),
                       "an IN-list of more than 9999 values (Impala: at most 10000 child "
                       "expressions)",
                       SelectError);
}

TEST_SUITE_END();
