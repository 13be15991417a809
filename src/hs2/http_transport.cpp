#include "hs2/http_transport.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fmt/core.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <thrift/transport/TTransportException.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "hs2/credentials.h"
#include "hs2/error.h"
#include "hs2/tls.h"
#include "util/ascii_case.h"
#include "util/stop.h"
#include "util/utf8.h"

namespace atlas2kudu {

using apache::thrift::transport::TTransportException;

namespace {

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::size_t on_body(char* data, std::size_t size, std::size_t nmemb, void* user) {
  static_cast<std::string*>(user)->append(data, size * nmemb);
  return size * nmemb;
}

// CURLOPT_XFERINFOFUNCTION: non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK), once a
// stop's grace is over, as the binary transport's socket is shut down then.
int on_progress(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const HttpClientTransport*>(self)->stoppable() && stop_grace_over() ? 1 : 0;
}

// libcurl's words may quote a proxy variable's value whole ("Unsupported proxy syntax in
// 'http://u:p@ss@proxy:3128'"): each such value is replaced by its form without_password.
std::string without_proxy_userinfo(std::string detail) {
  for (const char* name :
       {"https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    const std::string shown = without_password(value);
    if (shown == value) continue;
    for (std::size_t at = detail.find(value); at != std::string::npos;
         at = detail.find(value, at + shown.size())) {
      detail.replace(at, std::strlen(value), shown);
    }
  }
  return detail;
}

// The proxy libcurl takes from the environment for a request to `host`: https_proxy (or
// HTTPS_PROXY) for https, http_proxy (libcurl reads no HTTP_PROXY) for http, else all_proxy (or
// ALL_PROXY); none when no_proxy (or NO_PROXY) names the host, a domain of it, or "*".
struct EnvironmentProxy {
  std::string variable;  // "http_proxy"
  std::string url;       // its value, without_password
};

std::optional<EnvironmentProxy> environment_proxy(bool tls, std::string_view host) {
  const auto get = [](const char* name) -> std::optional<EnvironmentProxy> {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return EnvironmentProxy{name, without_password(value)};
  };
  std::optional<EnvironmentProxy> proxy = tls ? get("https_proxy") : get("http_proxy");
  if (!proxy && tls) proxy = get("HTTPS_PROXY");
  if (!proxy) proxy = get("all_proxy");
  if (!proxy) proxy = get("ALL_PROXY");
  if (!proxy) return std::nullopt;
  const char* no_proxy = std::getenv("no_proxy");
  if (no_proxy == nullptr) no_proxy = std::getenv("NO_PROXY");
  std::string_view list = no_proxy ? no_proxy : "";
  // libcurl matches an address only as a whole (or by network), a name also by its domains.
  in_addr v4{};
  in6_addr v6{};
  const std::string host_text(host);
  const bool ipv4 = ::inet_pton(AF_INET, host_text.c_str(), &v4) == 1;
  const bool ip = ipv4 || ::inet_pton(AF_INET6, host_text.c_str(), &v6) == 1;
  while (!list.empty()) {
    const std::size_t end = list.find_first_of(", ");
    std::string_view entry = list.substr(0, end);
    list = end == std::string_view::npos ? std::string_view{} : list.substr(end + 1);
    if (entry == "*") return std::nullopt;
    if (entry.starts_with('.')) entry.remove_prefix(1);
    if (entry.empty()) continue;
    if (equals_ignoring_ascii_case(host, entry)) return std::nullopt;
    if (ip) {  // an address matches an equal one, or an IPv4 network "10.0.0.0/8"
      const std::size_t slash = entry.find('/');
      in_addr network{};
      int bits = -1;
      if (slash != std::string_view::npos &&
          ::inet_pton(AF_INET, std::string(entry.substr(0, slash)).c_str(), &network) == 1 &&
          std::from_chars(entry.data() + slash + 1, entry.data() + entry.size(), bits).ec ==
              std::errc() &&
          bits >= 0 && bits <= 32) {
        const std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
        if (ipv4 && (ntohl(v4.s_addr) & mask) == (ntohl(network.s_addr) & mask))
          return std::nullopt;
      }
      continue;
    }
    if (host.size() > entry.size() && host[host.size() - entry.size() - 1] == '.' &&
        equals_ignoring_ascii_case(host.substr(host.size() - entry.size()), entry)) {
      return std::nullopt;
    }
  }
  return proxy;
}

// The ex_data slot of the SSL_CTX that libcurl makes for each connection: the string that keeps
// the names of the certificate it verifies (HttpClientTransport::peer_names_).
int peer_names_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// The verify callback: keeps the leaf's names, decides nothing (libcurl's checks stand).
int keep_peer_names(int preverified, X509_STORE_CTX* store) {
  auto* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* names =
      ssl ? static_cast<std::string*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), peer_names_index()))
          : nullptr;
  if (names != nullptr && names->empty()) {
    if (X509* leaf = X509_STORE_CTX_get0_cert(store)) *names = certificate_names(leaf);
  }
  return preverified;
}

// A URL's parts as libcurl reads them (the port filled in from the scheme); nullopt when it
// cannot read it.
struct UrlView {
  std::string scheme, host, port, path;
};

std::optional<UrlView> parse_url(const std::string& url) {
  CURLU* u = curl_url();
  if (u == nullptr) return std::nullopt;
  std::optional<UrlView> view;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    const auto part = [u](CURLUPart which, unsigned flags) {
      char* text = nullptr;
      std::string out;
      if (curl_url_get(u, which, &text, flags) == CURLUE_OK && text != nullptr) out = text;
      curl_free(text);
      return out;
    };
    view = UrlView{part(CURLUPART_SCHEME, 0), part(CURLUPART_HOST, 0),
                   part(CURLUPART_PORT, CURLU_DEFAULT_PORT), part(CURLUPART_PATH, 0)};
    // An IPv6 address comes in brackets; -i's host has none.
    if (view->host.size() > 1 && view->host.front() == '[') {
      view->host = view->host.substr(1, view->host.size() - 2);
    }
  }
  curl_url_cleanup(u);
  return view;
}

}  // namespace

std::string redirect_advice(const std::string& url, const std::string& location) {
  const std::optional<UrlView> from = parse_url(url);
  const std::optional<UrlView> to = parse_url(location);
  const std::string fallback = "-i and --http_path naming where it redirects";
  if (!from || !to || (to->scheme != "http" && to->scheme != "https")) return fallback;
  const bool add_ssl = from->scheme == "http" && to->scheme == "https";
  if (!equals_ignoring_ascii_case(from->host, to->host)) {
    return add_ssl ? fallback + ", with --ssl (it redirects to https)" : fallback;
  }
  // The same server: what differs is what to change.
  std::vector<std::string> flags;
  if (add_ssl) flags.emplace_back("--ssl");
  if (to->scheme == "http" && from->scheme == "https") flags.emplace_back("without --ssl");
  if (to->port != from->port) {
    int port = 0;
    const char* end = to->port.data() + to->port.size();
    if (std::from_chars(to->port.data(), end, port).ptr != end) return fallback;
    flags.push_back("-i " + format_endpoint(to->host, port));
  }
  if (to->path != from->path) {
    std::string_view path = to->path;
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    flags.push_back("--http_path " + (path.empty() ? std::string("''") : one_line(path)));
  }
  if (flags.empty()) return fallback;
  std::string advice;
  for (const std::string& flag : flags) advice += (advice.empty() ? "" : " ") + flag;
  return advice;
}

namespace {

bool is_tls_trust_error(CURLcode rc) {
  return rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
         rc == CURLE_SSL_ISSUER_ERROR;
}

// Every other TLS failure (handshake, protocol version, alerts, client certificate).
bool is_tls_error(CURLcode rc) {
  switch (rc) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_USE_SSL_FAILED:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
      return true;
    default:
      return false;
  }
}

}  // namespace

struct TlsWatch {
  // CURLOPT_SSL_CTX_FUNCTION: called with each connection's SSL_CTX, after libcurl set it up.
  static CURLcode on_ssl_ctx(CURL*, void* ssl_ctx, void* self) {
    auto* ctx = static_cast<SSL_CTX*>(ssl_ctx);
    auto* transport = static_cast<HttpClientTransport*>(self);
    SSL_CTX_set_ex_data(ctx, peer_names_index(), &transport->peer_names_);
    SSL_CTX_set_verify(ctx, SSL_CTX_get_verify_mode(ctx), &keep_peer_names);
    note_certificate_requests(ctx, &transport->certificate_requested_);
    return CURLE_OK;
  }
};

HttpClientTransport::HttpClientTransport(HttpTransportConfig config,
                                         const Authenticator& authenticator)
    : config_(std::move(config)), authenticator_(&authenticator) {
  init_curl_once();
  if (!config_.sleep) config_.sleep = Clock::sleeper(system_clock());
  CURL* c = curl_easy_init();
  if (!c) throw Hs2Error(Hs2ErrorKind::kInternal, "HTTP: curl_easy_init failed");
  curl_ = c;
  curl_easy_setopt(c, CURLOPT_URL, config_.url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_COOKIEFILE, "");  // in-memory cookie engine, kept across requests
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &rbuf_);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &HttpClientTransport::on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, this);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.connect_timeout_ms));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(config_.request_timeout_ms));
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, config_.verify_tls ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, config_.verify_tls ? 2L : 0L);
  curl_easy_setopt(c, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
  if (!config_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
  // libcurl (7.68 and later) trusts a certificate of --ca_cert that is not a CA's, the server's own
  // leaf, as the end of a chain (X509_V_FLAG_PARTIAL_CHAIN); the binary transport's OpenSSL does
  // not. One file means the same trust on both: the chain must end at a CA of the bundle.
  curl_easy_setopt(c, CURLOPT_SSL_OPTIONS, static_cast<long>(CURLSSLOPT_NO_PARTIALCHAIN));
  curl_easy_setopt(c, CURLOPT_SSL_CTX_FUNCTION, &TlsWatch::on_ssl_ctx);
  curl_easy_setopt(c, CURLOPT_SSL_CTX_DATA, this);
  authenticator.configure_http(c);
}

HttpClientTransport::~HttpClientTransport() {
  if (curl_) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

void HttpClientTransport::set_rpc_timeout(int ms) {
  config_.request_timeout_ms = ms;
  curl_easy_setopt(static_cast<CURL*>(curl_), CURLOPT_TIMEOUT_MS, static_cast<long>(ms));
}

void HttpClientTransport::close() {
  open_ = false;
  wbuf_.clear();
  rbuf_.clear();
  rpos_ = 0;
}

uint32_t HttpClientTransport::read(uint8_t* buf, uint32_t len) {
  uint32_t n = static_cast<uint32_t>(std::min<std::size_t>(len, rbuf_.size() - rpos_));
  if (n == 0) return 0;  // reply exhausted: the protocol sees EOF
  std::memcpy(buf, rbuf_.data() + rpos_, n);
  rpos_ += n;
  return n;
}

void HttpClientTransport::write(const uint8_t* buf, uint32_t len) {
  wbuf_.append(reinterpret_cast<const char*>(buf), len);
}

std::size_t HttpClientTransport::on_header(char* data, std::size_t size, std::size_t nmemb,
                                           void* self) {
  const std::size_t n = size * nmemb;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    static_cast<HttpClientTransport*>(self)->challenges_.clear();  // a new response starts
  } else if (line.size() > 17 &&
             equals_ignoring_ascii_case(line.substr(0, 17), "WWW-Authenticate:")) {
    std::string_view value = line.substr(17);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
      value.remove_suffix(1);
    std::string& all = static_cast<HttpClientTransport*>(self)->challenges_;
    if (!all.empty()) all += ", ";
    all += value;
  }
  return n;
}

bool HttpClientTransport::holding_auth_cookie() const {
  curl_slist* cookies = nullptr;
  curl_easy_getinfo(static_cast<CURL*>(curl_), CURLINFO_COOKIELIST, &cookies);
  bool found = false;
  // Netscape cookie-file lines: domain, subdomains, path, secure, expiry, name, value (TABs).
  for (curl_slist* c = cookies; c && !found; c = c->next) {
    std::string_view line(c->data);
    for (int field = 0; field < 5; ++field) {
      const auto tab = line.find('\t');
      line = tab == std::string_view::npos ? std::string_view{} : line.substr(tab + 1);
    }
    const std::string_view name = line.substr(0, line.find('\t'));
    found = name.size() >= 5 && name.substr(name.size() - 5) == ".auth";
  }
  curl_slist_free_all(cookies);
  return found;
}

void HttpClientTransport::perform_once(long* status, long* retry_after) {
  CURL* c = static_cast<CURL*>(curl_);
  rbuf_.clear();
  rpos_ = 0;
  const std::string auth_header = authenticator_->http_auth_header(holding_auth_cookie());
  curl_slist* headers = nullptr;
  if (!auth_header.empty()) headers = curl_slist_append(headers, auth_header.c_str());
  headers = curl_slist_append(headers, "Content-Type: application/x-thrift");
  headers = curl_slist_append(headers, "Accept: application/x-thrift");
  headers = curl_slist_append(headers, "Expect:");  // Impala would answer 100-continue first
  headers = curl_slist_append(headers, "User-Agent: atlas2kudu");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, wbuf_.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(wbuf_.size()));
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  peer_names_.clear();
  certificate_requested_ = false;
  CURLcode rc = curl_easy_perform(c);
  curl_off_t uploaded = 0;
  long answered = 0;
  curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &uploaded);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &answered);
  // 502 and 504 come from a gateway that may have passed the request on; 503 and 401 refuse it.
  // Once true, true for the whole exchange: a later try's refusal does not undo an earlier one.
  may_have_arrived_ = may_have_arrived_ ||
                      (uploaded >= static_cast<curl_off_t>(wbuf_.size()) && !wbuf_.empty() &&
                       (answered == 0 || answered == 200 || answered == 502 || answered == 504));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    // Aborted by on_progress, or cut short otherwise while a stop is requested: no diagnosis, no
    // retry, no probe on a second connection.
    if (stoppable_) throw_if_stopped();
    std::string detail = without_proxy_userinfo(errbuf[0] ? errbuf : curl_easy_strerror(rc));
    while (!detail.empty() && detail.back() == ' ') detail.pop_back();  // libcurl's may end so
    const std::string endpoint = format_endpoint(config_.host, config_.port);
    const bool tls = config_.url.rfind("https:", 0) == 0;
    if (rc == CURLE_SSL_CACERT_BADFILE) {
      throw Hs2Error(
          Hs2ErrorKind::kAuth,
          fmt::format("TLS: cannot load CA certificates from {}: {}",
                      config_.ca_file.empty() ? "the system's store" : config_.ca_file, detail));
    }
    if (tls && client_certificate_refused(detail, certificate_requested_)) {
      throw client_certificate_required(endpoint, detail);
    }
    // TLS 1.3 refuses a client without a certificate after the handshake: the request can meet
    // the closed connection before the alert is read. Only before any reply on this transport.
    if (tls && certificate_requested_ && replies_ == 0 &&
        (rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING)) {
      throw client_certificate_asked_then_closed(endpoint, detail);
    }
    if (is_tls_trust_error(rc)) {
      // OpenSSL's verdict on the chain. The name is checked by libcurl itself once the chain
      // passed, with its own words for a mismatch ("... does not match target host name"),
      // which then reads as OpenSSL's would over hs2.
      long verify = X509_V_OK;
      curl_easy_getinfo(c, CURLINFO_SSL_VERIFYRESULT, &verify);
      if (rc == CURLE_PEER_FAILED_VERIFICATION &&
          detail.find("target host name") != std::string::npos) {
        verify = is_ip_literal(config_.host) ? X509_V_ERR_IP_ADDRESS_MISMATCH
                                             : X509_V_ERR_HOSTNAME_MISMATCH;
      }
      if (verify != X509_V_OK) {
        throw untrusted_certificate(endpoint, config_.host, verify, peer_names_);
      }
      throw Hs2Error(
          Hs2ErrorKind::kAuth,
          fmt::format("TLS: server certificate of {} not trusted: {}", endpoint, detail));
    }
    if (is_tls_error(rc)) {
      // libcurl's words for a server that closed the connection at the ClientHello.
      const bool closed = detail.find("SSL_ERROR_SYSCALL") != std::string::npos ||
                          detail.find("unexpected eof") != std::string::npos ||
                          detail.find("Connection reset") != std::string::npos;
      throw tls_handshake_failure(endpoint, detail, closed);
    }
    // Through a proxy of the environment, a connection that failed, or one that went unanswered
    // before any reply came through it, is the proxy's: the impalad's port was never reached, so
    // nothing is said of it. (Once replies have come, a timeout is the statement's, as without.)
    const bool proxy_unreachable =
        rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_PROXY;
    const bool never_answered =
        replies_ == 0 && (rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_GOT_NOTHING ||
                          rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR);
    if (proxy_unreachable || never_answered) {
      if (const auto proxy = environment_proxy(tls, config_.host)) {
        throw Hs2Error(Hs2ErrorKind::kTransient,
                       cannot_connect(endpoint,
                                      fmt::format("the request went to the proxy that ${} names "
                                                  "({}), which failed: {}",
                                                  proxy->variable, one_line(proxy->url), detail),
                                      fmt::format("no_proxy={} in the environment to connect "
                                                  "directly, or a proxy that works",
                                                  config_.host)));
      }
    }
    if (rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_WEIRD_SERVER_REPLY) {
      throw Hs2Error(Hs2ErrorKind::kMismatch,
                     cannot_connect(endpoint,
                                    fmt::format("it does not answer in HTTP ({}), as a binary HS2 "
                                                "port (impalad: {}) does",
                                                detail, kImpaladBinaryPort),
                                    "--protocol hs2"));
    }
    if (rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR) {
      if (replies_ > 0) {
        // This connection has answered before: it was lost (a restart, a proxy's idle cut), not
        // the wrong port. A reconnect may succeed.
        throw Hs2Error(Hs2ErrorKind::kTransient,
                       fmt::format("HTTP request failed: the connection to {} was lost before "
                                   "the reply ({})",
                                   endpoint, detail));
      }
      // Said at once rather than after the retries: a binary HS2 port (or a TLS port spoken to
      // in plain text) reads the request as garbage and hangs up. A second connection, with a
      // TLS ClientHello, tells a TLS port, as on the binary protocol.
      if (!tls && answers_tls(config_.host, config_.port, config_.connect_timeout_ms)) {
        throw Hs2Error(
            Hs2ErrorKind::kAuth,
            cannot_connect(endpoint,
                           fmt::format("it closed the connection without an HTTP reply ({}), and "
                                       "it answers a TLS ClientHello: the server expects TLS",
                                       detail),
                           "--ssl (and --ca_cert FILE if its CA is not a system one)"));
      }
      throw Hs2Error(
          Hs2ErrorKind::kTransient,
          cannot_connect(
              endpoint,
              fmt::format("it closed the connection without an HTTP reply ({}), as a "
                          "binary HS2 port (impalad: {}){} does",
                          detail, kImpaladBinaryPort, tls ? "" : " or a port that expects TLS"),
              tls ? "--protocol hs2" : "--protocol hs2, or --ssl"));
    }
    if (rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_CONNECT) {
      throw CouldNotConnect{detail};
    }
    // Whether -t ran out before the connection (with TLS, its handshake) was made. libcurl says
    // "Connection timed out" then, but on the first request -t bounds the whole request as well,
    // and under load either timer may fire first ("Operation timed out ... 0 bytes received"):
    // there the timings say which phase never finished. Only while no HTTP response has come on
    // this transport: a connection it kept (the first request retried after an HTTP 503) is
    // reused, and reports 0 for both. (libcurl's count of connections made counts only those
    // completed, so it cannot tell a reused connection from one that never connected.)
    bool connect_unfinished = detail.find("Connection timed out") != std::string::npos;
    if (rc == CURLE_OPERATION_TIMEDOUT && !connect_unfinished && responses_ == 0) {
      curl_off_t connected_us = 0;
      curl_off_t handshake_done_us = 0;
      curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connected_us);
      curl_easy_getinfo(c, CURLINFO_APPCONNECT_TIME_T, &handshake_done_us);
      connect_unfinished = connected_us == 0 || (tls && handshake_done_us == 0);
    }
    if (rc == CURLE_OPERATION_TIMEDOUT && tls && connect_unfinished) {
      // libcurl's connect phase includes the TLS handshake. A plain HTTP port reads the
      // ClientHello as the start of a request and waits for the rest; a plain request on a
      // second connection tells it from a silent server.
      if (answers_plain_http(config_.host, config_.port, config_.connect_timeout_ms)) {
        throw Hs2Error(Hs2ErrorKind::kAuth,
                       cannot_connect(endpoint,
                                      fmt::format("no answer to the TLS handshake ({}), and it "
                                                  "answers plain HTTP: it does not speak TLS",
                                                  detail),
                                      "without --ssl"));
      }
      detail +=
          " (no answer to the connect or the TLS handshake: a silent server, or no TLS on "
          "this port: try without --ssl)";
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      // Named as on the binary protocol: which limit ran out, and what to change. Still
      // transient: the reply is lost, and a reconnect may succeed.
      const int ms = config_.request_timeout_ms;
      if (connect_unfinished) {
        throw Hs2Error(Hs2ErrorKind::kTransient,
                       cannot_connect(endpoint,
                                      fmt::format("no answer to the connect within -t {} ms ({})",
                                                  config_.connect_timeout_ms, detail),
                                      "-t MS with more time, if the network is slow"));
      }
      if (replies_ == 0 && ms == config_.connect_timeout_ms) {
        // The first request, OpenSession: a binary HS2 port reads "POST ..." as the length of a
        // Thrift message and waits for the rest of it.
        throw Hs2Error(
            Hs2ErrorKind::kTransient,
            cannot_connect(endpoint,
                           fmt::format("it accepted the connection but sent no HTTP reply within "
                                       "-t {} ms ({}): a silent server, or not an hs2-http port",
                                       ms, detail),
                           fmt::format("--protocol hs2 if it is a binary HS2 port (impalad: {}), "
                                       "or -t MS with more time",
                                       kImpaladBinaryPort)));
      }
      throw Hs2Error(
          Hs2ErrorKind::kTransient,
          ms == config_.socket_timeout_ms
              ? fmt::format("no HTTP reply from {} within --socket_timeout_ms {} ms ({}; raise it "
                            "for a server slow to answer; 0: no limit)",
                            endpoint, ms, detail)
              : fmt::format("no HTTP reply from {} within {} ms ({})", endpoint, ms, detail));
    }
    // Connect failures, resets, EOF: the reply is lost; a reconnect may succeed.
    throw Hs2Error(Hs2ErrorKind::kTransient, fmt::format("HTTP request failed: {}", detail));
  }
  ++responses_;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
  curl_off_t ra = -1;
  if (curl_easy_getinfo(c, CURLINFO_RETRY_AFTER, &ra) != CURLE_OK) ra = -1;
  *retry_after = ra > 0 ? static_cast<long>(ra) : -1;
}

Hs2Error HttpClientTransport::not_thrift_reply() const {
  char* type = nullptr;
  curl_easy_getinfo(static_cast<CURL*>(curl_), CURLINFO_CONTENT_TYPE, &type);
  const std::string what = rbuf_.empty()
                               ? std::string("an empty body")
                               : fmt::format("{} bytes of {}, starting '{}'", rbuf_.size(),
                                             type ? one_line(type) : std::string("no Content-Type"),
                                             one_line(std::string_view(rbuf_).substr(0, 40)));
  return Hs2Error(
      Hs2ErrorKind::kMismatch,
      cannot_connect(
          format_endpoint(config_.host, config_.port),
          fmt::format("{} answered HTTP 200 with {}, not an HS2 (Thrift) reply", config_.url, what),
          fmt::format("-i with an hs2-http port (impalad: {}; its web UI is 25000)",
                      kImpaladHttpPort)));
}

Hs2Error HttpClientTransport::unexpected_status(long status) const {
  const std::string endpoint = format_endpoint(config_.host, config_.port);
  if (status == 403) {
    return Hs2Error(Hs2ErrorKind::kAuth,
                    fmt::format("{} refused this user (HTTP 403 Forbidden): authenticated, but "
                                "not allowed to connect",
                                endpoint));
  }
  if (status == 407) {
    return Hs2Error(
        Hs2ErrorKind::kAuth,
        cannot_connect(endpoint, "a proxy on the way requires authentication (HTTP 407)",
                       "without the proxy (https_proxy, http_proxy and no_proxy in "
                       "the environment choose it)"));
  }
  if (status >= 500) {
    // A gateway whose backend failed, or a server in trouble: worth the statement's retries.
    return Hs2Error(Hs2ErrorKind::kTransient,
                    fmt::format("{} answered HTTP {} (a server error, or a gateway whose "
                                "backend failed)",
                                config_.url, status));
  }
  if (status >= 300 && status < 400) {
    char* location = nullptr;
    curl_easy_getinfo(static_cast<CURL*>(curl_), CURLINFO_REDIRECT_URL, &location);
    return Hs2Error(
        Hs2ErrorKind::kMismatch,
        cannot_connect(endpoint,
                       fmt::format("{} redirects (HTTP {}) to {}; redirects are not followed, "
                                   "so that credentials go only where -i says",
                                   config_.url, status,
                                   // A password in it is not repeated (cron mail, --stats).
                                   location ? one_line(without_password(location))
                                            : std::string("nowhere named")),
                       location ? redirect_advice(config_.url, location)
                                : "-i and --http_path naming where it redirects"));
  }
  if (status == 404) {
    return Hs2Error(Hs2ErrorKind::kMismatch,
                    cannot_connect(endpoint,
                                   fmt::format("{} answered HTTP 404 Not Found (impalad serves "
                                               "any path; a gateway in front of it may not)",
                                               config_.url),
                                   "--http_path with the path the gateway serves HS2 on"));
  }
  return Hs2Error(
      Hs2ErrorKind::kMismatch,
      cannot_connect(endpoint,
                     fmt::format("{} answered HTTP {}, not an HS2 reply", config_.url, status),
                     fmt::format("-i with an hs2-http port (impalad: {})", kImpaladHttpPort)));
}

void HttpClientTransport::flush() {
  CURL* c = static_cast<CURL*>(curl_);
  // The request is spent however flush() ends: a stop or a failure must never leave its bytes to
  // be sent again ahead of the next call (CloseSession after a stop would re-run a statement).
  struct ClearRequest {
    std::string& request;
    ~ClearRequest() { request.clear(); }
  } clear_request{wbuf_};
  bool cleared_cookies = false;
  may_have_arrived_ = false;
  for (int attempt = 1;; ++attempt) {
    long status = 0, retry_after = -1;
    if (stoppable_) throw_if_stopped();  // no new try after a stop (also ends the waits below)
    try {
      perform_once(&status, &retry_after);
    } catch (const CouldNotConnect& e) {
      // As the binary transport does: --connect_max_tries tries, waiting 0 s, 1 s, 2 s, ...
      if (attempt >= config_.max_tries) {
        throw Hs2Error(Hs2ErrorKind::kTransient,
                       unreachable_message(config_.host, config_.port, true, e.detail, attempt,
                                           config_.answered_before && config_.answered_before()));
      }
      if (attempt > 1) config_.sleep(std::chrono::seconds(attempt - 1));
      continue;
    }
    if (status == 200) {
      // Every reply of the HS2 service is a strict Thrift binary message (version 0x8001 first);
      // anything else answered 200 is another server on that port (a web UI, a proxy's page).
      if (rbuf_.size() < 2 || static_cast<unsigned char>(rbuf_[0]) != 0x80 ||
          static_cast<unsigned char>(rbuf_[1]) != 0x01) {
        throw not_thrift_reply();
      }
      ++replies_;
      break;
    }
    if (status == 401) {
      curl_slist* cookies = nullptr;
      curl_easy_getinfo(c, CURLINFO_COOKIELIST, &cookies);
      bool had_cookies = cookies != nullptr;
      curl_slist_free_all(cookies);
      if (had_cookies && !cleared_cookies) {
        // A stale auth cookie: forget all cookies and resend once with credentials only.
        curl_easy_setopt(c, CURLOPT_COOKIELIST, "ALL");
        cleared_cookies = true;
        --attempt;
        continue;
      }
      throw Hs2Error(Hs2ErrorKind::kAuth,
                     authenticator_->http_unauthorized_message(
                         format_endpoint(config_.host, config_.port), challenges_));
    }
    if (status == 502 || status == 503 || status == 504) {
      if (attempt >= config_.max_tries)
        throw Hs2Error(Hs2ErrorKind::kTransient,
                       fmt::format("HTTP {} from {} after {} tries (--connect_max_tries)", status,
                                   format_endpoint(config_.host, config_.port), attempt));
      ++http_retries_;
      long wait = retry_after >= 0 ? std::min(retry_after, 60L) : attempt - 1;
      if (config_.on_wait) {
        config_.on_wait(HttpWait{static_cast<int>(status),
                                 format_endpoint(config_.host, config_.port), attempt + 1,
                                 config_.max_tries, wait, retry_after >= 0});
      }
      if (wait > 0) config_.sleep(std::chrono::seconds(wait));
      continue;
    }
    throw unexpected_status(status);
  }
}

}  // namespace atlas2kudu
