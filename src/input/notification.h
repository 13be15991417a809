// Decoding one framed record into an Event: envelopes, kcat records, GZIP+Base64 messages, split
// messages, and the V2 and legacy V1 payloads (SPEC §1; research/atlas-notifications.md §2-§4).
//
// The layers, outermost first, each optional except the payload:
//
//   kcat -J record   {"topic":"ATLAS_ENTITIES","partition":0,"offset":7,"payload":"<envelope>"}
//   envelope         {"version":{...},"msgCreationTime":...,"message":<payload>}
//   compressed       {"version":{...},"msgId":"..","msgCompressionKind":"GZIP",
//                     "message":"H4sI..."}        -> Base64, gunzip -> an envelope
//   split chunk      {..,"msgId":"m_0","msgSplitIdx":0,"msgSplitCount":5,"message":"H4sI.."}
//                    -> chunks concatenated in index order once all arrived -> as compressed
//   payload          {"type":"ENTITY_NOTIFICATION_V2","operationType":..,"entity":{..},..}
//                    (a bare payload without envelope is recognised by its missing `version`)
//
// Chunks of one split message may interleave with other records, in any order; the event is
// produced when the last missing chunk arrives and carries that chunk's position. Chunks still
// missing at end of input are reported by take_incomplete(), never dropped.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/event.h"
#include "input/input_error.h"

namespace atlas2kudu {

// A split message that never completed.
struct IncompleteSplit {
  std::string msg_id;
  std::size_t received = 0;
  std::size_t expected = 0;
  SourcePosition first;  // position of its earliest chunk
};

struct DecodeLimits {
  // Bytes a GZIP message may inflate to; protects against decompression bombs.
  std::size_t max_inflated_bytes = std::size_t{256} << 20;
};

class NotificationDecoder {
 public:
  explicit NotificationDecoder(DecodeLimits limits = {});
  ~NotificationDecoder();
  NotificationDecoder(const NotificationDecoder&) = delete;
  NotificationDecoder& operator=(const NotificationDecoder&) = delete;

  // Decodes one record. `text` must be followed by 64 readable bytes (FramedRecord guarantees
  // it). Returns the event; or nullopt when the record was a split chunk now waiting for the
  // rest; throws InputError for a malformed record. `pos` is copied into the event; kcat records
  // add their Kafka coordinates to it.
  std::optional<Event> decode(std::string_view text, const SourcePosition& pos);

  // The first chunk's position of the earliest split message still waiting for chunks: a resume
  // point must not pass it (checkpoint.h).
  std::optional<SourcePosition> earliest_pending() const;

  // Split messages still waiting for chunks; clears them.
  std::vector<IncompleteSplit> take_incomplete();

  // Chunks absorbed into split messages so far (each chunk is one record read).
  std::uint64_t split_chunks() const { return split_chunks_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint64_t split_chunks_ = 0;
};

}  // namespace atlas2kudu
