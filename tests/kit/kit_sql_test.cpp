// Tests of the SQL interpreter (tests/kit/sql_interpreter.h): Impala literal unescaping, the
// subset's grammar, error messages, execution with Kudu semantics and phase checks.
#include <doctest/doctest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sql_interpreter.h"

TEST_SUITE_BEGIN("kit_sql");

using namespace atlas2kudu;
using namespace atlas2kudu::testkit;

namespace {

const std::string kG1 = "00000001000040008000000000000001";
const std::string kG2 = "00000002000040008000000000000002";

std::string sql_error(std::string_view sql, KuduStore& store,
                      const InterpreterOptions& options = {}) {
  try {
    execute_script(sql, store, options);
  } catch (const SqlError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("unescape: Hive/Impala rules") {
  CHECK(impala_unescape(R"(plain)") == "plain");
  CHECK(impala_unescape(R"(a\\b)") == "a\\b");
  CHECK(impala_unescape(R"(it\'s)") == "it's");
  CHECK(impala_unescape(R"(say \"hi\")") == "say \"hi\"");
  CHECK(impala_unescape(R"(\n\r\t\b\Z)") == std::string("\n\r\t\b\x1a"));
  CHECK(impala_unescape(R"(\0)") == std::string(1, '\0'));
  // \0 followed by two octal digits is octal: \012 is LF, not NUL + "12".
  CHECK(impala_unescape(R"(\012)") == "\n");
  CHECK(impala_unescape(R"(\000x)") == std::string("\0x", 2));
  CHECK(impala_unescape(R"(\177)") == "\x7f");
  // First octal digit must be 0 or 1: \200 is "200" (backslash dropped).
  CHECK(impala_unescape(R"(\200)") == "200");
  CHECK(impala_unescape(R"(\018)") == std::string("\0"
                                                  "18",
                                                  3));
  // \% and \_ keep the backslash; any other \x is x.
  CHECK(impala_unescape(R"(50\% a\_b)") == "50\\% a\\_b");
  CHECK(impala_unescape(R"(\q\.\ )") == "q. ");
  // \uXXXX is a UTF-16 code unit; pairs combine, lone surrogates become '?'.
  CHECK(impala_unescape(R"(\u0041\u00e9)") == "A\xc3\xa9");
  CHECK(impala_unescape(R"(\ud83d\ude00)") == "\xf0\x9f\x98\x80");
  CHECK(impala_unescape(R"(\ud83dx)") == "?x");
  // Too close to the closing quote for \uXXXX: `\u12` is u12.
  CHECK(impala_unescape(R"(\u12)") == "u12");
  CHECK(impala_unescape(R"(\u0041)") == "A");
  // Non-hex digit: Java's Character.digit is -1, giving garbage (0x0041*16-1 ... mod 2^16).
  // (((0*16+0)*16-1)*16+1) = -15 -> 0xFFF1.
  CHECK(impala_unescape(R"(\u00g1)") == "\xef\xbf\xb1");
  // Non-ASCII passes through, also after a dropped backslash.
  CHECK(impala_unescape("caf\xc3\xa9 \\\xc3\xa9") == "caf\xc3\xa9 \xc3\xa9");
  CHECK(impala_unescape(R"()") == "");
  CHECK_THROWS_AS(impala_unescape("\xff"), SqlError);
}

TEST_CASE("unescape: round-trips the safe encoder over every byte pattern") {
  std::string all;
  for (int c = 1; c < 0x80; ++c) all += static_cast<char>(c);
  all += std::string(1, '\0') + "\\%\\_\\u0041\\012" + "\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80";
  const std::string quoted = impala_quote(all);
  REQUIRE(quoted.front() == '\'');
  REQUIRE(quoted.back() == '\'');
  CHECK(quoted.find("\\000") != std::string::npos);
  CHECK(quoted.find("\\n") != std::string::npos);
  CHECK(impala_unescape(quoted.substr(1, quoted.size() - 2)) == all);

  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::string s;
    const int n = static_cast<int>(rng() % 20);
    for (int k = 0; k < n; ++k) {
      static const std::vector<std::string> pieces = {
          "\\",   "'",    "\"", "\n", "\r", "\t", std::string(1, '\0'), "\x01",
          "\x1f", "\x7f", "u",  "0",  "%",  "_",  "\xc3\xa9",           "a"};
      s += pieces[rng() % pieces.size()];
    }
    const std::string q = impala_quote(s);
    CHECK(impala_unescape(q.substr(1, q.size() - 2)) == s);
  }
}

TEST_CASE("unhex: Impala semantics") {
  CHECK(impala_unhex("00ff41") == std::string("\0\xff"
                                              "A",
                                              3));
  CHECK(impala_unhex("ABcd") == "\xab\xcd");
  CHECK(impala_unhex("abc") == "");  // odd length
  CHECK(impala_unhex("zz") == "");   // non-hex
}

TEST_CASE("interpreter: UPSERT and DELETE of the subset, with comments and multi-line statements") {
  KuduStore s;
  const std::string sql =
      "-- atlas2kudu 0.1.0 compile\n"
      "-- window 1 phase 1: deletes\n"
      "DELETE FROM `atlas`.`entity_by_qn` WHERE `guid` IN ('" +
      kG1 + "') AND `qn_digest` NOT IN ('" + kG2 +
      "');\n"
      "-- window 1 phase 2: upserts\n"
      "upsert into `atlas`.`entity_flat` (`guid`, `type_name`, `qualified_name`, `created_ts`)\n"
      "VALUES ('" +
      kG1 +
      "', 'hive_table', 'db.t\\'1\\n\\000', -9223372036854775808),\n"
      "  ('" +
      kG2 +
      "', 'x', NULL, 7);\n"
      "UPSERT INTO ` atlas `.`entity_classifications` (`tag_name`, `guid`, `propagated`) VALUES\n"
      "('PII', '" +
      kG1 + "', TRUE);\n";
  const ExecutionStats stats = execute_script(sql, s);
  CHECK(stats.statements == 3);
  CHECK(stats.phases == 2);
  CHECK(stats.scanning_deletes == 1);  // by_qn's leading key is qn_digest, not guid
  CHECK(stats.tables.at("entity_flat").rows_upserted == 2);
  const Row* row = s.table("entity_flat").find({Cell::string(kG1)});
  REQUIRE(row);
  CHECK((*row)[2] == Cell::string(std::string("db.t'1\n\0", 8)));
  CHECK((*row)[5] == Cell::i64(INT64_MIN));
  CHECK(s.table("entity_classifications").find({Cell::string("PII"), Cell::string(kG1)}));

  // Keyed deletes of absent keys count as row errors.
  const auto st2 = execute_script("DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN ('" + kG1 +
                                      "', '" + std::string(32, 'f') + "');",
                                  s);
  CHECK(st2.tables.at("entity_flat").rows_deleted == 1);
  CHECK(st2.tables.at("entity_flat").row_errors == 1);
  CHECK(st2.scanning_deletes == 0);
}

TEST_CASE("interpreter: binary key encoding needs CAST(unhex(..) AS BINARY)") {
  KuduStore s(KeyEncoding::kBinary);
  execute_script("UPSERT INTO `atlas`.`entity_flat` (`guid`, `state`) VALUES (CAST(unhex('" + kG1 +
                     "') AS BINARY), 'ACTIVE');",
                 s);
  CHECK(s.table("entity_flat").size() == 1);
  const auto err =
      sql_error("UPSERT INTO `atlas`.`entity_flat` (`guid`) VALUES ('" + kG2 + "');", s);
  CHECK(err.find("statement 1") != std::string::npos);
  CHECK(err.find("STRING->BINARY") != std::string::npos);
  // unhex of garbage is the empty string: not a 16-byte key.
  CHECK(
      sql_error("DELETE FROM `atlas`.`entity_flat` WHERE `guid` = CAST(unhex('xyz') AS BINARY);", s)
          .find("16 bytes") != std::string::npos);
  execute_script(
      "DELETE FROM `atlas`.`entity_flat` WHERE `guid` = CAST(unhex('" + kG1 + "') AS BINARY);", s);
  CHECK(s.table("entity_flat").size() == 0);
}

TEST_CASE("interpreter: everything outside the subset is rejected with statement and token") {
  KuduStore s;
  const std::string up = "UPSERT INTO `atlas`.`entity_flat` (`guid`) VALUES ('" + kG1 + "');\n";
  struct Case {
    std::string sql;
    std::string needle;
  };
  const Case cases[] = {
      {up + "DELETE FROM `atlas`.`entity_flat` WHERE `guid` = '" + kG1 + "' OR `guid` = '" + kG2 +
           "';",
       "statement 2 (line 2): OR is not allowed"},
      {"DELETE FROM `atlas`.`edge_out` WHERE (`src` = '" + kG1 + "');",
       "parentheses around conditions"},
      {"DELETE FROM atlas.entity_flat WHERE `guid` = '" + kG1 + "';", "at `atlas`"},
      {"UPSERT INTO `atlas`.`entity_flat` (guid) VALUES ('" + kG1 + "');", "at `guid`"},
      {"UPSERT INTO `other`.`entity_flat` (`guid`) VALUES ('" + kG1 + "');",
       "Could not resolve table reference: 'other.entity_flat'"},
      {"UPSERT INTO `atlas`.`nope` (`guid`) VALUES ('" + kG1 + "');",
       "Could not resolve table reference: 'atlas.nope'"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`, `x`) VALUES ('" + kG1 + "', 1);",
       "unknown column"},
      {"UPSERT INTO `atlas`.`entity_flat` (`name`) VALUES ('a');", "primary-key column `guid`"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`, `created_ts`) VALUES ('" + kG1 + "', '5');",
       "type mismatch"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" + kG1 + "', 5);",
       "type mismatch"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`) VALUES ('" + kG1 + "'), ('" + kG1 + "');",
       "twice"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" + kG1 + "');",
       "fewer values"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`) VALUES ('" + kG1 + "', 'x');", "more values"},
      {"DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN ('" + kG1 + "', '" + kG1 + "');",
       "listed twice"},
      {"DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN (NULL);", "NULL"},
      {"DELETE FROM `atlas`.`entity_flat`;", "expected WHERE"},
      {"DELETE FROM `atlas`.`entity_flat` WHERE `guid` = '" + kG1 + "'", "expected `;`"},
      {"SELECT 1;", "outside the subset at `SELECT`"},
      {"/* hint */ DELETE FROM `atlas`.`entity_flat` WHERE `guid` = '" + kG1 + "';",
       "block comments"},
      {"DELETE FROM `atlas`.`entity_flat` WHERE `guid` = \"" + kG1 + "\";", "double-quoted"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`, `created_ts`) VALUES ('" + kG1 + "', 1.5);",
       "only decimal integers"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`, `created_ts`) VALUES ('" + kG1 +
           "', 9223372036854775808);",
       "BIGINT range"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" + kG1 + "', 'abc);",
       "unterminated string"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`, `name`) VALUES ('" + kG1 +
           "', 'a', 'b');",
       "column listed twice"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`) VALUES ('" + kG1 +
           "');\nUPSERT INTO "
           "`atlas`.`entity_flat` (`guid`, `name`) VALUES ('" +
           kG1 + "', 'x');",
       "statements 1 and 2 of one phase"},
      {"UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" + kG1 + "', '" +
           std::string(kImpalaMaxStatementBytes, 'a') + "');",
       "exceeds the maximum statement length (16777216 bytes)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.sql);
    const std::string err = sql_error(c.sql, s);
    CHECK_MESSAGE(err.find(c.needle) != std::string::npos, err);
  }
  // Parse errors leave the store untouched, even for statements before the error.
  CHECK(s.table("entity_flat").size() == 0);
}

TEST_CASE("interpreter: phases may run in reverse; same-row UPSERTs across phases are fine") {
  const std::string sql = "UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" + kG1 +
                          "', 'a');\n"
                          "DELETE FROM `atlas`.`entity_flat` WHERE `guid` = '" +
                          kG1 +
                          "';\n"
                          "UPSERT INTO `atlas`.`entity_flat` (`guid`, `state`) VALUES ('" +
                          kG1 +
                          "', 'ACTIVE');\n"
                          "UPSERT INTO `atlas`.`entity_flat` (`guid`, `state`) VALUES ('" +
                          kG2 + "', 'ACTIVE');\n";
  KuduStore forward, reverse;
  const auto st = execute_script(sql, forward);
  CHECK(st.phases == 3);
  execute_script(sql, reverse, {.reverse_phases = true});
  CHECK_FALSE(compare_stores(forward, reverse));
  CHECK(forward.table("entity_flat").find({Cell::string(kG1)})->at(3).is_null());  // name gone
}

TEST_CASE("interpreter: `-- window` comments end phases, so windows never mix") {
  // Window 2 has no deletes: its upserts follow window 1's directly, yet they form a new phase.
  const std::string sql =
      "-- window 1: events 1-2\n-- window 1 phase 1: deletes\n-- window 1 phase 2: upserts\n"
      "UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" +
      kG1 +
      "', 'old');\n"
      "UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" +
      kG2 +
      "', 'x');\n"
      "-- window 2: events 3-3\n-- window 2 phase 1: deletes\n-- window 2 phase 2: upserts\n"
      "UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" +
      kG1 + "', 'new');\n";
  for (const bool reversed : {false, true}) {
    KuduStore s;
    const auto stats = execute_script(sql, s, {.reverse_phases = reversed});
    CHECK(stats.phases == 2);
    CHECK(s.table("entity_flat").find({Cell::string(kG1)})->at(3) == Cell::string("new"));
  }
  const auto parsed = parse_script(sql, KuduStore());
  REQUIRE(parsed.size() == 3);
  CHECK(parsed[0].starts_phase);
  CHECK_FALSE(parsed[1].starts_phase);
  CHECK(parsed[2].starts_phase);
  // Other comments do not split.
  KuduStore s;
  CHECK(execute_script("-- a\nUPSERT INTO `atlas`.`entity_flat` (`guid`) VALUES ('" + kG1 +
                           "');\n-- b\nUPSERT INTO `atlas`.`entity_flat` (`guid`) VALUES ('" + kG2 +
                           "');",
                       s)
            .phases == 1);
}

TEST_CASE("interpreter: batch limits on rows and bytes") {
  const std::string two_rows =
      "UPSERT INTO `atlas`.`entity_flat` (`guid`) VALUES ('" + kG1 + "'), ('" + kG2 + "');";
  const std::string one_row = "UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" + kG1 +
                              "', '" + std::string(500, 'n') + "');";
  KuduStore s;
  CHECK(sql_error(two_rows, s, {.max_rows = 1}).find("exceeds --batch-rows 1") !=
        std::string::npos);
  CHECK(sql_error(two_rows, s, {.max_rows = 2}).empty());
  CHECK(sql_error(two_rows, s, {.max_bytes = 50}).find("exceeds --batch-bytes 50") !=
        std::string::npos);
  // A single row cannot be split: it may exceed the byte batch.
  CHECK(sql_error(one_row, s, {.max_bytes = 50}).empty());
  const auto parsed = parse_script(two_rows, s);
  CHECK(parsed.at(0).bytes == two_rows.size() - 1);  // without the ";"
  const std::string del =
      "DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN ('" + kG1 + "', '" + kG2 + "');";
  CHECK(sql_error(del, s, {.max_bytes = 40}).find("--batch-bytes") != std::string::npos);
}

TEST_CASE("interpreter: lexical corners") {
  KuduStore s;
  // Lower-case keywords, `;` inside literals and comments, raw newline inside a literal, an
  // identifier with surrounding blanks (Impala trims it), a negative number folded into the
  // literal.
  const std::string sql =
      "-- a comment; with a semicolon\n"
      "upsert into `atlas`.` entity_flat ` (`guid`, `name`, `created_ts`) values\n"
      "('" +
      kG1 +
      "', 'semi;colon\nraw newline', - 5);\n"
      "delete from `atlas`.`entity_flat` where `guid` = '" +
      kG2 + "' and `name` not in ('x');\n";
  const auto stats = execute_script(sql, s);
  CHECK(stats.statements == 2);
  const Row* row = s.table("entity_flat").find({Cell::string(kG1)});
  REQUIRE(row);
  CHECK((*row)[3] == Cell::string("semi;colon\nraw newline"));
  CHECK((*row)[5] == Cell::i64(-5));
  // JFlex's `.` does not match a line break: a backslash cannot escape one.
  CHECK(
      sql_error(
          "UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" + kG1 + "', 'a\\\nb');", s)
          .find("backslash before a line break") != std::string::npos);
  // Statement numbers count `;`, not lines.
  CHECK(sql_error("UPSERT INTO `atlas`.`entity_flat` (`guid`) VALUES ('" + kG1 +
                      "'); "
                      "UPSERT INTO `atlas`.`entity_flat` (`guid`) VALUES ('" +
                      kG2 + "'), ('zz');",
                  s)
            .find("statement 2 (line 1)") != std::string::npos);
  // Invalid UTF-8 inside a literal is refused (it would reach Java as U+FFFD).
  CHECK(sql_error(
            "UPSERT INTO `atlas`.`entity_flat` (`guid`, `name`) VALUES ('" + kG1 + "', '\xc3');", s)
            .find("UTF-8") != std::string::npos);
  // A backtick name with a backslash is refused.
  CHECK(sql_error("DELETE FROM `atlas`.`entity\\_flat` WHERE `guid` = '" + kG1 + "';", s)
            .find("backslash") != std::string::npos);
}

TEST_CASE("interpreter: a CASE narrows a keyed delete's product to the wanted keys") {
  KuduStore s;
  const std::string g3 = "00000003000040008000000000000003";
  const std::string g4 = "00000004000040008000000000000004";
  std::string up = "UPSERT INTO `atlas`.`edge_out` (`src`, `elabel`, `dst`) VALUES ";
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
           {kG1, g3}, {kG1, g4}, {kG2, g3}, {kG2, g4}}) {
    up += (up.back() == ' ' ? "('" : ", ('") + a + "', 'l', '" + b + "')";
  }
  execute_script(up + ";", s);
  REQUIRE(s.table("edge_out").size() == 4);
  // (1, 3) and (2, 4) of the four keys the IN-lists name; (2, 3) is named but absent.
  const std::string head = "DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('" + kG1 + "', '" + kG2 +
                           "') AND `elabel` IN ('l') AND `dst` IN ('" + g3 + "', '" + g4 + "')";
  execute_script("DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('" + kG2 +
                     "') AND `elabel` IN ('l') AND `dst` IN ('" + g3 + "');",
                 s);
  const auto st =
      execute_script(head + " AND CASE `src` WHEN '" + kG1 + "' THEN `dst` IN ('" + g3 +
                         "') WHEN '" + kG2 + "' THEN `dst` IN ('" + g3 + "', '" + g4 + "') END;",
                     s);
  CHECK(st.tables.at("edge_out").rows_deleted == 2);
  CHECK(st.tables.at("edge_out").row_errors == 1);  // (2, 3), named by the CASE, was absent
  CHECK(st.scanning_deletes == 0);
  REQUIRE(s.table("edge_out").size() == 1);
  CHECK(s.table("edge_out").find({Cell::string(kG1), Cell::string("l"), Cell::string(g4)}));

  // A CASE must narrow IN-lists Kudu prunes with, name each value once, and keep to key columns.
  const std::string when = " AND CASE `src` WHEN '" + kG1 + "' THEN `dst` IN ('" + g3 + "')";
  struct Case {
    std::string sql;
    std::string needle;
  };
  const Case cases[] = {
      {"DELETE FROM `atlas`.`edge_out` WHERE `elabel` IN ('l') AND `dst` IN ('" + g3 + "')" + when +
           " END;",
       "CASE on `src` without an IN-list"},
      {"DELETE FROM `atlas`.`edge_out` WHERE `src` IN ('" + kG1 + "') AND `elabel` IN ('l')" +
           when + " END;",
       "THEN on `dst` without an IN-list"},
      {head + when + " END;", "name different values"},
      {head + " AND CASE `src` WHEN '" + kG1 + "' THEN `dst` IN ('" + g3 + "') WHEN '" + kG2 +
           "' THEN `dst` IN ('" + std::string(32, 'e') + "') END;",
       "missing from its IN-list"},
      {head + when + " WHEN '" + kG1 + "' THEN `dst` IN ('" + g4 + "') END;",
       "listed twice in one CASE"},
      {head + " AND CASE `src` WHEN NULL THEN `dst` IN ('" + g3 + "') END;", "NULL after WHEN"},
      {head + " AND CASE `src` WHEN '" + kG1 + "' THEN `dst` NOT IN ('" + g3 + "') END;",
       "NOT IN after THEN"},
      {head + " AND CASE `src` WHEN '" + kG1 + "' THEN `src` IN ('" + kG1 + "') END;",
       "THEN on the CASE's own column"},
      {head + " AND CASE `dst_type` WHEN 'x' THEN `dst` IN ('" + g3 + "') END;",
       "CASE on a column outside the primary key"},
      {head + " AND CASE `src` WHEN '" + kG1 + "' THEN `dst_type` IN ('x') END;",
       "THEN on a column outside the primary key"},
      {head + when + ";", "expected END"},
      {head + when + " WHEN '" + kG2 + "' THEN `dst` IN ('" + g4 + "') END" + when + " WHEN '" +
           kG2 + "' THEN `dst` IN ('" + g4 + "') END;",
       "a second CASE"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.sql);
    const std::string err = sql_error(c.sql, s);
    CHECK_MESSAGE(err.find(c.needle) != std::string::npos, err);
  }
  CHECK(s.table("edge_out").size() == 1);
}

TEST_CASE("interpreter: Impala's limit of 10000 children per expression") {
  KuduStore s;
  const auto key = [](int n) {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%032x", n);
    return std::string("'") + buf + "'";
  };
  const auto in_list = [&](int n) {
    std::string list;
    for (int i = 1; i <= n; ++i) list += (i > 1 ? ", " : "") + key(i);
    return list;
  };
  const std::string flat = "DELETE FROM `atlas`.`entity_flat` WHERE `guid` IN (";
  CHECK(sql_error(flat + in_list(9999) + ");", s).empty());
  CHECK(sql_error(flat + in_list(10000) + ");", s).find("more than 9999 values") !=
        std::string::npos);
  // A CASE: one child for its operand, two per WHEN.
  const auto edge_delete = [&](int n) {
    std::string sql = "DELETE FROM `atlas`.`edge_out` WHERE `src` IN (" + in_list(n) +
                      ") AND `elabel` IN ('l') AND `dst` IN (" + key(1) + ") AND CASE `src`";
    for (int i = 1; i <= n; ++i) sql += " WHEN " + key(i) + " THEN `dst` IN (" + key(1) + ")";
    return sql + " END;";
  };
  CHECK(sql_error(edge_delete(4999), s).empty());
  CHECK(sql_error(edge_delete(5000), s).find("more than 4999 WHENs") != std::string::npos);
}

TEST_SUITE_END();
