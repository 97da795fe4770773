#!/usr/bin/env bash
# Runs one libFuzzer target, or all of them, for SECONDS each:
#   scripts/fuzz.sh TARGET[,TARGET…] SECONDS     scripts/fuzz.sh all SECONDS     scripts/fuzz.sh list
# Configures and builds build-fuzz (clang-14, -DENVLOCK_FUZZ=ON: ASan + UBSan + libFuzzer)
# incrementally, seeds build-fuzz/corpus/TARGET from the tests' inputs and the real snapshots
# in ../shared (read in place), runs with -max_total_time, and prints exec/s and coverage from
# libFuzzer's final stats (also appended to build-fuzz/fuzz-results.tsv). Exits non-zero when
# a target crashes or a sanitizer reports; the input is saved in build-fuzz/crashes/TARGET/.
# Reproduce one: build-fuzz/fuzz/fuzz_TARGET build-fuzz/crashes/TARGET/crash-…
# FUZZ_JOBS=N runs N targets at once (default 1: one after another).
# FUZZ_SEED=N fixes libFuzzer's random seed (scripts/test.sh uses 1, so a CI finding replays).
# FUZZ_OPT=-O0|-O1|-O2 sets the fuzz build's optimization (default -O1).
# FUZZ_REPORT_ONLY=1 reports crashes and exits 0 (scripts/test.sh: see why there).
# FUZZ_NO_BUILD=1 skips the build step (another build is running in build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
SHARED=${ENVLOCK_SHARED_DIR:-$ROOT/../shared}
SNAP=$SHARED/snapshots
TARGETS="pep440 pep508 conda_version matchspec filenames repodata pypi_json pypi_html page_records requirements_txt
  infer_docs setup_py lock target extract"

usage() { echo "usage: scripts/fuzz.sh TARGET[,TARGET...]|all|list SECONDS   (targets: $(echo $TARGETS))" >&2; exit 2; }
[ $# -ge 1 ] || usage
if [ "$1" = list ]; then echo $TARGETS; exit 0; fi
[ $# -eq 2 ] && [[ $2 =~ ^[0-9]+$ ]] || usage
if [ "$1" = all ]; then RUN=$TARGETS; else
  RUN=""
  for t in ${1//,/ }; do
    case " $(echo $TARGETS) " in *" $t "*) RUN="$RUN $t" ;; *) echo "fuzz.sh: unknown target '$t'" >&2; usage ;; esac
  done
fi
SECONDS_EACH=$2

export CCACHE_BASEDIR=${CCACHE_BASEDIR:-/work} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
# FUZZ_OPT=-O0 builds in about half the time of the default -O1 (scripts/test.sh's brief runs).
if [ ! -f "$BUILD/build.ninja" ] || [ -n "${FUZZ_OPT:-}" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DENVLOCK_FUZZ=ON \
    ${FUZZ_OPT:+-DENVLOCK_FUZZ_OPT=$FUZZ_OPT} >/dev/null
fi
# FUZZ_NO_BUILD=1: run what is built (while another build runs in build-fuzz, say).
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  cmake --build "$BUILD" -j"$(nproc)" --target fuzz_seeds $(for t in $RUN; do echo fuzz_$t; done)
fi

# Inputs beyond this length are cut: small for the one-line grammars, larger for documents.
max_len() {
  case $1 in
    pep440|pep508|conda_version|matchspec|filenames) echo 1024 ;;
    requirements_txt|infer_docs|setup_py|lock|target) echo 16384 ;;
    *) echo 65536 ;;
  esac
}
# Snapshot folders small enough to fuzz from whole, passed in place (read-only corpora).
in_place() {
  case $1 in
    repodata) echo "$SNAP/mamba-tests-conda-forge-numpy" ;;
    pypi_html) echo "$SNAP/poetry-fixture-openmmlab-mmcv-index $SNAP/pytorch-torch_stable-html-2021-03" ;;
  esac
}

RESULTS=$BUILD/fuzz-results.tsv
[ -f "$RESULTS" ] || printf 'date\ttarget\tseconds\texecs\texec_per_s\tcov\tft\tcorpus\tpeak_rss_mb\tresult\n' >"$RESULTS"
JOBS=${FUZZ_JOBS:-1}
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: FUZZ_JOBS must be a positive number, not '$JOBS'" >&2; exit 2; }
SEED_ARG=""
if [ -n "${FUZZ_SEED:-}" ]; then SEED_ARG="-seed=$FUZZ_SEED"; fi

# Seeds first, one target after another: lock, target, page_records and extract share fuzz_seeds' output.
for t in $RUN; do
  seeds=$BUILD/seeds/$t
  rm -rf "$seeds"
  python3 scripts/fuzz_seed.py "$t" "$seeds" "$SHARED"
  case $t in lock|target|page_records|extract)
    if [ -x "$BUILD/fuzz/fuzz_seeds" ]; then "$BUILD/fuzz/fuzz_seeds" "$BUILD/seeds/generated" && cp "$BUILD/seeds/generated/$t/"* "$seeds/"; fi ;;
  esac
done

# One target: its summary goes to $BUILD/logs/TARGET.summary, its exit status says crash or not.
run_one() {
  local t=$1
  local corpus=$BUILD/corpus/$t seeds=$BUILD/seeds/$t crashes=$BUILD/crashes/$t log=$BUILD/logs/$t.log
  local summary=$BUILD/logs/$t.summary
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  local dirs="$corpus $seeds" d
  for d in $(in_place "$t"); do [ -d "$d" ] && dirs="$dirs $d"; done
  {
    echo "== fuzz_$t: ${SECONDS_EACH}s, corpus $corpus (+ $(ls "$seeds" | wc -l) seeds)"
    local rc=0
    # halt_on_error: a UBSan report is a crash too; detect_leaks: a leak is a finding.
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$BUILD/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -max_len="$(max_len "$t")" -timeout=30 $SEED_ARG \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" $dirs >"$log" 2>&1 || rc=$?
    stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
    local last cov ft corp execs rate rss result=ok
    last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last") ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")
    execs=$(stat number_of_executed_units) rate=$(stat average_exec_per_sec) rss=$(stat peak_rss_mb)
    if [ $rc -ne 0 ]; then
      result="crash (exit $rc)"
      grep -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|round-trip property|terminate called|what\(\)' "$log" | head -5 || true
      echo "   input saved: $(grep -o 'Test unit written to .*' "$log" | tail -1 | sed 's/Test unit written to //')"
      echo "   log: $log"
    fi
    echo "   fuzz_$t: ${SECONDS_EACH}s, ${execs:-?} execs, ${rate:-?} exec/s, cov: ${cov:-?}, ft: ${ft:-?}, corpus: ${corp:-?}, peak rss ${rss:-?} MB: $result"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$SECONDS_EACH" "${execs:-}" "${rate:-}" \
      "${cov:-}" "${ft:-}" "${corp:-}" "${rss:-}" "$result" >>"$RESULTS"
    return $rc
  } >"$summary"
}

failed=""
declare -A running=()
finish_one() {  # waits for any running target, prints its summary, notes a crash
  local pid rc=0
  wait -n -p pid || rc=$?
  cat "$BUILD/logs/${running[$pid]}.summary"
  [ $rc -eq 0 ] || failed="$failed ${running[$pid]}"
  unset "running[$pid]"
}
for t in $RUN; do
  if [ ! -x "$BUILD/fuzz/fuzz_$t" ]; then echo "fuzz.sh: $BUILD/fuzz/fuzz_$t is not built" >&2; exit 1; fi
  while [ ${#running[@]} -ge "$JOBS" ]; do finish_one; done
  run_one "$t" &
  running[$!]=$t
done
while [ ${#running[@]} -gt 0 ]; do finish_one; done
if [ -n "$failed" ]; then
  if [ -n "${FUZZ_REPORT_ONLY:-}" ]; then
    echo "fuzz.sh: crashed:$failed (reported, not failing: FUZZ_REPORT_ONLY; inputs in $BUILD/crashes/)" >&2
    exit 0
  fi
  echo "fuzz.sh: crashed:$failed" >&2
  exit 1
fi
