#include "hs2/options.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "hs2/credentials.h"
#include "hs2/error.h"
#include "util/ascii_case.h"
#include "util/utf8.h"

namespace atlas2kudu {

namespace {

// "-i :", "-i host:" or "-i []" is a mistake (a variable left empty), not a wish for the defaults.
[[noreturn]] void empty_part(const std::string& spec, const char* flag) {
  throw Hs2Error(Hs2ErrorKind::kUsage,
                 fmt::format("{} '{}': a host or port left empty; give host[:port], or "
                             "[v6addr][:port] for IPv6",
                             flag, spec));
}

// host[:port] or [v6addr][:port], as impala-shell accepts them; `flag` names the option in errors.
Hs2Endpoint parse_host_port(const std::string& spec, const char* flag, int default_port) {
  Hs2Endpoint ep;
  std::string port_text;
  // A URL where host[:port] belongs ("http://db1:28000/cliservice"): the scheme, path and user
  // are other options here, as in impala-shell. A user and password it carries are not repeated
  // (the message goes to cron's mail and --stats).
  const bool impalad = std::string_view(flag) == "-i";
  const std::size_t scheme = spec.find("://");
  if (scheme != std::string::npos || spec.find('@') != std::string::npos) {
    const UrlParts parts = split_userinfo(spec);
    const std::string& rest = parts.rest;  // host[:port][/path]
    const bool password = parts.userinfo.find(':') != std::string::npos;
    std::string user = parts.userinfo.substr(0, parts.userinfo.find(':'));
    user.erase(0, user.find_first_not_of(" \t"));
    const std::string shown = parts.userinfo.empty()
                                  ? spec
                                  : parts.scheme + (impalad ? user : std::string("****")) +
                                        (password ? ":****@" : "@") + rest;
    const std::size_t path_at = rest.find_first_of("/?#");
    const std::string authority = rest.substr(0, path_at);
    std::string path = path_at == std::string::npos ? "" : rest.substr(path_at);
    path = path.substr(0, path.find_first_of("?#"));
    // -b names the principal's host: no protocol to suggest there.
    const std::string scheme_name =
        impalad && scheme != std::string::npos ? to_lower_ascii(spec.substr(0, scheme)) : "";
    const bool http = scheme_name == "https" || scheme_name == "http";
    std::string advice = fmt::format("give {} {}", flag, authority.empty() ? "HOST" : authority);
    if (http)
      advice += scheme_name == "https" ? " --protocol hs2-http --ssl" : " --protocol hs2-http";
    if (http && !path.empty() && path != "/" && path != "/cliservice")
      advice += " --http_path " + path;
    if (impalad && !user.empty()) advice += " -u " + user;
    if (impalad && password) {
      advice +=
          " -l, with the password from --ldap_password_cmd or $ATLAS2KUDU_LDAP_PASSWORD "
          "(never on the command line)";
    }
    throw Hs2Error(Hs2ErrorKind::kUsage,
                   fmt::format("{} {}: a host[:port], not a {}; {}", flag, shown,
                               scheme == std::string::npos ? "user@host" : "URL", advice));
  }
  if (!spec.empty() && spec.front() == '[') {  // [v6addr]:port, as impala-shell accepts
    auto close = spec.find(']');
    if (close == std::string::npos)
      throw Hs2Error(Hs2ErrorKind::kUsage, fmt::format("{} {}: missing ']'", flag, spec));
    ep.host = spec.substr(1, close - 1);
    if (close + 1 < spec.size()) {
      if (spec[close + 1] != ':')
        throw Hs2Error(Hs2ErrorKind::kUsage,
                       fmt::format("{} {}: expected ':' after ']'", flag, spec));
      port_text = spec.substr(close + 2);
      if (port_text.empty()) empty_part(spec, flag);
    }
    if (ep.host.empty()) empty_part(spec, flag);
  } else {
    auto colon = spec.rfind(':');
    if (colon != std::string::npos && spec.find(':') == colon) {
      ep.host = spec.substr(0, colon);
      port_text = spec.substr(colon + 1);
      if (ep.host.empty() || port_text.empty()) empty_part(spec, flag);
    } else if (colon != std::string::npos) {
      // Several colons: only a bare IPv6 address (no port) reads that way.
      in6_addr address{};
      if (::inet_pton(AF_INET6, spec.c_str(), &address) != 1) {
        throw Hs2Error(
            Hs2ErrorKind::kUsage,
            fmt::format("{} {}: expected host[:port], or [v6addr][:port] for IPv6", flag, spec));
      }
      ep.host = spec;
    } else {
      ep.host = spec;
    }
  }
  if (ep.host.empty()) ep.host = "localhost";
  ep.port = default_port;
  if (!port_text.empty()) {
    char* end = nullptr;
    long port = std::strtol(port_text.c_str(), &end, 10);
    if (*end != '\0' || port < 1 || port > 65535)
      throw Hs2Error(Hs2ErrorKind::kUsage,
                     fmt::format("{} {}: bad port '{}'", flag, spec, port_text));
    ep.port = static_cast<int>(port);
  }
  return ep;
}

}  // namespace

Hs2Endpoint hs2_endpoint(const Hs2Options& options) {
  const int default_port = options.protocol == Hs2Protocol::kHttp ? 28000 : 21050;
  return parse_host_port(options.impalad.empty() ? std::string{"localhost"} : options.impalad, "-i",
                         default_port);
}

std::string hs2_user(const Hs2Options& options) {
  if (!options.user.empty()) return options.user;
  if (const char* u = std::getenv("USER"); u && *u) return u;
  return "atlas2kudu";
}

Hs2Settings validate_hs2_options(Hs2Options o) {
  auto usage = [](const std::string& m) { throw Hs2Error(Hs2ErrorKind::kUsage, m); };
  Hs2Settings settings;
  settings.endpoint_ = hs2_endpoint(o);  // throws on a malformed -i
  if (o.ldap && o.jwt) usage("-l/--ldap and -j/--jwt are mutually exclusive");
  if (o.kerberos && o.ldap) usage("-k/--kerberos and -l/--ldap are mutually exclusive");
  if (o.kerberos && o.jwt) usage("-k/--kerberos and -j/--jwt are mutually exclusive");
  if (!o.kerberos && !o.kerberos_service_name.empty())
    usage("-s/--kerberos_service_name needs -k/--kerberos");
  if (!o.kerberos && !o.kerberos_host_fqdn.empty())
    usage("-b/--kerberos_host_fqdn needs -k/--kerberos");
  if (o.kerberos_service_name.find_first_of("/@ ") != std::string::npos)
    usage(
        fmt::format("-s {}: a service name has no '/', '@' or space (the principal is "
                    "<service>/<host>@REALM)",
                    o.kerberos_service_name));
  if (!o.jwt_cmd.empty() && !o.jwt) usage("--jwt_cmd needs -j/--jwt");
  if (!o.ldap_password_cmd.empty() && !o.ldap) usage("--ldap_password_cmd needs -l/--ldap");
  if (o.jwt && o.protocol != Hs2Protocol::kHttp) usage("-j/--jwt needs --protocol hs2-http");
  if ((o.ldap || o.jwt) && !o.ssl && !o.auth_creds_ok_in_clear)
    usage(
        "refusing to send LDAP/JWT credentials without --ssl "
        "(use --auth_creds_ok_in_clear to override)");
  if (o.ssl_insecure_skip_verify && !o.ca_cert.empty())
    usage("--ssl_insecure_skip_verify contradicts --ca_cert");
  if (!o.ca_cert.empty() && !o.ssl) usage("--ca_cert needs --ssl");
  // Checked here, when a run is to connect, not as the option is read: `compile --prior none`
  // with a production --config file (its ca_cert on another machine) stays offline and runs.
  if (!o.ca_cert.empty()) {
    struct stat st {};
    if (::stat(o.ca_cert.c_str(), &st) != 0)
      usage(fmt::format("--ca_cert {}: {}", o.ca_cert, std::strerror(errno)));
    if (S_ISDIR(st.st_mode))
      usage(fmt::format("--ca_cert {}: a directory; give the PEM file of the CAs", o.ca_cert));
  }
  if (o.ssl_insecure_skip_verify && !o.ssl) usage("--ssl_insecure_skip_verify needs --ssl");
  if (o.http_path != Hs2Options{}.http_path && o.protocol != Hs2Protocol::kHttp)
    usage("--http_path needs --protocol hs2-http");
  if (std::any_of(o.http_path.begin(), o.http_path.end(),
                  [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7F; })) {
    usage("--http_path: a URL path has no space or control character (write a space as %20)");
  }
  if (o.sessions < 1) usage("--sessions must be at least 1");
  if (o.connect_max_tries < 1) usage("--connect_max_tries must be at least 1");
  for (const auto& q : o.query_options) {
    auto eq = q.find('=');
    if (eq == std::string::npos || eq == 0) usage(fmt::format("-Q {}: expected KEY=VALUE", q));
    const std::string key = q.substr(0, eq);
    // Impala's option names are letters, digits and '_' (TImpalaQueryOptions); any other name
    // would fail every statement.
    if (!is_ascii_word(key)) {
      usage(fmt::format("-Q {}: a query option's name is letters, digits and '_'", q));
    }
    // The same option in another case is the same option, as Impala reads names: the last given
    // wins, as in impala-shell, instead of both being sent and Impala applying them in key order.
    std::erase_if(settings.query_overlay_, [&](const auto& option) {
      return equals_ignoring_ascii_case(option.first, key);
    });
    settings.query_overlay_[key] = q.substr(eq + 1);
  }
  settings.user_ = hs2_user(o);
  // A user name is one line: a line break or another control character would end up in a
  // message as two lines (or, in an HTTP header, as one of its own).
  if (const std::size_t control = first_control_byte(settings.user_);
      control != std::string_view::npos) {
    usage(fmt::format("-u {}: a user name with a control character (0x{:02x}) at byte {}",
                      one_line(settings.user_), static_cast<unsigned char>(settings.user_[control]),
                      control + 1));
  }
  if (o.ldap && o.protocol == Hs2Protocol::kHttp && settings.user_.find(':') != std::string::npos) {
    // Basic credentials are "user:password": the server would split at the user's own colon.
    usage(
        fmt::format("-u {}: a user name with ':' cannot be sent over HTTP Basic (RFC 7617); "
                    "use --protocol hs2 (SASL PLAIN) or another user name",
                    settings.user_));
  }
  if (o.kerberos) {
    settings.kerberos_service_ =
        o.kerberos_service_name.empty() ? "impala" : o.kerberos_service_name;
    settings.kerberos_host_ =
        o.kerberos_host_fqdn.empty()
            ? settings.endpoint_.host
            : parse_host_port(o.kerberos_host_fqdn, "-b", 0).host;  // port ignored
  }
  settings.options_ = std::move(o);
  return settings;
}

}  // namespace atlas2kudu
