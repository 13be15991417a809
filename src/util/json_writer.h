// Compact JSON text, written front to back: the writer puts the commas and colons, the caller
// the structure. Used for --stats, the reject file, checkpoints and metrics, so every JSON the
// tool writes escapes strings the same way.
//
//   std::string out;
//   JsonWriter w(out);
//   w.begin_object().key("events").value(3).key("tables").begin_array();
//   w.value("entity_flat").end_array().key("ok").value(true).end_object();
//   // out == {"events":3,"tables":["entity_flat"],"ok":true}
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace atlas2kudu {

// Appends `text` as a JSON string literal: `"` and `\` escaped, control characters as \n, \r, \t,
// \b, \f or \u00XX, valid UTF-8 byte for byte, and each byte of no valid UTF-8 sequence as \ufffd
// (the replacement character): JSON text is UTF-8, and a reader (simdjson reading a checkpoint
// back, Python's json) refuses anything else. Such bytes come from the system, not the input
// (a file name in Latin-1, an error message quoting one): records are validated when read, and
// the reject file keeps an invalid one whole in record_base64.
//   append_json_string("caf\xE9.jsonl", out);  // out == "\"caf\\ufffd.jsonl\""
void append_json_string(std::string_view text, std::string& out);

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }

  // The member name of the next value.
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(bool b);
  template <std::integral T>
  requires(!std::same_as<T, bool>) JsonWriter& value(T n) {
    if constexpr (std::is_signed_v<T>) {
      return integer(static_cast<std::int64_t>(n));
    } else {
      return unsigned_integer(static_cast<std::uint64_t>(n));
    }
  }
  // A number with exactly `decimals` digits after the point, e.g. seconds: 1.250.
  JsonWriter& fixed(double x, int decimals);
  JsonWriter& null();
  // A value that already is JSON text (not checked).
  JsonWriter& raw(std::string_view json);

 private:
  JsonWriter& open(char c);
  JsonWriter& close(char c);
  JsonWriter& integer(std::int64_t n);
  JsonWriter& unsigned_integer(std::uint64_t n);
  void separate();

  std::string& out_;
  bool need_comma_ = false;
  bool after_key_ = false;
};

}  // namespace atlas2kudu
