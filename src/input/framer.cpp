#include "input/framer.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <utility>

#include "input/json_text.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__PCLMUL__)
#include <wmmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define A2K_FRAMER_AVX2 1
#endif

namespace atlas2kudu {

namespace {

constexpr std::size_t kInitialCapacity = std::size_t{1} << 20;
// Room past the record limit when the buffer grows to it: the byte that crosses the limit, and
// the few bytes of look-ahead the scanners ask for.
constexpr std::size_t kGrowthSlack = std::size_t{64} << 10;
constexpr std::size_t kPrefixLookahead = 64;
constexpr std::size_t kErrorExcerpt = 160;  // bytes of a consumer's error line in messages
// How far a record's headers (print.headers, when the record has some) may run before their tab.
constexpr std::size_t kHeadersLookahead = std::size_t{16} << 10;

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

// The lines the consumers write about themselves, when their stderr is captured with the
// records: kafka-console-consumer's log4j lines ("[%d] %p %m (%c)", e.g.
// "[2021-04-30 03:33:48,672] WARN [Consumer clientId=c1] ... (org.apache...)") and librdkafka's
// log lines under kcat ("%3|1700000000.123|FAIL|rdkafka#consumer-1| ..."). No record starts so.
bool is_consumer_log_line(std::string_view line) {
  if (line.size() >= 3 && line[0] == '%' && line[1] >= '0' && line[1] <= '9' && line[2] == '|')
    return true;
  constexpr std::string_view kLog4jTime = "[dddd-dd-dd dd:dd:dd,ddd] ";
  if (line.size() < kLog4jTime.size()) return false;
  for (std::size_t i = 0; i < kLog4jTime.size(); ++i) {
    const bool digit = line[i] >= '0' && line[i] <= '9';
    if (kLog4jTime[i] == 'd' ? !digit : line[i] != kLog4jTime[i]) return false;
  }
  const std::string_view level = line.substr(kLog4jTime.size());
  return level.starts_with("TRACE ") || level.starts_with("DEBUG ") || level.starts_with("INFO ") ||
         level.starts_with("WARN ") || level.starts_with("ERROR ") || level.starts_with("FATAL ");
}

// A diagnostic line (a tool's or a log line) that says the consumer failed.
bool is_consumer_error_line(std::string_view line) {
  if (line.size() >= 3 && line[0] == '%' && line[1] >= '0' && line[1] <= '3' && line[2] == '|')
    return true;  // librdkafka's syslog levels: emergency, alert, critical, error
  if (line.starts_with("% ERROR") || line.starts_with("% Fatal") || line.starts_with("% FATAL"))
    return true;
  constexpr std::size_t kLog4jLevelAt = std::string_view("[dddd-dd-dd dd:dd:dd,ddd] ").size();
  return line.starts_with('[') && line.size() > kLog4jLevelAt &&
         (line.substr(kLog4jLevelAt).starts_with("ERROR ") ||
          line.substr(kLog4jLevelAt).starts_with("FATAL "));
}

// The lines log4j writes after a log line for the exception it carries: "Caused by: ...",
// "\tat ...", "\t... 5 more", or the exception's class name, alone or before ': message' (as
// kafka-console-consumer ends on --timeout-ms: "org.apache.kafka.common.errors.TimeoutException").
bool is_exception_line(std::string_view line) {
  for (const std::string_view start :
       {"\tat ", "\t... ", "Caused by: ", "\tCaused by: ", "Suppressed: ", "\tSuppressed: "}) {
    if (line.starts_with(start)) return true;
  }
  const std::string_view name = line.substr(0, line.find_first_of(":\r\n"));
  if (name.empty() || name.find('.') == std::string_view::npos) return false;
  if (!name.ends_with("Exception") && !name.ends_with("Error") && !name.ends_with("Throwable"))
    return false;
  bool segment_start = true;
  for (const char c : name) {
    const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$';
    const bool digit = c >= '0' && c <= '9';
    if (c == '.') {
      if (segment_start) return false;
      segment_start = true;
    } else if (letter || (digit && !segment_start)) {
      segment_start = false;
    } else {
      return false;
    }
  }
  return !segment_start;
}

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

#if defined(__SSE2__)
// One bit per byte of a 64-byte block (bit i for byte i), for the bytes scan_document acts on.
struct BlockMasks {
  std::uint64_t quote, backslash, newline, open, close, space;
};

// Classifies a block, 16 bytes at a time with SSE2 (every x86-64 has it) or 32 with AVX2, which
// Framer::Kernel chooses at run time when the CPU has it (the default build targets x86-64-v2,
// which does not). Each is one whole function, compiled for its instruction set: no vector
// crosses a call between code compiled for AVX2 and code that is not (compilers refuse or warn,
// since the two pass vectors differently).
struct Sse2 {
  static std::uint64_t bits(__m128i a, __m128i b, __m128i c, __m128i d) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(a))) |
           static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(b))) << 16 |
           static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(c))) << 32 |
           static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(d))) << 48;
  }
  static BlockMasks classify(const char* p) {
    __m128i quote[4], backslash[4], newline[4], open[4], close[4], space[4];
    for (int i = 0; i < 4; ++i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      quote[i] = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
      backslash[i] = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
      newline[i] = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'));
      // '{' (0x7B) and '[' (0x5B) differ only in bit 5, as do '}' (0x7D) and ']' (0x5D).
      const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
      open[i] = _mm_cmpeq_epi8(folded, _mm_set1_epi8('{'));
      close[i] = _mm_cmpeq_epi8(folded, _mm_set1_epi8('}'));
      space[i] = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                           _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))),
                              _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')));
    }
    return {bits(quote[0], quote[1], quote[2], quote[3]),
            bits(backslash[0], backslash[1], backslash[2], backslash[3]),
            bits(newline[0], newline[1], newline[2], newline[3]),
            bits(open[0], open[1], open[2], open[3]),
            bits(close[0], close[1], close[2], close[3]),
            bits(space[0], space[1], space[2], space[3])};
  }
};

#if defined(A2K_FRAMER_AVX2)
struct Avx2 {
  [[gnu::target("avx2")]] static BlockMasks classify(const char* p) {
    BlockMasks m{};
    for (int half = 0; half < 2; ++half) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * half));
      const int shift = 32 * half;
      const auto add = [&](std::uint64_t& mask, int bits) {
        mask |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(bits)) << shift;
      };
      add(m.quote, _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'))));
      add(m.backslash, _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))));
      add(m.newline, _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\n'))));
      const __m256i folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));  // as in Sse2
      add(m.open, _mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8('{'))));
      add(m.close, _mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8('}'))));
      const __m256i space =
          _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(' ')),
                                          _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\t'))),
                          _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\r')));
      add(m.space, _mm256_movemask_epi8(space));
    }
    return m;
  }
};
#endif

// Bit i of the result is the XOR of bits 0..i of x: with x the quotes of a block, the bytes from
// an opening quote up to (not including) its closing quote.
inline std::uint64_t prefix_xor(std::uint64_t x) {
#if defined(__PCLMUL__)
  const __m128i product = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<long long>(x)),
                                               _mm_set1_epi8(static_cast<char>(0xFF)), 0);
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(product));
#else
  for (int shift = 1; shift < 64; shift *= 2) x ^= x << shift;
  return x;
#endif
}
#endif

}  // namespace

Framer::Framer(ByteSource& source, std::size_t max_record_bytes, std::string limit_source)
    : source_(source),
      max_record_bytes_(max_record_bytes),
      limit_source_(std::move(limit_source)),
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
        // The record in progress fills the buffer: grow it, but not past what a record at the
        // limit needs (the scanner starts dropping a longer one there): doubling a 256 MiB
        // buffer for the one byte past a 256 MiB limit made check hold 768 MiB at once.
        const std::size_t to_limit = max_record_bytes_ + kGrowthSlack;
        const std::size_t grown =
            capacity_ < to_limit ? std::min(capacity_ * 2, to_limit) : capacity_ * 2;
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
  const bool tool_line = ahead.starts_with("Processed a total of ") || ahead.starts_with("% ");
  const bool log_line = !tool_line && is_consumer_log_line(ahead);
  if (tool_line || log_line) {
    if (log_line) ++counted_differently_;
    in_log_event_ = ahead.starts_with('[');  // a log4j line: an exception's lines may follow
    if (is_consumer_error_line(ahead) && error_lines_++ == 0) {
      // As much of the line whatever the reads were: one byte more than is shown tells whether
      // the excerpt ends in "...".
      fill(pos_, kErrorExcerpt + 1);
      std::string_view text(buf_.get() + pos_, std::min(end_ - pos_, kErrorExcerpt + 1));
      text = text.substr(0, text.find_first_of("\r\n"));
      first_error_line_ = line_;
      first_error_text_ = printable_excerpt(text, kErrorExcerpt);
    }
    drop_line();
    return true;
  }
  // kafka-console-consumer's optional prefixes, in the order it prints them, each ending in a tab.
  static constexpr std::string_view kPrefixes[] = {"CreateTime:", "LogAppendTime:", "NO_TIMESTAMP",
                                                   "Partition:",  "Offset:",        "NO_HEADERS",
                                                   "null\t"};
  // After a timestamp, partition or offset prefix, the record's headers (print.headers:
  // "k1:v1,k2:v2", or NO_HEADERS) and its key (print.key: "null" for Atlas) may follow: two fields
  // at most, any text up to a tab on the line, unless it starts as the JSON value does.
  bool positioned = false;
  int headers_and_key = 0;
  for (bool more = true; more;) {
    more = false;
    ahead = std::string_view(buf_.get() + pos_, end_ - pos_);
    if (positioned && headers_and_key < 2 && !ahead.empty() &&
        std::string_view("{[ \t\r\n").find(ahead.front()) == std::string_view::npos &&
        std::none_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](std::string_view prefix) { return ahead.starts_with(prefix); })) {
      // Read on only while neither a tab nor a line end is buffered: a pipe from a quiet topic
      // must not hold the record back until more arrives.
      std::size_t tab;
      for (;;) {
        const std::size_t have = std::min(end_ - pos_, kHeadersLookahead);
        ahead = std::string_view(buf_.get() + pos_, have);
        tab = ahead.find_first_of("\t\n");
        // Found, as far as a field may run, or the end of the input.
        if (tab != std::string_view::npos || have == kHeadersLookahead ||
            fill(pos_, have + 1) <= have)
          break;
      }
      if (tab == std::string_view::npos || ahead[tab] != '\t') break;
      out.console_prefix.append(ahead.substr(0, tab + 1));
      pos_ += tab + 1;
      fill(pos_, kPrefixLookahead);
      ++headers_and_key;
      more = true;
      continue;
    }
    for (std::string_view prefix : kPrefixes) {
      if (!ahead.starts_with(prefix)) continue;
      // A prefix ends at its tab on the same line: one cut short by a line end is no prefix (the
      // line is then a malformed record, reported on its own line).
      const std::size_t tab =
          ahead.find_first_of("\t\n", prefix.size() - (prefix.back() == '\t' ? 1 : 0));
      if (tab == std::string_view::npos || tab > kPrefixLookahead || ahead[tab] != '\t') break;
      const std::string_view value =
          ahead.substr(prefix.size(), tab - std::min(tab, prefix.size()));
      if (prefix == "Partition:") {
        read_prefix_number("Partition", value, std::numeric_limits<std::int32_t>::max(),
                           out.console_partition);
      } else if (prefix == "Offset:") {
        // The next offset (offset + 1) must be an int64 too.
        read_prefix_number("Offset", value, std::numeric_limits<std::int64_t>::max() - 1,
                           out.console_offset);
      } else if (prefix == "CreateTime:" || prefix == "LogAppendTime:") {
        // Only a fallback for the event time: -1 (a record without one) or anything else that
        // is no time is left out rather than rejected.
        std::int64_t ms = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
        if (ec == std::errc() && end == value.data() + value.size() && ms >= 0) {
          out.console_timestamp_ms = ms;
        }
      }
      if (prefix == "NO_HEADERS" || prefix == "null\t") {
        ++headers_and_key;
      } else {
        positioned = true;
      }
      out.console_prefix.append(ahead.substr(0, tab + 1));
      pos_ += tab + 1;
      fill(pos_, kPrefixLookahead);
      more = true;
      break;
    }
  }
  key_may_follow_ = positioned && headers_and_key < 2;
  after_position_ = positioned;
  return false;
}

bool Framer::tab_and_message_follow(std::size_t& start) {
  if (end_ - pos_ < 2 && refill(start, 2) < 2) return false;
  const char after = buf_[pos_ + 1];
  return buf_[pos_] == '\t' && !is_space(after);
}

template <typename T>
void Framer::read_prefix_number(std::string_view name, std::string_view value, T high,
                                std::optional<T>& out) {
  T v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec == std::errc() && end == value.data() + value.size() && v >= 0 && v <= high) {
    out = v;
  } else if (prefix_error_.empty()) {
    prefix_error_ = fmt::format("{}: \"{}\" is not a number in 0..{}", name,
                                printable_excerpt(value, 40), high);
  }
}

std::size_t Framer::refill(std::size_t& start, std::size_t want) {
  if (over_limit_) {
    dropped_ += pos_ - start;
    fill(pos_, want);
    start = pos_;
  } else {
    const std::size_t before = pos_ - start;
    fill(start, want);
    start = pos_ - before;
  }
  return end_ - pos_;
}

void Framer::start_dropping(std::size_t start) {
  over_limit_ = true;
  size_check_ = static_cast<std::size_t>(-1);
  // The record's first bytes (as many whatever the reads were), cut where a UTF-8 character
  // starts so that the excerpt stays text.
  std::size_t n = std::min(max_record_bytes_, kExcerptBytes);
  while (n > 0 && (static_cast<unsigned char>(buf_[start + n]) & 0xC0) == 0x80) --n;
  overflow_excerpt_.assign(buf_.get() + start, n);
}

void Framer::drop_line() {
  // The whole line, however long, without holding it in memory.
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
}

bool Framer::only_blanks_to_line_end(std::string& skipped) {
  for (;;) {
    if (pos_ == end_ && fill(pos_, 1) == 0) return true;
    const char c = buf_[pos_];
    if (c != ' ' && c != '\t' && c != '\r') return c == '\n';
    skipped += c;
    ++pos_;
  }
}

void Framer::take_rest_of_line(std::size_t& start) {
  for (;;) {
    const char* nl = static_cast<const char*>(std::memchr(buf_.get() + pos_, '\n', end_ - pos_));
    pos_ = nl != nullptr ? static_cast<std::size_t>(nl - buf_.get()) : end_;
    check_size(start);
    if (nl != nullptr || refill(start, 1) == 0) return;
  }
}

void Framer::finish_record(std::size_t start, FramedRecord& out) {
  // The scanners check the limit before each step; the last step (a closing brace, a string run
  // to a raw newline) may be the one that crosses it, whatever the read sizes were.
  check_size(start);
  if (over_limit_) {
    out.size = dropped_ + (pos_ - start);
    out.text = overflow_excerpt_;
    out.error = RejectCode::kTooLarge;
    out.reason = fmt::format("record of {} bytes is longer than the {} byte limit ({})", out.size,
                             max_record_bytes_, limit_source_);
    over_limit_ = false;
    size_check_ = max_record_bytes_;
    dropped_ = 0;
    return;
  }
  out.text = std::string_view(buf_.get() + start, pos_ - start);
  out.size = out.text.size();
}

// Inlined into both scanners: it runs once per escape and per string end of every record.
[[gnu::always_inline]] inline Framer::StringStep Framer::step_in_string(std::size_t& start) {
  const char* p = find_string_special(buf_.get() + pos_, buf_.get() + end_);
  pos_ = static_cast<std::size_t>(p - buf_.get());
  if (pos_ == end_) return StringStep::kOpen;
  if (*p == '"') {
    ++pos_;
    return StringStep::kClosed;
  }
  if (*p == '\\') {
    if (end_ - pos_ < 2 && refill(start, 2) < 2) {
      pos_ = end_;  // the input ends after the backslash
      return StringStep::kOpen;
    }
    if (buf_[pos_ + 1] == '\n') {
      ++pos_;  // a backslash does not escape a newline
      return StringStep::kNewline;
    }
    pos_ += 2;
    return StringStep::kOpen;
  }
  return StringStep::kNewline;
}

#if defined(__SSE2__)
template <typename Isa>
Framer::Block Framer::scan_block(std::size_t start, std::uint64_t start_line, DocumentState& s) {
  const BlockMasks m = Isa::classify(buf_.get() + pos_);
  // Escapes and line ends take the byte-at-a-time path: the block stops before the first one.
  const std::uint64_t special = m.backslash | m.newline;
  const unsigned n = special == 0 ? 64 : static_cast<unsigned>(__builtin_ctzll(special));
  if (n == 0) return Block::kStopped;
  const std::uint64_t in_block = n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  const std::uint64_t inside = prefix_xor(m.quote) ^ (s.in_string ? ~std::uint64_t{0} : 0);
  const std::uint64_t outside = ~inside & in_block;
  const std::uint64_t open = m.open & outside;
  const std::uint64_t close = m.close & outside;
  const std::uint64_t space = m.space & outside;
  std::uint64_t depth = s.depth;
  if (static_cast<std::uint64_t>(__builtin_popcountll(close)) >= depth) {
    // The document may end in this block: follow its brackets one by one.
    for (std::uint64_t brackets = open | close; brackets != 0; brackets &= brackets - 1) {
      const unsigned i = static_cast<unsigned>(__builtin_ctzll(brackets));
      if ((open >> i & 1) != 0) {
        ++depth;
      } else if (--depth == 0) {
        const std::uint64_t through_end = i == 63 ? ~std::uint64_t{0} : (std::uint64_t{2} << i) - 1;
        s.spaced = s.spaced || (space & through_end) != 0;
        pos_ += i + 1;
        return Block::kDocumentEnd;
      }
    }
  } else {
    depth += static_cast<std::uint64_t>(__builtin_popcountll(open));
    depth -= static_cast<std::uint64_t>(__builtin_popcountll(close));
  }
  s.depth = depth;
  s.spaced = s.spaced || space != 0;
  if (line_ == start_line && !s.content_on_first_line) {
    // What the byte-at-a-time scan counts as content: anything but whitespace and closing
    // brackets, except the document's own opening brace. (A byte inside a string follows its
    // opening quote, on this line since no newline came between.)
    std::uint64_t content = ~m.space & ~m.close & in_block;
    if (pos_ == start) content &= ~std::uint64_t{1};
    s.content_on_first_line = content != 0;
  }
  s.in_string = (inside >> (n - 1) & 1) != 0;
  pos_ += n;
  return n == 64 ? Block::kWhole : Block::kStopped;
}

template <typename Isa>
Framer::Block Framer::scan_blocks(std::size_t start, std::uint64_t start_line, DocumentState& s) {
  Block block = Block::kWhole;
  while (block == Block::kWhole && whole_block_ahead(start)) {
    block = scan_block<Isa>(start, start_line, s);
  }
  return block;
}

Framer::Block Framer::scan_blocks_sse2(std::size_t start, std::uint64_t start_line,
                                       DocumentState& s) {
  return scan_blocks<Sse2>(start, start_line, s);
}

#if defined(A2K_FRAMER_AVX2)
// flatten: everything scan_blocks<Avx2> calls is inlined here, where AVX2 is allowed.
[[gnu::target("avx2"), gnu::flatten]] Framer::Block Framer::scan_blocks_avx2(
    std::size_t start, std::uint64_t start_line, DocumentState& s) {
  return scan_blocks<Avx2>(start, start_line, s);
}
#endif
#endif

bool Framer::cpu_has_avx2() {
#if defined(A2K_FRAMER_AVX2)
  // Also checks that the operating system saves the AVX registers (XGETBV).
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
#else
  return false;
#endif
}

std::string_view Framer::kernel_name(Kernel kernel) {
  static constexpr std::string_view kNames[] = {"avx2", "sse2", "bytes"};  // in Kernel's order
  return kNames[static_cast<std::size_t>(kernel)];
}

Framer::Kernel Framer::default_kernel() {
#if defined(__SSE2__)
  return cpu_has_avx2() ? Kernel::kAvx2 : Kernel::kSse2;
#else
  return Kernel::kBytes;
#endif
}

void Framer::use_kernel(Kernel kernel) {
  const Kernel best = default_kernel();
  kernel_ = static_cast<int>(kernel) < static_cast<int>(best) ? best : kernel;
}

char Framer::next_line_cannot_hold_member(std::size_t& start) {
  // Where a member name belongs: right after the object's '{' or a ',' (the bytes before the
  // newline at pos_, outside any string since a string never holds a raw newline).
  std::size_t back = pos_;
  while (back > start && is_space(buf_[back - 1])) --back;
  if (back == start || (buf_[back - 1] != '{' && buf_[back - 1] != ',')) return 0;
  // The next line's first byte other than spaces and tabs, within a few bytes.
  constexpr std::size_t kLook = 64;
  if (end_ - pos_ < kLook) refill(start, kLook);
  for (std::size_t at = pos_ + 1; at < end_ && at < pos_ + kLook; ++at) {
    const char c = buf_[at];
    if (c == ' ' || c == '\t' || c == '\r') continue;
    return c == '"' || c == '}' || c == '\n' ? 0 : c;
  }
  return 0;
}

Framer::Scan Framer::scan_document(std::size_t& start, std::string& reason, DocumentState& s) {
  const std::uint64_t start_line = line_;
  // Named as before the block scan, so that the byte-at-a-time path reads as it did.
  std::uint64_t& depth = s.depth;
  bool& in_string = s.in_string;
  bool& content_on_first_line = s.content_on_first_line;
  for (;;) {
    check_size(start);
    if (pos_ == end_ && refill(start, 1) == 0) {
      reason = in_string
                   ? "truncated JSON: unterminated string at end of input"
                   : fmt::format("truncated JSON: {} unclosed bracket(s) at end of input", depth);
      return Scan::kTruncated;
    }
#if defined(__SSE2__)
    // 64 bytes at a time while they are all here and cannot take the record over the limit.
    if (kernel_ != Kernel::kBytes && whole_block_ahead(start)) {
#if defined(A2K_FRAMER_AVX2)
      const Block block = kernel_ == Kernel::kAvx2 ? scan_blocks_avx2(start, start_line, s)
                                                   : scan_blocks_sse2(start, start_line, s);
#else
      const Block block = scan_blocks_sse2(start, start_line, s);
#endif
      if (block == Block::kDocumentEnd) {
        return Scan::kComplete;
      }
      if (block == Block::kWhole) continue;
      // Stopped at an escape or a newline, which the code below takes.
    }
#endif
    if (in_string) {
      const StringStep step = step_in_string(start);
      if (step == StringStep::kNewline) {
        reason = "truncated JSON: unterminated string at end of line";
        return Scan::kTruncated;
      }
      in_string = step == StringStep::kOpen;
      continue;  // at end of input, reported as truncated above
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
          reason = fmt::format(
              "truncated JSON: {} unclosed bracket(s) at end of line (a document that goes on "
              "over several lines must have its opening brace alone on its first line)",
              depth);
          return Scan::kTruncated;
        }
        if (depth == 1 && !over_limit_) {
          // A stray line holding '{' before records of one line each: without this, it would
          // take every record after it to the end of the input into one bad record.
          // Another '{' at any member position starts a record; any other byte only right after
          // the lone '{' (a bad line further in is the document's own error, one rejection).
          const char next = next_line_cannot_hold_member(start);
          if (next == '{' || (next != 0 && line_ == start_line)) {
            reason = fmt::format(
                "not a JSON document: its next line starts with '{}' where a member name belongs "
                "(a stray line of its own before the records that follow?)",
                printable_excerpt(std::string_view(&next, 1), 1));
            return Scan::kTruncated;
          }
        }
        ++line_;
        s.spaced = true;
        break;
      default:
        if (is_space(c)) {
          s.spaced = true;
        } else if (line_ == start_line) {
          content_on_first_line = true;
        }
        break;
    }
    ++pos_;
  }
}

void Framer::scan_array_element(std::size_t& start) {
  std::uint64_t depth = 0;
  bool in_string = false;
  for (;;) {
    check_size(start);
    if (pos_ == end_ && refill(start, 1) == 0) return;
    if (in_string) {
      const StringStep step = step_in_string(start);
      if (step == StringStep::kNewline) return;  // a raw newline ends the element
      in_string = step == StringStep::kOpen;
      continue;
    }
    const char c = buf_[pos_];
    if (c == '\n') return;
    // The element ends before the ',' or ']' after it. (A stray '}' is part of it: stopping
    // there would frame nothing, forever.)
    if (depth == 0 && (c == ',' || c == ']')) return;
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
    ++pos_;
  }
}

bool Framer::opens_array_of_records() {
  // Whitespace (line ends included: pretty-printed arrays) between '[' and the first element.
  constexpr std::size_t kMaxGap = 4096;
  for (std::size_t look = 1; look <= kMaxGap; ++look) {
    if (pos_ + look >= end_ && fill(pos_, look + 1) <= look) return true;  // the input ends
    const char c = buf_[pos_ + look];
    if (!is_space(c)) return c == '{' || c == ']' || c == ',';  // ',': out of place, in an array
  }
  return true;
}

void Framer::reject_here(FramedRecord& out, std::string_view reason) {
  reject_at(out, line_, base_offset_ + pos_, reason);
}

void Framer::reject_at(FramedRecord& out, std::uint64_t line, std::uint64_t offset,
                       std::string_view reason) {
  out.text = {};
  out.size = 0;
  out.line = line;
  out.offset = offset;
  out.index = records_++;
  out.error = RejectCode::kInvalidJson;
  out.reason = reason;
}

bool Framer::next(FramedRecord& out) {
  out.compact = false;
  out.error.reset();
  out.reason.clear();
  out.console_partition.reset();
  out.console_offset.reset();
  out.console_timestamp_ms.reset();
  out.console_prefix.clear();
  prefix_error_.clear();
  key_may_follow_ = false;
  after_position_ = false;
  if (at_source_start_) {
    at_source_start_ = false;
    if (fill(pos_, 3) >= 3 && std::memcmp(buf_.get() + pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
  }
  for (;;) {
    if (pos_ == end_ && fill(pos_, 1) == 0) {
      if (in_array_) {
        in_array_ = false;
        reject_at(out, array_line_, array_offset_,
                  "truncated JSON: the top-level array that starts here is not closed at end of "
                  "input");
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
    if (line_start_ && c == '\xEF' && !in_array_ && fill(pos_, 3) >= 3 &&
        std::memcmp(buf_.get() + pos_, "\xEF\xBB\xBF", 3) == 0) {
      pos_ += 3;  // the byte order mark of a file joined on (`cat a.jsonl b.jsonl`)
      continue;
    }
    if (line_start_ && in_log_event_) {
      fill(pos_, kPrefixLookahead);
      if (!in_array_ && is_exception_line(std::string_view(buf_.get() + pos_, end_ - pos_))) {
        ++counted_differently_;
        drop_line();
        continue;
      }
      in_log_event_ = false;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      line_start_ = false;
      ++pos_;
      continue;
    }
    if (line_start_ && !in_array_) {
      line_start_ = false;
      if (skip_prefixes_and_diagnostics(out)) continue;
      if (!out.console_prefix.empty() && only_blanks_to_line_end(out.console_prefix)) {
        // The consumer printed an empty message (or the input ends after its prefixes): a record
        // of its own, at its Kafka position, rather than lost, or read on into the next line.
        reject_here(out,
                    "no message after kafka-console-consumer's prefixes (an empty record value)");
        out.error = RejectCode::kNotJson;
        ++empty_console_records_;
        if (!prefix_error_.empty()) {
          out.console_partition.reset();
          out.console_offset.reset();
        }
        return true;
      }
      if (pos_ == end_) continue;
    }
    line_start_ = false;
    const char d = buf_[pos_];
    // A separator out of place is a record of its own, rejected where it stands; the elements
    // around it are read as usual.
    if (in_array_ && (d == ',' || d == ']')) {
      const bool misplaced = !array_resync_ && array_wants_element_ && !(d == ']' && array_opened_);
      if (misplaced && d == ',') {
        reject_here(out, "invalid JSON array: ',' where an element was expected");
      } else if (misplaced) {
        reject_at(out, comma_line_, comma_offset_,
                  "invalid JSON array: ',' before ']' (a trailing comma)");
      }
      if (d == ',') {
        comma_line_ = line_;
        comma_offset_ = base_offset_ + pos_;
      }
      in_array_ = d == ',';
      array_wants_element_ = in_array_;
      array_opened_ = false;
      array_resync_ = false;
      ++pos_;
      if (misplaced) return true;
      continue;
    }
    if (is_space(d)) continue;
    if (d == '[' && !in_array_) {
      if (opens_array_of_records()) {
        in_array_ = true;
        array_wants_element_ = true;
        array_opened_ = true;
        array_resync_ = false;
        array_line_ = line_;
        array_offset_ = base_offset_ + pos_;
        ++pos_;
        continue;
      }
      ++counted_differently_;  // framing 1 opened an array here
    }
    if (in_array_ && !array_wants_element_ && array_resync_) {
      ++counted_differently_;  // framing 1 counted a missing ',' here
    }
    if (in_array_ && !array_wants_element_ && !array_resync_) {
      array_wants_element_ = true;  // the element is read next, as the records around it are
      reject_here(out, "invalid JSON array: ',' missing between two elements");
      return true;
    }
    array_wants_element_ = false;
    array_opened_ = false;
    array_resync_ = false;
    std::size_t start = pos_;
    out.line = line_;
    out.offset = base_offset_ + pos_;
    out.index = records_++;
    if (d == '{') {
      DocumentState document;
      const Scan scan = scan_document(start, out.reason, document);
      if (key_may_follow_ && scan == Scan::kComplete && !over_limit_ &&
          tab_and_message_follow(start)) {
        // print.key's key is JSON (`CreateTime:...\tPartition:0\tOffset:5\t{"id":1}\t{...}`):
        // one more prefix, kept with the others; the message follows its tab.
        pos_ += 1;
        out.console_prefix.append(buf_.get() + start, pos_ - start);
        key_may_follow_ = false;
        --records_;
        ++json_keys_;
        continue;
      }
      key_may_follow_ = false;
      finish_record(start, out);
      if (!out.error && scan == Scan::kTruncated) out.error = RejectCode::kInvalidJson;
      // An element cut short at its line end took the ',' after it along (or never had one): the
      // next element follows without one.
      if (in_array_ && scan == Scan::kTruncated) array_resync_ = true;
      out.compact = !out.error && !document.spaced;
      if (!out.error && !prefix_error_.empty()) {
        out.error = RejectCode::kWrongType;
        out.reason = prefix_error_;
        // Half of the coordinates would name the wrong partition or offset.
        out.console_partition.reset();
        out.console_offset.reset();
      }
      return true;
    }
    if (in_array_) {
      scan_array_element(start);
    } else {
      take_rest_of_line(start);
    }
    finish_record(start, out);
    if (!out.error) {
      if (in_array_) {
        while (!out.text.empty() && is_space(out.text.back())) out.text.remove_suffix(1);
        out.size = out.text.size();
      }
      out.error = RejectCode::kNotJson;
      out.reason = fmt::format("not a JSON object: \"{}\"", printable_excerpt(out.text, 40));
      // Fields of text, each ending in a tab, then the message: a console consumer's key without
      // the prefixes it is read after, or a kcat -f format.
      const std::size_t tab = out.text.find("\t{");
      if (!in_array_ && tab != std::string_view::npos && tab < kPrefixLookahead) {
        out.reason +=
            after_position_
                ? " (fields and a tab before the message: after the console prefixes, a key or "
                  "header that starts with '[' or '{' is read as one only when it is a JSON "
                  "object)"
                : " (fields and a tab before the message: a kafka-console-consumer key is read "
                  "only after the CreateTime:, Partition: or Offset: prefix, so export with "
                  "print.timestamp=true too; or, from kcat, use -J)";
      }
    }
    return true;
  }
}

}  // namespace atlas2kudu
