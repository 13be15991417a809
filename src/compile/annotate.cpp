#include "compile/annotate.h"

#include <fmt/format.h>

#include <algorithm>

#include "compile/impala_sql.h"
#include "compile/schema.h"
#include "util/keyed_hash.h"

namespace atlas2kudu {

std::size_t WindowEvents::AuditKeyHash::operator()(const AuditKey& k) const noexcept {
  return SipHasher(process_hash_key())
      .update(k.guid.bytes.data(), k.guid.bytes.size())
      .update(&k.event_ts, sizeof k.event_ts)
      .update(&k.seq, sizeof k.seq)
      .finish();
}

WindowEvents::WindowEvents(const NetWindow& net) : net_(net) {
  for (std::size_t i = 0; i < net.events.size(); ++i) {
    const Event& e = net.events[i];
    const auto index = static_cast<std::uint32_t>(i);
    if (is_relationship_op(e.op)) {
      edge_[EdgeKey{e.relationship.end1.guid, e.relationship.end2.guid,
                    e.relationship.edge_label()}]
          .push_back(index);
    } else {
      entity_[e.guid].push_back(index);
      audit_[AuditKey{e.guid, e.event_time_us, e.audit_seq}].push_back(index);
    }
  }
}

namespace {

void append_all(const std::vector<std::uint32_t>* found, std::vector<std::uint32_t>& out) {
  if (found != nullptr) out.insert(out.end(), found->begin(), found->end());
}

template <typename Map, typename Key>
const std::vector<std::uint32_t>* find(const Map& map, const Key& key) {
  const auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace

void WindowEvents::of_entity(const Guid& guid, std::vector<std::uint32_t>& out) const {
  append_all(find(entity_, guid), out);
}

void WindowEvents::of_row(std::string_view table, std::size_t net_row,
                          std::vector<std::uint32_t>& out) const {
  const NetWindow& net = net_;
  if (table == schema::kEntityFlat.name && net_row < net.flat.size()) {
    of_entity(net.flat[net_row].guid, out);
  } else if (table == schema::kEntityByQn.name && net_row < net.by_qn.size()) {
    of_entity(net.by_qn[net_row].guid, out);
  } else if ((table == schema::kEdgeOut.name && net_row < net.edge_out.size()) ||
             (table == schema::kEdgeIn.name && net_row < net.edge_in.size())) {
    const bool out_edge = table == schema::kEdgeOut.name;
    const EdgeRow& r = out_edge ? net.edge_out[net_row] : net.edge_in[net_row];
    const std::size_t first = out.size();
    append_all(find(edge_, EdgeKey{out_edge ? r.a : r.b, out_edge ? r.b : r.a, r.elabel}), out);
    if (!r.upsert) {
      // An edge deleted by the delete of one of its ends: that event too.
      for (const Guid* end : {&r.a, &r.b}) {
        const std::vector<std::uint32_t>* events = find(entity_, *end);
        if (events == nullptr) continue;
        for (const std::uint32_t i : *events) {
          if (net.events[i].op == Operation::kEntityDelete) out.push_back(i);
        }
      }
      const auto from = out.begin() + static_cast<std::ptrdiff_t>(first);
      std::sort(from, out.end());
      out.erase(std::unique(from, out.end()), out.end());  // an edge from an entity to itself
    }
  } else if (table == schema::kEntityClassifications.name && net_row < net.tags.size()) {
    const TagRow& r = net.tags[net_row];
    const std::vector<std::uint32_t>* events = find(entity_, r.guid);
    if (events == nullptr) return;
    bool named = false;
    for (const std::uint32_t i : *events) {
      const Event& e = net.events[i];
      if (is_classification_op(e.op) &&
          std::any_of(e.classifications.begin(), e.classifications.end(),
                      [&](const Classification& c) { return c.type_name == r.tag_name; })) {
        out.push_back(i);
        named = true;
      }
    }
    if (!named) append_all(events, out);
  } else if (table == schema::kEntityAudit.name && net_row < net.audit.size()) {
    const AuditRow& r = net.audit[net_row];
    append_all(find(audit_, AuditKey{r.guid, r.event_ts, r.seq}), out);
  }
}

namespace {

void append_position(std::string& out, const Event& e) {
  append_comment_text(out, e.pos.source);
  fmt::format_to(std::back_inserter(out), ":{}", e.pos.line);
}

// The one row of a single-row statement: "guid …", or for an edge "edge … -> … (label)".
void append_row(std::string& out, const NetWindow& net, std::string_view table,
                std::size_t net_row) {
  const auto guid = [&](const Guid& g) { out += "guid " + g.dashed(); };
  if (table == schema::kEntityFlat.name && net_row < net.flat.size()) {
    guid(net.flat[net_row].guid);
  } else if (table == schema::kEntityByQn.name && net_row < net.by_qn.size()) {
    guid(net.by_qn[net_row].guid);
  } else if ((table == schema::kEdgeOut.name && net_row < net.edge_out.size()) ||
             (table == schema::kEdgeIn.name && net_row < net.edge_in.size())) {
    const bool out_edge = table == schema::kEdgeOut.name;
    const EdgeRow& r = out_edge ? net.edge_out[net_row] : net.edge_in[net_row];
    out += fmt::format("edge {} -> {} (", (out_edge ? r.a : r.b).dashed(),
                       (out_edge ? r.b : r.a).dashed());
    append_comment_text(out, r.elabel);
    out.push_back(')');
  } else if (table == schema::kEntityClassifications.name && net_row < net.tags.size()) {
    guid(net.tags[net_row].guid);
    out += " tag ";
    append_comment_text(out, net.tags[net_row].tag_name);
  } else if (table == schema::kEntityAudit.name && net_row < net.audit.size()) {
    guid(net.audit[net_row].guid);
  }
}

void annotate(const NetWindow& net, const WindowEvents& index, Statement& s, bool is_delete,
              std::vector<std::uint32_t>& events) {
  events.clear();
  for (const StatementRow& r : s.row_spans) index.of_row(s.table, r.net_row, events);
  for (const std::uint32_t row : s.deleted_rows) index.of_row(s.table, row, events);
  for (const Guid& g : s.deleted_entities) index.of_entity(g, events);
  std::sort(events.begin(), events.end());
  events.erase(std::unique(events.begin(), events.end()), events.end());

  std::string& out = s.annotation;
  out.clear();
  out += s.table;
  out += ": ";
  const std::size_t subjects =
      s.row_spans.size() + s.deleted_rows.size() + s.deleted_entities.size();
  if (s.rows == 1 && subjects == 1) {
    if (!s.deleted_entities.empty()) {
      out += "guid " + s.deleted_entities.front().dashed();
    } else {
      append_row(out, net, s.table,
                 s.row_spans.empty() ? s.deleted_rows.front() : s.row_spans.front().net_row);
    }
    out += "; ";
  } else {
    fmt::format_to(std::back_inserter(out), "{} {}{} from ", s.rows, is_delete ? "key" : "row",
                   s.rows == 1 ? "" : "s");
  }
  if (events.empty()) {
    out += "no event of this window";
  } else if (events.size() == 1) {
    out += "event ";
    append_position(out, net.events[events.front()]);
  } else {
    fmt::format_to(std::back_inserter(out), "{} events, ", events.size());
    append_position(out, net.events[events.front()]);
    out += " .. ";
    append_position(out, net.events[events.back()]);
  }
}

}  // namespace

void annotate_window(const NetWindow& net, CompiledWindow& window) {
  const WindowEvents index(net);
  std::vector<std::uint32_t> events;
  for (Statement& s : window.deletes) annotate(net, index, s, true, events);
  for (Statement& s : window.upserts) annotate(net, index, s, false, events);
}

}  // namespace atlas2kudu
