// Builds the transport stack the options describe (research §B):
//   hs2, no auth:     TSocket [→ TLS] → TBufferedTransport          (never framed)
//   hs2, -l (LDAP):   TSocket [→ TLS] → SASL PLAIN frames
//   hs2-http:         libcurl POST per message (TLS, Basic/Bearer, cookies, 502/503/504 retries)
// The returned transport is not open; open() connects and performs the TLS and SASL handshakes
// under the connect timeout (-t), after which the socket uses --socket_timeout_ms.
//
// Example:
//   auto t = make_hs2_transport(options, credentials);
//   t->open();   // Hs2Error(kAuth) if the certificate or the password is refused,
//                // Hs2Error(kTransient) if the server cannot be reached
#pragma once

#include <memory>

#include "hs2/options.h"

namespace apache::thrift::transport {
class TTransport;
}

namespace atlas2kudu {

std::shared_ptr<apache::thrift::transport::TTransport> make_hs2_transport(
    const Hs2Options& options, const Hs2Credentials& credentials);

// Changes the receive (and send) timeout of a transport made by make_hs2_transport, 0 = none;
// for hs2-http, the whole-request timeout. Used to bound clean-up RPCs.
void set_hs2_rpc_timeout(apache::thrift::transport::TTransport& transport, int ms);

}  // namespace atlas2kudu
