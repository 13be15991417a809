// Failures of the HS2 execution layer, classified once where they are detected so that the
// executor's retry loop and the CLI's exit code never have to parse message text again.
//
// Example:
//   try { client.execute(sql); }
//   catch (const Hs2Error& e) {
//     if (e.retryable()) { client.drop(); client.connect(); /* and run sql again */ }
//     else throw;   // e.category(): kServerRejected for an analysis error
//   }
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "atlas2kudu/error.h"

namespace atlas2kudu {

enum class Hs2ErrorKind {
  kTransient,    // connect failure, reset/EOF, timeout, HTTP 502/503/504, admission, Kudu transient
  kSessionLost,  // the server no longer knows our session or operation: reopen, then re-run
  kDefinite,     // the server rejected the statement (parse/analysis/authorization/runtime error)
  kAuth,         // authentication failed, or TLS failed (untrusted certificate, handshake, alert)
  kUsage,        // the options cannot work (e.g. LDAP without TLS); nothing was sent
  kInternal,     // a protocol violation or a bug
  kTimeout,      // a statement ran past --statement_timeout_ms and was cancelled
  kMismatch,     // the server speaks another protocol (HTTP on the binary port, or the reverse)
};

// The run-ending category of a failure of this kind once retries are exhausted.
ErrorCategory category_for(Hs2ErrorKind kind);

class Hs2Error : public Error {
 public:
  Hs2Error(Hs2ErrorKind kind, const std::string& message)
      : Error(category_for(kind), message), kind_(kind) {}
  Hs2ErrorKind kind() const { return kind_; }
  // Worth reconnecting and re-running the (idempotent) statement.
  bool retryable() const {
    return kind_ == Hs2ErrorKind::kTransient || kind_ == Hs2ErrorKind::kSessionLost;
  }

 private:
  Hs2ErrorKind kind_;
};

// True when a statement failed definitely because of some of its rows (or its size), so that
// running parts of it can succeed and isolate the rows at fault: Kudu errors on rows ("Kudu
// error(s) reported, first error: Invalid argument: value too large for column ..."), a row
// Impala cannot materialize ("Row of size ... could not be materialized"), a function failing on
// one value ("UDF ERROR: ..."), a statement over MAX_STATEMENT_LENGTH_BYTES. Not for errors of the
// statement as a whole (parse, analysis, authorization, unknown table).
//   refused_because_of_rows("Kudu error(s) reported, first error: Invalid argument: value too "
//                           "large for column 'props_json' (70000 bytes, maximum is 65536 bytes)")
//     == true
//   refused_because_of_rows("AnalysisException: Could not resolve table reference") == false
bool refused_because_of_rows(std::string_view message);

// Classifies the error text of a failed statement (TStatus.errorMessage, GetOperationStatus
// errorMessage, or GetLog text). Retryable: admission-control rejections and queue time-outs,
// Kudu "Timed out" / "Service unavailable" / "Network error", and lost sessions/handles
// (expired session, "Invalid session id", "Invalid or unknown query handle"). Everything else is
// definite: Impala reports parse and analysis errors with the same TStatus, and re-running them
// can only fail again.
//   classify_server_message("Query 1:2 failed:\nAnalysisException: Could not resolve table")
//     == Hs2ErrorKind::kDefinite
//   classify_server_message("Admission for query exceeded timeout 60000ms in pool root.default")
//     == Hs2ErrorKind::kTransient
Hs2ErrorKind classify_server_message(std::string_view message);

const char* to_string(Hs2ErrorKind kind);

}  // namespace atlas2kudu
