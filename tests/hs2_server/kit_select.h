// The SELECT shape of prior-state lookups (--prior impala), answered from the test kit's
// Kudu store the way Impala would answer it from the Kudu tables. Used by KitHandler.
//
// Accepted (keywords and function names in any case, one optional trailing ';'):
//   SELECT item [, item ...] FROM `db`.`table` WHERE `col` IN (value [, value ...])
//   item  := `column` | lower(hex(`column`))
//   value := 'string literal' | CAST(unhex('hex') AS BINARY)
// Identifiers must be backtick-quoted (as the compiler writes them), `db` must be the store's
// database, columns must exist, values must have the column's type (a STRING literal never
// matches a BINARY key: Impala has no implicit cast). Anything else — other SELECT shapes,
// joins, aliases, `*`, other predicates — throws SelectError with the reason and the token.
//
// Rendering, as Impala returns it over HS2: STRING and BINARY cells as their bytes, BIGINT in
// decimal, BOOLEAN as true/false, NULL as nullopt; lower(hex(x)) of a STRING or BINARY cell is the
// lowercase hex of its bytes. Rows come in primary-key order; a column's label is its name, an
// expression's label is its text without backticks (e.g. "lower(hex(guid))").
//
// Example (binary keys):
//   KitSelectResult r = run_kit_select(
//       "SELECT lower(hex(`guid`)), `tag_name` FROM `atlas`.`entity_classifications` "
//       "WHERE `guid` IN (CAST(unhex('0123456789abcdef0123456789abcdef') AS BINARY))",
//       store, "atlas");
//   // r.columns == {"lower(hex(guid))", "tag_name"},
//   // r.rows == {{"0123456789abcdef0123456789abcdef", "PII"}}
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kudu_store.h"

namespace atlas2kudu::testing {

class SelectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct KitSelectResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// True when the statement's first keyword is SELECT (leading whitespace and `--` comments
// skipped): such statements go to run_kit_select, everything else to the SQL interpreter.
bool is_select_statement(std::string_view sql);

// Runs the SELECT on `store`. Throws SelectError (shape, names, types) without side effects.
KitSelectResult run_kit_select(std::string_view sql, const testkit::KuduStore& store,
                               std::string_view database);

}  // namespace atlas2kudu::testing
