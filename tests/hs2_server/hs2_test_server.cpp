#include "hs2_test_server.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <thrift/TApplicationException.h>
#include <thrift/TProcessor.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransportException.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <random>

#include "ImpalaHiveServer2Service.h"
#include "hs2/sasl_transport.h"
#include "hs2/tls.h"
#include "kerberos_acceptor.h"
#include "util/ascii_case.h"
#include "util/base64.h"

namespace atlas2kudu::testing {

namespace t = atlas2kudu::hs2;
using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::transport::TBufferedTransport;
using apache::thrift::transport::TMemoryBuffer;
using apache::thrift::transport::TSocket;
using apache::thrift::transport::TTransport;
using apache::thrift::transport::TTransportException;

namespace {

// The connection a handler call is serving: a Thrift handler has no other way to ask for the
// connection to be dropped instead of answered.
struct ConnState {
  int fd = -1;
  bool drop = false;
};
thread_local ConnState* t_conn = nullptr;

constexpr std::int32_t kMaxThriftString = 100 << 20;

std::string random_bytes(std::size_t n) {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard lock(mu);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

t::TOperationHandle operation_handle(const std::string& guid, const std::string& secret,
                                     bool has_result_set) {
  t::THandleIdentifier id;
  id.__set_guid(guid);
  id.__set_secret(secret);
  t::TOperationHandle h;
  h.__set_operationId(id);
  h.__set_operationType(t::TOperationType::EXECUTE_STATEMENT);
  h.__set_hasResultSet(has_result_set);
  return h;
}

t::TStatus ok_status() {
  t::TStatus s;
  s.__set_statusCode(t::TStatusCode::SUCCESS_STATUS);
  return s;
}

// The key of the LONG_POLLING_TIME_MS query option in a statement's confOverlay (any case, as
// Impala matches option names), if any.
std::optional<std::string> long_polling_option(const t::TExecuteStatementReq& req) {
  for (const auto& [key, value] : req.confOverlay) {
    if (equals_ignoring_ascii_case(key, "LONG_POLLING_TIME_MS")) return key;
  }
  return std::nullopt;
}

// Its value in milliseconds; 0 when absent or not a positive number.
int long_poll_ms(const t::TExecuteStatementReq& req) {
  const std::optional<std::string> key = long_polling_option(req);
  if (!key) return 0;
  const std::string& value = req.confOverlay.at(*key);
  int ms = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
  return ec == std::errc() && end == value.data() + value.size() && ms > 0 ? ms : 0;
}

t::TStatus error_status(const std::string& msg) {
  t::TStatus s;
  s.__set_statusCode(t::TStatusCode::ERROR_STATUS);
  s.__set_errorMessage(msg);
  s.__set_sqlState("HY000");
  return s;
}

// Writes go to the wrapped transport; flush() drops the connection instead when the handler asked
// for it, so the client sees EOF where it expected a reply.
class DropGuard : public apache::thrift::transport::TVirtualTransport<DropGuard> {
 public:
  DropGuard(std::shared_ptr<TTransport> inner, ConnState* conn)
      : inner_(std::move(inner)), conn_(conn) {}
  bool isOpen() const override { return inner_->isOpen(); }
  bool peek() override { return inner_->peek(); }
  void close() override { inner_->close(); }
  uint32_t read(uint8_t* buf, uint32_t len) { return inner_->read(buf, len); }
  void write(const uint8_t* buf, uint32_t len) {
    if (!conn_->drop) inner_->write(buf, len);
  }
  void flush() override {
    if (conn_->drop) {
      ::shutdown(conn_->fd, SHUT_RDWR);
      throw TTransportException(TTransportException::NOT_OPEN, "fault injection: dropped");
    }
    inner_->flush();
  }

 private:
  std::shared_ptr<TTransport> inner_;
  ConnState* conn_;
};

// Server side of SASL data frames (4-byte big-endian length + payload).
class SaslServerFrames : public apache::thrift::transport::TVirtualTransport<SaslServerFrames> {
 public:
  SaslServerFrames(std::shared_ptr<TTransport> inner, bool split)
      : inner_(std::move(inner)), split_(split) {}
  bool isOpen() const override { return inner_->isOpen(); }
  bool peek() override { return rpos_ < rbuf_.size() || inner_->peek(); }
  void close() override { inner_->close(); }
  uint32_t read(uint8_t* buf, uint32_t len) {
    while (rpos_ == rbuf_.size()) {
      uint8_t h[4];
      inner_->readAll(h, 4);
      uint32_t n = (uint32_t{h[0]} << 24) | (uint32_t{h[1]} << 16) | (uint32_t{h[2]} << 8) | h[3];
      if (n > (1u << 30)) throw TTransportException(TTransportException::CORRUPTED_DATA, "frame");
      rbuf_.assign(n, 0);
      rpos_ = 0;
      if (n) inner_->readAll(rbuf_.data(), n);
    }
    uint32_t n = std::min<uint32_t>(len, static_cast<uint32_t>(rbuf_.size() - rpos_));
    std::memcpy(buf, rbuf_.data() + rpos_, n);
    rpos_ += n;
    return n;
  }
  void write(const uint8_t* buf, uint32_t len) { wbuf_.insert(wbuf_.end(), buf, buf + len); }
  void flush() override {
    std::vector<uint8_t> out;
    out.swap(wbuf_);
    const std::size_t chunk = split_ ? 7 : std::max<std::size_t>(out.size(), 1);
    std::size_t pos = 0;
    do {
      std::size_t n = std::min(chunk, out.size() - pos);
      std::vector<uint8_t> frame{static_cast<uint8_t>(n >> 24), static_cast<uint8_t>(n >> 16),
                                 static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)};
      frame.insert(frame.end(), out.begin() + static_cast<long>(pos),
                   out.begin() + static_cast<long>(pos + n));
      if (split_) {
        // Two writes with a pause: the client's reads see a frame header cut in the middle.
        std::size_t half = 2;
        inner_->write(frame.data(), static_cast<uint32_t>(half));
        inner_->flush();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        inner_->write(frame.data() + half, static_cast<uint32_t>(frame.size() - half));
      } else {
        inner_->write(frame.data(), static_cast<uint32_t>(frame.size()));
      }
      inner_->flush();
      pos += n;
    } while (pos < out.size());
  }

 private:
  std::shared_ptr<TTransport> inner_;
  bool split_;
  std::vector<uint8_t> rbuf_, wbuf_;
  std::size_t rpos_ = 0;
};

}  // namespace

struct Hs2TestServer::Impl : public std::enable_shared_from_this<Impl> {
  Hs2TestServerConfig config;
  std::shared_ptr<StatementHandler> handler;
  std::shared_ptr<TlsContext> tls;
  std::unique_ptr<KerberosAcceptor> kerberos;  // when config.keytab is set

  mutable std::mutex mu;
  Hs2TestServerStats stats;
  struct Op {
    StatementOutcome outcome;
    int polls_left = 0;
    std::size_t fetch_pos = 0;
    std::string query_id;
    bool held = false;  // FaultPlan::hang_at: RUNNING until cancelled
    std::chrono::steady_clock::time_point running_until{};  // FaultPlan::execution_ms
    int long_poll_ms = 0;  // the statement's LONG_POLLING_TIME_MS (FaultPlan::no_long_polling)

    bool running(std::chrono::steady_clock::time_point now) const {
      return held || now < running_until;
    }
  };
  std::condition_variable ops_cv;               // an operation cancelled
  std::map<std::string, std::string> sessions;  // guid → secret
  std::map<std::string, Op> ops;                // guid → operation
  std::set<std::string> cookies;                // valid impala.auth values
  int http_503_left = 0;
  std::mutex log_mu;

  int listen_fd = -1;
  std::atomic<bool> stopping{false};
  std::thread acceptor;
  std::condition_variable conns_cv;
  int active_conns = 0;
  std::set<int> conn_fds;

  void log_statement(const std::string& sql) {
    if (config.statement_log.empty()) return;
    std::string line = sql;
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::lock_guard lock(log_mu);
    std::ofstream(config.statement_log, std::ios::app) << line << '\n';
  }

  // Connection-level faults (FaultPlan::silent, http_reject_non_http, hang_at).
  void serve_silently(int fd);
  // Holds `fd` open until the client closes it or the server stops.
  void hold_until_closed(int fd);
  bool reply_400_unless_http(TTransport& wire, const std::string& received);
  void start_held_operation(t::TExecuteStatementResp& r, const t::TExecuteStatementReq& req, int n);

  void accept_loop();
  void serve(int fd);
  bool sasl_handshake(TTransport& wire);
  bool kerberos_sasl_handshake(TTransport& wire);
  bool kerberos_http_auth(const std::string& authorization, std::vector<std::string>* reply_headers,
                          std::string* client);
  std::vector<std::string> http_challenges() const;
  void serve_http(TTransport& wire, ConnState& conn);
};

namespace {

class Service : public t::ImpalaHiveServer2ServiceIf {
 public:
  explicit Service(Hs2TestServer::Impl& s) : s_(s) {}

  void OpenSession(t::TOpenSessionResp& r, const t::TOpenSessionReq& req) override {
    t::THandleIdentifier id;
    id.__set_guid(random_bytes(16));
    id.__set_secret(random_bytes(16));
    {
      std::lock_guard lock(s_.mu);
      s_.sessions[id.guid] = id.secret;
      ++s_.stats.sessions_opened;
    }
    t::TSessionHandle h;
    h.__set_sessionId(id);
    r.__set_status(ok_status());
    r.__set_serverProtocolVersion(
        std::min(req.client_protocol, t::TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V6));
    r.__set_sessionHandle(h);
    std::map<std::string, std::string> options{
        {"MEM_LIMIT", "0"}, {"REQUEST_POOL", ""}, {"http_addr", "127.0.0.1:0"}};
    if (!s_.config.faults.no_long_polling) options.emplace("LONG_POLLING_TIME_MS", "0");
    r.__set_configuration(options);
  }

  void CloseSession(t::TCloseSessionResp& r, const t::TCloseSessionReq& req) override {
    int latency;
    {
      std::lock_guard lock(s_.mu);
      latency = s_.config.faults.close_session_latency_ms;
    }
    if (latency > 0) std::this_thread::sleep_for(std::chrono::milliseconds(latency));
    std::lock_guard lock(s_.mu);
    const bool known = s_.sessions.erase(req.sessionHandle.sessionId.guid) > 0;
    if (known) ++s_.stats.sessions_closed;
    r.__set_status(known ? ok_status() : error_status("Invalid session id"));
  }

  void ExecuteStatement(t::TExecuteStatementResp& r, const t::TExecuteStatementReq& req) override {
    int n;
    FaultPlan f;
    {
      std::lock_guard lock(s_.mu);
      f = s_.config.faults;
      if (f.expire_sessions_at.count(s_.stats.statements + 1)) {
        s_.sessions.clear();
        s_.config.faults.expire_sessions_at.erase(s_.stats.statements + 1);
      }
      if (!s_.sessions.count(req.sessionHandle.sessionId.guid)) {
        r.__set_status(
            error_status("Invalid session id: " + hex(req.sessionHandle.sessionId.guid)));
        return;
      }
      n = ++s_.stats.statements;
      s_.stats.confoverlay_keys.clear();
      for (const auto& [k, v] : req.confOverlay) s_.stats.confoverlay_keys.push_back(k + "=" + v);
    }
    const std::optional<std::string> long_poll = long_polling_option(req);
    if (long_poll && f.no_long_polling) {
      r.__set_status(error_status("Invalid query option: " + *long_poll));
      return;
    }
    if (f.latency_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(f.latency_ms));
    if (f.drop_at.count(n)) {
      t_conn->drop = true;
      return;
    }
    if (f.hang_at.count(n)) {
      s_.start_held_operation(r, req, n);
      return;
    }
    StatementOutcome outcome;
    if (auto it = f.fail_at.find(n); it != f.fail_at.end()) {
      outcome.error = it->second;
    } else {
      outcome = s_.handler->execute(req.statement);
      if (f.deleted_meanwhile_at.count(n) && !outcome.error &&
          req.statement.rfind("DELETE", 0) == 0) {
        outcome.row_errors += outcome.rows_modified;
        outcome.rows_modified = 0;
      }
      s_.log_statement(req.statement);
      std::lock_guard lock(s_.mu);
      ++s_.stats.statements_run;
    }
    if (f.drop_after_run_at.count(n)) {
      t_conn->drop = true;
      return;
    }
    std::string guid = random_bytes(16);
    std::string query_id = hex(guid.substr(0, 8)) + ":" + hex(guid.substr(8));
    if (outcome.error && outcome.at_execute) {
      r.__set_status(error_status(fmt::format("Query {} failed:\n{}\n", query_id, *outcome.error)));
      return;
    }
    const t::TOperationHandle h =
        operation_handle(guid, req.sessionHandle.sessionId.secret, outcome.is_query);
    {
      std::lock_guard lock(s_.mu);
      s_.ops[guid] = Hs2TestServer::Impl::Op{
          std::move(outcome),
          f.running_polls,
          0,
          query_id,
          false,
          std::chrono::steady_clock::now() + std::chrono::milliseconds(f.execution_ms),
          long_poll_ms(req)};
    }
    r.__set_status(ok_status());
    r.__set_operationHandle(h);
  }

  void GetOperationStatus(t::TGetOperationStatusResp& r,
                          const t::TGetOperationStatusReq& req) override {
    std::unique_lock lock(s_.mu);
    const std::string& guid = req.operationHandle.operationId.guid;
    auto it = s_.ops.find(guid);
    if (it != s_.ops.end() && it->second.long_poll_ms > 0 && it->second.polls_left == 0) {
      // Held while the statement runs, up to its LONG_POLLING_TIME_MS, as Impala 4.5 holds it.
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(it->second.long_poll_ms);
      for (;;) {
        it = s_.ops.find(guid);
        const auto now = std::chrono::steady_clock::now();
        if (it == s_.ops.end() || !it->second.running(now) || now >= until || s_.stopping) break;
        s_.ops_cv.wait_until(lock,
                             it->second.held ? until : std::min(until, it->second.running_until));
      }
    }
    if (it == s_.ops.end()) {
      r.__set_status(error_status("Invalid or unknown query handle"));
      r.__set_operationState(t::TOperationState::ERROR_STATE);
      return;
    }
    auto& op = it->second;
    r.__set_status(ok_status());
    if (op.held) {
      r.__set_operationState(t::TOperationState::RUNNING_STATE);
    } else if (op.polls_left > 0) {
      --op.polls_left;
      r.__set_operationState(t::TOperationState::RUNNING_STATE);
    } else if (std::chrono::steady_clock::now() < op.running_until) {
      r.__set_operationState(t::TOperationState::RUNNING_STATE);
    } else if (op.outcome.error) {
      r.__set_operationState(t::TOperationState::ERROR_STATE);
      r.__set_errorMessage(fmt::format("Query {} failed:\n{}\n", op.query_id, *op.outcome.error));
      r.__set_sqlState("HY000");
    } else {
      r.__set_operationState(t::TOperationState::FINISHED_STATE);
      r.__set_hasResultSet(op.outcome.is_query);
    }
  }

  void CancelOperation(t::TCancelOperationResp& r, const t::TCancelOperationReq& req) override {
    std::lock_guard lock(s_.mu);
    auto it = s_.ops.find(req.operationHandle.operationId.guid);
    if (it == s_.ops.end()) {
      r.__set_status(error_status("Invalid or unknown query handle"));
      return;
    }
    // Impala reports a cancelled query as ERROR_STATE with this message.
    it->second.outcome.error = "Cancelled";
    it->second.held = false;
    it->second.polls_left = 0;
    it->second.running_until = {};
    ++s_.stats.operations_cancelled;
    s_.ops_cv.notify_all();
    r.__set_status(ok_status());
  }

  void CloseOperation(t::TCloseOperationResp& r, const t::TCloseOperationReq& req) override {
    std::lock_guard lock(s_.mu);
    const bool known = s_.ops.erase(req.operationHandle.operationId.guid) > 0;
    if (known) ++s_.stats.operations_closed;
    r.__set_status(known ? ok_status() : error_status("Invalid or unknown query handle"));
  }

  void GetResultSetMetadata(t::TGetResultSetMetadataResp& r,
                            const t::TGetResultSetMetadataReq& req) override {
    std::lock_guard lock(s_.mu);
    auto it = s_.ops.find(req.operationHandle.operationId.guid);
    if (it == s_.ops.end()) {
      r.__set_status(error_status("Invalid or unknown query handle"));
      return;
    }
    t::TTableSchema schema;
    int pos = 1;
    for (const auto& name : it->second.outcome.columns) {
      t::TPrimitiveTypeEntry prim;
      prim.__set_type(t::TTypeId::STRING_TYPE);
      t::TTypeEntry entry;
      entry.__set_primitiveEntry(prim);
      t::TTypeDesc type;
      type.__set_types({entry});
      t::TColumnDesc col;
      col.__set_columnName(name);
      col.__set_typeDesc(type);
      col.__set_position(pos++);
      schema.columns.push_back(col);
    }
    r.__set_status(ok_status());
    r.__set_schema(schema);
  }

  void FetchResults(t::TFetchResultsResp& r, const t::TFetchResultsReq& req) override {
    std::lock_guard lock(s_.mu);
    auto it = s_.ops.find(req.operationHandle.operationId.guid);
    if (it == s_.ops.end()) {
      r.__set_status(error_status("Invalid or unknown query handle"));
      return;
    }
    auto& op = it->second;
    const auto& rows = op.outcome.rows;
    std::size_t end = std::min(
        rows.size(), op.fetch_pos + static_cast<std::size_t>(std::max<int64_t>(req.maxRows, 1)));
    t::TRowSet set;
    set.__set_startRowOffset(static_cast<int64_t>(op.fetch_pos));
    for (std::size_t c = 0; c < op.outcome.columns.size(); ++c) {
      t::TStringColumn col;
      std::string nulls((end - op.fetch_pos + 7) / 8, '\0');
      for (std::size_t i = op.fetch_pos; i < end; ++i) {
        const auto& v = c < rows[i].size() ? rows[i][c] : std::nullopt;
        col.values.push_back(v.value_or(""));
        if (!v) nulls[(i - op.fetch_pos) / 8] |= static_cast<char>(1 << ((i - op.fetch_pos) % 8));
      }
      col.__set_nulls(nulls);
      t::TColumn tc;
      tc.__set_stringVal(col);
      set.columns.push_back(tc);
    }
    set.__isset.columns = true;
    op.fetch_pos = end;
    r.__set_status(ok_status());
    r.__set_hasMoreRows(end < rows.size());
    r.__set_results(set);
  }

  void GetLog(t::TGetLogResp& r, const t::TGetLogReq& req) override {
    std::lock_guard lock(s_.mu);
    auto it = s_.ops.find(req.operationHandle.operationId.guid);
    if (it == s_.ops.end()) {
      r.__set_status(error_status("Invalid or unknown query handle"));
      return;
    }
    // Like Impala: a progress line (which clients strip) followed by the error, if any.
    std::string log = fmt::format("Query {}: 100% Complete (1 out of 1)\n", it->second.query_id);
    if (it->second.outcome.error) log += *it->second.outcome.error + "\n";
    r.__set_status(ok_status());
    r.__set_log(log);
  }

  void CloseImpalaOperation(t::TCloseImpalaOperationResp& r,
                            const t::TCloseImpalaOperationReq& req) override {
    std::lock_guard lock(s_.mu);
    auto it = s_.ops.find(req.operationHandle.operationId.guid);
    if (it == s_.ops.end()) {
      r.__set_status(error_status("Invalid or unknown query handle"));
      return;
    }
    const auto& o = it->second.outcome;
    if (!o.error && !o.is_query) {
      t::TDmlResult dml;
      dml.__set_rows_modified({{"", o.rows_modified}});
      dml.__set_num_row_errors(o.row_errors);
      r.__set_dml_result(dml);
    }
    s_.ops.erase(it);
    ++s_.stats.operations_closed;
    r.__set_status(ok_status());
  }

  void PingImpalaHS2Service(t::TPingImpalaHS2ServiceResp& r,
                            const t::TPingImpalaHS2ServiceReq& req) override {
    std::lock_guard lock(s_.mu);
    if (!s_.sessions.count(req.sessionHandle.sessionId.guid)) {
      r.__set_status(error_status("Invalid session id"));
      return;
    }
    r.__set_status(ok_status());
    r.__set_version("atlas2kudu hs2_test_server");
  }

 private:
  Hs2TestServer::Impl& s_;
};

// Counts every RPC when its name has been read (so a client that got the reply sees it counted)
// and adds its time, to the reply written, when the processor frees the context (after the reply,
// also when fault injection dropped it) into Hs2TestServerStats::rpcs.
class RpcTimer : public apache::thrift::TProcessorEventHandler {
 public:
  explicit RpcTimer(Hs2TestServer::Impl& s) : s_(s) {}
  void* getContext(const char* fn_name, void*) override {
    std::lock_guard lock(s_.mu);
    ++rpc(fn_name).calls;
    return new std::chrono::steady_clock::time_point(std::chrono::steady_clock::now());
  }
  void freeContext(void* ctx, const char* fn_name) override {
    auto* started = static_cast<std::chrono::steady_clock::time_point*>(ctx);
    const std::chrono::duration<double, std::milli> busy =
        std::chrono::steady_clock::now() - *started;
    delete started;
    std::lock_guard lock(s_.mu);
    rpc(fn_name).busy_ms += busy.count();
  }

 private:
  RpcStats& rpc(std::string_view fn_name) {  // "ImpalaHiveServer2Service.ExecuteStatement"
    fn_name.remove_prefix(fn_name.find('.') + 1);
    return s_.stats.rpcs[std::string(fn_name)];
  }

  Hs2TestServer::Impl& s_;
};

// The processor of every connection: Impala's, or (FaultPlan::plain_hs2) one that does not know
// CloseImpalaOperation and answers it as the generated code answers any unknown method.
class Processor : public t::ImpalaHiveServer2ServiceProcessor {
 public:
  Processor(Hs2TestServer::Impl& s, bool plain_hs2)
      : t::ImpalaHiveServer2ServiceProcessor(std::make_shared<Service>(s)), plain_hs2_(plain_hs2) {
    setEventHandler(std::make_shared<RpcTimer>(s));
  }

 protected:
  bool dispatchCall(apache::thrift::protocol::TProtocol* in,
                    apache::thrift::protocol::TProtocol* out, const std::string& name,
                    int32_t seqid, void* context) override {
    if (!plain_hs2_ || name != "CloseImpalaOperation") {
      return t::ImpalaHiveServer2ServiceProcessor::dispatchCall(in, out, name, seqid, context);
    }
    in->skip(apache::thrift::protocol::T_STRUCT);
    in->readMessageEnd();
    in->getTransport()->readEnd();
    const apache::thrift::TApplicationException unknown(
        apache::thrift::TApplicationException::UNKNOWN_METHOD,
        "Invalid method name: '" + name + "'");
    out->writeMessageBegin(name, apache::thrift::protocol::T_EXCEPTION, seqid);
    unknown.write(out);
    out->writeMessageEnd();
    out->getTransport()->writeEnd();
    out->getTransport()->flush();
    return true;
  }

 private:
  bool plain_hs2_;
};

}  // namespace

void Hs2TestServer::Impl::accept_loop() {
  auto self = shared_from_this();
  while (!stopping) {
    pollfd p{listen_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    {
      std::lock_guard lock(mu);
      ++active_conns;
      ++stats.connections;
      conn_fds.insert(fd);
    }
    std::thread([self, fd] {
      try {
        self->serve(fd);
      } catch (...) {
        // A client that vanished, a TLS handshake that failed, a fault we injected: the
        // connection is over either way.
      }
      std::lock_guard lock(self->mu);
      self->conn_fds.erase(fd);
      --self->active_conns;
      self->conns_cv.notify_all();
    }).detach();
  }
}

bool Hs2TestServer::Impl::sasl_handshake(TTransport& wire) {
  auto fail = [&](SaslStatus status, const std::string& why) {
    {
      // Counted before replying, so a client that has seen the reply also sees the count.
      std::lock_guard lock(mu);
      ++stats.sasl_failures;
    }
    write_sasl_message(wire, status, why);
    return false;
  };
  auto [st, mech] = read_sasl_message(wire);
  if (st != SaslStatus::kStart) return fail(SaslStatus::kError, "expected SASL START");
  if (mech == "GSSAPI" && kerberos) return kerberos_sasl_handshake(wire);
  if (mech != "PLAIN" || (kerberos && config.user.empty())) {
    fail(SaslStatus::kBad, "Unsupported mechanism type " + mech);
    // Read the initial response the client sent right after START before closing, so that the
    // close is orderly and the client reads BAD rather than a reset.
    (void)read_sasl_message(wire);
    return false;
  }
  auto [st2, resp] = read_sasl_message(wire);
  if (st2 != SaslStatus::kOk && st2 != SaslStatus::kComplete)
    return fail(SaslStatus::kError, "expected SASL OK with the PLAIN response");
  // RFC 4616: authzid NUL authcid NUL passwd
  auto first = resp.find('\0');
  auto second = first == std::string::npos ? std::string::npos : resp.find('\0', first + 1);
  if (second == std::string::npos) return fail(SaslStatus::kBad, "malformed PLAIN response");
  std::string authcid = resp.substr(first + 1, second - first - 1);
  std::string passwd = resp.substr(second + 1);
  if (authcid != config.user || passwd != config.password)
    return fail(SaslStatus::kBad, "PLAIN: invalid username or password for user '" + authcid + "'");
  write_sasl_message(wire, SaslStatus::kComplete, "");
  return true;
}

// SASL GSSAPI after START "GSSAPI". A rejected ticket closes the connection without a SASL
// message, as Impala does.
bool Hs2TestServer::Impl::kerberos_sasl_handshake(TTransport& wire) {
  auto [status, token] = read_sasl_message(wire);
  KerberosAcceptor::Outcome outcome;
  if (status == SaslStatus::kOk || status == SaslStatus::kComplete)
    outcome = kerberos->sasl_gssapi(wire, std::move(token));
  std::lock_guard lock(mu);
  if (!outcome.ok) {
    ++stats.kerberos_failures;
    ++stats.sasl_failures;
    return false;
  }
  ++stats.kerberos_logins;
  stats.kerberos_client = outcome.client;
  return true;
}

// "Negotiate <base64 token>": true when the token is accepted; the mutual-authentication token, if
// any, is added to the reply headers.
bool Hs2TestServer::Impl::kerberos_http_auth(const std::string& authorization,
                                             std::vector<std::string>* reply_headers,
                                             std::string* client) {
  KerberosAcceptor::Outcome outcome;
  try {
    outcome = kerberos->spnego(base64_decode(authorization.substr(authorization.find(' ') + 1)));
  } catch (const std::exception& e) {
    outcome.error = e.what();  // not Base64
  }
  std::lock_guard lock(mu);
  if (!outcome.ok) {
    ++stats.kerberos_failures;
    return false;
  }
  ++stats.kerberos_logins;
  stats.kerberos_client = outcome.client;
  *client = outcome.client;
  if (!outcome.reply_token.empty())
    reply_headers->push_back("WWW-Authenticate: Negotiate " + base64_encode(outcome.reply_token));
  return true;
}

// The WWW-Authenticate headers of a 401: what this server would accept.
std::vector<std::string> Hs2TestServer::Impl::http_challenges() const {
  std::vector<std::string> out;
  if (kerberos) out.push_back("WWW-Authenticate: Negotiate");
  if (!kerberos || !config.user.empty()) out.push_back("WWW-Authenticate: Basic realm=\"impala\"");
  return out;
}

void Hs2TestServer::Impl::serve_http(TTransport& wire, ConnState& conn) {
  Processor processor(*this, config.faults.plain_hs2);
  std::string buf;
  auto fill = [&]() {
    uint8_t tmp[4096];
    uint32_t n = wire.read(tmp, sizeof tmp);
    if (n == 0) return false;
    buf.append(reinterpret_cast<char*>(tmp), n);
    return true;
  };
  auto respond = [&](const std::string& status, const std::vector<std::string>& headers,
                     const std::string& body) {
    std::string out = "HTTP/1.1 " + status + "\r\n";
    for (const auto& h : headers) out += h + "\r\n";
    out += fmt::format("Content-Length: {}\r\n\r\n", body.size());
    out += body;
    wire.write(reinterpret_cast<const uint8_t*>(out.data()), static_cast<uint32_t>(out.size()));
    wire.flush();
  };
  const bool auth_required = !config.user.empty() || !config.bearer_token.empty() || kerberos;
  for (;;) {
    std::size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return;
      if (config.faults.http_reject_non_http && reply_400_unless_http(wire, buf)) return;
    }
    std::string head = buf.substr(0, end);
    buf.erase(0, end + 4);
    std::map<std::string, std::string> headers;
    std::string request_line = head.substr(0, head.find("\r\n"));
    std::size_t pos = head.find("\r\n");
    while (pos != std::string::npos && pos < head.size()) {
      std::size_t next = head.find("\r\n", pos + 2);
      std::string line =
          head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        std::transform(name.begin(), name.end(), name.begin(), ::tolower);
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        headers[name] = value;
      }
      pos = next;
    }
    std::size_t length =
        headers.count("content-length") ? std::stoul(headers["content-length"]) : 0;
    while (buf.size() < length)
      if (!fill()) return;
    std::string body = buf.substr(0, length);
    buf.erase(0, length);
    {
      std::lock_guard lock(mu);
      ++stats.http_requests;
    }
    if (config.faults.http_status != 0) {
      const int status = config.faults.http_status;
      const std::string host = headers.count("host") ? headers["host"] : "";
      std::vector<std::string> headers = {"Connection: close"};
      if (status >= 300 && status < 400) {
        std::string location = config.faults.http_location;
        if (const auto at = location.find("{host}"); at != std::string::npos)
          location.replace(at, 6, host);
        headers.push_back("Location: " + location);
      }
      if (status == 200) {  // another server on the port: a web UI's page
        headers.push_back("Content-Type: text/html");
        respond("200 OK", headers, "<!DOCTYPE html>\n<html><body>impalad web UI</body></html>\n");
        return;
      }
      respond(fmt::format("{} Fault", status), headers, "");
      return;
    }
    if (request_line.rfind("POST ", 0) != 0) {
      respond("405 Method Not Allowed", {"Connection: close"}, "");
      return;
    }
    {
      std::lock_guard lock(mu);
      if (http_503_left > 0) {
        --http_503_left;
        ++stats.http_503_sent;
        respond("503 Service Unavailable",
                {fmt::format("Retry-After: {}", config.faults.retry_after_s)}, "");
        if (http_503_left == 0 && config.faults.http_silent_after_503) {
          hold_until_closed(conn.fd);
          return;
        }
        continue;
      }
    }
    std::vector<std::string> extra = {"Content-Type: application/x-thrift",
                                      "Connection: Keep-Alive"};
    if (auth_required) {
      bool ok = false, via_cookie = false;
      std::string cookie_header = headers["cookie"];
      auto cpos = cookie_header.find("impala.auth=");
      if (cpos != std::string::npos) {
        std::string value = cookie_header.substr(cpos + 12);
        value = value.substr(0, value.find(';'));
        std::lock_guard lock(mu);
        if (cookies.count(value)) {
          ok = via_cookie = true;
          ++stats.http_cookie_auth;
        }
      }
      const std::string& authz = headers["authorization"];
      std::string user = config.user, method = "basic";
      if (!ok && authz.rfind("Negotiate ", 0) == 0 && kerberos) {
        ok = kerberos_http_auth(authz, &extra, &user);
        method = "kerberos";
      } else if (!ok && authz.rfind("Basic ", 0) == 0) {
        std::string creds;
        try {
          creds = base64_decode(authz.substr(6));
        } catch (const DecodeError&) {
          creds.clear();  // not Base64: no credentials
        }
        ok = !config.user.empty() && creds == config.user + ":" + config.password;
      } else if (!ok && authz.rfind("Bearer ", 0) == 0) {
        ok = !config.bearer_token.empty() && authz.substr(7) == config.bearer_token;
      }
      if (!ok) {
        std::vector<std::string> refusal = http_challenges();
        refusal.push_back("Connection: close");
        respond("401 Unauthorized", refusal, "");
        return;
      }
      if (!via_cookie) {  // authenticated by credentials: issue a cookie
        std::string token = hex(random_bytes(16)) + "&u=" + user + "&a=" + method;
        {
          std::lock_guard lock(mu);
          cookies.insert(token);
        }
        extra.push_back("Set-Cookie: impala.auth=" + token + ";HttpOnly;Max-Age=86400" +
                        (tls ? ";Secure" : ""));
      }
    }
    auto in =
        std::make_shared<TMemoryBuffer>(reinterpret_cast<uint8_t*>(body.data()),
                                        static_cast<uint32_t>(body.size()), TMemoryBuffer::COPY);
    auto out = std::make_shared<TMemoryBuffer>();
    auto iprot = std::make_shared<TBinaryProtocol>(in);
    auto oprot = std::make_shared<TBinaryProtocol>(out);
    processor.process(iprot, oprot, nullptr);
    if (conn.drop) {
      ::shutdown(conn.fd, SHUT_RDWR);
      return;
    }
    respond("200 OK", extra, out->getBufferAsString());
    if (headers["connection"] == "close") return;
  }
}

void Hs2TestServer::Impl::hold_until_closed(int fd) {
  // Reading nothing, until the client gives up or the server stops.
  while (!stopping) {
    pollfd p{fd, POLLRDHUP, 0};
    if (::poll(&p, 1, 100) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) break;
  }
}

void Hs2TestServer::Impl::serve_silently(int fd) {
  hold_until_closed(fd);
  ::close(fd);
}

bool Hs2TestServer::Impl::reply_400_unless_http(TTransport& wire, const std::string& received) {
  // An HTTP request starts with a method name in capitals and a space ("POST /cliservice").
  std::size_t i = 0;
  while (i < received.size() && i < 8 && received[i] >= 'A' && received[i] <= 'Z') ++i;
  if (i == received.size() && i < 8) return false;  // too little to tell yet
  if (i > 0 && i < received.size() && received[i] == ' ') return false;
  const std::string reply =
      "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  wire.write(reinterpret_cast<const uint8_t*>(reply.data()), static_cast<uint32_t>(reply.size()));
  wire.flush();
  return true;
}

void Hs2TestServer::Impl::start_held_operation(t::TExecuteStatementResp& r,
                                               const t::TExecuteStatementReq& req, int n) {
  const std::string guid = random_bytes(16);
  const t::TOperationHandle h = operation_handle(guid, req.sessionHandle.sessionId.secret, false);
  {
    std::lock_guard lock(mu);
    Op op;
    op.held = true;
    op.long_poll_ms = long_poll_ms(req);
    op.query_id = hex(guid.substr(0, 8)) + ":" + hex(guid.substr(8));
    ops[guid] = std::move(op);
  }
  log_statement(fmt::format("-- holding statement {} until it is cancelled", n));
  r.__set_status(ok_status());
  r.__set_operationHandle(h);
}

void Hs2TestServer::Impl::serve(int fd) {
  if (config.faults.silent) {
    serve_silently(fd);
    return;
  }
  ConnState conn{fd, false};
  t_conn = &conn;
  auto socket = std::make_shared<TSocket>(fd);  // owns and closes fd
  std::shared_ptr<TTransport> wire = socket;
  if (tls) {
    auto t = std::make_shared<TlsTransport>(tls, socket, "");
    t->accept();
    wire = t;
  }
  if (config.transport == Hs2TestServerConfig::Transport::kHttp) {
    serve_http(*wire, conn);
    return;
  }
  std::shared_ptr<TTransport> top;
  if (config.transport == Hs2TestServerConfig::Transport::kSasl) {
    if (!sasl_handshake(*wire)) return;
    top = std::make_shared<SaslServerFrames>(wire, config.faults.sasl_split_frames);
  } else {
    top = std::make_shared<TBufferedTransport>(wire);
  }
  auto guard = std::make_shared<DropGuard>(top, &conn);
  auto proto = std::make_shared<TBinaryProtocol>(guard);
  // A client that is not speaking Thrift (an HTTP request: "POST" reads as a 1.3 GB method name)
  // is hung up on at once, as Thrift's default 100 MB message size limit makes a real server do,
  // not after allocating what the bytes say (seconds under ASan: the test of hs2-http against
  // the binary port then saw a timeout instead of the hang-up).
  proto->setStringSizeLimit(kMaxThriftString);
  Processor processor(*this, config.faults.plain_hs2);
  while (!stopping && guard->peek()) {
    if (!processor.process(proto, proto, nullptr)) break;
  }
}

Hs2TestServer::Hs2TestServer(Hs2TestServerConfig config, std::shared_ptr<StatementHandler> handler)
    : impl_(std::make_shared<Impl>()) {
  impl_->config = std::move(config);
  impl_->handler = std::move(handler);
  impl_->http_503_left = impl_->config.faults.http_503;
  if (!impl_->config.tls_cert.empty()) {
    impl_->tls = TlsContext::server(impl_->config.tls_cert, impl_->config.tls_key);
    // Mutual TLS, as impalad with --ssl_client_ca_certificate or a load balancer: a client
    // without a certificate is refused with an alert (TLS 1.3: certificate_required; TLS 1.2:
    // handshake_failure).
    if (impl_->config.tls_require_client_cert) {
      SSL_CTX_set_verify(impl_->tls->get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                         nullptr);
    }
    if (impl_->config.tls_max_1_2) SSL_CTX_set_max_proto_version(impl_->tls->get(), TLS1_2_VERSION);
  }
  if (!impl_->config.keytab.empty())
    impl_->kerberos =
        std::make_unique<KerberosAcceptor>(impl_->config.keytab, impl_->config.principal);
}

Hs2TestServer::~Hs2TestServer() {
  stop();
}

int Hs2TestServer::start() {
  signal(SIGPIPE, SIG_IGN);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only
  addr.sin_port = 0;                              // kernel picks a free port
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) {
    ::close(fd);
    throw std::runtime_error("bind/listen: " + std::string(std::strerror(errno)));
  }
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  impl_->listen_fd = fd;
  impl_->acceptor = std::thread([impl = impl_] { impl->accept_loop(); });
  return port_;
}

void Hs2TestServer::stop() {
  if (!impl_->acceptor.joinable()) return;
  impl_->stopping = true;
  impl_->acceptor.join();
  ::close(impl_->listen_fd);
  std::unique_lock lock(impl_->mu);
  for (int fd : impl_->conn_fds) ::shutdown(fd, SHUT_RDWR);  // unblocks their reads
  impl_->conns_cv.wait_for(lock, std::chrono::seconds(10),
                           [&] { return impl_->active_conns == 0; });
}

Hs2TestServerStats Hs2TestServer::stats() const {
  std::lock_guard lock(impl_->mu);
  Hs2TestServerStats stats = impl_->stats;
  stats.open_sessions = static_cast<int>(impl_->sessions.size());
  stats.open_operations = static_cast<int>(impl_->ops.size());
  return stats;
}

std::string stats_json(const Hs2TestServerStats& s) {
  std::string rpcs;
  for (const auto& [name, rpc] : s.rpcs) {
    rpcs += fmt::format("{}\"{}\":{{\"calls\":{},\"busy_ms\":{:.3f}}}", rpcs.empty() ? "" : ",",
                        name, rpc.calls, rpc.busy_ms);
  }
  std::string overlay;  // the last statement's confOverlay, as "KEY=VALUE" strings
  for (const std::string& kv : s.confoverlay_keys) {
    std::string quoted;
    for (const char c : kv) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    overlay += fmt::format("{}\"{}\"", overlay.empty() ? "" : ",", quoted);
  }
  return fmt::format(
      "{{\"connections\":{},\"sessions_opened\":{},\"sessions_closed\":{},\"statements\":{},"
      "\"statements_run\":{},\"operations_cancelled\":{},\"operations_closed\":{},"
      "\"open_sessions\":{},\"open_operations\":{},\"http_requests\":{},\"sasl_failures\":{},"
      "\"rpcs\":{{{}}},\"confoverlay\":[{}]}}\n",
      s.connections, s.sessions_opened, s.sessions_closed, s.statements, s.statements_run,
      s.operations_cancelled, s.operations_closed, s.open_sessions, s.open_operations,
      s.http_requests, s.sasl_failures, rpcs, overlay);
}

}  // namespace atlas2kudu::testing
