#include "kerberos_acceptor.h"

#include <fmt/core.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <thrift/transport/TTransport.h>

#include <stdexcept>

#include "hs2/sasl_transport.h"

namespace atlas2kudu::testing {

using apache::thrift::transport::TTransport;

namespace {

// RFC 4752 security layers: bit 0 none, bit 1 integrity, bit 2 confidentiality.
constexpr unsigned char kLayerNone = 1;
constexpr unsigned char kAllLayers = 7;

std::string gss_text(OM_uint32 major, OM_uint32 minor) {
  std::string text;
  for (auto [code, type] : {std::pair{major, GSS_C_GSS_CODE}, std::pair{minor, GSS_C_MECH_CODE}}) {
    if (code == 0) continue;
    OM_uint32 context = 0;
    do {
      OM_uint32 ignored = 0;
      gss_buffer_desc buffer = GSS_C_EMPTY_BUFFER;
      if (GSS_ERROR(gss_display_status(&ignored, code, type, GSS_C_NO_OID, &context, &buffer)))
        break;
      if (!text.empty()) text += ": ";
      text.append(static_cast<const char*>(buffer.value), buffer.length);
      gss_release_buffer(&ignored, &buffer);
    } while (context != 0);
  }
  return text;
}

std::string take(gss_buffer_desc& buffer) {
  std::string out(static_cast<const char*>(buffer.value), buffer.length);
  OM_uint32 ignored = 0;
  gss_release_buffer(&ignored, &buffer);
  return out;
}

std::string display(gss_name_t name) {
  OM_uint32 minor = 0;
  gss_buffer_desc text = GSS_C_EMPTY_BUFFER;
  if (GSS_ERROR(gss_display_name(&minor, name, &text, nullptr))) return "?";
  return take(text);
}

// One acceptor security context, deleted with this object.
class Context {
 public:
  ~Context() {
    OM_uint32 ignored = 0;
    if (context_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&ignored, &context_, GSS_C_NO_BUFFER);
    if (client_ != GSS_C_NO_NAME) gss_release_name(&ignored, &client_);
  }
  // One gss_accept_sec_context step: its major status, the token to send back in *reply.
  OM_uint32 step(gss_cred_id_t credentials, const std::string& token, std::string* reply,
                 std::string* error) {
    gss_buffer_desc in{token.size(), const_cast<char*>(token.data())};
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor = 0;
    if (client_ != GSS_C_NO_NAME) gss_release_name(&minor, &client_);
    const OM_uint32 major =
        gss_accept_sec_context(&minor, &context_, credentials, &in, GSS_C_NO_CHANNEL_BINDINGS,
                               &client_, nullptr, &out, nullptr, nullptr, nullptr);
    *reply = take(out);
    if (GSS_ERROR(major)) *error = gss_text(major, minor);
    return major;
  }
  std::string client() const { return display(client_); }
  gss_ctx_id_t get() const { return context_; }

 private:
  gss_ctx_id_t context_ = GSS_C_NO_CONTEXT;
  gss_name_t client_ = GSS_C_NO_NAME;
};

}  // namespace

struct KerberosAcceptor::Credentials {
  gss_cred_id_t handle = GSS_C_NO_CREDENTIAL;
};

KerberosAcceptor::KerberosAcceptor(const std::string& keytab, const std::string& principal)
    : credentials_(std::make_unique<Credentials>()) {
  OM_uint32 minor = 0;
  gss_buffer_desc text{principal.size(), const_cast<char*>(principal.data())};
  gss_name_t name = GSS_C_NO_NAME;
  OM_uint32 major = gss_import_name(&minor, &text, GSS_KRB5_NT_PRINCIPAL_NAME, &name);
  if (GSS_ERROR(major))
    throw std::runtime_error(fmt::format("principal {}: {}", principal, gss_text(major, minor)));
  gss_key_value_element_desc element{"keytab", keytab.c_str()};
  gss_key_value_set_desc store{1, &element};
  major = gss_acquire_cred_from(&minor, name, GSS_C_INDEFINITE, GSS_C_NO_OID_SET, GSS_C_ACCEPT,
                                &store, &credentials_->handle, nullptr, nullptr);
  OM_uint32 ignored = 0;
  gss_release_name(&ignored, &name);
  if (GSS_ERROR(major))
    throw std::runtime_error(
        fmt::format("no key for {} in keytab {}: {}", principal, keytab, gss_text(major, minor)));
}

KerberosAcceptor::~KerberosAcceptor() {
  OM_uint32 ignored = 0;
  if (credentials_->handle != GSS_C_NO_CREDENTIAL)
    gss_release_cred(&ignored, &credentials_->handle);
}

KerberosAcceptor::Outcome KerberosAcceptor::sasl_gssapi(TTransport& wire, std::string token) const {
  Outcome outcome;
  Context context;
  std::string reply;
  for (;;) {
    const OM_uint32 major = context.step(credentials_->handle, token, &reply, &outcome.error);
    if (GSS_ERROR(major)) return outcome;
    if (major == GSS_S_COMPLETE) break;
    write_sasl_message(wire, SaslStatus::kOk, reply);
    auto [status, payload] = read_sasl_message(wire);
    if (status != SaslStatus::kOk) {
      outcome.error = "expected SASL OK with the next GSSAPI token";
      return outcome;
    }
    token = std::move(payload);
  }
  if (!reply.empty()) {
    // The last context token (mutual authentication); the client answers with an empty one.
    write_sasl_message(wire, SaslStatus::kOk, reply);
    (void)read_sasl_message(wire);
  }
  // Offer every layer with a 64 KiB buffer, as a Cyrus server does; only "none" is accepted.
  const unsigned char offer[4] = {kAllLayers, 0x01, 0x00, 0x00};
  OM_uint32 minor = 0;
  gss_buffer_desc plain{sizeof offer, const_cast<unsigned char*>(offer)};
  gss_buffer_desc wrapped = GSS_C_EMPTY_BUFFER;
  OM_uint32 major =
      gss_wrap(&minor, context.get(), 0, GSS_C_QOP_DEFAULT, &plain, nullptr, &wrapped);
  if (GSS_ERROR(major)) {
    outcome.error = gss_text(major, minor);
    return outcome;
  }
  write_sasl_message(wire, SaslStatus::kOk, take(wrapped));
  auto [status, answer] = read_sasl_message(wire);
  if (status != SaslStatus::kOk && status != SaslStatus::kComplete) {
    outcome.error = "expected SASL OK with the security layer choice";
    return outcome;
  }
  gss_buffer_desc in{answer.size(), answer.data()};
  gss_buffer_desc choice = GSS_C_EMPTY_BUFFER;
  major = gss_unwrap(&minor, context.get(), &in, &choice, nullptr, nullptr);
  if (GSS_ERROR(major)) {
    outcome.error = gss_text(major, minor);
    return outcome;
  }
  const std::string chosen = take(choice);
  if (chosen.size() < 4 || static_cast<unsigned char>(chosen[0]) != kLayerNone) {
    outcome.error =
        fmt::format("the client chose security layer {} (Impala never wraps: only 1, none, works)",
                    chosen.empty() ? -1 : static_cast<unsigned char>(chosen[0]));
    return outcome;
  }
  write_sasl_message(wire, SaslStatus::kComplete, "");
  outcome.ok = true;
  outcome.client = context.client();
  return outcome;
}

KerberosAcceptor::Outcome KerberosAcceptor::spnego(const std::string& token) const {
  Outcome outcome;
  Context context;
  const OM_uint32 major =
      context.step(credentials_->handle, token, &outcome.reply_token, &outcome.error);
  if (GSS_ERROR(major)) return outcome;
  if (major != GSS_S_COMPLETE) {
    outcome.error = "SPNEGO needs another round trip, which this server does not support";
    return outcome;
  }
  outcome.ok = true;
  outcome.client = context.client();
  return outcome;
}

}  // namespace atlas2kudu::testing
