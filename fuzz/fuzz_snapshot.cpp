// libFuzzer target: a knowledge section of FILE.window, as a resumed `apply --checkpoint` reads
// it (cli/checkpoint.h). The bytes are a snapshot (Compiler::knowledge_snapshot's form); a run
// that resumes the window an earlier run stopped in indexes them (SnapshotFile), takes them as
// what it knew before the window (Compiler::assume), and folds the window from them.
//
// Input: the snapshot's bytes. Seeds: fuzz/seeds/snapshot, snapshots a compiler wrote.
//
// What must hold for any input: no crash, no sanitizer report, and either Error(kCheckpoint) (the
// file is not ours: exit 65) or a snapshot that
//   - writes back as the same bytes, whole and an entry at a time, and finds each of its entries;
//   - leaves out exactly the entries marked dropped, with the size it announces;
//   - folds, when assumed by a compiler, a window of an update and a tag event of each entity it
//     names into statements, with no error and a props cell that is a JSON object for each, and
//     answers the window's knowledge snapshot with an entry for each of those entities, before
//     the fold and after it (each entry knowledge a fold could have made).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "atlas2kudu/compiler.h"
#include "atlas2kudu/error.h"
#include "atlas2kudu/event.h"
#include "compile/plan.h"
#include "compile/props.h"

using namespace atlas2kudu;

namespace {

// An update with one attribute and a classification event of one tag, for `guid`.
void events_of(const Guid& guid, std::int64_t n, std::vector<Event>& out) {
  Event& update = out.emplace_back();
  update.op = Operation::kEntityUpdate;
  update.guid = guid;
  update.type_name = "hive_table";
  update.attributes.push_back(Attribute{"owner", "\"fuzz\""});
  update.event_time_us = 1'000'000 + n;
  update.audit_seq = 2 * n;
  Event& tag = out.emplace_back();
  tag.op = Operation::kClassificationAdd;
  tag.guid = guid;
  tag.type_name = "hive_table";
  tag.classifications.push_back(Classification{"PII", guid, "{}"});
  tag.event_time_us = 1'000'001 + n;
  tag.audit_seq = 2 * n + 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::shared_ptr<const SnapshotFile> snapshot;
  try {
    snapshot = std::make_shared<const SnapshotFile>(bytes);
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::kCheckpoint) std::abort();
    return 0;
  }
  if (snapshot->size() != bytes.size()) std::abort();
  if (snapshot->str() != bytes) std::abort();  // write(), whole
  std::string entries;
  std::string entry;
  std::vector<bool> dropped(snapshot->entries());
  for (std::size_t i = 0; i < snapshot->entries(); ++i) {
    if (snapshot->find(snapshot->guid(i)) != i) std::abort();
    snapshot->read_entry(i, entry);
    if (entry.size() != snapshot->entry_size(i)) std::abort();
    entries += entry;
    dropped[i] = i % 2 == 1;
  }
  if (entries != bytes) std::abort();
  std::string kept;
  for (std::size_t i = 0; i < snapshot->entries(); i += 2) {
    snapshot->read_entry(i, entry);
    kept += entry;
  }
  std::string written;
  snapshot->write_without(dropped, [&](std::string_view bytes) { written += bytes; });
  if (written != kept || snapshot->size_without(dropped) != kept.size()) std::abort();

  // Folded from: the entities it names (at most 16) updated and tagged in one window.
  CompileOptions options;
  options.prior = PriorSource::kImpala;
  Compiler compiler(options);
  compiler.assume(snapshot);
  std::vector<Event> window;
  const std::size_t named = std::min<std::size_t>(snapshot->entries(), 16);
  for (std::size_t i = 0; i < named; ++i) events_of(snapshot->guid(i), i, window);
  if (!compiler.unknown_entities(window).empty()) std::abort();  // all of them are known
  const SnapshotFile before(compiler.knowledge_snapshot(window));
  if (before.entries() != named) std::abort();
  NetWindow net = compiler.fold(window);
  // Each merged cell is a JSON object, as the reader gives it: the props an entry holds were
  // checked against their text when it was indexed (parse_props reads any depth a run stores).
  for (const FlatRow& row : net.flat) {
    if ((row.mask & FlatRow::kPropsJson) && !parse_props(row.props_json)) std::abort();
  }
  const CompiledWindow statements = plan_window(net, options);
  if (named > 0 && statements.upserts.empty()) std::abort();
  // What the fold leaves is knowledge a fold could have made (is_foldable, checked as it is
  // indexed): the snapshot of the next window would be taken by a resumed run.
  const SnapshotFile after(compiler.knowledge_snapshot(window));
  if (after.entries() != named) std::abort();
  return 0;
}
