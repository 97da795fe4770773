#!/usr/bin/env bash
# The flagship, for real, from the live index (opt-in; downloads about 4 GB; never in CI):
# torch 2.15.0 from PyPI is a CUDA 13.2 build and NVIDIA's cuda-toolkit[nvcc]==13.2.2 on PyPI
# carries the nvcc of that CUDA, so on a machine with no GPU, no conda and no CUDA 13.2 toolkit:
#   resolve bench/flagship/spec.yaml for an H100 -> the lock takes nvcc 13.2 from PyPI;
#   install it (cold, then warm into a second env) beside `uv pip install` of the same files;
#   `envlock verify --build-extensions` compiles the multi-scale deformable attention extension
#   (bench/flagship/msda) with that nvcc for sm_90 and imports it; check.py runs it where a GPU is.
# Then a torch 2.1.2 (CUDA 12.1) lock: installs and imports; verify says no nvcc 12.1 is here.
# Usage: bash bench/flagship.sh [WORK_DIR]   (default build/flagship; envlock built in build/)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
envlock="$root/build/envlock"
uv=${UV:-$(command -v uv || echo /work/tools/bin/uv)}
work=$(realpath -m "${1:-build/flagship}")
rm -rf "$work" && mkdir -p "$work"
cp -r bench/flagship/spec.yaml bench/flagship/msda "$work/"
cd "$work"
export XDG_CACHE_HOME="$work/xdg"   # a cold envlock cache of its own
secs() { python3 -c "import time,sys; print('%.1f' % (time.time() - float(sys.argv[1])))" "$1"; }
now() { python3 -c 'import time; print(time.time())'; }

echo "== resolve (live index) for an H100 with driver 595.58.03"
t=$(now); "$envlock" resolve spec.yaml -o envlock.yaml --python 3.11 --gpu H100 --driver 595.58.03; echo "resolve: $(secs "$t") s"
echo "-- the lock's toolchain:"; sed -n '/^toolchain:/,/^[a-z]/p' envlock.yaml | head -12

echo "== install: envlock cold, then warm into a second env"
t=$(now); "$envlock" install envlock.yaml --prefix env; cold=$(secs "$t")
t=$(now); "$envlock" install envlock.yaml --prefix env2 >/dev/null; warm=$(secs "$t")
echo "envlock install: cold $cold s, warm $warm s"

echo "== uv pip install of the same pinned files (its own cold cache, then warm)"
"$envlock" export envlock.yaml --format requirements > requirements.txt
py=$(sed -n 's/^ *version: "\(3\.[0-9]*\).*/\1/p' envlock.yaml | head -1)
"$uv" venv -q --python "${py:-3.11}" uvenv && "$uv" venv -q --python "${py:-3.11}" uvenv2
t=$(now); UV_CACHE_DIR="$work/uvcache" VIRTUAL_ENV="$work/uvenv" "$uv" pip install -q --no-deps -r requirements.txt; ucold=$(secs "$t")
t=$(now); UV_CACHE_DIR="$work/uvcache" VIRTUAL_ENV="$work/uvenv2" "$uv" pip install -q --no-deps -r requirements.txt; uwarm=$(secs "$t")
echo "uv pip install: cold $ucold s, warm $uwarm s"

echo "== verify --build-extensions (nvcc from the lock, sm_90)"
"$envlock" verify envlock.yaml --prefix env --build-extensions
"$envlock" run --prefix env --lock envlock.yaml -- python msda/check.py

echo "== torch 2.1.2 (CUDA 12.1): install and import; then the same with a CUDA extension, whose nvcc 12.1 PyPI does not carry"
mkdir -p t212 t212ext
printf 'name: torch212\nrequirements:\n  - {pypi: torch==2.1.2}\n  - {pypi: numpy<2}\n' > t212/spec.yaml
"$envlock" resolve t212/spec.yaml -o t212/envlock.yaml --python 3.11 --gpu "RTX 3090" --driver 535.104.05
t=$(now); "$envlock" install t212/envlock.yaml --prefix t212/env >/dev/null; echo "envlock install torch 2.1.2 stack: cold $(secs "$t") s"
"$envlock" run --prefix t212/env --lock t212/envlock.yaml -- python -c "import torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda)"
printf 'name: torch212ext\nrequirements:\n  - {pypi: torch==2.1.2}\n  - {pypi: numpy<2}\nextensions:\n  - {name: ops, in: ops, build: python setup.py develop, import: ops_ext, cuda: true}\n' > t212ext/spec.yaml
"$envlock" resolve t212ext/spec.yaml -o t212ext/envlock.yaml --python 3.11 --gpu "RTX 3090" --driver 535.104.05 || echo "(resolve of torch 2.1.2 with a CUDA extension exited $?: its nvcc 12.1 is not on PyPI)"
echo "flagship: done ($work)"
