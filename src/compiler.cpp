#include "atlas2kudu/compiler.h"

#include <fmt/format.h>

#include <stdexcept>

#include "atlas2kudu/impala_sql.h"
#include "atlas2kudu/plan.h"
#include "atlas2kudu/print_executor.h"
#include "atlas2kudu/version.h"

namespace atlas2kudu {

namespace {

std::string_view name(KeyEncoding e) { return e == KeyEncoding::kHex ? "hex" : "binary"; }
std::string_view name(Tombstone t) { return t == Tombstone::kSoft ? "soft" : "hard"; }
std::string_view name(PriorSource p) { return p == PriorSource::kNone ? "none" : "impala"; }

std::string position(const SourcePosition& p) {
  if (p.source.empty()) return {};
  return fmt::format("{}:{}", p.source, p.line);
}

}  // namespace

Compiler::Compiler(const CompileOptions& options, PriorState& prior)
    : options_(options), prior_(prior), folder_(options_, prior) {
  check_identifier(options_.database);
  if (options_.props_max_bytes < 2) {
    throw std::invalid_argument("--props-max-bytes must be at least 2 (the size of {})");
  }
  if (options_.window_events == 0) throw std::invalid_argument("--window-events must be positive");
  if (options_.batch_rows == 0) throw std::invalid_argument("--batch-rows must be positive");
  if (options_.batch_bytes == 0) throw std::invalid_argument("--batch-bytes must be positive");
}

std::string Compiler::header() const {
  return fmt::format(
      "-- atlas2kudu {} compile\n"
      "-- options: --database {} --key-encoding {} --tombstone {} --prior {} "
      "--props-max-bytes {} --window-events {} --batch-rows {} --batch-bytes {}\n"
      "-- prior state: {}\n",
      kVersion, options_.database, name(options_.key_encoding), name(options_.tombstone),
      name(options_.prior), options_.props_max_bytes, options_.window_events, options_.batch_rows,
      options_.batch_bytes, prior_.describe());
}

CompiledWindow Compiler::compile_window(std::span<const Event> events) {
  CompiledWindow w;
  w.index = ++windows_;
  w.first_event = events_ + 1;
  events_ += events.size();
  w.last_event = events_;
  if (events.empty()) {
    w.comment = fmt::format("window {}: no events", w.index);
  } else {
    w.comment = fmt::format("window {}: events {}-{}", w.index, w.first_event, w.last_event);
    const std::string first = position(events.front().pos);
    const std::string last = position(events.back().pos);
    if (!first.empty()) w.comment += fmt::format(" ({} .. {})", first, last);
  }
  NetWindow net = folder_.fold(events);
  plan_window(net, options_, w);
  return w;
}

std::string compile_to_sql(std::span<const Event> events, const CompileOptions& options) {
  if (options.prior != PriorSource::kNone) {
    throw std::invalid_argument("compile_to_sql has no connection for --prior impala");
  }
  NoPriorState prior;
  Compiler compiler(options, prior);
  std::string out;
  PrintExecutor printer(&out);
  printer.start(compiler.header());
  for (std::size_t i = 0; i < events.size(); i += options.window_events) {
    const std::size_t n = std::min(options.window_events, events.size() - i);
    printer.run_window(compiler.compile_window(events.subspan(i, n)));
  }
  printer.finish();
  return out;
}

}  // namespace atlas2kudu
