#!/usr/bin/env bash
# Warm and cold `envlock install` of a generated conda lock, against `cp -al` of the same tree.
#
#   bench/install.sh [--packages N] [--files-per-package K] [--kb-per-file S] [--build DIR]
#
# Defaults: 200 packages x 150 files x 35 kB (30,000 files, ~1 GB), generated at bench time as
# real .conda archives (zip of zstd tarballs, CEP 35) with info/paths.json, a few files with a
# text placeholder each, served as file:// URLs. Measured, each in this run:
#   cold   envlock install into a new prefix with an empty cache (copy from file://, sha256, extract, link)
#   warm   envlock install into a new prefix from the warm cache (the number uv/pixi advertise)
#   cp -al of the installed prefix (the floor: one link() per file)
#   noop   envlock install of the same lock into an installed prefix
#   repair envlock install --repair (every file hashed)
# Target (issue 16): warm <= 1.5 x cp -al.
set -euo pipefail
packages=200 files=150 kb=35 build=build
while [ $# -gt 0 ]; do
    case $1 in
        --packages) packages=$2; shift 2 ;;
        --files-per-package) files=$2; shift 2 ;;
        --kb-per-file) kb=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        *) echo "unknown flag $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
envlock="$root/$build/envlock"
[ -x "$envlock" ] || { echo "build envlock first: cmake --build $build --target envlock" >&2; exit 2; }
work=$(mktemp -d /tmp/envlock-bench-install-XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "generating $packages packages x $files files x $kb kB in $work ..."
/usr/bin/python3 - "$work" "$packages" "$files" "$kb" <<'PY'
import hashlib, json, os, random, subprocess, sys
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
channel = os.path.join(work, "channel", "linux-64")
os.makedirs(channel)
packages = []
for i in range(n):
    name, version, build = f"bench-pkg{i:03d}", "1.0", "h0_0"
    stem = f"{name}-{version}-{build}"
    src = os.path.join(work, "src", stem)
    paths = []
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
    out = os.path.join(channel, stem + ".conda")
    subprocess.run(["zip", "-q", "-0", "-j", out, os.path.join(parts, "metadata.json"),
                    os.path.join(parts, f"pkg-{stem}.tar.zst"), os.path.join(parts, f"info-{stem}.tar.zst")], check=True)
    data = open(out, "rb").read()
    packages.append((name, version, build, "file://" + out, hashlib.sha256(data).hexdigest(), len(data)))
lock = ["version: 1", 'content-hash: "sha256:' + "0" * 64 + '"', 'knowledge-version: "bench"',
        "spec:", "  name: bench", "targets:", "  default:", "    platform: linux-64", "packages:"]
for name, version, build, url, sha, size in packages:
    lock += [f'  - conda: "{url}"', f'    name: "{name}"', f'    version: "{version}"', f'    build: "{build}"',
             f'    sha256: "{sha}"', f"    size: {size}", '    channel: "file://' + os.path.dirname(channel) + '"',
             '    subdir: "linux-64"']
open(os.path.join(work, "envlock.yaml"), "w").write("\n".join(lock) + "\n")
PY
rm -rf "$work/src" "$work/parts"
du -sh "$work/channel" | sed 's/^/archives: /'

t() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
lock="$work/envlock.yaml" cache="$work/cache"
cold=$(t "$envlock" install "$lock" --prefix "$work/p-cold" --cache-dir "$cache" --quiet)
warm=$(t "$envlock" install "$lock" --prefix "$work/p-warm" --cache-dir "$cache" --quiet)
nfiles=$(find "$work/p-warm" -type f | wc -l)
bytes=$(du -sb "$work/p-warm" | cut -f1)
sync
cpal=$(t cp -al "$work/p-warm" "$work/p-cpal")
noop=$(t "$envlock" install "$lock" --prefix "$work/p-warm" --cache-dir "$cache" --quiet)
repair=$(t "$envlock" install "$lock" --prefix "$work/p-warm" --cache-dir "$cache" --quiet --repair)
printf 'prefix: %d files, %d MB\n' "$nfiles" $((bytes / 1000000))
printf 'cold install   %7.3f s\n' "$cold"
printf 'warm install   %7.3f s   (%.2f x cp -al; target <= 1.5)\n' "$warm" "$(echo "$warm / $cpal" | bc -l)"
printf 'cp -al         %7.3f s\n' "$cpal"
printf 'no-op install  %7.3f s\n' "$noop"
printf 'repair (hash)  %7.3f s\n' "$repair"
