#include "compile/print_executor.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "atlas2kudu/error.h"
#include "compile/impala_sql.h"

namespace atlas2kudu {

PrintExecutor::PrintExecutor(std::FILE* out) : file_(out) {}
PrintExecutor::PrintExecutor(std::string* out) : string_(out) {}

void PrintExecutor::write(std::string_view text) {
  if (string_) {
    string_->append(text);
    return;
  }
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    throw Error(ErrorCategory::kIo,
                fmt::format("writing SQL output: {}", std::strerror(errno ? errno : EIO)));
  }
}

void PrintExecutor::start(std::string_view header) {
  write(header);
}

void PrintExecutor::format_window(const CompiledWindow& w, std::string& out) {
  auto it = std::back_inserter(out);
  out.append("-- ");
  append_comment_text(out, w.comment);  // it names input files, which may hold anything
  out.push_back('\n');
  const auto phase = [&](int n, std::string_view name, const std::vector<Statement>& statements) {
    fmt::format_to(it, "-- window {} phase {}: {} ({} statement{})\n", w.index, n, name,
                   statements.size(), statements.size() == 1 ? "" : "s");
    for (const Statement& s : statements) {
      out.append(s.sql);
      out.append(";\n");
    }
  };
  phase(1, "deletes", w.deletes);
  phase(2, "upserts", w.upserts);
}

void PrintExecutor::run_window(const CompiledWindow& window) {
  buffer_.clear();
  format_window(window, buffer_);
  write(buffer_);
}

void PrintExecutor::finish() {
  if (file_ && std::fflush(file_) != 0) {
    throw Error(ErrorCategory::kIo,
                fmt::format("writing SQL output: {}", std::strerror(errno ? errno : EIO)));
  }
}

}  // namespace atlas2kudu
