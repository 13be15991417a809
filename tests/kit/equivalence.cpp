#include "equivalence.h"

#include <fmt/format.h>

#include "atlas2kudu/compiler.h"

namespace atlas2kudu::testkit {

namespace {

std::string head_lines(const std::string& text, std::size_t lines) {
  std::size_t pos = 0;
  for (std::size_t n = 0; n < lines && pos != std::string::npos; ++n) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos || pos >= text.size()) return text;
  return text.substr(0, pos) + "-- ... (cut)\n";
}

}  // namespace

std::optional<std::string> run_equivalence(std::span<const Event> events,
                                           const CompileOptions& options, const KuduStore& initial,
                                           const EquivalenceOptions& check) {
  std::string sql;
  try {
    sql = compile_to_sql(events, options);
  } catch (const std::exception& e) {
    return fmt::format("compile_to_sql threw: {}", e.what());
  }
  auto diff = check_equivalence(events, options, initial, sql, check);
  if (!diff) return std::nullopt;
  return fmt::format("{}\n--- SQL ---\n{}", *diff, head_lines(sql, 200));
}

std::optional<std::string> explain_equivalence_failure(std::span<const Event> events,
                                                       const CompileOptions& options,
                                                       const KuduStore& initial,
                                                       const EquivalenceOptions& check) {
  if (!run_equivalence(events, options, initial, check)) return std::nullopt;
  const auto minimal = shrink_events(
      std::vector<Event>(events.begin(), events.end()), [&](std::span<const Event> candidate) {
        return run_equivalence(candidate, options, initial, check).has_value();
      });
  return fmt::format("minimal failing stream ({} of {} events):\n{}{}", minimal.size(),
                     events.size(), describe_events(minimal),
                     *run_equivalence(minimal, options, initial, check));
}

}  // namespace atlas2kudu::testkit
