// DDL (SPEC §4): the checked-in files match the generator, and options shape the output.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "atlas2kudu/error.h"
#include "compile/ddl.h"

TEST_SUITE_BEGIN("compiler_ddl");

using namespace atlas2kudu;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kRepo = std::string(ATLAS2KUDU_TEST_DATA) + "/../..";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("sql/kudu_projections.sql is the default DDL output") {
  CHECK(read_file(kRepo + "/sql/kudu_projections.sql") == projection_ddl({}));
}

TEST_CASE("DDL: six Kudu tables, primary-key columns first and NOT NULL, hash on the leading key") {
  const std::string ddl = projection_ddl({});
  CHECK(count(ddl, "CREATE TABLE IF NOT EXISTS `atlas`.") == 6);
  CHECK(count(ddl, "STORED AS KUDU;") == 6);
  CHECK(ddl.find("  `guid` STRING NOT NULL,\n  `event_ts` BIGINT NOT NULL,\n  `seq` BIGINT NOT "
                 "NULL,\n") != std::string::npos);
  CHECK(ddl.find("PRIMARY KEY (`guid`, `event_ts`, `seq`)") != std::string::npos);
  CHECK(ddl.find(
            "PRIMARY KEY (`src`, `elabel`, `dst`)\n)\nPARTITION BY HASH (`src`) PARTITIONS 16") !=
        std::string::npos);
  CHECK(ddl.find("PARTITION BY HASH (`tag_name`) PARTITIONS 16") != std::string::npos);
  CHECK(ddl.find("RANGE (`event_ts`) (\n  PARTITION VALUES < 1704067200000000,") !=
        std::string::npos);
  CHECK(ddl.find("PARTITION 1893456000000000 <= VALUES < 1924992000000000  -- 2030\n)") !=
        std::string::npos);
}

TEST_CASE("DDL options: database, binary keys, partitions") {
  DdlOptions o;
  o.database = "meta";
  o.key_encoding = KeyEncoding::kBinary;
  o.partitions = 4;
  const std::string ddl = projection_ddl(o);
  CHECK(count(ddl, "CREATE TABLE IF NOT EXISTS `meta`.") == 6);
  CHECK(ddl.find("`atlas`") == std::string::npos);
  CHECK(ddl.find("  `qn_digest` BINARY NOT NULL,\n  `guid` BINARY NULL,") != std::string::npos);
  CHECK(ddl.find("`source_guid` BINARY NULL") != std::string::npos);
  CHECK(ddl.find("`tag_name` STRING NOT NULL") != std::string::npos);
  CHECK(count(ddl, "PARTITIONS 4") == 6);
  o.partitions = 1;
  CHECK_THROWS_AS(projection_ddl(o), Error);
  o.partitions = 2;
  o.database = "bad`name";
  CHECK_THROWS_AS(projection_ddl(o), Error);
}

TEST_CASE("FDW file: the six foreign tables and a frontier loop, no recursive CTE") {
  const std::string fdw = read_file(kRepo + "/sql/kudu_projections_fdw.sql");
  for (const char* t : {"entity_flat", "entity_by_qn", "edge_out", "edge_in",
                        "entity_classifications", "entity_audit"}) {
    CHECK(fdw.find(std::string("CREATE FOREIGN TABLE IF NOT EXISTS atlas_kudu.") + t + " (") !=
          std::string::npos);
  }
  CHECK(fdw.find("src = ANY(frontier)") != std::string::npos);
  CHECK(fdw.find("WITH RECURSIVE") == std::string::npos);
}

TEST_SUITE_END();
