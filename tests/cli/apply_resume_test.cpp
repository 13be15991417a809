// apply's resumability, end to end in process: a run killed at every statement position of a
// small stream, then rerun with its checkpoint, ends with the same tables as an uninterrupted
// run, and those equal the sequential reference projector. Uses the real reader (JSON input),
// compiler with --prior impala, HS2 executor and test server with the kit's Kudu store.
#include <doctest/doctest.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/reader.h"
#include "cli/checkpoint.h"
#include "cli/pipeline.h"
#include "compile/sql_writer.h"
#include "hs2/executor.h"
#include "hs2/prior_state.h"
#include "hs2_test_server.h"
#include "hs2_test_util.h"
#include "input/byte_source.h"
#include "kit_handler.h"
#include "reference_projector.h"
#include "test_support.h"

TEST_SUITE_BEGIN("apply_resume");

using namespace atlas2kudu;
using namespace atlas2kudu::testing;

namespace {

// One entity notification, one line: `stream` (one digit) keeps each stream's times apart,
// `second` orders the events within it; `extra` is appended to the entity object.
std::string notification(char stream, const std::string& guid, const std::string& op,
                         const std::string& type, const std::string& attributes,
                         const std::string& extra, int second) {
  const std::string time = std::string("1700000") + stream + std::to_string(10 + second) + "000";
  return R"({"version":{"version":"1.0.0","versionParts":[1]},"msgCompressionKind":"NONE",)"
         R"("msgSplitIdx":1,"msgSplitCount":1,"msgCreationTime":)" +
         time +
         R"(,"message":{"type":"ENTITY_NOTIFICATION_V2",)"
         R"("entity":{"typeName":")" +
         type + R"(","attributes":{)" + attributes + R"(},"guid":")" + guid + "\"" + extra +
         R"(},"operationType":")" + op + R"(","eventTime":)" + time + "}}\n";
}

// An entity whose type changes in a later window by an event without its qualifiedName: its
// entity_by_qn row is re-keyed under the new type with the qualifiedName the store holds. Five
// other entities between the two events put them in different windows.
std::string retype() {
  const auto event = [](const std::string& guid, const std::string& op, const std::string& type,
                        const std::string& attributes, int second) {
    return notification('0', guid, op, type, attributes, "", second);
  };
  std::string out = event("11111111-1111-4111-8111-111111111111", "ENTITY_CREATE", "DataSet",
                          R"("qualifiedName":"db.x@c","name":"x")", 0);
  for (int i = 1; i <= 5; ++i) {
    out += event("2222222" + std::to_string(i) + "-2222-4222-8222-222222222222", "ENTITY_CREATE",
                 "DataSet", R"("qualifiedName":"db.f)" + std::to_string(i) + R"(@c")", i);
  }
  out += event("11111111-1111-4111-8111-111111111111", "ENTITY_UPDATE", "hive_table",
               R"("owner":"etl")", 6);
  return out;
}

// Two entities contending for one entity_by_qn key in one window: Y takes (hive_table, db.cN@c) by
// an update, then X, stored as (DataSet, db.cN@c), becomes a hive_table by a classification event
// without its qualifiedName and takes the key back. Their entity_flat rows have different column
// sets, so they are in different statements: a run stopped between those must not fold the
// window again from X's new entity_flat row (it would see no type change and leave the key to
// Y). Two such pairs, one event apart, so that one pair is in one window however the windows of
// four fall.
std::string contest() {
  const auto entity = [](int n, char who) {
    return std::string(1, who) + std::to_string(n) + "333333-3333-4333-8333-333333333333";
  };
  const auto event = [](const std::string& guid, const std::string& op, const std::string& type,
                        const std::string& attributes, const std::string& extra, int second) {
    return notification('1', guid, op, type, attributes, extra, second);
  };
  std::string out;
  int second = 0;
  for (int n = 1; n <= 2; ++n) {
    const std::string c = "\"db.c" + std::to_string(n) + "@c\"";
    out +=
        event(entity(n, 'a'), "ENTITY_CREATE", "DataSet", R"("qualifiedName":)" + c, "", second++);
    out += event(entity(n, 'b'), "ENTITY_CREATE", "hive_table",
                 R"("qualifiedName":"db.o)" + std::to_string(n) + R"(@c")", "", second++);
  }
  for (int i = 1; i <= 5; ++i) {
    out +=
        event("4444444" + std::to_string(i) + "-4444-4444-8444-444444444444", "ENTITY_CREATE",
              "DataSet", R"("qualifiedName":"db.g)" + std::to_string(i) + R"(@c")", "", second++);
  }
  for (int n = 1; n <= 2; ++n) {
    const std::string c = "\"db.c" + std::to_string(n) + "@c\"";
    out += event(entity(n, 'b'), "ENTITY_UPDATE", "hive_table", R"("qualifiedName":)" + c, "",
                 second++);
    out +=
        event(entity(n, 'a'), "CLASSIFICATION_ADD", "hive_table", "",
              R"(,"classifications":[{"typeName":"PII","entityGuid":")" + entity(n, 'a') + R"("}])",
              second++);
    if (n == 1) {
      out += event("45555555-4444-4444-8444-444444444444", "ENTITY_CREATE", "DataSet",
                   R"("qualifiedName":"db.h@c")", "", second++);
    }
  }
  return out;
}

// A --max-record-bytes that every record of the inputs fits in but one (soft_delete_then_retype).
constexpr std::size_t kSmallRecordLimit = 2000;

// A soft delete writes only entity_flat's state: a window that soft-deletes X, lets Y take the key
// (hive_table, db.d1@c), then makes X a hive_table without its qualifiedName (X takes the key
// back). A run stopped after X's entity_flat row of the last event was written leaves the type
// column at hive_table; a rerun that folded the delete in a shorter window of its own, and read X
// again from the tables for the rest, saw no type change and left the key to Y (a review found
// it). First among the inputs, so that a killed run's second window is the one of four events
// that holds all three.

std::string soft_delete_then_retype() {
  const auto event = [](const std::string& guid, const std::string& op, const std::string& type,
                        const std::string& attributes, const std::string& extra, int second) {
    return notification('2', guid, op, type, attributes, extra, second);
  };
  const std::string x = "a1555555-5555-4555-8555-555555555555";
  const std::string y = "b1555555-5555-4555-8555-555555555555";
  const auto filler = [&](int i, int second) {
    return event("4666666" + std::to_string(i) + "-4666-4666-8666-666666666666", "ENTITY_CREATE",
                 "DataSet", R"("qualifiedName":"db.s)" + std::to_string(i) + R"(@c")", "", second);
  };
  int second = 0;
  std::string out =
      event(x, "ENTITY_CREATE", "DataSet", R"("qualifiedName":"db.d1@c")", "", second++);
  out += event(y, "ENTITY_CREATE", "hive_table", R"("qualifiedName":"db.p1@c")", "", second++);
  out += filler(1, second++);
  out += filler(2, second++);
  // A filler, then the same message again with spaces that take it past kSmallRecordLimit: the
  // killed runs reject it, their reruns do not (a redelivered message changes nothing). A
  // killed run's window is then f3, X's delete, Y's update and X's type change; its rerun's
  // fourth event is Y's update, and only reading on to the end of that window covers X's.
  const std::string f3 = filler(3, second++);
  out += f3;
  out += "{" + std::string(kSmallRecordLimit, ' ') + f3.substr(1);
  out += event(x, "ENTITY_DELETE", "DataSet", "", "", second++);
  out += event(y, "ENTITY_UPDATE", "hive_table", R"("qualifiedName":"db.d1@c")", "", second++);
  out += event(x, "CLASSIFICATION_ADD", "hive_table", "",
               R"(,"classifications":[{"typeName":"PII","entityGuid":")" + x + R"("}])", second++);
  return out;
}

// The stream above, four scenario files and the two streams before it as seven inputs: renames,
// tag sets shrinking, edges, deletes.
std::vector<std::pair<std::string, std::string>> inputs() {
  const std::string dir = std::string(ATLAS2KUDU_TEST_DATA) + "/scenarios/";
  return {{"retype-deleted.jsonl", soft_delete_then_retype()},
          {"s01.jsonl", slurp(dir + "01-partial-update-and-rename.jsonl")},
          {"s04.jsonl", slurp(dir + "04-soft-delete-cascades-edges-keeps-tags.jsonl")},
          {"s06.jsonl", slurp(dir + "06-tag-set-shrinks-to-empty.jsonl")},
          {"s02.jsonl", slurp(dir + "02-qualified-name-trade.jsonl")},
          {"retype.jsonl", retype()},
          {"contest.jsonl", contest()}};
}

std::vector<std::unique_ptr<ByteSource>> open_inputs() {
  std::vector<std::unique_ptr<ByteSource>> out;
  for (const auto& [name, text] : inputs()) out.push_back(memory_byte_source(name, text, 211));
  return out;
}

CompileOptions options() {
  CompileOptions o;
  o.prior = PriorSource::kImpala;
  o.evicted = EvictedKnowledge::kLookUpAgain;  // as apply --prior impala sets it
  o.window_events = 4;
  o.batch_rows = 3;
  return o;
}

struct RunResult {
  bool completed = false;
  std::string error;
  std::uint64_t statements = 0;
  std::uint64_t rejected = 0;  // records
};

// A rerun with a smaller --memory-budget and shorter windows than the run it resumes: every entry
// is evicted after every window (and looked up again in the tables), and the failed window's
// entities are folded over several windows.
CompileOptions tight_options() {
  CompileOptions o = options();
  o.window_events = 1;
  o.knowledge_budget = 1;
  return o;
}

// One `apply --prior impala --checkpoint FILE --reject-file FILE.rejects` over the inputs against
// `port`. `limits`: the killed runs reject a record their reruns accept (kSmallRecordLimit).
RunResult apply_once(int port, const std::string& checkpoint_path,
                     const CompileOptions& o = options(), const ReaderLimits& limits = {}) {
  RunResult result;
  Hs2Options hs2 = test_options(port);
  hs2.max_retries = 0;  // a lost reply ends the run, as a killed process would
  hs2.connect_max_tries = 1;
  RejectPolicy policy;
  policy.max_rejects = 10;
  policy.reject_file = checkpoint_path + ".rejects";
  policy.append = true;
  RejectSink rejects(policy, nullptr);
  Reader reader(open_inputs(), rejects, limits);
  CheckpointFile checkpoint(checkpoint_path, reader);
  const Hs2Settings settings = validate_hs2_options(hs2);
  Hs2PriorState prior(settings, hs2_session_factory(settings, nullptr), o);
  Compiler compiler(o);
  Hs2Executor executor(settings, hs2_session_factory(settings, nullptr));
  SqlWindowWriter writer(o, executor);
  try {
    checkpoint.assume_window_knowledge(compiler);
    run_pipeline(
        reader, compiler, prior, writer, nullptr,
        [&](const WindowInfo& w, const Reader* r) {
          if (r) checkpoint.window_applied(w, *r);
        },
        nullptr, false,
        [&](const KnowledgeSnapshot& knowledge, std::span<const Event> window) {
          checkpoint.window_starting(knowledge, window, reader);
        },
        [&](const Reader& r, std::span<const Event> window) {  // as apply does
          return checkpoint.first_window_may_close(r, window);
        });
    checkpoint.run_completed(reader);
    result.completed = true;
  } catch (const Hs2Error& e) {
    result.error = e.what();
  }
  result.statements = writer.stats().statements;
  result.rejected = reader.stats().rejected;
  return result;
}

std::uint64_t count_lines(const std::string& path) {
  const std::string text = slurp(path);
  return static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
}

testkit::KuduStore snapshot(const KitHandler& kit) {
  std::optional<testkit::KuduStore> out;
  kit.with_store([&](const testkit::KuduStore& s) { out.emplace(s); });
  return std::move(*out);
}

}  // namespace

TEST_CASE("apply killed at every statement position, then resumed, equals an uninterrupted run") {
  const auto dir = scratch_dir("resume");
  // The uninterrupted run, checked against the sequential reference projector.
  auto kit = std::make_shared<KitHandler>(KeyEncoding::kHex);
  Hs2TestServer server({}, kit);
  const int port = server.start();
  const std::string clean_checkpoint = (dir / "clean.ckpt").string();
  const RunResult clean = apply_once(port, clean_checkpoint);
  REQUIRE(clean.completed);
  const testkit::KuduStore expected = snapshot(*kit);
  // Server-side statement count of the clean run: DML plus the prior-state SELECTs.
  const int total = server.stats().statements;
  {
    RejectSink rejects(RejectPolicy{}, nullptr);
    Reader reader(open_inputs(), rejects);
    std::vector<Event> events;
    for (Event e; reader.next(e);) events.push_back(std::move(e));
    const testkit::KuduStore projected =
        testkit::project(events, options(), testkit::KuduStore(KeyEncoding::kHex));
    const auto diff = testkit::compare_stores(projected, expected);
    CHECK_MESSAGE(!diff, diff.value_or(""));
  }
  // A rerun with the finished checkpoint sends nothing.
  const RunResult again = apply_once(port, clean_checkpoint);
  CHECK(again.completed);
  CHECK(again.statements == 0);
  CHECK(server.stats().statements == total);

  REQUIRE(total > 10);
  int resumed = 0;
  for (int n = 1; n <= total; ++n) {
    for (int variant = 0; variant < 4; ++variant) {
      // Named copies, not structured bindings: doctest's CAPTURE takes them in a lambda.
      const bool after_run = variant % 2 == 1;
      const bool tight_rerun = variant >= 2;
      CAPTURE(n);
      CAPTURE(after_run);
      CAPTURE(tight_rerun);
      FaultPlan faults;
      (after_run ? faults.drop_after_run_at : faults.drop_at).insert(n);
      auto killed_kit = std::make_shared<KitHandler>(KeyEncoding::kHex);
      Hs2TestServerConfig cfg;
      cfg.faults = faults;
      Hs2TestServer killed_server(cfg, killed_kit);
      const int killed_port = killed_server.start();
      const std::string path =
          (dir / fmt::format("run-{}{}{}", n, after_run ? "a" : "b", tight_rerun ? "t" : ""))
              .string();
      ReaderLimits small;
      small.max_record_bytes = kSmallRecordLimit;
      const RunResult first = apply_once(killed_port, path, options(), small);
      // The killed runs reject one record more, and so run fewer statements than `total`: the
      // last positions are never reached, and such a run completes.
      if (first.completed) {
        CHECK(n > total - 10);
        continue;
      }
      const RunResult second =
          apply_once(killed_port, path, tight_rerun ? tight_options() : options());
      REQUIRE(second.completed);
      // The killed run's line for the padded record, if it read that far, stays, once: its rerun
      // skips the record as applied or, reading it within its own limits, accepts it.
      CHECK(second.rejected == 0);
      CHECK(count_lines(path + ".rejects") == first.rejected);
      const auto diff = testkit::compare_stores(expected, snapshot(*killed_kit));
      CHECK_MESSAGE(!diff, diff.value_or(""));
      ++resumed;
    }
  }
  MESSAGE(resumed << " killed runs resumed over " << total << " statement positions");
}

TEST_SUITE_END();
