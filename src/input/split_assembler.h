// Reassembling split messages.
//
// Atlas splits a notification too large for one Kafka message into chunks: envelopes sharing a
// msgId, each with its msgSplitIdx (0-based), the msgSplitCount, and a piece of the message's
// Base64 text. In an export the chunks may come in any order, interleaved with other messages,
// and (after a consumer restart) more than once. The assembler holds chunks by msgId until every
// index has arrived, then hands back the pieces joined in index order.
//
// Every record that carried a chunk is held verbatim with its position until its message is
// complete, so that nothing is lost when it is not: at end of input take_incomplete() hands each
// record of an unfinished message back to be rejected, and a completed message whose content turns
// out to be bad is rejected as all of its records.
//
// It also answers what a resume point needs (reader.h, progress()): the position of the earliest
// record still held, and per Kafka partition the smallest offset held. Everything read before
// them is done; they and what follows must be read again after a restart, or the held message
// could never complete.
//
// Memory is bounded by SplitLimits, checked before anything is held: a count past max_chunks, a
// new msgId while max_messages are pending, or a chunk that would take the held bytes past
// max_bytes is rejected (kTooLarge). Slots are allocated as chunks arrive, never up front from
// the count a chunk claims.
//
//   SplitAssembler splits;
//   splits.add({.msg_id = "m_0", .index = 1, .count = 2, .text = "d29ybGQ="}, line_1, record_1);
//       // -> nullopt: held; earliest_pending() == line_1
//   splits.add({.msg_id = "m_0", .index = 0, .count = 2, .text = "aGVsbG8g"}, line_2, record_2);
//       // -> AssembledMessage{.text = "aGVsbG8gd29ybGQ=", .gzip = false, .first = line_1,
//       //                     .records = {{line_1, record_1}}}
//       //    earliest_pending() == nullopt
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/event.h"
#include "atlas2kudu/reader.h"

namespace atlas2kudu {

// One chunk, as its envelope gave it.
struct SplitChunk {
  std::string_view msg_id;  // not empty (the decoder rejects a chunk without one)
  std::int64_t index = 0;   // msgSplitIdx
  std::int64_t count = 0;   // msgSplitCount, more than 1
  bool gzip = false;        // msgCompressionKind GZIP
  std::string text;         // the chunk's piece of the Base64 text
};

// A record held for a split message: where it was read, and its bytes as read.
struct HeldRecord {
  SourcePosition pos;
  std::string text;
  std::string console_prefix;  // FramedRecord::console_prefix: rejected with the record
};

// A split message whose chunks have all arrived.
struct AssembledMessage {
  std::string text;      // the chunks' texts joined in index order
  bool gzip = false;     // any chunk said GZIP
  SourcePosition first;  // the position of its earliest record
  // The records held for it, in input order: every one but the record that completed it
  // (redelivered copies of a chunk included).
  std::vector<HeldRecord> records;
};

// One record of a split message that never completed.
struct IncompleteRecord {
  std::string msg_id;
  std::size_t received = 0;  // distinct chunks of its message that arrived
  std::size_t expected = 0;  // msgSplitCount
  HeldRecord record;
  // The position (format_position) of the chunk that completed an earlier message with this msgId,
  // if one did (among the last SplitAssembler::kCompletionsRemembered): the chunks held are then
  // copies of some of its chunks, as exports that overlap give, rather than a message cut short.
  std::string completed_earlier_at;
};

struct SplitLimits {
  std::size_t max_messages = kDefaultMaxSplitMessages;  // msgIds waiting for chunks at once
  std::size_t max_chunks = kDefaultMaxSplitChunks;      // msgSplitCount
  std::size_t max_bytes = kDefaultMaxSplitBytes;        // chunk texts and records held, in all
  std::string max_bytes_source = "--max-split-bytes";   // ReaderLimits
};

class SplitAssembler {
 public:
  explicit SplitAssembler(SplitLimits limits = {});

  // Takes one chunk read at `pos`, from the record `record` (kept verbatim while held, with the
  // console prefixes `console_prefix` its line had before it, if any). Returns
  // the whole message when this chunk was the last one missing, and then forgets it; nullopt
  // while chunks are missing, and for a redelivered chunk identical to the one held. Throws,
  // holding nothing new: InputError(kBadSplit) for an index outside 0..count-1, a count that
  // differs from an earlier chunk's, or a second chunk at an index with different text;
  // InputError(kTooLarge) when a SplitLimits bound would be passed.
  std::optional<AssembledMessage> add(SplitChunk chunk, const SourcePosition& pos,
                                      std::string_view record,
                                      std::string_view console_prefix = {});

  // Where a resume must start to read again the records held for the messages `keep` selects
  // (it is given each waiting message's records, in arrival order): the earliest of them (by
  // source, then record), and the smallest offset per Kafka partition (of records that have
  // Kafka coordinates). Messages `keep` leaves out are not waited for by a resume.
  //
  // A message completed while others waited may have records on both sides of that point: a
  // resume would read its last chunk without its first, and the message would be lost (and the
  // events between applied again after it). The point is pulled back until no such message is
  // cut by it. Records read at 0..9 of one input:
  //   2: M chunk 0    3: N chunk 0    5: an update of E    6: M chunk 1 (M completes: E's event)
  // N waits: the resume point is 2, not 3, so that a rerun reads M whole, after the update, as
  // the first run did. A record is read again when it is at or after `earliest` and, when it has
  // Kafka coordinates, at or above its partition's offset here (a partition with no offset here
  // is passed over: every record of it was read).
  struct Hold {
    std::optional<SourcePosition> earliest;
    std::map<KafkaPartition, std::int64_t> kafka_offsets;
  };
  Hold hold(const std::function<bool(std::span<const HeldRecord>)>& keep) const;

  // hold() of every message waiting: its earliest record, its smallest offsets.
  std::optional<SourcePosition> earliest_pending() const;
  std::map<KafkaPartition, std::int64_t> pending_kafka_offsets() const;

  // Every record held for messages still waiting, in input order; forgets them (and the messages
  // completed while they waited).
  std::vector<IncompleteRecord> take_incomplete();

  // Whether a record read at Kafka position `k` is held for a message still waiting: a copy of
  // it read again (overlapping exports) is a replay, as a record of a complete message is.
  bool holds(const SourcePosition::Kafka& k) const;

  // Bytes held now (chunk texts and records), for tests and limits.
  std::size_t bytes_held() const { return bytes_; }

  // How many completed msgIds are remembered for IncompleteRecord::completed_earlier_at.
  static constexpr std::size_t kCompletionsRemembered = 4096;
  // How many records of messages completed while others waited are remembered for hold(), the
  // oldest completed going first: as many as a resume waits for a message
  // (kDefaultSplitWaitRecords), so that every message completed within that wait, with all its
  // records in it, is remembered whatever others completed meanwhile (some 100 bytes each: about
  // 10 MB at most, reached only by 100,000 chunks completing while one message waits).
  static constexpr std::size_t kPositionsRemembered = kDefaultSplitWaitRecords;

 private:
  struct Pending {
    std::int64_t count = 0;
    std::map<std::int64_t, std::string> chunks;  // by index, as they arrive
    std::vector<HeldRecord> records;             // in arrival order
    bool gzip = false;
    std::size_t bytes = 0;
  };
  void forget_positions(const std::vector<HeldRecord>& records);

  SplitLimits limits_;
  std::map<std::string, Pending, std::less<>> pending_;
  std::map<KafkaPartition, std::multiset<std::int64_t>> held_kafka_;  // of pending_'s records
  std::size_t bytes_ = 0;
  // The last kCompletionsRemembered completed msgIds, with where each completed; oldest first.
  std::map<std::string, std::string, std::less<>> completed_at_;
  std::deque<std::map<std::string, std::string, std::less<>>::iterator> completion_order_;
  // The positions of the records of each message completed while another waited, oldest first;
  // emptied whenever none waits (a resume point is then past all of them, and stays so).
  struct Completed {
    std::vector<SourcePosition> records;  // in input order: the last completed it
    bool kafka = false;                   // some have Kafka coordinates
  };
  std::deque<Completed> completed_while_waiting_;
  std::size_t positions_while_waiting_ = 0;  // in completed_while_waiting_
};

}  // namespace atlas2kudu
