// Loopback sockets for the tests of connection failures (connect_errors, secrets, kerberos_cli):
// small servers that answer as no HS2 server does, and ports nothing listens on. Tests never
// talk to anything but loopback.
#pragma once

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace atlas2kudu::testing {

struct LoopbackSocket {
  int fd = -1;
  int port = 0;
};

// A socket of `type` (SOCK_STREAM, SOCK_DGRAM) bound to 127.0.0.1:`port` (0: one the kernel
// picks, then named in the result); a stream socket listens as well when `listen_too`.
inline LoopbackSocket bind_loopback(int type, int port = 0, bool listen_too = true) {
  LoopbackSocket s;
  s.fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  REQUIRE(s.fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(::bind(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(s.fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  s.port = ntohs(addr.sin_port);
  if (type == SOCK_STREAM && listen_too) REQUIRE(::listen(s.fd, 64) == 0);
  return s;
}

}  // namespace atlas2kudu::testing
