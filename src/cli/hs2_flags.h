// The impala-shell-style connection flags of `compile` and `apply`, registered on a CLI11 command.
#pragma once

#include "hs2/options.h"

namespace CLI {
class App;
}

namespace atlas2kudu {

// Registers -i, --protocol, --ssl, -l, -u, ... on `app`, writing into `options`.
void add_hs2_options(CLI::App* app, Hs2Options* options);

}  // namespace atlas2kudu
