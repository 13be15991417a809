#include "input/split_assembler.h"

#include <fmt/core.h>

#include <algorithm>
#include <tuple>

#include "input/input_error.h"
#include "input/json_text.h"
#include "input/offset_set.h"

namespace atlas2kudu {

namespace {

bool read_before(const SourcePosition& a, const SourcePosition& b) {
  return std::tie(a.source_index, a.record) < std::tie(b.source_index, b.record);
}

}  // namespace

SplitAssembler::SplitAssembler(SplitLimits limits) : limits_(limits) {}

std::optional<AssembledMessage> SplitAssembler::add(SplitChunk chunk, const SourcePosition& pos,
                                                    std::string_view record,
                                                    std::string_view console_prefix) {
  const std::string id = printable_excerpt(chunk.msg_id, 80);
  if (chunk.index < 0 || chunk.index >= chunk.count) {
    throw InputError(RejectCode::kBadSplit,
                     fmt::format("msgSplitIdx: {} is outside 0..{} (msgId {})", chunk.index,
                                 chunk.count - 1, id));
  }
  if (static_cast<std::uint64_t>(chunk.count) > limits_.max_chunks) {
    throw InputError(RejectCode::kTooLarge,
                     fmt::format("msgSplitCount: {} chunks (msgId {}), more than {} "
                                 "(--max-split-chunks)",
                                 chunk.count, id, limits_.max_chunks));
  }
  auto it = pending_.find(chunk.msg_id);
  if (it == pending_.end()) {
    if (pending_.size() >= limits_.max_messages) {
      throw InputError(RejectCode::kTooLarge,
                       fmt::format("msgId {}: {} already waiting for chunks "
                                   "(--max-split-messages)",
                                   id,
                                   pending_.size() == 1
                                       ? std::string("1 split message is")
                                       : fmt::format("{} split messages are", pending_.size())));
    }
  } else if (it->second.count != chunk.count) {
    throw InputError(
        RejectCode::kBadSplit,
        fmt::format("msgSplitCount: {} differs from {} in an earlier chunk of msgId {}",
                    chunk.count, it->second.count, id));
  }
  const std::string* held = nullptr;
  if (it != pending_.end()) {
    const auto slot = it->second.chunks.find(chunk.index);
    if (slot != it->second.chunks.end()) {
      if (slot->second != chunk.text) {
        throw InputError(RejectCode::kBadSplit,
                         fmt::format("msgSplitIdx: chunk {} of msgId {} arrived twice with "
                                     "different content",
                                     chunk.index, id));
      }
      held = &slot->second;  // a redelivered chunk: only its record is kept
    }
  }
  // --max-split-bytes counts the records and chunks held, as it always did; their console
  // prefixes (tens of bytes each) are not counted.
  const std::size_t bytes = record.size() + (held ? 0 : chunk.text.size());
  if (bytes > limits_.max_bytes - std::min(bytes_, limits_.max_bytes)) {
    throw InputError(RejectCode::kTooLarge,
                     fmt::format("msgId {}: holding this chunk would take split messages past {} "
                                 "bytes ({})",
                                 id, limits_.max_bytes, limits_.max_bytes_source));
  }

  if (it == pending_.end()) {
    Pending fresh;
    fresh.count = chunk.count;
    it = pending_.emplace(std::string(chunk.msg_id), std::move(fresh)).first;
  }
  Pending& split = it->second;
  bytes_ += bytes;
  split.bytes += bytes;
  split.gzip = split.gzip || chunk.gzip;
  if (!held) split.chunks.emplace(chunk.index, std::move(chunk.text));
  if (held || split.chunks.size() < static_cast<std::size_t>(split.count)) {
    split.records.push_back(HeldRecord{pos, std::string(record), std::string(console_prefix)});
    if (pos.kafka) held_kafka_[{pos.kafka->topic, pos.kafka->partition}].insert(pos.kafka->offset);
    return std::nullopt;
  }

  AssembledMessage whole;
  std::size_t size = 0;
  for (const auto& [index, piece] : split.chunks) size += piece.size();
  whole.text.reserve(size);
  for (const auto& [index, piece] : split.chunks) whole.text += piece;
  whole.gzip = split.gzip;
  whole.first = pos;
  for (const HeldRecord& r : split.records) {
    if (read_before(r.pos, whole.first)) whole.first = r.pos;
  }
  whole.records = std::move(split.records);
  forget_positions(whole.records);
  bytes_ -= split.bytes;
  const auto [done, fresh] = completed_at_.insert_or_assign(it->first, format_position(pos));
  if (fresh) completion_order_.push_back(done);
  if (completion_order_.size() > kCompletionsRemembered) {
    completed_at_.erase(completion_order_.front());
    completion_order_.pop_front();
  }
  pending_.erase(it);
  if (pending_.empty()) {
    completed_while_waiting_.clear();
    positions_while_waiting_ = 0;
  } else {
    Completed& done = completed_while_waiting_.emplace_back();
    done.records.reserve(whole.records.size() + 1);
    for (const HeldRecord& r : whole.records) done.records.push_back(r.pos);
    done.records.push_back(pos);
    done.kafka = std::any_of(done.records.begin(), done.records.end(),
                             [](const SourcePosition& p) { return p.kafka.has_value(); });
    positions_while_waiting_ += done.records.size();
    while (positions_while_waiting_ > kPositionsRemembered) {
      positions_while_waiting_ -= completed_while_waiting_.front().records.size();
      completed_while_waiting_.pop_front();
    }
  }
  return whole;
}

SplitAssembler::Hold SplitAssembler::hold(
    const std::function<bool(std::span<const HeldRecord>)>& keep) const {
  Hold out;
  const auto read_again_from = [&out](const SourcePosition& pos) {
    if (!out.earliest || read_before(pos, *out.earliest)) out.earliest = pos;
    if (!pos.kafka) return;
    const auto [at, inserted] =
        out.kafka_offsets.try_emplace({pos.kafka->topic, pos.kafka->partition}, pos.kafka->offset);
    if (!inserted) at->second = std::min(at->second, pos.kafka->offset);
  };
  for (const auto& [id, split] : pending_) {
    if (!keep(split.records)) continue;
    for (const HeldRecord& r : split.records) read_again_from(r.pos);
  }
  if (!out.earliest) return out;
  const auto read_again = [&out](const SourcePosition& pos) {
    if (read_before(pos, *out.earliest)) return false;
    if (!pos.kafka) return true;
    const auto at = out.kafka_offsets.find({pos.kafka->topic, pos.kafka->partition});
    return at != out.kafka_offsets.end() && pos.kafka->offset >= at->second;
  };
  // Each pass takes in at least one message cut by the point, which it never cuts again (the
  // point only moves back): at most one pass per message. Newest first, one pass is enough by
  // record (a message pulled in only cuts those that completed before it); offsets in other
  // partitions may need another.
  for (bool moved = true; moved;) {
    moved = false;
    for (auto it = completed_while_waiting_.rbegin(); it != completed_while_waiting_.rend(); ++it) {
      const std::vector<SourcePosition>& span = it->records;
      // Completed at a record before the point: none of its records is read again, nor of those
      // that completed before it.
      if (read_before(span.back(), *out.earliest)) break;
      // Its first record at or after the point, and none passed over by offset: read again whole.
      if (!it->kafka && !read_before(span.front(), *out.earliest)) continue;
      const auto again = std::count_if(span.begin(), span.end(), read_again);
      if (again == 0 || static_cast<std::size_t>(again) == span.size()) continue;
      for (const SourcePosition& pos : span) read_again_from(pos);
      moved = true;
    }
  }
  return out;
}

std::optional<SourcePosition> SplitAssembler::earliest_pending() const {
  return hold([](std::span<const HeldRecord>) { return true; }).earliest;
}

std::map<KafkaPartition, std::int64_t> SplitAssembler::pending_kafka_offsets() const {
  return hold([](std::span<const HeldRecord>) { return true; }).kafka_offsets;
}

std::vector<IncompleteRecord> SplitAssembler::take_incomplete() {
  std::vector<IncompleteRecord> out;
  for (auto& [id, split] : pending_) {
    const auto done = completed_at_.find(id);
    for (HeldRecord& r : split.records) {
      out.push_back(IncompleteRecord{id, split.chunks.size(), static_cast<std::size_t>(split.count),
                                     std::move(r),
                                     done == completed_at_.end() ? std::string() : done->second});
    }
  }
  std::sort(out.begin(), out.end(), [](const IncompleteRecord& a, const IncompleteRecord& b) {
    return read_before(a.record.pos, b.record.pos);
  });
  pending_.clear();
  completed_while_waiting_.clear();
  positions_while_waiting_ = 0;
  held_kafka_.clear();
  bytes_ = 0;
  return out;
}

bool SplitAssembler::holds(const SourcePosition::Kafka& k) const {
  return holds_offset(held_kafka_, k);
}

void SplitAssembler::forget_positions(const std::vector<HeldRecord>& records) {
  for (const HeldRecord& r : records) {
    if (r.pos.kafka) erase_offset(held_kafka_, *r.pos.kafka);
  }
}

}  // namespace atlas2kudu
