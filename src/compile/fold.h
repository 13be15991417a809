// The fold (compiler.h, steps 1-3): one window of events in input order -> NetWindow, the net
// operation of every projection row it touches plus the predicate deletes it needs.
//
// The Folder also keeps EntityKnowledge: what the input established (or the prior state told)
// about each entity, carried from window to window of one run, in a KnowledgeStore that stays
// within CompileOptions::knowledge_budget (compile/knowledge_store.h). The fold never asks the
// PriorState: the caller learns prior state first (Compiler::learn). Its only other I/O is the
// store's spill file, when the knowledge outgrows its budget.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/event.h"
#include "atlas2kudu/prior_state.h"
#include "compile/knowledge_store.h"
#include "compile/props.h"
#include "util/keyed_hash.h"

namespace atlas2kudu {

// Folds windows. One instance per run: it owns the knowledge carried from window to window.
class Folder {
 public:
  explicit Folder(const CompileOptions& options);

  // Compiler::unknown_entities. Brings spilled knowledge of the window's entities back into
  // memory (the store is a cache: logically const).
  std::vector<Guid> unknown_entities(std::span<const Event> events) const;
  // Compiler::learn.
  void learn(std::span<const PriorEntity> prior);
  // Compiler::knowledge_snapshot, write_knowledge_snapshot and assume.
  std::string knowledge_snapshot(std::span<const Event> events);
  void write_knowledge_snapshot(std::span<const Event> events,
                                const std::function<void(std::string_view)>& out);
  void assume(std::shared_ptr<const SnapshotFile> snapshot);
  // Folds `events` (one window, input order) into `net` (empty rows), then lets the store evict
  // past its budget. The same as begin_window(net, events.size()), add() of each event, then
  // end_window().
  void fold(std::span<const Event> events, NetWindow& net);

  // fold() an event at a time, for a caller that folds a window while it is still being read
  // (Compiler::begin_window). `net` must stay where it is until end_window(); `expected_events`
  // only sizes the window's indexes (they grow past it).
  void begin_window(NetWindow& net, std::size_t expected_events);
  void add(const Event& event);
  // Without `window_ends`, a part of a window that goes on ends (Compiler::end_part): under
  // kLookUpAgain, what the store evicts is spilled, not forgotten (KnowledgeStore::end_window).
  void end_window(bool window_ends = true);
  // What the window begun last holds beyond its events: its rows and indexes and the text of
  // their statements, estimated from what it folded, and the knowledge it brought back from the
  // spill past the store's budget (KnowledgeStore::bytes_over_budget). Grows with every add().
  std::size_t held_bytes() const;

  const KnowledgeStats& knowledge_stats() const { return knowledge_.stats(); }
  const UnreadableProps& unreadable_props() const { return unreadable_props_; }

  ~Folder();

 private:
  class Window;

  CompileOptions options_;
  mutable KnowledgeStore knowledge_;
  UnreadableProps unreadable_props_;
  std::unique_ptr<Window> window_;  // from begin_window() to end_window()
};

// An edge's key (a, elabel, b) as in EdgeRow, viewing the label's text: the fold indexes a
// window's edge rows by it, and the annotator (annotate.h) the window's relationship events.
struct EdgeKey {
  Guid a;
  Guid b;
  std::string_view elabel;
  friend bool operator==(const EdgeKey&, const EdgeKey&) = default;
};
struct EdgeKeyHash {
  std::size_t operator()(const EdgeKey& k) const noexcept {
    return SipHasher(process_hash_key())
        .update(k.a.bytes.data(), k.a.bytes.size())
        .update(k.b.bytes.data(), k.b.bytes.size())
        .update(k.elabel)
        .finish();
  }
};

// The detail_json of an audit row: what the event changed, from the event alone, so a
// replay writes the identical row. {"attributes":[sorted names incl. name/qualifiedName when
// given]} plus "classifications":[distinct tag names, sorted] for classification events. Over
// `max_bytes`: {"_truncated":true,"attributes":N,"classifications":M}, or {} if even that is over.
std::string audit_detail_json(const Event& event, std::size_t max_bytes);

}  // namespace atlas2kudu
