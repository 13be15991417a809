// Exit codes (man/atlas2kudu.1, EXIT STATUS; README). The one place where an error's category
// becomes a number.
#pragma once

#include "atlas2kudu/error.h"

namespace atlas2kudu {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,     // a bug or an unexpected system error
  kExitBadInput = 2,     // malformed input record(s) beyond --max-rejects
  kExitServerError = 3,  // the server definitely rejected a statement (not retried)
  kExitUnavailable = 4,  // could not connect, retries exhausted, a timeout or --deadline passed
  kExitAuth = 5,         // authentication failed, or TLS failed (untrusted certificate, handshake)
  kExitUsage = 64,       // bad command line (EX_USAGE)
  kExitCheckpoint = 65,  // the --checkpoint file is malformed or not ours (EX_DATAERR)
  kExitNoInput = 66,     // an input file cannot be opened (EX_NOINPUT)
  kExitIoError = 74,     // reading input or writing output failed (EX_IOERR)
  kExitLocked = 75,      // another run holds the --checkpoint lock (EX_TEMPFAIL: try later)
  kExitHungUp = 129,     // stopped by SIGHUP (128 + 1), after a clean shutdown
  kExitInterrupted = 130,  // stopped by SIGINT (128 + 2), after a clean shutdown
  kExitTerminated = 143,   // stopped by SIGTERM (128 + 15), after a clean shutdown
};

int exit_code_for(ErrorCategory category);

}  // namespace atlas2kudu
