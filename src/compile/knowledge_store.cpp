#include "compile/knowledge_store.h"

#include <fmt/core.h>
#include <lmdb.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "atlas2kudu/error.h"

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
  [[noreturn]] static void corrupt() {
    throw Error(ErrorCategory::kInternal, "corrupt entity knowledge record in the spill file");
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
    put_varint(out, k.props.members.size());
    for (const auto& [key, value] : k.props.members) {
      put_text(out, key);
      put_text(out, value);
    }
    put_varint(out, k.props.truncated.size());
    for (const std::string& key : k.props.truncated) put_text(out, key);
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
    if (v > static_cast<unsigned>(Cell::kValue)) {
      throw Error(ErrorCategory::kInternal, "corrupt entity knowledge record in the spill file");
    }
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
  k.props.members.resize(k.props_known ? in.varint() : 0);
  for (auto& [key, value] : k.props.members) {
    key.assign(in.text());
    value.assign(in.text());
  }
  k.props.truncated.resize(k.props_known ? in.varint() : 0);
  for (std::string& key : k.props.truncated) key.assign(in.text());
  k.tags_known = flags & kTagsKnown;
  k.tags.resize(k.tags_known ? in.varint() : 0);
  for (std::string& tag : k.tags) tag.assign(in.text());
  if (!in.done()) {
    throw Error(ErrorCategory::kInternal, "corrupt entity knowledge record in the spill file");
  }
}

// ---------------------------------------------------------------------------------------------
// The spill file

// One LMDB environment in a single file, keyed by the 16 guid bytes. Single-threaded, no lock
// file, no fsync (the file dies with the process). Writes are sorted and committed in chunks, so
// that the dirty pages of a write transaction stay a few MiB; pages read through the memory map
// are given back to the kernel after every chunk of reads and writes.
class SpillFile {
 public:
  explicit SpillFile(const std::string& parent) {
    std::string dir = (parent.empty() ? default_parent() : parent) + "/atlas2kudu-spill-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr)
      fail_errno(fmt::format("cannot create a directory in {}",
                             parent.empty() ? default_parent() : parent));
    const std::string file = dir + "/knowledge.mdb";
    int rc = mdb_env_create(&env_);
    // Address space only (the file grows as it is written): 1 TiB is more than any backfill.
    if (rc == 0) rc = mdb_env_set_mapsize(env_, std::size_t{1} << 40);
    if (rc == 0) {
      rc = mdb_env_open(env_, file.c_str(),
                        MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOSYNC | MDB_NOMETASYNC | MDB_NORDAHEAD,
                        0600);
    }
    // Unlinked at once: the open file lives until the process ends, whichever way it ends.
    ::unlink(file.c_str());
    ::unlink((file + "-lock").c_str());
    ::rmdir(dir.c_str());
    if (rc == 0) {
      MDB_txn* txn = nullptr;
      rc = mdb_txn_begin(env_, nullptr, 0, &txn);
      if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &dbi_);
      if (rc == 0) {
        rc = mdb_txn_commit(txn);
      } else if (txn != nullptr) {
        mdb_txn_abort(txn);
      }
    }
    if (rc != 0) {
      if (env_) mdb_env_close(env_);  // the destructor does not run for a throwing constructor
      env_ = nullptr;
      fail(rc, fmt::format("cannot create the knowledge spill file in {}", dir));
    }
    find_map();
  }

  ~SpillFile() {
    end_reads();
    if (env_) mdb_env_close(env_);
  }

  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  // The stored bytes of `guid` into `out`; false if absent.
  bool get(const Guid& guid, std::string& out) {
    if (!written_.may_contain(guid)) return false;  // most misses never reach LMDB
    if (!read_) {
      const int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &read_);
      if (rc != 0) fail(rc, "cannot read the knowledge spill file");
    }
    MDB_val key{guid.bytes.size(), const_cast<std::uint8_t*>(guid.bytes.data())};
    MDB_val value{};
    const int rc = mdb_get(read_, dbi_, &key, &value);
    if (rc != 0 && rc != MDB_NOTFOUND) fail(rc, "cannot read the knowledge spill file");
    if (rc == 0) out.assign(static_cast<const char*>(value.mv_data), value.mv_size);
    // A miss reads pages of the tree too.
    if (++reads_since_release_ >= kReleaseEvery) release_pages();
    return rc == 0;
  }

  // Writes `entries` (sorted by guid: neighbouring keys share pages).
  void put(std::vector<std::pair<Guid, std::string>>& entries) {
    end_reads();
    for (const auto& [guid, bytes] : entries) written_.add(guid);
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < entries.size();) {
      MDB_txn* txn = nullptr;
      int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
      const std::size_t end = std::min(entries.size(), i + kPutsPerCommit);
      for (; rc == 0 && i < end; ++i) {
        MDB_val key{entries[i].first.bytes.size(), entries[i].first.bytes.data()};
        MDB_val value{entries[i].second.size(), entries[i].second.data()};
        rc = mdb_put(txn, dbi_, &key, &value, 0);
        if (++reads_since_release_ >= kReleaseEvery) release_pages();
      }
      if (rc == 0) {
        rc = mdb_txn_commit(txn);
      } else {
        mdb_txn_abort(txn);
      }
      if (rc != 0) fail(rc, "cannot write the knowledge spill file");
      release_pages();
    }
  }

  std::uint64_t entries() {
    MDB_stat st{};
    if (mdb_env_stat(env_, &st) != 0) return 0;
    return st.ms_entries;
  }

 private:
  // Measured at 1 and 4 GiB exports: a page fault maps up to 16 cached pages around the page
  // LMDB reads (the kernel's fault-around), so 1,024 lookups between releases held up to 90 MiB,
  // 256 up to 24 MiB at 1 GiB but 35 MiB at 4 GiB (a bigger tree); releasing every 128 lookups
  // or puts, commits of 256 sorted puts, keep it about the same at both sizes.
  static constexpr std::size_t kPutsPerCommit = 256;
  static constexpr std::size_t kReleaseEvery = 128;

  static std::string default_parent() {
    const char* tmp = std::getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
  }

  void end_reads() {
    if (read_) {
      mdb_txn_abort(read_);
      read_ = nullptr;
    }
  }

  // LMDB reads through a shared, read-only file mapping; the pages it touches count as resident
  // memory until the kernel reclaims them. Dropping them from our page tables (they stay in the
  // page cache) keeps the spill file out of the process's memory. Safe at any time: the mapping
  // is never written through, so a page touched again is simply faulted in from the cache.
  void release_pages() {
    reads_since_release_ = 0;
    if (map_ == nullptr) return;
    struct stat st {};
    mdb_filehandle_t fd = -1;
    std::size_t used = map_size_;
    if (mdb_env_get_fd(env_, &fd) == 0 && ::fstat(fd, &st) == 0) {
      used = std::min(map_size_, static_cast<std::size_t>(st.st_size));
    }
    ::madvise(map_, used, MADV_DONTNEED);
  }

  // Finds LMDB's mapping of our file in /proc/self/maps (by inode): LMDB does not tell where it
  // mapped the file unless it was asked for a fixed address.
  void find_map() {
    mdb_filehandle_t fd = -1;
    struct stat st {};
    if (mdb_env_get_fd(env_, &fd) != 0 || ::fstat(fd, &st) != 0) return;
    std::FILE* maps = std::fopen("/proc/self/maps", "r");
    if (maps == nullptr) return;
    char line[512];
    while (std::fgets(line, sizeof line, maps)) {
      unsigned long start = 0, end = 0, offset = 0, inode = 0;
      unsigned major = 0, minor = 0;
      char perms[8] = {};
      if (std::sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &start, &end, perms, &offset, &major,
                      &minor, &inode) == 7 &&
          inode == st.st_ino && offset == 0 && end - start > map_size_) {
        map_ = reinterpret_cast<void*>(start);
        map_size_ = end - start;
      }
    }
    std::fclose(maps);
  }

  [[noreturn]] static void fail_errno(const std::string& what) {
    throw Error(ErrorCategory::kIo,
                fmt::format("{}: {}; set --spill-dir to a writable directory with free space, or "
                            "raise --memory-budget",
                            what, std::strerror(errno)));
  }
  [[noreturn]] static void fail(int rc, const std::string& what) {
    throw Error(ErrorCategory::kIo,
                fmt::format("{}: {}; set --spill-dir to a directory with free space, or raise "
                            "--memory-budget",
                            what, mdb_strerror(rc)));
  }

  // Guids ever written: a Bloom filter of fixed size (4 MiB, 4 probes), so that looking up an
  // entity never spilled (every new entity, with --prior none) costs no B-tree descent. Its
  // false positives only cost a lookup: about 1% at 3 million spilled entities, more beyond.
  class Written {
   public:
    Written() : bits_(kBits / 64) {}
    void add(const Guid& g) {
      for (const std::uint64_t bit : probes(g)) bits_[bit / 64] |= std::uint64_t{1} << (bit % 64);
    }
    bool may_contain(const Guid& g) const {
      for (const std::uint64_t bit : probes(g)) {
        if (!(bits_[bit / 64] & (std::uint64_t{1} << (bit % 64)))) return false;
      }
      return true;
    }

   private:
    static constexpr std::uint64_t kBits = std::uint64_t{32} << 20;
    static std::array<std::uint64_t, 4> probes(const Guid& g) {
      // Keyed (util/keyed_hash.h), so that crafted guids cannot make every lookup a false positive.
      const std::uint64_t h1 = GuidHash()(g);
      const std::uint64_t h2 = ((h1 >> 32) | (h1 << 32)) * 0xbf58476d1ce4e5b9ULL | 1;
      return {h1 % kBits, (h1 + h2) % kBits, (h1 + 2 * h2) % kBits, (h1 + 3 * h2) % kBits};
    }
    std::vector<std::uint64_t> bits_;
  };

  Written written_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  MDB_txn* read_ = nullptr;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  std::size_t reads_since_release_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The store

KnowledgeStore::KnowledgeStore(const CompileOptions& options)
    : budget_(options.knowledge_budget), policy_(options.evicted), spill_dir_(options.spill_dir) {}

KnowledgeStore::~KnowledgeStore() = default;

std::size_t KnowledgeStore::footprint(const EntityKnowledge& k) {
  // The hash node (key, entry, next pointer, cached hash, malloc header) and its bucket, then the
  // heap blocks of strings too long for their inline buffer and of the vectors.
  constexpr std::size_t kMalloc = 16;
  constexpr std::size_t kNode = sizeof(Guid) + sizeof(Entry) + 2 * sizeof(void*) + kMalloc;
  const auto text = [](const std::string& s) {
    return s.capacity() > 15 ? s.capacity() + 1 + kMalloc : 0;
  };
  const auto array = [](const auto& v) {
    return v.capacity() ? v.capacity() * sizeof(v[0]) + kMalloc : 0;
  };
  std::size_t n = kNode + sizeof(void*) + text(k.type_name) + text(k.qualified_name);
  n += array(k.props.members) + array(k.props.truncated) + array(k.tags);
  for (const auto& [key, value] : k.props.members) n += text(key) + text(value);
  for (const std::string& key : k.props.truncated) n += text(key);
  for (const std::string& tag : k.tags) n += text(tag);
  return n;
}

void KnowledgeStore::unlink(Entry& e) {
  (e.prev ? e.prev->next : lru_front_) = e.next;
  (e.next ? e.next->prev : lru_back_) = e.prev;
  e.prev = e.next = nullptr;
  e.linked = false;
}

KnowledgeStore::Entry& KnowledgeStore::touch(Entry& e) {
  if (!e.touched) {
    e.touched = true;
    e.window = window_;
    touched_.push_back(&e);
  }
  return e;
}

KnowledgeStore::Map::iterator KnowledgeStore::bring_back(const Guid& guid) {
  auto it = entries_.find(guid);
  if (it != entries_.end() || !spill_) return it;
  if (!spill_->get(guid, scratch_)) return entries_.end();
  ++stats_.spill_reads;
  it = entries_.try_emplace(guid).first;
  it->second.guid = guid;
  decode_knowledge(scratch_, it->second.knowledge);
  touch(it->second);
  return it;
}

bool KnowledgeStore::contains(const Guid& guid) {
  return bring_back(guid) != entries_.end();
}

EntityKnowledge& KnowledgeStore::get(const Guid& guid) {
  auto it = bring_back(guid);
  if (it == entries_.end()) {
    it = entries_.try_emplace(guid).first;
    it->second.guid = guid;
  }
  return touch(it->second).knowledge;
}

bool KnowledgeStore::load(const Guid& guid, EntityKnowledge& out) {
  const auto it = bring_back(guid);
  if (it == entries_.end()) {
    out = EntityKnowledge{};
    return false;
  }
  out = touch(it->second).knowledge;
  return true;
}

void KnowledgeStore::end_window() {
  for (Entry* e : touched_) {
    bytes_ -= e->bytes;
    e->bytes = static_cast<std::uint32_t>(footprint(e->knowledge));
    bytes_ += e->bytes;
    e->touched = false;
    // To the back of the recency list, in the order the window first touched them.
    if (e->linked) unlink(*e);
    e->prev = lru_back_;
    e->next = nullptr;
    (lru_back_ ? lru_back_->next : lru_front_) = e;
    lru_back_ = e;
    e->linked = true;
  }
  touched_.clear();
  // The next window will add about what this one did (new entities, entries brought back) before
  // anything can be evicted again: make room for that, so the peak stays within the budget.
  const std::size_t growth = bytes_ > bytes_after_eviction_ ? bytes_ - bytes_after_eviction_ : 0;
  if (bytes_ + growth > budget_) evict(budget_ > growth ? (budget_ - growth) / 8 * 7 : 0);
  bytes_after_eviction_ = bytes_;
  ++window_;
  stats_.entries = entries_.size();
  stats_.memory_bytes = bytes_;
}

void KnowledgeStore::evict(std::size_t target) {
  // Least recently touched first (the front of the list), down to `target`.
  std::vector<std::pair<Guid, std::string>> spill;
  std::size_t evicted = 0;
  while (bytes_ > target && lru_front_ != nullptr) {
    Entry* e = lru_front_;
    unlink(*e);
    bytes_ -= e->bytes;
    const Guid guid = e->guid;
    if (policy_ == EvictedKnowledge::kSpill) {
      spill.emplace_back(guid, std::string());
      encode_knowledge(e->knowledge, spill.back().second);
    }
    entries_.erase(guid);
    ++evicted;
  }
  stats_.evicted += evicted;
  if (!spill.empty()) {
    if (!spill_) spill_ = std::make_unique<SpillFile>(spill_dir_);
    spill_->put(spill);
    stats_.spilled += spill.size();
    stats_.spill_entries = spill_->entries();
  }
}

}  // namespace atlas2kudu
