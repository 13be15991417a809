// Reader throughput next to simdjson's own parse rate, on the same bytes, in one run.
//
//   build/bench/read_bench FILE [REPEATS] [--only simdjson|reader]
//
// Reports, for each of REPEATS rounds (best kept):
//   simdjson-ondemand : parser.iterate_many over the file in memory, visiting every value of every
//                       document (what "parsing the export" costs with simdjson alone);
//   atlas2kudu-reader : our Reader over the same bytes from memory (framing, envelopes, payload
//                       decoding, Event construction), no I/O;
// and the ratio reader / simdjson. `--only` runs one of the two (bench/run takes the simdjson
// rate as its yardstick).
#include <fmt/core.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "atlas2kudu/reader.h"
#include "input/byte_source.h"

namespace od = simdjson::ondemand;

namespace {

std::size_t visit(od::value v) {
  std::size_t n = 1;
  switch (v.type()) {
    case od::json_type::object:
      for (auto field : v.get_object()) {
        std::string_view key = field.unescaped_key();
        n += key.size() > 0;
        n += visit(field.value());
      }
      break;
    case od::json_type::array:
      for (auto item : v.get_array()) n += visit(item.value());
      break;
    case od::json_type::string:
      n += v.get_string().value().size() > 0;
      break;
    case od::json_type::number:
      n += v.raw_json_token().size() > 0;
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

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 4 && std::string_view(argv[3]) == "--only" ? argv[4] : "";
  if (argc < 2 || (argc > 3 && only.empty()) ||
      (!only.empty() && only != "simdjson" && only != "reader")) {
    fmt::print(stderr, "usage: read_bench FILE [REPEATS] [--only simdjson|reader]\n");
    return 64;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  const bool run_simdjson = only != "reader", run_reader = only != "simdjson";
  simdjson::padded_string data;
  if (simdjson::padded_string::load(argv[1]).get(data) != simdjson::SUCCESS) {
    fmt::print(stderr, "cannot read {}\n", argv[1]);
    return 66;
  }
  const double mb = data.size() / 1e6;
  double best_simdjson = 1e100, best_reader = 1e100;
  std::size_t docs = 0, values = 0, events = 0;
  for (int round = 0; round < repeats; ++round) {
    if (run_simdjson) {
      const auto t = std::chrono::steady_clock::now();
      od::parser parser;
      od::document_stream stream;
      if (parser.iterate_many(data, std::size_t{4} << 20).get(stream) != simdjson::SUCCESS)
        return 1;
      docs = values = 0;
      for (auto doc : stream) {
        od::value root;
        if (doc.get_value().get(root) != simdjson::SUCCESS) return 1;
        values += visit(root);
        ++docs;
      }
      best_simdjson = std::min(best_simdjson, seconds_since(t));
    }
    if (run_reader) {
      atlas2kudu::RejectSink rejects(atlas2kudu::RejectPolicy{1u << 30, ""}, nullptr);
      std::vector<std::unique_ptr<atlas2kudu::ByteSource>> sources;
      sources.push_back(
          atlas2kudu::memory_byte_source("bench", std::string(data.data(), data.size())));
      const auto copied = std::chrono::steady_clock::now();
      atlas2kudu::Reader reader(std::move(sources), rejects);
      events = 0;
      for (atlas2kudu::Event e; reader.next(e);) ++events;
      best_reader = std::min(best_reader, seconds_since(copied));
    }
  }
  fmt::print("input              {:.1f} MB, {} documents, {} events\n", mb, docs, events);
  if (run_simdjson) {
    fmt::print("simdjson-ondemand  {:8.1f} MB/s  (every value visited, {} values)\n",
               mb / best_simdjson, values);
  }
  if (run_reader) fmt::print("atlas2kudu-reader  {:8.1f} MB/s\n", mb / best_reader);
  if (run_simdjson && run_reader) {
    fmt::print("ratio reader/simdjson  {:.2f}\n", best_simdjson / best_reader);
  }
  return 0;
}
