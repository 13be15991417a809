// The command line: parses argv, runs one subcommand, maps every error to an exit code.
#pragma once

namespace atlas2kudu {

// Documented exit codes (man/atlas2kudu.1, EXIT STATUS).
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,     // a bug or an unexpected system error
  kExitBadInput = 2,     // malformed input record(s) beyond --max-rejects
  kExitServerError = 3,  // the server definitely rejected a statement (not retried)
  kExitUnavailable = 4,  // could not connect, or retries exhausted on a transient failure
  kExitAuth = 5,         // authentication failed or the server certificate was not trusted
  kExitUsage = 64,       // bad command line (EX_USAGE)
  kExitNoInput = 66,     // an input file cannot be opened (EX_NOINPUT)
  kExitIoError = 74,     // reading input or writing output failed (EX_IOERR)
};

int run_cli(int argc, char** argv);

}  // namespace atlas2kudu
