#include "harness.h"

#include <fmt/format.h>

#include "json_text.h"
#include "sql_interpreter.h"

namespace atlas2kudu::testkit {

std::optional<std::string> check_equivalence(std::span<const Event> events,
                                             const CompileOptions& options,
                                             const KuduStore& initial, std::string_view sql,
                                             const EquivalenceOptions& check) {
  if (initial.key_encoding() != options.key_encoding) {
    return std::string("initial store's key encoding differs from options.key_encoding");
  }
  KuduStore expected = initial;
  try {
    ReferenceProjector projector(expected, options, check.prior);
    projector.apply(events);
  } catch (const std::exception& e) {
    return fmt::format("reference projector failed (a kit or input problem): {}", e.what());
  }
  for (const bool reversed : {false, true}) {
    if (reversed && !check.check_reversed_phases) break;
    const char* run = reversed ? "phases reversed" : "as written";
    KuduStore actual = initial;
    InterpreterOptions io;
    io.database = options.database;
    io.reverse_phases = reversed;
    io.check_phase_conflicts = check.check_phase_conflicts;
    if (check.check_batch_limits) {
      io.max_rows = options.batch_rows;
      io.max_bytes = options.batch_bytes;
    }
    try {
      execute_script(sql, actual, io);
    } catch (const SqlError& e) {
      return fmt::format("SQL ({}): {}", run, e.what());
    }
    if (auto diff = compare_stores(expected, actual)) {
      return fmt::format("tables differ ({}): {}", run, *diff);
    }
  }
  return std::nullopt;
}

std::string describe_events(std::span<const Event> events) {
  std::string out;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    out += fmt::format("{}: {} {}", i + 1, to_string(e.op), e.guid.hex().substr(0, 8));
    if (is_relationship_op(e.op)) {
      const Relationship& r = e.relationship;
      out += fmt::format(" {}:{} -[{}]-> {}:{}{}", r.end1.guid.hex().substr(0, 8),
                         json_quote(r.end1.type_name), json_quote(r.edge_label()),
                         r.end2.guid.hex().substr(0, 8), json_quote(r.end2.type_name),
                         r.status_deleted ? " status=DELETED" : "");
    } else {
      out += " " + json_quote(e.type_name);
      if (e.qualified_name) out += " qn=" + json_quote(*e.qualified_name);
      if (e.name) out += " name=" + json_quote(*e.name);
      if (!e.attributes.empty()) {
        out += " attrs={";
        for (std::size_t a = 0; a < e.attributes.size(); ++a) {
          out += (a ? "," : "") + json_quote(e.attributes[a].name) + ":" + e.attributes[a].json;
        }
        out += "}";
      }
      if (is_classification_op(e.op)) {
        out += " tags=[";
        for (std::size_t c = 0; c < e.classifications.size(); ++c) {
          const auto& t = e.classifications[c];
          out += (c ? "," : "") + json_quote(t.type_name) + "@" + t.entity_guid.hex().substr(0, 8);
        }
        out += "]";
      }
    }
    out += fmt::format(" t={} seq={}\n", e.event_time_us, e.audit_seq);
  }
  return out;
}

std::vector<Event> shrink_events(std::vector<Event> events,
                                 const std::function<bool(std::span<const Event>)>& fails) {
  // Remove chunks of decreasing size while the failure persists (ddmin's complement step).
  for (std::size_t chunk = std::max<std::size_t>(1, events.size() / 2); chunk >= 1;) {
    bool removed = false;
    for (std::size_t start = 0; start < events.size();) {
      std::vector<Event> candidate;
      candidate.reserve(events.size());
      candidate.insert(candidate.end(), events.begin(),
                       events.begin() + static_cast<std::ptrdiff_t>(start));
      const std::size_t end = std::min(events.size(), start + chunk);
      candidate.insert(candidate.end(), events.begin() + static_cast<std::ptrdiff_t>(end),
                       events.end());
      if (!candidate.empty() && fails(candidate)) {
        events = std::move(candidate);
        removed = true;
      } else {
        start += chunk;
      }
    }
    if (chunk == 1) {
      if (!removed) break;
    } else if (!removed) {
      chunk /= 2;
    }
  }
  return events;
}

}  // namespace atlas2kudu::testkit
