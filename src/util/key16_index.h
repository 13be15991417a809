// 16-byte keys (guids, qualifiedName digests) -> a small value (a row number, a pointer), for the
// lookups the fold and the knowledge store make on nearly every event.
//
// Open addressing with linear probing in one array, kept at most half full: a lookup reads one
// cache line, where std::unordered_map reads a bucket and then a node it allocated for the key.
// The keys come from the input, so the probe sequence starts at a keyed hash
// (util/keyed_hash.h): crafted guids cannot pile up in one run of cells. erase() shifts the rest
// of the run back instead of leaving a tombstone, so lookups stay as short after any number of
// removals.
//
//   Key16Index<std::uint32_t, kNoRow> rows(1000);   // sized for about 1000 keys; grows past it
//   bool made = false;
//   std::uint32_t& r = rows.try_emplace(guid.bytes.data(), 7, made);  // made: r == 7
//   rows.find(guid.bytes.data()) == 7;
//   rows.erase(guid.bytes.data());
//   rows.find(guid.bytes.data()) == kNoRow;
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "util/keyed_hash.h"

namespace atlas2kudu {

// `kNone` marks a free cell: it is never stored as a value, and find() returns it for a key that
// is not there.
template <typename Value, Value kNone>
class Key16Index {
 public:
  explicit Key16Index(std::size_t expected = 0) : key_(process_hash_key()) {
    std::size_t capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    cells_.resize(capacity);
    mask_ = capacity - 1;
  }

  // The value stored for `key`, or kNone.
  Value find(const std::uint8_t* key) const { return cells_[probe(key)].value; }

  // The value stored for `key`, or `value` newly stored; `inserted` tells which. The reference
  // is valid until the next try_emplace() or erase().
  Value& try_emplace(const std::uint8_t* key, Value value, bool& inserted) {
    return find_or_make(
        key, [&] { return value; }, inserted);
  }
  // The same with the value made by make() only for a new key, in one probe. If make() throws,
  // nothing is stored.
  template <typename Make>
  Value& find_or_make(const std::uint8_t* key, Make&& make, bool& made) {
    if ((size_ + 1) * 2 > cells_.size()) grow();
    Cell& c = cells_[probe(key)];
    made = c.value == kNone;
    if (made) {
      c.value = make();  // before the key: a throw leaves the cell free
      std::memcpy(c.key, key, 16);
      ++size_;
    }
    return c.value;
  }

  // Removes `key`, if it is there.
  void erase(const std::uint8_t* key) {
    std::size_t hole = probe(key);
    if (cells_[hole].value == kNone) return;
    // Move back each later cell of the run whose home is not cyclically in (hole, its place]:
    // every key stays reachable from its home without crossing a free cell.
    for (std::size_t j = (hole + 1) & mask_; cells_[j].value != kNone; j = (j + 1) & mask_) {
      const std::size_t home = home_of(cells_[j].key);
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!stays) {
        cells_[hole] = cells_[j];
        hole = j;
      }
    }
    cells_[hole] = Cell{};
    --size_;
  }

  std::size_t size() const { return size_; }
  // The array's bytes: at most half full, and never shrunk.
  std::size_t bytes() const { return cells_.size() * sizeof(Cell); }
  // f(value) for every key's value, in no particular order.
  template <typename F>
  void for_each(F&& f) const {
    for (const Cell& c : cells_) {
      if (c.value != kNone) f(c.value);
    }
  }

 private:
  struct Cell {
    std::uint8_t key[16];
    Value value = kNone;
  };

  std::size_t home_of(const std::uint8_t* key) const {
    return static_cast<std::size_t>(siphash13_16(key_, key)) & mask_;
  }
  // The cell holding `key`, or the free cell where it would go.
  std::size_t probe(const std::uint8_t* key) const {
    for (std::size_t i = home_of(key);; i = (i + 1) & mask_) {
      const Cell& c = cells_[i];
      if (c.value == kNone || std::memcmp(c.key, key, 16) == 0) return i;
    }
  }
  void grow() {
    std::vector<Cell> bigger(cells_.size() * 2);  // a throw here leaves the table as it was
    cells_.swap(bigger);
    mask_ = cells_.size() - 1;
    for (const Cell& c : bigger) {
      if (c.value != kNone) cells_[probe(c.key)] = c;
    }
  }

  const SipKey& key_;
  std::vector<Cell> cells_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace atlas2kudu
