#include "input/framer.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace atlas2kudu {

namespace {

constexpr std::size_t kInitialCapacity = std::size_t{1} << 20;
constexpr std::size_t kPrefixLookahead = 64;

// First '"', '\\' or '\n' in [p, end), or end. Strings make up most of an envelope's bytes (and
// all of a Base64 payload), so this is where the framer spends its time.
inline const char* find_string_special(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i newline = _mm_set1_epi8('\n');
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hits =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmpeq_epi8(v, newline));
    const int mask = _mm_movemask_epi8(hits);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  for (; p < end; ++p) {
    if (*p == '"' || *p == '\\' || *p == '\n') return p;
  }
  return end;
}

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// A short, printable excerpt of bad bytes for error messages.
std::string excerpt(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  if (text.size() > 40) out += "...";
  return out;
}

}  // namespace

Framer::Framer(ByteSource& source, std::size_t max_record_bytes)
    : source_(source),
      max_record_bytes_(max_record_bytes),
      buf_(new char[kInitialCapacity + kRecordPadding]),
      capacity_(kInitialCapacity) {}

Framer::~Framer() = default;

std::size_t Framer::fill(std::size_t keep, std::size_t want) {
  while (end_ - pos_ < want && !eof_) {
    if (end_ == capacity_) {
      if (keep > 0) {
        std::memmove(buf_.get(), buf_.get() + keep, end_ - keep);
        pos_ -= keep;
        end_ -= keep;
        base_offset_ += keep;
        keep = 0;
      } else {
        // The record in progress fills the buffer: grow it. Records longer than the limit are
        // stopped by the scanner before the buffer grows much past it.
        const std::size_t grown = capacity_ * 2;
        std::unique_ptr<char[]> bigger(new char[grown + kRecordPadding]);
        std::memcpy(bigger.get(), buf_.get(), end_);
        buf_ = std::move(bigger);
        capacity_ = grown;
      }
    }
    const std::size_t n = source_.read(buf_.get() + end_, capacity_ - end_);
    if (n == 0) {
      eof_ = true;
    } else {
      end_ += n;
    }
  }
  return end_ - pos_;
}

bool Framer::skip_prefixes_and_diagnostics(FramedRecord& out) {
  fill(pos_, kPrefixLookahead);
  const char* p = buf_.get() + pos_;
  std::string_view ahead(p, end_ - pos_);
  if (ahead.starts_with("Processed a total of ") || ahead.starts_with("% ")) {
    // Drop the whole line, however long, without holding it in memory.
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(buf_.get() + pos_, '\n', end_ - pos_));
      if (nl != nullptr) {
        pos_ = static_cast<std::size_t>(nl - buf_.get());
        break;
      }
      pos_ = end_;
      if (fill(pos_, 1) == 0) break;
    }
    ++ignored_lines_;
    return true;
  }
  // kafka-console-consumer's optional prefixes, in the order it prints them, each ending in a tab.
  static constexpr std::string_view kPrefixes[] = {"CreateTime:", "LogAppendTime:", "NO_TIMESTAMP",
                                                   "Partition:",  "Offset:",        "NO_HEADERS",
                                                   "null\t"};
  for (bool more = true; more;) {
    more = false;
    ahead = std::string_view(buf_.get() + pos_, end_ - pos_);
    for (std::string_view prefix : kPrefixes) {
      if (!ahead.starts_with(prefix)) continue;
      const std::size_t tab = ahead.find('\t', prefix.size() - (prefix.back() == '\t' ? 1 : 0));
      if (tab == std::string_view::npos || tab > kPrefixLookahead) break;
      const std::string_view value =
          ahead.substr(prefix.size(), tab - std::min(tab, prefix.size()));
      if (prefix == "Partition:") {
        std::int32_t v = 0;
        if (std::from_chars(value.data(), value.data() + value.size(), v).ec == std::errc()) {
          out.console_partition = v;
        }
      } else if (prefix == "Offset:") {
        std::int64_t v = 0;
        if (std::from_chars(value.data(), value.data() + value.size(), v).ec == std::errc()) {
          out.console_offset = v;
        }
      }
      pos_ += tab + 1;
      fill(pos_, kPrefixLookahead);
      more = true;
      break;
    }
  }
  return false;
}

bool Framer::take_rest_of_line(std::size_t& start) {
  for (;;) {
    const char* nl = static_cast<const char*>(std::memchr(buf_.get() + pos_, '\n', end_ - pos_));
    if (nl != nullptr) {
      pos_ = static_cast<std::size_t>(nl - buf_.get());
      return true;
    }
    pos_ = end_;
    if (pos_ - start > max_record_bytes_) {
      // Too long to hold: keep an excerpt for the report and drop the rest of the line.
      overflow_excerpt_.assign(buf_.get() + start, std::min<std::size_t>(pos_ - start, 4096));
      for (;;) {
        if (fill(pos_, 1) == 0) return false;
        nl = static_cast<const char*>(std::memchr(buf_.get() + pos_, '\n', end_ - pos_));
        if (nl != nullptr) {
          pos_ = static_cast<std::size_t>(nl - buf_.get());
          return false;
        }
        pos_ = end_;
      }
    }
    const std::size_t before = pos_ - start;
    fill(start, 1);
    start = pos_ - before;
    if (pos_ == end_) return true;
  }
}

Framer::Scan Framer::scan_document(std::size_t& start, std::string& reason) {
  const std::uint64_t start_line = line_;
  int depth = 0;
  bool in_string = false;
  bool content_on_first_line = false;
  for (;;) {
    if (pos_ == end_) {
      if (pos_ - start > max_record_bytes_) return Scan::kTooLarge;
      const std::size_t before = pos_ - start;
      fill(start, 1);
      start = pos_ - before;
      if (pos_ == end_) {
        reason = in_string
                     ? "truncated JSON: unterminated string at end of input"
                     : fmt::format("truncated JSON: {} unclosed bracket(s) at end of input", depth);
        return Scan::kTruncated;
      }
    }
    if (in_string) {
      const char* p = find_string_special(buf_.get() + pos_, buf_.get() + end_);
      pos_ = static_cast<std::size_t>(p - buf_.get());
      if (pos_ == end_) continue;
      if (*p == '"') {
        in_string = false;
        ++pos_;
      } else if (*p == '\\') {
        if (end_ - pos_ < 2) {
          const std::size_t before = pos_ - start;
          fill(start, 2);
          start = pos_ - before;
          if (end_ - pos_ < 2) {
            pos_ = end_;
            continue;  // reported as truncated at end of input above
          }
        }
        if (buf_[pos_ + 1] == '\n') {
          ++pos_;
          reason = "truncated JSON: unterminated string at end of line";
          return Scan::kTruncated;
        }
        pos_ += 2;
      } else {
        reason = "truncated JSON: unterminated string at end of line";
        return Scan::kTruncated;
      }
      continue;
    }
    const char c = buf_[pos_];
    switch (c) {
      case '"':
        in_string = true;
        content_on_first_line = content_on_first_line || line_ == start_line;
        break;
      case '{':
      case '[':
        ++depth;
        content_on_first_line = content_on_first_line || (line_ == start_line && depth > 1);
        break;
      case '}':
      case ']':
        --depth;
        if (depth == 0) {
          ++pos_;
          return Scan::kComplete;
        }
        break;
      case '\n':
        if (content_on_first_line) {
          reason = fmt::format("truncated JSON: {} unclosed bracket(s) at end of line", depth);
          return Scan::kTruncated;
        }
        ++line_;
        break;
      default:
        if (!is_space(c) && line_ == start_line) content_on_first_line = true;
        break;
    }
    ++pos_;
    if (pos_ - start > max_record_bytes_) return Scan::kTooLarge;
  }
}

bool Framer::next(FramedRecord& out) {
  out.error.reset();
  out.reason.clear();
  out.console_partition.reset();
  out.console_offset.reset();
  for (;;) {
    if (pos_ == end_ && fill(pos_, 1) == 0) {
      if (in_array_) {
        in_array_ = false;
        out.text = {};
        out.line = line_;
        out.offset = base_offset_ + pos_;
        out.index = records_++;
        out.error = RejectCode::kInvalidJson;
        out.reason = "truncated JSON: top-level array not closed at end of input";
        return true;
      }
      return false;
    }
    const char c = buf_[pos_];
    if (c == '\n') {
      ++line_;
      ++pos_;
      line_start_ = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      line_start_ = false;
      ++pos_;
      continue;
    }
    if (line_start_ && !in_array_) {
      line_start_ = false;
      if (skip_prefixes_and_diagnostics(out)) continue;
      if (pos_ == end_) continue;
    }
    line_start_ = false;
    const char d = buf_[pos_];
    if (in_array_ && (d == ',' || d == ']')) {
      in_array_ = d == ',';
      ++pos_;
      continue;
    }
    if (is_space(d)) continue;
    if (d == '[' && !in_array_) {
      in_array_ = true;
      ++pos_;
      continue;
    }
    std::size_t start = pos_;
    out.line = line_;
    out.offset = base_offset_ + pos_;
    out.index = records_++;
    if (d == '{') {
      const Scan scan = scan_document(start, out.reason);
      if (scan == Scan::kTooLarge) {
        overflow_excerpt_.assign(buf_.get() + start, std::min<std::size_t>(pos_ - start, 4096));
        std::size_t from = pos_;
        take_rest_of_line(from);
        out.error = RejectCode::kTooLarge;
        out.reason = fmt::format("record longer than the {} byte limit", max_record_bytes_);
        out.text = overflow_excerpt_;
        return true;
      }
      if (scan == Scan::kTruncated) out.error = RejectCode::kInvalidJson;
      out.text = std::string_view(buf_.get() + start, pos_ - start);
      return true;
    }
    const bool whole = take_rest_of_line(start);
    out.text = whole ? std::string_view(buf_.get() + start, pos_ - start)
                     : std::string_view(overflow_excerpt_);
    out.error = RejectCode::kNotJson;
    out.reason = fmt::format("not a JSON object: \"{}\"", excerpt(out.text));
    return true;
  }
}

}  // namespace atlas2kudu
