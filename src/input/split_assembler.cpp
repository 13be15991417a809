#include "input/split_assembler.h"

#include <fmt/core.h>

#include <algorithm>
#include <tuple>

#include "input/input_error.h"
#include "input/json_text.h"

namespace atlas2kudu {

namespace {

bool read_before(const SourcePosition& a, const SourcePosition& b) {
  return std::tie(a.source_index, a.record) < std::tie(b.source_index, b.record);
}

}  // namespace

std::optional<AssembledMessage> SplitAssembler::add(SplitChunk chunk, const SourcePosition& pos) {
  if (chunk.count > kMaxChunks) {
    throw InputError(
        RejectCode::kBadSplit,
        fmt::format("msgSplitCount: {} chunks is more than any real message", chunk.count));
  }
  if (chunk.index < 0 || chunk.index >= chunk.count) {
    throw InputError(RejectCode::kBadSplit,
                     fmt::format("msgSplitIdx: {} is outside 0..{} (msgId {})", chunk.index,
                                 chunk.count - 1, printable_excerpt(chunk.msg_id, 80)));
  }
  auto it = pending_.find(chunk.msg_id);
  if (it == pending_.end()) {
    Pending fresh;
    fresh.count = chunk.count;
    fresh.chunks.resize(static_cast<std::size_t>(chunk.count));
    fresh.gzip = chunk.gzip;
    fresh.first = pos;
    it = pending_.emplace(std::string(chunk.msg_id), std::move(fresh)).first;
  } else if (it->second.count != chunk.count) {
    throw InputError(
        RejectCode::kBadSplit,
        fmt::format("msgSplitCount: {} differs from {} in an earlier chunk of msgId {}",
                    chunk.count, it->second.count, printable_excerpt(chunk.msg_id, 80)));
  }
  Pending& split = it->second;
  auto& slot = split.chunks[static_cast<std::size_t>(chunk.index)];
  if (slot) {
    if (*slot != chunk.text) {
      throw InputError(RejectCode::kBadSplit,
                       fmt::format("msgSplitIdx: chunk {} of msgId {} arrived twice with different "
                                   "content",
                                   chunk.index, printable_excerpt(chunk.msg_id, 80)));
    }
    return std::nullopt;  // a redelivered chunk: already held
  }
  if (read_before(pos, split.first)) split.first = pos;
  split.gzip = split.gzip || chunk.gzip;
  split.bytes += chunk.text.size();
  slot = std::move(chunk.text);
  if (++split.received < split.chunks.size()) return std::nullopt;

  AssembledMessage whole;
  whole.text.reserve(split.bytes);
  for (auto& piece : split.chunks) whole.text += *piece;
  whole.gzip = split.gzip;
  whole.first = std::move(split.first);
  pending_.erase(it);
  return whole;
}

std::optional<SourcePosition> SplitAssembler::earliest_pending() const {
  std::optional<SourcePosition> earliest;
  for (const auto& [id, split] : pending_) {
    if (!earliest || read_before(split.first, *earliest)) earliest = split.first;
  }
  return earliest;
}

std::vector<IncompleteSplit> SplitAssembler::take_incomplete() {
  std::vector<IncompleteSplit> out;
  for (auto& [id, split] : pending_) {
    out.push_back(IncompleteSplit{id, split.received, split.chunks.size(), split.first});
  }
  std::sort(out.begin(), out.end(), [](const IncompleteSplit& a, const IncompleteSplit& b) {
    return a.first.record < b.first.record;
  });
  pending_.clear();
  return out;
}

}  // namespace atlas2kudu
