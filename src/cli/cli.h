// The command line: parses argv, runs one subcommand, maps every error to an exit code
// (cli/exit_codes.h).
#pragma once

namespace atlas2kudu {

int run_cli(int argc, char** argv);

}  // namespace atlas2kudu
