// The impala-shell-style connection flags of `compile` and `apply`, registered on a CLI11 command.
#pragma once

#include <string_view>

#include "hs2/options.h"

namespace CLI {
class App;
}

namespace atlas2kudu {

// Registers -i, --protocol, --ssl, -l, -u, ... on `app`, writing into `options`.
void add_hs2_options(CLI::App* app, Hs2Options* options);

// The --help group those options are listed under.
inline constexpr std::string_view kHs2OptionsGroup = "HS2 connection";

}  // namespace atlas2kudu
