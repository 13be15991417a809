#include "atlas2kudu/pipeline.h"

#include <fmt/core.h>

#include <vector>

namespace atlas2kudu {

namespace {

void count_window(const CompiledWindow& window, RunStats& stats) {
  ++stats.windows;
  for (const Statement& s : window.deletes) {
    auto& t = stats.tables[s.table];
    ++t.delete_statements;
    t.delete_rows += s.rows;
    stats.sql_bytes += s.sql.size();
  }
  for (const Statement& s : window.upserts) {
    auto& t = stats.tables[s.table];
    ++t.upsert_statements;
    t.upsert_rows += s.rows;
    stats.sql_bytes += s.sql.size();
  }
  stats.statements += window.deletes.size() + window.upserts.size();
}

}  // namespace

void run_pipeline(Reader& reader, Compiler& compiler, Executor& executor, RunStats& stats,
                  Progress* progress, const WindowApplied& on_applied) {
  const std::size_t window_events = compiler.options().window_events;
  std::vector<Event> window;
  window.reserve(std::min<std::size_t>(window_events, 1 << 16));
  executor.start(compiler.header());
  bool more = true;
  while (more) {
    window.clear();
    while (window.size() < window_events) {
      window.emplace_back();
      if (!reader.next(window.back())) {
        window.pop_back();
        more = false;
        break;
      }
      if (progress) progress->tick(reader.stats().records, reader.stats().events, stats.statements);
    }
    if (window.empty()) break;
    const CompiledWindow compiled = compiler.compile_window(window);
    executor.run_window(compiled);
    count_window(compiled, stats);
    if (on_applied) on_applied(compiled, reader);
  }
  executor.finish();
}

std::string run_stats_json(std::string_view command, const ReadStats& s, const RunStats& run,
                           bool completed, double seconds, std::string_view extra_members) {
  std::string out = fmt::format("{{\"command\":\"{}\",\"completed\":{},\"elapsed_seconds\":{:.3f},",
                                command, completed, seconds);
  append_read_stats_json(s, out);
  out += fmt::format(",\"windows\":{},\"statements\":{},\"sql_bytes\":{}", run.windows,
                     run.statements, run.sql_bytes);
  out += ",\"tables\":{";
  bool first = true;
  for (const auto& [name, t] : run.tables) {
    out += fmt::format(
        "{}\"{}\":{{\"delete_statements\":{},\"delete_keys\":{},\"upsert_statements\":{},"
        "\"upsert_rows\":{}}}",
        first ? "" : ",", name, t.delete_statements, t.delete_rows, t.upsert_statements,
        t.upsert_rows);
    first = false;
  }
  out += '}';
  out += extra_members;
  out += "}\n";
  return out;
}

}  // namespace atlas2kudu
