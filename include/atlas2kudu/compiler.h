// The compiler: Events in input order -> per window, the net row operations on the six projection
// tables -> the Impala statements that apply them.
//
// A run goes window by window. For each window (at most window_events events, input order):
//
//   1. unknown_entities(window): the entities whose stored state the compiler does not carry yet;
//   2. the caller asks its PriorState about them (I/O) and hands the answer to learn();
//   3. fold(window): pure, no I/O: one net operation per projection row, plus the predicate
//      deletes the window needs (NetWindow below);
//   4. a WindowWriter applies the NetWindow: the SQL writer (compile/sql_writer.h) plans it into a
//      delete phase and an upsert phase (CompiledWindow) and hands those to an Executor
//      (executor.h: printed by `compile`, run over HS2 by `apply`).
//
// fold_window() does steps 1-3 and compile_window() steps 1-4 for the SQL writer; both are what
// the pipeline and the tests call, so there is one place where the prior state is asked.
//
//   CompileOptions options;                 // --window-events, --key-encoding, ...
//   Compiler compiler(options);             // carries what earlier windows established
//   NoPriorState prior;                     // --prior none; Hs2PriorState for --prior impala
//   std::string sql = compiler.header(prior.describe());
//   CompiledWindow w = compile_window(compiler, prior, window);
//   // w.deletes, then w.upserts: the statements of the window, in the order they must run
//
// Windows must be handed over in input order; the compiler carries what earlier windows
// established about each entity (props, type, qualifiedName, tag set), so cutting the input into
// small windows gives the same tables as one big window.
//
// Equivalence, the property every test checks: executing the statements of every window, in
// order (all deletes of a window before its upserts), on tables with Kudu semantics leaves them
// exactly as if every event had been applied one at a time, in input order.
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
#include <utility>
#include <vector>

#include "atlas2kudu/event.h"
#include "atlas2kudu/prior_state.h"

namespace atlas2kudu {

// ---------------------------------------------------------------------------------------------
// Options

// How KEY columns are stored.
//   kHex:    STRING of 32 lowercase hex characters, written as '0b6f3c1e...' (any Impala; keeps
//            IN-list pushdown).
//   kBinary: BINARY of 16 bytes (Impala >= 4.4), written as CAST(unhex('0b6f3c1e...') AS BINARY).
enum class KeyEncoding { kHex, kBinary };

// What ENTITY_DELETE does.
//   kSoft: state = 'DELETED' on entity_flat, by_qn row and edges deleted, tags kept.
//   kHard: entity_flat row, by_qn row, edges and tags deleted.
enum class Tombstone { kSoft, kHard };

// Where the stored state of keys the input does not establish comes from.
enum class PriorSource { kNone, kImpala };

// What becomes of entity knowledge evicted past CompileOptions::knowledge_budget
// (compile/knowledge_store.h): written to a spill file and read back when needed, or dropped and
// looked up again through the PriorState. Looking up again is exact only where every earlier
// window was applied to the tables before the next one is folded: `apply --prior impala`.
enum class EvictedKnowledge { kSpill, kLookUpAgain };

// --memory-budget: the peak memory (RSS) a run should stay under, and how it is shared.
inline constexpr std::size_t kDefaultMemoryBudget = std::size_t{256} << 20;
inline constexpr std::size_t kMinMemoryBudget = std::size_t{64} << 20;
struct MemoryShares {
  std::size_t knowledge = 0;  // entity knowledge carried between windows
  std::size_t window = 0;     // one window: its events, folded rows and statements
};
// Sets aside what the process needs whatever the input (code, libraries, read buffers, the JSON
// parser, allocator slack) and shares the rest between the knowledge cache and the window.
MemoryShares split_memory_budget(std::size_t budget);
// A budget as --memory-budget takes it, exactly: "256M", "2G", or bytes when it is no whole MiB
// ("1000000000"), so that the figure can be found in the command line or the --config file.
std::string memory_budget_text(std::size_t budget);
// The longest record (--max-record-bytes) and message (--max-message-bytes) that compile, apply
// (and check, to reject what they would) read within a budget are 1/kRecordShare of it (8 MiB at
// the default 256M, 2 MiB at 64M), and the chunk records of split messages waiting for the rest
// (--max-split-bytes) twice that. One record takes up to about nine times its size while it is
// read, parsed and folded (the parser indexes every structural character in 4 bytes: a 16 MiB
// array of small numbers alone peaks at 154 MiB). Measured with two such records in the middle
// of a 400 MB run: peak RSS 252 MiB at the default budget (8 MiB records), 61 MiB at 64M (2 MiB
// records).
inline constexpr std::size_t kRecordShare = 32;

// --batch-rows at most. A statement's IN-lists hold up to batch_rows keys (deletes, and the
// --prior impala lookups), and Impala refuses an expression of more than 10000 children
// (Expr.EXPR_CHILDREN_LIMIT): an IN predicate has one for its column and one per item. 9999 rows
// of an UPSERT, about ten expressions each, also stay well under Impala's
// statement_expression_limit (250000 by default).
inline constexpr std::size_t kMaxBatchRows = 9999;

struct CompileOptions {
  std::string database = "atlas";
  KeyEncoding key_encoding = KeyEncoding::kHex;
  Tombstone tombstone = Tombstone::kSoft;
  PriorSource prior = PriorSource::kNone;
  std::size_t props_max_bytes = 60000;  // props_json and detail_json cap (Kudu cells: 64 KiB)
  std::size_t window_events = 50000;
  std::size_t batch_rows = 1000;  // rows (or keys) per statement, at most kMaxBatchRows
  std::size_t batch_bytes = std::size_t{4} << 20;  // bytes per statement (Impala: 16 MiB)
  // Memory (split_memory_budget of --memory-budget). Neither changes the statements of a window;
  // a window that would outgrow window_budget closes early (window_fits).
  std::size_t knowledge_budget = split_memory_budget(kDefaultMemoryBudget).knowledge;
  std::size_t window_budget = split_memory_budget(kDefaultMemoryBudget).window;
  // The --memory-budget the shares come from. The SQL header names it when it is not the default:
  // where a window closes early, and so the statements, depend on it.
  std::size_t memory_budget = kDefaultMemoryBudget;
  EvictedKnowledge evicted = EvictedKnowledge::kSpill;
  std::string spill_dir;  // where the spill file goes; empty: $TMPDIR, else /tmp
  // compile --annotate: each statement carries a comment naming the input positions of the
  // events behind it (Statement::annotation). Never changes the statements themselves.
  bool annotate = false;
};

// Throws Error(kUsage) for options no SQL can be written for: a database name Impala cannot
// quote, props_max_bytes < 2, or a zero window_events, batch_rows, batch_bytes or window_budget.
void validate_compile_options(const CompileOptions& options);

// Bytes one event makes a window hold, estimated: the event itself, its rows in the fold with
// their indexes, and its share of the window's statements.
std::size_t window_footprint(const Event& event);
// The event's own memory, estimated: the Event and the heap blocks of its strings and lists
// (WindowParts: a window's events stay in memory until its last part is written).
std::size_t event_bytes(const Event& event);

// What WindowInfo::comment of a window that closed early on the budget ends with (WindowCutter
// closed it, or it is a part that WindowParts ended): "window 3: events 201-340 (...), closed
// early by --memory-budget".
inline constexpr std::string_view kClosedEarlyComment = ", closed early by --memory-budget";

// Cuts the event stream into windows: a window closes once it holds options.window_events
// events, or early once its events' window_footprint reaches options.window_budget (so it ends
// at most one event past the budget, and always holds at least one event). The decision comes
// right after an event is added, never by looking at the next one: the reader's position after
// a window's last event is the window's resume point (checkpoints).
//
//   WindowCutter cut(options);
//   for (each event e) { window.push_back(e); if (cut.add(e)) { run the window; cut.start(); } }
class WindowCutter {
 public:
  explicit WindowCutter(const CompileOptions& options)
      : max_events_(options.window_events), max_bytes_(options.window_budget) {}
  // Counts `e` into the current window; true if the window is now complete.
  bool add(const Event& e) {
    ++events_;
    bytes_ += window_footprint(e);
    if (events_ >= max_events_) return true;
    if (bytes_ < max_bytes_) return false;
    // Once per window: a window read on past this (a resumed run's first: cli/pipeline.h) asks
    // again after each event.
    if (!this_closed_early_) ++closed_early_;
    this_closed_early_ = true;
    return true;
  }
  // Starts the next window.
  void start() {
    events_ = 0;
    bytes_ = 0;
    this_closed_early_ = false;
  }
  // Windows closed by their bytes before reaching window_events.
  std::uint64_t closed_early() const { return closed_early_; }
  // Whether the current window was.
  bool this_closed_early() const { return this_closed_early_; }

 private:
  std::size_t max_events_, max_bytes_;
  std::size_t events_ = 0, bytes_ = 0;
  std::uint64_t closed_early_ = 0;
  bool this_closed_early_ = false;
};

// "hex"/"binary", "soft"/"hard", "none"/"impala": the option words of the command line.
std::string_view to_string(KeyEncoding encoding);
std::string_view to_string(Tombstone tombstone);
std::string_view to_string(PriorSource prior);

// ---------------------------------------------------------------------------------------------
// The fold's result: net row operations of one window

using QnDigest = std::array<std::uint8_t, 16>;  // entity_by_qn key: see util/digest.h

// Net operation of one row: `delete_first` = a keyed DELETE runs in the delete phase;
// `upsert` = an UPSERT runs in the upsert phase (listing every column if delete_first).
struct RowOp {
  bool delete_first = false;
  bool upsert = false;
};

struct FlatRow : RowOp {
  // Bit i-1 stands for column i of entity_flat (compile/schema.h; column 0 is the key `guid`).
  enum Column : std::uint8_t {
    kTypeName = 1,
    kQualifiedName = 2,
    kName = 4,
    kState = 8,
    kCreatedTs = 16,
    kUpdatedTs = 32,
    kPropsJson = 64,
    kAll = 127,
  };
  Guid guid;
  std::uint8_t mask = 0;                             // columns set since the last delete
  std::string_view type_name, qualified_name, name;  // the latest event's text (NetWindow)
  std::string props_json;
  bool state_deleted = false;
  std::int64_t created_ts = 0, updated_ts = 0;
};

struct ByQnRow : RowOp {
  QnDigest digest{};
  Guid guid;
  std::string_view type_name;  // the event's text (NetWindow)
};

// edge_out: a = src, b = dst, b_type = dst_type. edge_in: a = dst, b = src, b_type = src_type.
struct EdgeRow : RowOp {
  Guid a;
  std::string_view elabel;  // the events' text (NetWindow)
  Guid b;
  std::string_view b_type;  // empty: the end had no typeName, written NULL
};

struct TagRow : RowOp {
  std::string tag_name;
  Guid guid;
  bool propagated = false;
  Guid source_guid;
  std::string attrs_json;
  std::int64_t updated_ts = 0;
};

struct AuditRow {
  Guid guid;
  std::int64_t event_ts = 0;
  std::int64_t seq = 0;
  Operation op = Operation::kEntityUpdate;
  std::string_view type_name;  // the event's text (NetWindow)
  std::optional<std::string_view> qualified_name;
  std::string detail_json;
};

// "Delete the rows of `guid` except those in `keep`" (keep empty: all of them).
template <typename KeepT>
struct CleanUp {
  Guid guid;
  std::vector<KeepT> keep;  // sorted, distinct
};

// Where a window sits in the run, for comments, reports and checkpoints.
// How every message names a window: "window 2 (events 4-6; in.json:4 .. in.json:6)". Windows
// and events are numbered from the start of the run, or, in a run that resumes a checkpoint, on
// from what the earlier runs applied (Compiler::continue_numbering); the input positions of its
// first and last events (`span`; left out when empty) say where it is in the files.
std::string window_name(std::uint64_t index, std::uint64_t first_event, std::uint64_t last_event,
                        std::string_view span = {});

struct WindowInfo {
  std::uint64_t index = 0;        // 1-based
  std::uint64_t first_event = 0;  // 1-based event numbers covered, inclusive
  std::uint64_t last_event = 0;
  std::string span;     // "in.json:4 .. in.json:6": its first and last events' lines; may be empty
  std::string comment;  // one line, e.g. "window 2: events 4-6 (in.json:4 .. in.json:6)"
};

// The folded window: one net operation per projection row, plus the predicate deletes.
//
// Every event is mapped to the row operations a one-event-at-a-time writer would run, then folded
// into the pending net operation of each row it touches:
//   - an UPSERT merges its columns into the pending row (later values win per column);
//   - a keyed DELETE clears the pending row and marks it `delete_first`;
//   - a predicate DELETE (edge cascade, by_qn clean-up, tag clean-up) clears and marks every
//     pending row it matches *at that point of the sequence*, and is also recorded so that the
//     delete phase applies it to the rows the window never touched before it.
// All deletes then run before all upserts. Why that equals sequential application:
//   - a row untouched before a predicate has its window-start state at the predicate's time, so
//     the delete phase decides it exactly as the sequence does;
//   - a row touched before a predicate is decided by the fold itself: if the predicate matched it,
//     its net operation starts with a keyed DELETE; if not, and the delete phase removes it anyway
//     because its window-start state matched, a pending upsert that lists every column puts it
//     back (predicates only exist on tables whose upserts always write full rows);
//   - an upsert after a delete lists every column (explicit NULLs), so nothing stale survives.
//
// Example (window: create A qn=x; rename A qn=y; soft-delete B with unknown state):
//   by_qn:           digest(x) -> delete_first (the rename's guarded delete cancels the create),
//                    digest(y) -> upsert (y, A, type)
//   by_qn_cleanups:  {B: keep nothing}  ->  DELETE ... WHERE `guid` IN (B)
//   edge_cascades:   {B}                ->  DELETE ... WHERE `src` IN (B) / `dst` IN (B)
//
// Row vectors are in first-touch order; writers sort what they need. Names, types, labels and
// qualified names in rows view the text of the events they came from instead of copying it (a
// window's rows would otherwise copy the same strings a second time): a NetWindow is valid only
// while the events it was folded from are, which `events` requires anyway. Tag names and the JSON
// cells (props, tag attributes, audit details) are the rows' own.
struct NetWindow {
  WindowInfo info;
  // The events folded into this window, in input order: a view of the caller's window, valid as
  // long as it is (rows the server refuses are traced back to them, compile/refusals.h).
  std::span<const Event> events;
  std::vector<FlatRow> flat;
  std::vector<ByQnRow> by_qn;
  std::vector<EdgeRow> edge_out;
  std::vector<EdgeRow> edge_in;
  std::vector<TagRow> tags;
  std::vector<AuditRow> audit;  // event order; a redelivered event repeats its key
  // Guarded by_qn deletes whose old digest is known: delete `digest` where it maps to `guid`.
  std::vector<std::pair<QnDigest, Guid>> by_qn_guarded;
  // by_qn clean-ups for entities whose stored digest is unknown: delete every row mapping to the
  // guid except the digests kept (the intersection over the window).
  std::vector<CleanUp<QnDigest>> by_qn_cleanups;
  // by_qn clean-ups for entities whose stored type is unknown too (`--prior none`, the run's first
  // event of the entity carries no qualifiedName): delete every row mapping to the guid under
  // another type than the event's. Such a row is stale (the type changed), and the new digest
  // cannot be computed without the stored qualifiedName, so no row replaces it.
  std::vector<std::pair<Guid, std::string_view>> by_qn_type_cleanups;
  // Entities whose edges are deleted from both edge tables (src = guid or dst = guid).
  std::vector<Guid> edge_cascades;
  // Tag clean-ups for entities whose stored tag set is unknown.
  std::vector<CleanUp<std::string>> tag_cleanups;
};

// Applies folded windows: the seam between the compiler and whatever writes the rows. The SQL
// writer (compile/sql_writer.h) is one; a native Kudu writer would be another.
class WindowWriter {
 public:
  virtual ~WindowWriter() = default;
  // Once, before the first window: the run's header comment lines ("-- ...\n" each).
  virtual void start(std::string_view header) = 0;
  // Applies one window; returns only once all of it is applied. Throws Error on failure. May
  // reorder the row vectors of `net`, or release them; net.info stays.
  virtual void write(NetWindow& net) = 0;
  // Once, after the last window.
  virtual void finish() = 0;
};

// ---------------------------------------------------------------------------------------------
// The compiler

// The knowledge the compiler carries between windows (compile/knowledge_store.h), for reports.
struct KnowledgeStats {
  std::uint64_t entries = 0;       // entities known in memory after the last window
  std::uint64_t memory_bytes = 0;  // their estimated footprint, with the index to find them
  // Evictions, spill writes and reads over the run, not entities: one entity evicted, read back
  // and evicted again counts twice in each.
  std::uint64_t evicted = 0;      // entries evicted past knowledge_budget
  std::uint64_t spilled = 0;      // ... of which written to the spill file
  std::uint64_t spill_reads = 0;  // entries read back from it
  // Entries read from FILE.window: what the earlier run of a resumed `apply --checkpoint` knew
  // before the window it stopped in (KnowledgeStore::assume).
  std::uint64_t window_file_reads = 0;
};

// Stored props_json cells learn() could not read: not one JSON object as atlas2kudu writes it
// (written by another tool or by hand, say). The fold merges that entity's attributes onto {}, as
// for an entity with no stored row, so the entity's next entity_flat UPSERT replaces what the
// cell held; cli warns with the first entity. Counted per cell learnt: an entity looked up again
// after its knowledge was evicted counts again.
//   {"owner":"o"}       -> read
//   {"owner":"o"        -> unreadable: count 1, first = that entity
struct UnreadableProps {
  std::uint64_t cells = 0;
  Guid first;  // meaningful when cells > 0
};

class SnapshotFile;  // below

class Compiler {
 public:
  // Throws Error(kUsage) as validate_compile_options.
  explicit Compiler(const CompileOptions& options);
  ~Compiler();
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  const CompileOptions& options() const;

  // The script header, comment lines each "-- …\n": version, every option, the prior source.
  //   -- atlas2kudu 0.1.0 compile
  //   -- options: --database atlas --key-encoding hex --tombstone soft --prior none ...
  //   -- prior state: none (...)
  std::string header(std::string_view prior_description) const;

  // Distinct guids (ascending) of the window's entity and classification events that the
  // compiler carries no state for yet: the question for PriorState::lookup.
  std::vector<Guid> unknown_entities(std::span<const Event> window) const;

  // What the store holds for entities unknown_entities() named (PriorState's contract). Guids
  // left out stay unknown: the fold then writes predicate deletes and merges props from {}. May
  // be called several times before the fold (a batch of the answer at a time); what outgrows the
  // knowledge budget is spilled until the fold touches it (compile/knowledge_store.h).
  void learn(std::span<const PriorEntity> prior);

  // What the compiler knows, after learn() and before fold(), of the entities of `window`'s entity
  // and classification events, as bytes. A window applied again after a failure part way through
  // it must be folded from this, not from what the tables hold by then (CompiledWindow says why):
  // cli keeps it beside the checkpoint (FILE.window) while the window runs, and a resumed run
  // hands it to assume() before its first window.
  std::string knowledge_snapshot(std::span<const Event> window);
  // The same bytes handed to `out` an entry at a time (KnowledgeSnapshot).
  void write_knowledge_snapshot(std::span<const Event> window,
                                const std::function<void(std::string_view)>& out);
  // Takes the knowledge in `snapshot` (knowledge_snapshot's bytes, or several merged by
  // merge_knowledge_snapshots) of every entity it names that nothing is known of yet. Throws
  // Error(kCheckpoint) on other bytes. Once, before the first window. The knowledge stays in the
  // snapshot until a window touches its entity (KnowledgeStore::assume): a SnapshotFile's stays
  // on disk.
  void assume(std::string_view snapshot);
  void assume(std::shared_ptr<const SnapshotFile> snapshot);

  // How the next window will be named in messages (window_name), from its events.
  std::string next_window_name(std::span<const Event> window) const;
  // Before the first window: numbers windows and events on from those earlier runs applied (a run
  // resuming a checkpoint), so that the window a failed run named "window 2 (events 5-8; ...)" is
  // window 2, events 5-8, when the rerun applies it too.
  //   compiler.continue_numbering(1, 4);   // the next window is window 2, from event 5
  void continue_numbering(std::uint64_t windows, std::uint64_t events);

  // Folds the next window (input order, any size). Pure: no I/O but the knowledge spill file.
  // Window indexes and event numbers continue across calls.
  NetWindow fold(std::span<const Event> window);

  // fold() in steps, for a caller that folds the events of a window while it reads the rest
  // (cli/pipeline.h, the read-ahead): begin_window(), add() each event in input order, then
  // end_window() with those same events, which must stay where they are until the NetWindow is
  // written. fold(window) is exactly these three, so the NetWindow is the same either way.
  // Only when no prior state is asked: fold_window() asks about the whole window before its first
  // event is folded. `expected_events` sizes the window's indexes (they grow past it).
  //   compiler.begin_window(4096);
  //   for (const Event& e : window) compiler.add(e);   // as each one is read
  //   NetWindow net = compiler.end_window(window);
  void begin_window(std::size_t expected_events);
  void add(const Event& event);
  NetWindow end_window(std::span<const Event> window);
  // What the window begun last holds so far beyond its events (rows, indexes, the text of their
  // statements, and the knowledge of its entities evicted earlier and read back from the spill
  // file, which stays until it ends), estimated from what it folded: deterministic, the same for
  // the same input and budget.
  std::size_t window_held_bytes() const;
  // end_window() of a part of a window whose next events are already read (WindowParts): the
  // NetWindow is complete, but under EvictedKnowledge::kLookUpAgain the knowledge the window
  // looked up for those events stays in memory until the window's last part has ended.
  NetWindow end_part(std::span<const Event> part);

  // The knowledge carried between windows: entries in memory, evicted, spilled, read back.
  const KnowledgeStats& knowledge_stats() const;
  // The stored props cells learn() could not read, over the run.
  const UnreadableProps& unreadable_props() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Steps 1-3: asks `prior` about the window's unknown entities (once per window, only when there
// are any; learnt a batch at a time: PriorState::lookup_in_batches), then folds. Lets exceptions
// of `prior` through, having folded nothing. (What it knew before folding, for FILE.window:
// KnowledgeSnapshot, between the two steps.)
NetWindow fold_window(Compiler& compiler, PriorState& prior, std::span<const Event> window);
// fold_window() without the fold: what has to happen before a window's first event is folded.
void prepare_window(Compiler& compiler, PriorState& prior, std::span<const Event> window);

// Folds a window in parts, so that what it holds stays within CompileOptions::window_budget also
// when small events make large rows. WindowCutter closes a window from its events as they are
// read; it cannot see that an update of one attribute of an entity whose merged props_json is
// 20 KB makes a row, a statement and a printed copy of all 20 KB, or that an event listing 40
// tags makes 40 rows, or that an update of an entity evicted from the knowledge cache brings its
// knowledge (40 tags of 1 KB: 40 KB) back into memory until the part ends. The fold can: after
// each event, a part's figure is what its rows hold and what it brought back
// (Compiler::window_held_bytes) plus the own memory (event_bytes) of the window's events folded
// so far, which stay until the window ends. Once that reaches 5/4 of window_budget (a window of
// ordinary events holds about its share by that figure when WindowCutter closes it, so the
// quarter keeps their windows whole; bench/RESULTS.md part thirty-two) and the window has a next
// event, the part ends before that event and is written before it is folded: every part is
// a window of its own (numbered, commented, planned and run like one) that closed early, and the
// knowledge flows from part to part as from window to window, so the statements do what the
// events say in order. Only the last part ends where the reader is (what a checkpoint records).
// The benchmark's exports never reach the figure before WindowCutter closes their windows: their
// windows are not split. What it does not see: events read but not folded yet (parts are written
// once the whole window is read; they are at most about a quarter of window_budget, since
// window_footprint counts an event's text four times). What the window's prior-state lookup
// learnt is the knowledge store's, spilled past its budget (Compiler::learn).
//
//   WindowParts parts(compiler);
//   parts.begin(window.size());
//   for (std::size_t i = 0; i < window.size(); ++i) {
//     if (std::optional<NetWindow> part = parts.add(window, i)) write(*part);  // events before i
//   }
//   write(parts.end(window));  // the rest
class WindowParts {
 public:
  explicit WindowParts(Compiler& compiler) : compiler_(compiler) {}
  // Starts a window; `expected_events` sizes its indexes.
  void begin(std::size_t expected_events);
  // Folds window[i], the next event (0 after begin()). `window` holds at least its first i + 1
  // events, where they stay until the window is written. Returns the part that ended before
  // window[i], if the one before it was full.
  std::optional<NetWindow> add(std::span<const Event> window, std::size_t i);
  // The last part: window[first event of the part, end of `window`).
  NetWindow end(std::span<const Event> window);
  // Whether the current part is full: the next add() ends it.
  bool full() const { return full_; }
  // Parts that ended before the end of their window, in this run.
  std::uint64_t parts_split() const { return split_; }

 private:
  Compiler& compiler_;
  std::size_t expected_ = 0;
  std::size_t first_ = 0;        // the current part's first event in the window
  std::size_t event_bytes_ = 0;  // of the window's events folded so far
  bool full_ = false;            // the current part reached window_budget
  std::uint64_t split_ = 0;
};

// A window's knowledge snapshot (Compiler::knowledge_snapshot's bytes), written out an entry at a
// time rather than held: it is the state of every entity the window folds, as stored in the
// tables, and may be many times the memory budget (10,000 updates of entities with 20 KB of
// stored props: 200 MB). Each size() and write() reads the knowledge again (spilled entries from
// the spill file), so the compiler must not fold in between.
//
//   KnowledgeSnapshot snapshot(compiler, window);
//   write_header(snapshot.size());                                  // the bytes write() gives
//   snapshot.write([&](std::string_view bytes) { append(bytes); });
class KnowledgeSnapshot {
 public:
  KnowledgeSnapshot(Compiler& compiler, std::span<const Event> window)
      : compiler_(compiler), window_(window) {}
  std::size_t size() const;
  void write(const std::function<void(std::string_view)>& out) const;
  std::string str() const { return compiler_.knowledge_snapshot(window_); }

 private:
  Compiler& compiler_;
  std::span<const Event> window_;
};

// A knowledge snapshot (knowledge_snapshot's bytes) kept in a file and read an entry at a time,
// not held: FILE.window of a resumed run holds what was known of every entity of the window it
// stopped in, which may be many times the memory budget (10,000 entities with 20 KB of stored
// props: 200 MB). It holds the file open, so a rename over its path (the checkpoint replacing
// FILE.window) changes nothing it reads, and an index of 32 bytes per entry.
//
//   SnapshotFile s("ck.window", 120, 200'000'000);  // bytes [120, 120 + 200 MB): read through
//                                                   // once, every entry checked, then indexed
//   std::size_t i = s.find(guid);                   // binary search of the index, no I/O
//   s.read_knowledge(i, bytes);                     // one pread of that entry
//   s.write([&](std::string_view part) { ... });    // the snapshot's bytes, a MiB at a time
class SnapshotFile {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  // Throws Error(kCheckpoint) if the bytes are not of knowledge_snapshot's form (entries in
  // ascending guid order, each one's knowledge decoded when `check`), or cannot be read.
  SnapshotFile(const std::string& path, std::uint64_t offset, std::uint64_t size,
               bool check = true);
  // The same, of bytes held in memory (Compiler::assume(std::string_view), tests).
  explicit SnapshotFile(std::string bytes);
  ~SnapshotFile();
  SnapshotFile(const SnapshotFile&) = delete;
  SnapshotFile& operator=(const SnapshotFile&) = delete;

  std::size_t entries() const { return slots_.size(); }
  std::uint64_t size() const { return size_; }
  const Guid& guid(std::size_t i) const { return slots_[i].guid; }
  // The bytes entry i takes in the snapshot: guid, length and knowledge.
  std::uint64_t entry_size(std::size_t i) const { return slots_[i].size; }
  // The entry of `guid`, or npos.
  std::size_t find(const Guid& guid) const;
  // Entry i's knowledge bytes (decode_knowledge's input), or the whole entry (what
  // knowledge_snapshot writes for it). Throws Error(kIo) naming the file if it cannot be read.
  void read_knowledge(std::size_t i, std::string& out) const;
  void read_entry(std::size_t i, std::string& out) const;
  // The snapshot's bytes, handed to `out` in pieces of at most a MiB.
  void write(const std::function<void(std::string_view)>& out) const;
  // The snapshot's entries but those `dropped` marks (entry i when dropped[i]; none past its
  // end), an entry at a time, and the bytes they take.
  void write_without(const std::vector<bool>& dropped,
                     const std::function<void(std::string_view)>& out) const;
  std::uint64_t size_without(const std::vector<bool>& dropped) const;
  // All of it in one string (tests, small snapshots).
  std::string str() const;

 private:
  struct Slot {
    Guid guid;
    std::uint64_t offset = 0;  // of the entry, from the snapshot's first byte
    std::uint32_t size = 0;    // of the whole entry
    std::uint32_t header = 0;  // of its guid and length: the knowledge follows
  };
  void read(std::uint64_t offset, std::size_t size, std::string& out) const;
  void index(bool check);

  std::string path_;
  int fd_ = -1;
  std::string bytes_;  // the in-memory form's bytes
  std::uint64_t base_ = 0;
  std::uint64_t size_ = 0;
  std::vector<Slot> slots_;
};

// Both snapshots' entries, `earlier`'s where both name an entity, an entry at a time
// (merge_knowledge_snapshots of a SnapshotFile and entries handed over in ascending order, by
// KnowledgeSnapshot::write say). Entries of `earlier` that `dropped` marks (as write_without) are
// left out, as if it did not hold them. Each size() and write() goes through `later` once again.
//   MergedSnapshot merged(assumed, folded, [&](const auto& out) { snapshot.write(out); });
//   write_header(merged.size());
//   merged.write(append);
class MergedSnapshot {
 public:
  using Entries = std::function<void(const std::function<void(std::string_view)>&)>;
  MergedSnapshot(const SnapshotFile& earlier, const std::vector<bool>& dropped, Entries later)
      : earlier_(earlier), dropped_(dropped), later_(std::move(later)) {}
  // The bytes write() hands over; `later_guids`, if given, gets the guids of `later`'s entries.
  std::uint64_t size(std::vector<Guid>* later_guids = nullptr) const;
  void write(const std::function<void(std::string_view)>& out) const;

 private:
  // Calls `each` with every merged entry's index in `earlier_` (npos when it is later's) and,
  // for later's, its bytes.
  void merge(const std::function<void(std::size_t, std::string_view)>& each,
             std::vector<Guid>* later_guids = nullptr) const;
  const SnapshotFile& earlier_;
  const std::vector<bool>& dropped_;
  Entries later_;
};

// Both snapshots' entries, `earlier`'s where both name an entity (each holds the state before the
// same window, so they agree there). Throws Error(kCheckpoint) on bytes not of that form.
std::string merge_knowledge_snapshots(std::string_view earlier, std::string_view later);

// ---------------------------------------------------------------------------------------------
// SQL

// One row of an UPSERT: where its tuple "(...)" lies in Statement::sql, and the row of the
// window it writes: the index, in the NetWindow vector of the statement's table (as the planner
// sorted it), of that row.
struct StatementRow {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  std::uint32_t net_row = 0;
};

// One SQL statement, ready to send or print. `sql` has no trailing ";" or newline.
struct Statement {
  std::string table;  // unqualified projection table name, e.g. "entity_flat"
  std::string sql;
  std::size_t rows = 0;  // rows named (UPSERT) or keys listed (DELETE; with a CASE, the pairs it
                         // accepts), for reporting
  // UPSERTs: the rows, in order. Empty for DELETEs, which name keys only and are never split.
  std::vector<StatementRow> row_spans;
  // Runs only after every other statement of its phase has run (CompiledWindow): entity_flat's.
  bool after_the_rest = false;

  // Only with CompileOptions::annotate (compile --annotate), otherwise empty:
  // a DELETE's keys as rows of the window (indexes, in the NetWindow vector of `table`, of the
  // rows it deletes by key) and the entities whose rows it deletes by predicate (clean-ups, edge
  // cascades, guarded by_qn deletes); and the one comment line, without "-- ", that
  // compile/annotate.h writes from them and the row_spans, printed before the statement:
  //   "entity_flat: 3 rows from 5 events, a.jsonl:12 .. a.jsonl:40"
  std::vector<std::uint32_t> deleted_rows{};
  std::vector<Guid> deleted_entities{};
  std::string annotation{};

  // The same statement over rows [first, last) only: the planner's text before the first row,
  // those rows joined by its separator, and its text after the last row; what the planner writes
  // for those rows alone. Lets an executor isolate the rows a server refuses by running parts.
  //   s.sql == "UPSERT INTO `atlas`.`t` (`k`) VALUES\n('a'),\n('b'),\n('c')"
  //   s.part(1, 3).sql == "UPSERT INTO `atlas`.`t` (`k`) VALUES\n('b'),\n('c')"
  // Throws Error(kInternal) without row_spans or for an empty or out-of-range part.
  Statement part(std::size_t first, std::size_t last) const;
};

// The statements of one window. Windows run in order; within a window every delete runs before
// any upsert; the upserts of one phase never name the same row twice and deletes commute (two
// deletes may name the same row: a guarded by_qn delete can repeat a keyed one's key), so the
// statements of a phase may run in any order or concurrently, except that those marked
// after_the_rest (entity_flat's, which the planner puts at the end of each phase) start only once
// all the others of their phase have succeeded. entity_flat is what the prior state reads back:
// when a window is applied again after a failure part way through it, each entity must read as it
// was before the window, or with every other row the window writes for it already in place. Worked
// example: an event changes an entity's type from DataSet to hive_table without naming its
// qualifiedName; the window re-keys its entity_by_qn row under the new type with the qualifiedName
// entity_flat holds. Had entity_flat's upsert run first and the entity_by_qn upsert failed, the
// rerun would read the new type back, see no change, and never write the entity_by_qn row.
struct CompiledWindow {
  std::uint64_t index = 0;        // 1-based
  std::uint64_t first_event = 0;  // 1-based event numbers covered, inclusive
  std::uint64_t last_event = 0;
  std::string span;     // WindowInfo::span
  std::string comment;  // one line, without "-- "
  std::vector<Statement> deletes;
  std::vector<Statement> upserts;
};

// How every message names a statement of a window's "delete" or "upsert" phase (position 1-based):
//   "window 2 (events 4-6; in.json:4 .. in.json:6), upsert phase, statement 3 of 5 (table
//   entity_flat)"
// `before`: the statement a stop came before, nothing of it sent ("..., upsert phase, before
// statement 3 of 5 ..."): the window's earlier statements may have run.
std::string statement_name(const CompiledWindow& window, std::string_view phase,
                           std::size_t position, const Statement& statement, bool before = false);

// Steps 1-3, then plans the window into statements (compile/plan.h).
CompiledWindow compile_window(Compiler& compiler, PriorState& prior, std::span<const Event> window);

// Compiles `events` (in input order) with `options` and returns the complete dry-run script:
// header comment, then per window a comment, the delete phase and the upsert phase, each statement
// ending in ";\n". Windows are cut as the pipeline cuts them (WindowCutter). Byte-identical for
// the same events and options. Uses NoPriorState; throws
// Error(kUsage) if options.prior is kImpala (no connection here).
std::string compile_to_sql(std::span<const Event> events, const CompileOptions& options);

}  // namespace atlas2kudu
