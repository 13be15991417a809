// Reader throughput next to simdjson's own parse rate, on the same bytes, in one run.
//
//   build/bench/read_bench FILE [REPEATS] [--only simdjson|reader|steps]
//
// Reports, for each of REPEATS rounds (best kept):
//   simdjson-ondemand : parser.iterate_many over the file in memory, visiting every value of every
//                       document (what "parsing the export" costs with simdjson alone);
//   atlas2kudu-reader : our Reader over the same bytes from memory (framing, envelopes, payload
//                       decoding, Event construction), no I/O;
// and the ratio reader / simdjson. `--only` runs one of the two (bench/run takes the simdjson
// rate as its yardstick).
//
// `--only steps` splits the gap between the two into steps, each a reading of the same bytes:
//   simdjson-ondemand       the yardstick, as above;
//   simdjson-per-line       one parser.iterate per line (the lines cut beforehand, not timed),
//                           every value visited: what reading one record at a time costs, since
//                           a record is the unit that is accepted or rejected;
//   simdjson-per-line-copy  the same, every string and number also copied into a std::string of
//                           its own, as an Event's fields are;
//   simdjson-dom-per-line   the DOM API instead (a tape of the whole document, then walked);
//   reader-check            our Reader as `check` reads (Reader::validation_only);
//   reader-compile          our Reader as `compile` reads;
//   framer-avx2, -sse2, -bytes  the framer alone (cutting the input into records, the first
//                           step of both), with each of its scans (input/framer.h, Kernel).
#include <fmt/core.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/reader.h"
#include "input/byte_source.h"
#include "input/framer.h"

namespace od = simdjson::ondemand;

namespace {

// Visits every value of `v`, counting them; with `copies`, also keeps a copy of every member
// name, string and number, as building an Event's fields does.
std::size_t visit(od::value v, std::vector<std::string>* copies = nullptr) {
  const auto keep = [copies](std::string_view text) {
    if (copies) copies->emplace_back(text);
    return text.size() > 0;
  };
  std::size_t n = 1;
  switch (v.type()) {
    case od::json_type::object:
      for (auto field : v.get_object()) {
        n += keep(field.unescaped_key());
        n += visit(field.value(), copies);
      }
      break;
    case od::json_type::array:
      for (auto item : v.get_array()) n += visit(item.value(), copies);
      break;
    case od::json_type::string:
      n += keep(v.get_string());
      break;
    case od::json_type::number:
      n += keep(v.raw_json_token());
      break;
    case od::json_type::boolean:
      n += v.get_bool().value();
      break;
    case od::json_type::null:
      n += v.is_null();
      break;
  }
  return n;
}

std::size_t visit_dom(simdjson::dom::element e) {
  std::size_t n = 1;
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT:
      for (auto field : simdjson::dom::object(e)) {
        n += field.key.size() > 0;
        n += visit_dom(field.value);
      }
      break;
    case simdjson::dom::element_type::ARRAY:
      for (auto item : simdjson::dom::array(e)) n += visit_dom(item);
      break;
    case simdjson::dom::element_type::STRING:
      n += std::string_view(e).size() > 0;
      break;
    default:
      break;
  }
  return n;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The best of `repeats` timings of `read`, in seconds.
template <typename Read>
double best_of(int repeats, Read read) {
  double best = 1e100;
  for (int round = 0; round < repeats; ++round) {
    const auto t = std::chrono::steady_clock::now();
    read();
    best = std::min(best, seconds_since(t));
  }
  return best;
}

// The best of `repeats` timings of `read(source)`, each given a fresh memory source holding
// `data` (the copy into it is not timed).
template <typename Read>
double best_from_memory(const simdjson::padded_string& data, int repeats, Read read) {
  double best = 1e100;
  for (int round = 0; round < repeats; ++round) {
    auto source = atlas2kudu::memory_byte_source("bench", std::string(data.data(), data.size()));
    const auto copied = std::chrono::steady_clock::now();
    read(std::move(source));
    best = std::min(best, seconds_since(copied));
  }
  return best;
}

// Events our Reader reads from `data` in memory.
double time_reader(const simdjson::padded_string& data, int repeats, bool validation_only,
                   std::size_t& events) {
  return best_from_memory(data, repeats, [&](std::unique_ptr<atlas2kudu::ByteSource> source) {
    atlas2kudu::RejectSink rejects(atlas2kudu::RejectPolicy{1u << 30, ""}, nullptr);
    std::vector<std::unique_ptr<atlas2kudu::ByteSource>> sources;
    sources.push_back(std::move(source));
    atlas2kudu::Reader reader(std::move(sources), rejects);
    if (validation_only) reader.validation_only();
    events = 0;
    for (atlas2kudu::Event e; reader.next(e);) ++events;
  });
}

// Records the framer alone cuts from `data` in memory, scanning with `kernel`.
double time_framer(const simdjson::padded_string& data, int repeats,
                   atlas2kudu::Framer::Kernel kernel, std::size_t& records) {
  return best_from_memory(data, repeats, [&](std::unique_ptr<atlas2kudu::ByteSource> source) {
    atlas2kudu::Framer framer(*source);
    framer.use_kernel(kernel);
    records = 0;
    for (atlas2kudu::FramedRecord r; framer.next(r);) records += !r.error;
  });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 4 && std::string_view(argv[3]) == "--only" ? argv[4] : "";
  if (argc < 2 || (argc > 3 && only.empty()) ||
      (!only.empty() && only != "simdjson" && only != "reader" && only != "steps")) {
    fmt::print(stderr, "usage: read_bench FILE [REPEATS] [--only simdjson|reader|steps]\n");
    return 64;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  const bool steps = only == "steps";
  const bool run_simdjson = only != "reader", run_reader = only != "simdjson";
  simdjson::padded_string data;
  if (simdjson::padded_string::load(argv[1]).get(data) != simdjson::SUCCESS) {
    fmt::print(stderr, "cannot read {}\n", argv[1]);
    return 66;
  }
  const double mb = data.size() / 1e6;
  std::size_t docs = 0, values = 0, events = 0;
  double simdjson_s = 0, reader_s = 0;
  if (run_simdjson) {
    simdjson_s = best_of(repeats, [&] {
      od::parser parser;
      od::document_stream stream;
      if (parser.iterate_many(data, std::size_t{4} << 20).get(stream) != simdjson::SUCCESS) {
        throw std::runtime_error("iterate_many failed");
      }
      docs = values = 0;
      for (auto doc : stream) {
        values += visit(doc.get_value().value());
        ++docs;
      }
    });
  }
  // The reader as compile reads it, or with --only steps as check does (compile's comes below).
  const bool read_as_check = steps;
  if (run_reader) reader_s = time_reader(data, repeats, read_as_check, events);
  fmt::print("input              {:.1f} MB, {} documents, {} events\n", mb, docs, events);
  if (run_simdjson) {
    fmt::print("simdjson-ondemand  {:8.1f} MB/s  (every value visited, {} values)\n",
               mb / simdjson_s, values);
  }
  if (!steps) {
    if (run_reader) fmt::print("atlas2kudu-reader  {:8.1f} MB/s\n", mb / reader_s);
    if (run_simdjson && run_reader) {
      fmt::print("ratio reader/simdjson  {:.2f}\n", simdjson_s / reader_s);
    }
    return 0;
  }

  // Lines, each with the padding simdjson needs after it (the next line's bytes, or the file's).
  std::vector<std::string_view> lines;
  for (std::string_view rest(data.data(), data.size()); !rest.empty();) {
    const std::size_t end = std::min(rest.find('\n'), rest.size());
    if (end > 0) lines.push_back(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  const auto per_line = [&](auto read_line) {
    return best_of(repeats, [&] {
      od::parser parser;
      std::size_t n = 0;
      for (std::string_view line : lines) {
        od::document doc =
            parser.iterate(line.data(), line.size(), line.size() + simdjson::SIMDJSON_PADDING);
        n += read_line(doc.get_value().value());
      }
      if (n < lines.size()) throw std::runtime_error("fewer values than lines");
    });
  };
  const double per_line_s = per_line([](od::value root) { return visit(root); });
  std::vector<std::string> copies;
  const double copy_s = per_line([&](od::value root) {
    copies.clear();
    return visit(root, &copies);
  });
  const double dom_s = best_of(repeats, [&] {
    simdjson::dom::parser parser;
    for (std::string_view line : lines) {
      if (visit_dom(parser.parse(line.data(), line.size(), false).value()) == 0) {
        throw std::runtime_error("nothing parsed");
      }
    }
  });
  std::size_t compile_events = 0;
  const double compile_s = time_reader(data, repeats, /*validation_only=*/false, compile_events);
  const auto row = [&](std::string_view name, double seconds) {
    fmt::print("{:<24}{:8.1f} MB/s  {:.2f} of the yardstick\n", name, mb / seconds,
               simdjson_s / seconds);
  };
  row("simdjson-per-line", per_line_s);
  row("simdjson-per-line-copy", copy_s);
  row("simdjson-dom-per-line", dom_s);
  row("reader-check", reader_s);
  row("reader-compile", compile_s);
  if (compile_events != events) {
    fmt::print(stderr, "check read {} events, compile {}\n", events, compile_events);
    return 1;
  }
  // The framer alone (the first step of both readers), with each of its scans.
  using Kernel = atlas2kudu::Framer::Kernel;
  const bool avx2 = atlas2kudu::Framer::cpu_has_avx2();
  for (const auto& [name, kernel] :
       {std::pair{"framer-avx2", Kernel::kAvx2}, std::pair{"framer-sse2", Kernel::kSse2},
        std::pair{"framer-bytes", Kernel::kBytes}}) {
    if (kernel == Kernel::kAvx2 && !avx2) {
      fmt::print("{:<24}(this CPU has no AVX2)\n", name);
      continue;
    }
    std::size_t records = 0;
    const double framer_s = time_framer(data, repeats, kernel, records);
    row(name, framer_s);
    if (records != docs) {
      fmt::print(stderr, "{} framed {} records, simdjson read {} documents\n", name, records, docs);
      return 1;
    }
  }
  return 0;
}
