#!/usr/bin/env bash
# kill -9 of `envlock install` at random moments, many more times than the suite does
# (issue 16): each trial kills a transition between two locks, checks that the prefix holds
# exactly one lock's packages with every file intact, and that the next install converges.
#
#   scripts/stress-install.sh [TRIALS] [--build DIR]      (default 200 trials, build/)
set -euo pipefail
trials=200 build=build
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=$2; shift 2 ;;
        *) trials=$1; shift ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/$build/tests/test_install"
[ -x "$bin" ] || { echo "build the tests first: cmake --build $build --target envlock test_install" >&2; exit 2; }
cd "$root"
echo "kill -9 stress: $trials trials"
ENVLOCK_KILL_TRIALS=$trials "$bin" --test-case='kill -9 at random moments*' --success=false
