// Randomized equivalence (SPEC §5): for generated streams, executing the compiled SQL on a store
// with Kudu semantics gives the same tables as the sequential reference projector, whatever the
// window and batch sizes, tombstone policy, key encoding and (for --prior none) the prior tables.
// The oracle is the independent test kit in tests/kit/.
#include <doctest/doctest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "kudu_store.h"
#include "reference_projector.h"
#include "sql_interpreter.h"
#include "stream_generator.h"

using namespace atlas2kudu;
using namespace atlas2kudu::testkit;

namespace {

struct Trial {
  std::uint64_t seed = 0;
  CompileOptions options;
  GeneratorConfig config;
  bool reverse_phases = false;
};

// Options and generator settings drawn from the seed: tiny windows and batches are the point.
Trial make_trial(std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + 17);
  Trial t;
  t.seed = seed;
  CompileOptions& o = t.options;
  o.tombstone = rng() % 2 ? Tombstone::kHard : Tombstone::kSoft;
  o.key_encoding = rng() % 2 ? KeyEncoding::kBinary : KeyEncoding::kHex;
  const std::size_t windows[] = {1, 2, 3, 5, 8, 13, 1000};
  o.window_events = windows[rng() % std::size(windows)];
  const std::size_t rows[] = {1, 2, 3, 7, 1000};
  o.batch_rows = rows[rng() % std::size(rows)];
  o.batch_bytes = rng() % 3 == 0 ? 300 + rng() % 2000 : std::size_t{4} << 20;
  if (rng() % 4 == 0) o.database = "meta_db";
  GeneratorConfig& c = t.config;
  c.length = 5 + rng() % 70;
  c.guids = 2 + rng() % 7;
  c.type_names = 1 + rng() % 3;
  c.qualified_names = 2 + rng() % 6;
  c.tag_names = 1 + rng() % 5;
  c.edge_labels = 1 + rng() % 3;
  c.big_values = rng() % 5 == 0;
  if (c.big_values) o.props_max_bytes = 1500 + rng() % 3000;
  t.reverse_phases = rng() % 2;
  return t;
}

KuduStore run_sql(const std::string& sql, const Trial& t, KuduStore store) {
  InterpreterOptions io;
  io.database = t.options.database;
  io.reverse_phases = t.reverse_phases;
  execute_script(sql, store, io);
  return store;
}

std::string describe(const Trial& t, const std::vector<Event>& events) {
  return "seed " + std::to_string(t.seed) + ", " + std::to_string(events.size()) +
         " events, window " + std::to_string(t.options.window_events) + ", batch rows " +
         std::to_string(t.options.batch_rows) + ", batch bytes " +
         std::to_string(t.options.batch_bytes) + ", tombstone " +
         (t.options.tombstone == Tombstone::kHard ? "hard" : "soft") + ", keys " +
         (t.options.key_encoding == KeyEncoding::kBinary ? "binary" : "hex");
}

}  // namespace

TEST_CASE("equivalence: compiled SQL == sequential projection, from empty tables") {
  constexpr std::uint64_t kStreams = 10000;
  std::size_t events_total = 0;
  for (std::uint64_t seed = 1; seed <= kStreams; ++seed) {
    const Trial t = make_trial(seed);
    const std::vector<Event> events = generate_stream(seed, t.config);
    events_total += events.size();
    const KuduStore empty(t.options.key_encoding);
    const KuduStore expected = project(events, t.options, empty);
    const std::string sql = compile_to_sql(events, t.options);
    std::optional<std::string> diff;
    KuduStore actual(t.options.key_encoding);
    try {
      actual = run_sql(sql, t, empty);
      diff = compare_stores(expected, actual);
    } catch (const std::exception& e) {
      diff = std::string("execution failed: ") + e.what();
    }
    if (diff) {
      INFO(describe(t, events));
      INFO(*diff);
      INFO(sql);
      FAIL("compiled SQL differs from the reference projection");
    }
    // Idempotence: the same script again changes nothing.
    if (seed % 4 == 0) {
      const KuduStore twice = run_sql(sql, t, actual);
      const auto again = compare_stores(expected, twice);
      if (again) {
        INFO(describe(t, events));
        FAIL("applying the output twice changed the tables: " << *again);
      }
    }
  }
  MESSAGE(kStreams << " streams, " << events_total << " events");
}

TEST_CASE("equivalence: --prior none on non-empty tables (renames and tag removals exact)") {
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    const Trial t = make_trial(seed + 1'000'000);
    const std::vector<Event> events = generate_stream(seed + 1'000'000, t.config);
    const KuduStore initial = generate_store(seed, t.options, 40);
    const KuduStore expected = project(events, t.options, initial, PriorKnowledge::kInputOnly);
    const std::string sql = compile_to_sql(events, t.options);
    std::optional<std::string> diff;
    try {
      diff = compare_stores(expected, run_sql(sql, t, initial));
    } catch (const std::exception& e) {
      diff = std::string("execution failed: ") + e.what();
    }
    if (diff) {
      INFO(describe(t, events));
      INFO(*diff);
      INFO(sql);
      FAIL("compiled SQL differs from the input-only projection on prior tables");
    }
  }
}

TEST_CASE("equivalence: a replayed input changes nothing") {
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    Trial t = make_trial(seed + 2'000'000);
    t.config.big_values = false;  // the props cap may drop other keys from a larger merge base
    t.options.props_max_bytes = 60000;
    const std::vector<Event> events = generate_stream(seed + 2'000'000, t.config);
    std::vector<Event> doubled = events;
    doubled.insert(doubled.end(), events.begin(), events.end());
    const KuduStore empty(t.options.key_encoding);
    const KuduStore expected = project(events, t.options, empty);
    const std::string sql = compile_to_sql(doubled, t.options);
    std::optional<std::string> diff;
    try {
      diff = compare_stores(expected, run_sql(sql, t, empty));
    } catch (const std::exception& e) {
      diff = std::string("execution failed: ") + e.what();
    }
    if (diff) {
      INFO(describe(t, doubled));
      INFO(*diff);
      FAIL("compiling the input concatenated with itself changed the tables");
    }
  }
}
