#include "hs2/auth.h"

#include <curl/curl.h>
#include <fmt/core.h>
#include <openssl/crypto.h>
#include <sasl/sasl.h>
#include <thrift/transport/TBufferTransports.h>

#include <cstdlib>
#include <cstring>
#include <optional>

#include "hs2/error.h"
#include "hs2/kerberos.h"
#include "hs2/sasl_transport.h"
#include "util/ascii_case.h"
#include "util/base64.h"
#include "util/utf8.h"

namespace atlas2kudu {

using apache::thrift::transport::TBufferedTransport;
using apache::thrift::transport::TTransport;

namespace {

// The SASL service name Impala registers (impala-shell's --kerberos_service_name default); with
// PLAIN, Cyrus only records it.
constexpr const char* kImpalaSaslService = "impala";

// The flag that sends what an HTTP 401's WWW-Authenticate challenges ask for, Kerberos first (an
// impalad with Kerberos and LDAP offers both, and Kerberos needs no password).
std::string flag_for_challenges(std::string_view challenges) {
  if (contains_ignoring_ascii_case(challenges, "Negotiate")) return "-k (Kerberos)";
  if (contains_ignoring_ascii_case(challenges, "Bearer")) return "-j (JWT)";
  return "-l -u USER (LDAP)";
}

// When a 401's challenges name schemes, none of them `scheme` (the one sent): the server wants
// another authentication, and no password or token was judged.
std::optional<std::string> other_scheme_wanted(std::string_view endpoint,
                                               std::string_view challenges, std::string_view scheme,
                                               std::string_view what) {
  if (challenges.empty() || contains_ignoring_ascii_case(challenges, scheme)) return std::nullopt;
  return cannot_connect(endpoint,
                        fmt::format("the server does not accept {} (HTTP {}): it answered HTTP "
                                    "401 with {}",
                                    what, scheme, challenges),
                        flag_for_challenges(challenges));
}

// Cyrus stores every callback as int(*)(void); the detour through void(*)() is the sanctioned way
// to say the cast is intended.
template <class F>
int (*sasl_callback_fn(F* f))() {
  return reinterpret_cast<int (*)()>(reinterpret_cast<void (*)()>(f));
}

// SASL PLAIN: Cyrus asks for the authentication id and the password and builds the initial
// response "\0<user>\0<password>" itself.
class SaslPlain final : public SaslMechanism {
 public:
  SaslPlain(const std::string& user, std::shared_ptr<const Hs2Credentials> credentials)
      : user_(user), credentials_(std::move(credentials)) {
    callbacks_[0] = {SASL_CB_USER, sasl_callback_fn(&get_simple), this};
    callbacks_[1] = {SASL_CB_AUTHNAME, sasl_callback_fn(&get_simple), this};
    callbacks_[2] = {SASL_CB_PASS, sasl_callback_fn(&get_password), this};
    callbacks_[3] = {SASL_CB_LIST_END, nullptr, nullptr};
  }
  SaslPlain(const SaslPlain&) = delete;
  SaslPlain& operator=(const SaslPlain&) = delete;
  ~SaslPlain() override {
    if (secret_) {
      OPENSSL_cleanse(secret_->data, secret_->len);
      std::free(secret_);
    }
  }

  const char* name() const override { return "PLAIN"; }
  const sasl_callback_t* callbacks() override { return callbacks_; }

  std::string failure_message(SaslFailure failure, std::string_view detail) const override {
    if (failure == SaslFailure::kNoMechanism) {
      return fmt::format(
          "LDAP: Cyrus SASL has no PLAIN plugin ({}): install the package libsasl2-modules",
          detail);
    }
    if (failure != SaslFailure::kServerRefused)
      return SaslMechanism::failure_message(failure, detail);
    // A Kerberos-only impalad answers PLAIN's START with BAD "Unsupported mechanism type PLAIN":
    // no password was even looked at.
    if (contains_ignoring_ascii_case(detail, "unsupported mechanism")) {
      return fmt::format(
          "LDAP: the server does not accept SASL PLAIN (it answered: {}): it may be set up for "
          "Kerberos (-k) or no authentication, or -i names the wrong port",
          joined_lines(detail));
    }
    return SaslMechanism::failure_message(failure, detail) + "; check -u and the password's source";
  }

 private:
  static int get_simple(void* context, int id, const char** result, unsigned* len) {
    auto* self = static_cast<SaslPlain*>(context);
    switch (id) {
      case SASL_CB_USER:  // authorization id: empty; Impala ignores it
        *result = "";
        if (len) *len = 0;
        return SASL_OK;
      case SASL_CB_AUTHNAME:
        *result = self->user_.c_str();
        if (len) *len = static_cast<unsigned>(self->user_.size());
        return SASL_OK;
      default:
        return SASL_BADPARAM;
    }
  }

  static int get_password(sasl_conn_t*, void* context, int id, sasl_secret_t** result) {
    auto* self = static_cast<SaslPlain*>(context);
    if (id != SASL_CB_PASS) return SASL_BADPARAM;
    if (!self->secret_) {
      const std::string& password = self->credentials_->password;
      self->secret_ =
          static_cast<sasl_secret_t*>(std::malloc(sizeof(sasl_secret_t) + password.size()));
      if (!self->secret_) return SASL_NOMEM;
      self->secret_->len = password.size();
      std::memcpy(self->secret_->data, password.data(), password.size());
    }
    *result = self->secret_;
    return SASL_OK;
  }

  std::string user_;
  std::shared_ptr<const Hs2Credentials> credentials_;
  // Cyrus wants the password in this C layout, so this is a copy: wiped by the destructor.
  sasl_secret_t* secret_ = nullptr;
  sasl_callback_t callbacks_[4];
};

// SASL GSSAPI through Cyrus's plugin (RFC 4752), with the caller's Kerberos credentials. Cyrus
// asks only for the authorization id, which stays empty so that the server takes the ticket's
// principal; the transport's security properties (max_ssf 0) make Cyrus choose no security layer.
// Failures are explained with what the GSS-API says about the same first step.
class SaslGssapi final : public SaslMechanism {
 public:
  explicit SaslGssapi(std::shared_ptr<const KerberosService> service)
      : service_(std::move(service)) {
    callbacks_[0] = {SASL_CB_USER, sasl_callback_fn(&get_authorization_id), nullptr};
    callbacks_[1] = {SASL_CB_LIST_END, nullptr, nullptr};
  }

  const char* name() const override { return "GSSAPI"; }

  // The first GSS-API step, bounded by -t and the stop request, before Cyrus runs the same step
  // unbounded (under its lock): a ticket that cannot be had is explained from this one step, and
  // otherwise Cyrus finds the service ticket in the cache.
  void prepare() override {
    if (std::optional<std::string> why = service_->diagnose())
      throw Hs2Error(Hs2ErrorKind::kAuth, *why);
  }
  const sasl_callback_t* callbacks() override { return callbacks_; }

  std::string failure_message(SaslFailure failure, std::string_view detail) const override {
    switch (failure) {
      case SaslFailure::kNoMechanism:
        return fmt::format(
            "Kerberos: Cyrus SASL has no GSSAPI plugin ({}): install the package "
            "libsasl2-modules-gssapi-mit",
            detail);
      case SaslFailure::kClient:
        return service_->diagnose().value_or(
            kerberos_problem_message(KerberosProblem::kOther, service_->principal(), detail));
      case SaslFailure::kServerRefused:
        return kerberos_refused_message(detail.empty() ? "(no reason)" : detail);
      case SaslFailure::kConnectionClosed:
        break;
    }
    return kerberos_rejected_message(service_->principal());
  }

 private:
  static int get_authorization_id(void*, int id, const char** result, unsigned* len) {
    if (id != SASL_CB_USER) return SASL_BADPARAM;
    *result = "";
    if (len) *len = 0;
    return SASL_OK;
  }

  std::shared_ptr<const KerberosService> service_;
  sasl_callback_t callbacks_[2];
};

class NoAuthentication final : public Authenticator {
 public:
  std::string describe() const override { return "none"; }
  // Impala's binary port without SASL speaks unframed Thrift; buffered so that each message is
  // written with few system calls.
  std::shared_ptr<TTransport> wrap_binary(std::shared_ptr<TTransport> wire) const override {
    return std::make_shared<TBufferedTransport>(std::move(wire));
  }
  void configure_http(void*) const override {}
  std::string http_unauthorized_message(std::string_view endpoint,
                                        std::string_view challenges) const override {
    return cannot_connect(
        endpoint,
        fmt::format("the server requires authentication (HTTP 401 with {})",
                    challenges.empty() ? std::string_view("no challenge") : challenges),
        flag_for_challenges(challenges));
  }
};

class LdapAuthentication final : public Authenticator {
 public:
  LdapAuthentication(std::string user, std::string host,
                     std::shared_ptr<const Hs2Credentials> credentials)
      : user_(std::move(user)), host_(std::move(host)), credentials_(std::move(credentials)) {}

  std::string describe() const override { return "LDAP (SASL PLAIN / HTTP Basic)"; }

  std::shared_ptr<TTransport> wrap_binary(std::shared_ptr<TTransport> wire) const override {
    return std::make_shared<SaslClientTransport>(std::move(wire),
                                                 std::make_unique<SaslPlain>(user_, credentials_),
                                                 kImpalaSaslService, host_);
  }

  void configure_http(void* handle) const override {
    CURL* curl = static_cast<CURL*>(handle);
    // Only Basic is allowed, so libcurl sends it pre-emptively on every request.
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(curl, CURLOPT_USERNAME, user_.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, credentials_->password.c_str());
  }

  std::string http_unauthorized_message(std::string_view endpoint,
                                        std::string_view challenges) const override {
    if (auto other = other_scheme_wanted(endpoint, challenges, "Basic", "LDAP")) return *other;
    return fmt::format(
        "LDAP authentication (HTTP Basic) as '{}' failed at {} (HTTP 401): the server refused "
        "the user or its password; check -u and the password's source",
        user_, endpoint);
  }

 private:
  std::string user_;
  std::string host_;  // what Cyrus is told the server is called
  std::shared_ptr<const Hs2Credentials> credentials_;
};

class JwtAuthentication final : public Authenticator {
 public:
  explicit JwtAuthentication(std::shared_ptr<const Hs2Credentials> credentials)
      : credentials_(std::move(credentials)) {}

  std::string describe() const override { return "JWT (HTTP Bearer)"; }

  std::shared_ptr<TTransport> wrap_binary(std::shared_ptr<TTransport>) const override {
    throw Hs2Error(Hs2ErrorKind::kUsage, "-j/--jwt needs --protocol hs2-http");
  }

  void configure_http(void* handle) const override {
    CURL* curl = static_cast<CURL*>(handle);
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BEARER));
    curl_easy_setopt(curl, CURLOPT_XOAUTH2_BEARER, credentials_->jwt.c_str());
  }

  // Impala never challenges with Bearer, even with JWT enabled: a 401 for a token comes with its
  // Basic and/or Negotiate challenges, which therefore do not say that JWT is off. Both causes are
  // named, the token's first; the other authentication is the one the challenge asks for.
  std::string http_unauthorized_message(std::string_view endpoint,
                                        std::string_view challenges) const override {
    const bool bearer = contains_ignoring_ascii_case(challenges, "Bearer");
    return fmt::format(
        "JWT authentication failed at {} (HTTP 401{}): the server refused the token: it may have "
        "expired or be invalid (check what --jwt_cmd or $ATLAS2KUDU_JWT gives){}",
        endpoint, challenges.empty() ? "" : fmt::format(" with {}", challenges),
        bearer ? std::string()
        : challenges.empty()
            ? std::string(", or JWT may not be enabled on this server")
            : fmt::format(", or JWT may not be enabled on this server (then try {})",
                          flag_for_challenges(challenges)));
  }

 private:
  std::shared_ptr<const Hs2Credentials> credentials_;
};

class KerberosAuthentication final : public Authenticator {
 public:
  KerberosAuthentication(const std::string& service, const std::string& host,
                         std::chrono::milliseconds wait_limit)
      : service_(std::make_shared<const KerberosService>(service, host, wait_limit)) {}

  std::string describe() const override {
    return fmt::format("Kerberos as a client of {} (SASL GSSAPI / HTTP SPNEGO)",
                       service_->principal());
  }

  std::shared_ptr<TTransport> wrap_binary(std::shared_ptr<TTransport> wire) const override {
    // Cyrus's GSSAPI plugin targets "<service>@<host>" from the names it is given here.
    return std::make_shared<SaslClientTransport>(std::move(wire),
                                                 std::make_unique<SaslGssapi>(service_),
                                                 service_->service(), service_->host());
  }

  void configure_http(void*) const override {}

  std::string http_auth_header(bool holding_auth_cookie) const override {
    if (holding_auth_cookie) return {};
    return "Authorization: Negotiate " + base64_encode(service_->spnego_token());
  }

  std::string http_unauthorized_message(std::string_view,
                                        std::string_view challenges) const override {
    if (challenges.find("Negotiate") == std::string_view::npos)
      return kerberos_refused_message(
          fmt::format("HTTP 401 with {}", challenges.empty() ? "no challenge" : challenges));
    return kerberos_rejected_message(service_->principal());
  }

 private:
  std::shared_ptr<const KerberosService> service_;
};

}  // namespace

std::string Authenticator::http_unauthorized_message(std::string_view endpoint,
                                                     std::string_view) const {
  return fmt::format("authentication failed at {} (HTTP 401)", endpoint);
}

std::shared_ptr<const Authenticator> make_authenticator(
    const Hs2Settings& settings, std::shared_ptr<const Hs2Credentials> credentials) {
  if (!credentials) credentials = std::make_shared<const Hs2Credentials>();
  const Hs2Options& o = settings.options();
  if (o.ldap) {
    return std::make_shared<LdapAuthentication>(settings.user(), settings.endpoint().host,
                                                std::move(credentials));
  }
  if (o.jwt) return std::make_shared<JwtAuthentication>(std::move(credentials));
  if (o.kerberos)
    return std::make_shared<KerberosAuthentication>(
        settings.kerberos_service(), settings.kerberos_host(),
        std::chrono::milliseconds(o.connect_timeout_ms));
  return std::make_shared<NoAuthentication>();
}

}  // namespace atlas2kudu
