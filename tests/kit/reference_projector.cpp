#include "reference_projector.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "json_text.h"
#include "util/digest.h"

namespace atlas2kudu::testkit {

namespace {

constexpr std::string_view kTruncated = "_truncated";

std::string render(const std::map<std::string, std::string>& members,
                   const std::set<std::string>& truncated) {
  // std::map orders keys by bytes; "_truncated" takes its place among them.
  std::map<std::string, std::string> all = members;
  if (!truncated.empty()) {
    std::string list = "[";
    for (const auto& k : truncated) list += (list.size() > 1 ? "," : "") + json_quote(k);
    all[std::string(kTruncated)] = list + "]";
  }
  std::string out = "{";
  for (const auto& [k, v] : all) {
    if (out.size() > 1) out += ',';
    out += json_quote(k);
    out += ':';
    out += v;
  }
  return out + "}";
}

}  // namespace

std::string merge_props(std::string_view stored, std::span<const Attribute> attributes,
                        std::size_t cap) {
  std::map<std::string, std::string> members;
  std::set<std::string> truncated;
  if (!stored.empty()) {
    for (auto& [k, v] : json_object_members(stored)) {
      if (k == kTruncated) {
        // Our own list of dropped keys, written by an earlier merge.
        for (auto& key : json_string_array(v)) truncated.insert(std::move(key));
        continue;
      }
      members[k] = std::move(v);
    }
  }
  for (const auto& a : attributes) {
    members[a.name] = json_minify(a.json);
    truncated.erase(a.name);
  }
  std::string text = render(members, truncated);
  while (text.size() > cap) {
    if (members.empty()) {
      throw std::length_error(fmt::format(
          "props cap of {} bytes cannot even hold the list of dropped keys: {}", cap, text));
    }
    // Largest value first; ties broken by the smallest key (byte order).
    auto victim = members.begin();
    for (auto it = members.begin(); it != members.end(); ++it) {
      if (it->second.size() > victim->second.size()) victim = it;
    }
    truncated.insert(victim->first);
    members.erase(victim);
    text = render(members, truncated);
  }
  return text;
}

ReferenceProjector::ReferenceProjector(KuduStore& store, const CompileOptions& options,
                                       PriorKnowledge prior)
    : store_(store), options_(options), prior_(prior) {}

ReferenceProjector::Known ReferenceProjector::prior_of(const Guid& guid) const {
  if (prior_ == PriorKnowledge::kInputOnly) {
    const auto it = known_.find(guid);
    return it == known_.end() ? Known{} : it->second;
  }
  Known k{std::optional<std::string>{}, std::optional<std::string>{}, std::string{}};
  if (const Row* row = store_.table("entity_flat").find({store_.key(guid)})) {
    if (!(*row)[1].is_null()) k.type = (*row)[1].bytes;
    if (!(*row)[2].is_null()) k.qn = (*row)[2].bytes;
    if (!(*row)[7].is_null()) k.props = (*row)[7].bytes;
  }
  return k;
}

void ReferenceProjector::apply(const Event& e) {
  switch (e.op) {
    case Operation::kEntityCreate:
      entity_header(e, true);
      audit(e);
      break;
    case Operation::kEntityUpdate:
      entity_header(e, false);
      audit(e);
      break;
    case Operation::kEntityDelete:
      entity_delete(e);
      audit(e);
      break;
    case Operation::kClassificationAdd:
    case Operation::kClassificationDelete:
    case Operation::kClassificationUpdate:
      // The tags of an entity deleted: only them, and under --tombstone hard not even those.
      if (!e.header_deleted) entity_header(e, false);
      if (!e.header_deleted || options_.tombstone == Tombstone::kSoft) classifications(e);
      audit(e);
      break;
    case Operation::kRelationshipCreate:
    case Operation::kRelationshipUpdate:
    case Operation::kRelationshipDelete:
      relationship(e);
      break;
  }
}

void ReferenceProjector::entity_header(const Event& e, bool create) {
  const Known before = prior_of(e.guid);
  const Cell g = store_.key(e.guid);

  // entity_by_qn first: it needs the stored (type, qn) before this event overwrites them.
  std::optional<std::string> target_qn = e.qualified_name;
  bool drop_stale = false;
  bool drop_other_types = false;
  if (!target_qn && before.type && *before.type && **before.type != e.type_name) {
    // Type change without qualifiedName: re-key with the stored one when it is known.
    if (before.qn && *before.qn) {
      target_qn = **before.qn;
    } else if (!before.qn) {
      drop_stale = true;  // kInputOnly: a by_qn row may exist under the old type; it is stale
    }
  } else if (!target_qn && !before.type) {
    // kInputOnly, a type this run has not seen: a row of the guid under another type is stale.
    drop_other_types = true;
  }
  if (target_qn) {
    const Cell d = store_.key(Guid{qn_digest(e.type_name, *target_qn)});
    store_.delete_where("entity_by_qn", {{"guid", Condition::Op::kEq, {g}},
                                         {"qn_digest", Condition::Op::kNotIn, {d}}});
    store_.upsert_row("entity_by_qn",
                      {{"qn_digest", d}, {"guid", g}, {"type_name", Cell::string(e.type_name)}});
  } else if (drop_stale) {
    store_.delete_where("entity_by_qn", {{"guid", Condition::Op::kEq, {g}}});
  } else if (drop_other_types) {
    store_.delete_where("entity_by_qn",
                        {{"guid", Condition::Op::kEq, {g}},
                         {"type_name", Condition::Op::kNotIn, {Cell::string(e.type_name)}}});
  }

  std::vector<std::pair<std::string, Cell>> row = {
      {"guid", g},
      {"type_name", Cell::string(e.type_name)},
      {"state", Cell::string("ACTIVE")},
      {"updated_ts", Cell::i64(e.event_time_us)},
  };
  if (e.qualified_name) row.emplace_back("qualified_name", Cell::string(*e.qualified_name));
  if (e.name) row.emplace_back("name", Cell::string(*e.name));
  if (create) row.emplace_back("created_ts", Cell::i64(e.event_time_us));
  std::optional<std::string> props;
  if (!e.attributes.empty()) {
    props = merge_props(before.props.value_or(""), e.attributes, options_.props_max_bytes);
    row.emplace_back("props_json", Cell::string(*props));
  }
  store_.upsert_row("entity_flat", row);

  if (prior_ == PriorKnowledge::kInputOnly) {
    Known& k = known_[e.guid];
    k.type = e.type_name;
    if (e.qualified_name) k.qn = *e.qualified_name;
    if (props) k.props = *props;
  }
}

void ReferenceProjector::delete_edges_of(const Guid& guid) {
  const Cell g = store_.key(guid);
  for (const char* table : {"edge_out", "edge_in"}) {
    store_.delete_where(table, {{"src", Condition::Op::kEq, {g}}});
    store_.delete_where(table, {{"dst", Condition::Op::kEq, {g}}});
  }
}

void ReferenceProjector::entity_delete(const Event& e) {
  const Cell g = store_.key(e.guid);
  store_.delete_where("entity_by_qn", {{"guid", Condition::Op::kEq, {g}}});
  delete_edges_of(e.guid);
  if (options_.tombstone == Tombstone::kSoft) {
    store_.upsert_row("entity_flat", {{"guid", g},
                                      {"state", Cell::string("DELETED")},
                                      {"updated_ts", Cell::i64(e.event_time_us)}});
    return;
  }
  store_.delete_where("entity_flat", {{"guid", Condition::Op::kEq, {g}}});
  store_.delete_where("entity_classifications", {{"guid", Condition::Op::kEq, {g}}});
  if (prior_ == PriorKnowledge::kInputOnly) {
    // The row is gone: its columns are now known to be NULL.
    known_[e.guid] =
        Known{std::optional<std::string>{}, std::optional<std::string>{}, std::string{}};
  }
}

void ReferenceProjector::classifications(const Event& e) {
  const Cell g = store_.key(e.guid);
  std::vector<std::string> columns = {"tag_name",    "guid",       "propagated",
                                      "source_guid", "attrs_json", "updated_ts"};
  // One row per distinct name: the entity's own (direct) entry if the list has one, else the
  // entry propagated from the smallest source guid.
  std::map<std::string, const Classification*> chosen;
  std::vector<std::string> order;
  for (const auto& c : e.classifications) {
    const auto [at, added] = chosen.try_emplace(c.type_name, &c);
    if (added) {
      order.push_back(c.type_name);
    } else if (at->second->entity_guid != e.guid &&
               (c.entity_guid == e.guid || c.entity_guid < at->second->entity_guid)) {
      at->second = &c;
    }
  }
  std::vector<std::vector<Cell>> rows;
  std::vector<Cell> names;
  for (const std::string& name : order) {
    const Classification& c = *chosen.at(name);
    rows.push_back({Cell::string(c.type_name), g, Cell::boolean_value(c.entity_guid != e.guid),
                    store_.key(c.entity_guid), Cell::string(c.attributes_json),
                    Cell::i64(e.event_time_us)});
    names.push_back(Cell::string(c.type_name));
  }
  if (names.empty()) {
    store_.delete_where("entity_classifications", {{"guid", Condition::Op::kEq, {g}}});
  } else {
    store_.delete_where("entity_classifications", {{"guid", Condition::Op::kEq, {g}},
                                                   {"tag_name", Condition::Op::kNotIn, names}});
    store_.upsert("entity_classifications", columns, rows);
  }
}

void ReferenceProjector::relationship(const Event& e) {
  const Relationship& r = e.relationship;
  const Cell src = store_.key(r.end1.guid);
  const Cell dst = store_.key(r.end2.guid);
  const Cell label = Cell::string(r.edge_label());
  const bool is_delete = e.op == Operation::kRelationshipDelete ||
                         (e.op == Operation::kRelationshipUpdate && r.status_deleted);
  if (is_delete) {
    store_.delete_key("edge_out", {src, label, dst});
    store_.delete_key("edge_in", {dst, label, src});
    return;
  }
  // An end without a typeName: NULL, not a made-up ''.
  const auto type_of = [](const RelationshipEnd& end) {
    return end.type_name.empty() ? Cell::null() : Cell::string(end.type_name);
  };
  store_.upsert_row("edge_out",
                    {{"src", src}, {"elabel", label}, {"dst", dst}, {"dst_type", type_of(r.end2)}});
  store_.upsert_row("edge_in",
                    {{"dst", dst}, {"elabel", label}, {"src", src}, {"src_type", type_of(r.end1)}});
}

void ReferenceProjector::audit(const Event& e) {
  // detail_json: what the event named. Free-form (never compared), but kept valid and
  // within the cap like props_json.
  std::string detail = "{\"attributes\":[";
  for (std::size_t i = 0; i < e.attributes.size(); ++i) {
    detail += (i ? "," : "") + json_quote(e.attributes[i].name);
  }
  detail += "],\"tags\":[";
  for (std::size_t i = 0; i < e.classifications.size(); ++i) {
    detail += (i ? "," : "") + json_quote(e.classifications[i].type_name);
  }
  detail += "]}";
  if (detail.size() > options_.props_max_bytes) detail = "{\"_truncated\":true}";
  store_.upsert_row(
      "entity_audit",
      {{"guid", store_.key(e.guid)},
       {"event_ts", Cell::i64(e.event_time_us)},
       {"seq", Cell::i64(e.audit_seq)},
       {"op", Cell::string(std::string(to_string(e.op)))},
       {"type_name", Cell::string(e.type_name)},
       {"qualified_name", e.qualified_name ? Cell::string(*e.qualified_name) : Cell::null()},
       {"detail_json", Cell::string(detail)}});
}

KuduStore project(std::span<const Event> events, const CompileOptions& options,
                  const KuduStore& initial, PriorKnowledge prior) {
  KuduStore store = initial;
  ReferenceProjector projector(store, options, prior);
  projector.apply(events);
  return store;
}

}  // namespace atlas2kudu::testkit
