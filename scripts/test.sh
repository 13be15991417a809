#!/usr/bin/env bash
# Sets up, builds and runs every test. The last line is "N passed, M failed", where N and M count
# test cases (each doctest TEST_CASE; each non-doctest meson test counts as one).
set -uo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh || exit 1
./scripts/build.sh || exit 1

meson test -C build --print-errorlogs --no-rebuild --num-processes 2
meson_status=$?

python3 - build/meson-logs/testlog.json <<'PY'
import json, re, sys
passed = failed = 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    m = re.findall(r"\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed", t.get("stdout", ""))
    if m:
        _, p, f = map(int, m[-1])
        passed += p
        failed += f
        if t["result"] != "OK" and f == 0:
            failed += 1  # crashed or timed out after its last summary
    elif t["result"] in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif t["result"] != "SKIP":
        failed += 1
print(f"{passed} passed, {failed} failed")
PY
exit $meson_status
