// The on-disk store for knowledge evicted past the memory budget (compile/knowledge_store.h): a
// map from guid to bytes that costs a few system calls per read whatever its size, writes
// sequentially, and keeps none of its data in the process's memory.
//
// Two unlinked files in a fresh directory under the spill directory:
//   - the log: records appended in the order they are written, each
//       guid (16 bytes) | length (4 bytes, little-endian) | bytes
//     A guid written again gets a new record; the old one stays as garbage (a temporary file: the
//     space is released when the store is closed).
//   - the index: an open-addressing hash table of 2^k buckets of four 24-byte slots,
//       guid (16 bytes) | location (8 bytes: (log offset + 1) << 16 | min(length, 0xFFFF))
//     where location 0 marks an empty slot. A guid's home bucket is the top k bits of its keyed
//     hash; it sits there or in one of the kMaxProbe - 1 buckets after it (no wrap-around: the
//     file has kMaxProbe - 1 buckets past the last home). When the table would be over 70% full,
//     or a guid finds no free slot within reach, the table doubles: since a home of k + 1 bits is
//     2h or 2h + 1 for a home h of k bits, the new table is written front to back in one pass
//     over the old one, holding a few MiB.
//
// put() takes a batch (one eviction) and appends its records to the log. Their index entries wait
// in memory, sorted by hash, until enough have gathered (several batches, up to 8 MiB:
// pending_entries_for); then they are written in home order, a chunk of buckets at a time where
// several fall in it (one read and one write of the chunk) and slot by slot elsewhere. An eviction
// batch touches nearly every chunk of the index: writing each batch's entries on its own rewrote
// the whole index every time (bench/RESULTS.md, part five). A read looks in the pending entries
// first (a binary search), then reads the home bucket and the next, then the record.
//
// Why not a B-tree (LMDB, which this replaced; bench/RESULTS.md): every put of a ~250-byte entry
// under a random guid rewrote a 4 KiB leaf page and the branch pages above it, and reads faulted
// pages of the map into the process.
//
// A Bloom filter of the guids ever put (4 MiB) answers most reads of a guid never put (every new
// entity asks) without touching the files.
//
//   SpillStore store(dir);                        // creates and unlinks the files
//   store.put({{g1, "bytes1"}, {g2, "bytes2"}});
//   store.get(g1, out);                           // true, out == "bytes1"
//   store.put({{g1, "bytes3"}});                   // g1 now reads "bytes3"; entries() is 2
//                                                 // (entries() first writes the pending index)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "atlas2kudu/event.h"

namespace atlas2kudu {

class SpillStore {
 public:
  using Hash = std::uint64_t (*)(const Guid&);
  static constexpr std::size_t kMaxProbe = 16;  // buckets a guid may sit past its home
  // The most index entries held in memory before they are written (32 bytes each: 8 MiB, and as
  // much again while a batch is merged in).
  static constexpr std::size_t kPendingEntries = std::size_t{1} << 18;
  // The pending entries for a store beside knowledge that may hold `knowledge_budget` bytes in
  // memory: an eighth of that, between 4096 entries and kPendingEntries (which the default
  // --memory-budget reaches). All 8 MiB under --memory-budget 64M (a knowledge share of 7 MiB)
  // took compile of 600,000 new entities to 64-68 MiB; with 29,000 entries, to 52-55 MiB, and no
  // slower (the index is written more often, a few more times over).
  static std::size_t pending_entries_for(std::size_t knowledge_budget);

  // Creates the files in a new directory under `parent` ($TMPDIR, else /tmp, when empty) and
  // unlinks them and the directory at once: nothing is left on disk however the process ends.
  // Throws Error(kIo) naming the directory. `hash` replaces the keyed hash in tests (to crowd
  // homes and fill buckets); so does `pending_entries` the number of index entries held in memory
  // (1: each put writes its own).
  explicit SpillStore(const std::string& parent, Hash hash = nullptr,
                      std::size_t pending_entries = kPendingEntries);
  // Creates and removes a directory under `parent` as the constructor would, so that a run whose
  // --spill-dir or $TMPDIR is missing, read-only or not a directory fails before it applies a
  // window rather than at its first eviction. Throws what the constructor throws.
  static void check_parent(const std::string& parent);
  ~SpillStore();
  SpillStore(const SpillStore&) = delete;
  SpillStore& operator=(const SpillStore&) = delete;

  // The bytes last put for `guid` into `out`; false if it was never put. Throws Error(kIo).
  bool get(const Guid& guid, std::string& out);
  // Whether `guid` was ever put, without reading its bytes. Throws Error(kIo).
  bool contains(const Guid& guid) { return locate(guid) != 0; }
  // Writes each (guid, bytes); a guid already present (or earlier in the batch) is replaced.
  // Throws Error(kIo), with the --spill-dir advice, when the files cannot be written; the run
  // ends there, and the store is not used again (its index may be half written).
  void put(const std::vector<std::pair<Guid, std::string>>& entries);

  // Guids stored. Writes the pending index entries first, to count the guids put again exactly:
  // ask at the end, not after every put.
  std::uint64_t entries();
  std::uint64_t log_bytes() const { return log_end_; }
  std::size_t buckets() const { return std::size_t{1} << bits_; }

 private:
  struct Slot {
    Guid guid;
    std::uint64_t location;  // 0: empty
  };
  struct Pending {
    std::uint64_t hash;
    Guid guid;
    std::uint64_t location;
  };
  class Written;  // the Bloom filter

  static constexpr std::size_t kSlotsPerBucket = 4;
  static constexpr std::size_t kSlotBytes = 24;
  static constexpr std::size_t kBucketBytes = kSlotsPerBucket * kSlotBytes;
  static constexpr std::size_t kRecordHeader = 20;

  std::uint64_t hash_of(const Guid& guid) const;
  std::size_t home(std::uint64_t hash, unsigned bits) const {
    return static_cast<std::size_t>(hash >> (64 - bits));
  }
  std::size_t total_buckets(unsigned bits) const {
    return (std::size_t{1} << bits) + kMaxProbe - 1;
  }
  // Reads buckets [first, first + count) of the current table (clipped at its end) into `out`.
  std::size_t read_buckets(std::size_t first, std::size_t count, std::vector<Slot>& out);
  void write_buckets(int fd, std::size_t first, const Slot* slots, std::size_t count);
  // Places `p` within [home, home + kMaxProbe) of `slots`, which hold buckets from `base` on:
  // replaces the guid's slot or takes the first empty one. Returns the slot index, or -1 if full.
  static std::ptrdiff_t place(std::vector<Slot>& slots, std::size_t base, std::size_t home,
                              const Guid& guid, std::uint64_t location, bool* added);
  // The location pending for `guid` (the last put), or 0.
  std::uint64_t pending_location(std::uint64_t hash, const Guid& guid) const;
  // Where the bytes last put for `guid` are (a record's location); 0 if it was never put.
  std::uint64_t locate(const Guid& guid);
  // Writes pending_ into the index (growing it as needed) and empties it.
  void write_pending();
  // Applies pending_[from..] in home order; false (with `from` at the first not applied) when one
  // finds no free slot within reach.
  bool apply(std::size_t& from);
  std::uint64_t append(const Guid& guid, std::string_view bytes);
  void flush_log();
  void read_record(std::uint64_t location, const Guid& guid, std::string& out);
  // Doubles the table (more, if a rebuilt bucket overflows) until it has room for `extra` more
  // entries at 70% load.
  void grow(std::uint64_t extra);
  bool rebuild(unsigned new_bits);
  void write_at(int fd, const void* data, std::size_t size, std::uint64_t offset, const char* what);
  void read_at(int fd, void* data, std::size_t size, std::uint64_t offset, const char* what);
  [[noreturn]] void fail(const std::string& what) const;

  Hash hash_;
  std::size_t pending_limit_;
  std::unique_ptr<Written> written_;
  int log_fd_ = -1;
  int index_fd_ = -1;
  int spare_fd_ = -1;  // the next index, while the table doubles
  unsigned bits_ = 12;
  std::uint64_t count_ = 0;
  std::uint64_t log_end_ = 0;      // size of the log, buffered bytes included
  std::uint64_t log_flushed_ = 0;  // bytes of it written to the file
  std::string log_buffer_;
  std::vector<Pending> pending_;  // sorted by hash; a guid put again: the later one comes later
  std::vector<Slot> probe_;
  std::vector<Slot> chunk_;
};

}  // namespace atlas2kudu
