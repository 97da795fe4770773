#!/usr/bin/env bash
# Fan-out figures (issue 33): one lock installed into N prefixes at once, as N nodes of a lab
# would, from Debian's nginx serving a mirror on loopback. Wall times of:
#   one install, cold cache (everything over nginx)      one install, warm cache
#   N at once, ONE shared cache, cold (they race for every entry; each file is fetched once)
#   N at once, ONE shared cache, warm
#   N at once, N caches of their own, cold (each fetches everything)
# with the GETs nginx answered for each, and whether all N prefixes are the same bytes
# (bench/prefix_digest.py). Needs nginx (apt-get install nginx-light) and a built envlock.
#
#   bench/fanout.sh                 # a lock of the demo mirror (tests/mirror), mirrored by
#                                   # `envlock mirror`, N=20, 3 repetitions
#   N=40 REPEAT=5 bench/fanout.sh
#   MIRROR=/srv/mirror LOCK=envlock.yaml bench/fanout.sh   # a mirror made by `envlock mirror`
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ENVLOCK=${ENVLOCK:-$ROOT/build/envlock}
N=${N:-20}
REPEAT=${REPEAT:-3}
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "fanout: nginx is missing: apt-get install nginx-light" >&2; exit 3; }
[ -x "$ENVLOCK" ] || { echo "fanout: build envlock first" >&2; exit 3; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/envlock-fanout.XXXXXX")
NGINX_PID=""
cleanup() {
  [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
  [ "${KEEP:-0}" = 1 ] && echo "fanout: kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

if [ -n "${MIRROR:-}" ]; then
  MIRROR_DIR=$(realpath "$MIRROR")
  LOCK_FILE=$(realpath "${LOCK:?set LOCK to the lock the mirror was made for}")
else
  "${ENVLOCK_MIRROR:-$ROOT/build/envlock-mirror}" build "$WORK/demo-mirror" --no-shared --no-git >/dev/null
  printf 'spec:\n  name: lab\n  channels: [conda-forge]\n  requirements:\n    - {conda: python=3.8}\n    - {conda: numpy=1.19.5}\n    - {conda: pip}\n    - {pypi: yapf==0.40.1}\n' > "$WORK/spec.yaml"
  printf 'platform: linux-64\nglibc: "2.31"\ncpu-flags: [sse4_2, avx, avx2, fma]\ndriver: "470.82.01"\ndriver-cuda: "11.4"\ngpus:\n  - {name: "NVIDIA GeForce RTX 3090", sm: sm_86}\n' > "$WORK/target.yaml"
  LOCK_FILE=$WORK/envlock.yaml
  "$ENVLOCK" resolve "$WORK/spec.yaml" --target "$WORK/target.yaml" -o "$LOCK_FILE" \
    --mirrors-file "$WORK/demo-mirror/mirrors.yaml" --cache-dir "$WORK/resolve-cache" --quiet
  # What nginx serves: the lab's mirror of exactly this lock.
  MIRROR_DIR=$WORK/lab-mirror
  "$ENVLOCK" mirror "$LOCK_FILE" "$MIRROR_DIR" --mirrors-file "$WORK/demo-mirror/mirrors.yaml" \
    --cache-dir "$WORK/mirror-cache" --quiet
  rm -rf "$WORK/demo-mirror" "$WORK/mirror-cache"
fi

# nginx in the foreground with a config of its own, on a free loopback port.
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/nginx/logs" "$WORK/nginx/tmp"
USER_LINE=""; [ "$(id -u)" -eq 0 ] && USER_LINE="user root;"
cat > "$WORK/nginx/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 2;
$USER_LINE
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
  log_format fanout '\$request_method \$uri \$status \$body_bytes_sent';
  access_log $WORK/nginx/logs/access.log fanout;
  client_body_temp_path $WORK/nginx/tmp/body;
  proxy_temp_path $WORK/nginx/tmp/proxy;
  fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
  uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
  scgi_temp_path $WORK/nginx/tmp/scgi;
  sendfile on;
  default_type application/octet-stream;
  types { text/html html; application/json json; }
  server { listen 127.0.0.1:$PORT; root $MIRROR_DIR; index index.html index.json; }
}
EOF
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/logs/error.log" &
NGINX_PID=$!
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.05; done
# The nodes' mirrors file: the folder-relative targets of the one `envlock mirror` wrote become
# the server's URLs (what `envlock mirror --base-url` writes).
awk -v base="http://127.0.0.1:$PORT/" '/^  [^ ]+: [^ ]+$/ && $2 !~ /:\/\// && $2 !~ /^\// {print "  " $1 " " base $2; next} {print}' \
  "$MIRROR_DIR/mirrors.yaml" > "$WORK/mirrors-http.yaml"

PACKAGES=$(grep -cE '^  - (conda|pypi):' "$LOCK_FILE")
BYTES=$(awk '/^    size: / {s += $2} END {print s + 0}' "$LOCK_FILE")
echo "fanout: $PACKAGES packages ($BYTES bytes where the lock gives sizes), mirror folder $(du -sk "$MIRROR_DIR" | cut -f1) KiB, N=$N, $REPEAT repetitions, $(nproc) CPUs"
echo "fanout: envlock $("$ENVLOCK" --version 2>/dev/null | head -1), nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///')"

gets() { grep -c '^GET .* 200 ' "$WORK/nginx/logs/access.log" || true; }
max_per_file() { awk '$1 == "GET" && $3 == 200 {n[$2]++} END {m = 0; for (k in n) if (n[k] > m) m = n[k]; print m}' "$WORK/nginx/logs/access.log"; }
now() { date +%s.%N; }
install_one() {   # prefix cache
  "$ENVLOCK" install "$LOCK_FILE" --prefix "$1" --cache-dir "$2" --mirrors-file "$WORK/mirrors-http.yaml" --quiet
}
# N installs at once; $1: shared | own; prints the wall seconds.
install_many() {
  local mode=$1 run=$2 pids=()
  local start; start=$(now)
  for i in $(seq -w 1 "$N"); do
    local cache=$WORK/run$run/shared-cache
    [ "$mode" = own ] && cache=$WORK/run$run/cache$i
    install_one "$WORK/run$run/$mode/node$i" "$cache" & pids+=($!)
  done
  local failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  [ "$failed" -eq 0 ] || { echo "fanout: an install failed" >&2; exit 1; }
  awk "BEGIN {printf \"%.3f\", $(now) - $start}"
}
alike() {   # the prefixes of one run: how many distinct digests
  /usr/bin/python3 "$ROOT/bench/prefix_digest.py" "$@" | awk '{print $1}' | sort -u | wc -l
}

printf '%-44s %9s %9s %10s %9s\n' "case" "wall s" "x one" "GETs" "max/file"
ONE_COLD=(); ONE_WARM=(); COLD_SHARED=(); WARM_SHARED=(); COLD_OWN=()
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for run in $(seq 1 "$REPEAT"); do
  mkdir -p "$WORK/run$run"
  : > "$WORK/nginx/logs/access.log"
  s=$(now); install_one "$WORK/run$run/one/p" "$WORK/run$run/one-cache"; one_cold=$(awk "BEGIN {printf \"%.3f\", $(now) - $s}")
  g1=$(gets)
  rm -rf "$WORK/run$run/one/p"
  s=$(now); install_one "$WORK/run$run/one/p" "$WORK/run$run/one-cache"; one_warm=$(awk "BEGIN {printf \"%.3f\", $(now) - $s}")

  : > "$WORK/nginx/logs/access.log"
  cold_shared=$(install_many shared "$run"); gs=$(gets); ms=$(max_per_file)
  same_shared=$(alike "$WORK/run$run"/shared/node*)
  rm -rf "$WORK/run$run/shared"
  : > "$WORK/nginx/logs/access.log"
  warm_shared=$(install_many shared "$run"); gw=$(gets)
  rm -rf "$WORK/run$run/shared"
  : > "$WORK/nginx/logs/access.log"
  cold_own=$(install_many own "$run"); go=$(gets); mo=$(max_per_file)
  same_own=$(alike "$WORK/run$run"/own/node*)

  ratio() { awk "BEGIN {printf \"%.1f\", $1 / $2}"; }
  printf '%-44s %9s %9s %10s %9s\n' "run $run: 1 install, cold cache" "$one_cold" "1.0" "$g1" "1"
  printf '%-44s %9s %9s %10s %9s\n' "run $run: 1 install, warm cache" "$one_warm" "1.0" "0" "0"
  printf '%-44s %9s %9s %10s %9s\n' "run $run: $N at once, one shared cache, cold" "$cold_shared" "$(ratio "$cold_shared" "$one_cold")" "$gs" "$ms"
  printf '%-44s %9s %9s %10s %9s\n' "run $run: $N at once, one shared cache, warm" "$warm_shared" "$(ratio "$warm_shared" "$one_warm")" "$gw" "0"
  printf '%-44s %9s %9s %10s %9s\n' "run $run: $N at once, $N caches of their own" "$cold_own" "$(ratio "$cold_own" "$one_cold")" "$go" "$mo"
  echo "run $run: distinct prefixes: shared cache $same_shared, own caches $same_own (1 = all byte-identical)"
  [ "$same_shared" -eq 1 ] && [ "$same_own" -eq 1 ] && [ "$ms" -eq 1 ] || { echo "fanout: FAILED: prefixes differ or a file was fetched twice into the shared cache"; exit 1; }
  ONE_COLD+=("$one_cold"); ONE_WARM+=("$one_warm"); COLD_SHARED+=("$cold_shared"); WARM_SHARED+=("$warm_shared"); COLD_OWN+=("$cold_own")
  rm -rf "$WORK/run$run"
done
m_one_cold=$(median "${ONE_COLD[@]}"); m_one_warm=$(median "${ONE_WARM[@]}")
echo "medians of $REPEAT runs (wall s; x one: against one install of the same cache state, in the same runs):"
printf '  %-42s %9s\n' "1 install, cold cache (over nginx)" "$m_one_cold"
printf '  %-42s %9s\n' "1 install, warm cache" "$m_one_warm"
printf '  %-42s %9s %8sx\n' "$N at once, one shared cache, cold" "$(median "${COLD_SHARED[@]}")" "$(ratio "$(median "${COLD_SHARED[@]}")" "$m_one_cold")"
printf '  %-42s %9s %8sx\n' "$N at once, one shared cache, warm" "$(median "${WARM_SHARED[@]}")" "$(ratio "$(median "${WARM_SHARED[@]}")" "$m_one_warm")"
printf '  %-42s %9s %8sx\n' "$N at once, $N caches of their own, cold" "$(median "${COLD_OWN[@]}")" "$(ratio "$(median "${COLD_OWN[@]}")" "$m_one_cold")"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
