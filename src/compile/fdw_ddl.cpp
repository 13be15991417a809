// The PostgreSQL foreign tables over the projections (`atlas2kudu ddl --fdw`), generated from
// compile/schema.h like the Impala DDL so the two cannot drift: sql/kudu_projections_fdw.sql and
// sql/kudu_projections_fdw_binary.sql are copies of this output that a test keeps equal.
//
// The script is for psql: the wrapper-specific parts (which wrapper, its server and user-mapping
// options, its names for the remote schema and table options) are psql variables with defaults
// for postgres_fdw, so one file serves every wrapper. The key encoding is a second file rather
// than a variable: it is the key columns' type, which the file should state as plainly as the
// Impala DDL of the same encoding does (the traversal functions read it back from the catalog).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "atlas2kudu/error.h"
#include "compile/ddl.h"
#include "compile/impala_sql.h"
#include "compile/schema.h"
#include "util/version.h"

namespace atlas2kudu {

namespace {

// The part of the header that does not depend on the options. Kept here rather than in sql/ so
// the shipped files stay exact copies of `atlas2kudu ddl --fdw`.
constexpr std::string_view kUsage = R"(--
-- Load it with psql, naming the wrapper and its options, then load the traversal functions:
--
--   psql -d app -v fdw=postgres_fdw \
--        -v server_options="host 'replica.example.com', port '5432', dbname 'kudu'" \
--        -v user_options="user 'atlas_reader', password 'secret'" \
--        -f {file}
--   psql -d app -f sql/atlas_traversal.sql
--
-- In one transaction it creates the wrapper's extension (if missing), the server atlas_kudu, a
-- user mapping for the current user, and the six foreign tables in schema atlas_kudu reading the
-- tables of the remote schema. Objects that already exist are left as they are: to change them
-- (another server, the other key encoding, tables an earlier atlas2kudu created writable), DROP
-- SCHEMA atlas_kudu CASCADE and DROP SERVER atlas_kudu CASCADE, then load both files again.
--
-- psql variables (-v name=value):
--   fdw             the wrapper, also its extension's name (default postgres_fdw)
--   server_options  the CREATE SERVER options (default none)
--   user_options    the CREATE USER MAPPING options (default none)
--   remote_schema   the remote schema, the Impala database of the tables (default {database})
--   schema_option   the wrapper's table option naming the remote schema (default schema_name)
--   table_option    the wrapper's table option naming the remote table (default table_name)
--   read_only       what ends each table's options: for postgres_fdw (by default)
--                   ", updatable 'false', truncatable 'false'", so that writes and TRUNCATE
--                   through the tables are refused; none for other wrappers (give
--                   -v "read_only=, updatable 'false'" where the wrapper knows it, as jdbc_fdw
--                   does)
-- Other roles need USAGE on schema atlas_kudu, SELECT on its tables and a user mapping of their
-- own (CREATE USER MAPPING FOR role SERVER atlas_kudu OPTIONS (...)).
--
-- The tables are read only: atlas2kudu (Impala UPSERT and DELETE) is their only writer
-- (INSERT, UPDATE, DELETE and TRUNCATE through them fail: see read_only).
--
-- Wrappers. Kudu tables are read through Impala, so a wrapper reaches them through Impala's
-- JDBC or ODBC driver; postgres_fdw reads PostgreSQL only (a PostgreSQL copy of the projections,
-- and the stand-in the tests traverse). The traversal functions (sql/atlas_traversal.sql) send
-- each hop as `leading_key = ANY(<constant array>)` and need that pushed down, else every hop
-- reads a whole edge table; the results are right either way. Check a hop with EXPLAIN VERBOSE.
--
--   postgres_fdw  PostgreSQL only. Pushes WHERE down, `= ANY` with a constant or a parameter
--                 array (Remote SQL: src = ANY ($1::text[])), also joins, sorts and aggregates.
--                 Options: server host, port, dbname; user mapping user, password.
--   jdbc_fdw      (github.com/pgspider/jdbc_fdw) with Cloudera's Impala JDBC driver. Pushes WHERE
--                 clauses with constants, `= ANY(constant array)` as `IN (...)`, and simple
--                 aggregates; nothing that holds a parameter. Options: server
--                 drivername 'com.cloudera.impala.jdbc.Driver',
--                 url 'jdbc:impala://impalad.example.com:21050/{database}',
--                 jarfile '/opt/impala-jdbc/ImpalaJDBC42.jar'; user mapping username, password;
--                 table options schema_name and table_name (the defaults here).
--   odbc_fdw      (github.com/pgspider/odbc_fdw) with Cloudera's Impala ODBC driver. Pushes WHERE
--                 clauses down, `= ANY(constant array)` as `IN (...)`. Options: server
--                 dsn, or odbc_DRIVER with the driver's attributes as odbc_<name> (host, port,
--                 authentication); user mapping odbc_UID, odbc_PWD; table options schema and
--                 table: load with -v schema_option=schema -v table_option=table.
--                 CARTO's original odbc_fdw pushes at most one `column = 'text'` condition, so a
--                 hop there reads the whole edge table: fine for lookups by key, not for
--                 traversals.
-- jdbc_fdw and odbc_fdw write a constant array as an IN list of PostgreSQL literals: use hex keys
-- with them (a bytea literal is not Impala's BINARY), and edge labels and type names without
-- quotes, commas or backslashes in traversal filters.
)";

std::string_view pg_type(schema::ColumnType type, KeyEncoding encoding) {
  switch (type) {
    case schema::ColumnType::kKey:
      return encoding == KeyEncoding::kHex ? "text" : "bytea";
    case schema::ColumnType::kString:
      return "text";
    case schema::ColumnType::kBigint:
      return "bigint";
    case schema::ColumnType::kBoolean:
      return "boolean";
  }
  return "text";
}

// A psql meta-command argument in single quotes: psql reads '' as one quote inside them.
std::string psql_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

// Sets a psql variable to `value` unless the command line set it.
void default_variable(std::string& out, std::string_view name, std::string_view value) {
  fmt::format_to(std::back_inserter(out), "\\if :{{?{0}}}\n\\else\n  \\set {0} {1}\n\\endif\n",
                 name, value);
}

}  // namespace

std::string foreign_table_ddl(const DdlOptions& o) {
  // The name becomes a psql literal and the wrapper's remote schema; an Impala identifier (no
  // backslash or control character) is safe as both.
  check_identifier(o.database);
  const bool hex = o.key_encoding == KeyEncoding::kHex;
  const std::string_view file =
      hex ? "sql/kudu_projections_fdw.sql" : "sql/kudu_projections_fdw_binary.sql";

  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it,
                 "{5}projection tables as PostgreSQL foreign tables, for FDW readers.\n"
                 "-- Generated by `atlas2kudu ddl --fdw --key-encoding {0} --database {1}`; do not "
                 "edit by hand.\n"
                 "--\n"
                 "-- Columns as in `atlas2kudu ddl --key-encoding {0}`: KEY columns (guid, "
                 "qn_digest, src, dst,\n"
                 "-- source_guid) are {2}. STRING is text,\n"
                 "-- BIGINT bigint, BOOLEAN boolean. For --key-encoding {3} load\n"
                 "-- {4} instead.\n",
                 hex ? "hex" : "binary", o.database,
                 hex ? "text holding 32 lowercase hex characters (Impala STRING)"
                     : "bytea of 16 bytes (Impala BINARY)",
                 hex ? "binary" : "hex",
                 hex ? "sql/kudu_projections_fdw_binary.sql" : "sql/kudu_projections_fdw.sql",
                 kSqlSignature);
  out +=
      fmt::format(fmt::runtime(kUsage), fmt::arg("file", file), fmt::arg("database", o.database));

  out += "\n\\set ON_ERROR_STOP on\n";
  default_variable(out, "fdw", "postgres_fdw");
  default_variable(out, "remote_schema", psql_quoted(o.database));
  default_variable(out, "schema_option", "schema_name");
  default_variable(out, "table_option", "table_name");
  // Known to postgres_fdw only among the wrappers named above (an unknown table option fails).
  out +=
      "\\if :{?read_only}\n\\else\n"
      "  SELECT CASE WHEN :'fdw' = 'postgres_fdw' THEN ', updatable ''false'', truncatable "
      "''false''' ELSE '' END AS read_only \\gset\n\\endif\n";

  out +=
      "\nBEGIN;\n\n"
      "CREATE EXTENSION IF NOT EXISTS :\"fdw\";\n\n"
      "\\if :{?server_options}\n"
      "CREATE SERVER IF NOT EXISTS atlas_kudu FOREIGN DATA WRAPPER :\"fdw\" OPTIONS "
      "(:server_options);\n"
      "\\else\n"
      "CREATE SERVER IF NOT EXISTS atlas_kudu FOREIGN DATA WRAPPER :\"fdw\";\n"
      "\\endif\n"
      "\\if :{?user_options}\n"
      "CREATE USER MAPPING IF NOT EXISTS FOR CURRENT_USER SERVER atlas_kudu OPTIONS "
      "(:user_options);\n"
      "\\else\n"
      "CREATE USER MAPPING IF NOT EXISTS FOR CURRENT_USER SERVER atlas_kudu;\n"
      "\\endif\n\n"
      "CREATE SCHEMA IF NOT EXISTS atlas_kudu;\n";

  for (const schema::Table* t : schema::tables()) {
    std::size_t width = 0;
    for (const schema::Column& c : t->columns) width = std::max(width, c.name.size());
    fmt::format_to(it, "\nCREATE FOREIGN TABLE IF NOT EXISTS atlas_kudu.{} (\n", t->name);
    for (std::size_t i = 0; i < t->columns.size(); ++i) {
      const schema::Column& c = t->columns[i];
      fmt::format_to(it, "  {:<{}} {}{}{}\n", c.name, width, pg_type(c.type, o.key_encoding),
                     i < t->key_columns ? " NOT NULL" : "", i + 1 < t->columns.size() ? "," : "");
    }
    fmt::format_to(it,
                   ") SERVER atlas_kudu\n"
                   "  OPTIONS (:schema_option :'remote_schema', :table_option '{}' :read_only);\n",
                   t->name);
  }
  out += "\nCOMMIT;\n";
  return out;
}

}  // namespace atlas2kudu
