#include "atlas2kudu/cli.h"

#include <fmt/core.h>

namespace atlas2kudu {

int run_cli(int, char**) {
  fmt::print(stderr, "atlas2kudu: not yet wired\n");
  return kExitInternal;
}

}  // namespace atlas2kudu
