// The spill store: what is put reads back (while its index entries wait in memory and once they
// are written), replaced entries read their last bytes, the index doubles without losing entries
// (also when many guids sit far from their home bucket, and across the chunks a doubling reads),
// guids that share a home bucket stay apart, long records, and the files never show in the
// directory.
#include "compile/spill_store.h"

#include <dirent.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/error.h"

TEST_SUITE_BEGIN("spill_store");

using namespace atlas2kudu;

namespace {

Guid numbered(std::uint64_t n) {
  Guid g;
  // Spread the number over the bytes (splitmix64), as random v4 uuids are.
  std::uint64_t z = n + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  for (int i = 0; i < 8; ++i) {
    g.bytes[i] = static_cast<std::uint8_t>(z >> (8 * i));
    g.bytes[8 + i] = static_cast<std::uint8_t>(n >> (8 * i));
  }
  return g;
}

std::uint64_t number_of(const Guid& g) {
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t{g.bytes[8 + i]} << (8 * i);
  return n;
}

std::string bytes_for(std::uint64_t n, int version) {
  return "entry " + std::to_string(n) + " v" + std::to_string(version) +
         std::string(n % 97, static_cast<char>('a' + n % 26));
}

// Only 16 top bits' worth of spread: most homes crowd the first 1/16 of the table.
std::uint64_t crowded(const Guid& g) {
  return (number_of(g) * 0x9e3779b97f4a7c15ULL) >> 4;
}
// Four hashes for all guids.
std::uint64_t four(const Guid& g) {
  return (number_of(g) % 4 + 1) << 62;
}
std::uint64_t one(const Guid&) {
  return 42;
}

struct TempDir {
  TempDir() {
    char name[] = "/tmp/a2k-spill-test-XXXXXX";
    REQUIRE(mkdtemp(name) != nullptr);
    path = name;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  bool empty() const {
    DIR* d = opendir(path.c_str());
    REQUIRE(d != nullptr);
    int n = 0;
    while (readdir(d) != nullptr) ++n;
    closedir(d);
    return n == 2;
  }
  std::string path;
};

void put_range(SpillStore& store, std::uint64_t from, std::uint64_t to, int version) {
  std::vector<std::pair<Guid, std::string>> batch;
  for (std::uint64_t n = from; n < to; ++n) batch.emplace_back(numbered(n), bytes_for(n, version));
  store.put(batch);
}

void check_range(SpillStore& store, std::uint64_t from, std::uint64_t to, int version) {
  std::string out;
  std::uint64_t wrong = 0;
  for (std::uint64_t n = from; n < to; ++n) {
    if (!store.get(numbered(n), out) || out != bytes_for(n, version)) ++wrong;
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("entries read back across index doublings; replaced ones read their last bytes") {
  // Index entries held in memory until there are that many (the default, none, some batches).
  for (const std::size_t pending :
       {SpillStore::kPendingEntries, std::size_t{1}, std::size_t{7000}}) {
    CAPTURE(pending);
    TempDir dir;
    SpillStore store(dir.path, nullptr, pending);
    CHECK(dir.empty());  // unlinked at once
    const std::size_t first_buckets = store.buckets();
    for (std::uint64_t n = 0; n < 60000; n += 3000) put_range(store, n, n + 3000, 1);
    check_range(store, 0, 60000, 1);  // before entries() writes what is pending
    CHECK(store.entries() == 60000);
    CHECK(store.buckets() >= 4 * first_buckets);  // doubled at least twice, past one rebuild chunk
    check_range(store, 0, 60000, 1);
    put_range(store, 20000, 40000, 2);
    check_range(store, 20000, 40000, 2);
    CHECK(store.entries() == 60000);
    check_range(store, 0, 20000, 1);
    check_range(store, 20000, 40000, 2);
    check_range(store, 40000, 60000, 1);
    std::string out = "untouched";
    CHECK_FALSE(store.get(numbered(60000), out));
    CHECK_FALSE(store.get(numbered(1u << 30), out));
    CHECK(out == "untouched");
    CHECK(dir.empty());
  }
}

TEST_CASE(
    "a guid put in several batches while its index entries are pending reads its last bytes") {
  TempDir dir;
  SpillStore store(dir.path, nullptr, 5000);
  put_range(store, 0, 4000, 1);     // pending
  put_range(store, 1000, 2000, 2);  // pending twice
  put_range(store, 1500, 1600, 3);
  check_range(store, 0, 1000, 1);
  check_range(store, 1000, 1500, 2);
  check_range(store, 1500, 1600, 3);
  check_range(store, 1600, 2000, 2);
  put_range(store, 4000, 5000, 1);  // 5,600 pending: written, in batch order
  check_range(store, 1000, 1500, 2);
  check_range(store, 1500, 1600, 3);
  put_range(store, 1500, 1550, 4);  // on disk and pending: the pending one wins
  check_range(store, 1500, 1550, 4);
  check_range(store, 1550, 1600, 3);
  CHECK(store.entries() == 5000);
  check_range(store, 1500, 1550, 4);
  check_range(store, 1550, 1600, 3);
  check_range(store, 4000, 5000, 1);
}

TEST_CASE("small batches update the index slot by slot, across doublings") {
  TempDir dir;
  SpillStore store(dir.path, nullptr, 1);
  for (std::uint64_t n = 0; n < 24000; n += 3) put_range(store, n, n + 3, 1);
  for (std::uint64_t n = 0; n < 24000; n += 1000) put_range(store, n, n + 2, 2);
  CHECK(store.buckets() > 4096);  // written as they came
  CHECK(store.entries() == 24000);
  for (std::uint64_t n = 0; n < 24000; n += 1000) {
    check_range(store, n, n + 2, 2);
    check_range(store, n + 2, n + 1000, 1);
  }
}

TEST_CASE("entries far from their home bucket survive the doublings") {
  TempDir dir;
  SpillStore store(dir.path, crowded, 1);
  put_range(store, 0, 30000, 1);
  CHECK(store.entries() == 30000);
  check_range(store, 0, 30000, 1);
  put_range(store, 0, 30000, 2);
  check_range(store, 0, 30000, 2);
  CHECK(store.entries() == 30000);
}

TEST_CASE("guids that share a hash keep their own entries") {
  TempDir dir;
  for (const std::size_t pending : {SpillStore::kPendingEntries, std::size_t{1}}) {
    CAPTURE(pending);
    SpillStore store(dir.path, four, pending);
    put_range(store, 0, 40, 1);
    put_range(store, 0, 40, 2);  // each replaces its own entry, not a namesake's
    put_range(store, 0, 20, 3);
    check_range(store, 0, 20, 3);
    check_range(store, 20, 40, 2);
    CHECK(store.entries() == 40);
    check_range(store, 0, 20, 3);
    check_range(store, 20, 40, 2);
    std::string out;
    CHECK_FALSE(store.get(numbered(41), out));  // same hash as 1, never put
  }
}

TEST_CASE("a guid put twice in one batch reads its second bytes") {
  TempDir dir;
  SpillStore store(dir.path);
  store.put({{numbered(7), "first"}, {numbered(8), "other"}, {numbered(7), "second"}});
  std::string out;
  REQUIRE(store.get(numbered(7), out));  // from the pending index entries
  CHECK(out == "second");
  CHECK(store.entries() == 2);
  out.clear();
  REQUIRE(store.get(numbered(7), out));  // from the index file
  CHECK(out == "second");
}

TEST_CASE("long and empty records read back whole") {
  TempDir dir;
  SpillStore store(dir.path);
  const std::string at_hint(0xFFFF, 'h');
  const std::string past_hint(0xFFFF + 1, 'p');
  const std::string huge(3 << 20, 'x');  // larger than the log's buffer
  store.put({{numbered(1), at_hint},
             {numbered(2), past_hint},
             {numbered(3), huge},
             {numbered(4), ""},
             {numbered(5), "short"}});
  std::string out;
  REQUIRE(store.get(numbered(1), out));
  CHECK(out == at_hint);
  REQUIRE(store.get(numbered(2), out));
  CHECK(out == past_hint);
  REQUIRE(store.get(numbered(3), out));
  CHECK(out == huge);
  REQUIRE(store.get(numbered(4), out));
  CHECK(out.empty());
  REQUIRE(store.get(numbered(5), out));
  CHECK(out == "short");
  CHECK(store.log_bytes() == 5 * 20 + at_hint.size() + past_hint.size() + huge.size() + 5);
}

TEST_CASE("more guids on one hash than a probe run holds: an I/O error, not a hang") {
  TempDir dir;
  std::vector<std::pair<Guid, std::string>> batch;
  for (int n = 0; n < 200; ++n) batch.emplace_back(numbered(n), "x");
  // Written at once, or when the pending entries are (here by entries()).
  for (const std::size_t pending : {std::size_t{1}, SpillStore::kPendingEntries}) {
    CAPTURE(pending);
    SpillStore store(dir.path, one, pending);
    try {
      store.put(batch);
      (void)store.entries();
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.category() == ErrorCategory::kIo);
      CHECK(std::string(e.what()).find("share a home") != std::string::npos);
    }
  }
}

TEST_CASE("the index entries held in memory are an eighth of the knowledge share, within bounds") {
  // The default --memory-budget's knowledge share holds all of them; 64M's, an eighth of its
  // 7.2 MiB (spill_store.h: all of them took that run over its budget); a tiny share, the floor.
  const std::size_t mib = std::size_t{1} << 20;
  CHECK(SpillStore::pending_entries_for(split_memory_budget(256 * mib).knowledge) ==
        SpillStore::kPendingEntries);
  const std::size_t at_64m =
      SpillStore::pending_entries_for(split_memory_budget(64 * mib).knowledge);
  CHECK(at_64m == split_memory_budget(64 * mib).knowledge / 8 / 32);
  CHECK(at_64m * 32 < mib);
  CHECK(SpillStore::pending_entries_for(0) == 4096);
}

TEST_CASE("a directory that cannot hold the files is an I/O error naming it") {
  try {
    SpillStore store("/nonexistent/a2k-spill");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::kIo);
    CHECK(std::string(e.what()).find("/nonexistent/a2k-spill") != std::string::npos);
    CHECK(std::string(e.what()).find("--spill-dir") != std::string::npos);
  }
}

TEST_SUITE_END();
