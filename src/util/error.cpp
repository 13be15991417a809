#include "atlas2kudu/error.h"

namespace atlas2kudu {

std::string_view to_string(ErrorCategory category) {
  switch (category) {
    case ErrorCategory::kInternal:
      return "internal";
    case ErrorCategory::kBadInput:
      return "bad-input";
    case ErrorCategory::kServerRejected:
      return "server-rejected";
    case ErrorCategory::kUnavailable:
      return "unavailable";
    case ErrorCategory::kAuth:
      return "auth";
    case ErrorCategory::kUsage:
      return "usage";
    case ErrorCategory::kNoInput:
      return "no-input";
    case ErrorCategory::kIo:
      return "io";
    case ErrorCategory::kCheckpoint:
      return "checkpoint";
    case ErrorCategory::kLocked:
      return "locked";
    case ErrorCategory::kInterrupted:
      return "interrupted";
    case ErrorCategory::kOutputClosed:
      return "output-closed";
    case ErrorCategory::kTerminated:
      return "terminated";
    case ErrorCategory::kHungUp:
      return "hung-up";
  }
  return "internal";
}

}  // namespace atlas2kudu
