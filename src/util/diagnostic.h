// Messages for the person or the log reading stderr, written so that they can never change what a
// run does.
//
// fmt::print(FILE*, ...) throws std::system_error when the stream cannot be written. For stderr
// that turns a full disk under a cron job's log (`2>>run.log`), or a closed stderr (`2>&-`), into
// an exception out of the middle of a run, or out of the handler that maps failures to exit
// codes, where nothing catches it and the process aborts (SIGABRT, exit 134): the statements
// already applied stay applied, but the checkpoint, --stats and the metrics file are not written.
// A message that cannot be written is therefore dropped: the run goes on, and its exit status,
// --stats and metrics still say what happened.
//
//   print_diagnostic(stderr, "atlas2kudu: {}\n", e.what());   // never throws a write error
//
// Standard output is not a diagnostic stream: the SQL and `check`'s report are the run's product,
// and failing to write them fails the run (exit 74).
#pragma once

#include <fmt/core.h>

#include <cstdio>
#include <string_view>
#include <utility>

namespace atlas2kudu {

// Writes `text` and flushes; on failure clears the stream's error and drops the text.
void write_diagnostic(std::FILE* out, std::string_view text) noexcept;

template <typename... T>
void print_diagnostic(std::FILE* out, fmt::format_string<T...> format, T&&... args) {
  write_diagnostic(out, fmt::format(format, std::forward<T>(args)...));
}

}  // namespace atlas2kudu
