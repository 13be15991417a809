// --checkpoint FILE: how far the input has been applied, so that a rerun after a failure (or the
// next cron run over the same files) skips what is already in the tables.
//
// After each fully applied window, apply records for every source the index of the first record
// not yet fully applied, and for Kafka inputs (kcat -J, or console output with print.offset) the
// next offset per topic/partition. The file is replaced atomically (written beside, fsynced,
// renamed), so a kill at any moment leaves either the previous or the new checkpoint:
//
//   {"format":"atlas2kudu-checkpoint/1","windows_applied":3,"events_applied":150,
//    "sources":[{"name":"a.jsonl","identity":"9f2c…","next_record":150,"complete":false}],
//    "kafka":[{"topic":"ATLAS_ENTITIES","partition":0,"next_offset":1204}]}
//
// A source is recognised on the rerun by its identity (a hash of its first 64 KiB), not its name,
// so a renamed file still resumes and a different file under the same name is read from the start.
// Records before a split message's first chunk are kept as a resume point until the message
// completes. Resuming is exact when each window's stored state is read before it is compiled
// (--prior impala); with --prior none the resumed run knows only what it reads itself.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace atlas2kudu {

struct SourceMark {
  std::string name;
  std::string identity;  // empty for stdin: it is skipped by Kafka offsets only
  std::uint64_t next_record = 0;
  bool complete = false;

  friend bool operator==(const SourceMark&, const SourceMark&) = default;
};

using KafkaPartition = std::pair<std::string, std::int32_t>;  // topic, partition

struct InputProgress {
  std::vector<SourceMark> sources;
  std::map<KafkaPartition, std::int64_t> kafka_next_offset;

  friend bool operator==(const InputProgress&, const InputProgress&) = default;
};

struct Checkpoint {
  InputProgress progress;
  std::uint64_t windows_applied = 0;
  std::uint64_t events_applied = 0;
};

// Reads a checkpoint; a missing file is an empty checkpoint (a first run). Throws
// std::runtime_error naming the file for anything unreadable or malformed.
Checkpoint load_checkpoint(const std::string& path);

// Replaces `path` atomically with `checkpoint`. Throws std::system_error on I/O failure.
void save_checkpoint(const std::string& path, const Checkpoint& checkpoint);

std::string checkpoint_json(const Checkpoint& checkpoint);

}  // namespace atlas2kudu
