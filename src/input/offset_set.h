// A set of Kafka offsets of one partition, held as disjoint [first, end) ranges: an export read
// in order is one range however long it is, and a lookup is a binary search over the ranges.
//
//   OffsetSet read;
//   read.insert(5); read.insert(7);  // {[5,6), [7,8)}
//   read.insert(6);                  // {[5,8)}: the ranges it touches are joined
//   read.contains(7);                // true
//   read.erase(6);                   // {[5,6), [7,8)}
//   read.insert_range(0, 10);        // {[0,10)}
//   read.ranges();                   // {{0, 10}}
//
// Offsets are below INT64_MAX (Kafka's are non-negative int64), so offset + 1 never overflows.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

#include "atlas2kudu/reader.h"

namespace atlas2kudu {

class OffsetSet {
 public:
  OffsetSet() = default;
  explicit OffsetSet(const OffsetRanges& ranges) {
    for (const auto& [first, end] : ranges) insert_range(first, end);
  }

  bool contains(std::int64_t offset) const {
    const auto after = ranges_.upper_bound(offset);  // the first range starting past it
    return after != ranges_.begin() && std::prev(after)->second > offset;
  }

  void insert(std::int64_t offset) { insert_range(offset, offset + 1); }

  // Adds [first, end); joins every range it overlaps or touches.
  void insert_range(std::int64_t first, std::int64_t end) {
    if (first >= end) return;
    auto it = ranges_.upper_bound(first);
    if (it != ranges_.begin() && std::prev(it)->second >= first) --it;  // overlaps or touches
    while (it != ranges_.end() && it->first <= end) {
      first = std::min(first, it->first);
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    ranges_.emplace_hint(it, first, end);
  }

  void insert_all(const OffsetSet& other) {
    for (const auto& [first, end] : other.ranges_) insert_range(first, end);
  }

  // Removes `offset`, splitting its range.
  void erase(std::int64_t offset) {
    auto after = ranges_.upper_bound(offset);
    if (after == ranges_.begin()) return;
    const auto at = std::prev(after);
    if (at->second <= offset) return;
    const std::int64_t first = at->first;
    const std::int64_t end = at->second;
    ranges_.erase(at);
    if (first < offset) ranges_.emplace(first, offset);
    if (offset + 1 < end) ranges_.emplace(offset + 1, end);
  }

  // One past the largest offset in the set.
  std::optional<std::int64_t> end() const {
    if (ranges_.empty()) return std::nullopt;
    return std::prev(ranges_.end())->second;
  }

  bool empty() const { return ranges_.empty(); }
  std::size_t range_count() const { return ranges_.size(); }
  OffsetRanges ranges() const { return OffsetRanges(ranges_.begin(), ranges_.end()); }

 private:
  std::map<std::int64_t, std::int64_t> ranges_;  // first -> end
};

}  // namespace atlas2kudu
