#!/usr/bin/env bash
# Sets up, builds and compiles examples/ into SQL (the README's first command, as one script).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
./build/atlas2kudu compile examples/*.jsonl
