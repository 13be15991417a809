// Where LDAP passwords and JWTs come from. Error messages name the source (command, variable),
// never the value or the command's output.
#include "hs2/credentials.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hs2/error.h"
#include "util/stop.h"
#include "util/utf8.h"

extern char** environ;

namespace atlas2kudu {
namespace {

// Appends to a secret without leaving a copy in a freed buffer: when the string must grow, the
// old buffer is wiped first (std::string's own growth would free it as it is).
void append_secret(std::string& secret, std::string_view more) {
  if (secret.size() + more.size() > secret.capacity()) {
    std::string bigger;
    bigger.reserve(std::max(2 * secret.capacity(), secret.size() + more.size()));
    bigger.append(secret);
    wipe_secret(secret);
    secret.swap(bigger);  // `bigger` now owns the old, wiped buffer
  }
  secret.append(more);
}

// Moves a secret into its final place and wipes what a move leaves behind in the source (a short
// string's bytes stay in its inline buffer).
void take_secret(std::string& to, std::string&& from) {
  to = std::move(from);
  wipe_secret(from);
}

// A password or token helper never prints a megabyte.
constexpr std::size_t kMaxSecretOutput = std::size_t{1} << 20;

// The atlas2kudu secret variables: never handed to a helper command.
constexpr std::string_view kSecretVariables[] = {"ATLAS2KUDU_LDAP_PASSWORD=", "ATLAS2KUDU_JWT="};

// Our environment without the secret variables, for a helper command.
std::vector<char*> helper_environment() {
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool secret = false;
    for (std::string_view name : kSecretVariables) secret = secret || entry.rfind(name, 0) == 0;
    if (!secret) env.push_back(*e);
  }
  env.push_back(nullptr);
  return env;
}

// How a helper's wait ended.
enum class HelperEnd { kExited, kTimedOut, kStopped, kTooLong };

// Whether the helper `pid` has exited, without reaping it: until it is reaped its process ID, and
// so its process group's ID, cannot be reused, which is what makes the killpg() after it safe.
bool helper_exited(pid_t pid) {
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) < 0) {
    if (errno != EINTR) return true;  // ECHILD: nothing left to wait for
  }
  return info.si_pid == pid;
}

// Reads what is available on the non-blocking `fd` into `out`; false at end of file, on an error,
// or once `out` passes the size limit (`too_long` then set).
bool read_available(int fd, std::string& out, bool& too_long) {
  char buf[512];
  bool open = true;
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      append_secret(out, std::string_view(buf, static_cast<std::size_t>(n)));
      if (out.size() > kMaxSecretOutput) {
        too_long = true;
        open = false;
        break;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    open = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    break;
  }
  OPENSSL_cleanse(buf, sizeof buf);
  return open;
}

std::string describe_limit(std::chrono::milliseconds limit) {
  return limit.count() % 1000 == 0 ? fmt::format("{} s", limit.count() / 1000)
                                   : fmt::format("{} ms", limit.count());
}

// Runs `command` through /bin/sh -c and returns its stdout. Its stdin is /dev/null (it must not
// eat the notifications piped to us) and its environment lacks the secret variables; stderr
// passes through to ours so that the user sees why a helper failed; stdout is only ever returned,
// never echoed. The helper runs in a session (so a process group) of its own, which is killed
// whole however the wait ends: past `limit`, at a stop request (SIGINT, SIGTERM, --deadline; a
// Ctrl-C on the terminal reaches our process group, not the helper's, so we must end it), and
// when the helper exits, for whatever it left running. The helper is reaped before we return or
// throw.
std::string run_secret_command(const std::string& flag, const std::string& command,
                               std::chrono::milliseconds limit) {
  throw_if_stopped();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw Hs2Error(Hs2ErrorKind::kInternal,
                   fmt::format("{}: pipe: {}", flag, std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  // setsid(): a new session is also a new process group, one killpg() ends everything the helper
  // started (a shell's children included). We ignore SIGPIPE and catch SIGINT/SIGTERM; the helper
  // starts with the defaults and no signal blocked.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigset_t defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int signo : {SIGPIPE, SIGINT, SIGTERM}) sigaddset(&defaults, signo);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  std::vector<char*> env = helper_environment();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, const_cast<char**>(argv), env.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw Hs2Error(Hs2ErrorKind::kAuth,
                   fmt::format("{}: cannot start: {}", flag, std::strerror(rc)));
  }
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);

  // Wait for the helper's exit and the end of its stdout, whichever comes last, looking at the
  // stop request at least every 50 ms (a signal also cuts the poll short: EINTR).
  std::string out;
  bool too_long = false;
  bool open = true;
  HelperEnd end = HelperEnd::kExited;
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (stop_requested()) {
      end = HelperEnd::kStopped;
      break;
    }
    if (helper_exited(pid)) {
      // What it wrote before exiting is in the pipe; a child it left behind holding stdout gets
      // no more time.
      if (open) read_available(fds[0], out, too_long);
      end = too_long ? HelperEnd::kTooLong : HelperEnd::kExited;
      break;
    }
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      end = HelperEnd::kTimedOut;
      break;
    }
    const auto slice = std::min(left, std::chrono::milliseconds(50));
    if (open) {
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(slice.count())) > 0) {
        open = read_available(fds[0], out, too_long);
        if (too_long) {
          end = HelperEnd::kTooLong;
          break;
        }
      }
    } else {
      // Stdout closed: the helper is most likely exiting, or it keeps running (and is bounded).
      wait_for_stop(std::min(slice, std::chrono::milliseconds(10)));
    }
  }
  close(fds[0]);
  // The helper is not reaped yet (at most a zombie), so its group ID is still ours to signal.
  kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  switch (end) {
    case HelperEnd::kStopped:
      wipe_secret(out);
      throw StopError(stop_reason());
    case HelperEnd::kTimedOut:
      wipe_secret(out);
      throw Hs2Error(Hs2ErrorKind::kAuth,
                     fmt::format("{}: the command did not finish within {} (the limit for a "
                                 "password or token command), so it was killed",
                                 flag, describe_limit(limit)));
    case HelperEnd::kTooLong:
      wipe_secret(out);
      throw Hs2Error(
          Hs2ErrorKind::kAuth,
          fmt::format("{}: the command printed more than 1 MiB, so it was killed", flag));
    case HelperEnd::kExited:
      break;
  }
  if (WIFSIGNALED(status)) {
    wipe_secret(out);
    throw Hs2Error(
        Hs2ErrorKind::kAuth,
        fmt::format("{}: command killed by signal {} (SIG{})", flag, WTERMSIG(status),
                    sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "unknown"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    wipe_secret(out);
    throw Hs2Error(Hs2ErrorKind::kAuth, fmt::format("{}: command failed (status {})", flag,
                                                    WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  return out;
}

// What the process's controlling terminal (/dev/tty) gave a prompt: the line typed, not echoed;
// none when the process has no terminal (cron, systemd, setsid) or runs in its background.
struct TerminalAnswer {
  std::optional<std::string> line;
  bool in_background = false;  // a terminal is there, but not ours to ask on
};

TerminalAnswer prompt_tty(const std::string& prompt) {
  int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (fd < 0) return {};
  // A background job (`... &`, nohup, timeout(1)'s own process group) would be stopped by the
  // terminal (SIGTTOU, SIGTTIN) at the prompt: only the terminal's foreground process group asks.
  if (tcgetpgrp(fd) != getpgrp()) {
    close(fd);
    return {std::nullopt, true};
  }
  termios old{};
  bool have_termios = tcgetattr(fd, &old) == 0;
  if (have_termios) {
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  (void)!write(fd, prompt.data(), prompt.size());
  std::string line;
  char c;
  // A stop (SIGINT, SIGTERM, SIGHUP, timeout(1)) ends the wait for the typing: the handlers
  // restart a blocked read, which would keep waiting and leave the echo off at the second signal.
  bool stopped = false;
  while (!(stopped = !wait_readable(fd)) && read(fd, &c, 1) == 1 && c != '\n')
    append_secret(line, std::string_view(&c, 1));
  OPENSSL_cleanse(&c, sizeof c);
  if (have_termios) tcsetattr(fd, TCSAFLUSH, &old);
  (void)!write(fd, "\n", 1);
  close(fd);
  // A terminal that hangs up sends SIGHUP and then ends the read: the stop, not an empty
  // password, is what ended the prompt.
  if (stopped || stop_requested()) {
    wipe_secret(line);
    throw StopError(stop_reason());
  }
  return {std::move(line), false};
}

// Takes the value of a secret variable, then overwrites it in place and removes it from the
// environment: our one copy is the credentials object, and children never see it.
void take_secret_variable(std::string& to, const char* name) {
  char* value = std::getenv(name);
  if (value == nullptr) return;
  append_secret(to, value);
  OPENSSL_cleanse(value, std::strlen(value));
  unsetenv(name);
}

// The token goes into the "Authorization: Bearer" header as it is (libcurl encodes nothing): a
// line break would end the header there and start another one of the token's choosing, and any
// other control byte is no part of a JWT (base64url and dots). Refused, naming where the token came
// from and the byte's position (from 1), never the token.
void refuse_control_bytes(const std::string& token, std::string_view origin) {
  const std::size_t at = first_control_byte(token);
  if (at == std::string_view::npos) return;
  const auto byte = static_cast<unsigned char>(token[at]);
  const std::size_t position = at + 1;
  throw Hs2Error(Hs2ErrorKind::kAuth,
                 byte == '\r' || byte == '\n'
                     ? fmt::format("-j/--jwt: {} a token with a line break at byte {}: a JWT is "
                                   "one line; it is never sent",
                                   origin, position)
                     : fmt::format("-j/--jwt: {} a token with a control character (0x{:02x}) at "
                                   "byte {}, which no JWT holds; it is never sent",
                                   origin, byte, position));
}

}  // namespace

UrlParts split_userinfo(std::string_view url) {
  const std::size_t scheme = url.find("://");
  const std::size_t from = scheme == std::string_view::npos ? 0 : scheme + 3;
  const std::size_t at = url.rfind('@');
  if (at == std::string_view::npos || at < from) {
    return {std::string(url.substr(0, from)), "", std::string(url.substr(from))};
  }
  return {std::string(url.substr(0, from)), std::string(url.substr(from, at - from)),
          std::string(url.substr(at + 1))};
}

std::string without_password(std::string_view url) {
  if (url.find('@') == std::string_view::npos) return std::string(url);
  const UrlParts parts = split_userinfo(url);
  const std::size_t colon = parts.userinfo.find(':');
  if (url.rfind('@') < parts.scheme.size()) return std::string(url);  // "@" within the scheme
  return parts.scheme +
         (colon == std::string::npos ? "****" : parts.userinfo.substr(0, colon) + ":****") + "@" +
         parts.rest;
}

void wipe_secret(std::string& secret) noexcept {
  secret.resize(secret.capacity());  // never reallocates; makes the whole buffer addressable
  OPENSSL_cleanse(secret.data(), secret.size());
  secret.clear();
}

Hs2Credentials::Hs2Credentials(Hs2Credentials&& other) noexcept
    : password(std::move(other.password)), jwt(std::move(other.jwt)) {
  wipe_secret(other.password);
  wipe_secret(other.jwt);
}

Hs2Credentials& Hs2Credentials::operator=(Hs2Credentials&& other) noexcept {
  if (this != &other) {
    // A move assignment may hand our old buffer to `other`: wipe it before, and `other` after.
    wipe_secret(password);
    wipe_secret(jwt);
    password = std::move(other.password);
    jwt = std::move(other.jwt);
    wipe_secret(other.password);
    wipe_secret(other.jwt);
  }
  return *this;
}

Hs2Credentials::~Hs2Credentials() {
  wipe_secret(password);
  wipe_secret(jwt);
}

void keep_secrets_out_of_core_dumps() {
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  // Also makes /proc/<pid>/mem and ptrace unavailable to other processes of the same user.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

std::shared_ptr<const Hs2Credentials> resolve_hs2_credentials(
    const Hs2Settings& settings, std::chrono::milliseconds command_limit) {
  const Hs2Options& o = settings.options();
  auto c = std::make_shared<Hs2Credentials>();
  if (o.ldap || o.jwt) keep_secrets_out_of_core_dumps();
  if (o.ldap) {
    std::string_view source;
    std::string_view origin;  // where the password came from, for a refusal of its bytes
    if (!o.ldap_password_cmd.empty()) {
      source = "--ldap_password_cmd gave an empty password";
      origin = "--ldap_password_cmd's output";
      // Decision: strip exactly one trailing "\n" (and a "\r" before it), since
      // `echo`, `pass` and vault helpers all end their output with one; impala-shell keeps it.
      take_secret(c->password,
                  run_secret_command("--ldap_password_cmd", o.ldap_password_cmd, command_limit));
      if (!c->password.empty() && c->password.back() == '\n') c->password.pop_back();
      if (!c->password.empty() && c->password.back() == '\r') c->password.pop_back();
    } else if (std::getenv("ATLAS2KUDU_LDAP_PASSWORD") != nullptr) {
      source = "$ATLAS2KUDU_LDAP_PASSWORD is empty";
      origin = "$ATLAS2KUDU_LDAP_PASSWORD";
      take_secret_variable(c->password, "ATLAS2KUDU_LDAP_PASSWORD");
    } else if (TerminalAnswer typed =
                   prompt_tty(fmt::format("LDAP password for {}: ", settings.user()));
               typed.line) {
      // On the process's terminal, whatever stdin is: the input is often piped in
      // (kafka-console-consumer ... | atlas2kudu apply ... -). Under cron there is none.
      source = "the password typed is empty";
      origin = "the password typed";
      take_secret(c->password, std::move(*typed.line));
    } else {
      throw Hs2Error(
          Hs2ErrorKind::kAuth,
          fmt::format("-l/--ldap: no password (use --ldap_password_cmd, "
                      "$ATLAS2KUDU_LDAP_PASSWORD or a terminal){}",
                      typed.in_background ? "; a terminal is there, but this process is not in its "
                                            "foreground (a job run with &, or under timeout(1): "
                                            "timeout --foreground asks)"
                                          : "; this process has no controlling terminal (as "
                                            "under cron)"));
    }
    // Never sent: many LDAP servers take an empty password as an anonymous bind, and an empty
    // answer is how a broken helper (a vault session expired, exit status 0) usually fails.
    if (c->password.empty()) {
      throw Hs2Error(Hs2ErrorKind::kAuth, fmt::format("-l/--ldap: {}; an empty password is never "
                                                      "sent",
                                                      source));
    }
    // SASL PLAIN separates user and password with NUL, and HTTP Basic's LDAP bind ends the
    // password there: a password holding one would fail at the server as a wrong one, or log in
    // with its first part.
    if (c->password.find('\0') != std::string::npos) {
      throw Hs2Error(Hs2ErrorKind::kAuth,
                     fmt::format("-l/--ldap: {} holds a NUL byte, which no LDAP password can "
                                 "carry; it is never sent",
                                 origin));
    }
  }
  if (o.jwt) {
    std::string_view origin;  // where the token came from, for a refusal of its bytes
    if (!o.jwt_cmd.empty()) {
      origin = "--jwt_cmd printed";
      take_secret(c->jwt, run_secret_command("--jwt_cmd", o.jwt_cmd, command_limit));
    } else if (std::getenv("ATLAS2KUDU_JWT") != nullptr) {
      origin = "$ATLAS2KUDU_JWT holds";
      take_secret_variable(c->jwt, "ATLAS2KUDU_JWT");
    }
    while (!c->jwt.empty() && (c->jwt.back() == '\n' || c->jwt.back() == '\r')) c->jwt.pop_back();
    if (c->jwt.empty())
      throw Hs2Error(Hs2ErrorKind::kAuth, "-j/--jwt: no token (use --jwt_cmd or $ATLAS2KUDU_JWT)");
    refuse_control_bytes(c->jwt, origin);
  }
  // Secret variables this run does not use are wiped too: no child may inherit them.
  std::string unused;
  for (const char* name : {"ATLAS2KUDU_LDAP_PASSWORD", "ATLAS2KUDU_JWT"}) {
    take_secret_variable(unused, name);
    wipe_secret(unused);
  }
  return c;
}

}  // namespace atlas2kudu
