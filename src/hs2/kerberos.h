// Kerberos on the client side of the HS2 layer: the service principal a run authenticates to,
// SPNEGO tokens for hs2-http, and the one place where GSS-API and krb5 failures become messages a
// user can act on. The binary transport's GSSAPI exchange itself is Cyrus libsasl2's (auth.cpp);
// when it fails, diagnose() repeats its first step here to find out why, because Cyrus reports
// most Kerberos failures as a generic SASL error.
//
// Credentials are the caller's, found the way every MIT Kerberos program finds them: the ticket
// cache named by $KRB5CCNAME (else the default cache), or a client keytab named by
// $KRB5_CLIENT_KTNAME from which a ticket is obtained when the cache has none. The realm comes from
// krb5.conf ($KRB5_CONFIG).
//
// Example (service "impala", -b impalad1.example.com, default realm EXAMPLE.COM):
//   KerberosService impala("impala", "impalad1.example.com");
//   impala.target_name();  // "impala@impalad1.example.com" (GSS_C_NT_HOSTBASED_SERVICE)
//   impala.principal();    // "impala/impalad1.example.com@EXAMPLE.COM", for messages
//   impala.spnego_token(); // the token of "Authorization: Negotiate <base64>"; without a ticket it
//                          // throws Hs2Error(kAuth) "Kerberos: no ticket (No Kerberos credentials
//                          // available (default cache: FILE:/tmp/krb5cc_0)): run \"kinit -kt
//                          // KEYTAB PRINCIPAL\" first, or set KRB5CCNAME to the cache that holds
//                          // it (or KRB5_CLIENT_KTNAME to a client keytab)"
//   impala.diagnose();     // the same message, or nullopt when a service ticket can be had
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace atlas2kudu {

// Why Kerberos failed on the client side, decided from GSS-API major and krb5 minor status codes.
enum class KerberosProblem {
  kNoTicket,        // no ticket cache, an empty one, or none for the client principal
  kTicketExpired,   // the ticket-granting ticket (or the service ticket) has expired
  kServiceUnknown,  // the KDC does not know <service>/<host>@REALM
  kClockSkew,       // this host's clock and the KDC's differ by more than the allowed skew
  kKdcUnreachable,  // no KDC of the realm answered, or none is configured for it
  kOther,
};

// `major` is a GSS-API major status, `minor` the mechanism's minor status (for the krb5
// mechanism, a krb5 error code such as KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN).
KerberosProblem classify_kerberos_status(std::uint32_t major, std::int64_t minor);

// One line, starting "Kerberos: ", saying what failed and what to do. `principal` is the service
// principal tried; `detail` the GSS-API text of the failure.
std::string kerberos_problem_message(KerberosProblem problem, std::string_view principal,
                                     std::string_view detail);

// The server answered that it does not take Kerberos at all (SASL BAD "Unsupported mechanism
// type GSSAPI", or HTTP 401 without a Negotiate challenge); `server_said` is its answer.
std::string kerberos_refused_message(std::string_view server_said);

// The client sent a ticket for `principal` and the server rejected it (closed the connection
// during the SASL negotiation, or 401 with a Negotiate challenge).
std::string kerberos_rejected_message(std::string_view principal);

// How long a GSS-API step may wait for the KDC, and what happens then. libkrb5 has no way to
// cut its KDC exchange short: it waits kdc_timeout (krb5.conf [libdefaults], 1 s by default) per
// KDC and try, max_retries (3) tries, several KDC addresses, UDP then TCP, about 27 s against a
// KDC that never answers, and then reports it unreachable. So every GSS-API step runs on a worker
// thread, which the caller waits for at most `wait_limit` (-t; 0: no limit) while watching the
// stop request (util/stop.h: SIGINT, SIGTERM, --deadline, looked at every 50 ms):
//   - past the limit: Hs2Error(kAuth) "Kerberos: cannot reach a KDC of realm R for a ticket to
//     P (no answer within -t 3000 ms; ...)";
//   - a stop request: StopError, as anywhere else in the run.
// The worker is then left to finish on its own (it holds only its own copies), and diagnose()
// calls that come meanwhile wait for it rather than start another. While one is still inside
// libkrb5, the process's exit ends at once with _exit (an on_exit handler flushes stdio first):
// libkrb5's and GSS-API's library destructors, which exit() would run, free what that thread is
// still using.
class KerberosService {
 public:
  // `service`: -s (e.g. "impala"); `host`: -b, else the -i host; `wait_limit`: see above.
  KerberosService(std::string service, std::string host,
                  std::chrono::milliseconds wait_limit = std::chrono::milliseconds(0));

  const std::string& service() const { return service_; }
  const std::string& host() const { return host_; }
  std::string target_name() const { return service_ + "@" + host_; }
  const std::string& principal() const { return principal_; }

  // A fresh SPNEGO initial token (binary, not Base64) for the service, from a new security
  // context that is discarded afterwards: like impala-shell, the client ignores the server's
  // answering token and proves nothing more in later requests (the server's cookie does). Throws
  // Hs2Error(kAuth) with the kerberos_problem_message of the failure. The krb5 mechanism's first
  // step (diagnose()) runs first: it is the one that talks to the KDC, and its status codes say
  // exactly why it failed (SPNEGO's are remapped); the SPNEGO step then finds the service ticket
  // in the cache. No step is repeated to explain a failure.
  std::string spnego_token() const;

  // Runs the first step of the Kerberos GSS-API exchange with the service, as Cyrus's GSSAPI
  // plugin does, and returns the kerberos_problem_message of its failure; nullopt when it
  // succeeds (the client has a valid ticket and the KDC issued one for the service, now in the
  // ticket cache). The binary transport runs it before Cyrus (SaslMechanism::prepare), so that
  // Cyrus's own step, which nothing can interrupt, finds the service ticket cached, and a failure
  // is explained by this one step. Bounded as the class comment says; a call made while another
  // runs waits for that one's outcome.
  std::optional<std::string> diagnose() const;

  struct Step;  // one GSS-API step on its worker thread

 private:
  std::string service_, host_, principal_;
  std::chrono::milliseconds wait_limit_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<Step> diagnosing_;  // the krb5 step in progress or last run
};

}  // namespace atlas2kudu
