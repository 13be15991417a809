#include "util/gzip.h"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>

namespace atlas2kudu {

namespace {

// Makes `out` `size` bytes long, keeping its first `used` bytes. libstdc++'s resize and reserve
// round a growing capacity up to twice the old one, which would let a bomb take twice the limit;
// a fresh string reserves exactly what it is asked for.
void grow_exactly(std::string& out, std::size_t used, std::size_t size) {
  if (size > out.capacity()) {
    std::string bigger;
    bigger.reserve(size);
    bigger.append(out, 0, used);
    out.swap(bigger);
  }
  out.resize(size);
}

// Ends the zlib stream however the function is left.
struct InflateStream {
  z_stream zs{};
  bool initialised = false;
  ~InflateStream() {
    if (initialised) inflateEnd(&zs);
  }
};

}  // namespace

void gunzip(std::string_view data, std::size_t max_bytes, std::string& out) {
  InflateStream stream;
  z_stream& zs = stream.zs;
  // 15 + 32: the largest window, and detect a gzip or a zlib header.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    out.clear();
    throw DecodeError(DecodeError::Kind::kMalformed, "cannot initialise gzip decoder");
  }
  stream.initialised = true;
  grow_exactly(out, 0,
               std::min<std::size_t>(std::max<std::size_t>(data.size() * 4, 4096), max_bytes + 1));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::size_t produced = 0;
  int rc = Z_OK;
  for (;;) {
    if (produced == out.size()) {
      if (out.size() > max_bytes) break;
      grow_exactly(out, produced, std::min(out.size() * 2, max_bytes + 1));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(out.size() - produced);
    rc = inflate(&zs, Z_NO_FLUSH);
    produced = out.size() - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members continue the same text.
      if (zs.avail_in > 0 && inflateReset(&zs) == Z_OK) continue;
      break;
    }
    if (rc != Z_OK) break;
    if (zs.avail_in == 0 && zs.avail_out > 0) break;  // input exhausted mid-stream
  }
  out.resize(produced);
  if (produced > max_bytes) {
    throw DecodeError(DecodeError::Kind::kTooLarge,
                      fmt::format("decompresses to more than {} bytes", max_bytes));
  }
  if (rc != Z_STREAM_END) {
    const char* reason =
        zs.msg != nullptr ? zs.msg
                          : (rc == Z_OK || rc == Z_BUF_ERROR ? "unexpected end" : "inflate error");
    throw DecodeError(DecodeError::Kind::kMalformed,
                      fmt::format("corrupt or truncated gzip data ({})", reason));
  }
}

}  // namespace atlas2kudu
