// libFuzzer target: the --checkpoint file, as every `apply --checkpoint` run reads it before it
// applies anything (load_checkpoint, cli/checkpoint.h). The file is ours, but a run at 3 a.m.
// may find it cut short by a full disk, edited by hand, or replaced by an input given where the
// value of --checkpoint was expected.
//
// Input: the file's bytes. Seeds: fuzz/seeds/checkpoint (formats 1 and 3, Kafka offsets).
//
// What must hold for any input: no crash, no sanitizer report, and either Error(kCheckpoint)
// (exit 65: the message names the file) or a checkpoint that writes (checkpoint_json) as text
// that reads back as the same checkpoint, written the same again.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "atlas2kudu/error.h"
#include "cli/checkpoint.h"
#include "memory_file.h"

using namespace atlas2kudu;
using fuzzing::MemoryFile;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const MemoryFile file(std::string_view(reinterpret_cast<const char*>(data), size));
  Checkpoint loaded;
  try {
    loaded = load_checkpoint(file.path());
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::kCheckpoint) std::abort();
    if (std::string_view(e.what()).find(file.path()) == std::string_view::npos) std::abort();
    return 0;
  }
  if (!loaded.found) std::abort();
  const std::string text = checkpoint_json(loaded);
  const MemoryFile written(text);
  Checkpoint again;
  try {
    again = load_checkpoint(written.path());
  } catch (const Error&) {
    std::abort();  // what a run writes, the next one must read
  }
  if (checkpoint_json(again) != text || again.windows_applied != loaded.windows_applied ||
      again.events_applied != loaded.events_applied || again.runs != loaded.runs ||
      !(again.target == loaded.target) || again.last_run != loaded.last_run) {
    std::abort();
  }
  return 0;
}
