// The knowledge the compiler carries from window to window (what the input established, or the
// prior state told, about each entity: compile/fold.h, EntityKnowledge), kept within a memory
// budget whatever the number of entities.
//
// Entries live in memory as EntityKnowledge, keyed by guid, so that a window folds straight into
// them (get()); their footprint is re-estimated for the entries a window touched. After each
// window the store evicts the entries touched longest ago until it is back under its budget
// (CompileOptions::knowledge_budget). What happens to an evicted entry depends on where the truth
// can be found again:
//   - kSpill: it is written, in its compact byte form (encode_knowledge), to an on-disk store
//     (compile/spill_store.h: an append-only log and an on-disk hash index of the guids) and read
//     back the next time a window touches the entity, so the output is byte-identical to a run
//     that kept everything in memory. Used by `compile` (whose statements never run, so the
//     tables cannot tell what earlier windows did) and by `apply --prior none`.
//   - kLookUpAgain: it is dropped; unknown_entities() names the entity again and the PriorState
//     reads it from the tables, which by then hold exactly what the earlier windows wrote (apply
//     runs every window before it folds the next). Used by `apply --prior impala`. Only at the
//     end of a window, though: an entry evicted while a window is looked up (learn()) or between
//     its parts is spilled as under kSpill, since the window's lookup is behind it; those spilled
//     entries are forgotten, with their spill files, when the window ends.
//
// The spill files are created on the first eviction, in a fresh directory under
// CompileOptions::spill_dir ($TMPDIR or /tmp when empty), and unlinked together with their
// directory as soon as they are open: nothing is left on disk after the process ends, however it
// ends (normal exit, error, SIGINT, SIGTERM or SIGKILL); the space is released when they are
// closed. They are read and written through the page cache, never mapped: none of their pages
// count against the budget.
//
//   KnowledgeStore store(options);
//   store.learn(a, ka);                      // what the PriorState said of `a`: evictable
//   store.make_room();                       // after each batch of lookups: spills past the budget
//   EntityKnowledge& k = store.get(guid);   // all-unknown if nothing is known yet
//   k.props_known = true; ...                // valid until end_window()
//   store.end_window(false);                 // a part of the window ends: spills past the budget
//   store.end_window();                      // the window ends: evicts (spills or forgets)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/event.h"
#include "compile/props.h"
#include "util/key16_index.h"

namespace atlas2kudu {

// What is known about one entity's stored state after the events folded so far.
struct EntityKnowledge {
  enum class Cell : std::uint8_t { kUnknown, kNull, kValue };
  Cell type_state = Cell::kUnknown;
  std::string type_name;
  // kValue: entity_flat.qualified_name; kNull: no qualified name and no by_qn row maps to the guid.
  Cell qn_state = Cell::kUnknown;
  std::string qualified_name;
  // qn_digest(type_name, qualified_name) when digest_valid: renames compare against it on every
  // event, and SHA-256 is the most expensive step of the fold.
  bool digest_valid = false;
  QnDigest digest{};
  bool props_known = false;
  Props props;
  bool tags_known = false;
  std::vector<std::string> tags;  // sorted

  friend bool operator==(const EntityKnowledge&, const EntityKnowledge&) = default;
};

// The compact byte form of an entry in the spill file:
//   flags (1 byte: type_state, qn_state, digest_valid, props_known, tags_known),
//   type_name, qualified_name (varint length + bytes each), digest (16 bytes, when valid),
//   props (when known: the cell's text, member count, each member's offsets (begin, key and
//   value sizes, escaped key's place + 1 or 0), the escaped keys, truncated count, keys),
//   tags (when known: count, names).
void encode_knowledge(const EntityKnowledge& k, std::string& out);
// Throws Error(kInternal) on bytes encode_knowledge did not write.
void decode_knowledge(std::string_view bytes, EntityKnowledge& out);
// Whether `k` is knowledge a fold could have made: what decode_knowledge cannot tell of bytes
// that hold together but were changed (a damaged FILE.window), and the fold would act on:
//   - a digest only beside a known type and qualifiedName, and equal to their qn_digest (renames
//     compare against it: a wrong one deletes the wrong entity_by_qn row);
//   - a type or qualifiedName text only for a known value;
//   - tags ascending and distinct (looked up by binary search);
//   - props that are what their text says (matches_its_text, compile/props.h).
// The texts themselves may be any bytes: the prior state hands over what the tables hold.
//   {type hive_table, qn db.t@cl, digest qn_digest("hive_table", "db.t@cl")}   -> true
//   the same with one digest byte changed                                      -> false
//   {type unknown, type text "hive_table"}                                     -> false
//   tags {TIER1, PII}                                                          -> false
bool is_foldable(const EntityKnowledge& k);

// The knowledge of several entities as bytes (Compiler::knowledge_snapshot): for each entity,
// ascending by guid and distinct, its 16 guid bytes, then the varint length and the bytes of
// encode_knowledge.
void append_snapshot_entry(std::string& out, const Guid& guid, const EntityKnowledge& k);
void append_snapshot_entry(std::string& out, const Guid& guid, std::string_view knowledge);
// The header of the entry at the start of `bytes` (its guid and its knowledge's length): the bytes
// it takes, or 0 if `bytes` holds less than all of it. Throws Error(kCheckpoint) on a length that
// is no varint of at most 10 bytes.
std::size_t snapshot_entry_header(std::string_view bytes, Guid& guid, std::size_t& knowledge_size);

class SpillStore;  // compile/spill_store.h

class KnowledgeStore {
 public:
  // Uses options.knowledge_budget, options.evicted and options.spill_dir.
  explicit KnowledgeStore(const CompileOptions& options);
  ~KnowledgeStore();
  KnowledgeStore(const KnowledgeStore&) = delete;
  KnowledgeStore& operator=(const KnowledgeStore&) = delete;

  // True if anything is known about `guid` (in memory or spilled). A spilled entry stays
  // spilled: a window's guids are all asked about before the first is folded (its unknown
  // entities), and bringing them all back at once held a whole window of them beyond the budget.
  bool contains(const Guid& guid);
  // What is known about `guid`, to read and update: all-unknown if nothing was. The reference
  // stays valid until end_window() (no entry moves or leaves before then). A spilled entry is
  // brought back, and counted at once.
  EntityKnowledge& get(const Guid& guid);
  // What the entries in memory hold past the budget: knowledge get() brought back from the spill
  // since the last end_window() (or the lookups learnt), beyond the room that end_window() left
  // for it. It cannot be evicted before the next end_window(), so it is the window's (or the
  // part's) to count (Compiler::window_held_bytes). 2,500 owner updates of entities holding 40
  // KB of tags each brought back 100 MB into one window at --memory-budget 64M. (Entries the
  // window makes are counted only at its end, within the room left for them. Assumed knowledge
  // comes into memory only when a window touches it, and is counted then, as a read-back.)
  std::size_t bytes_over_budget() const;
  // Copies of get(), for callers that only look: false (and `out` all-unknown) if nothing known.
  // A spilled entry is read into `out` and stays spilled; an assumed one stays in its snapshot.
  bool load(const Guid& guid, EntityKnowledge& out);
  void save(const Guid& guid, const EntityKnowledge& k) { get(guid) = k; }
  // Knowledge a resumed run takes from the window that failed (Compiler::assume), for every
  // entity the store knows nothing of yet: it stays in `snapshot` (on disk: FILE.window, which
  // may hold many times the budget) until a window touches the entity, and is then brought into
  // memory and counted as a spilled entry read back. It is never forgotten before: under
  // kLookUpAgain an evicted entry is read from the tables again, and those hold the failed
  // window's partial writes, not what its fold started from; once a window has folded the entity
  // and run, they hold its truth again.
  //   store.assume(snapshot);  // before the first window; the snapshot names `a`
  //   store.end_window();      // a window without `a`: `a` stays in the snapshot
  //   store.get(a);            // a window folds `a`: read from the snapshot, counted ...
  //   store.end_window();      // ... and from now on `a` may be evicted like any entry
  void assume(std::shared_ptr<const SnapshotFile> snapshot);
  // What the PriorState told about `guid`, which the store does not know (Compiler::learn): held
  // like an entry of an earlier window, so that it can be evicted before the window touches the
  // entity, when a window's lookups outgrow the budget (a window of small updates of entities
  // whose stored props are tens of KB each). An entry the store has is replaced, as get() would.
  void learn(const Guid& guid, EntityKnowledge k);
  // After a batch of learn(): evicts (spills) the entries touched longest ago while over the
  // budget. Throws Error(kIo) as end_window().
  void make_room();
  // After each window (`window_ends`), or each part of one that goes on (WindowParts):
  // re-estimates what it touched and evicts the entries touched longest ago while over the
  // budget. Throws Error(kIo) if the spill file cannot be created or written.
  void end_window(bool window_ends = true);

  const KnowledgeStats& stats() const { return stats_; }
  // Distinct entities in the spill store (SpillStore::entries(): writes its pending index).
  std::uint64_t spill_entries();

 private:
  struct Entry {
    EntityKnowledge knowledge;
    Guid guid;
    Entry* prev = nullptr;  // the recency list: least recently touched at the front
    Entry* next = nullptr;
    std::uint32_t window = 0;  // last window that touched it
    std::uint32_t bytes = 0;   // footprint when last estimated
    bool touched = false;      // by the current window
    // In the recency list, so evictable: from the end of the first window that touched it on.
    bool linked = false;
  };

  // What the footprint estimate adds to each heap block for the allocator's own bookkeeping.
  static constexpr std::size_t kMallocHeader = 16;
  // The encoded entries an eviction holds before it writes them to the spill store.
  static constexpr std::size_t kEvictionChunkBytes = std::size_t{4} << 20;

  // The entries, keyed by guid (util/key16_index.h). Each is allocated on its own and never
  // moves, so references stay valid while the index grows; an evicted entry's memory goes back
  // to the allocator, for the next window's rows as much as for entries (a pool of entries kept
  // for reuse held about 20 MB more at the same budget).
  class Entries {
   public:
    Entries() = default;
    ~Entries();
    Entries(const Entries&) = delete;
    Entries& operator=(const Entries&) = delete;

    Entry* find(const Guid& guid) const { return index_.find(guid.bytes.data()); }
    // The entry of `guid`, made (all-unknown knowledge) if there was none; `made` tells which.
    Entry& find_or_make(const Guid& guid, bool& made);
    // Forgets `e` and frees it.
    void remove(Entry& e);
    std::size_t size() const { return index_.size(); }
    // The index's own memory, counted against the budget as it is: two to four cells of 24 bytes
    // per entry, a table sized for the most entries the store ever held at once.
    std::size_t index_bytes() const { return index_.bytes(); }
    // Bytes per entry beyond its knowledge's own heap blocks: its allocation, with the
    // allocator's header.
    static constexpr std::size_t kBytesPerEntry = sizeof(Entry) + kMallocHeader;

   private:
    Key16Index<Entry*, nullptr> index_{64};  // grows with the entries: small budgets stay small
  };

  static std::size_t footprint(const EntityKnowledge& k);
  // Estimates `e`'s footprint (Entry::bytes) and adds it to bytes_; `e` is not counted there.
  void count(Entry& e);
  // What was spilled for `guid`, read into scratch_ (and counted); false if it never was.
  bool read_spilled(const Guid& guid);
  // The entry of assumed_ for `guid` not taken into memory yet, or SnapshotFile::npos.
  std::size_t assumed_entry(const Guid& guid) const;
  // What was spilled or assumed for `guid`, read into scratch_; false if neither. `take`: the
  // assumed entry is in memory from now on (get()).
  bool read_back(const Guid& guid, bool take);
  Entry& touch(Entry& e);
  void unlink(Entry& e);
  // Links `e` (not in the list) as the most recently touched entry.
  void link_at_back(Entry& e);
  // Down to `target` bytes: spilled, or forgotten with `forget`.
  void evict(std::size_t target, bool forget);
  std::size_t room() const;

  std::size_t budget_;
  EvictedKnowledge policy_;
  std::string spill_dir_;
  Entries entries_;
  std::size_t bytes_ = 0;
  std::size_t bytes_after_eviction_ = 0;  // at the end of the previous window
  std::uint32_t window_ = 0;
  std::vector<Entry*> touched_;  // by the current window
  Entry* lru_front_ = nullptr;
  Entry* lru_back_ = nullptr;
  std::unique_ptr<SpillStore> spill_;
  std::shared_ptr<const SnapshotFile> assumed_;  // assume()
  std::vector<bool> taken_;                      // ... per entry: brought into memory
  std::string scratch_;
  KnowledgeStats stats_;
};

}  // namespace atlas2kudu
