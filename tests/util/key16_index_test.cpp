#include "util/key16_index.h"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

TEST_SUITE_BEGIN("key16_index");

using namespace atlas2kudu;

namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFF;
using Index = Key16Index<std::uint32_t, kNone>;
using Key = std::array<std::uint8_t, 16>;

Key key(std::uint32_t n) {
  Key k{};
  for (int i = 0; i < 4; ++i)
    k[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
  k[15] = 0x5A;
  return k;
}

}  // namespace

TEST_CASE("the worked example of the header") {
  Index rows(1000);
  bool made = false;
  std::uint32_t& r = rows.try_emplace(key(1).data(), 7, made);
  CHECK(made);
  CHECK(r == 7);
  CHECK(rows.find(key(1).data()) == 7);
  CHECK(rows.try_emplace(key(1).data(), 8, made) == 7);  // there already: kept
  CHECK_FALSE(made);
  CHECK(rows.size() == 1);
  rows.erase(key(1).data());
  CHECK(rows.find(key(1).data()) == kNone);
  CHECK(rows.size() == 0);
  rows.erase(key(1).data());  // absent: nothing happens
  CHECK(rows.size() == 0);
}

TEST_CASE("inserts and removals in any order agree with std::map, through growth") {
  // A small start, so that the table grows many times, and removals from every position of
  // probe runs, also runs that wrap around the end of the array.
  for (const std::uint32_t keys : {40u, 3000u, 60000u}) {
    CAPTURE(keys);
    Index index(4);
    std::map<std::uint32_t, std::uint32_t> model;
    std::mt19937 rng(keys);
    std::uniform_int_distribution<std::uint32_t> pick(0, keys - 1);
    std::size_t disagreements = 0;
    for (std::uint32_t step = 0; step < keys * 20; ++step) {
      const std::uint32_t k = pick(rng);
      if (rng() % 3 == 0) {
        index.erase(key(k).data());
        model.erase(k);
      } else {
        bool made = false;
        const std::uint32_t got = index.try_emplace(key(k).data(), step, made);
        const auto [it, inserted] = model.try_emplace(k, step);
        if (made != inserted || got != it->second) ++disagreements;
      }
      if (step % 97 == 0) {
        const std::uint32_t probe = pick(rng);
        const auto it = model.find(probe);
        if (index.find(key(probe).data()) != (it == model.end() ? kNone : it->second))
          ++disagreements;
      }
    }
    CHECK(disagreements == 0);
    CHECK(index.size() == model.size());
    std::size_t missing = 0;
    for (const auto& [k, v] : model) missing += index.find(key(k).data()) != v;
    CHECK(missing == 0);
    for (std::uint32_t k = 0; k < keys; ++k) {
      if (!model.count(k)) missing += index.find(key(k).data()) != kNone;
    }
    CHECK(missing == 0);
  }
}

TEST_CASE("erase from a probe run that wraps around the end of the array") {
  // Keys whose homes (under this process's hash key) are the last cells of a 16-cell table and
  // the first: together they make a run that crosses from cell 15 to cell 0. Inserted in every
  // rotation of their order, erasing any one of them, then the rest, must leave every other key
  // reachable.
  constexpr std::size_t kCells = 16;  // Index(4) starts at 16 cells, 8 keys before it grows
  const std::vector<std::size_t> homes = {13, 14, 15, 15, 0, 0, 1};
  std::vector<Key> keys;
  std::uint32_t n = 0;
  for (const std::size_t wanted : homes) {
    for (;; ++n) {
      const Key k = key(n);
      if ((siphash13_16(process_hash_key(), k.data()) & (kCells - 1)) == wanted) {
        keys.push_back(k);
        ++n;
        break;
      }
    }
  }
  std::size_t wrong = 0;
  for (std::size_t gone = 0; gone < keys.size(); ++gone) {
    for (std::size_t rotation = 0; rotation < keys.size(); ++rotation) {
      Index index(4);
      bool made = false;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::size_t at = (i + rotation) % keys.size();
        index.try_emplace(keys[at].data(), static_cast<std::uint32_t>(at), made);
      }
      REQUIRE(index.bytes() == kCells * (16 + sizeof(std::uint32_t)));  // has not grown
      index.erase(keys[gone].data());
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::uint32_t expected = i == gone ? kNone : static_cast<std::uint32_t>(i);
        wrong += index.find(keys[i].data()) != expected;
      }
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (i == gone) continue;
        index.erase(keys[i].data());
        for (std::size_t j = i + 1; j < keys.size(); ++j) {
          if (j != gone) wrong += index.find(keys[j].data()) != static_cast<std::uint32_t>(j);
        }
      }
      wrong += index.size() != 0;
    }
  }
  CHECK(wrong == 0);
}

TEST_CASE("a value made only for a new key, and nothing stored when making it throws") {
  Index index;
  bool made = false;
  int calls = 0;
  index.find_or_make(
      key(1).data(),
      [&] {
        ++calls;
        return 5u;
      },
      made);
  CHECK(made);
  CHECK(index.find_or_make(
            key(1).data(),
            [&] {
              ++calls;
              return 6u;
            },
            made) == 5);
  CHECK_FALSE(made);
  CHECK(calls == 1);
  CHECK_THROWS(index.find_or_make(
      key(2).data(), []() -> std::uint32_t { throw 1; }, made));
  CHECK(index.find(key(2).data()) == kNone);
  CHECK(index.size() == 1);
}

TEST_CASE("pointer values, with nullptr as the free mark") {
  int a = 1, b = 2;
  Key16Index<int*, nullptr> index;
  bool made = false;
  index.try_emplace(key(1).data(), &a, made);
  index.try_emplace(key(2).data(), &b, made);
  CHECK(index.find(key(1).data()) == &a);
  CHECK(index.find(key(2).data()) == &b);
  CHECK(index.find(key(3).data()) == nullptr);
}
