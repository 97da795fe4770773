#!/usr/bin/env bash
# envlock resolve against `uv pip compile` on the live PyPI (issue 28 item 7; opt-in, never in CI):
# the same requirements, Python and platform (--python-version, --python-platform
# x86_64-manylinux_2_28; envlock: python in the spec, --platform linux-64 --glibc 2.28 and one
# GPU with a driver that runs CUDA 12.4, so plain-PyPI torch builds fit), interleaved run by run,
#   cold: a fresh cache folder for each tool,
#   warm: the same folder again (envlock writes to a fresh lock path, so it solves again),
# timing wall clock, and comparing the versions chosen. Medians of RUNS (default 3). Bytes, two ways:
#   wire: what each tool received over TCP (TLS records included) in one more cold run of each
#         under strace (socket/read/recvfrom/recvmsg/close summed per socket), the same measure
#         for both; the index here sends no Content-Encoding, so this is the pages' and files' size;
#   cache: what each tool's cache folder holds after the cold runs (envlock keeps a page's body and
#         its records, uv one parsed form), which is not what either downloaded.
# uv runs with UV_PYTHON_DOWNLOADS=never: without a local Python 3.10 it otherwise spends ~10 s
# trying to download one (which fails here) before it resolves.
# Needs the network (the live PyPI; find-links hosts are not reachable from these machines).
# Usage: bash bench/live-index.sh [CASE...]      (default: every case below)
#   UV=/path/to/uv (default uv on PATH), RUNS=3, ENVLOCK=build/envlock, WIRE=0 skips the strace runs
set -euo pipefail
cd "$(dirname "$0")/.."
uv=${UV:-uv}
runs=${RUNS:-3}
envlock=${ENVLOCK:-build/envlock}
[ -x "$envlock" ] || cmake --build build --target envlock >/dev/null
envlock=$(realpath "$envlock")

# name | python | find-links (or -) | requirements, comma-separated
cases=(
  "issue-4req|3.10|-|requests,numba==0.58.1,numpy<2,yapf==0.40.1"
  "scipy-alone|3.10|-|scipy==1.11.3"
  "issue-torch|3.10|-|torch==2.1.2,torchvision==0.16.2,numpy<2,numba==0.58.1,yapf==0.40.1,mmengine==0.10.3"
  "book|3.10|-|numpy,pandas,matplotlib,scipy,sympy,seaborn,scikit-learn,jupyterlab,ipywidgets,tqdm,requests,pillow,statsmodels,networkx,openpyxl"
  "openmmlab2|3.10|-|torch==2.1.2,torchvision==0.16.2,mmengine==0.10.3,mmdet==3.3.0"
  "diffusers|3.10|-|diffusers==0.27.2,transformers==4.40.0,accelerate==0.29.3,torch==2.2.2,safetensors"
  "transformers-peft|3.10|-|transformers==4.44.2,peft==0.12.0,datasets==2.21.0,accelerate==0.33.0,torch==2.4.0"
  "timm|3.10|-|timm==0.9.16,torch==2.1.2,torchvision==0.16.2,pyyaml,huggingface-hub"
  "data-science|3.11|-|pandas==2.2.2,scikit-learn==1.5.1,matplotlib==3.9.2,seaborn==0.13.2,scipy,statsmodels"
  "torch-nvidia|3.11|-|torch==2.4.1,numpy"
)
wanted=("$@")

work=$(mktemp -d /tmp/envlock-bench-live-XXXXXX)
trap 'rm -rf "$work"' EXIT

bytes_of() { du -sb "$1" 2>/dev/null | cut -f1; }
# Bytes received on TCP sockets by a command and all its threads, "-" without strace: one trace
# file per thread (-ff, so no call is split across lines), each fd annotated with its socket (-yy).
wire_bytes() {   # trace-folder command...
  local traces=$1; shift
  command -v strace >/dev/null || { "$@" >/dev/null 2>&1; echo -; return; }
  mkdir -p "$traces"
  strace -f -ff -yy -qq -e trace=read,recvfrom,recvmsg -e status=successful -o "$traces/t" "$@" >/dev/null 2>&1 || true
  cat "$traces"/t.* | awk '/^(read|recvfrom|recvmsg)\([0-9]+<TCP/ && $NF > 0 { s += $NF } END { print s + 0 }'
  rm -rf "$traces"
}
median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) print "-"; else print a[int((NR+1)/2)]}'; }
now() { date +%s.%N; }

# One tool's run: prints "SECONDS BYTES EXIT".
run_envlock() {   # dir cache out
  local dir=$1 cache=$2 out=$3 t0 t1 rc=0
  t0=$(now)
  "$envlock" resolve "$dir/spec.yaml" -o "$out" --cache-dir "$cache" --platform linux-64 --glibc 2.28 \
    --gpu "RTX 4090" --driver 550.54.15 --cpu-flags avx,avx2,fma -q >"$out.log" 2>&1 || rc=$?
  t1=$(now)
  echo "$(echo "$t1 - $t0" | bc) $(bytes_of "$cache") $rc"
}
run_uv() {   # dir cache out
  local dir=$1 cache=$2 out=$3 t0 t1 rc=0 links=()
  [ -s "$dir/find-links" ] && links=(--find-links "$(cat "$dir/find-links")")
  t0=$(now)
  UV_PYTHON_DOWNLOADS=never "$uv" pip compile "$dir/requirements.in" -o "$out" --cache-dir "$cache" --python-version "$(cat "$dir/python")" \
    --python-platform x86_64-manylinux_2_28 --no-header --no-annotate -q "${links[@]}" >"$out.log" 2>&1 || rc=$?
  t1=$(now)
  echo "$(echo "$t1 - $t0" | bc) $(bytes_of "$cache") $rc"
}

# name==version of every PyPI package of a lock / of uv's output, sorted.
versions_of_lock() {
  awk '/^  - pypi: /{p=1} /^  - (conda|source): /{p=0} p && /^    name: /{n=$2} p && /^    version: /{gsub(/"/,"",n); v=$2; gsub(/"/,"",v); print n "==" v; p=0}' "$1" |
    sed 's/+[^=]*$//' | awk -F'==' '{n=tolower($1); gsub(/[_.]/,"-",n); print n "==" $2}' | sort -u
}
versions_of_uv() { grep -E '^[A-Za-z0-9]' "$1" | sed 's/ .*//' | awk -F'==' '{n=tolower($1); gsub(/[_.]/,"-",n); print n "==" $2}' | sort -u; }

printf '%-18s %9s %9s %9s %9s %9s %9s %9s %9s  %s\n' case "env cold" "uv cold" "env warm" "uv warm" "env wire" "uv wire" "env cache" "uv cache" versions
for c in "${cases[@]}"; do
  IFS='|' read -r name python links reqs <<<"$c"
  if [ ${#wanted[@]} -gt 0 ] && ! printf '%s\n' "${wanted[@]}" | grep -qx "$name"; then continue; fi
  d="$work/$name"
  mkdir -p "$d"
  echo "$python" >"$d/python"
  [ "$links" != "-" ] && echo "$links" >"$d/find-links"
  tr ',' '\n' <<<"$reqs" >"$d/requirements.in"
  {
    echo "name: $name"
    echo "python: \"$python\""
    [ "$links" != "-" ] && echo "find-links: [$links]"
    echo "requirements:"
    tr ',' '\n' <<<"$reqs" | sed 's/.*/  - "&"/'
  } >"$d/spec.yaml"
  : >"$d/ec"; : >"$d/uc"; : >"$d/ew"; : >"$d/uw"; : >"$d/eb"; : >"$d/ub"
  for i in $(seq "$runs"); do
    rm -rf "$d/ecache$i" "$d/ucache$i"
    read -r t b rc < <(run_envlock "$d" "$d/ecache$i" "$d/e$i.yaml"); echo "$t" >>"$d/ec"; echo "$b" >>"$d/eb"; echo "$rc" >"$d/erc"
    read -r t b rc < <(run_uv "$d" "$d/ucache$i" "$d/u$i.txt"); echo "$t" >>"$d/uc"; echo "$b" >>"$d/ub"; echo "$rc" >"$d/urc"
    read -r t b rc < <(run_envlock "$d" "$d/ecache$i" "$d/ew$i.yaml"); echo "$t" >>"$d/ew"
    read -r t b rc < <(run_uv "$d" "$d/ucache$i" "$d/uw$i.txt"); echo "$t" >>"$d/uw"
  done
  ewire=- uwire=-
  if [ "${WIRE:-1}" != 0 ]; then
    rm -rf "$d/ecachew" "$d/ucachew"
    ewire=$(wire_bytes "$d/e.trace" "$envlock" resolve "$d/spec.yaml" -o "$d/ewire.yaml" --cache-dir "$d/ecachew" --platform linux-64 \
      --glibc 2.28 --gpu "RTX 4090" --driver 550.54.15 --cpu-flags avx,avx2,fma -q)
    links=()
    [ -s "$d/find-links" ] && links=(--find-links "$(cat "$d/find-links")")
    uwire=$(wire_bytes "$d/u.trace" env UV_PYTHON_DOWNLOADS=never "$uv" pip compile "$d/requirements.in" -o "$d/uwire.txt" \
      --cache-dir "$d/ucachew" --python-version "$python" --python-platform x86_64-manylinux_2_28 --no-header --no-annotate -q "${links[@]}")
  fi
  mb() { [ "$1" = - ] && echo - || printf '%.1f' "$(echo "$1 / 1048576" | bc -l)"; }
  verdict="envlock exit $(cat "$d/erc"), uv exit $(cat "$d/urc")"
  if [ "$(cat "$d/erc")" = 0 ] && [ "$(cat "$d/urc")" = 0 ]; then
    versions_of_lock "$d/e1.yaml" >"$d/env.versions"
    versions_of_uv "$d/u1.txt" >"$d/uv.versions"
    differ=$(comm -3 "$d/env.versions" "$d/uv.versions" | tr -d '\t' | tr '\n' ' ')
    verdict="$(wc -l <"$d/env.versions") same as uv"
    [ -n "$differ" ] && verdict="$(wc -l <"$d/env.versions")/$(wc -l <"$d/uv.versions"), differ: $differ"
  fi
  printf '%-18s %8ss %8ss %8ss %8ss %9s %9s %9s %9s  %s\n' "$name" \
    "$(median <"$d/ec" | xargs printf '%.2f')" "$(median <"$d/uc" | xargs printf '%.2f')" \
    "$(median <"$d/ew" | xargs printf '%.2f')" "$(median <"$d/uw" | xargs printf '%.2f')" \
    "$(mb "$ewire")" "$(mb "$uwire")" "$(mb "$(median <"$d/eb")")" "$(mb "$(median <"$d/ub")")" "$verdict"
  [ "$(cat "$d/erc")" = 0 ] || tail -5 "$d/e1.yaml.log" | sed 's/^/    envlock: /'
done
