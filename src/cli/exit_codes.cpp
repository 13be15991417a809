#include "cli/exit_codes.h"

namespace atlas2kudu {

int exit_code_for(ErrorCategory category) {
  switch (category) {
    case ErrorCategory::kInternal:
      return kExitInternal;
    case ErrorCategory::kBadInput:
      return kExitBadInput;
    case ErrorCategory::kServerRejected:
      return kExitServerError;
    case ErrorCategory::kUnavailable:
      return kExitUnavailable;
    case ErrorCategory::kAuth:
      return kExitAuth;
    case ErrorCategory::kUsage:
      return kExitUsage;
    case ErrorCategory::kNoInput:
      return kExitNoInput;
    case ErrorCategory::kIo:
      return kExitIoError;
    case ErrorCategory::kCheckpoint:
      return kExitCheckpoint;
    case ErrorCategory::kLocked:
      return kExitLocked;
    case ErrorCategory::kInterrupted:
      return kExitInterrupted;
    case ErrorCategory::kTerminated:
      return kExitTerminated;
    case ErrorCategory::kHungUp:
      return kExitHungUp;
    case ErrorCategory::kOutputClosed:
      return kExitOk;  // like `cat | head`: the reader has all it wanted
  }
  return kExitInternal;
}

}  // namespace atlas2kudu
