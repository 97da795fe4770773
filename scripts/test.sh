#!/usr/bin/env bash
# Quick start (b): set up, build, run the whole test suite through ctest, then each fuzz target briefly.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The suite runs with a TMPDIR of its own, which must be empty afterwards: a test that leaves
# files behind fails the job (leaked scratch folders once filled a CI runner's disk).
scratch="$(mktemp -d "${TMPDIR:-/tmp}/envlock-ctest-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
(cd build && TMPDIR="$scratch" ctest --output-on-failure -j"$(nproc)")
if [ -n "$(ls -A "$scratch")" ]; then
  echo "the tests left files in their TMPDIR ($scratch):" >&2
  ls -A "$scratch" | head -20 >&2
  exit 1
fi
# Then every libFuzzer target briefly (issue 20): 15 s each, as many at once as there are cores,
# libFuzzer's seed fixed so that a finding replays (scripts/fuzz.sh prints the input's path);
# built at -O0, which compiles in half the time and is fast enough for 15 s. A build or harness
# failure fails the job; a crash the random search finds is reported with its input, not
# failed on: it is rarely caused by the change under test, and every fixed finding is pinned
# by a doctest case in the suite above, which does fail.
FUZZ_REPORT_ONLY=1 FUZZ_OPT=-O0 FUZZ_JOBS="$(nproc)" FUZZ_SEED=1 bash scripts/fuzz.sh all 15
