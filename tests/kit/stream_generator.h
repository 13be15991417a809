// Seeded random Event streams that hit the hard cases of ordering, mapping and net effect, and
// random prior states.
//
// Streams are built from small pools (guids, type names, qualified names, tag names, edge labels)
// so collisions are frequent, out of "moves" that each emit a few events: creates, renames, type
// changes, qualifiedName trades (direct and via a temporary name), delete-and-recreate under a new
// guid, updates and classifications before create, partial updates, tag sets shrinking to empty,
// propagated tags, edges and their cascades, relationship deletes, redeliveries and replays. String
// fields carry quotes, backslashes, newlines, control characters, NUL and non-ASCII UTF-8; props
// carry numbers written oddly (1.0, 1e3, -0, 30-digit integers).
//
// Deterministic: the same seed and config give the same events (std::mt19937_64 and nothing else).
// classify_stream() finds the cases in a stream by simulation, independently of the generator's
// intent, so coverage tests check what was produced rather than what was meant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/event.h"
#include "kudu_store.h"

namespace atlas2kudu::testkit {

struct GeneratorConfig {
  std::size_t length = 120;         // number of events (the stream is cut to exactly this)
  std::size_t guids = 6;            // entity guid pool (as many again stay fresh for recreates)
  std::size_t type_names = 3;       // 1..5
  std::size_t qualified_names = 6;  // 2..10
  std::size_t tag_names = 4;        // 1..6
  std::size_t edge_labels = 3;      // 1..4
  std::int64_t start_time_us = 1'000'000;
  bool big_values = false;  // sometimes add 200-2000 byte values (exercises the props cap)
};

// What classify_stream() can recognise.
enum class Case : std::uint8_t {
  kRename,                      // an entity's qualifiedName changes, type unchanged
  kTypeChange,                  // an entity's typeName changes
  kTypeChangeWithoutQn,         // ... in an event without qualifiedName (re-key with stored qn)
  kQnTradeDirect,               // A: x->y, B: y->x
  kQnTradeViaTemporary,         // A: x->t, B: y->x, A: t->y
  kDeleteRecreateSameQn,        // a new guid is created with a deleted entity's (type, qn)
  kUpdateBeforeCreate,          // ENTITY_UPDATE of a guid before its ENTITY_CREATE
  kClassificationBeforeCreate,  // CLASSIFICATION_* of a guid before its ENTITY_CREATE
  kPartialUpdateWithoutQn,      // ENTITY_UPDATE without qualifiedName of a known entity
  kTagSetShrinksToEmpty,        // a non-empty tag set becomes empty
  kTagSetShrinks,               // a tag set loses some but not all tags
  kDuplicateTagInSet,           // one event lists a tag name twice
  kPropagatedTag,               // classification.entityGuid != guid
  kEdgeCascadeOnDelete,         // ENTITY_DELETE of an entity with live edges
  kRelationshipDelete,          // RELATIONSHIP_DELETE of a live edge
  kRelationshipUpdateDeleted,   // RELATIONSHIP_UPDATE with status DELETED of a live edge
  kRedelivery,                  // an event identical to an earlier one
  kReplay,                      // two or more consecutive events repeating an earlier run
  kSameTimestamp,               // two events of one guid with the same event time
  kTimeGoesBackwards,           // an event of a guid older than the previous one of that guid
  kOddNumbers,                  // attribute numbers like 1.0, 1e3, -0, or 20+ digit integers
  kStringQuote,                 // a ' or " in a string field (qn, name, type, tag, label)
  kStringBackslash,
  kStringNewline,
  kStringControl,  // a control character other than LF and NUL
  kStringNul,
  kStringNonAscii,
  kCount
};
std::string_view to_string(Case c);

// A random stream per the config. Same seed and config -> same events.
std::vector<Event> generate_stream(std::uint64_t seed, const GeneratorConfig& config = {});

// The cases a stream contains, found by simulating it (see Case).
std::set<Case> classify_stream(std::span<const Event> events);

// The audit seq the generator gives an event: first 8 bytes of SHA-256 over a canonical text of
// its content (everything but the source position and legacy flag), so identical events share it.
std::int64_t content_audit_seq(const Event& event);

// A random prior state reachable by the projector: the projection of a random stream of `events`
// events (seeded, so deterministic) from empty tables, under `options` (tombstone, cap, encoding).
KuduStore generate_store(std::uint64_t seed, const CompileOptions& options,
                         std::size_t events = 60);

// How write_export lays out records. Every choice is random per record, seeded by the stream
// seed and the record's content, so a redelivered event (identical content) is written
// byte-identically, as Kafka redelivers it.
struct ExportStyle {
  bool shuffle_members = true;    // members of every object in a random order
  bool random_whitespace = true;  // random insignificant whitespace between tokens
  bool random_escapes = true;     // some plain characters written as \u escapes, guids in
                                  // upper case or plain hex
  int legacy_v1_percent = 25;     // entity and tag events written as V1 where V1 can carry them
};

// The events as an ATLAS_ENTITIES export: one envelope per line, ENTITY_NOTIFICATION_V2 (or V1:
// id/values/traits/traitNames, event time from msgCreationTime) with the event's fields. Read back
// by the reader, it gives the same events (pos, audit_seq and legacy_v1 aside; attribute order
// and attribute JSON layout may differ, V1 tags come in map order).
std::string write_export(std::span<const Event> events, std::uint64_t seed,
                         const ExportStyle& style = {});

// The first difference between events as generated and as read back from write_export, or
// nullopt: op, guid, type, names, relationship and event time equal; attributes equal as a set of
// (name, value compared as JSON); tags in order (as a set for V1 records, whose map has no
// order). Positions, audit seqs and the legacy flag are the reader's own.
std::optional<std::string> read_back_difference(std::span<const Event> written,
                                                std::span<const Event> read);

// The guid the generator uses for pool index `i` ("0000000i-0000-4000-8000-00000000000i" style).
Guid generator_guid(std::size_t i);

}  // namespace atlas2kudu::testkit
