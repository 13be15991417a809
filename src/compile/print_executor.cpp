#include "compile/print_executor.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "atlas2kudu/error.h"
#include "compile/impala_sql.h"
#include "util/os_error.h"

namespace atlas2kudu {

namespace {

// A failed write: the reader of a pipe going away (`compile | head`) ends the run quietly, any
// other failure is an I/O error.
[[noreturn]] void throw_write_error() {
  const int err = errno ? errno : EIO;
  if (err == EPIPE) throw Error(ErrorCategory::kOutputClosed, "the reader of the SQL went away");
  throw Error(ErrorCategory::kIo, fmt::format("writing SQL output: {}", os_error_text(err)));
}

}  // namespace

PrintExecutor::PrintExecutor(std::FILE* out) : file_(out) {}
PrintExecutor::PrintExecutor(std::string* out) : string_(out) {}

void PrintExecutor::write(std::string_view text) {
  if (string_) {
    string_->append(text);
    return;
  }
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) throw_write_error();
}

void PrintExecutor::start(std::string_view header) {
  write(header);
}

namespace {

// The text of one window, piece by piece into `sink`: comments formatted in `scratch`, statements
// passed on as they are, so that printing never copies the window's SQL.
template <typename Sink>
void emit_window(const CompiledWindow& w, std::string& scratch, Sink&& sink) {
  scratch.clear();
  scratch.append("-- ");
  append_comment_text(scratch, w.comment);  // it names input files, which may hold anything
  scratch.push_back('\n');
  const auto phase = [&](int n, std::string_view name, const std::vector<Statement>& statements) {
    fmt::format_to(std::back_inserter(scratch), "-- window {} phase {}: {} ({} statement{})\n",
                   w.index, n, name, statements.size(), statements.size() == 1 ? "" : "s");
    sink(std::string_view(scratch));
    scratch.clear();
    for (const Statement& s : statements) {
      if (!s.annotation.empty()) {  // compile --annotate; its input text already made safe
        sink(std::string_view("-- "));
        sink(std::string_view(s.annotation));
        sink(std::string_view("\n"));
      }
      sink(std::string_view(s.sql));
      sink(std::string_view(";\n"));
    }
  };
  phase(1, "deletes", w.deletes);
  phase(2, "upserts", w.upserts);
}

}  // namespace

void PrintExecutor::format_window(const CompiledWindow& w, std::string& out) {
  std::string scratch;
  emit_window(w, scratch, [&out](std::string_view text) { out.append(text); });
}

WindowRun PrintExecutor::run_window(const CompiledWindow& w) {
  emit_window(w, buffer_, [this](std::string_view text) { write(text); });
  // Out at every window's end: a run stopped between windows leaves whole statements only.
  if (file_ != nullptr && std::fflush(file_) != 0) {
    throw_write_error();
  }
  return {};
}

void PrintExecutor::finish() {
  if (file_ && std::fflush(file_) != 0) {
    throw_write_error();
  }
}

}  // namespace atlas2kudu
