// atlas2kudu: process-wide settings, then the command line.
#include <csignal>

#include "cli/cli.h"
#include "hs2/transport.h"
#include "util/stop.h"

// jemalloc's settings, read when it starts.
//
// Freed pages go back to the kernel after 2 s unused instead of jemalloc's 10 s. A window frees
// what the next one mostly reuses, so the pages it keeps save faults; but with a small
// --memory-budget many windows pass in 10 s, and what they left unreused made the peak exceed the
// budget: `compile --memory-budget 64M` of 300 MB peaked at 86 MiB, 128M at 110 MiB. With 2 s: 61
// and 100 MiB, and 183 MiB instead of 191 at the default 256M, for the same CPU time.
//
// One arena for every thread (each keeps its own cache of small blocks): with an arena per thread,
// the memory the read-ahead's thread frees (a window's events) could not serve the folding
// thread's rows and statements, nor the other way round, and compile's peak RSS rose from 198 to
// 221 MiB at 4 GiB (201 to 206 MiB at 1 GiB); with one, it is 195-198 MiB at 4 GiB and 193-201 MiB
// at 1 GiB. The price is some contention on the arena: about
// 5% more CPU and elapsed time for the read-ahead (bench/RESULTS.md, issue 10 part eight), paid
// to keep --memory-budget's promise.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "narenas:1,dirty_decay_ms:2000";
}

int main(int argc, char** argv) {
  // A reader or server that went away must give EPIPE (an error we report), not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  // Thrift prints socket errors itself; the HS2 layer reports each failure once, classified.
  atlas2kudu::quiet_thrift_logging();
  // SIGINT/SIGTERM stop the run cleanly (util/stop.h); a second one ends it at once.
  atlas2kudu::install_stop_signals();
  return atlas2kudu::run_cli(argc, argv);
}
