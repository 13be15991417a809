// One SQL session with Impala, as the executor and the prior state use it. The real one is
// Hs2Session (hs2_session.h, HiveServer2 over Thrift); tests substitute an in-memory fake through
// the SessionFactory that Hs2Executor and Hs2PriorState take, so their phases, batching and retries
// run without a network.
//
// Contract every implementation keeps:
//  * Not thread-safe: one session per thread (the executor gives each worker its own).
//  * Failures are thrown as Hs2Error with their kind already decided (error.h). After transport
//    trouble (kTransient from the connection) the session has dropped the connection itself:
//    connected() is false and the next use must connect() again. After kSessionLost the server no
//    longer knows the session: the caller drop()s and connect()s. After a rejected statement
//    (kDefinite) or a transient server error (admission, Kudu "Timed out") the session is usable.
//  * A session never re-runs a statement itself: re-running is the caller's decision (retry.h).
//
// Example:
//   SessionFactory sessions = hs2_session_factory(settings, credentials);
//   std::unique_ptr<SqlSession> s = sessions();
//   s->connect();
//   Hs2DmlResult r = s->execute("UPSERT INTO `atlas`.`t` VALUES ('k', 1)");
//   // r.rows_modified == 1, r.row_errors == 0
//   Hs2QueryResult q = s->query("SELECT `k`, `v` FROM `atlas`.`t` WHERE `k` IN ('k')");
//   // q.columns == {"k", "v"}, q.rows == {{"k", "1"}}   (NULL is std::nullopt)
//   s->close();
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hs2/credentials.h"
#include "hs2/http_wait.h"
#include "hs2/options.h"

namespace atlas2kudu {

struct Hs2DmlResult {
  std::int64_t rows_modified = 0;  // rows the statement changed (summed over partitions)
  std::int64_t row_errors = 0;     // Kudu row errors (conflicts, ignored rows): counted, not failed
  bool has_dml_result = false;     // false for statements that are not DML
};

// A SELECT's result, every value rendered as text (integers in decimal, booleans true/false,
// STRING/BINARY as their bytes).
struct Hs2QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

class SqlSession {
 public:
  virtual ~SqlSession() = default;

  // Opens the connection and the session; a connected session is reconnected.
  virtual void connect() = 0;
  virtual bool connected() const = 0;

  virtual Hs2DmlResult execute(std::string_view sql) = 0;
  virtual Hs2QueryResult query(std::string_view sql) = 0;

  // Forgets the session and the connection without telling the server (a broken connection must
  // not be reused; the server expires abandoned sessions).
  virtual void drop() noexcept = 0;
  // Ends the session on the server (best effort, bounded in time), then drops.
  virtual void close() noexcept = 0;
};

// Makes a new, unconnected session. Called from one thread at a time.
using SessionFactory = std::function<std::unique_ptr<SqlSession>()>;

// The real sessions (Hs2Session): each call makes a new one; all share one Authenticator (auth.h),
// and so the run's one credentials object (null: neither -l nor -j). `http_wait` is told of
// hs2-http's waits on 502/503/504 (hs2/http_wait.h), from the threads that run statements.
SessionFactory hs2_session_factory(const Hs2Settings& settings,
                                   std::shared_ptr<const Hs2Credentials> credentials,
                                   HttpWaitNotice http_wait = nullptr);

}  // namespace atlas2kudu
