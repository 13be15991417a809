// Helpers shared by the HS2 tests: a scratch directory, TLS material made at run time with the
// openssl CLI (nothing secret is committed), client options pointing at a test server, sessions
// and credentials made from them, and a clock that records waits instead of waiting.
#pragma once

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hs2/auth.h"
#include "hs2/clock.h"
#include "hs2/credentials.h"
#include "hs2/error.h"
#include "hs2/hs2_session.h"
#include "hs2/options.h"
#include "hs2/session.h"

namespace atlas2kudu::testing {

// One directory per test process under $TMPDIR, removed when the process exits.
inline std::filesystem::path scratch_root() {
  struct Root {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("atlas2kudu-hs2-" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Root root;
  return root.path;
}

inline std::filesystem::path scratch_dir(const std::string& name) {
  auto dir = scratch_root() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Two independent CAs; "good" server cert (SAN localhost + 127.0.0.1) and "wrong-name" cert
// (SAN wrong.example only), both signed by CA 1. Generated once per test process.
struct TlsFiles {
  std::string ca, other_ca, cert, key, wrong_cert, wrong_key;
};

inline const TlsFiles& tls_files() {
  static const TlsFiles files = [] {
    auto dir = scratch_dir("tls");
    auto p = [&](const char* f) { return (dir / f).string(); };
    auto run = [](const std::string& cmd) {
      if (std::system((cmd + " >/dev/null 2>&1").c_str()) != 0)
        throw std::runtime_error("openssl failed: " + cmd);
    };
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    for (const char* ca : {"ca", "other_ca"}) {
      run("openssl req -x509" + ec + " -keyout " + p(ca) + ".key -out " + p(ca) +
          ".pem -days 2 -subj /CN=atlas2kudu-test-" + ca +
          " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign,cRLSign");
    }
    auto leaf = [&](const std::string& name, const std::string& cn, const std::string& san) {
      run("openssl req" + ec + " -keyout " + p(name.c_str()) + ".key -out " + p(name.c_str()) +
          ".csr -subj /CN=" + cn);
      {
        std::FILE* f = std::fopen((p(name.c_str()) + ".ext").c_str(), "w");
        std::fprintf(f, "subjectAltName=%s\nbasicConstraints=CA:FALSE\n", san.c_str());
        std::fclose(f);
      }
      run("openssl x509 -req -in " + p(name.c_str()) + ".csr -CA " + p("ca") + ".pem -CAkey " +
          p("ca") + ".key -CAcreateserial -days 2 -out " + p(name.c_str()) + ".pem -extfile " +
          p(name.c_str()) + ".ext");
    };
    leaf("server", "localhost", "DNS:localhost,IP:127.0.0.1");
    leaf("wrong", "wrong.example", "DNS:wrong.example");
    return TlsFiles{p("ca") + ".pem",     p("other_ca") + ".pem", p("server") + ".pem",
                    p("server") + ".key", p("wrong") + ".pem",    p("wrong") + ".key"};
  }();
  return files;
}

inline Hs2Options test_options(int port, const std::string& host = "127.0.0.1") {
  Hs2Options o;
  o.impalad = host + ":" + std::to_string(port);
  o.user = "alice";
  o.connect_timeout_ms = 5000;
  o.socket_timeout_ms = 10000;  // every test is bounded even if the server hangs
  o.connect_max_tries = 2;
  o.retry_backoff_ms = 5;
  return o;
}

inline std::shared_ptr<const Hs2Credentials> password_credentials(std::string password) {
  auto c = std::make_shared<Hs2Credentials>();
  c->password = std::move(password);
  return c;
}

inline std::shared_ptr<const Hs2Credentials> jwt_credentials(std::string token) {
  auto c = std::make_shared<Hs2Credentials>();
  c->jwt = std::move(token);
  return c;
}

// An HS2 session for `o` (validated here), as the executor's factory would make it.
inline Hs2Session hs2_session(const Hs2Options& o,
                              std::shared_ptr<const Hs2Credentials> credentials = nullptr,
                              Hs2Session::Hooks hooks = {}) {
  const Hs2Settings settings = validate_hs2_options(o);
  return Hs2Session(settings, make_authenticator(settings, std::move(credentials)),
                    std::move(hooks));
}

inline SessionFactory hs2_sessions(const Hs2Options& o,
                                   std::shared_ptr<const Hs2Credentials> credentials = nullptr) {
  return hs2_session_factory(validate_hs2_options(o), std::move(credentials));
}

// Time that passes only when slept on; records every wait. Thread-safe.
class ManualClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() override {
    std::lock_guard lock(mu_);
    return now_;
  }
  void sleep_for(std::chrono::milliseconds d) override {
    std::lock_guard lock(mu_);
    slept_.push_back(d);
    now_ += d;
  }
  std::vector<std::chrono::milliseconds> slept() const {
    std::lock_guard lock(mu_);
    return slept_;
  }

 private:
  mutable std::mutex mu_;
  std::chrono::steady_clock::time_point now_{};
  std::vector<std::chrono::milliseconds> slept_;
};

// Runs `f` expecting an Hs2Error; returns it for inspection.
template <class F>
inline Hs2Error expect_hs2_error(F&& f) {
  try {
    f();
  } catch (const Hs2Error& e) {
    return e;
  }
  FAIL("expected an Hs2Error");
  return Hs2Error(Hs2ErrorKind::kInternal, "unreachable");
}

// Calls `on_expiry` after `limit` unless disarmed first: keeps a test bounded if the code under
// test fails to time out by itself.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds limit, std::function<void()> on_expiry)
      : thread_([this, limit, on_expiry = std::move(on_expiry)] {
          std::unique_lock lock(mu_);
          if (!cv_.wait_for(lock, limit, [this] { return disarmed_; })) {
            fired_ = true;
            on_expiry();
          }
        }) {}
  ~Watchdog() {
    disarm();
    thread_.join();
  }
  // True if it had already fired.
  bool disarm() {
    std::lock_guard lock(mu_);
    disarmed_ = true;
    cv_.notify_all();
    return fired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  bool fired_ = false;
  std::thread thread_;
};

// A TCP socket listening on 127.0.0.1 at a port the kernel chose; nothing accept()s on it yet, but
// the kernel completes connections to it.
struct LoopbackListener {
  int fd = -1;
  int port = 0;
};

inline LoopbackListener listen_on_loopback() {
  LoopbackListener l;
  l.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(l.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(l.fd, 4) == 0);
  socklen_t len = sizeof addr;
  getsockname(l.fd, reinterpret_cast<sockaddr*>(&addr), &len);
  l.port = ntohs(addr.sin_port);
  return l;
}

}  // namespace atlas2kudu::testing
