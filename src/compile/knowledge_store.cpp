#include "compile/knowledge_store.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "atlas2kudu/error.h"
#include "compile/spill_store.h"
#include "util/digest.h"

namespace atlas2kudu {

// ---------------------------------------------------------------------------------------------
// The byte form

namespace {

using Cell = EntityKnowledge::Cell;

enum Flag : std::uint8_t {
  kDigestValid = 1 << 4,
  kPropsKnown = 1 << 5,
  kTagsKnown = 1 << 6,
};

void put_varint(std::string& out, std::size_t n) {
  while (n >= 0x80) {
    out.push_back(static_cast<char>((n & 0x7F) | 0x80));
    n >>= 7;
  }
  out.push_back(static_cast<char>(n));
}

void put_text(std::string& out, std::string_view text) {
  put_varint(out, text.size());
  out.append(text);
}

[[noreturn]] void corrupt() {
  throw Error(ErrorCategory::kInternal, "corrupt entity knowledge record in the spill file");
}

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : p_(bytes.data()), end_(p_ + bytes.size()) {}

  std::uint8_t byte() {
    need(1);
    return static_cast<std::uint8_t>(*p_++);
  }
  std::size_t varint() {
    std::size_t n = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = byte();
      n |= static_cast<std::size_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return n;
    }
    corrupt();
  }
  // A number of items that take at least `min_bytes` each: never more than the bytes left could
  // hold, so that a corrupt count cannot make a caller allocate for it (a count of 2^40 members).
  std::size_t count(std::size_t min_bytes) {
    const std::size_t n = varint();
    if (n > static_cast<std::size_t>(end_ - p_) / min_bytes) corrupt();
    return n;
  }
  std::string_view text() {
    const std::size_t n = varint();
    need(n);
    const std::string_view s(p_, n);
    p_ += n;
    return s;
  }
  void bytes(std::uint8_t* out, std::size_t n) {
    need(n);
    std::memcpy(out, p_, n);
    p_ += n;
  }
  bool done() const { return p_ == end_; }

 private:
  void need(std::size_t n) const {
    if (static_cast<std::size_t>(end_ - p_) < n) corrupt();
  }
  const char* p_;
  const char* end_;
};

}  // namespace

void encode_knowledge(const EntityKnowledge& k, std::string& out) {
  out.clear();
  std::uint8_t flags = static_cast<std::uint8_t>(k.type_state) |
                       static_cast<std::uint8_t>(static_cast<std::uint8_t>(k.qn_state) << 2);
  if (k.digest_valid) flags |= kDigestValid;
  if (k.props_known) flags |= kPropsKnown;
  if (k.tags_known) flags |= kTagsKnown;
  out.push_back(static_cast<char>(flags));
  put_text(out, k.type_name);
  put_text(out, k.qualified_name);
  if (k.digest_valid) out.append(reinterpret_cast<const char*>(k.digest.data()), k.digest.size());
  if (k.props_known) {
    const Props& p = k.props;
    put_text(out, p.json_);
    put_varint(out, p.members_.size());
    for (const Props::Member& m : p.members_) {
      put_varint(out, m.begin);
      put_varint(out, m.value_begin - m.begin);
      put_varint(out, m.value_end - m.value_begin);
      put_varint(out, m.escaped_at == Props::kPlainKey ? 0 : std::size_t{m.escaped_at} + 1);
    }
    put_text(out, p.escaped_keys_);
    put_varint(out, p.truncated_.size());
    for (const std::string& key : p.truncated_) put_text(out, key);
  }
  if (k.tags_known) {
    put_varint(out, k.tags.size());
    for (const std::string& tag : k.tags) put_text(out, tag);
  }
}

void decode_knowledge(std::string_view bytes, EntityKnowledge& k) {
  ByteReader in(bytes);
  const std::uint8_t flags = in.byte();
  const auto cell = [](unsigned v) {
    if (v > static_cast<unsigned>(Cell::kValue)) corrupt();
    return static_cast<Cell>(v);
  };
  k.type_state = cell(flags & 3);
  k.qn_state = cell((flags >> 2) & 3);
  k.type_name.assign(in.text());
  k.qualified_name.assign(in.text());
  k.digest_valid = flags & kDigestValid;
  k.digest = {};
  if (k.digest_valid) in.bytes(k.digest.data(), k.digest.size());
  k.props_known = flags & kPropsKnown;
  Props& p = k.props;
  p = Props{};
  if (k.props_known) {
    p.json_.assign(in.text());
    p.members_.resize(in.count(4));  // four varints each
    // Offsets checked against the text, so that a corrupt record cannot read outside it.
    std::size_t end = 1;
    for (Props::Member& m : p.members_) {
      const std::size_t begin = in.varint();
      const std::size_t key_bytes = in.varint();  // "key":
      const std::size_t value_bytes = in.varint();
      const std::size_t escaped_at = in.varint();
      const std::size_t size = p.json_.size();
      if (begin < end || begin > size || key_bytes < 3 || key_bytes > size - begin ||
          value_bytes > size - begin - key_bytes ||
          escaped_at > std::numeric_limits<std::uint32_t>::max()) {
        corrupt();
      }
      m = {static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(begin + key_bytes),
           static_cast<std::uint32_t>(begin + key_bytes + value_bytes),
           escaped_at ? static_cast<std::uint32_t>(escaped_at - 1) : Props::kPlainKey};
      end = m.value_end;
    }
    p.escaped_keys_.assign(in.text());
    for (const Props::Member& m : p.members_) {
      if (m.escaped_at == Props::kPlainKey) continue;
      std::uint32_t size = 0;
      if (std::size_t{m.escaped_at} + sizeof size > p.escaped_keys_.size()) corrupt();
      std::memcpy(&size, p.escaped_keys_.data() + m.escaped_at, sizeof size);
      if (p.escaped_keys_.size() - m.escaped_at - sizeof size < size) corrupt();
    }
    p.truncated_.resize(in.count(1));
    for (std::string& key : p.truncated_) key.assign(in.text());
  }
  k.tags_known = flags & kTagsKnown;
  k.tags.resize(k.tags_known ? in.count(1) : 0);
  for (std::string& tag : k.tags) tag.assign(in.text());
  if (!in.done()) corrupt();
}

bool is_foldable(const EntityKnowledge& k) {
  const bool type_known = k.type_state == Cell::kValue;
  const bool qn_known = k.qn_state == Cell::kValue;
  if ((!type_known && !k.type_name.empty()) || (!qn_known && !k.qualified_name.empty())) {
    return false;
  }
  if (k.digest_valid &&
      (!type_known || !qn_known || k.digest != qn_digest(k.type_name, k.qualified_name))) {
    return false;
  }
  if (std::adjacent_find(k.tags.begin(), k.tags.end(), std::greater_equal<>()) != k.tags.end()) {
    return false;
  }
  return !k.props_known || matches_its_text(k.props);
}

void append_snapshot_entry(std::string& out, const Guid& guid, std::string_view knowledge) {
  out.append(reinterpret_cast<const char*>(guid.bytes.data()), guid.bytes.size());
  put_text(out, knowledge);
}

void append_snapshot_entry(std::string& out, const Guid& guid, const EntityKnowledge& k) {
  thread_local std::string bytes;
  encode_knowledge(k, bytes);
  append_snapshot_entry(out, guid, bytes);
}

std::size_t snapshot_entry_header(std::string_view bytes, Guid& guid, std::size_t& knowledge_size) {
  constexpr std::size_t kGuid = sizeof guid.bytes;
  if (bytes.size() <= kGuid) return 0;
  knowledge_size = 0;
  for (std::size_t i = 0; i < 10; ++i) {
    if (kGuid + i >= bytes.size()) return 0;
    const auto b = static_cast<std::uint8_t>(bytes[kGuid + i]);
    knowledge_size |= static_cast<std::size_t>(b & 0x7F) << (7 * i);
    if (!(b & 0x80)) {
      std::memcpy(guid.bytes.data(), bytes.data(), kGuid);
      return kGuid + i + 1;
    }
  }
  throw Error(ErrorCategory::kCheckpoint, "not a knowledge snapshot written by this version");
}

// ---------------------------------------------------------------------------------------------
// The entries

KnowledgeStore::Entries::~Entries() {
  index_.for_each([](Entry* e) { delete e; });
}

KnowledgeStore::Entry& KnowledgeStore::Entries::find_or_make(const Guid& guid, bool& made) {
  Entry* e = index_.find_or_make(
      guid.bytes.data(),
      [&] {
        auto fresh = std::make_unique<Entry>();
        fresh->guid = guid;
        return fresh.release();
      },
      made);
  return *e;
}

void KnowledgeStore::Entries::remove(Entry& e) {
  index_.erase(e.guid.bytes.data());
  delete &e;
}

// ---------------------------------------------------------------------------------------------
// The store

KnowledgeStore::KnowledgeStore(const CompileOptions& options)
    : budget_(options.knowledge_budget), policy_(options.evicted), spill_dir_(options.spill_dir) {}

KnowledgeStore::~KnowledgeStore() = default;

std::size_t KnowledgeStore::footprint(const EntityKnowledge& k) {
  // The entry's own allocation (the index is counted as a whole: end_window), then the heap
  // blocks of strings too long for their inline buffer and of the vectors.
  const auto text = [](const std::string& s) {
    return s.capacity() > 15 ? s.capacity() + 1 + kMallocHeader : 0;
  };
  const auto array = [](const auto& v) {
    return v.capacity() ? v.capacity() * sizeof(v[0]) + kMallocHeader : 0;
  };
  std::size_t n = Entries::kBytesPerEntry + text(k.type_name) + text(k.qualified_name);
  n += k.props.heap_bytes(kMallocHeader) + array(k.tags);
  for (const std::string& tag : k.tags) n += text(tag);
  return n;
}

void KnowledgeStore::count(Entry& e) {
  e.bytes = static_cast<std::uint32_t>(footprint(e.knowledge));
  bytes_ += e.bytes;
}

void KnowledgeStore::unlink(Entry& e) {
  (e.prev ? e.prev->next : lru_front_) = e.next;
  (e.next ? e.next->prev : lru_back_) = e.prev;
  e.prev = e.next = nullptr;
  e.linked = false;
}

void KnowledgeStore::link_at_back(Entry& e) {
  e.prev = lru_back_;
  e.next = nullptr;
  (lru_back_ ? lru_back_->next : lru_front_) = &e;
  lru_back_ = &e;
  e.linked = true;
}

KnowledgeStore::Entry& KnowledgeStore::touch(Entry& e) {
  if (!e.touched) {
    e.touched = true;
    e.window = window_;
    touched_.push_back(&e);
    // Out of the recency list until end_window(): what a window touched is never evicted before
    // it ends (make_room() evicts while it is being looked up).
    if (e.linked) unlink(e);
  }
  return e;
}

bool KnowledgeStore::read_spilled(const Guid& guid) {
  if (!spill_ || !spill_->get(guid, scratch_)) return false;
  ++stats_.spill_reads;
  return true;
}

std::uint64_t KnowledgeStore::spill_entries() {
  return spill_ ? spill_->entries() : 0;
}

std::size_t KnowledgeStore::assumed_entry(const Guid& guid) const {
  if (!assumed_) return SnapshotFile::npos;
  const std::size_t i = assumed_->find(guid);
  return i != SnapshotFile::npos && !taken_[i] ? i : SnapshotFile::npos;
}

bool KnowledgeStore::read_back(const Guid& guid, bool take) {
  if (read_spilled(guid)) return true;
  const std::size_t i = assumed_entry(guid);
  if (i == SnapshotFile::npos) return false;
  assumed_->read_knowledge(i, scratch_);
  ++stats_.window_file_reads;
  if (take) taken_[i] = true;  // in memory from now on, and evicted as any entry
  return true;
}

bool KnowledgeStore::contains(const Guid& guid) {
  return entries_.find(guid) != nullptr || (spill_ && spill_->contains(guid)) ||
         assumed_entry(guid) != SnapshotFile::npos;
}

EntityKnowledge& KnowledgeStore::get(const Guid& guid) {
  // One probe of the map whether the entry is in memory, spilled or new (most are new or in
  // memory): the entry is made first, then filled from the spill if it was evicted.
  bool made = false;
  Entry& e = entries_.find_or_make(guid, made);
  if (made && read_back(guid, true)) {
    decode_knowledge(scratch_, e.knowledge);
    count(e);
  }
  return touch(e).knowledge;
}

void KnowledgeStore::assume(std::shared_ptr<const SnapshotFile> snapshot) {
  if (assumed_) throw Error(ErrorCategory::kInternal, "knowledge assumed twice");
  taken_.assign(snapshot->entries(), false);
  // What the store knows already wins: those entries are as good as taken (contains() asks the
  // memory and the spill only, since assumed_ is not set yet).
  for (std::size_t i = 0; i < snapshot->entries(); ++i) taken_[i] = contains(snapshot->guid(i));
  assumed_ = std::move(snapshot);
}

void KnowledgeStore::learn(const Guid& guid, EntityKnowledge k) {
  bool made = false;
  Entry& e = entries_.find_or_make(guid, made);
  if (!made) {
    touch(e).knowledge = std::move(k);
    return;
  }
  e.knowledge = std::move(k);
  count(e);
  e.window = window_;
  link_at_back(e);
  stats_.entries = entries_.size();
}

std::size_t KnowledgeStore::room() const {
  // The index takes its part of the budget first.
  const std::size_t index = entries_.index_bytes();
  return budget_ > index ? budget_ - index : 0;
}

std::size_t KnowledgeStore::bytes_over_budget() const {
  const std::size_t room = this->room();
  return bytes_ > room ? bytes_ - room : 0;
}

void KnowledgeStore::make_room() {
  const std::size_t room = this->room();
  if (bytes_ > room) evict(room / 8 * 7, false);
  stats_.entries = entries_.size();
  stats_.memory_bytes = bytes_ + entries_.index_bytes();
}

bool KnowledgeStore::load(const Guid& guid, EntityKnowledge& out) {
  if (Entry* e = entries_.find(guid)) {
    out = touch(*e).knowledge;
    return true;
  }
  // A spilled or assumed entry is read, not brought back: a window's snapshot
  // (Compiler::knowledge_snapshot) looks at every entity it will fold, and what its lookups
  // spilled, or a resumed run assumed, would all come back at once.
  if (read_back(guid, false)) {
    decode_knowledge(scratch_, out);
    return true;
  }
  out = EntityKnowledge{};
  return false;
}

void KnowledgeStore::end_window(bool window_ends) {
  for (Entry* e : touched_) {
    bytes_ -= e->bytes;
    count(*e);
    e->touched = false;
    // To the back of the recency list, in the order the window first touched them.
    if (e->linked) unlink(*e);
    link_at_back(*e);
  }
  touched_.clear();
  // Under kLookUpAgain the window's end is where evicted entries may be forgotten: the tables
  // hold what it wrote once it has run, before the next window is looked up. What was spilled
  // while it was looked up and folded goes with it.
  const bool forget = window_ends && policy_ == EvictedKnowledge::kLookUpAgain;
  if (forget) spill_.reset();
  // The next window will add about what this one did (new entities, entries brought back) before
  // anything can be evicted again: make room for that, so the peak stays within the budget.
  const std::size_t growth = bytes_ > bytes_after_eviction_ ? bytes_ - bytes_after_eviction_ : 0;
  const std::size_t room = this->room();
  if (bytes_ + growth > room) evict(room > growth ? (room - growth) / 8 * 7 : 0, forget);
  bytes_after_eviction_ = bytes_;
  ++window_;
  stats_.entries = entries_.size();
  stats_.memory_bytes = bytes_ + entries_.index_bytes();
}

void KnowledgeStore::evict(std::size_t target, bool forget) {
  // Least recently touched first (the front of the list), down to `target`.
  std::vector<std::pair<Guid, std::string>> spill;
  std::size_t spill_bytes = 0;
  const auto write_spill = [&] {
    if (spill.empty()) return;
    if (!spill_) {
      spill_ = std::make_unique<SpillStore>(spill_dir_, nullptr,
                                            SpillStore::pending_entries_for(budget_));
    }
    spill_->put(spill);
    stats_.spilled += spill.size();
    spill.clear();
    spill_bytes = 0;
  };
  std::string encoded;
  std::size_t evicted = 0;
  while (bytes_ > target && lru_front_ != nullptr) {
    Entry* e = lru_front_;
    unlink(*e);
    bytes_ -= e->bytes;
    if (!forget) {
      // Encoded in one string, then copied at its exact size: a string grown by appending holds
      // up to twice its bytes (an eviction of 3,290 entries of 20 KB held 36 MB more than the
      // entries it freed).
      encode_knowledge(e->knowledge, encoded);
      spill_bytes += encoded.size();
      spill.emplace_back(e->guid, encoded);
    }
    entries_.remove(*e);
    ++evicted;
    // Written every few MiB, not once at the end: the encoded entries do not fit the blocks the
    // entries freed (a 40 KB string where forty 1 KB tags were), so an eviction that held them all
    // took that many more pages (2,500 entries of 40 KB of tags: the resident set grew by 90 MB
    // while the memory in use stayed flat). Each chunk reuses the pages of the one before.
    if (spill_bytes >= kEvictionChunkBytes) write_spill();
  }
  stats_.evicted += evicted;
  write_spill();
}

}  // namespace atlas2kudu
