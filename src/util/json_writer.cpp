#include "util/json_writer.h"

#include <fmt/format.h>

#include <iterator>

#include "util/utf8.h"

namespace atlas2kudu {

void append_json_string(std::string_view text, std::string& out) {
  out.push_back('"');
  std::size_t run = 0;  // start of the bytes not yet copied
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') continue;
    if (c >= 0x80) {
      char32_t code_point = 0;
      if (const std::size_t n = utf8_sequence(text.substr(i), code_point)) {
        i += n - 1;  // valid: copied with the run
        continue;
      }
    }
    out.append(text.data() + run, i - run);
    run = i + 1;
    if (c >= 0x80) {
      out += "\\ufffd";  // a byte of no valid sequence (a file name in Latin-1, say)
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    }
  }
  out.append(text.data() + run, text.size() - run);
  out.push_back('"');
}

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (need_comma_) out_.push_back(',');
}

JsonWriter& JsonWriter::open(char c) {
  separate();
  out_.push_back(c);
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::close(char c) {
  out_.push_back(c);
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  separate();
  append_json_string(name, out_);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  separate();
  append_json_string(text, out_);
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  return raw(b ? "true" : "false");
}

JsonWriter& JsonWriter::integer(std::int64_t n) {
  separate();
  fmt::format_to(std::back_inserter(out_), "{}", n);
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::unsigned_integer(std::uint64_t n) {
  separate();
  fmt::format_to(std::back_inserter(out_), "{}", n);
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::fixed(double x, int decimals) {
  separate();
  fmt::format_to(std::back_inserter(out_), "{:.{}f}", x, decimals);
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::null() {
  return raw("null");
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  out_.append(json);
  need_comma_ = true;
  return *this;
}

}  // namespace atlas2kudu
