#!/usr/bin/env bash
# Quick start (a): set up, build, and run the whole job on one paper, offline, against the DEMO
# MIRROR that envlock-mirror generates (no PyPI or conda server is reachable from a build machine):
# resolve BEVFormer for an RTX 3090 with driver 470.82, install the lock into a prefix, verify it
# (toolchain checks and a CUDA probe compiled for the GPU's sm), run an import inside the env, and
# show why the same paper cannot run on an H100. The mirror's packages are stand-ins (real archives
# and metadata, no real code; each says so), so verify skips what they cannot show and says why;
# the probe is compiled for real with a CUDA toolkit of this machine when one is here.
# One setting points envlock at the mirror: ENVLOCK_MIRRORS names the mirrors file the generator
# writes. Against the live indexes, leave it unset: they are the default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=build/demo
rm -rf "$out" && mkdir -p "$out"
shared=()
[ -d ../shared/facts ] && shared=(--shared ../shared)
./build/envlock-mirror build "$out/mirror" "${shared[@]}" >/dev/null
export ENVLOCK_MIRRORS="$(pwd)/$out/mirror/mirrors.yaml"
lock="$out/BEVFormer/envlock.yaml"
start=$(date +%s)
set -x
./build/envlock resolve BEVFormer -o "$lock" --gpu "RTX 3090" --driver 470.82.01 --cache-dir "$out/cache"
./build/envlock why torch "$lock"
./build/envlock check "$lock"
./build/envlock install "$lock" --cache-dir "$out/cache"
./build/envlock verify "$lock"
./build/envlock run --lock "$lock" -- python -c "import torch, mmcv; print('torch', torch.__version__, 'CUDA', torch.version.cuda, '| mmcv', mmcv.__version__)"
# The same paper on an H100: no torch 1.9.1 build has sm_90 code, and envlock says so (exit 1).
status=0
./build/envlock resolve BEVFormer -o "$out/BEVFormer-h100/envlock.yaml" --gpu "H100" --driver 535.104.05 \
    --cache-dir "$out/cache" || status=$?
{ set +x; } 2>/dev/null
if [ "$status" -ne 1 ]; then
  echo "demo: the H100 resolve should explain why it cannot be met (exit 1), it exited $status" >&2
  exit 1
fi
echo "demo: resolve, install, verify, run and the H100 explanation all went as expected in $(( $(date +%s) - start )) s"
