// Input errors: a malformed record, reported as `SOURCE:LINE:OFFSET: reason`.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "atlas2kudu/event.h"

namespace atlas2kudu {

// Why a record was rejected. The names (to_string) are stable: they key `check`'s per-reason
// counts and the --stats JSON, so scripts can rely on them.
enum class RejectCode : std::uint8_t {
  kNotJson,           // not-json: the record is not a JSON document at all
  kInvalidJson,       // invalid-json: JSON syntax error, invalid UTF-8, truncated document
  kTooLarge,          // too-large: a record or decompressed message over the size limit
  kWrongType,         // wrong-type: a field has the wrong JSON type
  kMissingField,      // missing-field: a required field is absent
  kBadGuid,           // bad-guid: a guid that is not a UUID
  kUnknownOperation,  // unknown-operation: operationType outside the V1/V2 sets
  kUnknownType,       // unknown-type: message.type is neither a V1 nor a V2 notification
  kHookTopic,         // hook-topic: an ATLAS_HOOK message; the wrong topic was exported
  kBadEncoding,       // bad-encoding: GZIP/Base64 payload that does not decode
  kBadSplit,          // bad-split: inconsistent or incomplete split message
  kBadRelationship,   // bad-relationship: relationship without both ends and a label
};
inline constexpr std::size_t kRejectCodeCount = 12;

std::string_view to_string(RejectCode code);

// Thrown by the decoding layers for one bad record; the reader catches it, attaches the record,
// and hands it to the reject policy. Message text is the reason only; position is separate.
class InputError : public std::runtime_error {
 public:
  InputError(RejectCode code, const std::string& reason)
      : std::runtime_error(reason), code_(code) {}
  RejectCode code() const { return code_; }

 private:
  RejectCode code_;
};

// "events.jsonl:12:3456" (kcat records add " (topic/partition@offset)").
std::string format_position(const SourcePosition& pos);

}  // namespace atlas2kudu
