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

#include "util/digest.h"

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

class GzByteSource final : public ByteSource {
 public:
  GzByteSource(std::string name, gzFile file, std::string identity)
      : name_(std::move(name)), file_(file), identity_(std::move(identity)) {}
  ~GzByteSource() override { gzclose(file_); }

  std::size_t read(char* out, std::size_t size) override {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(size, INT_MAX / 2));
    const int n = gzread(file_, out, chunk);
    if (n < 0) {
      int errnum = 0;
      const char* msg = gzerror(file_, &errnum);
      if (errnum == Z_ERRNO) msg = std::strerror(errno);
      throw SourceError(false, fmt::format("{}: read error: {}", name_, msg));
    }
    if (n == 0) {
      // gzread returns 0 both at a clean end and when a gzip stream is cut short.
      int errnum = 0;
      const char* msg = gzerror(file_, &errnum);
      if (errnum != Z_OK && errnum != Z_STREAM_END) {
        throw SourceError(false, fmt::format("{}: {}", name_, msg));
      }
    }
    return static_cast<std::size_t>(n);
  }

  const std::string& name() const override { return name_; }
  std::string identity() const override { return identity_; }

 private:
  std::string name_;
  gzFile file_;
  std::string identity_;
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
  const std::string& name() const override { return name_; }
  std::string identity() const override {
    return "mem:" + to_hex(sha256(std::string_view(data_).substr(0, 64 * 1024))).substr(0, 28);
  }

 private:
  std::string name_;
  std::string data_;
  std::size_t max_read_;
  std::size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> open_byte_source(const std::string& path) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw SourceError(true, fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw SourceError(true, fmt::format("{}: cannot open: Is a directory", path));
  }
  std::string identity = is_stdin ? std::string() : file_identity(fd);
  gzFile file = gzdopen(fd, "rb");
  if (file == nullptr) {
    ::close(fd);
    throw SourceError(true, fmt::format("{}: cannot open: out of memory", path));
  }
  gzbuffer(file, 1 << 20);
  return std::make_unique<GzByteSource>(path, file, std::move(identity));
}

std::unique_ptr<ByteSource> memory_byte_source(std::string name, std::string data,
                                               std::size_t max_read) {
  return std::make_unique<MemoryByteSource>(std::move(name), std::move(data),
                                            std::max<std::size_t>(max_read, 1));
}

}  // namespace atlas2kudu
