#!/usr/bin/env bash
# Regenerates the golden SQL of examples/ (tests/data/golden/). Review the diff before committing:
# the golden files are the reviewed output of the compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
./build/atlas2kudu compile -q examples/*.jsonl > tests/data/golden/examples.sql
./build/atlas2kudu compile -q --key-encoding binary --tombstone hard examples/*.jsonl \
  > tests/data/golden/examples-binary-hard.sql
./build/atlas2kudu compile -q --annotate examples/*.jsonl > tests/data/golden/examples-annotated.sql
