#include "atlas2kudu/compiler.h"

#include <fmt/format.h>

#include <algorithm>

#include "atlas2kudu/error.h"
#include "compile/fold.h"
#include "compile/impala_sql.h"
#include "compile/knowledge_store.h"
#include "compile/plan.h"
#include "compile/print_executor.h"
#include "compile/sql_writer.h"
#include "util/resident_memory.h"
#include "util/version.h"

namespace atlas2kudu {

namespace {

std::string position(const SourcePosition& p) {
  if (p.source.empty()) return {};
  return fmt::format("{}:{}", p.source, p.line);
}

// "in.json:4 .. in.json:6", or empty when the events carry no source (tests).
std::string span_of(std::span<const Event> window) {
  if (window.empty()) return {};
  const std::string first = position(window.front().pos);
  if (first.empty()) return {};
  return fmt::format("{} .. {}", first, position(window.back().pos));
}

}  // namespace

void validate_compile_options(const CompileOptions& o) {
  check_identifier(o.database);
  const auto usage = [](const std::string& message) {
    throw Error(ErrorCategory::kUsage, message);
  };
  if (o.props_max_bytes < 2) usage("--props-max-bytes must be at least 2 (the size of {})");
  if (o.window_events == 0) usage("--window-events must be positive");
  if (o.batch_rows == 0) usage("--batch-rows must be positive");
  if (o.batch_rows > kMaxBatchRows) {
    usage(fmt::format("--batch-rows must be at most {} (Impala refuses an IN-list of more keys)",
                      kMaxBatchRows));
  }
  if (o.batch_bytes == 0) usage("--batch-bytes must be positive");
  if (o.window_budget == 0) usage("the window's memory budget must be positive");
}

MemoryShares split_memory_budget(std::size_t budget) {
  // What a run holds whatever its input: code, shared libraries, stdio and read buffers, the JSON
  // parser (about 20 MiB), and the knowledge spill store's index entries not yet written (at most
  // 8 MiB and one eviction's: compile/spill_store.h) and Bloom filter (4 MiB).
  constexpr std::size_t kFixed = std::size_t{40} << 20;
  const std::size_t shared = budget > kFixed ? budget - kFixed : 0;
  // 3/20 stay free for the allocator's slack (freed memory it keeps for reuse); a window of
  // 50,000 typical events (2.2 KiB each while folded) fits the default budget's window share.
  return MemoryShares{.knowledge = shared / 20 * 6, .window = shared / 20 * 11};
}

std::string memory_budget_text(std::size_t budget) {
  constexpr std::size_t kMib = std::size_t{1} << 20;
  if (budget % (kMib << 10) == 0) return fmt::format("{}G", budget / (kMib << 10));
  if (budget % kMib == 0) return fmt::format("{}M", budget / kMib);
  return std::to_string(budget);
}

std::size_t window_footprint(const Event& e) {
  // Text the event carries; the window holds it up to four times: in the event, in its folded
  // rows (props_json, detail_json; names and types are views of the event's), in the
  // statements, and in the printed or sent copy. The factor stays 4 (it decides where the budget
  // closes windows, and so the SQL), which counts the names once more than they are held.
  std::size_t text = e.type_name.size();
  if (e.qualified_name) text += e.qualified_name->size();
  if (e.name) text += e.name->size();
  for (const Attribute& a : e.attributes) text += a.name.size() + a.json.size() + 8;
  for (const Classification& c : e.classifications) {
    text += c.type_name.size() + c.attributes_json.size() + 48;
  }
  text += e.relationship.type_name.size() + e.relationship.label.size() +
          e.relationship.end1.type_name.size() + e.relationship.end2.type_name.size();
  // Fixed part: the Event and its allocations, the flat and audit rows, the fold's hash indexes
  // and link lists, and the keys, timestamps and punctuation of its SQL rows.
  constexpr std::size_t kPerEvent = 1792;
  return kPerEvent + 4 * text;
}

std::size_t event_bytes(const Event& e) {
  // A string's heap block, when it is too long for the string itself (libstdc++: 15 bytes).
  const auto heap = [](std::string_view text) { return text.size() > 15 ? text.size() + 17 : 0; };
  std::size_t bytes = sizeof(Event) + heap(e.type_name);
  if (e.qualified_name) bytes += heap(*e.qualified_name);
  if (e.name) bytes += heap(*e.name);
  bytes += e.attributes.capacity() * sizeof(Attribute);
  for (const Attribute& a : e.attributes) bytes += heap(a.name) + heap(a.json);
  bytes += e.classifications.capacity() * sizeof(Classification);
  for (const Classification& c : e.classifications) {
    bytes += heap(c.type_name) + heap(c.attributes_json);
  }
  bytes += heap(e.relationship.type_name) + heap(e.relationship.label) +
           heap(e.relationship.end1.type_name) + heap(e.relationship.end2.type_name);
  return bytes;
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
  NetWindow folding;  // from begin_window() to end_window(): the folder writes into it

  // A folded window's info (its index and event numbers, continuing from the last window) and
  // events.
  void describe(NetWindow& net, std::span<const Event> window) {
    WindowInfo& w = net.info;
    w.index = ++windows;
    w.first_event = events + 1;
    events += window.size();
    w.last_event = events;
    if (window.empty()) {
      w.comment = fmt::format("window {}: no events", w.index);
    } else {
      w.comment = fmt::format("window {}: events {}-{}", w.index, w.first_event, w.last_event);
      w.span = span_of(window);
      if (!w.span.empty()) w.comment += fmt::format(" ({})", w.span);
    }
    net.events = window;
  }

  // The window (or the part of one, without `window_ends`) folded since begin_window(),
  // described.
  NetWindow end(std::span<const Event> window, bool window_ends) {
    folder.end_window(window_ends);
    NetWindow net = std::move(folding);
    describe(net, window);
    return net;
  }
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
      "{}{} compile\n"
      "-- options: --database {} --key-encoding {} --tombstone {} --prior {} "
      "--props-max-bytes {} --window-events {} --batch-rows {} --batch-bytes {}{}{}\n"
      "-- prior state: {}\n",
      kSqlSignature, kVersion, o.database, to_string(o.key_encoding), to_string(o.tombstone),
      to_string(o.prior), o.props_max_bytes, o.window_events, o.batch_rows, o.batch_bytes,
      o.memory_budget == kDefaultMemoryBudget
          ? std::string()
          : " --memory-budget " + memory_budget_text(o.memory_budget),
      o.annotate ? " --annotate" : "", comment_text(prior_description));
}

std::vector<Guid> Compiler::unknown_entities(std::span<const Event> window) const {
  return impl_->folder.unknown_entities(window);
}

void Compiler::learn(std::span<const PriorEntity> prior) {
  impl_->folder.learn(prior);
}

std::string Compiler::knowledge_snapshot(std::span<const Event> window) {
  return impl_->folder.knowledge_snapshot(window);
}

void Compiler::write_knowledge_snapshot(std::span<const Event> window,
                                        const std::function<void(std::string_view)>& out) {
  impl_->folder.write_knowledge_snapshot(window, out);
}

std::size_t KnowledgeSnapshot::size() const {
  std::size_t bytes = 0;
  write([&](std::string_view entry) { bytes += entry.size(); });
  return bytes;
}

void KnowledgeSnapshot::write(const std::function<void(std::string_view)>& out) const {
  compiler_.write_knowledge_snapshot(window_, out);
}

void Compiler::assume(std::string_view snapshot) {
  assume(std::make_shared<const SnapshotFile>(std::string(snapshot)));
}

void Compiler::assume(std::shared_ptr<const SnapshotFile> snapshot) {
  impl_->folder.assume(std::move(snapshot));
}

std::string merge_knowledge_snapshots(std::string_view earlier, std::string_view later) {
  const SnapshotFile first{std::string(earlier)};
  const SnapshotFile second{std::string(later)};
  std::string out;
  const std::vector<bool> none;
  const MergedSnapshot merged(first, none,
                              [&](const auto& each) { second.write_without(none, each); });
  merged.write([&](std::string_view bytes) { out += bytes; });
  return out;
}

const KnowledgeStats& Compiler::knowledge_stats() const {
  return impl_->folder.knowledge_stats();
}

const UnreadableProps& Compiler::unreadable_props() const {
  return impl_->folder.unreadable_props();
}

NetWindow Compiler::fold(std::span<const Event> window) {
  NetWindow net;
  impl_->folder.fold(window, net);
  impl_->describe(net, window);
  return net;
}

void Compiler::begin_window(std::size_t expected_events) {
  impl_->folding = NetWindow{};
  impl_->folder.begin_window(impl_->folding, expected_events);
}

void Compiler::add(const Event& event) {
  impl_->folder.add(event);
}

NetWindow Compiler::end_window(std::span<const Event> window) {
  return impl_->end(window, true);
}

std::size_t Compiler::window_held_bytes() const {
  return impl_->folder.held_bytes();
}

NetWindow Compiler::end_part(std::span<const Event> part) {
  // Knowledge evicted is spilled and read back when a later part touches it, also under
  // kLookUpAgain: the window's lookup is behind it.
  return impl_->end(part, false);
}

void WindowParts::begin(std::size_t expected_events) {
  expected_ = expected_events;
  first_ = 0;
  event_bytes_ = 0;
  full_ = false;
  compiler_.begin_window(expected_events);
}

std::optional<NetWindow> WindowParts::add(std::span<const Event> window, std::size_t i) {
  std::optional<NetWindow> part;
  if (full_) {
    part = compiler_.end_part(window.subspan(first_, i - first_));
    part->info.comment += kClosedEarlyComment;
    ++split_;
    // The next part's indexes are sized like this one's, not for the rest of the window: a
    // window of many small parts would otherwise allocate (and clear) them many times over.
    const std::size_t part_events = i - first_;
    first_ = i;
    full_ = false;
    compiler_.begin_window(expected_ > i ? std::min(expected_ - i, part_events) : part_events);
  }
  const Event& e = window[i];
  compiler_.add(e);
  event_bytes_ += event_bytes(e);
  // 5/4: see compiler.h.
  const std::size_t budget = compiler_.options().window_budget;
  full_ = compiler_.window_held_bytes() + event_bytes_ >= budget + budget / 4;
  return part;
}

NetWindow WindowParts::end(std::span<const Event> window) {
  return compiler_.end_window(window.subspan(first_));
}

std::string window_name(std::uint64_t index, std::uint64_t first_event, std::uint64_t last_event,
                        std::string_view span) {
  if (span.empty()) return fmt::format("window {} (events {}-{})", index, first_event, last_event);
  return fmt::format("window {} (events {}-{}; {})", index, first_event, last_event, span);
}

std::string statement_name(const CompiledWindow& window, std::string_view phase,
                           std::size_t position, const Statement& statement, bool before) {
  const std::size_t count = phase == "delete" ? window.deletes.size() : window.upserts.size();
  return fmt::format("{}, {} phase, {}statement {} of {} (table {})",
                     window_name(window.index, window.first_event, window.last_event, window.span),
                     phase, before ? "before " : "", position, count, statement.table);
}

void Compiler::continue_numbering(std::uint64_t windows, std::uint64_t events) {
  impl_->windows = windows;
  impl_->events = events;
}

std::string Compiler::next_window_name(std::span<const Event> window) const {
  if (window.empty())
    return fmt::format("window {} (from event {})", impl_->windows + 1, impl_->events + 1);
  return window_name(impl_->windows + 1, impl_->events + 1, impl_->events + window.size(),
                     span_of(window));
}

NetWindow fold_window(Compiler& compiler, PriorState& prior, std::span<const Event> window) {
  prepare_window(compiler, prior, window);
  return compiler.fold(window);
}

void prepare_window(Compiler& compiler, PriorState& prior, std::span<const Event> window) {
  // Sorting a window's guids to ask a source that never answers is a few percent of --prior none.
  if (prior.knows_nothing()) return;
  const std::vector<Guid> unknown = compiler.unknown_entities(window);
  if (!unknown.empty()) {
    try {
      // Learnt a batch at a time: the knowledge store spills what outgrows its budget before the
      // next batch is read (a window of 10,000 small updates of entities with 20 KB of stored
      // props held all 200 MB of them, twice, before the fold began). The pages each batch's
      // answer freed go back once the resident set is over its ceiling, as while the window is
      // read and folded: kept, they took that window to 700 MB.
      prior.lookup_in_batches(unknown, [&](std::vector<PriorEntity>& found) {
        compiler.learn(found);
        keep_resident_memory_under_ceiling(true);
      });
    } catch (Error& e) {
      // The lookup names its table and keys; the window says which input it was for, as a
      // failed statement's message does.
      e.add_context(compiler.next_window_name(window) + ", ");
      throw;
    }
  }
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
  WindowCutter cut(options);
  WindowParts parts(compiler);
  std::size_t first = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (!cut.add(events[i]) && i + 1 < events.size()) continue;
    const std::span<const Event> window = events.subspan(first, i + 1 - first);
    prepare_window(compiler, prior, window);
    parts.begin(window.size());
    for (std::size_t j = 0; j < window.size(); ++j) {
      if (std::optional<NetWindow> part = parts.add(window, j)) writer.write(*part);
    }
    NetWindow net = parts.end(window);
    if (cut.this_closed_early()) net.info.comment += kClosedEarlyComment;
    writer.write(net);
    cut.start();
    first = i + 1;
  }
  writer.finish();
  return out;
}

}  // namespace atlas2kudu
