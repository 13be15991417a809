#include "hs2/error.h"

#include <fmt/format.h>

#include <array>

#include "util/ascii_case.h"

namespace atlas2kudu {
namespace {

// Texts Impala and Kudu use for conditions that a later attempt can succeed past. Kept as
// substrings because Impala wraps the detail ("Query <id> failed:\n...").
constexpr std::array kSessionLostMarkers = {
    std::string_view{"Invalid session id"}, std::string_view{"Invalid or unknown query handle"},
    std::string_view{"Session expired"},    std::string_view{"expired due to inactivity"},
    std::string_view{"Session closed"},     std::string_view{"session has been closed"},
};

constexpr std::array kTransientMarkers = {
    // Admission control (impalad admission-controller texts).
    std::string_view{"Admission for query exceeded timeout"},
    std::string_view{"Rejected query from pool"},
    std::string_view{"queue full"},
    std::string_view{"Queue is full"},
    // Kudu client status codes as they appear in Impala's error text.
    std::string_view{"Timed out"},
    std::string_view{"Service unavailable"},
    std::string_view{"Network error"},
};

// Never retried even if they also contain a transient marker (a table called "timed_out" must not
// turn an analysis error into a retry loop).
constexpr std::array kDefiniteMarkers = {
    std::string_view{"AnalysisException"},    std::string_view{"ParseException"},
    std::string_view{"Syntax error"},         std::string_view{"AuthorizationException"},
    std::string_view{"Invalid query option"},
};

// Failures caused by some rows of a statement (or by its size), which a part of it can avoid.
constexpr std::array kRowMarkers = {
    std::string_view{"Kudu error(s) reported"},
    std::string_view{"value too large for column"},
    std::string_view{"could not be materialized"},  // Row of size ... (MAX_ROW_SIZE)
    std::string_view{"exceeds the maximum statement length"},
    std::string_view{"UDF ERROR"},  // a function failing on one value, e.g. a cast
};

}  // namespace

bool refused_because_of_rows(std::string_view message) {
  for (auto m : kDefiniteMarkers)
    if (contains_ignoring_ascii_case(message, m)) return false;
  for (auto m : kRowMarkers)
    if (contains_ignoring_ascii_case(message, m)) return true;
  return false;
}

Hs2ErrorKind classify_server_message(std::string_view message) {
  for (auto m : kDefiniteMarkers)
    if (contains_ignoring_ascii_case(message, m)) return Hs2ErrorKind::kDefinite;
  for (auto m : kSessionLostMarkers)
    if (contains_ignoring_ascii_case(message, m)) return Hs2ErrorKind::kSessionLost;
  for (auto m : kTransientMarkers)
    if (contains_ignoring_ascii_case(message, m)) return Hs2ErrorKind::kTransient;
  return Hs2ErrorKind::kDefinite;
}

std::string with_server_hint(std::string message) {
  if (contains_ignoring_ascii_case(message, "Could not resolve table reference")) {
    message +=
        " (create the projection tables first: `atlas2kudu ddl -d DATABASE` prints their DDL)";
  }
  return message;
}

ErrorCategory category_for(Hs2ErrorKind kind) {
  switch (kind) {
    case Hs2ErrorKind::kTransient:
    case Hs2ErrorKind::kSessionLost:
      return ErrorCategory::kUnavailable;
    case Hs2ErrorKind::kDefinite:
      return ErrorCategory::kServerRejected;
    case Hs2ErrorKind::kAuth:
      return ErrorCategory::kAuth;
    case Hs2ErrorKind::kUsage:
      return ErrorCategory::kUsage;
    case Hs2ErrorKind::kInternal:
      return ErrorCategory::kInternal;
    case Hs2ErrorKind::kTimeout:
    case Hs2ErrorKind::kMismatch:
      return ErrorCategory::kUnavailable;
  }
  return ErrorCategory::kInternal;
}

const char* to_string(Hs2ErrorKind kind) {
  switch (kind) {
    case Hs2ErrorKind::kTransient:
      return "transient";
    case Hs2ErrorKind::kSessionLost:
      return "session lost";
    case Hs2ErrorKind::kDefinite:
      return "definite";
    case Hs2ErrorKind::kAuth:
      return "authentication";
    case Hs2ErrorKind::kUsage:
      return "usage";
    case Hs2ErrorKind::kInternal:
      return "internal";
    case Hs2ErrorKind::kTimeout:
      return "timeout";
    case Hs2ErrorKind::kMismatch:
      return "protocol mismatch";
  }
  return "internal";
}

std::string cannot_connect(std::string_view endpoint, std::string_view what,
                           std::string_view try_this) {
  std::string out = fmt::format("cannot connect to {}: {}", endpoint, what);
  if (!try_this.empty()) fmt::format_to(std::back_inserter(out), "; try {}", try_this);
  return out;
}

std::string format_endpoint(std::string_view host, int port) {
  return host.find(':') != std::string_view::npos ? fmt::format("[{}]:{}", host, port)
                                                  : fmt::format("{}:{}", host, port);
}

std::string unreachable_message(std::string_view host, int port, bool http, std::string_view reason,
                                int tries, bool answered_before) {
  const std::string endpoint = format_endpoint(host, port);
  const std::string how_often = tries > 1 ? fmt::format(", {} tries", tries) : std::string();
  const std::string in_tries = tries > 1 ? fmt::format(" ({} tries)", tries) : std::string();
  // Thrift: "Could not resolve host for client socket."; libcurl: "Could not resolve host: X".
  if (contains_ignoring_ascii_case(reason, "resolve host")) {
    return cannot_connect(endpoint, fmt::format("cannot resolve {}{}", host, in_tries),
                          "-i with a host name or address that resolves");
  }
  // Thrift: "connect() failed: Connection refused"; libcurl: "Failed to connect to X port N
  // after 0 ms: Connection refused" (older: "Couldn't connect to server").
  if (contains_ignoring_ascii_case(reason, "refused") ||
      contains_ignoring_ascii_case(reason, "couldn't connect to server")) {
    if (answered_before) {
      return cannot_connect(endpoint,
                            fmt::format("nothing listens on {} any more (connection refused{}); it "
                                        "answered earlier in this run: has impalad stopped or "
                                        "restarted?",
                                        endpoint, how_often),
                            "");
    }
    const int usual = http ? kImpaladHttpPort : kImpaladBinaryPort;
    std::string what = fmt::format(
        "nothing listens on {} (connection refused{}); impalad's HS2 port is {} (hs2) or {} "
        "(hs2-http)",
        endpoint, how_often, kImpaladBinaryPort, kImpaladHttpPort);
    if (port == usual) {
      // A run without -i comes here: say where the address came from.
      const bool default_host = host == "localhost";
      return cannot_connect(
          endpoint,
          fmt::format("{}: is impalad running there?{}", what,
                      default_host ? " (a run without -i connects to localhost)" : ""),
          "");
    }
    return cannot_connect(endpoint, what, "-i " + format_endpoint(host, usual));
  }
  return cannot_connect(endpoint, fmt::format("{}{}", reason, in_tries), "");
}

}  // namespace atlas2kudu
