#include "cli/checkpoint.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <simdjson.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "atlas2kudu/error.h"
#include "util/atomic_file.h"
#include "util/json_writer.h"

namespace atlas2kudu {

namespace od = simdjson::ondemand;

namespace {

constexpr std::string_view kFormat = "atlas2kudu-checkpoint/1";

}  // namespace

std::string checkpoint_json(const Checkpoint& c) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("format").value(kFormat);
  w.key("windows_applied").value(c.windows_applied);
  w.key("events_applied").value(c.events_applied);
  w.key("sources").begin_array();
  for (const SourceMark& s : c.progress.sources) {
    w.begin_object();
    w.key("name").value(s.name);
    w.key("identity").value(s.identity);
    w.key("next_record").value(s.next_record);
    w.key("complete").value(s.complete);
    w.end_object();
  }
  w.end_array();
  w.key("kafka").begin_array();
  for (const auto& [partition, offset] : c.progress.kafka_next_offset) {
    w.begin_object();
    w.key("topic").value(partition.first);
    w.key("partition").value(partition.second);
    w.key("next_offset").value(offset);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out += '\n';
  return out;
}

Checkpoint load_checkpoint(const std::string& path) {
  Checkpoint c;
  if (::access(path.c_str(), F_OK) != 0) return c;
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text) != simdjson::SUCCESS) {
    throw Error(ErrorCategory::kCheckpoint, fmt::format("{}: cannot read checkpoint", path));
  }
  try {
    od::parser parser;
    od::document doc = parser.iterate(text);
    bool format_ok = false;
    for (auto field : doc.get_object()) {
      const std::string_view key = field.unescaped_key();
      if (key == "format") {
        format_ok = std::string_view(field.value().get_string()) == kFormat;
      } else if (key == "windows_applied") {
        c.windows_applied = field.value().get_uint64();
      } else if (key == "events_applied") {
        c.events_applied = field.value().get_uint64();
      } else if (key == "sources") {
        for (auto item : field.value().get_array()) {
          SourceMark mark;
          for (auto f : item.get_object()) {
            const std::string_view k = f.unescaped_key();
            if (k == "name") mark.name = std::string(std::string_view(f.value().get_string()));
            if (k == "identity")
              mark.identity = std::string(std::string_view(f.value().get_string()));
            if (k == "next_record") mark.next_record = f.value().get_uint64();
            if (k == "complete") mark.complete = f.value().get_bool();
          }
          c.progress.sources.push_back(std::move(mark));
        }
      } else if (key == "kafka") {
        for (auto item : field.value().get_array()) {
          std::string topic;
          std::int64_t partition = 0, next = 0;
          for (auto f : item.get_object()) {
            const std::string_view k = f.unescaped_key();
            if (k == "topic") topic = std::string(std::string_view(f.value().get_string()));
            if (k == "partition") partition = f.value().get_int64();
            if (k == "next_offset") next = f.value().get_int64();
          }
          c.progress.kafka_next_offset[{topic, static_cast<std::int32_t>(partition)}] = next;
        }
      }
    }
    if (!format_ok) {
      throw Error(ErrorCategory::kCheckpoint,
                  fmt::format("{}: not an atlas2kudu checkpoint ({} expected)", path, kFormat));
    }
  } catch (const simdjson::simdjson_error& e) {
    throw Error(ErrorCategory::kCheckpoint,
                fmt::format("{}: malformed checkpoint: {}", path, e.what()));
  }
  return c;
}

void save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  write_file_atomically(path, checkpoint_json(checkpoint), 0600);
}

}  // namespace atlas2kudu

namespace atlas2kudu {

CheckpointFile::CheckpointFile(std::string path, Reader& reader) : path_(std::move(path)) {
  checkpoint_ = load_checkpoint(path_);
  reader.resume_from(checkpoint_.progress);
}

void CheckpointFile::window_applied(const WindowInfo& window, const Reader& reader) {
  checkpoint_.progress = reader.progress();
  ++checkpoint_.windows_applied;
  checkpoint_.events_applied += window.last_event - window.first_event + 1;
  save_checkpoint(path_, checkpoint_);
  saved_ = true;
}

void CheckpointFile::run_completed(const Reader& reader) {
  if (saved_) return;
  checkpoint_.progress = reader.progress();  // nothing new applied: keep the marks current
  save_checkpoint(path_, checkpoint_);
}

}  // namespace atlas2kudu
