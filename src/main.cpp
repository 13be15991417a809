// atlas2kudu: process-wide settings, then the command line.
#include <malloc.h>

#include <csignal>

#include "cli/cli.h"
#include "hs2/transport.h"

int main(int argc, char** argv) {
  // A reader or server that went away must give EPIPE (an error we report), not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  // Thrift prints socket errors itself; the HS2 layer reports each failure once, classified.
  atlas2kudu::quiet_thrift_logging();
  // Each window allocates and frees the same large blocks (rows, statements): keep freed memory
  // for the next window rather than give it back to the kernel and fault it in again (a tenth of
  // compile's time otherwise; bench/RESULTS.md). The peak, which --memory-budget bounds, is the
  // same either way.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  return atlas2kudu::run_cli(argc, argv);
}
