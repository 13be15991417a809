#include "atlas2kudu/compiler.h"

#include <fmt/format.h>

#include "atlas2kudu/error.h"
#include "compile/fold.h"
#include "compile/impala_sql.h"
#include "compile/plan.h"
#include "compile/print_executor.h"
#include "compile/sql_writer.h"
#include "util/version.h"

namespace atlas2kudu {

namespace {

std::string position(const SourcePosition& p) {
  if (p.source.empty()) return {};
  return fmt::format("{}:{}", p.source, p.line);
}

}  // namespace

void validate_compile_options(const CompileOptions& o) {
  check_identifier(o.database);
  const auto usage = [](const char* message) { throw Error(ErrorCategory::kUsage, message); };
  if (o.props_max_bytes < 2) usage("--props-max-bytes must be at least 2 (the size of {})");
  if (o.window_events == 0) usage("--window-events must be positive");
  if (o.batch_rows == 0) usage("--batch-rows must be positive");
  if (o.batch_bytes == 0) usage("--batch-bytes must be positive");
}

std::string_view to_string(KeyEncoding e) {
  return e == KeyEncoding::kHex ? "hex" : "binary";
}
std::string_view to_string(Tombstone t) {
  return t == Tombstone::kSoft ? "soft" : "hard";
}
std::string_view to_string(PriorSource p) {
  return p == PriorSource::kNone ? "none" : "impala";
}

struct Compiler::Impl {
  explicit Impl(const CompileOptions& o) : options(o), folder(options) {}
  CompileOptions options;
  Folder folder;
  std::uint64_t windows = 0;
  std::uint64_t events = 0;
};

Compiler::Compiler(const CompileOptions& options) {
  validate_compile_options(options);
  impl_ = std::make_unique<Impl>(options);
}

Compiler::~Compiler() = default;

const CompileOptions& Compiler::options() const {
  return impl_->options;
}

std::string Compiler::header(std::string_view prior_description) const {
  const CompileOptions& o = impl_->options;
  return fmt::format(
      "-- atlas2kudu {} compile\n"
      "-- options: --database {} --key-encoding {} --tombstone {} --prior {} "
      "--props-max-bytes {} --window-events {} --batch-rows {} --batch-bytes {}\n"
      "-- prior state: {}\n",
      kVersion, o.database, to_string(o.key_encoding), to_string(o.tombstone), to_string(o.prior),
      o.props_max_bytes, o.window_events, o.batch_rows, o.batch_bytes,
      comment_text(prior_description));
}

std::vector<Guid> Compiler::unknown_entities(std::span<const Event> window) const {
  return impl_->folder.unknown_entities(window);
}

void Compiler::learn(std::span<const PriorEntity> prior) {
  impl_->folder.learn(prior);
}

NetWindow Compiler::fold(std::span<const Event> window) {
  NetWindow net;
  WindowInfo& w = net.info;
  w.index = ++impl_->windows;
  w.first_event = impl_->events + 1;
  impl_->events += window.size();
  w.last_event = impl_->events;
  if (window.empty()) {
    w.comment = fmt::format("window {}: no events", w.index);
  } else {
    w.comment = fmt::format("window {}: events {}-{}", w.index, w.first_event, w.last_event);
    const std::string first = position(window.front().pos);
    const std::string last = position(window.back().pos);
    if (!first.empty()) w.comment += fmt::format(" ({} .. {})", first, last);
  }
  impl_->folder.fold(window, net);
  return net;
}

NetWindow fold_window(Compiler& compiler, PriorState& prior, std::span<const Event> window) {
  const std::vector<Guid> unknown = compiler.unknown_entities(window);
  if (!unknown.empty()) {
    std::vector<PriorEntity> found;
    prior.lookup(unknown, found);
    compiler.learn(found);
  }
  return compiler.fold(window);
}

CompiledWindow compile_window(Compiler& compiler, PriorState& prior,
                              std::span<const Event> window) {
  NetWindow net = fold_window(compiler, prior, window);
  return plan_window(net, compiler.options());
}

std::string compile_to_sql(std::span<const Event> events, const CompileOptions& options) {
  if (options.prior != PriorSource::kNone) {
    throw Error(ErrorCategory::kUsage, "compile_to_sql has no connection for --prior impala");
  }
  NoPriorState prior;
  Compiler compiler(options);
  std::string out;
  PrintExecutor printer(&out);
  SqlWindowWriter writer(options, printer);
  writer.start(compiler.header(prior.describe()));
  for (std::size_t i = 0; i < events.size(); i += options.window_events) {
    const std::size_t n = std::min(options.window_events, events.size() - i);
    NetWindow net = fold_window(compiler, prior, events.subspan(i, n));
    writer.write(net);
  }
  writer.finish();
  return out;
}

}  // namespace atlas2kudu
