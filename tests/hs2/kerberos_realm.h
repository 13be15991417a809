// A throw-away MIT Kerberos realm for the Kerberos tests, made with the real tools (Debian
// krb5-kdc, krb5-admin-server, krb5-user) in a temporary directory: its own krb5.conf and
// kdc.conf, a database with a throw-away master key, the service principal
// impala/localhost@A2K.TEST and the user alice@A2K.TEST with keytabs, and a krb5kdc on a free
// loopback port (UDP and TCP). Nothing outside the directory is read or written: the tools find
// the files through KRB5_CONFIG and KRB5_KDC_PROFILE, replay caches go to KRB5RCACHEDIR.
//
// The destructor stops the KDC (by its pid) and removes the directory, also when a test fails;
// should the test process die first, the KDC gets SIGTERM from the kernel (PR_SET_PDEATHSIG).
// Every wait is bounded. A missing tool is an error naming the package, never a skipped test.
//
// Example:
//   KerberosRealm realm;                          // ~50 ms
//   std::string cache = realm.kinit("alice");     // "FILE:<dir>/alice.cc", a ticket for alice
//   ScopedKerberosEnv env(realm, cache);          // KRB5_CONFIG, KRB5CCNAME, ... for this process
//   Hs2TestServerConfig cfg;
//   cfg.keytab = realm.service_keytab();  cfg.principal = realm.service_principal();
//   // ... apply -k against it; realm.shell_env(cache) prefixes a command run through the shell
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace atlas2kudu::testing {

class KerberosRealm {
 public:
  static constexpr const char* kRealm = "A2K.TEST";

  // Throws std::runtime_error naming the missing package or the step that failed, with its output.
  KerberosRealm();
  ~KerberosRealm();
  KerberosRealm(const KerberosRealm&) = delete;
  KerberosRealm& operator=(const KerberosRealm&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::string krb5_config() const { return (dir_ / "krb5.conf").string(); }
  int kdc_port() const { return port_; }

  std::string service_principal() const;  // impala/localhost@A2K.TEST
  std::string service_keytab() const { return (dir_ / "impala.keytab").string(); }
  std::string user_principal() const;  // alice@A2K.TEST
  std::string user_keytab() const { return (dir_ / "alice.keytab").string(); }

  // Adds `principal` with a random key; returns the keytab holding it.
  std::string add_principal(const std::string& principal);

  // kinit -kt the user's keytab into a new cache <dir>/<name>.cc, with `lifetime` ("2s") if
  // given; returns "FILE:<path>".
  std::string kinit(const std::string& name, const std::string& lifetime = "") const;

  // The environment the realm's clients and servers need, with KRB5CCNAME = `cache` if given.
  std::map<std::string, std::string> env(const std::string& cache = "") const;
  // The same as "K=V K=V " for a command run through the shell.
  std::string shell_env(const std::string& cache = "") const;

  // "realm A2K.TEST: krb5kdc pid 1234 on 127.0.0.1:40123 (UDP, TCP), /tmp/atlas2kudu-krb-Ab12Cd",
  // for the test log, which so shows that a test ran against a real KDC.
  std::string describe() const;

  // Stops the KDC now (a test of "KDC unreachable"); the destructor does it otherwise.
  void stop_kdc();

 private:
  void run(const std::string& command) const;  // under a timeout; throws with its output
  bool start_kdc();                            // false when the port was taken meanwhile

  std::filesystem::path dir_;
  int port_ = 0;
  pid_t kdc_pid_ = -1;
};

// Sets the realm's environment (and KRB5CCNAME) in this process for its lifetime, restoring the
// previous values afterwards. For in-process clients and servers.
class ScopedKerberosEnv {
 public:
  ScopedKerberosEnv(const KerberosRealm& realm, const std::string& cache);
  ~ScopedKerberosEnv();
  ScopedKerberosEnv(const ScopedKerberosEnv&) = delete;
  ScopedKerberosEnv& operator=(const ScopedKerberosEnv&) = delete;

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace atlas2kudu::testing
