// run_pipeline with the read-ahead (a second thread reads the window while this one folds it)
// against run_pipeline on one thread: the same SQL byte for byte, the same windows handed over
// with the reader at the same place, and the same way of stopping on a bad record, a stop request
// or a failing writer.
#include "cli/pipeline.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/error.h"
#include "atlas2kudu/prior_state.h"
#include "atlas2kudu/reader.h"
#include "compile/print_executor.h"
#include "compile/sql_writer.h"
#include "input/byte_source.h"
#include "stream_generator.h"
#include "util/resident_memory.h"
#include "util/stop.h"

TEST_SUITE_BEGIN("pipeline");

using namespace atlas2kudu;

namespace {

// A generated export of `events` events, with every hard case of the stream generator.
std::string export_text(std::uint64_t seed, std::size_t events) {
  testkit::GeneratorConfig config;
  config.length = events;
  config.guids = 40;
  config.big_values = true;
  return testkit::write_export(testkit::generate_stream(seed, config), seed);
}

struct Applied {
  WindowInfo info;
  std::optional<InputProgress> progress;  // none after a part of a window (WindowParts)
};

struct Outcome {
  std::string sql;
  PipelineStats stats;
  std::vector<Applied> applied;
  std::optional<std::string> error;  // what() of the exception that ended the run
  bool stopped = false;              // ... a StopError
};

// One run over `text` (read in pieces of 97 bytes), on one thread or with the read-ahead.
// `on_window` (if any) runs after each window handed over; it may throw, or request a stop.
Outcome run(const std::string& text, const CompileOptions& options, bool read_ahead,
            const std::function<void(std::uint64_t)>& on_window) {
  Outcome out;
  std::vector<std::unique_ptr<ByteSource>> sources;
  sources.push_back(memory_byte_source("export.jsonl", text, 97));
  RejectSink rejects(RejectPolicy{}, nullptr);
  Reader reader(std::move(sources), rejects);
  Compiler compiler(options);
  NoPriorState prior;
  PrintExecutor printer(&out.sql);
  SqlWindowWriter writer(options, printer);
  REQUIRE(read_ahead_possible(compiler, prior));
  try {
    run_pipeline(
        reader, compiler, prior, writer, nullptr,
        [&](const WindowInfo& info, const Reader* r) {
          out.applied.push_back(Applied{info, r ? std::optional(r->progress()) : std::nullopt});
          if (on_window) on_window(info.index);
        },
        &out.stats, read_ahead);
  } catch (const StopError& e) {
    out.error = e.what();
    out.stopped = true;
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  reset_stop();
  return out;
}

void check_same(const Outcome& one_thread, const Outcome& read_ahead) {
  CHECK(read_ahead.sql == one_thread.sql);
  CHECK(read_ahead.stats.windows == one_thread.stats.windows);
  CHECK(read_ahead.stats.closed_early == one_thread.stats.closed_early);
  CHECK(read_ahead.error == one_thread.error);
  CHECK(read_ahead.stopped == one_thread.stopped);
  REQUIRE(read_ahead.applied.size() == one_thread.applied.size());
  for (std::size_t i = 0; i < one_thread.applied.size(); ++i) {
    CAPTURE(i);
    CHECK(read_ahead.applied[i].info.index == one_thread.applied[i].info.index);
    CHECK(read_ahead.applied[i].info.first_event == one_thread.applied[i].info.first_event);
    CHECK(read_ahead.applied[i].info.last_event == one_thread.applied[i].info.last_event);
    CHECK(read_ahead.applied[i].info.comment == one_thread.applied[i].info.comment);
    // The reader is where the window ended, not ahead of it: what a checkpoint saves.
    CHECK(read_ahead.applied[i].progress == one_thread.applied[i].progress);
  }
}

CompileOptions windows_of(std::size_t events) {
  CompileOptions options;
  options.window_events = events;
  return options;
}

// Runs both ways, checks that they agree, and returns the one-thread outcome.
Outcome run_both(const std::string& text, const CompileOptions& options,
                 const std::function<void(std::uint64_t)>& on_window = nullptr) {
  const Outcome one = run(text, options, false, on_window);
  const Outcome two = run(text, options, true, on_window);
  check_same(one, two);
  return one;
}

}  // namespace

TEST_CASE("the read-ahead writes the same SQL and hands over the same windows as one thread") {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const std::string text = export_text(seed, 900);
    for (const std::size_t window_events : {std::size_t{1}, std::size_t{7}, std::size_t{64},
                                            std::size_t{65}, std::size_t{300}, std::size_t{5000}}) {
      CAPTURE(window_events);
      CompileOptions options;
      options.window_events = window_events;
      options.batch_rows = 50;
      const Outcome one = run_both(text, options);
      CHECK_FALSE(one.error);
      CHECK(one.stats.windows == (900 + window_events - 1) / window_events);
    }
  }
}

TEST_CASE("the read-ahead closes windows early on the memory budget where one thread does") {
  const std::string text = export_text(4, 1500);
  CompileOptions options;
  options.window_events = 400;
  options.window_budget = 600 * 1024;    // a few hundred typical events
  options.knowledge_budget = 64 * 1024;  // and knowledge spilled between windows
  const Outcome one = run_both(text, options);
  CHECK_FALSE(one.error);
  CHECK(one.stats.closed_early > 0);
}

// Entities with a 20 KB cell, then small updates of them: windows the fold splits in parts
// (WindowParts), which WindowCutter alone would not.
std::string large_cells_then_updates(int entities, int updates) {
  std::string text;
  const std::string big(20000, 'b');
  const auto line = [&](const char* op, int entity, const std::string& attributes, int time) {
    text += fmt::format(
        R"({{"version":{{"version":"1.0.0"}},"msgCreationTime":1700000000000,"message":{{)"
        R"("type":"ENTITY_NOTIFICATION_V2","operationType":"{}","eventTime":{},"entity":{{)"
        R"("typeName":"hive_table","guid":"{:08x}-0000-4000-8000-{:012x}","attributes":{{{}}}}}}}}})"
        "\n",
        op, time, entity, entity, attributes, time);
  };
  for (int n = 0; n < entities; ++n) {
    line("ENTITY_CREATE", n, fmt::format(R"("qualifiedName":"q{}","big":"{}")", n, big), n + 1);
  }
  for (int u = 0; u < updates; ++u) {
    line("ENTITY_UPDATE", u % entities, fmt::format(R"("owner":"o{}")", u), entities + u + 1);
  }
  return text;
}

TEST_CASE("the read-ahead folds a window in the parts one thread does, the reader past them") {
  CompileOptions options;
  options.window_events = 400;
  options.window_budget = 1 << 20;
  const Outcome one = run_both(large_cells_then_updates(30, 300), options);
  CHECK_FALSE(one.error);
  CHECK(one.stats.closed_early > one.stats.windows / 2);
  // Parts are handed over without the reader (it is further on: no checkpoint may record them);
  // the last part of each window with it.
  std::size_t parts = 0;
  for (const Applied& a : one.applied) {
    if (!a.progress) {
      ++parts;
      CHECK(a.info.comment.ends_with(kClosedEarlyComment));
    }
  }
  CHECK(parts > 0);
  REQUIRE_FALSE(one.applied.empty());
  CHECK(one.applied.back().progress);
}

TEST_CASE("a bad record stops a window folded in parts before any part is written") {
  const std::string clean = large_cells_then_updates(30, 300);
  CompileOptions options;
  options.window_events = 400;
  options.window_budget = 1 << 20;
  const Outcome good = run_both(clean, options);
  // What was handed over before the last window, which has parts.
  std::size_t before_last = 0;
  for (std::size_t i = 0; i + 1 < good.applied.size(); ++i) {
    if (good.applied[i].progress) before_last = i + 1;
  }
  REQUIRE(good.applied.size() > before_last + 1);

  const Outcome bad = run_both(clean + "{not json\n", options);
  REQUIRE(bad.error);
  CHECK(bad.error->find("export.jsonl:331") != std::string::npos);
  // The windows before the one with the bad record were written, none of its parts.
  CHECK(bad.applied.size() == before_last);
  REQUIRE_FALSE(bad.applied.empty());
  CHECK(bad.applied.back().progress);
}

TEST_CASE("a bad record stops the read-ahead before its window is written, as on one thread") {
  std::string text = export_text(5, 300);
  // Record 150 of 300 becomes invalid JSON: window 3 of 50-event windows holds it.
  std::size_t at = 0;
  for (int line = 0; line < 149; ++line) at = text.find('\n', at) + 1;
  text.insert(at, "{not json\n");
  const Outcome one = run_both(text, windows_of(50));
  REQUIRE(one.error);
  CHECK(one.error->find("export.jsonl:150") != std::string::npos);
  CHECK(one.stats.windows == 2);
}

TEST_CASE("a stop request ends the read-ahead after the windows handed over, as on one thread") {
  const std::string text = export_text(6, 400);
  const Outcome one = run_both(text, windows_of(60), [](std::uint64_t window) {
    if (window == 2) request_stop(StopReason::kTerminate);
  });
  CHECK(one.stopped);
  CHECK(one.stats.windows == 2);
  // Named by the window it came in (the same both ways: check_same compares the messages).
  CHECK(one.error ==
        std::optional<std::string>("reading window 3 (from event 121): stopped by SIGTERM"));
}

TEST_CASE("an error after a window ends the read-ahead at once, its reading thread joined") {
  const std::string text = export_text(7, 400);
  const Outcome one = run_both(text, windows_of(30), [](std::uint64_t window) {
    if (window == 1) throw Error(ErrorCategory::kIo, "the output went away");
  });
  CHECK(one.error == std::optional<std::string>("the output went away"));
  CHECK(one.stats.windows == 1);
}

namespace {

// What the resident-memory check saw at each release it made (util/resident_memory.h).
struct ReleaseSeen {
  std::uint64_t events_read = 0;
  std::size_t windows_written = 0;
};
const Reader* g_reader = nullptr;
std::size_t g_windows_written = 0;
std::vector<ReleaseSeen> g_releases;
void record_release() {
  g_releases.push_back(ReleaseSeen{g_reader->stats().events, g_windows_written});
}

}  // namespace

TEST_CASE("unused pages also go back while a window is folded, not only while it is read") {
  // One window of 2,048 events on one thread: read whole, then folded, then written. A ceiling
  // of one byte makes every check release.
  constexpr std::size_t kEvents = 8 * kResidentCheckInterval;
  std::vector<std::unique_ptr<ByteSource>> sources;
  sources.push_back(memory_byte_source("export.jsonl", export_text(8, kEvents), 4096));
  RejectSink rejects(RejectPolicy{}, nullptr);
  Reader reader(std::move(sources), rejects);
  const CompileOptions options = windows_of(kEvents + 1);
  Compiler compiler(options);
  NoPriorState prior;
  std::string sql;
  PrintExecutor printer(&sql);
  SqlWindowWriter writer(options, printer);
  g_reader = &reader;
  g_windows_written = 0;
  g_releases.clear();
  set_unused_memory_release(&record_release);
  set_resident_memory_ceiling(1);
  run_pipeline(
      reader, compiler, prior, writer, nullptr,
      [](const WindowInfo&, const Reader*) { ++g_windows_written; }, nullptr, false);
  set_unused_memory_release(nullptr);
  set_resident_memory_ceiling(0);
  g_reader = nullptr;

  REQUIRE(g_windows_written == 1);
  CHECK(reader.stats().events == kEvents);
  std::size_t while_read = 0;
  std::size_t after_read = 0;  // and before the window was written
  for (const ReleaseSeen& r : g_releases) {
    if (r.windows_written == 0) ++(r.events_read < kEvents ? while_read : after_read);
  }
  // A check every kResidentCheckInterval events read, and as many while they are folded: without
  // those, two would follow the reading (the last event read's, and the one right before the
  // statements are built).
  CHECK(while_read >= 7);
  CHECK(after_read >= 8);
}

TEST_CASE("the read-ahead is not used when the prior state is asked or windows are too large") {
  CompileOptions options;
  NoPriorState none;
  CHECK(read_ahead_possible(Compiler(options), none));
  options.window_events = kMaxReadAheadWindow + 1;
  CHECK_FALSE(read_ahead_possible(Compiler(options), none));
  // A prior state that is asked about each window's entities: the fold needs the whole window.
  struct Asked : PriorState {
    void lookup(std::span<const Guid>, std::vector<PriorEntity>&) override {}
    std::string describe() const override { return "asked"; }
  } asked;
  options.window_events = 100;
  CHECK_FALSE(read_ahead_possible(Compiler(options), asked));
}

TEST_SUITE_END();
