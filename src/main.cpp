// atlas2kudu: process-wide settings, then the command line.
#include <csignal>

#include "cli/cli.h"
#include "hs2/transport.h"
#include "util/stop.h"

int main(int argc, char** argv) {
  // A reader or server that went away must give EPIPE (an error we report), not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  // Thrift prints socket errors itself; the HS2 layer reports each failure once, classified.
  atlas2kudu::quiet_thrift_logging();
  // SIGINT/SIGTERM stop the run cleanly (util/stop.h); a second one ends it at once.
  atlas2kudu::install_stop_signals();
  return atlas2kudu::run_cli(argc, argv);
}
