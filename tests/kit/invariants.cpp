#include "invariants.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

#include "json_text.h"
#include "util/digest.h"

namespace atlas2kudu::testkit {

namespace {

bool is_json_object(const Cell& c) {
  if (c.is_null()) return true;
  try {
    json_object_members(c.bytes);
    return true;
  } catch (const JsonError&) {
    return false;
  }
}

}  // namespace

std::optional<std::string> check_invariants(const KuduStore& store, const CompileOptions& options) {
  // Edges: both adjacency tables hold the same triples.
  std::set<std::tuple<Cell, Cell, Cell>> out, in;
  for (const auto& [k, row] : store.table("edge_out").rows()) out.insert({k[0], k[1], k[2]});
  for (const auto& [k, row] : store.table("edge_in").rows()) in.insert({k[2], k[1], k[0]});
  for (const auto& t : out) {
    if (!in.count(t)) {
      return fmt::format("edge_out ({} -[{}]-> {}) has no edge_in mirror",
                         store.guid_of(std::get<0>(t)).hex(), std::get<1>(t).to_display(),
                         store.guid_of(std::get<2>(t)).hex());
    }
  }
  for (const auto& t : in) {
    if (!out.count(t)) {
      return fmt::format("edge_in ({} -[{}]-> {}) has no edge_out mirror",
                         store.guid_of(std::get<0>(t)).hex(), std::get<1>(t).to_display(),
                         store.guid_of(std::get<2>(t)).hex());
    }
  }

  const auto& flat = store.table("entity_flat");
  for (const auto& [k, row] : flat.rows()) {
    const std::string g = store.guid_of(k[0]).hex();
    const Cell& state = row[4];
    if (state != Cell::string("ACTIVE") && state != Cell::string("DELETED")) {
      return fmt::format("entity_flat {}: state {}", g, state.to_display());
    }
    if (options.tombstone == Tombstone::kHard && state == Cell::string("DELETED")) {
      return fmt::format("entity_flat {}: DELETED under --tombstone hard", g);
    }
    if (state == Cell::string("ACTIVE") && row[1].is_null()) {
      return fmt::format("entity_flat {}: ACTIVE without type_name", g);
    }
    if (!is_json_object(row[7])) {
      return fmt::format("entity_flat {}: props_json is not a JSON object: {}", g,
                         row[7].to_display());
    }
    if (!row[7].is_null() && row[7].bytes.size() > options.props_max_bytes) {
      return fmt::format("entity_flat {}: props_json of {} bytes exceeds the cap {}", g,
                         row[7].bytes.size(), options.props_max_bytes);
    }
  }

  std::map<Cell, Cell> by_guid;
  for (const auto& [k, row] : store.table("entity_by_qn").rows()) {
    const std::string d = store.guid_of(k[0]).hex();
    const Cell& g = row[1];
    if (g.is_null()) return fmt::format("entity_by_qn {}: NULL guid", d);
    if (!by_guid.emplace(g, k[0]).second) {
      return fmt::format("entity_by_qn: guid {} has two rows ({} and {})", store.guid_of(g).hex(),
                         store.guid_of(by_guid[g]).hex(), d);
    }
    const Row* f = flat.find({g});
    if (!f)
      return fmt::format("entity_by_qn {}: guid {} has no entity_flat row", d,
                         store.guid_of(g).hex());
    if ((*f)[4] != Cell::string("ACTIVE")) {
      return fmt::format("entity_by_qn {}: entity {} is not ACTIVE", d, store.guid_of(g).hex());
    }
    if (row[2] != (*f)[1]) {
      return fmt::format("entity_by_qn {}: type_name {} but entity {} has {}", d,
                         row[2].to_display(), store.guid_of(g).hex(), (*f)[1].to_display());
    }
    if ((*f)[2].is_null() || to_hex(qn_digest((*f)[1].bytes, (*f)[2].bytes)) != d) {
      return fmt::format("entity_by_qn {}: not the digest of entity {}'s ({}, {})", d,
                         store.guid_of(g).hex(), (*f)[1].to_display(), (*f)[2].to_display());
    }
  }

  for (const auto& [k, row] : store.table("entity_classifications").rows()) {
    if (!is_json_object(row[4])) {
      return fmt::format("entity_classifications ({}, {}): attrs_json is not a JSON object",
                         k[0].to_display(), store.guid_of(k[1]).hex());
    }
    if (!row[2].is_null() && !row[3].is_null() && row[2].boolean != (row[3] != k[1])) {
      return fmt::format("entity_classifications ({}, {}): propagated disagrees with source_guid",
                         k[0].to_display(), store.guid_of(k[1]).hex());
    }
  }

  static const std::set<std::string> ops = {"ENTITY_CREATE",         "ENTITY_UPDATE",
                                            "ENTITY_DELETE",         "CLASSIFICATION_ADD",
                                            "CLASSIFICATION_DELETE", "CLASSIFICATION_UPDATE"};
  for (const auto& [k, row] : store.table("entity_audit").rows()) {
    if (row[3].kind != Cell::Kind::kString || !ops.count(row[3].bytes)) {
      return fmt::format("entity_audit ({}, {}): op {}", store.guid_of(k[0]).hex(),
                         k[1].to_display(), row[3].to_display());
    }
  }
  return std::nullopt;
}

}  // namespace atlas2kudu::testkit
