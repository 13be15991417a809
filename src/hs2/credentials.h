// The secrets of a run (LDAP password, JWT): obtained once, never from argv (visible in `ps`),
// never printed, held in exactly one object that every session refers to, and overwritten before
// their memory is freed.
//
// Why the care: a copied std::string leaves its bytes wherever the copy lived, and a short string
// keeps them inline, so Hs2Credentials cannot be copied, moving one wipes the source, and every
// buffer that held a secret is overwritten with OPENSSL_cleanse (a plain memset of memory about
// to be freed may be removed by the compiler).
//
// Example (what the CLI does once per run, for -l --ldap_password_cmd 'pass show impala'):
//   const Hs2Settings settings = validate_hs2_options(options);
//   std::shared_ptr<const Hs2Credentials> credentials = resolve_hs2_credentials(settings);
//   // credentials->password: the command's stdout without its trailing newline
//   SessionFactory sessions = hs2_session_factory(settings, credentials);
//   // every session either of these opens refers to the same credentials object:
//   Hs2PriorState prior(settings, sessions, compile_options);
//   Hs2Executor executor(settings, sessions);
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "hs2/options.h"

namespace atlas2kudu {

struct Hs2Credentials {
  std::string password;  // LDAP password (empty when not -l)
  std::string jwt;       // bearer token (empty when not -j)

  Hs2Credentials() = default;
  Hs2Credentials(const Hs2Credentials&) = delete;
  Hs2Credentials& operator=(const Hs2Credentials&) = delete;
  Hs2Credentials(Hs2Credentials&& other) noexcept;             // `other` is left wiped and empty
  Hs2Credentials& operator=(Hs2Credentials&& other) noexcept;  // so is this object's old value
  ~Hs2Credentials();                                           // wipes both secrets
};

// A URL (or host[:port]) split around the user information it may carry, for messages that must
// not show a password: the user information runs from after "scheme://" (if any) to the last '@',
// since an unencoded password may hold '@', '/', '?' or '#' (a path holding '@' is taken for user
// information: a message then shows less, never a password).
//   split_userinfo("http://squid:p@s/s@proxy:3128/x") == {"http://", "squid:p@s/s", "proxy:3128/x"}
//   split_userinfo("db1:21050") == {"", "", "db1:21050"}
struct UrlParts {
  std::string scheme;    // "http://", or empty
  std::string userinfo;  // without its '@'; empty when there is none
  std::string rest;      // host[:port][/path...]
};
UrlParts split_userinfo(std::string_view url);

// `url` with its password replaced by "****" (user information without a ':' may be a token, and
// is replaced whole):
//   without_password("http://squid:p@ss@proxy:3128") == "http://squid:****@proxy:3128"
//   without_password("http://t0ken@proxy:3128") == "http://****@proxy:3128"
//   without_password("http://proxy:3128") == "http://proxy:3128"
std::string without_password(std::string_view url);

// Overwrites every byte of the string's buffer up to its capacity (so also an inline short
// string, and bytes beyond size() left by pop_back) with OPENSSL_cleanse, then empties the string.
// The buffer itself is kept.
void wipe_secret(std::string& secret) noexcept;

// No core dumps from here on (RLIMIT_CORE 0, and PR_SET_DUMPABLE 0, which also keeps other
// processes of the user from reading our memory): a crash must not write secrets to disk.
void keep_secrets_out_of_core_dumps();

// How long --ldap_password_cmd or --jwt_cmd may run. Such a helper reads a file, a password
// store or a vault, which takes seconds at most; one that runs longer waits for something that
// is not coming (a prompt it cannot show, a vault that does not answer), and an unattended run
// must fail rather than hang. 30 s leaves room for a slow vault or network. Not tied to a
// connection timeout: no connection exists yet, and -t 0 must not mean a helper may hang.
inline constexpr std::chrono::milliseconds kSecretCommandLimit{30000};

// Obtains the secrets the settings call for, after keep_secrets_out_of_core_dumps():
//   LDAP password: --ldap_password_cmd (run by /bin/sh -c with stdin from /dev/null and without
//   $ATLAS2KUDU_LDAP_PASSWORD and $ATLAS2KUDU_JWT in its environment; stdout with ONE trailing
//   newline removed), else $ATLAS2KUDU_LDAP_PASSWORD, else a no-echo prompt on /dev/tty.
//   JWT: --jwt_cmd (same rules), else $ATLAS2KUDU_JWT; trailing CRs and LFs removed from either.
//   A token with any other control byte (a CR or LF inside it would start a header line of its
//   own in the HTTP request) is refused: Hs2Error(kAuth) "-j/--jwt: --jwt_cmd printed a token
//   with a line break at byte 8: a JWT is one line; it is never sent". An LDAP password needs no
//   such check: HTTP Basic sends it base64-encoded, SASL PLAIN in a length-prefixed frame.
// A secret taken from the environment is overwritten there and the variable removed, so the
// credentials object holds the process's one copy; the secret variables the run does not use are
// wiped and removed as well. Neither -l nor -j: empty credentials. Throws
// Hs2Error(kAuth) if a secret is needed and cannot be obtained; the message names the option and
// never contains the secret or the command's output.
//
// A command runs in a session of its own (so without a controlling terminal: it cannot prompt
// there) and is given `command_limit` (tests shorten it) to exit. Every way its wait ends kills
// its whole process group and reaps it, so nothing it started outlives it (short of a process
// that left the group, as a daemon does):
//   - it exits: stdout so far is the secret (status 0) or Hs2Error(kAuth) "--ldap_password_cmd:
//     command failed (status 3)"; processes it left in its group are killed;
//   - past `command_limit`: Hs2Error(kAuth) "--ldap_password_cmd: the command did not finish
//     within 30 s (the limit for a password or token command), so it was killed" (exit 5);
//   - a stop request (SIGINT, SIGTERM: at once; --deadline: within 50 ms): StopError, as
//     anywhere else in the run (exit 130, 143, 4);
//   - more than 1 MiB on stdout: Hs2Error(kAuth).
std::shared_ptr<const Hs2Credentials> resolve_hs2_credentials(
    const Hs2Settings& settings, std::chrono::milliseconds command_limit = kSecretCommandLimit);

}  // namespace atlas2kudu
