#include "kerberos_realm.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace atlas2kudu::testing {

namespace {

// Where Debian installs each tool, and the package that brings it.
struct Tool {
  const char* name;
  const char* package;
};
constexpr Tool kKdb5Util{"kdb5_util", "krb5-kdc"};
constexpr Tool kKrb5Kdc{"krb5kdc", "krb5-kdc"};
constexpr Tool kKadminLocal{"kadmin.local", "krb5-admin-server"};
constexpr Tool kKinit{"kinit", "krb5-user"};

std::string find_tool(const Tool& tool) {
  std::vector<std::string> dirs = {"/usr/sbin", "/usr/bin", "/sbin", "/bin"};
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  for (const auto& d : dirs) {
    const std::string candidate = d + "/" + tool.name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw std::runtime_error(std::string("Kerberos tests: ") + tool.name +
                           " not found; install the Debian package " + tool.package +
                           " (./scripts/setup.sh does)");
}

std::string slurp_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A port free on 127.0.0.1 for both TCP and UDP right now (the KDC listens on both).
int free_port() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(tcp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(tcp, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(tcp);
      continue;
    }
    const int udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const bool udp_free = ::bind(udp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(udp);
    ::close(tcp);
    if (udp_free) return ntohs(addr.sin_port);
  }
  throw std::runtime_error("Kerberos tests: no free loopback port for the KDC");
}

bool accepts_tcp(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

KerberosRealm::KerberosRealm() {
  for (const Tool& tool : {kKdb5Util, kKrb5Kdc, kKadminLocal, kKinit}) (void)find_tool(tool);
  std::string pattern = (std::filesystem::temp_directory_path() / "atlas2kudu-krb-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("Kerberos tests: mkdtemp failed");
  dir_ = pattern;
  try {
    const std::string d = dir_.string();
    write_file(dir_ / "kdc.conf",
               "[realms]\n  " + std::string(kRealm) + " = {\n    database_name = " + d +
                   "/principal\n    key_stash_file = " + d + "/stash\n    acl_file = " + d +
                   "/kadm5.acl\n    max_life = 1h\n  }\n[logging]\n  kdc = FILE:" + d +
                   "/kdc.log\n  admin_server = FILE:" + d + "/kadmin.log\n");
    write_file(dir_ / "kadm5.acl", "");
    // The master key protects nothing but this directory, which is removed afterwards.
    std::mt19937_64 rng{std::random_device{}()};
    run(find_tool(kKdb5Util) + " create -s -r " + kRealm + " -P throwaway-" +
        std::to_string(rng()));
    const std::string kadmin = find_tool(kKadminLocal) + " -r " + kRealm + " -q ";
    run(kadmin + "'addprinc -randkey " + service_principal() + "'");
    run(kadmin + "'ktadd -k " + service_keytab() + " " + service_principal() + "'");
    run(kadmin + "'addprinc -randkey " + user_principal() + "'");
    run(kadmin + "'ktadd -k " + user_keytab() + " " + user_principal() + "'");
    for (int attempt = 0; attempt < 5 && kdc_pid_ < 0; ++attempt) start_kdc();
    if (kdc_pid_ < 0) throw std::runtime_error("Kerberos tests: the KDC did not start");
  } catch (...) {
    stop_kdc();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

KerberosRealm::~KerberosRealm() {
  stop_kdc();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string KerberosRealm::service_principal() const {
  return std::string("impala/localhost@") + kRealm;
}

std::string KerberosRealm::user_principal() const {
  return std::string("alice@") + kRealm;
}

std::string KerberosRealm::describe() const {
  return std::string("realm ") + kRealm + ": krb5kdc pid " + std::to_string(kdc_pid_) +
         " on 127.0.0.1:" + std::to_string(port_) + " (UDP, TCP), " + dir_.string();
}

std::map<std::string, std::string> KerberosRealm::env(const std::string& cache) const {
  std::map<std::string, std::string> out = {
      {"KRB5_CONFIG", krb5_config()},
      {"KRB5_KDC_PROFILE", (dir_ / "kdc.conf").string()},
      {"KRB5RCACHEDIR", dir_.string()},
  };
  if (!cache.empty()) out["KRB5CCNAME"] = cache;
  return out;
}

std::string KerberosRealm::shell_env(const std::string& cache) const {
  std::string out;
  for (const auto& [k, v] : env(cache)) out += k + "='" + v + "' ";
  return out;
}

void KerberosRealm::run(const std::string& command) const {
  const auto log = dir_ / "step.log";
  const std::string line =
      "timeout 30 env " + shell_env() + command + " >'" + log.string() + "' 2>&1 </dev/null";
  const int status = std::system(line.c_str());
  if (status != 0)
    throw std::runtime_error("Kerberos tests: `" + command + "` failed: " + slurp_file(log));
}

std::string KerberosRealm::add_principal(const std::string& principal) {
  std::string name = principal;
  for (auto& c : name)
    if (c == '/' || c == '@') c = '_';
  const std::string keytab = (dir_ / (name + ".keytab")).string();
  const std::string kadmin = find_tool(kKadminLocal) + " -r " + kRealm + " -q ";
  run(kadmin + "'addprinc -randkey " + principal + "'");
  run(kadmin + "'ktadd -k " + keytab + " " + principal + "'");
  return keytab;
}

std::string KerberosRealm::kinit(const std::string& name, const std::string& lifetime) const {
  const std::string cache = "FILE:" + (dir_ / (name + ".cc")).string();
  run("KRB5CCNAME='" + cache + "' " + find_tool(kKinit) +
      (lifetime.empty() ? "" : " -l " + lifetime) + " -kt " + user_keytab() + " " +
      user_principal());
  return cache;
}

bool KerberosRealm::start_kdc() {
  port_ = free_port();
  const std::string d = dir_.string();
  const std::string listen = "127.0.0.1:" + std::to_string(port_);
  std::string kdc_conf = slurp_file(dir_ / "kdc.conf");
  if (const auto at = kdc_conf.find("[kdcdefaults]"); at != std::string::npos)
    kdc_conf.erase(at, kdc_conf.find("[realms]") - at);
  write_file(dir_ / "kdc.conf", "[kdcdefaults]\n  kdc_listen = " + listen +
                                    "\n  kdc_tcp_listen = " + listen + "\n" + kdc_conf);
  // No DNS, no reverse lookups, no short-name qualification: "localhost" stays localhost. The
  // default caches and client keytab point into the realm's directory, so a test without
  // KRB5CCNAME finds no ticket instead of the machine's.
  write_file(dir_ / "krb5.conf",
             "[libdefaults]\n  default_realm = " + std::string(kRealm) +
                 "\n  dns_lookup_kdc = false\n  dns_lookup_realm = false\n  rdns = false\n"
                 "  dns_canonicalize_hostname = false\n  qualify_shortname = \"\"\n"
                 "  default_ccache_name = FILE:" +
                 d + "/default.cc\n  default_client_keytab_name = FILE:" + d +
                 "/no-client.keytab\n[realms]\n  " + kRealm + " = {\n    kdc = " + listen +
                 "\n  }\n[domain_realm]\n  localhost = " + kRealm + "\n");

  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env()) env_strings.push_back(k + "=" + v);
  env_strings.push_back("PATH=/usr/sbin:/usr/bin:/sbin:/bin");
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string binary = find_tool(kKrb5Kdc);
  std::string realm = kRealm;
  std::string pid_file = d + "/kdc.pid";
  std::vector<std::string> args = {binary, "-n", "-r", realm, "-P", pid_file};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out_path = d + "/kdc.out";
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("Kerberos tests: fork failed");
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      const std::string why = slurp_file(out_path) + slurp_file(dir_ / "kdc.log");
      if (why.find("in use") != std::string::npos) return false;  // lost the port race: retry
      throw std::runtime_error("Kerberos tests: krb5kdc exited: " + why);
    }
    if (accepts_tcp(port_)) {
      kdc_pid_ = pid;
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  throw std::runtime_error("Kerberos tests: krb5kdc did not listen within 10 s: " +
                           slurp_file(out_path));
}

void KerberosRealm::stop_kdc() {
  if (kdc_pid_ < 0) return;
  ::kill(kdc_pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int status = 0;
  while (::waitpid(kdc_pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(kdc_pid_, SIGKILL);
      ::waitpid(kdc_pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kdc_pid_ = -1;
}

ScopedKerberosEnv::ScopedKerberosEnv(const KerberosRealm& realm, const std::string& cache) {
  auto vars = realm.env(cache);
  vars.try_emplace("KRB5CCNAME", "");  // no cache given: none from the caller's environment
  vars.try_emplace("KRB5_CLIENT_KTNAME", "");
  for (const auto& [k, v] : vars) {
    const char* old = std::getenv(k.c_str());
    saved_[k] = old ? std::optional<std::string>(old) : std::nullopt;
    if (v.empty())
      ::unsetenv(k.c_str());
    else
      ::setenv(k.c_str(), v.c_str(), 1);
  }
}

ScopedKerberosEnv::~ScopedKerberosEnv() {
  for (const auto& [k, v] : saved_) {
    if (v)
      ::setenv(k.c_str(), v->c_str(), 1);
    else
      ::unsetenv(k.c_str());
  }
}

}  // namespace atlas2kudu::testing
