#!/usr/bin/env bash
# conda problems over the real snapshot channels (../shared/snapshots: the pytorch channel and the
# conda-forge python 3.9 subset), envlock beside py-rattler in the same
# run, interleaved run by run (envlock, rattler, envlock, rattler …) so machine load hits both
# alike; prints medians in milliseconds:
#   envlock        `envlock resolve` as a whole process: the channels read from the warm HTTP
#                  cache (file://), a fresh lock path each run (so the lock is solved, not kept)
#   rattler        py-rattler (bench/rattler_solve.py once) as a whole process: import, read the
#                  same repodata files, solve, the same virtual packages, strict channel priority
#   rattler warm   py-rattler inside a live interpreter, the repodata opened once: the solve alone
# The answers are printed beside the times (solved N / unsatisfiable), so a disagreement shows.
# The target: linux-64, glibc 2.31, kernel 5.15.0, an RTX 3090 on driver 470.82.01 (CUDA 11.4);
# rattler gets the same facts as virtual packages.
# Usage: bash bench/conda.sh [RUNS]   (after `bash scripts/setup.sh`; RATTLER_PYTHON: a python
#        with py-rattler, default /work/tools/bin/python: `pip install 'py-rattler==0.28.*'`)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
rattler_python=${RATTLER_PYTHON:-/work/tools/bin/python}
snap=${ENVLOCK_SHARED_DIR:-../shared}/snapshots
[ -d "$snap" ] || { echo "conda.sh: no snapshots at $snap" >&2; exit 2; }
"$rattler_python" -c 'import rattler' 2>/dev/null || { echo "conda.sh: $rattler_python has no py-rattler" >&2; exit 2; }
cmake --build build --target envlock >/dev/null
out=$(mktemp -d /tmp/envlock-bench-conda-XXXXXX)
trap 'rm -rf "$out"' EXIT

# The channels: each snapshot file linked (not copied) as <channel>/<subdir>/repodata.json.
link() { mkdir -p "$out/ch/$1/$2"; ln -s "$(realpath "$snap/$3")" "$out/ch/$1/$2/repodata.json"; }
link pytorch linux-64 rattler-pytorch-channel/linux-64/repodata.json
link conda-forge-py39 linux-64 conda-subchannel-demo-conda-forge-py39/linux-64/repodata.json
link conda-forge-py39 noarch conda-subchannel-demo-conda-forge-py39/noarch/repodata.json
for c in pytorch conda-forge-py39; do
  for s in linux-64 noarch; do
    [ -e "$out/ch/$c/$s/repodata.json" ] || { mkdir -p "$out/ch/$c/$s"; echo "{\"info\": {\"subdir\": \"$s\"}, \"packages\": {}}" > "$out/ch/$c/$s/repodata.json"; }
  done
done
./build/envlock detect --platform linux-64 --kernel 5.15.0 --glibc 2.31 --gpu "RTX 3090" --driver 470.82.01 \
  --cpu-flags sse4_2,avx,avx2,fma > "$out/target.yaml"
virtuals=__glibc=2.31,__linux=5.15.0,__cuda=11.4,__unix=0

# The problems: "channels|requirements" (first channel first).
problems=(
  "pytorch conda-forge-py39|pytorch=2.1 python=3.9"
  "pytorch conda-forge-py39|doesnotexist python=3.6"
  "conda-forge-py39|python=3.9 pip setuptools"
  "pytorch conda-forge-py39|python=3.9 openssl"
  "conda-forge-py39|python=3.9.18 sqlite"
)

spec_of() {   # $1 index, $2 channels, $3 requirements -> spec file
  local f="$out/spec$1.yaml" c first=1
  { echo "spec:"; echo "  name: p$1"; printf '  channels: ['
    for c in $2; do [ $first = 1 ] || printf ', '; printf '"file://%s/ch/%s"' "$out" "$c"; first=0; done
    echo "]"; echo "  requirements:"
    for r in $3; do echo "    - {conda: \"$r\"}"; done; } > "$f"
  echo "$f"
}
rattler_channels() { local c s=""; for c in $1; do s="$s${s:+,}$c=$out/ch/$c"; done; echo "$s"; }
ms_of() { local start; start=$(date +%s%N); "$@" > "$out/answer.txt" 2>&1 || true; echo $(( ($(date +%s%N) - start) / 1000000 )); }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
envlock_answer() { grep -q '^wrote ' "$out/answer.txt" && sed -n 's/^wrote [^:]*: \([0-9]*\) packages.*/solved \1/p' "$out/answer.txt" | head -1 || echo unsatisfiable; }

echo "conda problems over ../shared/snapshots, $runs runs each, interleaved; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %-50s %10s %10s %12s  %s\n' "problem [channels]" "envlock" "rattler" "rattler warm" "answers (envlock / rattler)"
for i in "${!problems[@]}"; do
  channels=${problems[$i]%%|*}
  reqs=${problems[$i]#*|}
  spec=$(spec_of "$i" "$channels" "$reqs")
  args=(resolve "$spec" --target "$out/target.yaml" --cache-dir "$out/cache")
  ./build/envlock "${args[@]}" -o "$out/warmup.yaml" >/dev/null 2>&1 || true   # fills the HTTP cache
  e=() r=()
  for n in $(seq "$runs"); do
    e+=("$(ms_of ./build/envlock "${args[@]}" -o "$out/lock$i-$n.yaml")")
    ea=$(envlock_answer)
    r+=("$(ms_of "$rattler_python" bench/rattler_solve.py once "$(rattler_channels "$channels")" "$virtuals" $reqs)")
    ra=$(head -1 "$out/answer.txt" | cut -c1-14)
  done
  warm=$("$rattler_python" bench/rattler_solve.py warm "$runs" "$(rattler_channels "$channels")" "$virtuals" $reqs)
  # shellcheck disable=SC2086
  printf '  %-50s %8s ms %8s ms %10s ms  %s / %s\n' "$reqs [${channels// /, }]" "$(median "${e[@]}")" "$(median "${r[@]}")" \
    "$(median $warm)" "$ea" "$ra"
done
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
