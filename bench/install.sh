#!/usr/bin/env bash
# `envlock install` of a ~200-package lock against the floor (`cp -al`) and its peers, all
# measured in this one run (issue 16):
#
#   bench/install.sh [--packages N] [--files-per-package K] [--kb-per-file S] [--build DIR]
#                    [--work DIR] [--no-peers] [--rounds R]
#
# Defaults: 200 packages x 150 files x 35 kB (30,000 files, ~1 GB), generated at bench time,
# each package twice with the same files: as a real .conda (zip of zstd tarballs, CEP 35, with
# info/paths.json and one text placeholder) in a file:// channel with repodata.json, and as a
# real wheel (deflate zip, RECORD) in a folder. --work DIR keeps (and reuses) the generated
# archives and locks there. Measured:
#   conda  envlock cold (empty cache: copy from file://, sha256, extract, link) vs the sum of
#          download (copy) + sha256 + extraction (unzip + tar) of the same archives;
#          envlock warm into a new prefix vs `cp -al` of that prefix (target <= 1.5 x) and
#          vs py-rattler's installer (rattler.install, its cache warmed first);
#          no-op install; --repair (every file hashed).
#   wheels envlock warm (a venv on the base python + 200 wheels) vs
#          `pip install --no-index --no-deps` of the same wheels (target >= 20 x faster) and
#          `uv pip install --offline --no-deps` into a `uv venv` (target: faster than uv), the
#          two taking turns for R rounds (default 7), medians compared.
# Peers (uv, py-rattler) come from `pip install` as pip is configured; when that fails (no
# registry reachable) the script says so and skips them. Warm figures are the best of three
# runs, each after a sync: the machine may be shared.
set -euo pipefail
packages=200 files=150 kb=35 build=build work="" peers=1 rounds=7
while [ $# -gt 0 ]; do
    case $1 in
        --packages) packages=$2; shift 2 ;;
        --files-per-package) files=$2; shift 2 ;;
        --kb-per-file) kb=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --no-peers) peers=0; shift ;;
        --rounds) rounds=$2; shift 2 ;;
        *) echo "unknown flag $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
envlock="$root/$build/envlock"
[ -x "$envlock" ] || { echo "build envlock first: cmake --build $build --target envlock" >&2; exit 2; }
python=/usr/bin/python3
if [ -z "$work" ]; then
    work=$(mktemp -d /tmp/envlock-bench-install-XXXXXX)
    trap 'rm -rf "$work"' EXIT
else
    mkdir -p "$work"
    work=$(cd "$work" && pwd)
    trap 'rm -rf "$work/run"' EXIT
fi
params="$packages $files $kb"
if [ "$(cat "$work/params" 2>/dev/null)" != "$params" ]; then
echo "generating $packages packages x $files files x $kb kB (as .conda and as wheels) in $work ..."
rm -rf "$work/channel" "$work/wheels"
"$python" - "$work" "$packages" "$files" "$kb" <<'PY'
import base64, hashlib, json, os, random, subprocess, sys, zipfile
work, n, k, kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
placeholder = "/opt/anaconda1" + "anaconda2" + "anaconda3"
rng = random.Random(16)
words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(4000)]
def payload(size):
    # Text-like bytes: compress about as well as real packages do.
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words) + (b"\n" if rng.random() < 0.1 else b" ")
    return bytes(out[:size])
def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
channel = os.path.join(work, "channel")
os.makedirs(os.path.join(channel, "linux-64"))
os.makedirs(os.path.join(channel, "noarch"))
wheels = os.path.join(work, "wheels")
os.makedirs(wheels)
conda_rows, wheel_rows, repodata = [], [], {}
for i in range(n):
    name, version, build = f"bench-pkg{i:03d}", "1.0", "h0_0"
    module = name.replace("-", "_")
    stem = f"{name}-{version}-{build}"
    src = os.path.join(work, "src", stem)
    paths, members = [], []
    for j in range(k):
        rel = f"lib/{name}/mod{j // 30}/file{j}.dat"
        data = payload(kb * 1024 + rng.randint(-kb * 256, kb * 256))
        entry = {"_path": rel, "path_type": "hardlink"}
        if j == 0:
            rel = f"etc/{name}.conf"
            data = f"prefix={placeholder}\n".encode() + data[:200]
            entry = {"_path": rel, "path_type": "hardlink", "file_mode": "text", "prefix_placeholder": placeholder}
        os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
        with open(os.path.join(src, rel), "wb") as f:
            f.write(data)
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        entry["size_in_bytes"] = len(data)
        paths.append(entry)
        members.append((f"{module}/mod{j // 30}/file{j}.dat" if j else f"{module}/{name}.conf", data))
    info = os.path.join(src, "info")
    os.makedirs(info)
    index = {"name": name, "version": version, "build": build, "build_number": 0, "depends": [], "subdir": "linux-64",
             "license": "MIT", "timestamp": 1622505600000}
    json.dump(index, open(os.path.join(info, "index.json"), "w"))
    json.dump({"paths": paths, "paths_version": 1}, open(os.path.join(info, "paths.json"), "w"))
    parts = os.path.join(work, "parts", stem)
    os.makedirs(parts)
    with open(os.path.join(parts, "metadata.json"), "w") as f:
        f.write('{"conda_pkg_format_version": 2}')
    subprocess.run(["tar", "-C", src, "--zstd", "-cf", os.path.join(parts, f"info-{stem}.tar.zst"), "info"], check=True)
    subprocess.run(["tar", "-C", src, "--zstd", "-cf", os.path.join(parts, f"pkg-{stem}.tar.zst"), "--exclude=info", "."], check=True)
    out = os.path.join(channel, "linux-64", stem + ".conda")
    subprocess.run(["zip", "-q", "-0", "-j", out, os.path.join(parts, "metadata.json"),
                    os.path.join(parts, f"pkg-{stem}.tar.zst"), os.path.join(parts, f"info-{stem}.tar.zst")], check=True)
    data = open(out, "rb").read()
    sha, md5 = hashlib.sha256(data).hexdigest(), hashlib.md5(data).hexdigest()
    conda_rows.append((name, version, build, "file://" + out, sha, len(data)))
    repodata[stem + ".conda"] = dict(index, sha256=sha, md5=md5, size=len(data))
    # The same files as a wheel (PEP 427): deflated members, then dist-info with RECORD last.
    whl_name = f"{module}-{version}-py3-none-any.whl"
    whl = os.path.join(wheels, whl_name)
    dist = f"{module}-{version}.dist-info"
    meta = {f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
            f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: envlock-bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for path, body in members + list(meta.items()):
            z.writestr(path, body)
            record.append(f"{path},{record_hash(body)},{len(body)}")
        record.append(f"{dist}/RECORD,,")
        z.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    data = open(whl, "rb").read()
    wheel_rows.append((name, version, "file://" + whl, hashlib.sha256(data).hexdigest(), len(data)))
json.dump({"info": {"subdir": "linux-64"}, "packages": {}, "packages.conda": repodata},
          open(os.path.join(channel, "linux-64", "repodata.json"), "w"))
json.dump({"info": {"subdir": "noarch"}, "packages": {}, "packages.conda": {}},
          open(os.path.join(channel, "noarch", "repodata.json"), "w"))
head = ["version: 1", 'content-hash: "sha256:' + "0" * 64 + '"', 'knowledge-version: "bench"', "spec:", "  name: bench"]
tail = ["targets:", "  default:", "    platform: linux-64", "packages:"]
lock = head + tail
for name, version, build, url, sha, size in conda_rows:
    lock += [f'  - conda: "{url}"', f'    name: "{name}"', f'    version: "{version}"', f'    build: "{build}"',
             f'    sha256: "{sha}"', f"    size: {size}", f'    channel: "file://{channel}"', '    subdir: "linux-64"']
open(os.path.join(work, "envlock.yaml"), "w").write("\n".join(lock) + "\n")
mm = "%d.%d" % sys.version_info[:2]
lock = head + [f'  python: "{mm}"'] + tail
for name, version, url, sha, size in wheel_rows:
    lock += [f'  - pypi: "{url}"', f'    name: "{name}"', f'    version: "{version}"', f'    sha256: "{sha}"', f"    size: {size}"]
open(os.path.join(work, "envlock-wheels.yaml"), "w").write("\n".join(lock) + "\n")
PY
rm -rf "$work/src" "$work/parts"
echo "$params" > "$work/params"
fi
du -sh "$work/channel/linux-64" | sed 's/\t.*/ of .conda archives/; s/^/archives: /'
du -sh "$work/wheels" | sed 's/\t.*/ of wheels/; s/^/archives: /'

run="$work/run"
rm -rf "$run"
mkdir -p "$run"
# Seconds of wall time of one command (its output discarded).
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>"$run/last.err" || { cat "$run/last.err" >&2; return 1; }; e=$(date +%s.%N); echo "$e - $s" | bc; }
# The best of three runs of a command that installs into $1, removed (and synced, so its
# deletion's writeback does not land on the next run) before each run. The machine may be shared.
best3() {
    local into=$1 best="" s
    shift
    for _ in 1 2 3; do
        rm -rf "$into"
        sync
        s=$(t "$@") || { echo "failed: $*" >&2; return 1; }
        if [ -z "$best" ] || [ "$(echo "$s < $best" | bc)" = 1 ]; then best=$s; fi
    done
    echo "$best"
}
ratio() { echo "$1 / $2" | bc -l; }

# Peers, from pip as configured (never a registry host written here).
have_uv=0 have_rattler=0
if [ "$peers" = 1 ]; then
    if "$python" -m venv "$run/tools" >/dev/null 2>&1 && "$run/tools/bin/pip" install -q uv py-rattler >"$run/pip-tools.log" 2>&1; then
        have_uv=1 have_rattler=1
    else
        echo "peers skipped: 'pip install uv py-rattler' failed (no package registry reachable?):" >&2
        tail -2 "$run/pip-tools.log" >&2 || true
    fi
fi

lock="$work/envlock.yaml" cache="$run/cache"
echo "--- conda packages ($packages) ---"
# Cold: an empty cache; the baseline does what it must do at least: copy, hash, extract.
cold=$(t "$envlock" install "$lock" --prefix "$run/p-cold" --cache-dir "$cache" --quiet)
baseline() {
    local f d
    mkdir -p "$run/dl" "$run/x"
    for f in "$work"/channel/linux-64/*.conda; do
        cp "$f" "$run/dl/"
        sha256sum "$run/dl/${f##*/}" >/dev/null
        d="$run/x/${f##*/}"
        mkdir -p "$d/parts" "$d/tree"
        unzip -q "$run/dl/${f##*/}" -d "$d/parts"
        for p in "$d"/parts/*.tar.zst; do tar --zstd -xf "$p" -C "$d/tree"; done
        rm -rf "$d/parts"
    done
}
dlx=$(t baseline)
rm -rf "$run/dl" "$run/x"
warm=$(best3 "$run/p-warm" "$envlock" install "$lock" --prefix "$run/p-warm" --cache-dir "$cache" --quiet)
nfiles=$(find "$run/p-warm" -type f | wc -l)
bytes=$(du -sb "$run/p-warm" | cut -f1)
sync
cpal=$(best3 "$run/p-cpal" cp -al "$run/p-warm" "$run/p-cpal")
noop=$(t "$envlock" install "$lock" --prefix "$run/p-warm" --cache-dir "$cache" --quiet)
repair=$(t "$envlock" install "$lock" --prefix "$run/p-warm" --cache-dir "$cache" --quiet --repair)
printf 'prefix: %d files, %d MB\n' "$nfiles" $((bytes / 1000000))
printf 'envlock cold    %7.3f s   (%.2f x copy+sha256+unzip+tar of the same archives: %.3f s)\n' "$cold" "$(ratio "$cold" "$dlx")" "$dlx"
printf 'envlock warm    %7.3f s   (%.2f x cp -al; target <= 1.5)\n' "$warm" "$(ratio "$warm" "$cpal")"
printf 'cp -al          %7.3f s\n' "$cpal"
if [ "$have_rattler" = 1 ]; then
    cat >"$run/rattler_install.py" <<'PY'
import asyncio, os, sys
from rattler import Channel, RepoData, install
channel_dir, prefix, cache = sys.argv[1:4]
records = RepoData.from_path(channel_dir + "/linux-64/repodata.json").into_repo_data(Channel("file://" + channel_dir))
asyncio.run(install(records, target_prefix=prefix, cache_dir=cache, show_progress=False))
# Done: leave without interpreter finalization, where py-rattler sometimes aborts
# ("PyGILState_Release: thread state ... must be current") after a complete install.
os._exit(0)
PY
    rcold=$(t "$run/tools/bin/python" "$run/rattler_install.py" "$work/channel" "$run/r-cold" "$run/rattler-cache")
    rwarm=$(best3 "$run/r-warm" "$run/tools/bin/python" "$run/rattler_install.py" "$work/channel" "$run/r-warm" "$run/rattler-cache")
    printf 'py-rattler cold %7.3f s   (envlock cold is %.2f x faster)\n' "$rcold" "$(ratio "$rcold" "$cold")"
    printf 'py-rattler warm %7.3f s   (envlock warm is %.2f x faster)\n' "$rwarm" "$(ratio "$rwarm" "$warm")"
    rm -rf "$run/r-cold" "$run/r-warm" "$run/rattler-cache"
fi
printf 'no-op install   %7.3f s\n' "$noop"
printf 'repair (hash)   %7.3f s\n' "$repair"
rm -rf "$run/p-cold" "$run/p-warm" "$run/p-cpal" "$cache"

echo "--- the same files as wheels ($packages) ---"
wlock="$work/envlock-wheels.yaml"
wcold=$(t "$envlock" install "$wlock" --prefix "$run/w-cold" --cache-dir "$cache" --quiet)
printf 'envlock cold    %7.3f s   (venv + %d wheels)\n' "$wcold" "$packages"
# pip: the venv (with pip) is made untimed; only the install is measured.
"$python" -m venv "$run/w-pip" >/dev/null
pip_t=$(t "$run/w-pip/bin/pip" install --no-index --no-deps --no-compile --disable-pip-version-check "$work"/wheels/*.whl)
if [ "$have_uv" = 1 ]; then
    uv="$run/tools/bin/uv"
    export UV_CACHE_DIR="$run/uv-cache" UV_NO_PROGRESS=1
    uv_install() { "$uv" venv -q --python "$python" "$1" && "$uv" pip install -q --offline --no-deps --python "$1/bin/python" "$work"/wheels/*.whl; }
    uvcold=$(t uv_install "$run/u-cold")
fi
# Warm: envlock and uv in turns, $rounds rounds (each into a removed and synced folder), medians.
# Taking turns matters on ext4: creating inodes right after many were deleted costs more (the
# allocator skips recently deleted ones), so each tool's runs see the same history.
ew="" uw=""
for _ in $(seq "$rounds"); do
    rm -rf "$run/w-warm"; sync
    ew="$ew $(t "$envlock" install "$wlock" --prefix "$run/w-warm" --cache-dir "$cache" --quiet)"
    if [ "$have_uv" = 1 ]; then
        rm -rf "$run/u-warm"; sync
        uw="$uw $(t uv_install "$run/u-warm")"
    fi
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {printf "%.3f", (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
wwarm=$(echo "$ew" | median)
printf 'envlock warm    %7.3f s   (median of %d:%s)\n' "$wwarm" "$rounds" "$(printf ' %.3f' $ew)"
printf 'pip install     %7.3f s   (envlock warm is %.1f x faster; target >= 20)\n' "$pip_t" "$(ratio "$pip_t" "$wwarm")"
if [ "$have_uv" = 1 ]; then
    uvwarm=$(echo "$uw" | median)
    printf 'uv cold         %7.3f s   (uv venv + uv pip install --offline --no-deps; envlock cold is %.2f x faster)\n' "$uvcold" "$(ratio "$uvcold" "$wcold")"
    printf 'uv warm         %7.3f s   (median of %d, taking turns with envlock:%s; envlock warm is %.2f x faster; target > 1)\n' \
        "$uvwarm" "$rounds" "$(printf ' %.3f' $uw)" "$(ratio "$uvwarm" "$wwarm")"
fi
