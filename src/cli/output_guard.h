// Files a run replaces or truncates (-o, --stats, --metrics-textfile, --reject-file) must be empty,
// missing, or written by atlas2kudu before: anything else is refused before the run reads a byte.
//
// The mistake this stops is an option whose value was left out, so that the next word, an input,
// became the value: `atlas2kudu compile --stats export.jsonl` reads stdin (in cron, /dev/null:
// zero events, success) and would then replace the export with a summary. The --checkpoint file
// is guarded the same way by its own format (cli/checkpoint.h: "not an atlas2kudu checkpoint").
//
//   refuse_foreign_output("--stats", "export.jsonl", OutputKind::kStats);
//   // throws Error(kUsage), exit 64:
//   //   --stats export.jsonl: the file exists and is not a --stats summary written by
//   //   atlas2kudu (which begins with '{"schema":'); refusing to replace it. Remove it or
//   //   choose another path.
//
// The message never quotes the file: it may hold anything, a secret included.
//
// What each kind begins with is what its writer writes first; the round-trip tests in
// tests/cli/cli_test.cpp run each option twice on one path to keep the two equal. Paths that are
// not regular files (/dev/null, a FIFO) are left to the writers, which refuse them themselves.
#pragma once

#include <string>
#include <string_view>

namespace atlas2kudu {

enum class OutputKind {
  kSql,      // -o of compile and ddl: "-- atlas2kudu "
  kStats,    // --stats: {"schema":
  kMetrics,  // --metrics-textfile: "# HELP atlas2kudu_"
  kRejects,  // --reject-file: {"source":
};

// Throws Error(kUsage) if `path` is an existing, non-empty regular file that does not begin as
// files of `kind` do. `option` names the flag in the message.
void refuse_foreign_output(std::string_view option, const std::string& path, OutputKind kind);

}  // namespace atlas2kudu
