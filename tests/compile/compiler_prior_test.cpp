// The compiler with a real prior state (what --prior impala gives it), and the worked scenarios
// of tests/data/scenarios through the compiler.
//
// StorePriorState answers PriorState::lookup from a kit KuduStore, the way the Impala-backed
// implementation answers it from the tables: the test executes each compiled window on the store
// before compiling the next, so every lookup sees the tables as they are at the window's start.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/reader.h"
#include "compile/print_executor.h"
#include "compiler_events.h"
#include "harness.h"
#include "kudu_store.h"
#include "reference_projector.h"
#include "sql_interpreter.h"
#include "stream_generator.h"

TEST_SUITE_BEGIN("compiler_prior");

using namespace atlas2kudu;
using namespace atlas2kudu::testkit;

namespace {

class StorePriorState final : public PriorState {
 public:
  explicit StorePriorState(const KuduStore& store) : store_(store) {}
  std::string describe() const override { return "test store"; }
  void lookup(std::span<const Guid> guids, std::vector<PriorEntity>& out) override {
    ++lookups;
    REQUIRE(std::is_sorted(guids.begin(), guids.end()));
    REQUIRE(std::adjacent_find(guids.begin(), guids.end()) == guids.end());
    for (const Guid& g : guids) {
      looked_up.push_back(g);
      PriorEntity p;
      p.guid = g;
      if (const Row* row = store_.table("entity_flat").find({store_.key(g)})) {
        p.exists = true;
        const auto cell = [](const Cell& c) {
          return c.is_null() ? std::nullopt : std::optional<std::string>(c.bytes);
        };
        p.type_name = cell((*row)[1]);
        p.qualified_name = cell((*row)[2]);
        p.props_json = cell((*row)[7]);
      }
      for (const auto& [key, row] : store_.table("entity_classifications").rows()) {
        if (key[1] == store_.key(g)) p.tags.push_back(key[0].bytes);
      }
      out.push_back(std::move(p));
    }
  }
  // In batches of `batch` guids when it is not 0, as Hs2PriorState answers (--batch-rows).
  void lookup_in_batches(std::span<const Guid> guids,
                         const std::function<void(std::vector<PriorEntity>&)>& each) override {
    if (batch == 0) return PriorState::lookup_in_batches(guids, each);
    for (std::size_t i = 0; i < guids.size(); i += batch) {
      std::vector<PriorEntity> found;
      lookup(guids.subspan(i, std::min(batch, guids.size() - i)), found);
      each(found);
    }
  }
  std::size_t batch = 0;
  int lookups = 0;
  std::vector<Guid> looked_up;

 private:
  const KuduStore& store_;
};

// Compiles `events` window by window with prior state read from `store`, executing each window
// on `store` before the next is compiled. Returns the whole script.
std::string compile_and_apply(std::span<const Event> events, const CompileOptions& o,
                              KuduStore& store, StorePriorState& prior,
                              KnowledgeStats* knowledge = nullptr) {
  Compiler compiler(o);
  std::string script = compiler.header(prior.describe());
  for (std::size_t i = 0; i < events.size(); i += o.window_events) {
    const CompiledWindow w = compile_window(
        compiler, prior, events.subspan(i, std::min(o.window_events, events.size() - i)));
    std::string text = compiler.header(prior.describe());
    PrintExecutor::format_window(w, text);
    InterpreterOptions io;
    io.database = o.database;
    io.reverse_phases = (i / o.window_events) % 2;
    execute_script(text, store, io);
    PrintExecutor::format_window(w, script);
  }
  if (knowledge) *knowledge = compiler.knowledge_stats();
  return script;
}

// A random run of --prior impala for `seed`: its options, events and the tables they start from.
struct RandomRun {
  explicit RandomRun(std::uint64_t seed)
      : options(options_for(seed)), initial(generate_store(seed, options, 40)) {
    GeneratorConfig c;
    c.length = 10 + seed % 60;
    c.guids = 2 + seed % 6;
    c.big_values = seed % 7 == 0;
    events = generate_stream(seed + 3'000'000, c);
  }
  static CompileOptions options_for(std::uint64_t seed) {
    CompileOptions o;
    o.tombstone = seed % 3 ? Tombstone::kSoft : Tombstone::kHard;
    o.key_encoding = seed % 2 ? KeyEncoding::kHex : KeyEncoding::kBinary;
    o.window_events = 1 + seed % 9;
    o.batch_rows = 1 + seed % 5;
    o.prior = PriorSource::kImpala;
    if (seed % 7 == 0) o.props_max_bytes = 2500;  // with big values
    return o;
  }
  CompileOptions options;
  std::vector<Event> events;
  KuduStore initial;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("prior state from the tables: equal to the full-knowledge projection") {
  for (std::uint64_t seed = 1; seed <= 800; ++seed) {
    const RandomRun run(seed);
    const CompileOptions& o = run.options;
    const std::vector<Event>& events = run.events;
    const KuduStore& initial = run.initial;
    const KuduStore expected = project(events, o, initial, PriorKnowledge::kStore);
    KuduStore actual = initial;
    StorePriorState prior(actual);
    std::string sql;
    std::optional<std::string> diff;
    try {
      sql = compile_and_apply(events, o, actual, prior);
      diff = compare_stores(expected, actual);
    } catch (const std::exception& e) {
      diff = std::string("execution failed: ") + e.what();
    }
    if (diff) {
      FAIL_CHECK("seed " << seed << ": " << *diff << "\n" << describe_events(events) << sql);
      break;
    }
    // Each guid is looked up at most once per run: later windows use the carried state.
    std::sort(prior.looked_up.begin(), prior.looked_up.end());
    CHECK(std::adjacent_find(prior.looked_up.begin(), prior.looked_up.end()) ==
          prior.looked_up.end());
  }
}

TEST_CASE("prior state learnt in batches past a tiny budget: the statements of an unbounded run") {
  // What a window looks up is learnt a batch at a time and spilled past the knowledge budget
  // until the fold touches it (also under kLookUpAgain, where it is forgotten when the window
  // ends): the statements are those of a run that kept everything.
  int spilled_runs = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    const RandomRun run(seed + 1000);
    const CompileOptions& o = run.options;
    const std::vector<Event>& events = run.events;
    const KuduStore& initial = run.initial;
    KuduStore unbounded_store = initial;
    StorePriorState unbounded_prior(unbounded_store);
    const std::string unbounded = compile_and_apply(events, o, unbounded_store, unbounded_prior);

    CompileOptions tight = o;
    tight.knowledge_budget = seed % 3 == 0 ? 1 : 2000;
    tight.evicted = seed % 2 ? EvictedKnowledge::kSpill : EvictedKnowledge::kLookUpAgain;
    KuduStore store = initial;
    StorePriorState prior(store);
    prior.batch = 1 + seed % 3;
    KnowledgeStats knowledge;
    const std::string sql = compile_and_apply(events, tight, store, prior, &knowledge);
    CHECK(sql == unbounded);
    CHECK_FALSE(compare_stores(unbounded_store, store));
    if (tight.evicted == EvictedKnowledge::kLookUpAgain) {
      CHECK(prior.looked_up.size() >= unbounded_prior.looked_up.size());
    } else {
      CHECK(prior.looked_up.size() == unbounded_prior.looked_up.size());
    }
    spilled_runs += knowledge.spilled > 0 && knowledge.spill_reads > 0;
  }
  CHECK(spilled_runs > 150);
}

TEST_CASE("prior state from the tables: no predicate clean-ups are needed") {
  CompileOptions o;
  o.prior = PriorSource::kImpala;
  const std::vector<Event> events = generate_stream(42, {.length = 200});
  KuduStore store = generate_store(42, o, 80);
  StorePriorState prior(store);
  const std::string sql = compile_and_apply(events, o, store, prior);
  CHECK(sql.find("NOT IN") == std::string::npos);
  CHECK(sql.find("-- prior state: test store\n") != std::string::npos);
}

TEST_CASE("prior state from the tables: stored props cells merged onto, or counted as unreadable") {
  class StoredCell final : public PriorState {
   public:
    explicit StoredCell(std::string props) : props_(std::move(props)) {}
    std::string describe() const override { return "one stored row"; }
    void lookup(std::span<const Guid> guids, std::vector<PriorEntity>& out) override {
      for (const Guid& g : guids) {
        PriorEntity p;
        p.guid = g;
        p.exists = g == test::guid(1);
        if (p.exists) {
          p.type_name = "hive_table";
          p.qualified_name = "db.a@c";
          p.props_json = props_;
        }
        out.push_back(std::move(p));
      }
    }

   private:
    std::string props_;
  };
  // The flat row's props cell after an update of entity 1 that sets "owner", over `stored`.
  const auto merged = [](const std::string& stored, UnreadableProps& unreadable) {
    CompileOptions o;
    o.prior = PriorSource::kImpala;
    Compiler compiler(o);
    StoredCell prior(stored);
    const std::vector<Event> window = {
        test::update({.id = 1, .qn = "db.a@c", .attrs = {{"owner", "\"o\""}}, .ms = 2})};
    const NetWindow net = fold_window(compiler, prior, window);
    unreadable = compiler.unreadable_props();
    REQUIRE(net.flat.size() == 1);
    return net.flat[0].props_json;
  };
  UnreadableProps unreadable;
  CHECK(merged(R"({"a":[1]})", unreadable) == R"({"a":[1],"owner":"o"})");
  CHECK(unreadable.cells == 0);
  // A run with --max-json-depth 1000 stores values nested deeper than the default 512: a later
  // run, whatever its own --max-json-depth, merges onto that cell rather than onto {}.
  const std::string deep = std::string(900, '[') + std::string(900, ']');
  CHECK(merged("{\"deep\":" + deep + "}", unreadable) == "{\"deep\":" + deep + ",\"owner\":\"o\"}");
  CHECK(unreadable.cells == 0);
  // A cell another writer left that is not one JSON object: merged onto {}, and counted.
  for (const std::string bad : {R"({"a":)", R"([1])", R"({"a":1} {"b":2})", "not json"}) {
    CAPTURE(bad);
    CHECK(merged(bad, unreadable) == R"({"owner":"o"})");
    CHECK(unreadable.cells == 1);
    CHECK(unreadable.first == test::guid(1));
  }
}

TEST_CASE("every worked scenario through the compiler, one window and one event per window") {
  std::vector<std::filesystem::path> all;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(ATLAS2KUDU_TEST_DATA) + "/scenarios")) {
    if (entry.path().extension() == ".jsonl") all.push_back(entry.path());
  }
  std::sort(all.begin(), all.end());
  REQUIRE(all.size() >= 14);
  for (const auto& path : all) {
    CompileOptions o;
    const std::string opts = slurp(std::filesystem::path(path).replace_extension(".options"));
    if (opts.find("--tombstone hard") != std::string::npos) o.tombstone = Tombstone::kHard;
    if (const auto p = opts.find("--props-max-bytes "); p != std::string::npos) {
      o.props_max_bytes = std::stoul(opts.substr(p + 18));
    }
    const std::string expected =
        slurp(std::filesystem::path(path).replace_extension(".expected.json"));
    std::vector<Event> events = read_all_events({path.string()});
    // read_all_events() destroys its Reader, which owns the text SourcePosition::source views.
    for (Event& e : events) e.pos.source = {};
    for (const std::size_t window : {std::size_t{1}, std::size_t{50000}}) {
      for (const auto enc : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
        o.window_events = window;
        o.key_encoding = enc;
        KuduStore store(enc);
        execute_script(compile_to_sql(events, o), store);
        const auto diff = compare_with_dump(expected, store);
        CHECK_MESSAGE(!diff, path.filename().string()
                                 << " window " << window << ": " << diff.value_or(""));
      }
    }
  }
}

TEST_SUITE_END();
