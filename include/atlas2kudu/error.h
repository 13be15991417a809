// The one error type that ends a run. Every layer throws `Error` (or a subclass that adds detail,
// such as Hs2Error) with the category of what went wrong, decided where the failure is detected;
// the command line maps the category to an exit code in exactly one place (cli/exit_codes.h), so
// no layer below it knows about exit codes and no catch site classifies by C++ type.
//
// Example:
//   throw Error(ErrorCategory::kNoInput, "a.jsonl: cannot open: No such file or directory");
//   ...
//   catch (const Error& e) { return exit_code_for(e.category()); }   // 66, once, in cli/
//
// Per-record problems are not run-ending errors: the reader turns them into rejections
// (reader.h), and only too many of them become Error(kBadInput).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace atlas2kudu {

enum class ErrorCategory : std::uint8_t {
  kInternal,        // a bug or an unexpected system error
  kBadInput,        // malformed records beyond --max-rejects
  kServerRejected,  // the server definitely rejected a statement (not retried)
  kUnavailable,     // could not connect, or retries on a transient failure ran out
  kAuth,            // authentication failed, or TLS failed (handshake, untrusted certificate)
  kUsage,           // the command line or the options contradict each other
  kNoInput,         // an input file cannot be opened
  kIo,              // reading input or writing output failed
  kCheckpoint,      // the --checkpoint file is unreadable, malformed or not ours
  kLocked,          // another run holds the --checkpoint file's lock
  kInterrupted,     // stopped by SIGINT
  kTerminated,      // stopped by SIGTERM
  kOutputClosed,    // the reader of standard output went away (`compile | head`): not a failure
  kHungUp,          // stopped by SIGHUP (the terminal or SSH session went away)
};

// "internal", "bad-input", ... : stable names for logs and --stats.
std::string_view to_string(ErrorCategory category);

class Error : public std::runtime_error {
 public:
  Error(ErrorCategory category, const std::string& message)
      : std::runtime_error(message), category_(category), message_(message) {}
  ErrorCategory category() const { return category_; }
  const char* what() const noexcept override { return message_.c_str(); }

  // Says where the failure happened, in front of the message, keeping the error's type and
  // category for the `throw;` that follows:
  //   catch (Error& e) { e.add_context("window 2 (events 4-6), "); throw; }
  //   // "window 2 (events 4-6), prior-state lookup (entity_flat, keys 1-2 of 2): ..."
  void add_context(std::string_view context) { message_.insert(0, context); }

 private:
  ErrorCategory category_;
  std::string message_;
};

}  // namespace atlas2kudu
