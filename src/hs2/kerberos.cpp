#include "hs2/kerberos.h"

#include <fmt/core.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "hs2/error.h"
#include "util/stop.h"

namespace atlas2kudu {

namespace {

// SPNEGO (RFC 4178): 1.3.6.1.5.5.2.
gss_OID_desc spnego_mechanism = {6, const_cast<char*>("\x2b\x06\x01\x05\x05\x02")};

// Every message of a GSS-API status code, joined by "; ".
std::string status_text(OM_uint32 code, int type, gss_OID mechanism) {
  std::string text;
  OM_uint32 context = 0;
  do {
    OM_uint32 minor = 0;
    gss_buffer_desc buffer = GSS_C_EMPTY_BUFFER;
    if (GSS_ERROR(gss_display_status(&minor, code, type, mechanism, &context, &buffer))) break;
    if (!text.empty()) text += "; ";
    text.append(static_cast<const char*>(buffer.value), buffer.length);
    gss_release_buffer(&minor, &buffer);
  } while (context != 0);
  return text;
}

// The text a user can look up: the mechanism's (krb5's) message when there is one, else GSS-API's.
std::string failure_text(OM_uint32 major, OM_uint32 minor, gss_OID mechanism) {
  std::string text = minor != 0 ? status_text(minor, GSS_C_MECH_CODE, mechanism) : "";
  return text.empty() ? status_text(major, GSS_C_GSS_CODE, GSS_C_NO_OID) : text;
}

class GssName {
 public:
  explicit GssName(const std::string& hostbased) {
    gss_buffer_desc text{hostbased.size(), const_cast<char*>(hostbased.data())};
    OM_uint32 minor = 0;
    major_ = gss_import_name(&minor, &text, GSS_C_NT_HOSTBASED_SERVICE, &name_);
  }
  ~GssName() {
    OM_uint32 minor = 0;
    if (name_ != GSS_C_NO_NAME) gss_release_name(&minor, &name_);
  }
  GssName(const GssName&) = delete;
  GssName& operator=(const GssName&) = delete;
  bool ok() const { return !GSS_ERROR(major_); }
  gss_name_t get() const { return name_; }

 private:
  gss_name_t name_ = GSS_C_NO_NAME;
  OM_uint32 major_ = 0;
};

struct InitOutcome {
  OM_uint32 major = 0, minor = 0;
  std::string token;
};

// The first call of a context initiator for `target` with `mechanism`, with the default
// credentials; the context is deleted again. This is where the client's ticket is checked and
// the service ticket is obtained from the KDC.
InitOutcome init_first_step(const std::string& target, gss_OID mechanism) {
  InitOutcome out;
  GssName name(target);
  if (!name.ok()) {
    out.major = GSS_S_BAD_NAME;
    return out;
  }
  gss_ctx_id_t context = GSS_C_NO_CONTEXT;
  gss_buffer_desc token = GSS_C_EMPTY_BUFFER;
  out.major = gss_init_sec_context(&out.minor, GSS_C_NO_CREDENTIAL, &context, name.get(), mechanism,
                                   GSS_C_MUTUAL_FLAG, GSS_C_INDEFINITE, GSS_C_NO_CHANNEL_BINDINGS,
                                   GSS_C_NO_BUFFER, nullptr, &token, nullptr, nullptr);
  OM_uint32 ignored = 0;
  if (!GSS_ERROR(out.major)) out.token.assign(static_cast<const char*>(token.value), token.length);
  gss_release_buffer(&ignored, &token);
  if (context != GSS_C_NO_CONTEXT) gss_delete_sec_context(&ignored, &context, GSS_C_NO_BUFFER);
  return out;
}

// Worker threads still inside a GSS-API step, left behind by a caller that stopped waiting.
std::atomic<int> steps_running{0};

// on_exit handler: with a worker still inside libkrb5, exit() must not run the library
// destructors (k5_mutex_destroy, the mechanism list freed) under it; stdio is flushed, then
// _exit with the run's status.
void exit_past_running_steps(int status, void*) {
  if (steps_running.load() == 0) return;
  std::fflush(nullptr);
  std::_Exit(status);
}

std::string default_realm() {
  krb5_context context = nullptr;
  if (krb5_init_context(&context) != 0) return {};
  std::string realm;
  char* name = nullptr;
  if (krb5_get_default_realm(context, &name) == 0) {
    realm = name;
    krb5_free_default_realm(context, name);
  }
  krb5_free_context(context);
  return realm;
}

// "impala/host@REALM" as krb5 maps the host-based name; the default realm stands in when krb5
// leaves the realm to the KDC (no domain_realm entry for the host).
std::string principal_of(const std::string& service, const std::string& host) {
  std::string principal = service + "/" + host + "@";
  GssName name(service + "@" + host);
  OM_uint32 minor = 0;
  gss_name_t canonical = GSS_C_NO_NAME;
  if (name.ok() &&
      !GSS_ERROR(gss_canonicalize_name(&minor, name.get(), gss_mech_krb5, &canonical))) {
    gss_buffer_desc text = GSS_C_EMPTY_BUFFER;
    if (!GSS_ERROR(gss_display_name(&minor, canonical, &text, nullptr)))
      principal.assign(static_cast<const char*>(text.value), text.length);
    gss_release_buffer(&minor, &text);
    gss_release_name(&minor, &canonical);
  }
  if (principal.find('@') == std::string::npos) principal += '@';
  if (principal.back() == '@') principal += default_realm();
  if (principal.back() == '@') principal.pop_back();
  return principal;
}

}  // namespace

struct KerberosService::Step {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  InitOutcome outcome;
};

namespace {

// Starts `target`'s first step with `mechanism` on a worker thread of its own.
std::shared_ptr<KerberosService::Step> start_step(const std::string& target, gss_OID mechanism) {
  static std::once_flag registered;
  std::call_once(registered, [] { on_exit(&exit_past_running_steps, nullptr); });
  auto step = std::make_shared<KerberosService::Step>();
  ++steps_running;
  std::thread([step, target, mechanism] {
    InitOutcome outcome = init_first_step(target, mechanism);
    {
      std::lock_guard lock(step->mu);
      step->outcome = std::move(outcome);
      step->done = true;
    }
    step->cv.notify_all();
    --steps_running;
  }).detach();
  return step;
}

// Waits for `step` (see the class comment): its outcome, StopError, or Hs2Error(kAuth) past
// `limit` (0: none).
InitOutcome wait_for_step(KerberosService::Step& step, std::chrono::milliseconds limit,
                          std::string_view principal) {
  const auto until = std::chrono::steady_clock::now() + limit;
  std::unique_lock lock(step.mu);
  for (;;) {
    if (step.done) return step.outcome;
    if (stop_requested()) throw StopError(stop_reason());
    if (limit.count() > 0 && std::chrono::steady_clock::now() >= until) {
      throw Hs2Error(
          Hs2ErrorKind::kAuth,
          kerberos_problem_message(
              KerberosProblem::kKdcUnreachable, principal,
              fmt::format("no answer within -t {} ms; libkrb5 waits kdc_timeout per KDC and try, "
                          "max_retries tries, in krb5.conf's [libdefaults]",
                          limit.count())));
    }
    step.cv.wait_for(lock, std::chrono::milliseconds(50));
  }
}

}  // namespace

KerberosProblem classify_kerberos_status(std::uint32_t major, std::int64_t minor) {
  switch (minor) {
    case KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN:
      return KerberosProblem::kServiceUnknown;
    case KRB5KRB_AP_ERR_SKEW:
    case KRB5_KDCREP_SKEW:
      return KerberosProblem::kClockSkew;
    case KRB5_KDC_UNREACH:
    case KRB5_REALM_UNKNOWN:
    case KRB5_REALM_CANT_RESOLVE:
      return KerberosProblem::kKdcUnreachable;
    case KRB5KRB_AP_ERR_TKT_EXPIRED:
      return KerberosProblem::kTicketExpired;
    case KRB5_FCC_NOFILE:
    case KRB5_CC_NOTFOUND:
    case KRB5_CC_END:
      return KerberosProblem::kNoTicket;
    default:
      break;
  }
  switch (GSS_ROUTINE_ERROR(major)) {
    case GSS_S_CREDENTIALS_EXPIRED:
      return KerberosProblem::kTicketExpired;
    case GSS_S_NO_CRED:
      return KerberosProblem::kNoTicket;
    default:
      return KerberosProblem::kOther;
  }
}

std::string kerberos_problem_message(KerberosProblem problem, std::string_view principal,
                                     std::string_view detail) {
  switch (problem) {
    case KerberosProblem::kNoTicket:
      return fmt::format(
          "Kerberos: no ticket ({}): run \"kinit -kt KEYTAB PRINCIPAL\" first, or set KRB5CCNAME "
          "to the cache that holds it (or KRB5_CLIENT_KTNAME to a client keytab)",
          detail);
    case KerberosProblem::kTicketExpired:
      return fmt::format(
          "Kerberos: the ticket has expired ({}): run \"kinit -kt KEYTAB PRINCIPAL\" again before "
          "each run, or set KRB5_CLIENT_KTNAME to a client keytab",
          detail);
    case KerberosProblem::kServiceUnknown:
      return fmt::format(
          "Kerberos: the KDC does not know the service principal {} ({}): check "
          "-s/--kerberos_service_name (default impala) and -b/--kerberos_host_fqdn (default: the "
          "-i host; give the impalad's fully qualified name when -i is an IP or a load balancer)",
          principal, detail);
    case KerberosProblem::kClockSkew:
      return fmt::format(
          "Kerberos: this host's clock differs too much from the KDC's ({}): synchronise it (NTP) "
          "and retry",
          detail);
    case KerberosProblem::kKdcUnreachable:
      return fmt::format(
          "Kerberos: cannot reach a KDC of realm {} for a ticket to {} ({}): check the realm's kdc "
          "entries in krb5.conf (or $KRB5_CONFIG) and that the KDC is up and reachable",
          principal.find('@') == std::string_view::npos ? "(default)"
                                                        : principal.substr(principal.find('@') + 1),
          principal, detail);
    case KerberosProblem::kOther:
      break;
  }
  return fmt::format("Kerberos: authentication to {} failed: {}", principal, detail);
}

std::string kerberos_refused_message(std::string_view server_said) {
  return fmt::format(
      "Kerberos: the server does not accept Kerberos (it answered: {}): it may be set up for "
      "LDAP (-l) or no authentication, or -i names the wrong port",
      server_said);
}

std::string kerberos_rejected_message(std::string_view principal) {
  return fmt::format(
      "Kerberos: the server rejected the ticket for {}: check that this is the server's "
      "principal (-s, -b) and that the server's keytab holds its current key",
      principal);
}

KerberosService::KerberosService(std::string service, std::string host,
                                 std::chrono::milliseconds wait_limit)
    : service_(std::move(service)), host_(std::move(host)), wait_limit_(wait_limit) {
  principal_ = principal_of(service_, host_);
}

std::string KerberosService::spnego_token() const {
  // SPNEGO passes a krb5 failure on with a remapped minor code: the krb5 mechanism's own first
  // step, run first, tells the cause exactly, and leaves the service ticket in the cache.
  if (std::optional<std::string> why = diagnose()) throw Hs2Error(Hs2ErrorKind::kAuth, *why);
  // A token of its own for each request (never one shared with another caller: the server's
  // replay cache would refuse the second use).
  InitOutcome out =
      wait_for_step(*start_step(target_name(), &spnego_mechanism), wait_limit_, principal_);
  if (!GSS_ERROR(out.major)) return std::move(out.token);
  throw Hs2Error(Hs2ErrorKind::kAuth,
                 kerberos_problem_message(KerberosProblem::kOther, principal_,
                                          failure_text(out.major, out.minor, &spnego_mechanism)));
}

std::optional<std::string> KerberosService::diagnose() const {
  std::shared_ptr<Step> step;
  {
    std::lock_guard lock(mu_);
    bool running = false;
    if (diagnosing_) {
      std::lock_guard step_lock(diagnosing_->mu);
      running = !diagnosing_->done;
    }
    if (!running) diagnosing_ = start_step(target_name(), gss_mech_krb5);
    step = diagnosing_;
  }
  const InitOutcome out = wait_for_step(*step, wait_limit_, principal_);
  if (!GSS_ERROR(out.major)) return std::nullopt;
  return kerberos_problem_message(
      classify_kerberos_status(out.major, static_cast<std::int32_t>(out.minor)), principal_,
      failure_text(out.major, out.minor, gss_mech_krb5));
}

}  // namespace atlas2kudu
