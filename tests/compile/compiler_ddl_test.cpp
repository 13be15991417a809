// DDL: the checked-in files match the generator, and options shape the output; the
// PostgreSQL foreign tables follow the Impala DDL column for column.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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

TEST_CASE("DDL: the tablet servers entity_audit's tablets need at creation, in its last comment") {
  // Kudu's master: at most --max_create_tablets_per_ts (60) replicas per tablet server.
  const std::string ddl = projection_ddl({});
  CHECK(ddl.find("-- Tablets: entity_audit has 16 x 8 = 128, 384 replicas at replication 3 (each "
                 "other table 16).\n") != std::string::npos);
  CHECK(ddl.find("-- server: this one needs 7 tablet servers.") != std::string::npos);
  DdlOptions small;
  small.partitions = 4;
  small.first_year = 2025;
  small.last_year = 2027;
  const std::string fewer = projection_ddl(small);
  CHECK(fewer.find("entity_audit has 4 x 4 = 16, 48 replicas") != std::string::npos);
  // Replication 3 decides there: no advice to lower anything.
  CHECK(fewer.find("this one needs 3 tablet servers (the replicas' own).") != std::string::npos);
  DdlOptions wide;
  wide.partitions = 40;
  CHECK(projection_ddl(wide).find("this one needs 16 tablet servers.") != std::string::npos);
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

TEST_CASE("sql/kudu_projections_fdw.sql and _binary.sql are the `ddl --fdw` outputs") {
  DdlOptions o;
  CHECK(read_file(kRepo + "/sql/kudu_projections_fdw.sql") == foreign_table_ddl(o));
  o.key_encoding = KeyEncoding::kBinary;
  CHECK(read_file(kRepo + "/sql/kudu_projections_fdw_binary.sql") == foreign_table_ddl(o));
}

namespace {

// table -> "column type[ NOT NULL]" lines, from the Impala DDL (types mapped to PostgreSQL's) or
// from the foreign-table DDL.
std::map<std::string, std::vector<std::string>> columns_of(const std::string& ddl, bool impala) {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(ddl);
  std::string line, table;
  const std::string create = impala ? "CREATE TABLE IF NOT EXISTS `atlas`.`"
                                    : "CREATE FOREIGN TABLE IF NOT EXISTS atlas_kudu.";
  while (std::getline(in, line)) {
    if (line.rfind(create, 0) == 0) {
      table = line.substr(create.size());
      table = table.substr(0, table.find_first_of("` "));
      continue;
    }
    if (table.empty() || line.rfind("  ", 0) != 0 || line.rfind("  PRIMARY KEY", 0) == 0) {
      if (line.rfind(")", 0) == 0) table.clear();
      continue;
    }
    std::istringstream words(line);
    std::string name, type, rest, word;
    words >> name >> type;
    while (words >> word) rest += " " + word;
    if (!rest.empty() && rest.back() == ',') rest.pop_back();
    if (!type.empty() && type.back() == ',') type.pop_back();
    if (impala) {
      name = name.substr(1, name.size() - 2);
      type = type == "STRING"    ? "text"
             : type == "BINARY"  ? "bytea"
             : type == "BIGINT"  ? "bigint"
             : type == "BOOLEAN" ? "boolean"
                                 : "?" + type;
      if (rest == " NULL") rest.clear();
    }
    out[table].push_back(name + " " + type + rest);
  }
  return out;
}

}  // namespace

TEST_CASE("FDW DDL: each foreign table has the Impala table's columns, in order, typed alike") {
  for (const KeyEncoding e : {KeyEncoding::kHex, KeyEncoding::kBinary}) {
    DdlOptions o;
    o.key_encoding = e;
    const auto impala = columns_of(projection_ddl(o), true);
    const auto fdw = columns_of(foreign_table_ddl(o), false);
    CHECK(impala.size() == 6);
    CHECK(fdw == impala);
    const std::string key = e == KeyEncoding::kHex ? "text" : "bytea";
    CHECK(fdw.at("edge_out") ==
          std::vector<std::string>{"src " + key + " NOT NULL", "elabel text NOT NULL",
                                   "dst " + key + " NOT NULL", "dst_type text"});
  }
}

TEST_CASE("FDW DDL: psql variables for the wrapper, remote names as two options, --database") {
  DdlOptions o;
  const std::string fdw = foreign_table_ddl(o);
  CHECK(fdw.find("\\set ON_ERROR_STOP on\n") != std::string::npos);
  CHECK(fdw.find("\\if :{?fdw}\n\\else\n  \\set fdw postgres_fdw\n\\endif\n") != std::string::npos);
  CHECK(fdw.find("CREATE EXTENSION IF NOT EXISTS :\"fdw\";") != std::string::npos);
  CHECK(fdw.find("CREATE SERVER IF NOT EXISTS atlas_kudu FOREIGN DATA WRAPPER :\"fdw\" OPTIONS "
                 "(:server_options);") != std::string::npos);
  CHECK(fdw.find("CREATE USER MAPPING IF NOT EXISTS FOR CURRENT_USER SERVER atlas_kudu OPTIONS "
                 "(:user_options);") != std::string::npos);
  CHECK(count(fdw,
              ") SERVER atlas_kudu\n  OPTIONS (:schema_option :'remote_schema', "
              ":table_option '") == 6);
  CHECK(fdw.find("table_name 'atlas.") == std::string::npos);
  CHECK(fdw.find("\\set remote_schema 'atlas'\n") != std::string::npos);
  CHECK(fdw.find("BEGIN;\n") < fdw.find("CREATE FOREIGN TABLE"));
  CHECK(fdw.rfind("\nCOMMIT;\n") == fdw.size() - 9);

  o.database = "Atlas_2";
  CHECK(foreign_table_ddl(o).find("\\set remote_schema 'Atlas_2'\n") != std::string::npos);
  // Impala's names only (the remote schema is the Impala database): no quote, backtick or dot.
  for (const char* bad : {"it's", "bad`name", "a.b"}) {
    o.database = bad;
    CHECK_THROWS_AS(foreign_table_ddl(o), Error);
  }
}

TEST_SUITE_END();
