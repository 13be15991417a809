// The resident-memory ceiling: when unused pages are released, and how often it looks.
#include "util/resident_memory.h"

#include <doctest/doctest.h>
#include <sys/prctl.h>

#include <cstring>
#include <memory>

TEST_SUITE_BEGIN("resident_memory");

using namespace atlas2kudu;

namespace {

int g_released = 0;
void count_release() {
  ++g_released;
}

// Restores "no release function, no ceiling" whatever a case leaves.
struct Reset {
  ~Reset() {
    set_unused_memory_release(nullptr);
    set_resident_memory_ceiling(0);
  }
};

}  // namespace

TEST_CASE("resident memory grows with the pages touched") {
  const std::optional<std::size_t> before = resident_memory_bytes();
  REQUIRE(before.has_value());
  CHECK(*before > std::size_t{1} << 20);  // code and libraries at least
  constexpr std::size_t kSize = std::size_t{32} << 20;
  const std::unique_ptr<char[]> block(new char[kSize]);
  std::memset(block.get(), 1, kSize);
  const std::optional<std::size_t> after = resident_memory_bytes();
  REQUIRE(after.has_value());
  CHECK(*after >= *before + kSize - (std::size_t{2} << 20));
  CHECK(block[kSize - 1] == 1);
}

TEST_CASE("unused pages are released only above the ceiling") {
  const Reset reset;
  g_released = 0;
  const std::size_t resident = resident_memory_bytes().value();

  // No release function, or no ceiling: nothing to do.
  set_resident_memory_ceiling(1);
  keep_resident_memory_under_ceiling(true);
  set_unused_memory_release(&count_release);
  set_resident_memory_ceiling(0);
  keep_resident_memory_under_ceiling(true);
  CHECK(g_released == 0);

  // Under the ceiling: kept.
  set_resident_memory_ceiling(resident + (std::size_t{1} << 30));
  keep_resident_memory_under_ceiling(true);
  CHECK(g_released == 0);

  // Above it: released at each check, and counted.
  const std::uint64_t releases = unused_memory_releases();
  set_resident_memory_ceiling(std::size_t{1} << 20);
  keep_resident_memory_under_ceiling(true);
  CHECK(g_released == 1);
  CHECK(unused_memory_releases() == releases + 1);
}

TEST_CASE("transparent huge pages: turned off and on again for the process") {
  const bool before = transparent_huge_pages_allowed();
  if (!allow_transparent_huge_pages(false)) {
    MESSAGE("the kernel refused PR_SET_THP_DISABLE: nothing to check here");
    return;
  }
  CHECK_FALSE(transparent_huge_pages_allowed());
  REQUIRE(allow_transparent_huge_pages(true));
  CHECK(transparent_huge_pages_allowed());
  // Off when the process started (a parent's choice): they stay off.
  REQUIRE(allow_transparent_huge_pages(false));
  defer_transparent_huge_pages();
  CHECK_FALSE(allow_transparent_huge_pages(true));
  CHECK_FALSE(transparent_huge_pages_allowed());
  // On when it started: a command may allow them.
  ::prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
  defer_transparent_huge_pages();
  CHECK_FALSE(transparent_huge_pages_allowed());
  CHECK(allow_transparent_huge_pages(true));
  CHECK(transparent_huge_pages_allowed());
  allow_transparent_huge_pages(before);
}

TEST_CASE("without `now`, one call in kResidentCheckInterval looks") {
  const Reset reset;
  g_released = 0;
  set_unused_memory_release(&count_release);
  set_resident_memory_ceiling(std::size_t{1} << 20);
  for (std::uint32_t i = 0; i < 3 * kResidentCheckInterval; ++i) {
    keep_resident_memory_under_ceiling();
  }
  CHECK(g_released == 3);
}

TEST_CASE("the budget's ceiling leaves an eighth for what a window adds between checks") {
  CHECK(resident_ceiling_for_budget(std::size_t{256} << 20) == std::size_t{224} << 20);
  CHECK(resident_ceiling_for_budget(std::size_t{64} << 20) == std::size_t{56} << 20);
}

TEST_SUITE_END();
