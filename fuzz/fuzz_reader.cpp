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
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
  if (fd < 0) std::abort();
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  // tests/input/test_support: the same reading (and limits) as the regression test of the
  // inputs found, tests/data/fuzz.
  const std::string failure =
      atlas2kudu::testing::read_as_fuzzer("/proc/self/fd/" + std::to_string(fd));
  if (!failure.empty()) {
    std::fprintf(stderr, "fuzz_reader: %s\n", failure.c_str());
    std::abort();
  }
  ::close(fd);
  return 0;
}
