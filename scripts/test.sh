#!/usr/bin/env bash
# Sets up, builds and runs every test, two builds:
#   1. the release build (./build, GCC): the whole meson suite;
#   2. a sanitizer build (./build-san, clang, AddressSanitizer + UndefinedBehaviorSanitizer, -O1
#      with line tables only, with simdjson's development checks, which assert that every
#      On-Demand value is read once and in order, and with the libFuzzer targets, -Dfuzz=true):
#      a. the whole meson suite again, the 10,000-stream equivalence case cut to
#         ATLAS2KUDU_EQUIVALENCE_STREAMS=1500 (the full run takes four minutes under the sanitizers)
#         and the framer's 3,000 rounds of block scans to ATLAS2KUDU_FRAMER_ROUNDS=600 (the full
#         run took 412 s of its 600 s timeout);
#      b. each target in fuzz/ for FUZZ_SECONDS (default 50) from its seeds; a crash, sanitizer
#         report, leak or timeout fails it.
#   One clang build serves both: it compiles in about half the time GCC takes with the
#   sanitizers, and a second one for the fuzz targets alone cost another four minutes of CI.
# The last line is "N passed, M failed", where N and M count test cases over all of them (each
# doctest TEST_CASE; each non-doctest meson test and each fuzz target counts as one). The exit
# status is non-zero if any stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh || exit 1
./scripts/build.sh || exit 1

status=0
FUZZ_SECONDS=${FUZZ_SECONDS:-50}
# UBSan reports and goes on by default; here a report fails the test it happens in.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
# Leaks inside MIT Kerberos's libraries are theirs (tests/lsan.supp says which and why).
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"

rm -f build/meson-logs/testlog.json build-san/meson-logs/testlog.json
echo "test: release build" >&2
meson test -C build --print-errorlogs --no-rebuild --num-processes 2 || status=1

echo "test: ASan + UBSan build (build-san, clang)" >&2
fuzz_targets=(fuzz_reader fuzz_props fuzz_literal fuzz_snapshot fuzz_checkpoint)
fuzz_results=build-san/fuzz-results.txt
if [ ! -f build-san/build.ninja ]; then
  CXX=clang++ meson setup build-san -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=plain -Dcpp_args="['-O1', '-gline-tables-only', '-DSIMDJSON_DEVELOPMENT_CHECKS=1']" \
    >/dev/null || status=1
fi
mkdir -p build-san
: >"$fuzz_results"
if ninja -C build-san >/dev/null; then
  ATLAS2KUDU_EQUIVALENCE_STREAMS=1500 ATLAS2KUDU_FRAMER_ROUNDS=600 \
    meson test -C build-san --print-errorlogs --no-rebuild --num-processes 2 || status=1

  echo "test: libFuzzer targets, ${FUZZ_SECONDS} s each (build-san)" >&2
  for target in "${fuzz_targets[@]}"; do
    case $target in
      fuzz_reader) seeds=(tests/data/notifications tests/data/scenarios tests/data/fuzz examples) ;;
      fuzz_props) seeds=(fuzz/seeds/props tests/data/scenarios) ;;
      fuzz_literal) seeds=(fuzz/seeds/literal tests/data/scenarios) ;;
      fuzz_snapshot) seeds=(fuzz/seeds/snapshot) ;;
      fuzz_checkpoint) seeds=(fuzz/seeds/checkpoint) ;;
    esac
    corpus=build-san/corpus/$target
    mkdir -p "$corpus"
    # New inputs go to the corpus in the build dir; crash files to build-san/ (with the log).
    if (cd build-san && "./fuzz/$target" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 \
          -timeout=10 -print_final_stats=1 -artifact_prefix="$target-" "corpus/$target" \
          "${seeds[@]/#/../}") >"build-san/$target.log" 2>&1; then
      echo "$target OK" >>"$fuzz_results"
      echo "fuzz: $target: $(grep -m1 'number_of_executed_units' "build-san/$target.log")" >&2
    else
      echo "$target FAIL" >>"$fuzz_results"
      echo "fuzz: $target FAILED; see build-san/$target.log and build-san/$target-*" >&2
      grep -E "^(==[0-9]+==ERROR|SUMMARY)" "build-san/$target.log" >&2
      status=1
    fi
  done
else
  echo "test: the sanitizer build failed" >&2
  for target in "${fuzz_targets[@]}"; do echo "$target FAIL" >>"$fuzz_results"; done
  status=1
fi

python3 - build/meson-logs/testlog.json build-san/meson-logs/testlog.json \
  "$fuzz_results" <<'PY'
import json, os, re, sys
passed = failed = 0
for path in sys.argv[1:3]:
    if not os.path.exists(path):
        failed += 1  # the stage did not run at all
        continue
    for line in open(path):
        t = json.loads(line)
        m = re.findall(r"\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed",
                       t.get("stdout", ""))
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
for line in open(sys.argv[3]):
    name, result = line.split()
    if result == "OK":
        passed += 1
    else:
        failed += 1
print(f"{passed} passed, {failed} failed")
PY
exit $status
