#!/usr/bin/env bash
# Configures (once) and builds atlas2kudu in ./build. Extra arguments go to `meson setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  meson setup build "$@" >/dev/null
fi
ninja -C build >/dev/null
echo "build: ok ($(pwd)/build/atlas2kudu)" >&2
