#include "test_support.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/json_writer.h"

namespace atlas2kudu::testing {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string json_quote(std::string_view text) {
  std::string out;
  append_json_string(text, out);
  return out;
}

ReadOutcome read_text(const std::string& text, std::size_t max_read, std::size_t max_record_bytes) {
  return read_text(text, ReaderLimits{.max_record_bytes = max_record_bytes}, max_read);
}

ReadOutcome read_text(const std::string& text, ReaderLimits limits, std::size_t max_read) {
  ReadOutcome out;
  char* diag_buf = nullptr;
  std::size_t diag_size = 0;
  std::FILE* diag = open_memstream(&diag_buf, &diag_size);
  char reject_path[] = "/tmp/atlas2kudu-rejects-XXXXXX";
  const int fd = mkstemp(reject_path);
  if (fd >= 0) ::close(fd);
  {
    RejectSink sink(RejectPolicy{1000000, reject_path}, diag);
    std::vector<std::unique_ptr<ByteSource>> sources;
    sources.push_back(memory_byte_source("t.jsonl", text, max_read));
    Reader reader(std::move(sources), sink, limits);
    for (Event e; reader.next(e);) out.events.push_back(std::move(e));
    out.stats = reader.stats();
  }
  std::fclose(diag);
  std::string all(diag_buf, diag_size);
  std::free(diag_buf);
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);) out.diagnostics.push_back(line);
  out.reject_file = slurp(reject_path);
  std::remove(reject_path);
  return out;
}

std::string envelope(const std::string& message) {
  return "{\"version\":{\"version\":\"1.0.0\",\"versionParts\":[1]},\"msgCompressionKind\":"
         "\"NONE\","
         "\"msgSplitIdx\":1,\"msgSplitCount\":1,\"msgCreationTime\":1700000000000,\"message\":" +
         message + "}";
}

std::string entity_message(const std::string& op, const std::string& attributes,
                           const std::string& extra) {
  return fmt::format(
      "{{\"type\":\"ENTITY_NOTIFICATION_V2\",\"entity\":{{\"typeName\":\"t\",\"attributes\":{},"
      "\"guid\":\"00000001-0000-4000-8000-000000000001\"}},\"operationType\":\"{}\"{}}}",
      attributes, op, extra);
}

}  // namespace atlas2kudu::testing
