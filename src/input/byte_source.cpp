#include "input/byte_source.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "util/digest.h"
#include "util/stop.h"
#include "util/utf8.h"
#include "util/version.h"

namespace atlas2kudu {

namespace {

// Hash of the first 64 KiB of a regular file (of its raw, possibly compressed, bytes).
std::string file_identity(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return {};
  std::string head(64 * 1024, '\0');
  const ssize_t n = pread(fd, head.data(), head.size(), 0);
  if (n < 0) return {};
  head.resize(static_cast<std::size_t>(n));
  return to_hex(sha256(head)).substr(0, 32);
}

// A file or stdin, inflated when it is gzip. zlib's gzread would do the same but ignores (and
// hides) anything after the last gzip member that is not another member, so a damaged or
// appended-to file read as a shorter, valid one; here that is an error, as is a stream cut short.
class FileByteSource final : public ByteSource {
 public:
  FileByteSource(std::string name, int fd, std::string identity)
      : name_(std::move(name)), fd_(fd), identity_(std::move(identity)), in_(kInputBuffer) {
    struct stat st {};
    may_block_ = fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode);
  }
  ~FileByteSource() override {
    if (gzip_) inflateEnd(&zs_);
    ::close(fd_);
  }

  std::size_t read(char* out, std::size_t size) override {
    if (!started_) start();
    const std::size_t n = gzip_ ? read_gzip(out, size) : read_plain(out, size);
    if (head_.size() < kTarMagicEnd) refuse_tar(std::string_view(out, n));
    return n;
  }

  std::uint64_t consumed() const override { return offset_ + in_begin_; }
  bool inflates() const override { return gzip_; }
  const std::string& name() const override { return name_; }
  std::string identity() const override { return identity_; }
  std::unique_ptr<ByteSource> reopen() const override {
    return identity_.empty() ? nullptr : open_byte_source(name_);
  }

 private:
  static constexpr std::size_t kInputBuffer = std::size_t{1} << 20;
  std::string head_;  // the first bytes read, up to kTarMagicEnd (refuse_tar)
  // Plain reads at least this large bypass in_ when it is empty (read_plain).
  static constexpr std::size_t kDirectRead = std::size_t{64} << 10;

  // Reads more raw bytes after the `avail` ones still unread at in_begin_; false at end of file,
  // then without reading again: a terminal's end of input (Ctrl-D) is given once, and start()'s
  // looks at the first bytes must not wait for a second.
  bool refill() {
    if (raw_end_) return false;
    if (in_begin_ > 0) {
      std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
      in_end_ -= in_begin_;
      offset_ += in_begin_;
      in_begin_ = 0;
    }
    const std::size_t n = read_raw(in_.data() + in_end_, in_.size() - in_end_);
    in_end_ += n;
    raw_end_ = n == 0;
    return n > 0;
  }

  // One read(2) of up to `size` raw bytes into `out`; 0 at end of file.
  std::size_t read_raw(char* out, std::size_t size) {
    for (;;) {
      // A pipe, FIFO or terminal may wait long for its next bytes: a stop request ends the wait.
      if (may_block_ && !wait_readable(fd_)) throw StopError(stop_reason());
      const ssize_t n = ::read(fd_, out, size);
      if (n >= 0) return static_cast<std::size_t>(n);
      // EAGAIN: a FIFO opened non-blocking, read before its writer wrote (wait_readable again).
      if (errno != EINTR && !(may_block_ && (errno == EAGAIN || errno == EWOULDBLOCK))) {
        throw SourceError(false,
                          fmt::format("{}: read error: {}", one_line(name_), std::strerror(errno)));
      }
    }
  }

  std::size_t available() const { return in_end_ - in_begin_; }

  // Whether a gzip member starts at in_begin_ (its two magic bytes), reading as needed.
  bool at_gzip_member() {
    while (available() < 2 && refill()) {
    }
    return available() >= 2 && static_cast<unsigned char>(in_[in_begin_]) == 0x1f &&
           static_cast<unsigned char>(in_[in_begin_ + 1]) == 0x8b;
  }

  // Data of a format atlas2kudu does not read, known by its first bytes (none can start JSON or a
  // console consumer's line): said as what it is, with the command that makes it readable,
  // instead of a not-json rejection for each "line" of its binary.
  void refuse_unread_format() {
    while (available() < kSqlSignature.size() && refill()) {
    }
    const std::string_view head(in_.data() + in_begin_, available());
    // compile's output, given back (apply out.sql): its first line is the header compile writes.
    if (head.starts_with(kSqlSignature)) {
      throw SourceError(false, fmt::format("{}: SQL written by atlas2kudu compile, not "
                                           "notifications; run it with impala-shell -f, or give "
                                           "atlas2kudu the notifications it was compiled from",
                                           one_line(name_)));
    }
    struct Format {
      std::string_view magic;
      std::string_view what;
      std::string_view remedy;
    };
    using namespace std::string_view_literals;
    static constexpr Format kFormats[] = {
        {"\xFD"
         "7zXZ\0"sv,
         "xz data", "decompress it first: xz -dc FILE | atlas2kudu ... -"},
        {"\x28\xB5\x2F\xFD"sv, "zstd data",
         "decompress it first: zstd -dc FILE | atlas2kudu ... -"},
        {"\x04\x22\x4D\x18"sv, "lz4 data", "decompress it first: lz4 -dc FILE | atlas2kudu ... -"},
        {"PK\x03\x04"sv, "a zip archive", "extract it first: unzip -p FILE | atlas2kudu ... -"},
        {"\xFF\xFE"sv, "UTF-16 text",
         "convert it first: iconv -f UTF-16 -t UTF-8 FILE | atlas2kudu ... -"},
        {"\xFE\xFF"sv, "UTF-16 text",
         "convert it first: iconv -f UTF-16 -t UTF-8 FILE | atlas2kudu ... -"},
    };
    static constexpr Format kBzip2{"BZh"sv, "bzip2 data",
                                   "decompress it first: bzip2 -dc FILE | atlas2kudu ... -"};
    const Format* found = nullptr;
    for (const Format& f : kFormats) {
      if (head.starts_with(f.magic)) found = &f;
    }
    // bzip2: "BZh", the block size 1-9, then a block's or the stream end's magic.
    if (head.size() >= 5 && head.starts_with(kBzip2.magic) && head[3] >= '1' && head[3] <= '9' &&
        (head[4] == '\x31' || head[4] == '\x17')) {
      found = &kBzip2;
    }
    if (found == nullptr) return;
    throw SourceError(false, fmt::format("{}: {}, which atlas2kudu does not read (UTF-8 text or "
                                         "gzip only); {}",
                                         one_line(name_), found->what, found->remedy));
  }

  // A tar archive (`tar czf export.tar.gz *.jsonl`), plain or inside gzip, is known by its
  // header's magic at byte 257 of what is read, POSIX "ustar\0" or GNU "ustar  \0": its header
  // would otherwise be read as part of the first record (lost with it), and its padding as bad
  // records. Text never has the NUL byte, so a record that holds "ustar" there is not taken for
  // one. Looked at over the first reads, which may be short (a pipe's).
  static constexpr std::size_t kTarMagicAt = 257;
  static constexpr std::size_t kTarMagicEnd = kTarMagicAt + 8;
  void refuse_tar(std::string_view data) {
    using namespace std::string_view_literals;
    head_.append(data.substr(0, kTarMagicEnd - head_.size()));
    if (data.empty()) head_.resize(kTarMagicEnd, '\n');  // the end: no more to look at
    if (head_.size() < kTarMagicEnd) return;
    const std::string_view magic = std::string_view(head_).substr(kTarMagicAt);
    if (!magic.starts_with("ustar\0"sv) && !magic.starts_with("ustar  \0"sv)) return;
    throw SourceError(
        false, fmt::format("{}: a tar archive{}, which atlas2kudu does not read (UTF-8 text or "
                           "gzip only); extract its files to standard output first: tar -x{}Of "
                           "FILE | atlas2kudu ... -",
                           one_line(name_), gzip_ ? " (gzip-compressed)" : "", gzip_ ? "z" : ""));
  }

  void start() {
    started_ = true;
    if (!at_gzip_member()) {
      refuse_unread_format();
      // A file named *.gz is gzip: an empty one (from `... | gzip > x.gz` killed before its
      // first byte) or one that is something else must not read as an export of nothing.
      if (name_.size() > 3 && name_.ends_with(".gz")) {
        throw SourceError(
            false,
            available() == 0
                ? fmt::format("{}: truncated gzip data: the file is empty", one_line(name_))
            : available() == 1 && static_cast<unsigned char>(in_[in_begin_]) == 0x1f
                ? fmt::format("{}: truncated gzip data: the file ends inside a gzip member, at "
                              "byte 1",
                              one_line(name_))
                : fmt::format("{}: not gzip data, though its name ends in .gz (it does not "
                              "start with the gzip magic bytes 1f 8b)",
                              one_line(name_)));
      }
      return;
    }
    // 16 + 15: a gzip wrapper only, with the largest window.
    if (inflateInit2(&zs_, 16 + 15) != Z_OK) {
      throw SourceError(false,
                        fmt::format("{}: cannot initialise the gzip decoder", one_line(name_)));
    }
    gzip_ = true;
  }

  std::size_t read_plain(char* out, std::size_t size) {
    if (available() == 0 && raw_end_) return 0;
    if (available() == 0 && size >= kDirectRead) {
      // Nothing buffered and a large request: straight into the caller's buffer, one copy (the
      // kernel's) instead of two. Plain text read this way skips in_ entirely after the first
      // megabyte, which start() buffered to look for the gzip magic.
      const std::size_t n = read_raw(out, size);
      offset_ += in_end_ + n;
      in_begin_ = in_end_ = 0;
      raw_end_ = n == 0;
      return n;
    }
    if (available() == 0 && !refill()) return 0;
    const std::size_t n = std::min(size, available());
    std::memcpy(out, in_.data() + in_begin_, n);
    in_begin_ += n;
    return n;
  }

  // Whether nothing but NUL bytes follow, to the end of the input: the padding that tape and some
  // copy tools add to a file's last block, which gzip(1) ignores too. Uses the NUL bytes it reads;
  // false at the first other byte, left at in_begin_.
  bool only_zeros_to_end() {
    do {
      const char* begin = in_.data() + in_begin_;
      const char* end = in_.data() + in_end_;
      const char* other = std::find_if(begin, end, [](char c) { return c != '\0'; });
      in_begin_ = static_cast<std::size_t>(other - in_.data());
      if (other != end) return false;
    } while (refill());
    return true;
  }

  std::size_t read_gzip(char* out, std::size_t size) {
    const std::size_t limit = std::min<std::size_t>(size, INT_MAX / 2);
    while (!finished_) {
      if (available() == 0 && !refill()) {
        throw SourceError(false, fmt::format("{}: truncated gzip data: the file ends inside a "
                                             "gzip member, at byte {}",
                                             one_line(name_), offset_ + in_begin_));
      }
      zs_.next_in = reinterpret_cast<Bytef*>(in_.data() + in_begin_);
      zs_.avail_in = static_cast<uInt>(available());
      zs_.next_out = reinterpret_cast<Bytef*>(out);
      zs_.avail_out = static_cast<uInt>(limit);
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      in_begin_ = static_cast<std::size_t>(reinterpret_cast<char*>(zs_.next_in) - in_.data());
      const std::size_t produced = limit - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        // Another member may follow (what `cat a.gz b.gz` makes); anything else is an error.
        if (at_gzip_member()) {
          inflateReset(&zs_);
        } else if (!only_zeros_to_end()) {
          // Reported once the text before it is handed out.
          trailing_error_ = fmt::format(
              "{}: data after the last gzip member, at byte {} (a "
              "damaged or appended-to file)",
              one_line(name_), offset_ + in_begin_);
          finished_ = true;
        } else {
          finished_ = true;
        }
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw SourceError(false, fmt::format("{}: corrupt gzip data near byte {} ({})",
                                             one_line(name_), offset_ + in_begin_,
                                             zs_.msg != nullptr ? zs_.msg : "inflate error"));
      }
      if (produced > 0) return produced;
    }
    if (!trailing_error_.empty()) throw SourceError(false, trailing_error_);
    return 0;
  }

  std::string name_;
  int fd_;
  std::string identity_;
  std::vector<char> in_;
  std::size_t in_begin_ = 0;  // next raw byte to use
  std::size_t in_end_ = 0;    // end of the raw bytes read
  std::uint64_t offset_ = 0;  // file offset of in_[0]
  bool may_block_ = false;    // not a regular file
  bool started_ = false;
  bool gzip_ = false;
  bool raw_end_ = false;        // a read(2) returned 0 (refill)
  bool finished_ = false;       // the last gzip member ended
  std::string trailing_error_;  // what followed it, when that was not another member
  z_stream zs_{};
};

class MemoryByteSource final : public ByteSource {
 public:
  MemoryByteSource(std::string name, std::string data, std::size_t max_read)
      : name_(std::move(name)), data_(std::move(data)), max_read_(max_read) {}

  std::size_t read(char* out, std::size_t size) override {
    const std::size_t n = std::min({size, max_read_, data_.size() - pos_});
    std::memcpy(out, data_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  std::uint64_t consumed() const override { return pos_; }
  bool inflates() const override { return false; }
  const std::string& name() const override { return name_; }
  std::string identity() const override {
    return "mem:" + to_hex(sha256(std::string_view(data_).substr(0, 64 * 1024))).substr(0, 28);
  }
  std::unique_ptr<ByteSource> reopen() const override {
    return std::make_unique<MemoryByteSource>(name_, data_, max_read_);
  }

 private:
  std::string name_;
  std::string data_;
  std::size_t max_read_;
  std::size_t pos_ = 0;
};

}  // namespace

bool names_a_regular_file(const std::string& path) {
  struct stat st {};
  return path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::unique_ptr<ByteSource> open_byte_source(const std::string& path) {
  const bool is_stdin = path == "-";
  // A FIFO is opened without waiting for its writer (open(2) would block until one comes, deaf to
  // a stop); its reads wait with wait_readable, which a stop ends.
  struct stat named {};
  const int flags =
      O_RDONLY | O_CLOEXEC |
      (!is_stdin && ::stat(path.c_str(), &named) == 0 && S_ISFIFO(named.st_mode) ? O_NONBLOCK : 0);
  const int fd = is_stdin ? dup(STDIN_FILENO) : ::open(path.c_str(), flags);
  if (fd < 0) {
    throw SourceError(true,
                      fmt::format("{}: cannot open: {}", one_line(path), std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw SourceError(true, fmt::format("{}: cannot open: Is a directory", one_line(path)));
  }
  std::string identity = is_stdin ? std::string() : file_identity(fd);
  return std::make_unique<FileByteSource>(path, fd, std::move(identity));
}

std::unique_ptr<ByteSource> memory_byte_source(std::string name, std::string data,
                                               std::size_t max_read) {
  return std::make_unique<MemoryByteSource>(std::move(name), std::move(data),
                                            std::max<std::size_t>(max_read, 1));
}

}  // namespace atlas2kudu
