#include "util/key16_index.h"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <map>
#include <random>

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
