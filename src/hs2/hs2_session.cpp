#include "hs2/hs2_session.h"

#include <fmt/core.h>
#include <thrift/TApplicationException.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TProtocolException.h>
#include <thrift/transport/TTransportException.h>

#include <algorithm>
#include <charconv>
#include <regex>

#include "ImpalaHiveServer2Service.h"
#include "hs2/error.h"
#include "hs2/retry.h"
#include "hs2/sasl_transport.h"
#include "hs2/transport.h"
#include "util/ascii_case.h"
#include "util/stop.h"
#include "util/utf8.h"

namespace atlas2kudu {

namespace t = atlas2kudu::hs2;
using apache::thrift::TApplicationException;
using apache::thrift::TException;
using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::protocol::TProtocolException;
using apache::thrift::transport::TTransportException;
using std::chrono::milliseconds;

static_assert(kLongPoll < kSocketStopGrace, "a held poll must end within a stop's grace");

milliseconds poll_interval(milliseconds elapsed) {
  return std::clamp(elapsed / 16, milliseconds(1), milliseconds(1000));
}

namespace {

bool is_error(const t::TStatus& s) {
  return s.statusCode == t::TStatusCode::ERROR_STATUS ||
         s.statusCode == t::TStatusCode::INVALID_HANDLE_STATUS;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// GetLog mixes scan progress ("Query 1:2: 40% Complete (2 out of 5)") with the real warnings.
std::string strip_progress(const std::string& log) {
  static const std::regex progress(R"(^Query [0-9a-f:]+: [0-9]+% Complete.*$)");
  std::string out;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(start, end - start);
    if (!line.empty() && !std::regex_match(line, progress)) out += line + "\n";
    start = end + 1;
  }
  return trim(out);
}

bool null_at(const std::string& nulls, std::size_t i) {
  std::size_t byte = i / 8;
  return byte < nulls.size() && (static_cast<unsigned char>(nulls[byte]) >> (i % 8)) & 1;
}

template <class Column, class Render>
void append_column(const Column& col, std::size_t c, std::size_t base,
                   std::vector<std::vector<std::optional<std::string>>>& rows, Render render) {
  for (std::size_t i = 0; i < col.values.size(); ++i) {
    if (rows.size() <= base + i) rows.resize(base + i + 1);
    auto& row = rows[base + i];
    if (row.size() <= c) row.resize(c + 1);
    if (!null_at(col.nulls, i)) row[c] = render(col.values[i]);
  }
}

}  // namespace

struct Hs2Session::Impl {
  Impl(Hs2Settings s, std::shared_ptr<const Authenticator> a, Hooks hooks)
      : settings(std::move(s)),
        authenticator(std::move(a)),
        clock(hooks.clock ? std::move(hooks.clock) : system_clock()),
        make_transport(std::move(hooks.make_transport)),
        http_wait(std::move(hooks.http_wait)) {
    if (!make_transport) {
      make_transport = [this] {
        return make_hs2_transport(settings, *authenticator, Clock::sleeper(clock), http_wait);
      };
    }
  }

  const Hs2Settings settings;
  const std::shared_ptr<const Authenticator> authenticator;
  const std::shared_ptr<Clock> clock;
  std::function<std::shared_ptr<Hs2Transport>()> make_transport;
  const HttpWaitNotice http_wait;
  std::shared_ptr<Hs2Transport> transport;
  std::unique_ptr<t::ImpalaHiveServer2ServiceClient> rpc;
  std::optional<t::TSessionHandle> session;
  std::map<std::string, std::string> server_config;
  // What each ExecuteStatement sends: the -Q options, and LONG_POLLING_TIME_MS (choose_long_poll).
  std::map<std::string, std::string> overlay;
  // How long the server holds a GetOperationStatus of a running statement (0: not at all).
  milliseconds long_poll{0};

  // Runs one RPC, turning every Thrift-level failure into a classified Hs2Error. A failed
  // transport leaves the byte stream out of step, so it is dropped here and never reused. A
  // failure while a stop is requested is the stop cutting the I/O short (util/stop.h): StopError.
  template <class F>
  void call(const char* what, F&& f) {
    if (!rpc) throw Hs2Error(Hs2ErrorKind::kTransient, fmt::format("{}: not connected", what));
    try {
      f();
    } catch (const StopError&) {
      drop();  // hs2-http aborted the request: its connection is in no state to be used again
      throw;
    } catch (const Hs2Error&) {
      drop();  // raised by the transport (timeout, TLS, protocol mismatch): the stream is lost
      throw_if_stopped();
      throw;
    } catch (const TTransportException& e) {
      drop();
      throw_if_stopped();
      if (e.getType() == TTransportException::TIMED_OUT) {
        // Thrift says "THRIFT_EAGAIN (timed out)": name the limit that ran out.
        throw Hs2Error(Hs2ErrorKind::kTransient,
                       fmt::format("{}: no reply from {} within --socket_timeout_ms {} ms (raise "
                                   "it for a server slow to answer; 0: no limit)",
                                   what, endpoint(), settings.options().socket_timeout_ms));
      }
      throw Hs2Error(Hs2ErrorKind::kTransient,
                     fmt::format("{}: connection failed: {}", what, e.what()));
    } catch (const TApplicationException& e) {
      drop();
      throw_if_stopped();
      // A HiveServer2 that is not Impala (Hive, a proxy speaking plain TCLIService) or an Impala
      // before 3.3 has no CloseImpalaOperation, and without its row counts no run can tell that
      // every row landed: stop, naming the likely cause, not as a server fault.
      if (e.getType() == TApplicationException::UNKNOWN_METHOD) {
        throw Hs2Error(Hs2ErrorKind::kMismatch,
                       fmt::format("{}: {} does not know this call ({}): atlas2kudu needs an "
                                   "Impala daemon (3.3 or later) there, not another HiveServer2",
                                   what, endpoint(), e.what()));
      }
      throw Hs2Error(Hs2ErrorKind::kInternal, fmt::format("{}: server error: {}", what, e.what()));
    } catch (const TProtocolException& e) {
      drop();
      throw_if_stopped();
      throw Hs2Error(Hs2ErrorKind::kTransient, fmt::format("{}: bad reply: {}", what, e.what()));
    } catch (const TException& e) {
      drop();
      throw_if_stopped();
      throw Hs2Error(Hs2ErrorKind::kTransient, fmt::format("{}: {}", what, e.what()));
    }
  }

  void check(const t::TStatus& status, const char* what) {
    if (!is_error(status)) return;
    const std::string msg = trim(status.errorMessage);
    // On one line, as every diagnostic is: it reaches stderr, --stats and the reject file.
    throw Hs2Error(classify_server_message(msg),
                   fmt::format("{}: {}", what,
                               msg.empty() ? "(no message)" : with_server_hint(joined_lines(msg))));
  }

  // hs2-http: sessions opened on connections since lost. An HTTP session outlives its
  // connection (impalad closes it only after --disconnected_session_timeout, 15 minutes by
  // default, and a statement it was running may still be running), so the next connection
  // closes it: the copy of a statement that is re-run elsewhere is cancelled with it.
  std::vector<t::TSessionHandle> abandoned;
  static constexpr std::size_t kMaxAbandoned = 16;

  void close_abandoned() noexcept {
    if (abandoned.empty() || !rpc) return;
    std::vector<t::TSessionHandle> handles;
    handles.swap(abandoned);
    try {
      transport->set_rpc_timeout(settings.options().close_timeout_ms);
      for (const t::TSessionHandle& handle : handles) {
        t::TCloseSessionReq req;
        req.__set_sessionHandle(handle);
        t::TCloseSessionResp resp;
        rpc->CloseSession(resp, req);  // an error (unknown session: it expired) changes nothing
      }
    } catch (...) {
      // Best effort: the server expires them in the end. An HTTP request that failed leaves
      // nothing out of step for the next one.
    }
    transport->set_rpc_timeout(settings.options().socket_timeout_ms);
  }

  void drop() noexcept {
    if (session && settings.options().protocol == Hs2Protocol::kHttp &&
        abandoned.size() < kMaxAbandoned) {
      abandoned.push_back(*session);
    }
    session.reset();
    rpc.reset();
    if (transport) {
      try {
        transport->close();
      } catch (...) {
      }
      transport.reset();
    }
  }

  // Transient failures to open the transport (refused, reset, unreachable) are retried
  // (--connect_max_tries tries in all). A connect or handshake that timed out has already waited
  // -t and is not retried here (kTimeout; connect() hands it on as transient). Anything else,
  // e.g. a refused password or certificate, is thrown at once.
  void open_transport() {
    const Hs2Options& o = settings.options();
    RetryPolicy policy(o.connect_max_tries - 1, milliseconds(o.retry_backoff_ms),
                       Clock::sleeper(clock));
    std::string connect_failure;  // Thrift's reason when the last try could not connect
    policy.run(
        [&] {
          connect_failure.clear();
          try {
            transport = make_transport();
            transport->open();
            auto protocol = std::make_shared<TBinaryProtocol>(transport);
            rpc = std::make_unique<t::ImpalaHiveServer2ServiceClient>(protocol);
          } catch (const StopError&) {
            drop();
            throw;
          } catch (const SaslConnectionClosed& e) {
            drop();
            throw_if_stopped();  // the stop shut the socket down: no diagnosis, no probe
            // Closed before a SASL answer: if the port talks TLS, the password is not the
            // problem (a plain connection gets no alert from OpenSSL, only the hang-up).
            if (!o.ssl && answers_tls(settings.endpoint().host, settings.endpoint().port,
                                      o.connect_timeout_ms)) {
              throw Hs2Error(
                  Hs2ErrorKind::kAuth,
                  cannot_connect(endpoint(),
                                 fmt::format("it closed the connection during SASL negotiation "
                                             "({}), and it answers a TLS ClientHello: the "
                                             "server expects TLS",
                                             e.transport_error()),
                                 "--ssl (and --ca_cert FILE if its CA is not a system one)"));
            }
            throw;
          } catch (const SaslNotSasl& e) {
            drop();
            throw_if_stopped();
            throw Hs2Error(
                Hs2ErrorKind::kMismatch,
                cannot_connect(endpoint(),
                               fmt::format("{}: it does not speak HS2's SASL there", e.what()),
                               fmt::format("-i with impalad's HS2 port ({}; {} with "
                                           "--protocol hs2-http)",
                                           kImpaladBinaryPort, kImpaladHttpPort)));
          } catch (const Hs2Error&) {
            drop();
            throw_if_stopped();
            throw;
          } catch (const TTransportException& e) {
            drop();
            throw_if_stopped();
            connect_failure = e.what();
            if (e.getType() == TTransportException::TIMED_OUT) {
              throw Hs2Error(Hs2ErrorKind::kTimeout,
                             cannot_connect(endpoint(),
                                            fmt::format("no answer within -t {} ms ({})",
                                                        o.connect_timeout_ms, connect_failure),
                                            "-t MS with more time, if the network is slow"));
            }
            throw Hs2Error(Hs2ErrorKind::kTransient, connect_failure);
          } catch (const TException& e) {
            drop();
            throw_if_stopped();
            connect_failure = e.what();
            throw Hs2Error(Hs2ErrorKind::kTransient, connect_failure);
          }
        },
        [&](const RetryFailure& f) {
          if (f.exhausted && !connect_failure.empty()) {
            throw Hs2Error(Hs2ErrorKind::kTransient,
                           unreachable_message(settings.endpoint().host, settings.endpoint().port,
                                               o.protocol == Hs2Protocol::kHttp, connect_failure,
                                               f.retries + 1, settings.server_answered()));
          }
        });
  }

  // The server's first answer on a new connection: bounded by the connect timeout (-t), like the
  // handshakes before it, then the connection switches to the per-RPC timeout. A server that
  // accepted the connection and then stayed silent or hung up is usually the wrong port or
  // protocol: the message says which flags to try.
  std::string endpoint() const {
    return format_endpoint(settings.endpoint().host, settings.endpoint().port);
  }

  void open_session() {
    const Hs2Options& o = settings.options();
    t::TOpenSessionReq req;
    req.__set_client_protocol(t::TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V6);
    req.__set_username(settings.user());
    t::TOpenSessionResp resp;
    try {
      transport->set_rpc_timeout(o.connect_timeout_ms);
      call("OpenSession", [&] { rpc->OpenSession(resp, req); });
      transport->set_rpc_timeout(o.socket_timeout_ms);
    } catch (const Hs2Error& e) {
      // Binary: a server that hangs up on our first message is usually one that requires
      // authentication (Impala's SASL server closes on a message that is not SASL), TLS-only, or
      // not HS2.
      if (e.kind() != Hs2ErrorKind::kTransient || o.protocol == Hs2Protocol::kHttp) throw;
      const std::string what =
          fmt::format("it closed the connection without answering OpenSession ({})", e.what());
      // A TLS server that gets no ClientHello usually closes without a word (OpenSSL sends no
      // alert for bytes that are not TLS): one more connection, with a ClientHello, tells.
      if (!o.ssl &&
          answers_tls(settings.endpoint().host, settings.endpoint().port, o.connect_timeout_ms)) {
        throw Hs2Error(Hs2ErrorKind::kAuth,
                       cannot_connect(endpoint(),
                                      fmt::format("{}, and it answers a TLS ClientHello: the "
                                                  "server expects TLS",
                                                  what),
                                      "--ssl (and --ca_cert FILE if its CA is not a system one)"));
      }
      const std::string http_port = fmt::format(
          "--protocol hs2-http if it is an hs2-http port (impalad: {})", kImpaladHttpPort);
      if (!o.ldap && !o.kerberos && !o.jwt) {
        throw Hs2Error(
            Hs2ErrorKind::kTransient,
            cannot_connect(endpoint(), what + "; the server may require LDAP authentication",
                           fmt::format("-l -u USER (-k for Kerberos; {})", http_port)));
      }
      throw Hs2Error(Hs2ErrorKind::kTransient, cannot_connect(endpoint(), what, http_port));
    }
    check(resp.status, "OpenSession");
    if (!resp.__isset.sessionHandle)
      throw Hs2Error(Hs2ErrorKind::kInternal, "OpenSession: no session handle in reply");
    session = resp.sessionHandle;
    server_config = resp.configuration;
    choose_long_poll();
    close_abandoned();
  }

  // Impala 4.5 and later (IMPALA-13294) hold a GetOperationStatus until the statement ends, for
  // up to the LONG_POLLING_TIME_MS query option: the end is then seen at once, in one poll where
  // short steps take dozens. Asked of a server whose OpenSession reply lists the option (an
  // unknown key in confOverlay fails the statement), unless -Q sets it: the user's value wins.
  void choose_long_poll() {
    overlay = settings.query_overlay();
    long_poll = milliseconds(0);
    const auto named = [](const std::map<std::string, std::string>& options) {
      return std::find_if(options.begin(), options.end(), [](const auto& option) {
        return equals_ignoring_ascii_case(option.first, kLongPollOption);
      });
    };
    if (const auto set = named(overlay); set != overlay.end()) {
      int ms = 0;
      const std::string& value = set->second;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
      if (ec == std::errc() && end == value.data() + value.size() && ms > 0)
        long_poll = milliseconds(ms);
    } else if (named(server_config) != server_config.end()) {
      // Never held past --statement_timeout_ms, which is checked between polls.
      const milliseconds limit(settings.options().statement_timeout_ms);
      long_poll = limit.count() > 0 ? std::min(kLongPoll, limit) : kLongPoll;
      overlay.emplace(kLongPollOption, std::to_string(long_poll.count()));
    }
  }

  t::TOperationHandle start(std::string_view sql) {
    throw_if_stopped();  // nothing new is started once the run is asked to stop
    if (!session) throw Hs2Error(Hs2ErrorKind::kSessionLost, "no open session");
    t::TExecuteStatementReq req;
    req.__set_sessionHandle(*session);
    req.__set_statement(std::string(sql));
    if (!overlay.empty()) req.__set_confOverlay(overlay);
    req.__set_runAsync(true);
    t::TExecuteStatementResp resp;
    const std::shared_ptr<Hs2Transport> sending = transport;  // call() drops it on a stop
    bool sent = false;
    try {
      call("ExecuteStatement", [&] {
        rpc->send_ExecuteStatement(req);  // hs2-http: the whole exchange
        sent = true;
        rpc->recv_ExecuteStatement(resp);
      });
    } catch (StopError& e) {
      if (sent || (sending && sending->cut_request_may_have_arrived())) {
        e.set_statement_may_have_run();
      }
      throw;
    }
    check(resp.status, "ExecuteStatement");
    if (!resp.__isset.operationHandle)
      throw Hs2Error(Hs2ErrorKind::kInternal, "ExecuteStatement: no operation handle in reply");
    return resp.operationHandle;
  }

  std::string get_log(const t::TOperationHandle& op) {
    t::TGetLogReq req;
    req.__set_operationHandle(op);
    t::TGetLogResp resp;
    call("GetLog", [&] { rpc->GetLog(resp, req); });
    if (is_error(resp.status)) return {};
    return strip_progress(resp.log);
  }

  // Frees the operation on the server; DML counts come back here.
  t::TCloseImpalaOperationResp close_op(const t::TOperationHandle& op) {
    t::TCloseImpalaOperationReq req;
    req.__set_operationHandle(op);
    t::TCloseImpalaOperationResp resp;
    call("CloseImpalaOperation", [&] { rpc->CloseImpalaOperation(resp, req); });
    return resp;
  }

  // Best effort after a failure: the real error is already known, the clean-up must not hide it.
  void cleanup_after_error(const t::TOperationHandle& op) noexcept {
    try {
      if (rpc) close_op(op);
    } catch (...) {
    }
  }

  // Asks the server to stop the operation and frees it (both bounded by close_timeout_ms), after
  // a stop request or a statement timeout. Best effort: the failure being reported is the reason.
  void cancel(const t::TOperationHandle& op) noexcept {
    // Not cut short by the stop that asked for it: the server must hear of it.
    const std::shared_ptr<Hs2Transport> unstoppable = transport;
    if (unstoppable) unstoppable->set_stoppable(false);
    try {
      if (!rpc) return;
      transport->set_rpc_timeout(settings.options().close_timeout_ms);
      t::TCancelOperationReq req;
      req.__set_operationHandle(op);
      t::TCancelOperationResp resp;
      call("CancelOperation", [&] { rpc->CancelOperation(resp, req); });
      close_op(op);
      if (transport) transport->set_rpc_timeout(settings.options().socket_timeout_ms);
    } catch (...) {
    }
    if (unstoppable) unstoppable->set_stoppable(true);
  }

  // Polls until the operation ends. Between polls: a stop request (util/stop.h) or
  // --statement_timeout_ms cancels the operation and throws StopError / Hs2Error(kTimeout).
  void wait(const t::TOperationHandle& op) {
    try {
      wait_until_done(op);
    } catch (StopError& e) {
      e.set_statement_may_have_run();  // it ran until cancelled, or runs on with its session
      throw;
    }
  }

  void wait_until_done(const t::TOperationHandle& op) {
    const auto started = clock->now();
    const milliseconds limit(settings.options().statement_timeout_ms);
    for (;;) {
      // A stop noticed in the sleep below: no further poll, which the stop would cut short,
      // leaving the statement running.
      if (stop_requested()) {
        cancel(op);
        throw StopError(stop_reason());
      }
      t::TGetOperationStatusReq req;
      req.__set_operationHandle(op);
      t::TGetOperationStatusResp resp;
      const auto asked = clock->now();
      {
        // The server may hold the reply for long_poll: the reply's own limit starts after it.
        const int socket_timeout = settings.options().socket_timeout_ms;
        const bool held = long_poll.count() > 0 && socket_timeout > 0 && transport != nullptr;
        if (held) transport->set_rpc_timeout(socket_timeout + static_cast<int>(long_poll.count()));
        call("GetOperationStatus", [&] { rpc->GetOperationStatus(resp, req); });
        if (held) transport->set_rpc_timeout(socket_timeout);
      }
      const auto held_for = std::chrono::duration_cast<milliseconds>(clock->now() - asked);
      if (is_error(resp.status) && !resp.__isset.operationState)
        check(resp.status, "GetOperationStatus");
      switch (resp.operationState) {
        case t::TOperationState::FINISHED_STATE:
          return;
        case t::TOperationState::INITIALIZED_STATE:
        case t::TOperationState::RUNNING_STATE:
        case t::TOperationState::PENDING_STATE:
          if (!is_error(resp.status)) break;
          [[fallthrough]];
        default: {
          // ERROR_STATE (Impala reports cancellation this way too), or an unknown handle.
          std::string msg =
              trim(resp.errorMessage.empty() ? resp.status.errorMessage : resp.errorMessage);
          std::string log;
          try {
            log = get_log(op);
          } catch (const Hs2Error&) {
          }
          cleanup_after_error(op);
          if (msg.empty()) msg = log.empty() ? "(no message)" : log;
          // Classify on message AND log: the Kudu status may be only in the log.
          Hs2ErrorKind kind = classify_server_message(msg);
          if (kind == Hs2ErrorKind::kDefinite && !log.empty() &&
              classify_server_message(msg + "\n" + log) != Hs2ErrorKind::kDefinite &&
              classify_server_message(log) != Hs2ErrorKind::kDefinite)
            kind = classify_server_message(log);
          // Impala's "Query <id> failed:\n<cause>" on one line, so that the cause stays on the
          // "atlas2kudu:" line a cron mail is searched for; no server byte reaches a terminal
          // unescaped.
          throw Hs2Error(kind, with_server_hint(joined_lines(msg)));
        }
      }
      const auto elapsed = std::chrono::duration_cast<milliseconds>(clock->now() - started);
      if (stop_requested()) {
        cancel(op);
        throw StopError(stop_reason());
      }
      if (limit.count() > 0 && elapsed >= limit) {
        cancel(op);
        throw Hs2Error(Hs2ErrorKind::kTimeout,
                       fmt::format("statement still running after --statement_timeout_ms {} ms; "
                                   "cancelled",
                                   limit.count()));
      }
      milliseconds pause = poll_interval(elapsed);
      // A poll the server held (most of) long_poll already waited: the next one goes at once. One
      // answered sooner, still running (a server that took the option and does not hold), waits
      // as without it.
      if (long_poll.count() > 0 && held_for * 2 >= long_poll) pause = milliseconds(0);
      if (limit.count() > 0) pause = std::min(pause, std::max(limit - elapsed, milliseconds(1)));
      if (pause.count() > 0) clock->sleep_for(pause);
    }
  }
};

Hs2Session::Hs2Session(Hs2Settings settings, std::shared_ptr<const Authenticator> authenticator,
                       Hooks hooks)
    : impl_(std::make_unique<Impl>(std::move(settings), std::move(authenticator),
                                   std::move(hooks))) {}

Hs2Session::~Hs2Session() {
  close();
}

void Hs2Session::connect() {
  impl_->drop();
  try {
    impl_->open_transport();
    impl_->open_session();
    impl_->settings.note_server_answered();
  } catch (StopError& e) {
    e.add_context(fmt::format("connecting to {}: ", impl_->endpoint()));
    throw;
  } catch (const Hs2Error& e) {
    // Not retried inside one connect, since it already waited -t; a later connect may work.
    if (e.kind() == Hs2ErrorKind::kTimeout) throw Hs2Error(Hs2ErrorKind::kTransient, e.what());
    throw;
  }
}

bool Hs2Session::connected() const {
  return impl_->rpc && impl_->session;
}

Hs2DmlResult Hs2Session::execute(std::string_view sql) {
  t::TOperationHandle op = impl_->start(sql);
  impl_->wait(op);
  // No GetLog after success: its warnings are not needed (the counts come with the close), and
  // it would cost a round trip per statement.
  Hs2DmlResult result;
  t::TCloseImpalaOperationResp resp = impl_->close_op(op);
  impl_->check(resp.status, "CloseImpalaOperation");
  if (resp.__isset.dml_result) {
    result.has_dml_result = true;
    for (const auto& [partition, n] : resp.dml_result.rows_modified) result.rows_modified += n;
    if (resp.dml_result.__isset.num_row_errors) result.row_errors = resp.dml_result.num_row_errors;
  }
  return result;
}

Hs2QueryResult Hs2Session::query(std::string_view sql) {
  constexpr std::int64_t kFetchSize = 8192;  // rows per FetchResults
  t::TOperationHandle op = impl_->start(sql);
  impl_->wait(op);
  Hs2QueryResult out;
  try {
    t::TGetResultSetMetadataReq mreq;
    mreq.__set_operationHandle(op);
    t::TGetResultSetMetadataResp mresp;
    impl_->call("GetResultSetMetadata", [&] { impl_->rpc->GetResultSetMetadata(mresp, mreq); });
    impl_->check(mresp.status, "GetResultSetMetadata");
    for (const auto& c : mresp.schema.columns) out.columns.push_back(c.columnName);
    for (;;) {
      t::TFetchResultsReq freq;
      freq.__set_operationHandle(op);
      freq.__set_orientation(t::TFetchOrientation::FETCH_NEXT);
      freq.__set_maxRows(kFetchSize);
      t::TFetchResultsResp fresp;
      impl_->call("FetchResults", [&] { impl_->rpc->FetchResults(fresp, freq); });
      if (fresp.status.statusCode == t::TStatusCode::STILL_EXECUTING_STATUS) continue;
      impl_->check(fresp.status, "FetchResults");
      const std::size_t base = out.rows.size();
      std::size_t fetched = 0;
      const auto& cols = fresp.results.columns;
      for (std::size_t c = 0; c < cols.size(); ++c) {
        const t::TColumn& col = cols[c];
        auto& rows = out.rows;
        if (col.__isset.stringVal) {
          append_column(col.stringVal, c, base, rows, [](const std::string& v) { return v; });
          fetched = std::max(fetched, col.stringVal.values.size());
        } else if (col.__isset.binaryVal) {
          append_column(col.binaryVal, c, base, rows, [](const std::string& v) { return v; });
          fetched = std::max(fetched, col.binaryVal.values.size());
        } else if (col.__isset.i64Val) {
          append_column(col.i64Val, c, base, rows,
                        [](std::int64_t v) { return std::to_string(v); });
          fetched = std::max(fetched, col.i64Val.values.size());
        } else if (col.__isset.i32Val) {
          append_column(col.i32Val, c, base, rows,
                        [](std::int32_t v) { return std::to_string(v); });
          fetched = std::max(fetched, col.i32Val.values.size());
        } else if (col.__isset.i16Val) {
          append_column(col.i16Val, c, base, rows,
                        [](std::int16_t v) { return std::to_string(v); });
          fetched = std::max(fetched, col.i16Val.values.size());
        } else if (col.__isset.byteVal) {
          append_column(col.byteVal, c, base, rows,
                        [](std::int8_t v) { return std::to_string(v); });
          fetched = std::max(fetched, col.byteVal.values.size());
        } else if (col.__isset.boolVal) {
          append_column(col.boolVal, c, base, rows,
                        [](bool v) { return std::string(v ? "true" : "false"); });
          fetched = std::max(fetched, col.boolVal.values.size());
        } else if (col.__isset.doubleVal) {
          append_column(col.doubleVal, c, base, rows,
                        [](double v) { return fmt::format("{}", v); });
          fetched = std::max(fetched, col.doubleVal.values.size());
        }
      }
      for (auto& row : out.rows) row.resize(out.columns.size());
      if (!fresp.hasMoreRows || fetched == 0) break;
    }
  } catch (...) {
    impl_->cleanup_after_error(op);
    throw;
  }
  t::TCloseImpalaOperationResp resp = impl_->close_op(op);
  impl_->check(resp.status, "CloseImpalaOperation");
  return out;
}

std::string Hs2Session::ping() {
  if (!impl_->session) throw Hs2Error(Hs2ErrorKind::kSessionLost, "no open session");
  t::TPingImpalaHS2ServiceReq req;
  req.__set_sessionHandle(*impl_->session);
  t::TPingImpalaHS2ServiceResp resp;
  impl_->call("PingImpalaHS2Service", [&] { impl_->rpc->PingImpalaHS2Service(resp, req); });
  impl_->check(resp.status, "PingImpalaHS2Service");
  return resp.version;
}

void Hs2Session::close() noexcept {
  if (impl_->rpc && impl_->session) {
    try {
      // Bounded by the close timeout, not cut short by a stop: the end of a stopped run too.
      impl_->transport->set_stoppable(false);
      impl_->transport->set_rpc_timeout(impl_->settings.options().close_timeout_ms);
      t::TCloseSessionReq req;
      req.__set_sessionHandle(*impl_->session);
      t::TCloseSessionResp resp;
      impl_->rpc->CloseSession(resp, req);
    } catch (...) {
      // The server expires abandoned sessions (disconnected_session_timeout); nothing to do.
    }
  }
  impl_->session.reset();  // closed: not one to close on a next connection
  impl_->drop();
}

void Hs2Session::drop() noexcept {
  impl_->drop();
}

const std::map<std::string, std::string>& Hs2Session::server_configuration() const {
  return impl_->server_config;
}

SessionFactory hs2_session_factory(const Hs2Settings& settings,
                                   std::shared_ptr<const Hs2Credentials> credentials,
                                   HttpWaitNotice http_wait) {
  std::shared_ptr<const Authenticator> authenticator =
      make_authenticator(settings, std::move(credentials));
  return [settings, authenticator, http_wait]() -> std::unique_ptr<SqlSession> {
    return std::make_unique<Hs2Session>(settings, authenticator,
                                        Hs2SessionHooks{.http_wait = http_wait});
  };
}

}  // namespace atlas2kudu
