#!/usr/bin/env bash
# Quick start (a): set up, build, and run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/envlock --help
