#include "input/notification.h"

#include <fmt/core.h>
#include <simdjson.h>

#include <new>
#include <string>

#include "input/envelope.h"
#include "input/json_text.h"
#include "input/payload.h"
#include "util/base64.h"
#include "util/gzip.h"
#include "util/utf8.h"

namespace atlas2kudu {

namespace od = simdjson::ondemand;

namespace {

// A buffer with simdjson's padding after the content.
void assign_padded(std::string& buf, std::string_view content) {
  buf.reserve(content.size() + simdjson::SIMDJSON_PADDING);
  buf.assign(content);
}

}  // namespace

struct NotificationDecoder::Impl {
  Impl(SplitAssembler& splits, DecodeLimits limits) : splits(splits), limits(limits) {}

  // Decodes the level `env` was parsed from (`text`), and the levels inside it. `depth` counts
  // the layers above: 1 per kcat record, 2 per decompressed or reassembled message.
  // `kafka_ts` is the enclosing kcat record's timestamp, if any.
  std::optional<Event> decode_level(Envelope& env, std::string_view text, SourcePosition& pos,
                                    int depth, std::optional<std::int64_t> kafka_ts);
  // `raw_is_minified`: message_raw has no whitespace outside its strings (from a compact record).
  Event decode_payload(std::string_view message_raw, PayloadFields& fields,
                       const EventTimeFallbacks& fallbacks, const SourcePosition& pos,
                       bool raw_is_minified);
  // Base64-decodes (and, for GZIP, inflates) a message into inflated_buffer, padded.
  std::string_view inflate_message(std::string_view base64, bool gzip);
  // parse_envelope at this decoder's limits, keeping attribute values unless validation_only.
  // `skipped`: the whitespace trimmed off the front of the text as it came (a kcat payload's), so
  // that a byte position names the text as it is in the record.
  Envelope parse(std::string_view text, const char* what, std::size_t skipped = 0) {
    json_text = what;
    json_text_bytes = text;
    json_text_skipped = skipped;
    return parse_envelope(envelope_parser, text, what, limits.max_json_depth, !validation_only,
                          skipped);
  }

  SplitAssembler& splits;
  DecodeLimits limits;
  od::parser envelope_parser;
  std::string kcat_buffer;
  std::function<bool(const SourcePosition::Kafka&)> pass_over;  // NotificationDecoder::pass_over
  std::string gunzipped;
  std::string inflated_buffer;
  std::string minified;
  std::string_view record;                 // the record being decoded, verbatim
  std::string_view record_console_prefix;  // and the console prefixes before it on its line
  // The JSON text being read: "record", or the one inside it ("payload", "message
  // (decompressed)", ...) that invalid JSON is then said to be in.
  const char* json_text = "record";
  std::string_view json_text_bytes;           // ... and its bytes, for the position of bad UTF-8
  std::size_t json_text_skipped = 0;          // ... after this many bytes of whitespace
  bool record_compact = false;                // ... has no whitespace outside its strings
  bool validation_only = false;               // NotificationDecoder::validation_only
  std::vector<HeldRecord> completed_records;  // of the split message the record completed
  std::optional<SourcePosition::Kafka> record_kafka;  // a kcat record's, once read
};

std::string_view NotificationDecoder::Impl::inflate_message(std::string_view base64, bool gzip) {
  try {
    std::string decoded = base64_decode(base64);
    if (gzip) {
      gunzip(decoded, limits.max_inflated_bytes, gunzipped);
      assign_padded(inflated_buffer, gunzipped);
    } else {
      // A split without compression: Base64 only, and held to the same limit.
      if (decoded.size() > limits.max_inflated_bytes) {
        throw InputError(
            RejectCode::kTooLarge,
            fmt::format("message: decodes to {} bytes, more than {} ({})", decoded.size(),
                        limits.max_inflated_bytes, limits.inflated_limit_source));
      }
      assign_padded(inflated_buffer, decoded);
    }
  } catch (const DecodeError& e) {
    const bool too_large = e.kind() == DecodeError::Kind::kTooLarge;
    throw InputError(too_large ? RejectCode::kTooLarge : RejectCode::kBadEncoding,
                     too_large
                         ? fmt::format("message: {} ({})", e.what(), limits.inflated_limit_source)
                         : fmt::format("message: {}", e.what()));
  }
  return inflated_buffer;
}

std::optional<Event> NotificationDecoder::Impl::decode_level(Envelope& env, std::string_view text,
                                                             SourcePosition& pos, int depth,
                                                             std::optional<std::int64_t> kafka_ts) {
  if (env.kcat) {
    if (depth > 0) {
      throw InputError(RejectCode::kWrongType, "kcat record nested inside a message");
    }
    pos.kafka = env.kafka();
    record_kafka = pos.kafka;
    if (pass_over && pass_over(*pos.kafka)) return std::nullopt;
    if (env.payload_error) throw *env.payload_error;
    if (!env.payload) {
      throw InputError(RejectCode::kMissingField, "payload: kcat record without a value (null)");
    }
    // Nothing below refills kcat_buffer while the payload is decoded: only depth 0 gets here.
    const std::string_view trimmed = trim_json_space(*env.payload);
    assign_padded(kcat_buffer, trimmed);
    Envelope inner = parse(kcat_buffer, "payload",
                           static_cast<std::size_t>(trimmed.data() - env.payload->data()));
    if (inner.kcat) throw InputError(RejectCode::kWrongType, "payload: nested kcat record");
    return decode_level(inner, kcat_buffer, pos, depth + 1, env.kafka_ts);
  }

  if (env.bare_payload()) {
    // A bare payload (legacy, no envelope): the whole document is the message.
    return decode_payload(trim_json_space(text), env.top,
                          EventTimeFallbacks{std::nullopt, kafka_ts}, pos,
                          depth == 0 && record_compact);
  }
  if (!env.has_message || env.message_type == od::json_type::null) {
    throw InputError(RejectCode::kMissingField, "message: missing");
  }

  if (env.split_count > 1) {
    if (depth > 1) {
      throw InputError(RejectCode::kBadSplit, "split message nested in a split message");
    }
    if (env.msg_id.empty()) {
      throw InputError(RejectCode::kBadSplit, "msgId: a split message chunk needs a msgId");
    }
    if (env.message_type != od::json_type::string) {
      throw InputError(RejectCode::kBadSplit, "message: a split message chunk must be a string");
    }
    std::optional<AssembledMessage> whole =
        splits.add(SplitChunk{env.msg_id, env.split_idx, env.split_count, env.gzip,
                              std::move(env.message_string)},
                   pos, record, record_console_prefix);
    if (!whole) return std::nullopt;
    completed_records = std::move(whole->records);
    pos.first_source_index = whole->first.source_index;
    pos.first_record = whole->first.record;
    // inflate_message's buffer is padded, and deeper levels refuse to inflate again (depth
    // checks), so the inner envelope is decoded in place.
    const std::string_view inner_text = inflate_message(whole->text, whole->gzip);
    Envelope inner = parse(inner_text, "message (reassembled split message)");
    if (inner.kcat || inner.split_count > 1 || inner.message_type == od::json_type::string) {
      throw InputError(RejectCode::kBadSplit,
                       "message: a reassembled split message must hold a plain envelope");
    }
    return decode_level(inner, inner_text, pos, depth + 2, kafka_ts);
  }

  if (env.message_type == od::json_type::string) {
    if (!env.gzip) {
      throw InputError(RejectCode::kWrongType,
                       "message: a string message needs msgCompressionKind GZIP");
    }
    if (depth > 1) {
      throw InputError(RejectCode::kBadEncoding, "compressed message inside a compressed message");
    }
    const std::string_view inner_text = inflate_message(env.message_string, true);
    Envelope inner = parse(inner_text, "message (decompressed)");
    if (inner.kcat || inner.split_count > 1 || inner.message_type == od::json_type::string) {
      throw InputError(RejectCode::kBadEncoding,
                       "message: a decompressed message must hold a plain envelope");
    }
    return decode_level(inner, inner_text, pos, depth + 2, kafka_ts);
  }
  return decode_payload(env.message_raw, env.message,
                        EventTimeFallbacks{env.msg_creation_time, kafka_ts}, pos,
                        depth == 0 && record_compact);
}

Event NotificationDecoder::Impl::decode_payload(std::string_view message_raw, PayloadFields& fields,
                                                const EventTimeFallbacks& fallbacks,
                                                const SourcePosition& pos, bool raw_is_minified) {
  Event event;
  event.pos = pos;
  if (!validation_only) {
    event.audit_seq = message_audit_seq(message_raw, minified, raw_is_minified);
  } else if (!raw_is_minified) {
    message_audit_seq(message_raw, minified, false);  // for the minify's verdict
  }
  payload_to_event(fields, fallbacks, event, limits.max_cell_bytes);
  return event;
}

NotificationDecoder::NotificationDecoder(SplitAssembler& splits, DecodeLimits limits)
    : impl_(std::make_unique<Impl>(splits, limits)) {}

NotificationDecoder::~NotificationDecoder() = default;

void NotificationDecoder::pass_over(std::function<bool(const SourcePosition::Kafka&)> filter) {
  impl_->pass_over = std::move(filter);
}

void NotificationDecoder::validation_only() {
  impl_->validation_only = true;
}

const std::vector<HeldRecord>& NotificationDecoder::completed_records() const {
  return impl_->completed_records;
}

const std::optional<SourcePosition::Kafka>& NotificationDecoder::record_kafka() const {
  return impl_->record_kafka;
}

std::optional<Event> NotificationDecoder::decode(std::string_view text, const SourcePosition& pos,
                                                 bool compact,
                                                 std::optional<std::int64_t> kafka_timestamp_ms,
                                                 std::string_view console_prefix) {
  SourcePosition where = pos;
  where.first_source_index = pos.source_index;
  where.first_record = pos.record;
  impl_->record = text;
  impl_->record_console_prefix = console_prefix;
  impl_->record_compact = compact;
  impl_->completed_records.clear();
  impl_->record_kafka.reset();
  try {
    Envelope env = impl_->parse(text, "record");
    return impl_->decode_level(env, text, where, 0, kafka_timestamp_ms);
  } catch (const simdjson::simdjson_error& e) {
    // Inside a record ("message (decompressed): invalid JSON: ..."): the record's own text may be
    // fine, and the reader needs to know which text to look at.
    const std::string_view inner = impl_->json_text;
    const std::string where = inner == "record" ? std::string() : fmt::format("{}: ", inner);
    const simdjson::error_code code = e.error();
    // The process's memory ran out, not the record's text: a rejection would blame the input
    // (exit 2 past --max-rejects) for a limit of the machine (`ulimit -v`).
    if (code == simdjson::MEMALLOC) throw std::bad_alloc();
    // "at byte N of the record", or of the text named, counted from where it starts there.
    const auto at_byte = [&](std::size_t at) {
      return fmt::format("at byte {}{}", impl_->json_text_skipped + at,
                         where.empty() ? " of the record" : "");
    };
    if (code == simdjson::UTF8_ERROR) {
      // Where, since a record may be a megabyte long: the first byte that starts no valid
      // sequence, counted from the start of the text named.
      const std::string_view bytes = impl_->json_text_bytes;
      const std::size_t at = valid_utf8_prefix(bytes);
      // Text that is not UTF-8: an encoding fault, told apart from JSON that is malformed.
      throw InputError(RejectCode::kBadEncoding,
                       at < bytes.size()
                           ? fmt::format("{}invalid UTF-8 in JSON text {}: \"{}\"", where,
                                         at_byte(at), printable_excerpt(bytes.substr(at), 8))
                           : where + "invalid UTF-8 in JSON text");
    }
    // Where, and what was expected there, found by reading the text again (simdjson says only
    // what kind of error it met).
    if (const auto bad = find_json_syntax_error(impl_->json_text_bytes)) {
      const std::string_view rest = impl_->json_text_bytes.substr(bad->at);
      throw InputError(
          RejectCode::kInvalidJson,
          fmt::format("{}invalid JSON {}: {}{}", where, at_byte(bad->at), bad->what,
                      rest.empty() ? "" : fmt::format(": \"{}\"", printable_excerpt(rest, 24))));
    }
    if (code == simdjson::STRING_ERROR) {
      throw InputError(RejectCode::kInvalidJson,
                       where +
                           "invalid JSON: a string holds an escape JSON does not allow (an "
                           "unknown escape, a \\u without four hex digits, or a \\u surrogate "
                           "without its pair, such as \\ud800)");
    }
    throw InputError(RejectCode::kInvalidJson,
                     fmt::format("{}invalid JSON: {}", where, simdjson::error_message(code)));
  }
}

}  // namespace atlas2kudu
