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
// not regular files (/dev/null, a FIFO) are not judged here: check_run_paths refuses them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// A file a run writes, named by its option: {"--stats", "run.json", OutputKind::kStats}.
struct RunOutput {
  std::string_view option;
  std::string path;                // empty: not written
  std::optional<OutputKind> kind;  // none: guarded by its own format (the checkpoint)
};

// Before a run reads or writes anything, what would otherwise be found after its work, or never:
//   - no output with a kind is a file atlas2kudu did not write (refuse_foreign_output, exit 64);
//   - every input FILE opens (exit 66): a typo in the second of two files must not leave `apply`
//     half done;
//   - every output's directory exists and an existing output is a regular file (exit 74), so
//     that `--stats outdir` fails before the windows are applied, not after;
//   - no two inputs are one file (exit 64): `check a.jsonl ./a.jsonl` read it twice, and a
//     compile of it applied its events twice, an older change after newer ones;
//   - no output is also an input, and no two outputs are one file (exit 64). `check
//     --reject-file rej.jsonl rej.jsonl` truncated its input before reading it, and `apply
//     --checkpoint` (which appends to the reject file) read back the lines it was writing, each
//     quoting the last, without end; `-o a.sql --stats a.sql` kept only one of the two.
// "One file" is the same device and inode for files that exist (a symbolic or hard link to the
// input is caught), the same absolute path otherwise. Standard input ("-", or no input given) is
// the file it is redirected from, if any; `-o -` is no file.
//
//   check_run_paths({"rej.jsonl"}, {{"--reject-file", "rej.jsonl", OutputKind::kRejects}});
//   // throws Error(kUsage): --reject-file rej.jsonl: the same file as the input rej.jsonl; it
//   // would be replaced while it is read. Write to another path.
void check_run_paths(const std::vector<std::string>& inputs, const std::vector<RunOutput>& outputs);

// For a command with one output and no input (ddl -o): refuse_foreign_output, then the checks
// of an output's path check_run_paths makes, each message naming the option:
//   check_single_output({"-o", "/tmp", OutputKind::kSql});
//   // throws Error(kIo): -o /tmp: not a regular file (a directory); refusing to replace it
void check_single_output(const RunOutput& out);

// After check_run_paths failed on another output: whether `out` alone passes its checks (not a
// foreign file, creatable, neither an input nor the file of any other output in `outputs`, which
// may include `out` itself), so that a run refused for, say, a checkpoint in a directory it cannot
// write still leaves its failure in --stats. Inputs that do not open are compared by path; `out`
// is known in `outputs` by its option.
//
//   safe_to_write_alone({"a.jsonl"}, outs, {"--stats", "a.sql", OutputKind::kStats})
//   // false when outs also holds {"-o", "a.sql", OutputKind::kSql}: the SQL would be replaced
bool safe_to_write_alone(const std::vector<std::string>& inputs,
                         const std::vector<RunOutput>& outputs, const RunOutput& out);

}  // namespace atlas2kudu
