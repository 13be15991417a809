#include "compile/spill_store.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "atlas2kudu/error.h"
#include "util/os_error.h"

namespace atlas2kudu {

namespace {

constexpr std::size_t kLogBufferBytes = std::size_t{1} << 20;
constexpr std::size_t kProbeRead = 2;             // buckets per index read of get()
constexpr std::size_t kChunkBuckets = 1024;       // put(): the index is updated a chunk at a time
constexpr std::size_t kChunkThreshold = 8;        // ... where the batch has this many entries
constexpr std::size_t kRebuildChunk = 16384;      // old buckets per read while doubling
constexpr unsigned kMaxBits = 40;                 // 96 TiB of index: a hash gone wrong
constexpr std::uint64_t kLengthHintMax = 0xFFFF;  // the location's low 16 bits

std::string default_parent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

// `budget_helps`: the failure came while spilling, which a larger --memory-budget makes rarer; not
// for a directory that cannot be made at all.
[[noreturn]] void fail_spill(const std::string& what, bool budget_helps = true) {
  throw Error(ErrorCategory::kIo,
              fmt::format("{}: {}; set --spill-dir to a writable directory with free space{}", what,
                          os_error_text(errno), budget_helps ? ", or raise --memory-budget" : ""));
}

}  // namespace

// Guids ever put: a Bloom filter of fixed size (4 MiB, 4 probes), so that looking up an entity
// never spilled (every new entity, with --prior none) costs no read. Its false positives only
// cost a read: about 1% at 3 million spilled entities, more beyond.
class SpillStore::Written {
 public:
  Written() : bits_(kBits / 64) {}
  // `hash`: the guid's keyed hash (also its home in the index: one hash per guid and call).
  void add(std::uint64_t hash) {
    for (const std::uint64_t bit : probes(hash)) bits_[bit / 64] |= std::uint64_t{1} << (bit % 64);
  }
  bool may_contain(std::uint64_t hash) const {
    for (const std::uint64_t bit : probes(hash)) {
      if (!(bits_[bit / 64] & (std::uint64_t{1} << (bit % 64)))) return false;
    }
    return true;
  }

 private:
  static constexpr std::uint64_t kBits = std::uint64_t{32} << 20;
  static std::array<std::uint64_t, 4> probes(std::uint64_t h1) {
    // Keyed (util/keyed_hash.h), so that crafted guids cannot make every lookup a false positive.
    const std::uint64_t h2 = ((h1 >> 32) | (h1 << 32)) * 0xbf58476d1ce4e5b9ULL | 1;
    return {h1 % kBits, (h1 + h2) % kBits, (h1 + 2 * h2) % kBits, (h1 + 3 * h2) % kBits};
  }
  std::vector<std::uint64_t> bits_;
};

std::size_t SpillStore::pending_entries_for(std::size_t knowledge_budget) {
  return std::clamp<std::size_t>(knowledge_budget / 8 / sizeof(Pending), 4096, kPendingEntries);
}

void SpillStore::check_parent(const std::string& parent) {
  const std::string where = parent.empty() ? default_parent() : parent;
  std::string dir = where + "/atlas2kudu-spill-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    const char* from = parent.empty() ? (where == "/tmp" ? " (the default)" : " ($TMPDIR)") : "";
    fail_spill(fmt::format("cannot create the knowledge spill directory in {}{}", where, from),
               false);
  }
  ::rmdir(dir.c_str());
}

SpillStore::SpillStore(const std::string& parent, Hash hash, std::size_t pending_entries)
    : hash_(hash),
      pending_limit_(std::max<std::size_t>(pending_entries, 1)),
      written_(std::make_unique<Written>()) {
  static_assert(sizeof(Slot) == kSlotBytes);  // the index's slot, as the header describes it
  const std::string where = parent.empty() ? default_parent() : parent;
  std::string dir = where + "/atlas2kudu-spill-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) fail(fmt::format("cannot create a directory in {}", where));
  const std::array<std::pair<int*, const char*>, 3> files{
      {{&log_fd_, "/knowledge.log"}, {&index_fd_, "/index.a"}, {&spare_fd_, "/index.b"}}};
  int error = 0;
  for (const auto& [fd, name] : files) {
    const std::string path = dir + name;
    *fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (*fd < 0 && error == 0) error = errno;
    // Unlinked at once: the open file lives until the process ends, whichever way it ends.
    ::unlink(path.c_str());
  }
  ::rmdir(dir.c_str());
  if (error == 0 &&
      ::ftruncate(index_fd_, static_cast<off_t>(total_buckets(bits_) * kBucketBytes)) != 0)
    error = errno;
  if (error != 0) {
    for (const auto& file : files)
      if (*file.first >= 0) ::close(*file.first);  // no destructor for a throwing constructor
    errno = error;
    fail(fmt::format("cannot create the knowledge spill files in {}", dir));
  }
  log_buffer_.reserve(kLogBufferBytes + 4096);
}

SpillStore::~SpillStore() {
  for (const int fd : {log_fd_, index_fd_, spare_fd_})
    if (fd >= 0) ::close(fd);
}

std::uint64_t SpillStore::hash_of(const Guid& guid) const {
  return hash_ ? hash_(guid) : GuidHash()(guid);
}

bool SpillStore::get(const Guid& guid, std::string& out) {
  const std::uint64_t location = locate(guid);
  if (location == 0) return false;
  read_record(location, guid, out);
  return true;
}

std::uint64_t SpillStore::locate(const Guid& guid) {
  const std::uint64_t hash = hash_of(guid);
  if (!written_->may_contain(hash)) return 0;
  if (const std::uint64_t location = pending_location(hash, guid)) return location;
  const std::size_t first = home(hash, bits_);
  for (std::size_t b = first; b < first + kMaxProbe;) {
    const std::size_t n = read_buckets(b, std::min(kProbeRead, first + kMaxProbe - b), probe_);
    for (const Slot& slot : probe_) {
      // Nothing is ever removed, so a guid sits before the first empty slot of its probe run.
      if (slot.location == 0) return 0;
      if (slot.guid == guid) return slot.location;
    }
    b += n;
  }
  return 0;
}

void SpillStore::put(const std::vector<std::pair<Guid, std::string>>& entries) {
  const std::size_t old_size = pending_.size();
  // Exactly what is needed: the vector's doubling would hold up to twice the limit.
  pending_.reserve(old_size + entries.size());
  for (const auto& [guid, bytes] : entries) {
    const std::uint64_t hash = hash_of(guid);
    written_->add(hash);
    const std::uint64_t location =
        (append(guid, bytes) + 1) << 16 | std::min<std::uint64_t>(bytes.size(), kLengthHintMax);
    pending_.push_back(Pending{hash, guid, location});
  }
  flush_log();  // before anything points at the records: reads only ever read the file
  // Home order is hash order at every table size. Both steps are stable: a guid put twice, in one
  // batch or in two, keeps the order of its puts.
  const auto by_hash = [](const Pending& a, const Pending& b) { return a.hash < b.hash; };
  const auto batch = pending_.begin() + static_cast<std::ptrdiff_t>(old_size);
  std::stable_sort(batch, pending_.end(), by_hash);
  std::inplace_merge(pending_.begin(), batch, pending_.end(), by_hash);
  if (pending_.size() >= pending_limit_) write_pending();
}

std::uint64_t SpillStore::entries() {
  write_pending();
  return count_;
}

std::uint64_t SpillStore::pending_location(std::uint64_t hash, const Guid& guid) const {
  auto it = std::upper_bound(pending_.begin(), pending_.end(), hash,
                             [](std::uint64_t h, const Pending& p) { return h < p.hash; });
  // Backwards from the last entry of this hash: the last put of the guid wins.
  for (; it != pending_.begin() && (it - 1)->hash == hash; --it) {
    if ((it - 1)->guid == guid) return (it - 1)->location;
  }
  return 0;
}

void SpillStore::write_pending() {
  if (pending_.empty()) return;
  if ((count_ + pending_.size()) * 10 > buckets() * kSlotsPerBucket * 7) grow(pending_.size());
  for (std::size_t from = 0; !apply(from);) grow(pending_.size() - from);
  pending_.clear();
}

std::ptrdiff_t SpillStore::place(std::vector<Slot>& slots, std::size_t base, std::size_t home,
                                 const Guid& guid, std::uint64_t location, bool* added) {
  const std::size_t begin = (home - base) * kSlotsPerBucket;
  const std::size_t end = std::min(slots.size(), begin + kMaxProbe * kSlotsPerBucket);
  for (std::size_t i = begin; i < end; ++i) {
    if (slots[i].location != 0 && slots[i].guid != guid) continue;
    *added = slots[i].location == 0;
    slots[i] = Slot{guid, location};
    return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

bool SpillStore::apply(std::size_t& from) {
  const std::vector<Pending>& pending = pending_;
  for (std::size_t i = from; i < pending.size();) {
    const std::size_t chunk = home(pending[i].hash, bits_) / kChunkBuckets;
    std::size_t end = i;
    while (end < pending.size() && home(pending[end].hash, bits_) / kChunkBuckets == chunk) ++end;
    bool added = false;
    if (end - i >= kChunkThreshold) {
      // Several entries in this chunk: one read and one write of it (and the probe tail after it,
      // which the next chunk then reads back).
      const std::size_t first = chunk * kChunkBuckets;
      const std::size_t n = read_buckets(first, kChunkBuckets + kMaxProbe - 1, chunk_);
      for (; i < end; ++i) {
        const Pending& p = pending[i];
        if (place(chunk_, first, home(p.hash, bits_), p.guid, p.location, &added) < 0) break;
        count_ += added;
      }
      write_buckets(index_fd_, first, chunk_.data(), n);
      if (i < end) {
        from = i;
        return false;
      }
      continue;
    }
    for (; i < end; ++i) {
      const Pending& p = pending[i];
      const std::size_t h = home(p.hash, bits_);
      read_buckets(h, kMaxProbe, probe_);
      const std::ptrdiff_t at = place(probe_, h, h, p.guid, p.location, &added);
      if (at < 0) {
        from = i;
        return false;
      }
      write_at(index_fd_, &probe_[static_cast<std::size_t>(at)], kSlotBytes,
               h * kBucketBytes + static_cast<std::size_t>(at) * kSlotBytes,
               "cannot write the knowledge spill index");
      count_ += added;
    }
  }
  from = pending.size();
  return true;
}

std::uint64_t SpillStore::append(const Guid& guid, std::string_view bytes) {
  const std::uint64_t offset = log_end_;
  const auto length = static_cast<std::uint32_t>(bytes.size());
  char length_bytes[4];
  for (int i = 0; i < 4; ++i) length_bytes[i] = static_cast<char>(length >> (8 * i));
  log_buffer_.append(reinterpret_cast<const char*>(guid.bytes.data()), guid.bytes.size());
  log_buffer_.append(length_bytes, sizeof length_bytes);
  log_buffer_.append(bytes);
  log_end_ += kRecordHeader + bytes.size();
  if (log_buffer_.size() >= kLogBufferBytes) flush_log();
  return offset;
}

void SpillStore::flush_log() {
  if (log_buffer_.empty()) return;
  write_at(log_fd_, log_buffer_.data(), log_buffer_.size(), log_flushed_,
           "cannot write the knowledge spill file");
  log_flushed_ += log_buffer_.size();
  log_buffer_.clear();
}

void SpillStore::read_record(std::uint64_t location, const Guid& guid, std::string& out) {
  const std::uint64_t offset = (location >> 16) - 1;
  const std::uint64_t hint = location & kLengthHintMax;
  out.resize(kRecordHeader + hint);
  read_at(log_fd_, out.data(), out.size(), offset, "cannot read the knowledge spill file");
  std::uint32_t length = 0;
  for (int i = 0; i < 4; ++i)
    length |= std::uint32_t{static_cast<unsigned char>(out[16 + i])} << (8 * i);
  if (std::memcmp(out.data(), guid.bytes.data(), guid.bytes.size()) != 0 ||
      (length < kLengthHintMax && length != hint)) {
    throw Error(ErrorCategory::kInternal, "the knowledge spill file does not match its index");
  }
  if (length < kLengthHintMax) {
    out.erase(0, kRecordHeader);
  } else {
    out.resize(length);
    read_at(log_fd_, out.data(), length, offset + kRecordHeader,
            "cannot read the knowledge spill file");
  }
}

std::size_t SpillStore::read_buckets(std::size_t first, std::size_t count, std::vector<Slot>& out) {
  count = std::min(count, total_buckets(bits_) - first);
  out.resize(count * kSlotsPerBucket);
  read_at(index_fd_, out.data(), count * kBucketBytes, first * kBucketBytes,
          "cannot read the knowledge spill index");
  return count;
}

void SpillStore::write_buckets(int fd, std::size_t first, const Slot* slots, std::size_t count) {
  write_at(fd, slots, count * kBucketBytes, first * kBucketBytes,
           "cannot write the knowledge spill index");
}

void SpillStore::grow(std::uint64_t extra) {
  unsigned bits = bits_ + 1;
  while ((count_ + extra) * 10 > (std::uint64_t{1} << bits) * kSlotsPerBucket * 7) ++bits;
  for (;; ++bits) {
    // A keyed 64-bit hash spreads guids evenly: a table this much larger than its entries that
    // still has no room means hashes shared far beyond chance (a test's hash).
    if (bits > kMaxBits || (std::uint64_t{1} << bits) > 64 * (count_ + extra + kMaxProbe)) {
      errno = EOVERFLOW;
      fail("the knowledge spill index cannot place an entry: too many guids share a home");
    }
    if (rebuild(bits)) {
      std::swap(index_fd_, spare_fd_);
      bits_ = bits;
      // The old table's blocks are no longer needed; the file is reused for the next doubling.
      if (::ftruncate(spare_fd_, 0) != 0) fail("cannot shrink the knowledge spill index");
      return;
    }
  }
}

// Writes the table of 2^new_bits homes into spare_fd_, front to back. An entry of old bucket j
// has its old home within kMaxProbe - 1 buckets before j, and its new home at twice that or
// one more: once the old buckets before j are placed, no later entry can land before new bucket
// 2 (j - kMaxProbe + 1), so everything before it is final and written out.
bool SpillStore::rebuild(unsigned new_bits) {
  if (::ftruncate(spare_fd_, 0) != 0 ||
      ::ftruncate(spare_fd_, static_cast<off_t>(total_buckets(new_bits) * kBucketBytes)) != 0)
    fail("cannot grow the knowledge spill index");
  std::vector<Slot> window;  // new buckets from window_base on
  std::size_t window_base = 0;
  const auto write_front = [&](std::size_t until) {
    const std::size_t n = std::min(until - window_base, window.size() / kSlotsPerBucket);
    write_buckets(spare_fd_, window_base, window.data(), n);
    window.erase(window.begin(), window.begin() + static_cast<std::ptrdiff_t>(n * kSlotsPerBucket));
    window_base = until;
  };
  const std::size_t old_total = total_buckets(bits_);
  bool added = false;
  for (std::size_t j = 0; j < old_total;) {
    const std::size_t n = read_buckets(j, kRebuildChunk, chunk_);
    for (const Slot& slot : chunk_) {
      if (slot.location == 0) continue;
      const std::size_t h = home(hash_of(slot.guid), new_bits);
      if (h < window_base) throw Error(ErrorCategory::kInternal, "spill index: entry out of place");
      const std::size_t need = (h + kMaxProbe - window_base) * kSlotsPerBucket;
      if (window.size() < need) window.resize(need, Slot{Guid{}, 0});
      if (place(window, window_base, h, slot.guid, slot.location, &added) < 0) return false;
    }
    j += n;
    if (j >= kMaxProbe - 1 && 2 * (j - kMaxProbe + 1) > window_base)
      write_front(2 * (j - kMaxProbe + 1));
  }
  write_front(window_base + window.size() / kSlotsPerBucket);
  return true;
}

void SpillStore::write_at(int fd, const void* data, std::size_t size, std::uint64_t offset,
                          const char* what) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      fail(what);
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void SpillStore::read_at(int fd, void* data, std::size_t size, std::uint64_t offset,
                         const char* what) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;  // the file is shorter than what was written to it
      fail(what);
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void SpillStore::fail(const std::string& what) const {
  fail_spill(what);
}

}  // namespace atlas2kudu
