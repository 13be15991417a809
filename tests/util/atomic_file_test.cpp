// Files replaced atomically: unique temporaries beside the target, never a planted symlink, the
// target untouched until commit, and only a regular file (or nothing) replaced.
#include "util/atomic_file.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "atlas2kudu/error.h"

TEST_SUITE_BEGIN("atomic_file");

using namespace atlas2kudu;

namespace {

std::filesystem::path scratch() {
  char dir[] = "/tmp/atlas2kudu-atomic-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  return dir;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t entries(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("two writers of one target at once use distinct temporaries; each commit is whole") {
  const auto dir = scratch();
  const std::string target = (dir / "run.ckpt").string();
  AtomicFile a(target, 0600);
  AtomicFile b(target, 0600);
  CHECK(entries(dir) == 2);  // two temporaries, no target yet
  std::fputs("from a\n", a.stream());
  std::fputs("from b\n", b.stream());
  a.commit();
  CHECK(read(target) == "from a\n");
  b.commit();
  CHECK(read(target) == "from b\n");
  CHECK(entries(dir) == 1);
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::filesystem::remove_all(dir);
}

TEST_CASE("temporaries a killed run left are removed once their process is gone and they are old") {
  const auto dir = scratch();
  const auto target = dir / "run.sql";
  // A process that has certainly ended: a child, waited for.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  const auto plant = [&](const std::string& name, bool old) {
    std::ofstream(dir / name) << "half a script";
    if (old) {
      const utimbuf long_ago{std::time(nullptr) - 3600, std::time(nullptr) - 3600};
      REQUIRE(::utime((dir / name).c_str(), &long_ago) == 0);
    }
  };
  const std::string dead = "run.sql.tmp-" + std::to_string(child) + "-0badf00d";
  const std::string recent = "run.sql.tmp-" + std::to_string(child) + "-0000beef";
  const std::string alive = "run.sql.tmp-" + std::to_string(::getppid()) + "-00c0ffee";
  const std::string other = "other.sql.tmp-" + std::to_string(child) + "-0badf00d";
  const std::string not_ours = "run.sql.tmp-notapid-0badf00d";
  plant(dead, true);
  plant(recent, false);
  plant(alive, true);
  plant(other, true);
  plant(not_ours, true);
  AtomicFile out(target.string(), 0644);
  CHECK_FALSE(std::filesystem::exists(dir / dead));
  CHECK(std::filesystem::exists(dir / recent));    // written lately: perhaps another host's run
  CHECK(std::filesystem::exists(dir / alive));     // its process still runs
  CHECK(std::filesystem::exists(dir / other));     // another target's
  CHECK(std::filesystem::exists(dir / not_ours));  // not a name atlas2kudu writes
  out.commit();
  std::filesystem::remove_all(dir);
}

TEST_CASE("an uncommitted file leaves the target as it was and no temporary behind") {
  const auto dir = scratch();
  const std::string target = (dir / "out.sql").string();
  std::ofstream(target) << "old\n";
  {
    AtomicFile f(target, 0644);
    std::fputs("new, half written", f.stream());
  }
  CHECK(read(target) == "old\n");
  CHECK(entries(dir) == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a symlink, FIFO or directory at the target is refused, before and at commit") {
  const auto dir = scratch();
  const auto victim = dir / "victim";
  std::ofstream(victim) << "precious\n";
  std::filesystem::create_symlink(victim, dir / "link");
  CHECK_THROWS_AS(AtomicFile((dir / "link").string(), 0644), Error);
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK_THROWS_AS(AtomicFile((dir / "fifo").string(), 0644), Error);
  CHECK_THROWS_AS(AtomicFile(dir.string(), 0644), Error);
  // Planted after the start: the commit checks again and leaves the victim alone.
  AtomicFile late((dir / "late").string(), 0644);
  std::fputs("x", late.stream());
  std::filesystem::create_symlink(victim, dir / "late");
  CHECK_THROWS_AS(late.commit(), Error);
  CHECK(read(victim) == "precious\n");
  std::filesystem::remove_all(dir);
}

TEST_SUITE_END();
