#include "test_support.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "util/json_writer.h"

namespace atlas2kudu::testing {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

// The directory of this test process's scratch files: made on first use, removed with all it
// holds when the process exits (also what a run put next to a scratch file, such as a checkpoint's
// FILE.lock and FILE.window). A forked child that exits leaves it to its parent.
const std::string& scratch_dir() {
  struct Dir {
    std::string path = "/tmp/atlas2kudu-test-XXXXXX";
    pid_t owner = ::getpid();
    Dir() {
      if (::mkdtemp(path.data()) == nullptr) {
        throw std::runtime_error("cannot create a directory in /tmp");
      }
    }
    ~Dir() {
      if (::getpid() != owner) return;
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

}  // namespace

std::string tmp_path(const std::string& suffix) {
  std::string pattern = scratch_dir() + "/XXXXXX" + suffix;
  const int fd = mkstemps(pattern.data(), static_cast<int>(suffix.size()));
  if (fd < 0) throw std::runtime_error("cannot create a file in /tmp");
  ::close(fd);
  return pattern;
}

std::string json_quote(std::string_view text) {
  std::string out;
  append_json_string(text, out);
  return out;
}

ReaderLimits fuzz_reader_limits() {
  ReaderLimits limits;
  limits.max_record_bytes = 64 << 10;
  limits.max_inflated_bytes = 64 << 10;
  limits.max_json_depth = 64;
  limits.max_cell_bytes = 256;
  limits.max_split_messages = 4;
  limits.max_split_chunks = 8;
  limits.max_split_bytes = 16 << 10;
  return limits;
}

namespace {

// One reading of read_as_fuzzer: what went wrong (empty when every invariant held), and what a
// reading as `check` must repeat: the events and the rejections, with their messages.
struct FuzzReading {
  std::string failure;
  std::string trace;
};

FuzzReading read_once_as_fuzzer(const std::string& path, bool validation_only) {
  FuzzReading out;
  char* diag_buf = nullptr;
  std::size_t diag_size = 0;
  std::FILE* diag = open_memstream(&diag_buf, &diag_size);
  {
    RejectSink rejects(RejectPolicy{UINT64_MAX, ""}, diag);
    Reader reader({path}, rejects, fuzz_reader_limits());
    if (validation_only) reader.validation_only();
    try {
      for (Event e; reader.next(e);) {
        if (e.pos.first_source_index > e.pos.source_index) {
          out.failure = "first_source_index after source";
        } else if (validation_only && (e.audit_seq != 0 || !e.attributes.empty())) {
          out.failure = "an audit seq or attribute values computed for validation_only";
        }
        if (!out.failure.empty()) break;
        const auto text = [](const std::optional<std::string>& t) {
          return t ? json_quote(*t) : std::string("none");
        };
        out.trace += fmt::format("event {} {} {} {} {} {}\n", e.pos.record, to_string(e.op),
                                 e.guid.hex(), e.type_name, text(e.qualified_name), text(e.name));
        (void)reader.progress();
      }
      const ReadStats& s = reader.stats();
      if (out.failure.empty() &&
          s.records != s.events + s.rejected + s.split_chunks + s.skipped + s.replayed) {
        out.failure = fmt::format(
            "{} records, but {} events + {} rejected + {} split chunks + {} skipped + {} replayed",
            s.records, s.events, s.rejected, s.split_chunks, s.skipped, s.replayed);
      }
      out.trace += fmt::format("{} records, {} events, {} rejected, {} split chunks\n", s.records,
                               s.events, s.rejected, s.split_chunks);
    } catch (const SourceError& e) {
      // A damaged gzip file ends the run, as it ends `check` (exit 74).
      out.trace += fmt::format("source error: {}\n", e.what());
    }
  }
  std::fclose(diag);
  out.trace += std::string(diag_buf, diag_size);
  std::free(diag_buf);
  return out;
}

}  // namespace

std::string read_as_fuzzer(const std::string& path) {
  const FuzzReading compile = read_once_as_fuzzer(path, false);
  if (!compile.failure.empty()) return compile.failure;
  // `check` reads for validation only: the same events, and the same rejections.
  const FuzzReading check = read_once_as_fuzzer(path, true);
  if (!check.failure.empty()) return check.failure;
  if (check.trace != compile.trace) {
    return fmt::format("read as compile reads:\n{}\nand as check reads (validation only):\n{}",
                       compile.trace, check.trace);
  }
  return "";
}

ReadOutcome read_text(const std::string& text, std::size_t max_read, std::size_t max_record_bytes) {
  return read_text(text, ReaderLimits{.max_record_bytes = max_record_bytes}, max_read);
}

ReadOutcome read_text(const std::string& text, ReaderLimits limits, std::size_t max_read,
                      bool validation_only) {
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
    if (validation_only) reader.validation_only();
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

std::string create_table_line(int n, const std::string& more_attributes, long long event_ms) {
  return fmt::format(
      R"({{"version":{{"version":"1.0.0"}},"msgCreationTime":1,"message":{{"type":)"
      R"("ENTITY_NOTIFICATION_V2","entity":{{"typeName":"hive_table","guid":)"
      R"("00000001-0000-4000-8000-{:012d}","attributes":{{"qualifiedName":"db.t{}@c")"
      R"({}}}}},"operationType":"ENTITY_CREATE","eventTime":{}}}}})"
      "\n",
      n, n, more_attributes, event_ms);
}

}  // namespace atlas2kudu::testing
