#include "atlas2kudu/byte_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/core.h>

namespace atlas2kudu {

namespace {

class GzByteSource final : public ByteSource {
 public:
  GzByteSource(std::string name, gzFile file) : name_(std::move(name)), file_(file) {}
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

 private:
  std::string name_;
  gzFile file_;
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
  gzFile file = gzdopen(fd, "rb");
  if (file == nullptr) {
    ::close(fd);
    throw SourceError(true, fmt::format("{}: cannot open: out of memory", path));
  }
  gzbuffer(file, 1 << 20);
  return std::make_unique<GzByteSource>(path, file);
}

std::unique_ptr<ByteSource> memory_byte_source(std::string name, std::string data,
                                               std::size_t max_read) {
  return std::make_unique<MemoryByteSource>(std::move(name), std::move(data),
                                            std::max<std::size_t>(max_read, 1));
}

}  // namespace atlas2kudu
