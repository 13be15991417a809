// libFuzzer target: the whole reader on one input file, as `compile` and `check` read it. The bytes
// go into a memory file opened by path, so the real file source runs too (gzip detection, members,
// a stream cut short); every record then goes through the framer, the envelope and kcat levels,
// Base64 and gzip, split reassembly and the V1/V2 payloads.
//
// What must hold for any input: no crash, no sanitizer report, no exception but SourceError
// (a bad gzip file) out of the reader, and once the input is read to its end, every record is
// an event, a joined split chunk or a rejection. The input is read a second time as `check`
// reads it (Reader::validation_only: no audit seq, no attribute values): the same records must be
// accepted, and the same rejected for the same reasons.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "memory_file.h"
#include "test_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const atlas2kudu::fuzzing::MemoryFile file(
      std::string_view(reinterpret_cast<const char*>(data), size));
  // tests/input/test_support: the same reading (and limits) as the regression test of the
  // inputs found, tests/data/fuzz.
  const std::string failure = atlas2kudu::testing::read_as_fuzzer(file.path());
  if (!failure.empty()) {
    std::fprintf(stderr, "fuzz_reader: %s\n", failure.c_str());
    std::abort();
  }
  return 0;
}
