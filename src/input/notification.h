// Decoding one framed record into an Event: the chain of layers a notification can be wrapped in,
// outermost first, each optional except the payload:
//
//   kcat -J record   {"topic":"ATLAS_ENTITIES","partition":0,"offset":7,"payload":"<envelope>"}
//   envelope         {"version":{...},"msgCreationTime":...,"message":<payload>}
//   compressed       {"version":{...},"msgId":"..","msgCompressionKind":"GZIP",
//                     "message":"H4sI..."}        -> Base64, gunzip -> an envelope
//   split chunk      {..,"msgId":"m_0","msgSplitIdx":0,"msgSplitCount":5,"message":"H4sI.."}
//                    -> held until every chunk arrived, then joined -> as compressed
//   payload          {"type":"ENTITY_NOTIFICATION_V2","operationType":..,"entity":{..},..}
//                    (a bare payload, without envelope, has neither `version` nor `message`)
//
// Each layer has its own file: envelope.h reads one level, split_assembler.h holds chunks,
// util/base64.h and util/gzip.h decode, payload.h turns the payload into an Event. The decoder
// only chains them, and enforces what may nest in what: a kcat record only at the top, and inside
// a decompressed or reassembled message only a plain envelope. Each level is one whole JSON text:
// a kcat payload or a decompressed message with anything after its object is rejected. A kcat
// record's "ts" is the last fallback for the event time; at any other level "ts" means nothing.
//
//   SplitAssembler splits;
//   NotificationDecoder decoder(splits, DecodeLimits{.max_inflated_bytes = 1 << 20});
//   std::optional<Event> e = decoder.decode(record.text, pos);   // nullopt: a chunk was held
//
// Chunks of one split message may interleave with other records, in any order; the event is
// produced when the last missing chunk arrives, carries that chunk's position, and has
// pos.first_record set to its earliest chunk's record.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/event.h"
#include "input/input_error.h"
#include "input/split_assembler.h"

namespace atlas2kudu {

struct DecodeLimits {
  // Bytes a GZIP message may inflate to; protects against decompression bombs.
  std::size_t max_inflated_bytes = kDefaultMaxMessageBytes;
  std::uint32_t max_json_depth = kDefaultMaxJsonDepth;        // per JSON text (json_path.h)
  std::size_t max_cell_bytes = kDefaultMaxCellBytes;          // payload.h, payload_to_event
  std::string inflated_limit_source = "--max-message-bytes";  // ReaderLimits
};

class NotificationDecoder {
 public:
  // Split chunks go to `splits`, which must outlive the decoder; its owner asks it about pending
  // messages (the reader: for resume points, and for incomplete messages at end of input).
  explicit NotificationDecoder(SplitAssembler& splits, DecodeLimits limits = {});
  ~NotificationDecoder();
  NotificationDecoder(const NotificationDecoder&) = delete;
  NotificationDecoder& operator=(const NotificationDecoder&) = delete;

  // Decodes one record. `text` must be followed by 64 readable bytes (FramedRecord guarantees
  // it). Returns the event; or nullopt when the record was a split chunk now waiting for the
  // rest (or a redelivered copy of one); throws InputError for a malformed record. `pos` is copied
  // into the event; kcat records add their Kafka coordinates to it. `compact`: the text has no
  // whitespace outside its strings (FramedRecord::compact), so a message taken from it verbatim
  // is hashed for its audit seq as it is. `kafka_timestamp_ms`: the record's Kafka timestamp
  // as the framing gave it (kafka-console-consumer's CreateTime:), the event time of last resort.
  // `console_prefix`: the consumer's prefixes before `text` on its line, kept with a split chunk
  // held (HeldRecord), so that a chunk rejected later is written to the reject file as read.
  std::optional<Event> decode(std::string_view text, const SourcePosition& pos,
                              bool compact = false,
                              std::optional<std::int64_t> kafka_timestamp_ms = std::nullopt,
                              std::string_view console_prefix = {});

  // Asked of each kcat record's Kafka position before its payload is decoded: true passes the
  // record over (decode() returns nullopt; the filter counts it). The reader's: records an
  // earlier run applied, and records this run has read already.
  void pass_over(std::function<bool(const SourcePosition::Kafka&)> filter);

  // For a reader whose events become no rows (check): events come with audit_seq 0 and
  // Event::attributes empty (parse_payload's write_attribute_values). A record is accepted or
  // rejected exactly as without it: a message not known to be minified (from a spaced record, a
  // kcat payload, a GZIP or a split message) is still minified, which is where the audit seq
  // could reject it, only the SHA-256 is not computed; and every attribute value is still
  // validated, by the walk that would write its text.
  void validation_only();

  // After a decode() that completed a split message (returned its event or threw for it): the
  // other records of that message, in input order, which the caller accounts for as well (they
  // are rejected along with the last one when it threw). Empty after any other decode().
  const std::vector<HeldRecord>& completed_records() const;

  // After a decode() of a kcat record that read its Kafka coordinates: them, also when it then
  // threw, so that the rejection names where the record is in Kafka; else nullopt.
  const std::optional<SourcePosition::Kafka>& record_kafka() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace atlas2kudu
