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

// `message` (a failed statement's text, on one line) with what to do where atlas2kudu knows it: a
// table or database Impala cannot find (a first run against a cluster, or another --database)
// points at the DDL.
//   with_server_hint("AnalysisException: Could not resolve table reference: 'x.entity_flat'")
//     == "AnalysisException: Could not resolve table reference: 'x.entity_flat' (create the
//        projection tables first: `atlas2kudu ddl -d DATABASE` prints their DDL)"
std::string with_server_hint(std::string message);

const char* to_string(Hs2ErrorKind kind);

// Connection mistakes are named in one wording, with the flag to try (the man page's DIAGNOSTICS
// lists them all):
//   cannot_connect("db1:21000", "it answers in HTTP, as an hs2-http port does", "--protocol
//   hs2-http")
//     == "cannot connect to db1:21000: it answers in HTTP, as an hs2-http port does; try "
//        "--protocol hs2-http"
// An empty `try_this` leaves out "; try ...".
std::string cannot_connect(std::string_view endpoint, std::string_view what,
                           std::string_view try_this);

// "host:port", "[::1]:port" for an IPv6 address.
std::string format_endpoint(std::string_view host, int port);

// impalad's default HS2 ports: 21050 for binary HS2, 28000 for hs2-http.
inline constexpr int kImpaladBinaryPort = 21050;
inline constexpr int kImpaladHttpPort = 28000;

// Why a TCP connection to host:port could not be opened, from the reason the socket layer gave
// (Thrift's TSocket text or libcurl's message), after `tries` tries:
//   a name the resolver does not know  -> "cannot resolve HOST"
//   connection refused                 -> "nothing listens on HOST:PORT", with impalad's ports
//   anything else                      -> the reason as given
//   unreachable_message("db1.invalid", 21050, false, "Could not resolve host for client socket.",
//   4)
//     == "cannot connect to db1.invalid:21050: cannot resolve db1.invalid (4 tries); try -i "
//        "with a host name or address that resolves"
//   unreachable_message("10.0.0.7", 21000, false, "connect() failed: Connection refused", 1)
//     == "cannot connect to 10.0.0.7:21000: nothing listens on 10.0.0.7:21000 (connection "
//        "refused); impalad's HS2 port is 21050 (hs2) or 28000 (hs2-http); try -i 10.0.0.7:21050"
// On impalad's usual port it asks "is impalad running there?", and on localhost's says where a
// run without -i goes: "... is impalad running there? (a run without -i connects to localhost)".
// `answered_before`: the same endpoint answered earlier in this run (a reconnect after the server
// went away), so a refusal is no sign of a wrong port, and the message says what it is instead:
//     == "cannot connect to 10.0.0.7:21000: nothing listens on 10.0.0.7:21000 any more
//        (connection refused, 6 tries); it answered earlier in this run: has impalad stopped or
//        restarted?"
std::string unreachable_message(std::string_view host, int port, bool http, std::string_view reason,
                                int tries, bool answered_before = false);

}  // namespace atlas2kudu
