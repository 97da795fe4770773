#!/usr/bin/env bash
# Quick start (a): set up, build, and run the main job: `envlock resolve BEVFormer` for an
# RTX 3090 with driver 470.82, offline, against the DEMO MIRROR that envlock-mirror generates
# (no PyPI or conda server is reachable from a build machine). Against the live indexes, drop
# the --mirror flags: they are the default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=build/demo
rm -rf "$out" && mkdir -p "$out"
shared=()
[ -d ../shared/facts ] && shared=(--shared ../shared)
./build/envlock-mirror build "$out/mirror" "${shared[@]}" >/dev/null
m="file://$(pwd)/$out/mirror"
mirrors=(--mirror "https://conda.anaconda.org=$m/conda"
         --mirror "https://pypi.org/simple=$m/pypi/simple"
         --mirror "https://pypi.org/pypi/packages=$m/pypi/packages"
         --mirror "https://download.pytorch.org/whl=$m/whl"
         --mirror "https://download.openmmlab.com/mmcv=$m/mmcv"
         --mirror "https://repo.anaconda.com/pkgs=$m/pkgs"
         --mirror "https://github.com/open-mmlab/mmdetection3d=$(pwd)/$out/mirror/git/mmdetection3d"
         --mirror "https://github.com/facebookresearch/detectron2=$(pwd)/$out/mirror/git/detectron2")
set -x
./build/envlock resolve BEVFormer -o "$out/BEVFormer/envlock.yaml" --gpu "RTX 3090" --driver 470.82.01 \
    --cache-dir "$out/cache" "${mirrors[@]}"
./build/envlock why torch "$out/BEVFormer/envlock.yaml"
./build/envlock check "$out/BEVFormer/envlock.yaml"
# The same paper on an H100: no torch 1.9.1 build has sm_90 code, and envlock says so (exit 1).
./build/envlock resolve BEVFormer -o "$out/BEVFormer-h100/envlock.yaml" --gpu "H100" --driver 535.104.05 \
    --cache-dir "$out/cache" "${mirrors[@]}" || true
