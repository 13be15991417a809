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
#include "util/json_writer.h"

namespace atlas2kudu {

namespace od = simdjson::ondemand;

namespace {

constexpr std::string_view kFormat = "atlas2kudu-checkpoint/1";

[[noreturn]] void throw_errno(const std::string& what) {
  throw Error(ErrorCategory::kIo, fmt::format("{}: {}", what, std::strerror(errno)));
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

std::string checkpoint_json(const Checkpoint& c) {
  std::string out = fmt::format(
      "{{\"format\":\"{}\",\"windows_applied\":{},\"events_applied\":{},"
      "\"sources\":[",
      kFormat, c.windows_applied, c.events_applied);
  bool first = true;
  for (const SourceMark& s : c.progress.sources) {
    out += first ? "{\"name\":" : ",{\"name\":";
    first = false;
    append_json_string(s.name, out);
    out += ",\"identity\":";
    append_json_string(s.identity, out);
    out += fmt::format(",\"next_record\":{},\"complete\":{}}}", s.next_record, s.complete);
  }
  out += "],\"kafka\":[";
  first = true;
  for (const auto& [partition, offset] : c.progress.kafka_next_offset) {
    out += first ? "{\"topic\":" : ",{\"topic\":";
    first = false;
    append_json_string(partition.first, out);
    out += fmt::format(",\"partition\":{},\"next_offset\":{}}}", partition.second, offset);
  }
  out += "]}\n";
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
  const std::string text = checkpoint_json(checkpoint);
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno(fmt::format("{}: cannot create", temp));
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      throw_errno(fmt::format("{}: cannot write", temp));
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw_errno(fmt::format("{}: cannot sync", temp));
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    throw_errno(fmt::format("{}: cannot replace", path));
  }
  // Make the rename itself durable.
  const int dir = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
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
