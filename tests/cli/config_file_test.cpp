// --config files and "did you mean": the parts of the command line that read text of their own.
#include "cli/config_file.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "atlas2kudu/error.h"
#include "cli/suggest.h"

TEST_SUITE_BEGIN("config_file");

using namespace atlas2kudu;

namespace {

std::string write_temp(const std::string& text) {
  char path[] = "/tmp/atlas2kudu-config-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(path) << text;
  return path;
}

// The message of the usage error reading `path` gives ("" if it reads).
std::string usage_error_reading(const std::string& path) {
  try {
    read_config_file(path);
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::kUsage);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sections, comments, quotes and repeated keys") {
  const std::string path = write_temp(
      "# cron settings\n"
      "[atlas2kudu]\n"
      "impalad = impalad.example.com:21050\n"
      "  ssl=true\n"
      "; a comment\n"
      "\n"
      "[atlas2kudu.apply]\n"
      "checkpoint = \" /var/lib/a2k/e.ckpt \"\n"
      "[atlas2kudu.query_options]\n"
      "MEM_LIMIT = 2g\n"
      "MT_DOP=0\n");
  const ConfigFile c = read_config_file(path);
  REQUIRE(c.common.size() == 2);
  CHECK(c.common[0].key == "impalad");
  CHECK(c.common[0].value == "impalad.example.com:21050");
  CHECK(c.common[0].where == path + ":3");
  CHECK(c.common[1].key == "ssl");
  CHECK(c.common[1].value == "true");
  REQUIRE(c.per_command.count("apply") == 1);
  CHECK(c.per_command.at("apply")[0].value == " /var/lib/a2k/e.ckpt ");
  REQUIRE(c.query_options.size() == 2);
  CHECK(c.query_options[1].key == "MT_DOP");
  CHECK(c.query_options[1].value == "0");
  std::remove(path.c_str());
}

TEST_CASE("bad lines are usage errors naming FILE:LINE") {
  const auto error_of = [](const std::string& text) {
    const std::string path = write_temp(text);
    std::string message;
    try {
      read_config_file(path, {"check", "compile", "apply", "ddl", "digest"});
    } catch (const Error& e) {
      CHECK(e.category() == ErrorCategory::kUsage);
      message = e.what();
      message.replace(0, path.size(), "F");
    }
    std::remove(path.c_str());
    return message;
  };
  CHECK(error_of("ssl = true\n") ==
        "F:1: KEY = VALUE before any section; start the file with [atlas2kudu]");
  CHECK(error_of("[atlas2kudu]\nssl\n") == "F:2: expected KEY = VALUE, a [section] or a # comment");
  // A NUL would cut the value short unseen where the option reads it.
  CHECK(error_of(std::string("[atlas2kudu]\nmax_rejects = 8\0x\n", 30)) ==
        "F:2: a NUL byte at column 16: not a text file");
  // An unknown section: its hint, if any, then the sections there are.
  const auto unknown_section = [&](const std::string& name) {
    const std::string message = error_of("[" + name + "]\n");
    const std::string head = "F:1: unknown section [" + name + "]";
    const std::string tail =
        " (sections: [atlas2kudu], [atlas2kudu.COMMAND], [atlas2kudu.query_options])";
    REQUIRE(message.starts_with(head));
    REQUIRE(message.ends_with(tail));
    return message.substr(head.size(), message.size() - head.size() - tail.size());
  };
  CHECK(unknown_section("impala") == " (impala-shell's section: here it is [atlas2kudu])");
  CHECK(unknown_section("IMPALA.Query_Options") ==
        " (impala-shell's section: here it is [atlas2kudu.query_options])");
  // Section names are case-sensitive.
  CHECK(unknown_section("ATLAS2KUDU.ddl") == " (did you mean [atlas2kudu.ddl]?)");
  CHECK(unknown_section("Atlas2Kudu") == " (did you mean [atlas2kudu]?)");
  // A near match only where there is one: "[atlas2kudu.]" is no [atlas2kudu.] section.
  CHECK(unknown_section("atlas2kudu.") == " (did you mean [atlas2kudu]?)");
  CHECK(unknown_section("ATLAS2KUDU.query-options") ==
        " (did you mean [atlas2kudu.query_options]?)");
  CHECK(unknown_section("ATLAS2KUDU.nosuch").empty());
  // Near by what follows the prefix: a short name is no typo of another short one.
  CHECK(unknown_section("ATLAS2KUDU.run").empty());
  CHECK(unknown_section("ATLAS2KUDU.Help").empty());
  CHECK(unknown_section("atlas2kudu_ddl") == " (did you mean [atlas2kudu.ddl]?)");
  CHECK(unknown_section("impala.query-options") ==
        " (impala-shell's section: here it is [atlas2kudu.query_options])");
  CHECK(unknown_section("other").empty());
  CHECK(error_of("[atlas2kudu\n") == "F:1: a section header ends with ']'");
  CHECK(error_of("[atlas2kudu]\n = x\n") ==
        "F:2: expected KEY = VALUE, a [section] or a # comment");
}

TEST_CASE("a command to execute from a file anyone may write is refused") {
  const std::string path = write_temp(
      "[atlas2kudu]\nldap = true\n[atlas2kudu.apply]\nldap_password_cmd = pass show "
      "impala/etl\n");
  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  CHECK(usage_error_reading(path) == path +
                                         ":4: ldap_password_cmd is a command this run would "
                                         "execute, and anyone may write to " +
                                         path + " (mode 0666): chmod o-w " + path);
  // Whatever the case of its key.
  const std::string shouted = write_temp("[atlas2kudu]\nJWT_CMD = vault read -field=jwt x\n");
  REQUIRE(::chmod(shouted.c_str(), 0666) == 0);
  CHECK(usage_error_reading(shouted) == shouted +
                                            ":2: JWT_CMD is a command this run would execute, "
                                            "and anyone may write to " +
                                            shouted + " (mode 0666): chmod o-w " + shouted);
  std::remove(shouted.c_str());
  // Writable by its group, or by no one else: read as before.
  REQUIRE(::chmod(path.c_str(), 0664) == 0);
  CHECK(read_config_file(path).per_command.at("apply").size() == 1);
  // Owned by another user (who could make it writable at any time), as root alone can arrange.
  if (::geteuid() == 0 && ::chown(path.c_str(), 65534, static_cast<gid_t>(-1)) == 0) {
    REQUIRE(::chmod(path.c_str(), 0644) == 0);
    CHECK(usage_error_reading(path) == path +
                                           ":4: ldap_password_cmd is a command this run would "
                                           "execute, and " +
                                           path +
                                           " belongs to another user (uid 65534): chown it to "
                                           "this run's user (uid 0) or root");
    // Without a command to execute, another user's file is read.
    const std::string plain = write_temp("[atlas2kudu]\nldap = true\n");
    REQUIRE(::chown(plain.c_str(), 65534, static_cast<gid_t>(-1)) == 0);
    CHECK(read_config_file(plain).common.size() == 1);
    std::remove(plain.c_str());
  }
  std::remove(path.c_str());
}

TEST_CASE("a missing file is a missing input") {
  try {
    read_config_file("/nonexistent/atlas2kudu.conf");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::kNoInput);
    CHECK(std::string(e.what()) ==
          "/nonexistent/atlas2kudu.conf: cannot read the --config file: No such file or directory");
  }
}

TEST_CASE("booleans and key spellings") {
  CHECK(parse_config_bool("TRUE") == 1);
  CHECK(parse_config_bool("yes") == 1);
  CHECK(parse_config_bool("off") == 0);
  CHECK(parse_config_bool("0") == 0);
  CHECK(parse_config_bool("maybe") == -1);
  CHECK(canonical_option_key("max_rejects") == "max-rejects");
  CHECK(canonical_option_key("ldap_password_cmd") == "ldap-password-cmd");
  CHECK(canonical_config_key("Max_Rejects") == "max-rejects");
  CHECK(canonical_config_key("IMPALAD") == "impalad");
}

TEST_CASE("did you mean: near misses only") {
  const std::vector<std::string> names = {"--max-rejects", "--reject-file", "--stats", "--database",
                                          "--ssl"};
  CHECK(closest_match("--max-reject", names) == "--max-rejects");
  CHECK(closest_match("--max_rejects", names) == "--max-rejects");
  CHECK(closest_match("--rejcet-file", names) == "--reject-file");  // swapped letters
  CHECK(closest_match("--sl", names) == "--ssl");
  CHECK_FALSE(closest_match("--frobnicate", names));
  CHECK_FALSE(closest_match("--x", {"--ssl"}));
}

TEST_SUITE_END();
