#include "compile/refusals.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <set>

#include "compile/annotate.h"
#include "compile/ddl.h"
#include "compile/schema.h"
#include "util/iso8601.h"

namespace atlas2kudu {

namespace {

constexpr std::size_t kMaxRowsShown = 10;
// Said of the window a run stopped in, with or without --checkpoint.
constexpr std::string_view kNotRecorded = "did not finish (a --checkpoint does not record it)";

std::string describe_event(const Event& e) {
  return fmt::format("{} ({} {} {})", format_position(e.pos), to_string(e.op), e.guid.dashed(),
                     e.type_name);
}

std::string window_where(const CompiledWindow& w) {
  return window_name(w.index, w.first_event, w.last_event, w.span);
}

std::size_t phase_size(const CompiledWindow& w, std::string_view phase) {
  return phase == "delete" ? w.deletes.size() : w.upserts.size();
}

// "upsert statement 3", "upsert statements 1-2".
std::string statements_named(std::string_view phase, std::size_t first, std::size_t last) {
  return first == last ? fmt::format("{} statement {}", phase, first)
                       : fmt::format("{} statements {}-{}", phase, first, last);
}

// The statements that had refused rows, by position: the statement and how many of its rows.
using RefusedIn = std::map<std::size_t, std::pair<const Statement*, std::size_t>>;

// "2", "2 and 5", "2, 3 and 5".
std::string list_of(const RefusedIn& positions) {
  std::string out;
  std::size_t i = 0;
  for (const auto& entry : positions) {
    const std::size_t position = entry.first;
    if (i > 0) out += i + 1 == positions.size() ? " and " : ", ";
    out += std::to_string(position);
    ++i;
  }
  return out;
}

// What of the window ran when refused rows stopped the run (no --reject-file), from how the
// executor runs a window (hs2/executor.h): the phases one after the other; within the phase of
// the refused rows, once a row is found no session takes another statement, the statements being
// run finish (each refused one is run in parts until every other row is applied), and the others
// never run. With one session (the default) the statements run in the phase's order, so exactly
// those before the refused one ran; with more, the order is the schedule's, which the window does
// not know. DELETEs are never split, so the rows are in fact always an upsert's.
std::string what_ran(const CompiledWindow& w, const std::vector<RefusedRow>& rows) {
  const std::string_view phase = rows.front().phase;
  const bool upsert_phase = phase != "delete";
  const std::size_t count = phase_size(w, phase);
  RefusedIn refused_in;
  for (const RefusedRow& r : rows) {
    auto& [statement, refused] = refused_in[r.position];
    statement = r.statement;
    ++refused;
  }

  std::vector<std::string> parts;
  if (upsert_phase && !w.deletes.empty()) {
    parts.push_back(w.deletes.size() == 1
                        ? std::string("its one delete statement ran")
                        : fmt::format("all {} of its delete statements ran", w.deletes.size()));
  }
  if (refused_in.size() == 1) {
    const auto& [position, in] = *refused_in.begin();
    const auto [statement, refused] = in;
    const std::size_t total = std::max(statement->row_spans.size(), refused);
    if (refused == total) {
      parts.push_back(fmt::format("{} applied nothing ({} refused)",
                                  statements_named(phase, position, position),
                                  total == 1 ? "its only row was" : "all its rows were"));
    } else {
      parts.push_back(fmt::format("{} applied its other {} row{}",
                                  statements_named(phase, position, position), total - refused,
                                  total - refused == 1 ? "" : "s"));
    }
    if (count > 1) {
      std::string one_session = "with --sessions 1 (the default), ";
      if (position > 1) {
        one_session += statements_named(phase, 1, position - 1) + " ran before it";
        if (position < count) one_session += " and ";
      }
      if (position < count) {
        one_session += statements_named(phase, position + 1, count) + " did not run";
      }
      parts.push_back(fmt::format(
          "{} (with more sessions, another {} statement ran only if a session had started it "
          "before the refused row was found)",
          one_session, phase));
    }
  } else {
    // Only several sessions find refused rows in more than one statement.
    parts.push_back(fmt::format("{} statements {} applied all their rows but the refused ones",
                                phase, list_of(refused_in)));
    if (refused_in.size() < count) {
      parts.push_back(fmt::format(
          "another {} statement ran only if a session had started it before the first refused "
          "row was found",
          phase));
    }
  }
  if (!upsert_phase && !w.upserts.empty()) {
    parts.push_back(w.upserts.size() == 1
                        ? std::string("its upsert statement did not run")
                        : fmt::format("none of its {} upsert statements ran", w.upserts.size()));
  }
  parts.emplace_back("no later window ran");
  std::string out = fmt::format("The run stopped in window {}, which {}: ", w.index, kNotRecorded);
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : "; ") + parts[i];
  return out + ".";
}

}  // namespace

std::vector<const Event*> events_of_row(const NetWindow& net, std::string_view table,
                                        std::size_t net_row) {
  std::vector<std::uint32_t> indexes;
  WindowEvents(net).of_row(table, net_row, indexes);
  std::vector<const Event*> out;
  out.reserve(indexes.size());
  for (const std::uint32_t i : indexes) out.push_back(&net.events[i]);
  return out;
}

RowRefusal describe_refused_row(const NetWindow& net, const CompiledWindow& window,
                                const RefusedRow& row) {
  const Statement& s = *row.statement;
  const StatementRow& span = s.row_spans.at(row.row);
  RowRefusal out;
  out.table = s.table;
  out.where = fmt::format("{}, row {} of {}", statement_name(window, row.phase, row.position, s),
                          row.row + 1, s.row_spans.size());
  out.reason = row.reason;
  out.row = s.sql.substr(span.begin, span.end - span.begin);
  out.events = events_of_row(net, s.table, span.net_row);
  return out;
}

std::string refused_rows_message(const NetWindow& net, const CompiledWindow& window,
                                 const std::vector<RefusedRow>& rows) {
  std::string out = fmt::format("{}: the server refused {} row{}:", window_where(window),
                                rows.size(), rows.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < rows.size() && i < kMaxRowsShown; ++i) {
    const RefusedRow& r = rows[i];
    const RowRefusal d = describe_refused_row(net, window, r);
    std::string events;
    for (const Event* e : d.events) events += (events.empty() ? "" : ", ") + describe_event(*e);
    fmt::format_to(std::back_inserter(out), "\n  {}, written by {}: {}",
                   d.where.substr(window_where(window).size() + 2),
                   events.empty() ? "(no event found)" : events, r.reason);
  }
  if (rows.size() > kMaxRowsShown) {
    fmt::format_to(std::back_inserter(out), "\n  ... and {} more", rows.size() - kMaxRowsShown);
  }
  if (rows.empty()) return out;
  out += '\n';
  out += what_ran(window, rows);
  out +=
      " To set such rows aside (with their events and the server's reason) and apply the rest of "
      "the window, run again with --reject-file FILE, and --max-rejects N for how many may be set "
      "aside; the window then runs again from its start (its statements are idempotent).";
  return out;
}

std::string row_errors_message(const NetWindow& net, const CompiledWindow& window,
                               const TooManyRowErrors& e, std::string_view database) {
  std::int64_t total = 0;
  std::string per_table;
  for (const auto& [table, n] : e.run_row_errors) {
    total += n;
    if (n == 0) continue;
    per_table += fmt::format("{}{} {}", per_table.empty() ? "" : ", ", table, n);
  }
  std::string out = fmt::format(
      "{}: the server reported {} row error{} over the run ({}), more than --max-row-errors {} "
      "allows: rows Impala skipped and only counted. The window {}; rerunning after the fix "
      "applies it again.",
      window_where(window), total, total == 1 ? "" : "s", per_table, e.limit, kNotRecorded);
  // Per table of this window: the statements that reported row errors.
  std::map<std::string, std::vector<const RowErrorReport*>> by_table;
  for (const RowErrorReport& r : e.statements) by_table[r.statement->table].push_back(&r);
  for (const auto& [table, reports] : by_table) {
    std::int64_t n = 0;
    for (const RowErrorReport* r : reports) n += r->row_errors;
    fmt::format_to(std::back_inserter(out), "\n  {}: {} row error{} in this window ({}", table, n,
                   n == 1 ? "" : "s",
                   statement_name(window, reports.front()->phase, reports.front()->position,
                                  *reports.front()->statement)
                       .substr(window_where(window).size() + 2));
    std::set<const Statement*> statements;
    for (const RowErrorReport* r : reports) statements.insert(r->statement);
    if (statements.size() > 1) {
      fmt::format_to(std::back_inserter(out), " and {} more statement{}", statements.size() - 1,
                     statements.size() == 2 ? "" : "s");
    }
    out += ").";
    if (table == schema::kEntityAudit.name) {
      std::set<int> years;
      std::int64_t lo = 0, hi = 0;
      bool any = false;
      for (const RowErrorReport* r : reports) {
        for (std::size_t i = r->first_row; i < r->last_row && i < r->statement->row_spans.size();
             ++i) {
          const std::size_t row = r->statement->row_spans[i].net_row;
          if (row >= net.audit.size()) continue;
          const std::int64_t ts = net.audit[row].event_ts;
          lo = any ? std::min(lo, ts) : ts;
          hi = any ? std::max(hi, ts) : ts;
          any = true;
          years.insert(audit_year_of(ts));
        }
      }
      out +=
          " Likely cause: rows whose event_ts lies in no range partition of entity_audit (Kudu "
          "answers NotFound; Impala skips the row and counts it).";
      if (any) {
        fmt::format_to(std::back_inserter(out),
                       " The statements concerned hold event_ts from {} to {}. Add the range "
                       "partitions (each is a no-op if it exists), then run again:",
                       format_iso8601_seconds(lo), format_iso8601_seconds(hi));
        std::size_t shown = 0;
        for (int year : years) {
          if (++shown > kMaxRowsShown) break;
          fmt::format_to(std::back_inserter(out), "\n    {};  -- {}",
                         audit_add_range_partition_sql(database, year), year);
        }
      }
    } else {
      out +=
          " Likely cause: rows Kudu answered NotFound for (a key in no partition) or with a NULL "
          "in a NOT NULL column.";
    }
  }
  return out;
}

}  // namespace atlas2kudu
