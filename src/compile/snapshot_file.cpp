#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/error.h"
#include "compile/knowledge_store.h"
#include "util/utf8.h"

namespace atlas2kudu {

namespace {

constexpr std::size_t kReadChunk = std::size_t{1} << 20;

Error not_a_snapshot() {
  return Error(ErrorCategory::kCheckpoint, "not a knowledge snapshot written by this version");
}

}  // namespace

SnapshotFile::SnapshotFile(const std::string& path, std::uint64_t offset, std::uint64_t size,
                           bool check)
    : path_(path), base_(offset), size_(size) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    throw Error(ErrorCategory::kCheckpoint,
                fmt::format("{}: cannot be read: {}", one_line(path), std::strerror(errno)));
  }
  try {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      throw Error(ErrorCategory::kCheckpoint,
                  fmt::format("{}: cannot be read: {}", one_line(path), std::strerror(errno)));
    }
    if (offset > static_cast<std::uint64_t>(st.st_size) ||
        size > static_cast<std::uint64_t>(st.st_size) - offset) {
      throw not_a_snapshot();  // cut short
    }
    index(check);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

SnapshotFile::SnapshotFile(std::string bytes) : bytes_(std::move(bytes)), size_(bytes_.size()) {
  index(true);
}

SnapshotFile::~SnapshotFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SnapshotFile::read(std::uint64_t offset, std::size_t size, std::string& out) const {
  out.resize(size);
  if (fd_ < 0) {
    std::memcpy(out.data(), bytes_.data() + offset, size);
    return;
  }
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n =
        ::pread(fd_, out.data() + done, size - done, static_cast<off_t>(base_ + offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // The file was checked when it was opened: a read that fails now is the disk's.
      throw Error(ErrorCategory::kIo, fmt::format("{}: cannot be read: {}", one_line(path_),
                                                  n == 0 ? "it is shorter than when it was opened"
                                                         : std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
}

void SnapshotFile::index(bool check) {
  // Read through in chunks: an entry is parsed once the buffer holds all of it (a chunk is grown
  // for an entry larger than it), and the buffer then drops what is parsed.
  std::string buffer, chunk;
  std::uint64_t buffer_at = 0;  // the snapshot offset of buffer[0]
  std::uint64_t read_to = 0;    // ... of the next byte to read
  std::size_t used = 0;         // bytes of `buffer` parsed
  EntityKnowledge decoded;
  const auto need = [&](std::size_t bytes) {
    // Whether `bytes` past `used` are in the buffer, reading more until they are (or the end).
    while (buffer.size() - used < bytes && read_to < size_) {
      buffer.erase(0, used);
      buffer_at += used;
      used = 0;
      const std::size_t n = static_cast<std::size_t>(
          std::min<std::uint64_t>(std::max(kReadChunk, bytes), size_ - read_to));
      read(read_to, n, chunk);
      buffer += chunk;
      read_to += n;
    }
    return buffer.size() - used >= bytes;
  };
  while (buffer_at + used < size_) {
    Slot slot;
    std::size_t knowledge = 0;
    need(26);  // a guid and a varint of at most 10 bytes
    slot.header = static_cast<std::uint32_t>(
        snapshot_entry_header(std::string_view(buffer).substr(used), slot.guid, knowledge));
    if (slot.header == 0 || knowledge > size_ || !need(slot.header + knowledge)) {
      throw not_a_snapshot();
    }
    if (!slots_.empty() && !(slots_.back().guid < slot.guid)) throw not_a_snapshot();
    if (check) {
      try {
        decode_knowledge(std::string_view(buffer).substr(used + slot.header, knowledge), decoded);
      } catch (const Error&) {
        throw not_a_snapshot();
      }
      if (!is_foldable(decoded)) throw not_a_snapshot();
    }
    slot.offset = buffer_at + used;
    slot.size = static_cast<std::uint32_t>(slot.header + knowledge);
    if (slot.size != slot.header + knowledge) throw not_a_snapshot();  // 4 GiB or more
    used += slot.size;
    slots_.push_back(slot);
  }
  slots_.shrink_to_fit();
}

std::size_t SnapshotFile::find(const Guid& guid) const {
  const auto it = std::lower_bound(slots_.begin(), slots_.end(), guid,
                                   [](const Slot& s, const Guid& g) { return s.guid < g; });
  return it != slots_.end() && it->guid == guid ? static_cast<std::size_t>(it - slots_.begin())
                                                : npos;
}

void SnapshotFile::read_knowledge(std::size_t i, std::string& out) const {
  const Slot& s = slots_[i];
  read(s.offset + s.header, s.size - s.header, out);
}

void SnapshotFile::read_entry(std::size_t i, std::string& out) const {
  read(slots_[i].offset, slots_[i].size, out);
}

void SnapshotFile::write(const std::function<void(std::string_view)>& out) const {
  std::string chunk;
  for (std::uint64_t at = 0; at < size_; at += chunk.size()) {
    read(at, static_cast<std::size_t>(std::min<std::uint64_t>(kReadChunk, size_ - at)), chunk);
    out(chunk);
  }
}

namespace {

bool is_dropped(const std::vector<bool>& dropped, std::size_t i) {
  return i < dropped.size() && dropped[i];
}

}  // namespace

void SnapshotFile::write_without(const std::vector<bool>& dropped,
                                 const std::function<void(std::string_view)>& out) const {
  std::string entry;
  for (std::size_t i = 0; i < entries(); ++i) {
    if (is_dropped(dropped, i)) continue;
    read_entry(i, entry);
    out(entry);
  }
}

std::uint64_t SnapshotFile::size_without(const std::vector<bool>& dropped) const {
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < entries(); ++i) {
    if (!is_dropped(dropped, i)) bytes += entry_size(i);
  }
  return bytes;
}

std::string SnapshotFile::str() const {
  std::string all;
  write([&](std::string_view part) { all += part; });
  return all;
}

void MergedSnapshot::merge(const std::function<void(std::size_t, std::string_view)>& each,
                           std::vector<Guid>* later_guids) const {
  std::size_t next = 0;  // earlier_'s next entry
  later_([&](std::string_view entry) {
    Guid guid;
    std::size_t knowledge = 0;
    if (snapshot_entry_header(entry, guid, knowledge) == 0) throw not_a_snapshot();
    if (later_guids) later_guids->push_back(guid);
    for (; next < earlier_.entries() && earlier_.guid(next) < guid; ++next) {
      if (!is_dropped(dropped_, next)) each(next, {});
    }
    if (next < earlier_.entries() && earlier_.guid(next) == guid && !is_dropped(dropped_, next)) {
      each(next++, {});  // the earlier one's: both hold the state before the same window
    } else {
      each(SnapshotFile::npos, entry);
    }
  });
  for (; next < earlier_.entries(); ++next) {
    if (!is_dropped(dropped_, next)) each(next, {});
  }
}

std::uint64_t MergedSnapshot::size(std::vector<Guid>* later_guids) const {
  std::uint64_t bytes = 0;
  if (later_guids) later_guids->clear();
  merge(
      [&](std::size_t i, std::string_view later) {
        bytes += i == SnapshotFile::npos ? later.size() : earlier_.entry_size(i);
      },
      later_guids);
  return bytes;
}

void MergedSnapshot::write(const std::function<void(std::string_view)>& out) const {
  std::string entry;
  merge([&](std::size_t i, std::string_view later) {
    if (i == SnapshotFile::npos) return out(later);
    earlier_.read_entry(i, entry);
    out(entry);
  });
}

}  // namespace atlas2kudu
