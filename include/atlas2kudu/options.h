// Options that shape the compiled SQL (SPEC §3-§5, §7). Shared by `compile`, `apply` and `ddl`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace atlas2kudu {

// How KEY columns are stored (SPEC §4).
//   kHex:    STRING of 32 lowercase hex characters, written as '0b6f3c1e...'.
//   kBinary: BINARY of 16 bytes (Impala >= 4.4), written as CAST(unhex('0b6f3c1e...') AS BINARY).
enum class KeyEncoding { kHex, kBinary };

// What ENTITY_DELETE does (SPEC §3).
//   kSoft: state = 'DELETED' on entity_flat, by_qn row and edges deleted, tags kept.
//   kHard: entity_flat row, by_qn row, edges and tags deleted.
enum class Tombstone { kSoft, kHard };

// Where the stored state of keys the input does not establish comes from (SPEC §3).
enum class PriorSource { kNone, kImpala };

struct CompileOptions {
  std::string database = "atlas";
  KeyEncoding key_encoding = KeyEncoding::kHex;
  Tombstone tombstone = Tombstone::kSoft;
  PriorSource prior = PriorSource::kNone;
  std::size_t props_max_bytes = 60000;
  std::size_t window_events = 50000;
  std::size_t batch_rows = 1000;
  std::size_t batch_bytes = std::size_t{4} << 20;
};

}  // namespace atlas2kudu
