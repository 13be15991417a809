// atlas2kudu: process-wide settings, then the command line.
#include <fcntl.h>
#include <jemalloc/jemalloc.h>
#include <unistd.h>

#include <csignal>

#include "cli/cli.h"
#include "hs2/transport.h"
#include "util/resident_memory.h"
#include "util/stop.h"
#include "util/stringify.h"

// jemalloc's settings, read when it starts.
//
// Freed pages are kept for reuse (dirty_decay_ms:-1) instead of going back to the kernel after
// jemalloc's 10 s: a window frees what the next one mostly allocates again, and faulting it in
// again cost a third of compile's CPU time on a virtual machine (util/resident_memory.h). What
// keeps the peak under --memory-budget is the pipeline: it calls release_unused_pages below once
// resident memory passes the budget's ceiling. (Returning pages after 2 s unused, the setting
// before, held `compile --memory-budget 64M` of 300 MB at 61 MiB; 10 s let it reach 86 MiB.)
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
const char* malloc_conf = "narenas:1,dirty_decay_ms:-1";
}

namespace {

// Every arena's unused pages back to the kernel, at once.
void release_unused_pages() {
  mallctl("arena." ATLAS2KUDU_STRINGIFY(MALLCTL_ARENAS_ALL) ".purge", nullptr, nullptr, nullptr, 0);
}

// Standard input, output or error closed by whoever started the program (`check <&-`, `2>&-`):
// the next descriptor the program opens would take that number, so that reading stdin read the
// program's own stop pipe (`check <&-` waited on itself for ever), or messages went into a spill
// file. Each closed one is held by /dev/null opened the wrong way round, so that using it fails as
// using a closed descriptor does: reading stdin or writing the SQL fails with EBADF (exit 74), and
// messages are dropped.
void hold_closed_standard_descriptors() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1) continue;
    const int held = ::open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
    if (held >= 0 && held != fd) {
      ::dup2(held, fd);
      ::close(held);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Off until a command's --memory-budget says they pay (util/resident_memory.h).
  atlas2kudu::defer_transparent_huge_pages();
  hold_closed_standard_descriptors();
  // A reader or server that went away must give EPIPE (an error we report), not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  // A file past `ulimit -f` must give EFBIG, reported as the failed write it is (exit 74, with the
  // summary, --stats and the temporary files removed), not kill the process without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  // Thrift prints socket errors itself; the HS2 layer reports each failure once, classified.
  atlas2kudu::quiet_thrift_logging();
  // SIGINT/SIGTERM stop the run cleanly (util/stop.h); a second one ends it at once.
  atlas2kudu::install_stop_signals();
  atlas2kudu::set_unused_memory_release(&release_unused_pages);
  return atlas2kudu::run_cli(argc, argv);
}
