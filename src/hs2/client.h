// One HS2 session with Impala, used the way impala-shell runs DML (research §A.6, §E):
//   ExecuteStatement → poll GetOperationStatus (10 ms, growing to 1 s) → GetLog →
//   CloseImpalaOperation (rows_modified summed over partitions, num_row_errors).
// Every failure is thrown as Hs2Error with its kind already decided (hs2_error.h): transport
// trouble is kTransient, a lost session kSessionLost, a rejected statement kDefinite with the
// server's message. The client never re-runs anything itself (connect attempts aside): re-running
// is the executor's decision.
//
// Not thread-safe: one client per thread (the executor gives each worker its own).
//
// Example:
//   Hs2Client client(settings, make_authenticator(settings, credentials));
//   client.connect();                                        // transport + OpenSession(V6)
//   Hs2DmlResult r = client.execute("UPSERT INTO `atlas`.`t` VALUES ('k', 1)");
//   // r.rows_modified == 1, r.row_errors == 0
//   Hs2QueryResult q = client.query("SELECT `k`, `v` FROM `atlas`.`t` WHERE `k` IN ('k')");
//   // q.columns == {"k", "v"}, q.rows == {{"k", "1"}}   (NULL is std::nullopt)
//   client.close();                                          // CloseSession
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hs2/auth.h"
#include "hs2/options.h"

namespace atlas2kudu {

struct Hs2DmlResult {
  std::int64_t rows_modified = 0;  // sum of TDmlResult.rows_modified
  std::int64_t row_errors = 0;     // TDmlResult.num_row_errors (Kudu conflicts, ignored rows)
  bool has_dml_result = false;     // false for statements that are not DML
  std::string warnings;            // GetLog text without progress lines; may be empty
};

// A SELECT's result, every value rendered as text (integers in decimal, booleans true/false,
// STRING/BINARY as their bytes). Extension point for prior-state lookups (SPEC §3 --prior impala).
struct Hs2QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

class Hs2Client {
 public:
  Hs2Client(Hs2Settings settings, std::shared_ptr<const Authenticator> authenticator);
  ~Hs2Client();
  Hs2Client(const Hs2Client&) = delete;
  Hs2Client& operator=(const Hs2Client&) = delete;

  // Opens the transport (up to --connect_max_tries attempts on transient failures) and a session.
  void connect();
  bool connected() const;

  Hs2DmlResult execute(std::string_view sql);
  Hs2QueryResult query(std::string_view sql, std::int64_t fetch_size = 8192);
  // PingImpalaHS2Service: the server's version string.
  std::string ping();

  // CloseSession (best effort) and close the transport.
  void close() noexcept;
  // Forget the session and close the transport without any RPC: after a transport error the
  // stream is out of step and must not be reused.
  void drop() noexcept;

  // OpenSession's configuration map (Impala lists every query option it knows).
  const std::map<std::string, std::string>& server_configuration() const;

  // Test hook: how long to sleep between GetOperationStatus polls given the time since
  // ExecuteStatement returned. Default: 10 ms (<50 ms), 50 ms (<1 s), 100 ms (<10 s),
  // 500 ms (<60 s), then 1 s.
  using PollSchedule = std::function<std::chrono::milliseconds(std::chrono::milliseconds elapsed)>;
  void set_poll_schedule(PollSchedule schedule);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace atlas2kudu
