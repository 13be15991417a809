// The knowledge carried between windows within a memory budget: its byte form, eviction to the
// spill file and back, eviction for a later prior-state lookup, and the compiler's output with a
// tiny budget, byte for byte the output of an unbounded run.
#include "compile/knowledge_store.h"

#include <dirent.h>
#include <doctest/doctest.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/error.h"
#include "compile/plan.h"
#include "compiler_events.h"
#include "stream_generator.h"
#include "util/digest.h"

TEST_SUITE_BEGIN("knowledge_store");

using namespace atlas2kudu;
using namespace atlas2kudu::test;

namespace {

using Cell = EntityKnowledge::Cell;

EntityKnowledge full_knowledge(int n) {
  EntityKnowledge k;
  k.type_state = Cell::kValue;
  k.type_name = "hive_table";
  k.qn_state = n % 2 ? Cell::kValue : Cell::kNull;
  k.qualified_name = n % 2 ? "db.t" + std::to_string(n) + "@cl" : "";
  // Only beside a known qualifiedName, as the fold keeps it; the byte form keeps it only then.
  k.digest_valid = n % 2 && n % 3 == 0;
  if (k.digest_valid) k.digest = qn_digest(k.type_name, k.qualified_name);
  k.props_known = true;
  // A key written with escapes too: the byte form keeps its decoded form beside the text.
  k.props = *parse_props("{\"createTime\":" + std::to_string(1000 + n) + ",\"description\":\"" +
                         std::string(static_cast<std::size_t>(n % 300), 'x') +
                         "\",\"owner\":\"a\\u00e9\",\"q\\\"k\\n\":1,\"_truncated\":[\"big\"]}");
  REQUIRE(k.props.size() == 4);
  k.tags_known = n % 4 != 0;
  if (k.tags_known) k.tags = {"PII", "TIER1"};
  return k;
}

// That SnapshotFile refuses `bytes` as a resumed run does (exit 65).
void check_not_a_snapshot(const std::string& bytes) {
  try {
    SnapshotFile{bytes};
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::kCheckpoint);
    CHECK(std::string(e.what()) == "not a knowledge snapshot written by this version");
  }
}

// A fresh directory for spill files, removed (with whatever is left in it) by the destructor.
struct TempDir {
  TempDir() {
    char name[] = "/tmp/a2k-knowledge-test-XXXXXX";
    REQUIRE(mkdtemp(name) != nullptr);
    path = name;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(path.c_str())) {
      while (const dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") out.push_back(name);
      }
      closedir(d);
    }
    return out;
  }
  std::string path;
};

CompileOptions tiny(EvictedKnowledge evicted, const std::string& dir) {
  CompileOptions o;
  o.knowledge_budget = 1;  // every entry is evicted after every window
  o.evicted = evicted;
  o.spill_dir = dir;
  return o;
}

}  // namespace

TEST_CASE("the byte form keeps every field") {
  for (int n = 0; n < 40; ++n) {
    const EntityKnowledge k = full_knowledge(n);
    std::string bytes;
    encode_knowledge(k, bytes);
    EntityKnowledge back;
    back.type_name = "left over";
    back.tags = {"stale"};
    decode_knowledge(bytes, back);
    CHECK(back == k);
  }
  // Nothing known at all: a few bytes.
  std::string bytes;
  encode_knowledge(EntityKnowledge{}, bytes);
  CHECK(bytes.size() == 3);
  EntityKnowledge back = full_knowledge(1);
  decode_knowledge(bytes, back);
  CHECK(back == EntityKnowledge{});
}

TEST_CASE("bytes that are not an entry are an internal error, not a crash") {
  std::string bytes;
  encode_knowledge(full_knowledge(3), bytes);
  EntityKnowledge k;
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    CAPTURE(cut);
    CHECK_THROWS_AS(decode_knowledge(std::string_view(bytes).substr(0, cut), k), Error);
  }
  CHECK_THROWS_AS(decode_knowledge(bytes + "x", k), Error);
  CHECK_THROWS_AS(decode_knowledge(std::string(1, '\x0F'), k), Error);  // cell state 3
  // Counts of members, truncated keys or tags that the bytes left could not hold: refused before
  // anything is allocated for them (a hostile FILE.window), also at 2^40 and 2^62.
  for (const std::uint64_t count :
       {std::uint64_t{1} << 28, std::uint64_t{1} << 40, std::uint64_t{1} << 62}) {
    CAPTURE(count);
    std::string varint;
    for (std::uint64_t n = count; n >= 0x80; n >>= 7) varint.push_back(static_cast<char>(n | 0x80));
    varint.push_back(static_cast<char>(count >> (7 * (varint.size()))));
    const std::string tags = std::string("\x40\x00\x00", 3) + varint + "\x01x";
    const std::string members = std::string("\x20\x00\x00\x02{}", 6) + varint;
    const std::string truncated = std::string("\x20\x00\x00\x02{}\x00\x00", 8) + varint;
    for (const std::string& bad : {tags, members, truncated}) {
      try {
        decode_knowledge(bad, k);
        FAIL("accepted");
      } catch (const Error& e) {
        CHECK(e.category() == ErrorCategory::kInternal);
      }
    }
  }
  // Any byte changed: an Error, or an entry whose props read within their own text (the
  // sanitizer build checks every access).
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    for (const int change : {0x00, 0x01, 0x7F, 0x80, 0xFF}) {
      std::string bad = bytes;
      bad[at] = static_cast<char>(change);
      try {
        decode_knowledge(bad, k);
      } catch (const Error&) {
        continue;
      }
      std::size_t total = k.props.json().size();
      for (std::size_t i = 0; i < k.props.size(); ++i) {
        total += k.props.key(i).size() + k.props.value(i).size();
      }
      CHECK(total >= 2);
    }
  }
}

TEST_CASE("evicted knowledge spills to an unlinked file and comes back unchanged") {
  TempDir dir;
  KnowledgeStore store(tiny(EvictedKnowledge::kSpill, dir.path));
  for (int n = 1; n <= 3000; ++n) store.save(guid(n % 250), full_knowledge(n));
  for (int n = 1; n <= 3000; ++n) {
    Guid g = guid(1);
    g.bytes[10] = static_cast<std::uint8_t>(n >> 8);
    g.bytes[11] = static_cast<std::uint8_t>(n);
    store.save(g, full_knowledge(n));
  }
  store.end_window();
  CHECK(store.stats().evicted > 3000);
  CHECK(store.stats().spilled == store.stats().evicted);
  CHECK(store.spill_entries() == store.stats().spilled);
  // The spill file and its directory are gone from the file system while the store uses them.
  CHECK(dir.entries().empty());

  for (int n = 1; n <= 3000; ++n) {
    Guid g = guid(1);
    g.bytes[10] = static_cast<std::uint8_t>(n >> 8);
    g.bytes[11] = static_cast<std::uint8_t>(n);
    CHECK(store.contains(g));
    EntityKnowledge k;
    REQUIRE(store.load(g, k));
    CHECK(k == full_knowledge(n));
  }
  CHECK(store.stats().spill_reads == 3000);
  // Changed after coming back: the new state is what the next read sees.
  Guid g = guid(1);
  g.bytes[11] = 7;
  EntityKnowledge k = full_knowledge(7);
  k.tags = {"GDPR"};
  store.save(g, k);
  store.end_window();
  EntityKnowledge again;
  REQUIRE(store.load(g, again));
  CHECK(again == k);
  // Never seen: unknown.
  Guid never;
  never.bytes[0] = 0xEE;
  CHECK_FALSE(store.contains(never));
  CHECK_FALSE(store.load(never, again));
  CHECK(again == EntityKnowledge{});
}

TEST_CASE("with kLookUpAgain, evicted knowledge is forgotten (the prior state tells it again)") {
  TempDir dir;
  KnowledgeStore store(tiny(EvictedKnowledge::kLookUpAgain, dir.path));
  for (int n = 1; n <= 100; ++n) store.save(guid(n), full_knowledge(n));
  CHECK(store.contains(guid(5)));
  store.end_window();
  CHECK(store.stats().evicted == 100);
  CHECK(store.stats().spilled == 0);
  CHECK_FALSE(store.contains(guid(5)));
  CHECK(dir.entries().empty());
}

TEST_CASE(
    "what a window learnt is spilled past the budget, read back, and under kLookUpAgain "
    "forgotten when the window ends") {
  for (const EvictedKnowledge policy : {EvictedKnowledge::kSpill, EvictedKnowledge::kLookUpAgain}) {
    CAPTURE(static_cast<int>(policy));
    TempDir dir;
    KnowledgeStore store(tiny(policy, dir.path));
    // An entity the window touched before its lookup (an assumed or earlier one) ...
    EntityKnowledge& held = store.get(guid(200));
    held = full_knowledge(200);
    // ... and two batches of lookups: each spilled as soon as it is learnt (a budget of 1).
    for (int n = 1; n <= 40; ++n) {
      store.learn(guid(n), full_knowledge(n));
      if (n % 20 == 0) store.make_room();
    }
    CHECK(store.stats().spilled == 40);
    CHECK(store.stats().evicted == 40);
    CHECK(store.stats().entries == 1);
    CHECK(&store.get(guid(200)) == &held);  // touched: never evicted before its window ends
    CHECK(held == full_knowledge(200));
    // The fold touches what it learnt: read back unchanged, and held until the window ends.
    for (int n = 1; n <= 40; n += 3) CHECK(store.get(guid(n)) == full_knowledge(n));
    store.make_room();
    CHECK(store.stats().spill_reads == 14);
    CHECK(store.stats().entries == 15);
    // The end of a part of the window spills again, whatever the policy.
    store.end_window(false);
    CHECK(store.stats().entries == 0);
    CHECK(store.stats().spilled == 55);
    EntityKnowledge k;
    REQUIRE(store.load(guid(2), k));
    CHECK(k == full_knowledge(2));
    store.end_window();
    // The window's end: kSpill keeps what it spilled; kLookUpAgain forgets it (the tables hold
    // it once the window has run, and the next window looks it up again).
    const bool kept = policy == EvictedKnowledge::kSpill;
    CHECK(store.contains(guid(7)) == kept);
    CHECK(store.contains(guid(200)) == kept);
  }
}

TEST_CASE(
    "knowledge brought back past the budget is counted until the window ends; contains() leaves "
    "it spilled") {
  TempDir dir;
  CompileOptions o = tiny(EvictedKnowledge::kSpill, dir.path);
  o.knowledge_budget = 256 << 10;
  KnowledgeStore store(o);
  // 150 entities with 40 tags of 1 KB each (about 6 MB), then all evicted: one eviction of more
  // than one chunk (kEvictionChunkBytes) of encoded entries, every one of them spilled.
  const auto big = [](int n) {
    EntityKnowledge k = full_knowledge(n);
    k.tags_known = true;
    k.tags.clear();
    for (int t = 0; t < 40; ++t)
      k.tags.push_back(fmt::format("{:02}{}", t, std::string(1024, 'x')));
    return k;
  };
  for (int n = 1; n <= 150; ++n) store.save(guid(n), big(n));
  store.end_window();
  store.save(guid(200), full_knowledge(200));  // a window of another entity evicts the rest
  store.end_window();
  CHECK(store.stats().spilled == store.stats().evicted);
  CHECK(store.spill_entries() >= 150);
  CHECK(store.bytes_over_budget() == 0);
  const std::uint64_t in_memory = store.stats().entries;
  // Asking whether they are known reads nothing back.
  for (int n = 1; n <= 150; ++n) CHECK(store.contains(guid(n)));
  CHECK(store.stats().spill_reads == 0);
  CHECK(store.bytes_over_budget() == 0);
  // A window that touches them brings them back, past the budget: counted as they come.
  std::size_t over = 0;
  for (int n = 1; n <= 100; ++n) {
    CHECK(store.get(guid(n)) == big(n));
    CHECK(store.bytes_over_budget() >= over);
    over = store.bytes_over_budget();
  }
  CHECK(store.stats().spill_reads == 100);
  CHECK(over > std::size_t{3} << 20);
  // The part (or window) ends: evicted again, back within the budget.
  store.end_window(false);
  CHECK(store.bytes_over_budget() == 0);
  CHECK(store.stats().entries <= in_memory + 1);
  EntityKnowledge k;
  REQUIRE(store.load(guid(77), k));
  CHECK(k == big(77));
}

// `bytes` in a file of the directory, after a line of something else, as FILE.window holds a
// snapshot: returns its path; the snapshot starts at byte kSnapshotAt.
constexpr std::uint64_t kSnapshotAt = 6;
std::string snapshot_in_file(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.path + "/snapshot";
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  const std::string text = "head\n\n" + bytes + "tail\n";
  REQUIRE(std::fwrite(text.data(), 1, text.size(), f) == text.size());
  REQUIRE(std::fclose(f) == 0);
  return path;
}

TEST_CASE("assumed knowledge stays in its file until a window has folded the entity") {
  // A resumed apply --prior impala: the tables hold the failed window's partial writes, so an
  // assumed entry dropped and looked up again would be read from them. A rerun with a smaller
  // --memory-budget, or cut into shorter windows, must keep it until a window touches it; and
  // FILE.window may be many times the budget, so it stays on disk until then.
  TempDir dir;
  KnowledgeStore store(tiny(EvictedKnowledge::kLookUpAgain, dir.path));
  std::string bytes;
  append_snapshot_entry(bytes, guid(1), full_knowledge(1));
  append_snapshot_entry(bytes, guid(2), full_knowledge(2));
  const std::string path = snapshot_in_file(dir, bytes);
  auto snapshot = std::make_shared<const SnapshotFile>(path, kSnapshotAt, bytes.size());
  REQUIRE(snapshot->entries() == 2);
  store.assume(snapshot);
  CHECK_THROWS_AS(store.assume(snapshot), Error);
  // Nothing of it in memory, nothing over the budget (of 1 byte), yet all of it known.
  CHECK(store.stats().entries == 0);
  CHECK(store.bytes_over_budget() == 0);
  CHECK(store.contains(guid(1)));
  CHECK(store.contains(guid(2)));
  for (int window = 0; window < 3; ++window) {  // windows of other entities only
    store.save(guid(100 + window), full_knowledge(window));
    store.end_window();
  }
  CHECK(store.stats().evicted == 3);
  EntityKnowledge k;
  CHECK(store.load(guid(2), k));  // a window's snapshot reads entity 2: still on disk
  CHECK(k == full_knowledge(2));
  CHECK(store.bytes_over_budget() == 0);
  CHECK(store.get(guid(2)) == full_knowledge(2));  // a window folds entity 2: counted at once
  CHECK(store.bytes_over_budget() > 0);
  store.end_window();  // ... so it is evictable again, as any entry
  CHECK(store.stats().evicted == 4);
  CHECK_FALSE(store.contains(guid(2)));  // forgotten: the tables hold its truth by now
  CHECK(store.load(guid(1), k));         // never touched: still in the file
  CHECK(k == full_knowledge(1));

  // What the store knows already wins over what it is told to assume.
  KnowledgeStore known(tiny(EvictedKnowledge::kSpill, dir.path));
  known.save(guid(1), full_knowledge(7));
  known.assume(snapshot);
  CHECK(known.get(guid(1)) == full_knowledge(7));
  CHECK(known.get(guid(2)) == full_knowledge(2));
}

TEST_CASE("a snapshot in a file: found, read, written and filtered an entry at a time") {
  TempDir dir;
  std::string bytes;
  std::vector<std::string> entries;
  for (int n = 1; n <= 40; ++n) {
    std::string entry;
    append_snapshot_entry(entry, guid(n), full_knowledge(n));
    entries.push_back(entry);
    bytes += entry;
  }
  const std::string path = snapshot_in_file(dir, bytes);
  const SnapshotFile file(path, kSnapshotAt, bytes.size());
  REQUIRE(file.entries() == 40);
  CHECK(file.size() == bytes.size());
  CHECK(file.str() == bytes);
  CHECK(file.find(guid(41)) == SnapshotFile::npos);
  const std::size_t i = file.find(guid(17));
  REQUIRE(i == 16);
  std::string read;
  file.read_entry(i, read);
  CHECK(read == entries[16]);
  file.read_knowledge(i, read);
  EntityKnowledge k;
  decode_knowledge(read, k);
  CHECK(k == full_knowledge(17));
  // Without entities 2, 3 and 39 (entries 1, 2 and 38; a mark vector shorter than the entries
  // drops nothing past its end).
  std::vector<bool> dropped(39, false);
  dropped[1] = dropped[2] = dropped[38] = true;
  std::string kept;
  file.write_without(dropped, [&](std::string_view entry) { kept += entry; });
  std::string expected;
  for (int n = 1; n <= 40; ++n) {
    if (n != 2 && n != 3 && n != 39) expected += entries[static_cast<std::size_t>(n - 1)];
  }
  CHECK(kept == expected);
  CHECK(file.size_without(dropped) == expected.size());
  CHECK(file.size_without({}) == bytes.size());
  // Merged with later entries: the earlier file's where both name an entity, unless it is
  // dropped there.
  std::string later3, later50;
  append_snapshot_entry(later3, guid(3), full_knowledge(300));
  append_snapshot_entry(later50, guid(50), full_knowledge(50));
  const SnapshotFile later_file{later3 + later50};
  const std::vector<bool> none;
  const MergedSnapshot merged(file, none,
                              [&](const auto& out) { later_file.write_without(none, out); });
  std::vector<Guid> later_guids;
  std::string all;
  merged.write([&](std::string_view entry) { all += entry; });
  CHECK(all == bytes + later50);
  CHECK(merged.size(&later_guids) == all.size());
  CHECK(later_guids == std::vector<Guid>{guid(3), guid(50)});
  const MergedSnapshot without_dropped(
      file, dropped, [&](const auto& out) { later_file.write_without(none, out); });
  std::string rest;
  without_dropped.write([&](std::string_view entry) { rest += entry; });
  expected.clear();
  for (int n = 1; n <= 40; ++n) {
    if (n == 3) expected += later3;  // dropped from the file: the later entry
    if (n != 2 && n != 3 && n != 39) expected += entries[static_cast<std::size_t>(n - 1)];
  }
  CHECK(rest == expected + later50);
  CHECK(without_dropped.size() == rest.size());
  // Bytes that are no snapshot, at any cut: a checkpoint error, never a crash.
  for (const std::size_t cut :
       {std::size_t{1}, std::size_t{16}, std::size_t{17}, bytes.size() - 1}) {
    try {
      SnapshotFile bad(path, kSnapshotAt, cut);
      FAIL("accepted a snapshot cut at " << cut);
    } catch (const Error& e) {
      CHECK(e.category() == ErrorCategory::kCheckpoint);
    }
  }
  CHECK_THROWS_AS(SnapshotFile(dir.path + "/absent", 0, 10), Error);
}

TEST_CASE("within the budget, the most recently touched entries stay in memory") {
  CompileOptions o;
  o.knowledge_budget = 64 << 10;
  o.evicted = EvictedKnowledge::kLookUpAgain;
  KnowledgeStore store(o);
  for (int window = 0; window < 20; ++window) {
    for (int n = 0; n < 50; ++n) store.save(guid(window * 50 + n + 1), full_knowledge(n));
    store.end_window();
    CHECK(store.stats().memory_bytes <= o.knowledge_budget);
  }
  CHECK(store.stats().evicted > 0);
  CHECK(store.contains(guid(19 * 50 + 50)));  // the last window's
  CHECK_FALSE(store.contains(guid(1)));       // the first window's
}

TEST_CASE("every entry stays reachable while the index grows and entries are evicted") {
  // Thousands of guids made, evicted and made again over many windows: the index grows past its
  // first size and removes entries from the middle of probe runs. Whatever is still in memory is
  // exactly what was saved last, and nothing else is. (The check loads every entry in memory,
  // which touches it: the order of later evictions is not the store's own, which the test
  // "within the budget, the most recently touched entries stay in memory" covers.)
  CompileOptions o;
  o.knowledge_budget = 2 << 20;  // about a thousand of these entries after each window
  o.evicted = EvictedKnowledge::kLookUpAgain;
  KnowledgeStore store(o);
  std::map<int, int> last;  // guid number -> the knowledge saved last
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(1, 6000);
  const auto guid = [](int id) {  // distinct for every id (test::guid keeps its low byte only)
    Guid g = test::guid(id);
    g.bytes[2] = static_cast<std::uint8_t>(id >> 8);
    return g;
  };
  for (int window = 0; window < 40; ++window) {
    for (int i = 0; i < 500; ++i) {
      const int id = pick(rng);
      const int n = window * 1000 + i;
      store.save(guid(id), full_knowledge(n));
      last[id] = n;
    }
    store.end_window();
    std::size_t in_memory = 0, wrong = 0;
    for (const auto& [id, n] : last) {
      if (!store.contains(guid(id))) continue;
      ++in_memory;
      EntityKnowledge k;
      if (!store.load(guid(id), k) || !(k == full_knowledge(n))) ++wrong;
    }
    CHECK(wrong == 0);
    CHECK(in_memory == store.stats().entries);
    CHECK(store.stats().memory_bytes <= o.knowledge_budget);
  }
  CHECK(store.stats().evicted > 10000);
  CHECK(store.stats().entries > 500);
}

TEST_CASE("what get() returns stays where it is until end_window, however many entries follow") {
  CompileOptions o;
  o.evicted = EvictedKnowledge::kLookUpAgain;
  KnowledgeStore store(o);
  EntityKnowledge& first = store.get(guid(1));
  first = full_knowledge(1);
  for (int n = 0; n < 20000; ++n) {  // the index grows from 128 cells to 65,536 meanwhile
    Guid g = guid(2);
    g.bytes[4] = static_cast<std::uint8_t>(n >> 8);
    g.bytes[5] = static_cast<std::uint8_t>(n);
    store.get(g).props_known = true;
  }
  CHECK(&store.get(guid(1)) == &first);
  CHECK(first == full_knowledge(1));
  store.end_window();
  EntityKnowledge k;
  REQUIRE(store.load(guid(1), k));
  CHECK(k == full_knowledge(1));
}

TEST_CASE("a spill directory that cannot be used is an I/O error naming it") {
  CompileOptions o = tiny(EvictedKnowledge::kSpill, "/nonexistent/a2k-spill");
  KnowledgeStore store(o);
  store.save(guid(1), full_knowledge(1));
  try {
    store.end_window();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::kIo);
    CHECK(std::string(e.what()).find("/nonexistent/a2k-spill") != std::string::npos);
    CHECK(std::string(e.what()).find("--spill-dir") != std::string::npos);
  }
}

TEST_CASE("a tiny knowledge budget compiles byte for byte what an unbounded run does") {
  TempDir dir;
  std::size_t compared = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    testkit::GeneratorConfig config;
    config.length = 400;
    config.guids = 40 + seed % 60;
    config.big_values = seed % 4 == 0;
    const std::vector<Event> events = testkit::generate_stream(seed, config);
    for (const std::size_t window : {std::size_t{1}, std::size_t{7}, std::size_t{50}}) {
      CompileOptions unbounded;
      unbounded.window_events = window;
      unbounded.props_max_bytes = seed % 4 == 0 ? 2000 : 60000;
      unbounded.tombstone = seed % 2 ? Tombstone::kHard : Tombstone::kSoft;
      unbounded.knowledge_budget = std::numeric_limits<std::size_t>::max();
      CompileOptions bounded = unbounded;
      bounded.knowledge_budget = seed % 3 == 0 ? 1 : 2000 + seed * 50;
      bounded.spill_dir = dir.path;
      CAPTURE(seed);
      CAPTURE(window);
      CHECK(compile_to_sql(events, bounded) == compile_to_sql(events, unbounded));
      ++compared;
    }
  }
  CHECK(compared == 180);
  CHECK(dir.entries().empty());
}

TEST_CASE("a window closes early once its events outgrow the window budget") {
  std::vector<Event> events;
  for (int n = 1; n <= 40; ++n) {
    events.push_back(create({.id = n,
                             .qn = "q" + std::to_string(n),
                             .attrs = {{"payload", "\"" + std::string(1000, 'p') + "\""}},
                             .ms = n}));
  }
  CompileOptions o;
  o.window_events = 1000;
  o.window_budget = 5 * window_footprint(events.front());
  WindowCutter cut(o);
  std::vector<std::size_t> sizes;
  std::size_t in_window = 0;
  for (const Event& e : events) {
    ++in_window;
    if (cut.add(e)) {
      sizes.push_back(in_window);
      in_window = 0;
      cut.start();
    }
  }
  CHECK(sizes == std::vector<std::size_t>(8, 5));
  CHECK(cut.closed_early() == 8);
  // compile_to_sql cuts the same windows: 8 window comments.
  const std::string sql = compile_to_sql(events, o);
  std::size_t windows = 0;
  for (std::size_t at = 0; (at = sql.find(" phase 1: deletes", at)) != std::string::npos; ++at) {
    ++windows;
  }
  CHECK(windows == 8);
  CHECK(sql.find("-- window 8: events 36-40") != std::string::npos);
  // By event count, as before: window_events still closes windows, and is not "early".
  o.window_budget = std::numeric_limits<std::size_t>::max();
  o.window_events = 16;
  WindowCutter by_count(o);
  std::size_t closed = 0;
  for (const Event& e : events) {
    if (by_count.add(e)) {
      ++closed;
      by_count.start();
    }
  }
  CHECK(closed == 2);
  CHECK(by_count.closed_early() == 0);
}

TEST_CASE("--memory-budget shares: a default window of typical events fits its share") {
  const MemoryShares shares = split_memory_budget(kDefaultMemoryBudget);
  CHECK(shares.knowledge > 0);
  CHECK(shares.window > 0);
  CHECK(shares.knowledge + shares.window < kDefaultMemoryBudget);
  // A typical Hive-hook event: a table with four attributes.
  const Event typical = create({.id = 1,
                                .qn = "db7.t0b6f3c1e@cm",
                                .name = "t0b6f3c1e",
                                .attrs = {{"owner", "\"hive\""},
                                          {"createTime", "1619751226966"},
                                          {"description", "\"Table holding ops data\""}},
                                .ms = 1});
  CHECK(window_footprint(typical) * CompileOptions{}.window_events <= shares.window);
  const MemoryShares small = split_memory_budget(kMinMemoryBudget);
  CHECK(small.knowledge > 0);
  CHECK(small.window > 0);
}

TEST_CASE("a snapshot entry whose props are not what their text says is refused") {
  // The byte form keeps each member's offsets beside the cell's text: an entry changed in the
  // text alone still decodes, but its cell would reach entity_flat as it is (fuzz_snapshot).
  std::string entry;
  append_snapshot_entry(entry, guid(1), full_knowledge(1));
  CHECK(SnapshotFile(entry).entries() == 1);
  const std::size_t at = entry.find("createTime");
  REQUIRE(at != std::string::npos);
  for (const std::string& key : {std::string("\x14reateTime"),  // a raw control byte: not JSON
                                 std::string("zreateTime")}) {  // members out of order
    CAPTURE(key);
    std::string changed = entry;
    changed.replace(at, key.size(), key);
    EntityKnowledge decoded;
    std::string knowledge;
    SnapshotFile(entry).read_knowledge(0, knowledge);
    knowledge.replace(knowledge.find("createTime"), key.size(), key);
    decode_knowledge(knowledge, decoded);  // holds together
    CHECK_FALSE(matches_its_text(decoded.props));
    check_not_a_snapshot(changed);
  }
  EntityKnowledge k = full_knowledge(1);
  CHECK(matches_its_text(k.props));
  CHECK(is_foldable(k));
  CHECK(matches_its_text(Props{}));
  // A value nested past the default --max-json-depth (a run with --max-json-depth 1000 lets the
  // reader take it): what the run merged is still its own.
  Props deep;
  merge_attributes(deep, {{Attribute{"deep", std::string(900, '[') + std::string(900, ']')}}},
                   std::size_t{1} << 20);
  CHECK(matches_its_text(deep));
  std::string entry_deep;
  k.props = deep;
  append_snapshot_entry(entry_deep, guid(2), k);
  CHECK(SnapshotFile(entry_deep).entries() == 1);
}

TEST_CASE("a snapshot entry no fold could have made is refused: digest, texts, tags") {
  // Each change below leaves bytes that decode; the fold would act on them (a rename deletes
  // the entity_by_qn row of the stored digest; tags are looked up by binary search).
  const EntityKnowledge made = full_knowledge(3);
  REQUIRE(made.digest_valid);
  REQUIRE(made.tags_known);
  CHECK(is_foldable(made));
  for (int n = 1; n <= 12; ++n) CHECK(is_foldable(full_knowledge(n)));
  std::vector<std::pair<std::string, EntityKnowledge>> changed;
  const auto change = [&](std::string what, const std::function<void(EntityKnowledge&)>& edit) {
    EntityKnowledge k = made;
    edit(k);
    changed.emplace_back(std::move(what), std::move(k));
  };
  change("a digest byte", [](EntityKnowledge& k) { k.digest[7] ^= 1; });
  change("a digest of another qualifiedName",
         [](EntityKnowledge& k) { k.qualified_name = "db.other@cl"; });
  change("a digest beside an unknown qualifiedName", [](EntityKnowledge& k) {
    k.qn_state = Cell::kUnknown;
    k.qualified_name.clear();
  });
  change("a digest beside a null type", [](EntityKnowledge& k) {
    k.type_state = Cell::kNull;
    k.type_name.clear();
  });
  change("a type text beside an unknown type", [](EntityKnowledge& k) {
    k.digest_valid = false;
    k.digest = {};
    k.type_state = Cell::kUnknown;
  });
  change("a qualifiedName text beside a null one", [](EntityKnowledge& k) {
    k.digest_valid = false;
    k.digest = {};
    k.qn_state = Cell::kNull;
  });
  change("tags out of order", [](EntityKnowledge& k) { k.tags = {"TIER1", "PII"}; });
  change("a tag twice", [](EntityKnowledge& k) { k.tags = {"PII", "PII"}; });
  for (const auto& change_made : changed) {
    const std::string& what = change_made.first;  // CAPTURE's lambda cannot name a binding
    const EntityKnowledge& k = change_made.second;
    CAPTURE(what);
    CHECK_FALSE(is_foldable(k));
    std::string entry;
    append_snapshot_entry(entry, guid(3), k);
    std::string knowledge;
    encode_knowledge(k, knowledge);
    EntityKnowledge decoded;
    decode_knowledge(knowledge, decoded);  // holds together
    CHECK(decoded == k);
    check_not_a_snapshot(entry);
  }
  // The texts may be any bytes, as the tables hold them: a prior lookup hands them over.
  EntityKnowledge stored = made;
  stored.qualified_name = "db.\xff\xfe@cl";
  stored.tags = {"PII", "\x80"};  // compared as unsigned bytes, as std::sort does
  stored.digest = qn_digest(stored.type_name, stored.qualified_name);
  CHECK(is_foldable(stored));
  std::string entry;
  append_snapshot_entry(entry, guid(3), stored);
  CHECK(SnapshotFile(entry).entries() == 1);
}

TEST_CASE("a window's knowledge snapshot: what was known before it, assumed by a resumed run") {
  CompileOptions o;
  o.prior = PriorSource::kImpala;
  Compiler first(o);
  const std::vector<Event> window = {
      test::update({.id = 1, .qn = "db.a@c", .ms = 1}), test::tags(2, {{"PII", 2}}, 2),
      test::relationship(Operation::kRelationshipCreate, 1, 3, "r", 3)};
  // What the tables held: entity 1 a DataSet, entity 2 nothing. Entity 3 is only an edge's end.
  std::vector<PriorEntity> found(2);
  found[0].guid = test::guid(1);
  found[0].exists = true;
  found[0].type_name = "DataSet";
  found[0].qualified_name = "db.a@c";
  found[0].props_json = R"({"owner":"x"})";
  found[1].guid = test::guid(2);
  REQUIRE(first.unknown_entities(window) == std::vector<Guid>{test::guid(1), test::guid(2)});
  first.learn(found);
  const std::string snapshot = first.knowledge_snapshot(window);
  first.fold(window);  // entity 1 becomes a hive_table: the snapshot still says DataSet

  // A resumed run folds the window from the snapshot, not from tables holding part of it, and
  // gives the same statements.
  Compiler again(o);
  again.assume(snapshot);
  CHECK(again.unknown_entities(window).empty());
  Compiler direct(o);
  direct.learn(found);
  const auto sql = [&](Compiler& c) {
    std::string out;
    NetWindow net = c.fold(window);
    const CompiledWindow compiled = plan_window(net, o);
    for (const Statement& s : compiled.deletes) out += s.sql + ";\n";
    for (const Statement& s : compiled.upserts) out += s.sql + ";\n";
    return out;
  };
  CHECK(sql(again) == sql(direct));

  // What is known already wins over a snapshot.
  Compiler known(o);
  std::vector<PriorEntity> other(1);
  other[0].guid = test::guid(1);
  known.learn(other);  // entity 1: no row
  known.assume(snapshot);
  CHECK(known.knowledge_snapshot(window) != snapshot);

  // Merging keeps the earlier snapshot's entry where both name an entity, and every entity.
  Compiler later(o);
  std::vector<PriorEntity> third(1);
  third[0].guid = test::guid(1);
  later.learn(third);
  const std::vector<Event> one = {test::update({.id = 1, .qn = "db.a@c", .ms = 5}),
                                  test::update({.id = 4, .qn = "db.d@c", .ms = 6})};
  std::vector<PriorEntity> fourth(1);
  fourth[0].guid = test::guid(4);
  later.learn(fourth);
  const std::string merged = merge_knowledge_snapshots(snapshot, later.knowledge_snapshot(one));
  Compiler from_merged(o);
  from_merged.assume(merged);
  CHECK(from_merged.knowledge_snapshot(window) == snapshot);  // entity 1 as the earlier one has it
  CHECK(from_merged.unknown_entities(one).empty());           // entity 4 from the later one
  CHECK(merge_knowledge_snapshots(snapshot, "") == snapshot);
  CHECK(merge_knowledge_snapshots("", snapshot) == snapshot);

  // Bytes of no snapshot are a checkpoint error, never a crash.
  for (const std::size_t cut : {std::size_t{1}, std::size_t{16}, snapshot.size() - 1}) {
    Compiler c(o);
    CHECK_THROWS_AS(c.assume(std::string_view(snapshot).substr(0, cut)), Error);
  }
  try {
    Compiler c(o);
    c.assume(snapshot + snapshot);  // entries out of order
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::kCheckpoint);
  }
}

TEST_SUITE_END();
