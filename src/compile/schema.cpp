#include "compile/schema.h"

#include <array>

namespace atlas2kudu::schema {

namespace {

using enum ColumnType;

constexpr std::array<Column, kFlatColumnCount> kEntityFlatColumns = {{
    {"guid", kKey},
    {"type_name", kString},
    {"qualified_name", kString},
    {"name", kString},
    {"state", kString},
    {"created_ts", kBigint},
    {"updated_ts", kBigint},
    {"props_json", kString},
}};
constexpr std::array<Column, 3> kEntityByQnColumns = {{
    {"qn_digest", kKey},
    {"guid", kKey},
    {"type_name", kString},
}};
constexpr std::array<Column, 4> kEdgeOutColumns = {{
    {"src", kKey},
    {"elabel", kString},
    {"dst", kKey},
    {"dst_type", kString},
}};
constexpr std::array<Column, 4> kEdgeInColumns = {{
    {"dst", kKey},
    {"elabel", kString},
    {"src", kKey},
    {"src_type", kString},
}};
constexpr std::array<Column, kTagColumnCount> kEntityClassificationsColumns = {{
    {"tag_name", kString},
    {"guid", kKey},
    {"propagated", kBoolean},
    {"source_guid", kKey},
    {"attrs_json", kString},
    {"updated_ts", kBigint},
}};
constexpr std::array<Column, 7> kEntityAuditColumns = {{
    {"guid", kKey},
    {"event_ts", kBigint},
    {"seq", kBigint},
    {"op", kString},
    {"type_name", kString},
    {"qualified_name", kString},
    {"detail_json", kString},
}};

}  // namespace

const Table kEntityFlat{"entity_flat", kEntityFlatColumns, 1, {}};
const Table kEntityByQn{"entity_by_qn", kEntityByQnColumns, 1, {}};
const Table kEdgeOut{"edge_out", kEdgeOutColumns, 3, {}};
const Table kEdgeIn{"edge_in", kEdgeInColumns, 3, {}};
const Table kEntityClassifications{"entity_classifications", kEntityClassificationsColumns, 2, {}};
const Table kEntityAudit{"entity_audit", kEntityAuditColumns, 3, "event_ts"};

std::span<const Table* const> tables() {
  static const std::array<const Table*, 6> kAll = {
      &kEntityFlat, &kEntityByQn, &kEdgeOut, &kEdgeIn, &kEntityClassifications, &kEntityAudit};
  return kAll;
}

}  // namespace atlas2kudu::schema
