// A set of Kafka offsets of one partition, held as disjoint [first, end) ranges: an export read
// in order is one range however long it is, and a lookup is a binary search over the ranges.
//
//   OffsetSet read;
//   read.insert(5); read.insert(7);  // {[5,6), [7,8)}
//   read.insert(6);                  // {[5,8)}: the ranges it touches are joined
//   read.contains(7);                // true
//   read.contains(8);                // false
//
// Offsets are below INT64_MAX (Kafka's are non-negative int64), so offset + 1 never overflows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>

#include "atlas2kudu/event.h"
#include "atlas2kudu/reader.h"

namespace atlas2kudu {

class OffsetSet {
 public:
  bool contains(std::int64_t offset) const {
    const auto after = ranges_.upper_bound(offset);  // the first range starting past it
    return after != ranges_.begin() && std::prev(after)->second > offset;
  }

  void insert(std::int64_t offset) {
    auto after = ranges_.upper_bound(offset);
    const bool has_before = after != ranges_.begin();
    if (has_before && std::prev(after)->second > offset) return;  // in the set already
    const bool joins_before = has_before && std::prev(after)->second == offset;
    const bool joins_after = after != ranges_.end() && after->first == offset + 1;
    if (joins_before && joins_after) {
      std::prev(after)->second = after->second;
      ranges_.erase(after);
    } else if (joins_before) {
      std::prev(after)->second = offset + 1;
    } else if (joins_after) {
      const std::int64_t end = after->second;
      ranges_.erase(after);
      ranges_.emplace(offset, end);
    } else {
      ranges_.emplace(offset, offset + 1);
    }
  }

  std::size_t range_count() const { return ranges_.size(); }

 private:
  std::map<std::int64_t, std::int64_t> ranges_;  // first -> end
};

// Offsets kept per partition (an OffsetSet, std::set or std::multiset): whether k's offset is
// among its partition's, and taking one occurrence of it out, a partition left with none going
// with it (so that an empty map says "none anywhere" at once).
template <class Offsets>
bool holds_offset(const std::map<KafkaPartition, Offsets>& by_partition,
                  const SourcePosition::Kafka& k) {
  if (by_partition.empty()) return false;
  const auto partition = by_partition.find({k.topic, k.partition});
  return partition != by_partition.end() && partition->second.contains(k.offset);
}

template <class Offsets>
bool erase_offset(std::map<KafkaPartition, Offsets>& by_partition, const SourcePosition::Kafka& k) {
  if (by_partition.empty()) return false;
  const auto partition = by_partition.find({k.topic, k.partition});
  if (partition == by_partition.end()) return false;
  const auto at = partition->second.find(k.offset);
  if (at == partition->second.end()) return false;
  partition->second.erase(at);
  if (partition->second.empty()) by_partition.erase(partition);
  return true;
}

}  // namespace atlas2kudu
