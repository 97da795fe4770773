#!/usr/bin/env bash
# Opt-in (issue 33): one lock installed on every "node" by a Slurm array job, the way a lab runs
# it, on a single-node Slurm of Debian's slurm-wlm + munge started here by hand (no systemd):
# `envlock mirror LOCK DIR` writes the lab's mirror on a shared folder (from the demo mirror,
# which is then removed), munged, slurmctld and slurmd start with a generated slurm.conf for
# this host, then
#   sbatch --array=1-$TASKS --wrap "envlock install LOCK --prefix .../node%a --cache-dir SHARED \
#       --mirrors-file DIR/mirrors.yaml --offline"
# and a check that every prefix is the same bytes (bench/prefix_digest.py), whole by its own
# record (install --repair --dry-run), with every package fetched once into the shared cache.
# The daemons are stopped and the work folder removed at the end (KEEP=1 keeps the folder).
#
# Needs root (slurmd runs jobs as their user, munged wants its key owned by the user running it)
# and:  apt-get install slurm-wlm munge   (Debian 12: slurmctld, slurmd, slurm-client, munge)
#
#   scripts/slurm-fanout.sh                     # the demo mirror (tests/mirror), 8 tasks
#   TASKS=16 scripts/slurm-fanout.sh
#   MIRROR=/srv/mirror LOCK=envlock.yaml scripts/slurm-fanout.sh
#                                               # a folder made by `envlock mirror LOCK... DIR`
#                                               # (its mirrors.yaml) and that lock
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ENVLOCK=${ENVLOCK:-$ROOT/build/envlock}
TASKS=${TASKS:-8}

for tool in munged slurmctld slurmd sbatch squeue scontrol; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
    echo "slurm-fanout: $tool is missing; install Slurm and munge: apt-get install slurm-wlm munge" >&2
    exit 3
  fi
done
[ "$(id -u)" -eq 0 ] || { echo "slurm-fanout: run as root (it starts munged, slurmctld and slurmd)" >&2; exit 3; }
[ -x "$ENVLOCK" ] || { echo "slurm-fanout: build envlock first (cmake --build build --target envlock envlock-mirror)" >&2; exit 3; }
export PATH="/usr/sbin:$PATH"

# A path of its own under /tmp, short enough for munge's socket (108 bytes).
WORK=$(mktemp -d /tmp/envlock-slurm.XXXXXX)
chmod 755 "$WORK"
mkdir -p "$WORK"/{munge,slurm/state,slurm/spool,logs,prefixes}
PIDS=()
cleanup() {
  set +e
  [ -n "${SLURM_CONF:-}" ] && scontrol shutdown >/dev/null 2>&1
  for pidfile in "$WORK/slurm/slurmd.pid" "$WORK/slurm/slurmctld.pid" "$WORK/munge/munged.pid"; do
    [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
  done
  sleep 1
  for pidfile in "$WORK/slurm/slurmd.pid" "$WORK/slurm/slurmctld.pid" "$WORK/munge/munged.pid"; do
    [ -s "$pidfile" ] && kill -9 "$(cat "$pidfile")" 2>/dev/null
  done
  if [ "${KEEP:-0}" = 1 ]; then echo "slurm-fanout: kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# 1. The lock, and its mirror on a shared folder (here the local disk stands in for NFS).
if [ -n "${MIRROR:-}" ]; then
  MIRRORS_FILE=$(realpath "$MIRROR")/mirrors.yaml
  LOCK_FILE=$(realpath "${LOCK:?set LOCK to the lock the mirror was made for}")
else
  "${ENVLOCK_MIRROR:-$ROOT/build/envlock-mirror}" build "$WORK/demo-mirror" --no-shared --no-git >/dev/null
  cat > "$WORK/spec.yaml" <<'EOF'
spec:
  name: lab
  channels: [conda-forge]
  requirements:
    - {conda: python=3.8}
    - {conda: numpy=1.19.5}
    - {conda: pip}
    - {pypi: yapf==0.40.1}
EOF
  cat > "$WORK/target.yaml" <<'EOF'
platform: linux-64
glibc: "2.31"
cpu-flags: [sse4_2, avx, avx2, fma]
driver: "470.82.01"
driver-cuda: "11.4"
gpus:
  - {name: "NVIDIA GeForce RTX 3090", sm: sm_86}
EOF
  LOCK_FILE=$WORK/envlock.yaml
  "$ENVLOCK" resolve "$WORK/spec.yaml" --target "$WORK/target.yaml" -o "$LOCK_FILE" \
    --mirrors-file "$WORK/demo-mirror/mirrors.yaml" --cache-dir "$WORK/resolve-cache" --quiet
  # The lab's mirror: exactly what the lock needs. The demo mirror goes, so the nodes have
  # nothing but this folder (and --offline refuses anything else).
  "$ENVLOCK" mirror "$LOCK_FILE" "$WORK/lab-mirror" --mirrors-file "$WORK/demo-mirror/mirrors.yaml" \
    --cache-dir "$WORK/mirror-cache" | sed 's/^/  /'
  rm -rf "$WORK/demo-mirror" "$WORK/mirror-cache" "$WORK/resolve-cache"
  MIRRORS_FILE=$WORK/lab-mirror/mirrors.yaml
fi
PACKAGES=$(grep -cE '^  - (conda|pypi):' "$LOCK_FILE")
echo "slurm-fanout: $PACKAGES packages in $LOCK_FILE; mirror: $MIRRORS_FILE"

# 2. munge with a key of its own.
mungekey --create --keyfile="$WORK/munge/munge.key" --force 2>/dev/null ||
  dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$WORK/munge/munge.key"
munged --force --key-file="$WORK/munge/munge.key" --socket="$WORK/munge/munge.sock" \
  --pid-file="$WORK/munge/munged.pid" --log-file="$WORK/logs/munged.log" --seed-file="$WORK/munge/munge.seed"

# 3. slurm.conf: this host as controller and only node, no cgroups, no accounting.
HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
export SLURM_CONF=$WORK/slurm/slurm.conf
cat > "$SLURM_CONF" <<EOF
ClusterName=envlock-lab
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=${SLURMCTLD_PORT:-16817}
SlurmdPort=${SLURMD_PORT:-16818}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$WORK/munge/munge.sock
StateSaveLocation=$WORK/slurm/state
SlurmdSpoolDir=$WORK/slurm/spool
SlurmctldPidFile=$WORK/slurm/slurmctld.pid
SlurmdPidFile=$WORK/slurm/slurmd.pid
SlurmctldLogFile=$WORK/logs/slurmctld.log
SlurmdLogFile=$WORK/logs/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=lab Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:$TASKS
EOF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
  state=$(sinfo -h -o %T 2>/dev/null | head -1 || true)
  [ "$state" = idle ] && break
  sleep 1
done
echo "slurm-fanout: node $HOST is ${state:-unknown} (slurm $(sinfo -V | awk '{print $2}'), $CPUS CPUs)"

# 4. The array job: every task installs the lock into its own prefix from one shared cache.
SHARED_CACHE=$WORK/shared-cache
start=$(date +%s.%N)
sbatch --wait --array=1-"$TASKS" --oversubscribe --cpus-per-task=1 --mem=256 \
  --job-name=envlock-install --output="$WORK/logs/task-%a.out" --chdir="$WORK" \
  --wrap "'$ENVLOCK' install '$LOCK_FILE' --prefix '$WORK/prefixes/node'\$(printf %02d \$SLURM_ARRAY_TASK_ID) \
--cache-dir '$SHARED_CACHE' --mirrors-file '$MIRRORS_FILE' --offline"
end=$(date +%s.%N)
echo "slurm-fanout: array job of $TASKS tasks done in $(awk "BEGIN {printf \"%.2f\", $end - $start}") s"

# 5. The checks.
failed=0
for i in $(seq 1 "$TASKS"); do
  out=$WORK/logs/task-$i.out
  if ! grep -q '^installed ' "$out"; then echo "slurm-fanout: task $i did not install:"; cat "$out"; failed=1; fi
done
for i in $(seq 1 "$TASKS"); do echo "  task $i: $(grep -h '^installed ' "$WORK/logs/task-$i.out")"; done
digests=$(/usr/bin/python3 "$ROOT/bench/prefix_digest.py" "$WORK"/prefixes/node*)
echo "$digests" | sed 's/^/  /'
distinct=$(echo "$digests" | awk '{print $1}' | sort -u | wc -l)
count=$(echo "$digests" | wc -l)
if [ "$count" -ne "$TASKS" ] || [ "$distinct" -ne 1 ]; then
  echo "slurm-fanout: FAILED: $count prefixes, $distinct distinct"; failed=1
else
  echo "slurm-fanout: all $TASKS prefixes are byte-identical (prefix path aside)"
fi
# Whole by its own record: `install --repair --dry-run` finds nothing to restore or remove.
for p in "$WORK"/prefixes/node*; do
  if ! "$ENVLOCK" install "$LOCK_FILE" --prefix "$p" --cache-dir "$SHARED_CACHE" --mirrors-file "$MIRRORS_FILE" \
      --offline --repair --dry-run --json 2>"$WORK/logs/repair.err" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["repair"]
sys.exit(0 if not d["add"] and not d["remove"] and not r["restored"] and not r["removed-foreign"] else 1)'; then
    echo "slurm-fanout: $p is not whole:"; cat "$WORK/logs/repair.err"; failed=1
  fi
done
echo "slurm-fanout: install --repair --dry-run finds every prefix whole"
# Each file came into the shared cache once, by whichever task got to it first.
downloads=$(grep -ho '([0-9]* downloaded' "$WORK"/logs/task-*.out | awk '{s += substr($1, 2)} END {print s + 0}')
echo "slurm-fanout: the $TASKS tasks downloaded $downloads files in all, for $PACKAGES packages"
[ "$downloads" -eq "$PACKAGES" ] || failed=1
entries=$(find "$SHARED_CACHE/pkgs" -mindepth 1 -maxdepth 1 -type d | wc -l)
temps=$(find "$SHARED_CACHE" -name '*.tmp-*' -o -name '*.part-*' -o -name '*.gone-*' | wc -l)
echo "slurm-fanout: shared cache: $entries package entries for $PACKAGES packages, $temps temp files left"
[ "$entries" -eq "$PACKAGES" ] && [ "$temps" -eq 0 ] || failed=1
[ "$failed" -eq 0 ] && echo "slurm-fanout: OK" || { echo "slurm-fanout: FAILED (KEEP=1 keeps $WORK)"; exit 1; }
