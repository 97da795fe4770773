"""Peer for bench/conda.sh: py-rattler's solve over the same snapshot channels and the same
virtual packages as envlock's target, strict channel priority (envlock's default).
  python rattler_solve.py once CHANNELS VIRTUALS SPEC...
      one solve, as a whole process does it (import, read the repodata, solve); prints
      "solved N" or "unsatisfiable" and the first line of rattler's explanation
  python rattler_solve.py warm RUNS CHANNELS VIRTUALS SPEC...
      inside one live interpreter, the repodata opened once: RUNS solves after one warm-up,
      each solve's milliseconds on a line (what rattler costs a caller that stays running)
CHANNELS: NAME=DIR,... in priority order (DIR/<subdir>/repodata.json for linux-64 and noarch);
VIRTUALS: NAME=VERSION,... (e.g. __glibc=2.31,__linux=5.15.0,__cuda=11.4,__unix=0)."""
import asyncio
import os
import sys
import time

from rattler import BuildString, Channel, GenericVirtualPackage, PackageName, SparseRepoData, Version, solve_with_sparse_repodata
from rattler.exceptions import SolverError


def repodata(channels):
    out = []
    for item in channels.split(","):
        name, folder = item.split("=", 1)
        channel = Channel(name)
        for subdir in ("linux-64", "noarch"):
            path = os.path.join(folder, subdir, "repodata.json")
            if os.path.exists(path):
                out.append(SparseRepoData(channel, subdir, path))
    return out


def virtuals(text):
    out = []
    for item in filter(None, text.split(",")):
        name, version = item.split("=", 1)
        out.append(GenericVirtualPackage(PackageName(name), Version(version), BuildString("0")))
    return out


def solve(sparse, virtual, specs):
    try:
        return "solved %d" % len(asyncio.run(solve_with_sparse_repodata(specs, sparse, virtual_packages=virtual)))
    except SolverError as e:
        return "unsatisfiable: " + str(e).strip().splitlines()[0]


def main():
    mode = sys.argv[1]
    if mode == "once":
        channels, virtual_text, specs = sys.argv[2], sys.argv[3], sys.argv[4:]
        print(solve(repodata(channels), virtuals(virtual_text), specs))
        return
    runs, channels, virtual_text, specs = int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
    sparse, virtual = repodata(channels), virtuals(virtual_text)
    solve(sparse, virtual, specs)
    for _ in range(runs):
        start = time.perf_counter()
        solve(sparse, virtual, specs)
        print(int((time.perf_counter() - start) * 1000))


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    # py-rattler 0.28 crashes in interpreter shutdown after a solve (SIGSEGV); what was asked is done.
    os._exit(0)
