#!/usr/bin/env python3
"""Reads what a plain-PyPI torch wheel was built for, from the wheel itself (issue #28, item 8).

For each torch version given, downloads its Linux x86_64 wheel for one CPython through pip (as
this machine configures it; nothing here names an index), then reads:
  - the CUDA it was built for, from its METADATA's own pins (`nvidia-cuda-runtime-cu12==12.4.127`,
    or `cuda-toolkit[...]==13.2.2` for the CUDA 13 builds);
  - its compiled architectures, with `cuobjdump --list-elf` (SASS) and `--list-ptx` (PTX) on
    `torch/lib/libtorch_cuda.so`, the library that holds torch's own kernels.
Prints one row per wheel (file name, sha256, CUDA, arch list in TORCH_CUDA_ARCH_LIST form) as
Markdown and as the `torch_arch_lists` YAML the knowledge base keeps. Run once by hand, not at
resolve time; the wheels (~0.8 GB each) are deleted after reading.

    /usr/bin/python3 scripts/read_torch_wheels.py --cuobjdump PATH 2.5.0 2.5.1 2.6.0 ...

`cuobjdump`: /usr/local/cuda/bin/cuobjdump where a toolkit has it, else the one in PyPI's
`nvidia-cuda-cuobjdump` wheel (`pip download --no-deps nvidia-cuda-cuobjdump`, unzip, its
`nvidia/cu13/bin/cuobjdump`).
"""
import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter

PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64"]
# `nvidia-cuda-runtime-cu12==12.8.90` or, in older METADATA, `nvidia-cuda-runtime-cu12 (==12.4.127)`.
CUDA_PIN = re.compile(r"^(nvidia-cuda-runtime-cu\d+|cuda-toolkit(\[[^\]]*\])?)\s*\(?\s*==\s*([0-9][0-9.]*)")


def download(version, python, folder):
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
           "--implementation", "cp", "--python-version", python, "-d", folder, f"torch=={version}"]
    for p in PLATFORMS:
        cmd[5:5] = ["--platform", p]
    subprocess.run(cmd, check=True)
    wheels = [f for f in os.listdir(folder) if f.startswith(f"torch-{version}") and f.endswith(".whl")]
    if len(wheels) != 1:
        raise SystemExit(f"torch {version}: expected one wheel in {folder}, found {wheels}")
    return os.path.join(folder, wheels[0])


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cuda_pins(wheel):
    """The Requires-Dist lines that say which CUDA the build links: the runtime's exact pin."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode("utf-8")
    pins = []
    for line in text.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = line.split(":", 1)[1].strip()
        m = CUDA_PIN.match(req)
        if m:
            pins.append((m.group(1), m.group(3), req))
    return pins


def cuda_of(pins):
    for name, version, _ in pins:
        parts = version.split(".")
        return f"{parts[0]}.{parts[1]}"
    return None


def arch_list(wheel, cuobjdump, folder):
    """sm_XX from the cubins and compute_XX/sm_XX from the PTX in libtorch_cuda.so, as
    TORCH_CUDA_ARCH_LIST writes them: 8.6 for SASS, 9.0+PTX where PTX of that arch is there too."""
    with zipfile.ZipFile(wheel) as z:
        z.extract("torch/lib/libtorch_cuda.so", folder)
    lib = os.path.join(folder, "torch/lib/libtorch_cuda.so")
    try:
        elf = subprocess.run([cuobjdump, "--list-elf", lib], check=True, capture_output=True, text=True).stdout
        ptx = subprocess.run([cuobjdump, "--list-ptx", lib], capture_output=True, text=True).stdout
    finally:
        os.remove(lib)
    cubins = Counter(int(m) for m in re.findall(r"\.sm_(\d+)a?\.cubin", elf))
    ptx_files = Counter(int(m) for m in re.findall(r"\.sm_(\d+)a?\.ptx", ptx))
    # The arch list torch was built with covers every kernel; a few libraries add kernels for one
    # more arch (FP8 GEMMs for sm_89, sm_90a), which does not make that arch part of the list.
    # So an arch counts when it holds at least a tenth of the most-covered arch's cubins; the
    # others are reported apart, with their counts.
    most = max(cubins.values()) if cubins else 0
    sass = sorted(sm for sm, n in cubins.items() if n * 10 >= most)
    partial = {sm: n for sm, n in sorted(cubins.items()) if n * 10 < most}
    most_ptx = max(ptx_files.values()) if ptx_files else 0
    ptxs = sorted(sm for sm, n in ptx_files.items() if n * 10 >= most_ptx)
    as_text = lambda sm: f"{sm // 10}.{sm % 10}"
    items = [as_text(sm) + ("+PTX" if sm in ptxs else "") for sm in sass]
    items += [as_text(sm) + "+PTX" for sm in ptxs if sm not in sass]   # PTX only: JIT target
    counts = ", ".join(f"sm_{sm}: {n}" for sm, n in sorted(cubins.items()))
    if ptx_files:
        counts += "; PTX " + ", ".join(f"sm_{sm}: {n}" for sm, n in sorted(ptx_files.items()))
    extra = ", ".join(f"sm_{sm} ({n} cubins)" for sm, n in partial.items())
    return ";".join(items), counts, extra


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cuobjdump", default="/usr/local/cuda/bin/cuobjdump")
    ap.add_argument("--python", default="3.11", help="CPython whose wheel is read (default 3.11)")
    ap.add_argument("versions", nargs="+")
    args = ap.parse_args()
    rows = []
    for version in args.versions:
        with tempfile.TemporaryDirectory(prefix="torch-wheel-") as folder:
            wheel = download(version, args.python, folder)
            name = os.path.basename(wheel)
            digest = sha256_of(wheel)
            pins = cuda_pins(wheel)
            archs, counts, extra = arch_list(wheel, args.cuobjdump, folder)
            rows.append((version, name, digest, cuda_of(pins), [p[2] for p in pins], archs, counts, extra))
            print(f"read {name}: CUDA {cuda_of(pins)}, {archs} (cubins per arch: {counts})", file=sys.stderr, flush=True)
    print("| torch | file read (sha256) | CUDA (its METADATA pin) | arch list (cuobjdump on torch/lib/libtorch_cuda.so) | kernels for one arch more |")
    print("|---|---|---|---|---|")
    for version, name, digest, cuda, pins, archs, counts, extra in rows:
        print(f"| {version} | {name} ({digest[:12]}…) | {cuda} (`{pins[0] if pins else 'no CUDA pin'}`) | {archs} | {extra or '-'} |")
    print()
    for version, name, digest, cuda, pins, archs, counts, extra in rows:
        print(f"- torch: ['{version}']\n  cuda: '{cuda}'\n  arch_list: {archs}\n"
              f"  source: '{name} (sha256 {digest}): METADATA {pins[0] if pins else 'no CUDA pin'}; "
              f"cuobjdump --list-elf/--list-ptx torch/lib/libtorch_cuda.so'")


if __name__ == "__main__":
    main()
