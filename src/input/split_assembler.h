// Reassembling split messages.
//
// Atlas splits a notification too large for one Kafka message into chunks: envelopes sharing a
// msgId, each with its msgSplitIdx (0-based), the msgSplitCount, and a piece of the message's
// Base64 text. In an export the chunks may come in any order, interleaved with other messages,
// and (after a consumer restart) more than once. The assembler holds chunks by msgId until every
// index has arrived, then hands back the pieces joined in index order.
//
// It also answers the one question a resume point needs about them (reader.h, progress()): the
// position of the earliest chunk still held. Everything read before it is done; it and what
// follows it must be read again after a restart, or the held message could never complete.
//
//   SplitAssembler splits;
//   splits.add({.msg_id = "m_0", .index = 1, .count = 2, .text = "d29ybGQ="}, line_1);
//       // -> nullopt: held; earliest_pending() == line_1
//   splits.add({.msg_id = "m_0", .index = 0, .count = 2, .text = "aGVsbG8g"}, line_2);
//       // -> AssembledMessage{.text = "aGVsbG8gd29ybGQ=", .gzip = false, .first = line_1}
//       //    earliest_pending() == nullopt
//
// Chunks still held at end of input are handed back by take_incomplete(), so that the reader
// rejects them instead of losing them silently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/event.h"

namespace atlas2kudu {

// One chunk, as its envelope gave it.
struct SplitChunk {
  std::string_view msg_id;  // not empty (the decoder rejects a chunk without one)
  std::int64_t index = 0;   // msgSplitIdx
  std::int64_t count = 0;   // msgSplitCount, more than 1
  bool gzip = false;        // msgCompressionKind GZIP
  std::string text;         // the chunk's piece of the Base64 text
};

// A split message whose chunks have all arrived.
struct AssembledMessage {
  std::string text;      // the chunks' texts joined in index order
  bool gzip = false;     // any chunk said GZIP
  SourcePosition first;  // the position of its earliest chunk
};

// A split message that never completed.
struct IncompleteSplit {
  std::string msg_id;
  std::size_t received = 0;
  std::size_t expected = 0;
  SourcePosition first;  // position of its earliest chunk
};

class SplitAssembler {
 public:
  // More chunks than any real message has (Atlas chunks are about a megabyte each): a count past
  // this is a corrupt envelope, not a reason to allocate that many slots.
  static constexpr std::int64_t kMaxChunks = 100000;

  // Takes one chunk read at `pos`. Returns the whole message when this chunk was the last one
  // missing, and then forgets it; nullopt while chunks are missing, and for a redelivered chunk
  // identical to the one held. Throws InputError(kBadSplit), holding nothing new, for a count
  // above kMaxChunks, an index outside 0..count-1, a count that differs from an earlier chunk's,
  // or a second chunk at an index with different text.
  std::optional<AssembledMessage> add(SplitChunk chunk, const SourcePosition& pos);

  // The position of the earliest chunk (by source, then record) of any message still waiting.
  std::optional<SourcePosition> earliest_pending() const;

  // Messages still waiting, ordered by their earliest chunk's record; forgets them.
  std::vector<IncompleteSplit> take_incomplete();

 private:
  struct Pending {
    std::int64_t count = 0;
    std::vector<std::optional<std::string>> chunks;  // by index
    std::size_t received = 0;
    bool gzip = false;
    SourcePosition first;
    std::size_t bytes = 0;
  };
  std::map<std::string, Pending, std::less<>> pending_;
};

}  // namespace atlas2kudu
