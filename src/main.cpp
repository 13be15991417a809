#include "cli/cli.h"

int main(int argc, char** argv) {
  return atlas2kudu::run_cli(argc, argv);
}
