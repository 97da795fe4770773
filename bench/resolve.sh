#!/usr/bin/env bash
# Wall time of `envlock resolve BEVFormer` from a warm cache, against the demo mirror on
# file:// (so the network does not count): one cold run, then N warm runs; prints the median.
# Usage: bash bench/resolve.sh [N]   (after `bash scripts/setup.sh`)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
out=$(mktemp -d /tmp/envlock-bench-resolve-XXXXXX)
trap 'rm -rf "$out"' EXIT
shared=()
[ -d ../shared/facts ] && shared=(--shared ../shared)
./build/envlock-mirror build "$out/mirror" "${shared[@]}" >/dev/null
m="file://$out/mirror"
args=(resolve BEVFormer -o "$out/lock/envlock.yaml" --gpu "RTX 3090" --driver 470.82.01 --cache-dir "$out/cache"
      --mirror "https://conda.anaconda.org=$m/conda" --mirror "https://pypi.org/simple=$m/pypi/simple"
      --mirror "https://pypi.org/pypi/packages=$m/pypi/packages" --mirror "https://download.pytorch.org/whl=$m/whl"
      --mirror "https://download.openmmlab.com/mmcv=$m/mmcv"
      --mirror "https://github.com/open-mmlab/mmdetection3d=$out/mirror/git/mmdetection3d")
./build/envlock "${args[@]}" >/dev/null 2>&1
times=()
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  ./build/envlock "${args[@]}" >/dev/null 2>&1
  times+=($(( ($(date +%s%N) - start) / 1000000 )))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
echo "envlock resolve BEVFormer, warm cache, $runs runs: median ${sorted[$((runs / 2))]} ms (min ${sorted[0]}, max ${sorted[$((runs - 1))]})"
