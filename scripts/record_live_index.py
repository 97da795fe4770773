#!/usr/bin/env python3
"""Records the live-index fixture (tests/fixtures/live-index/) once, from a real simple index.

Opt-in, never run by the tests: the tests serve what this wrote from a loopback server that
behaves as the live index does (no advertised core metadata, sidecars for some files only,
Range support, big files).

What it records, for the fixture specs below (python 3.10 on x86_64 manylinux_2_28):
  pages/<project>.json     the project's PEP 691 page, cut to the versions kept (below), with
                           each file's URL made relative ("../../files/<filename>") so that no
                           registry host is written into the repo, and only the keys a resolver
                           reads (filename, url, hashes, requires-python, yanked, size).
  metadata/<project>.json  {filename: METADATA header lines} for the one wheel per kept version
                           that the target installs best (what a resolver should read), read
                           with HTTP range requests on the wheel's zip directory, cut to the
                           fields a resolver reads (Metadata-Version, Name, Version,
                           Requires-Dist, Requires-Python, Provides-Extra, Dynamic).
Kept versions of a project: those some dependent's requirement (or a spec) allows, whose
Requires-Python admits 3.10 and that have a wheel the target installs, newest first, at most
--per-project of them (pinned versions always). Versions with only an sdist, or only other
platforms' wheels, are left out of the page whole.

Usage: scripts/record_live_index.py [--index-url URL] [--out DIR] [--per-project N]
The index defaults to envlock's default index (https://pypi.org/simple), as pip reaches it.
"""
import argparse
import concurrent.futures
import json
import os
import ssl
import struct
import sys
import time
import urllib.error
import urllib.request
import zlib

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

# The specs the fixture serves (issue #28's cases).
SPECS = {
    "four": ["requests", "numba==0.58.1", "numpy<2", "yapf==0.40.1"],
    "scipy": ["scipy==1.11.3"],
    "torch": ["torch==2.1.2", "torchvision==0.16.2", "numpy<2", "numba==0.58.1", "yapf==0.40.1", "mmengine==0.10.3"],
}
PYTHON = (3, 10)
KEEP_FIELDS = {"metadata-version", "name", "version", "requires-dist", "requires-python", "provides-extra", "dynamic"}
ACCEPT = "application/vnd.pypi.simple.v1+json"


def target_tags():
    platforms = [f"manylinux_2_{g}_x86_64" for g in range(28, 4, -1)]
    platforms += ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64"]
    tags = list(cpython_tags(PYTHON, platforms=platforms)) + list(compatible_tags(PYTHON, "cp310", platforms))
    return {t: i for i, t in enumerate(tags)}


def marker_env(extra):
    env = default_environment()
    env.update(python_version="3.10", python_full_version="3.10.12", sys_platform="linux", platform_system="Linux",
               platform_machine="x86_64", os_name="posix", implementation_name="cpython",
               platform_python_implementation="CPython", extra=extra)
    return env


class Index:
    def __init__(self, url):
        self.url = url.rstrip("/")
        self.ctx = ssl.create_default_context(cafile=os.environ.get("PIP_CERT") or None)
        self.bytes = 0

    def get(self, url, headers=None):
        for attempt in range(5):
            try:
                req = urllib.request.Request(url, headers=headers or {})
                with urllib.request.urlopen(req, context=self.ctx, timeout=60) as r:
                    body = r.read()
                    self.bytes += len(body)
                    return r.status, r.headers, body
            except urllib.error.URLError as e:   # HTTPError too: a 5xx or a hiccup in name resolution
                if attempt == 4 or getattr(e, "code", 500) < 500:
                    raise
                time.sleep(0.5 * 2 ** attempt)

    def page(self, project):
        status, _, body = self.get(f"{self.url}/{project}/", {"Accept": ACCEPT})
        return json.loads(body)

    def range(self, url, spec):
        status, headers, body = self.get(url, {"Range": f"bytes={spec}", "Accept-Encoding": "identity"})
        if status != 206:
            raise RuntimeError(f"{url}: the server answered {status} to a Range request")
        total = int(headers["Content-Range"].rsplit("/", 1)[1])
        start = int(headers["Content-Range"].split()[1].split("-")[0])
        return start, total, body


def metadata_by_range(index, url):
    """The wheel's *.dist-info/METADATA, read with two or three range requests."""
    start, total, tail = index.range(url, "-16384")
    eocd = tail.rfind(b"PK\x05\x06")
    if eocd < 0:
        raise RuntimeError(f"{url}: no end of central directory in the last 16 KiB")
    entries, cd_size, cd_offset = struct.unpack("<HII", tail[eocd + 10:eocd + 20])
    if cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF:   # ZIP64
        loc = tail.rfind(b"PK\x06\x07", 0, eocd)
        (z64_offset,) = struct.unpack("<Q", tail[loc + 8:loc + 16])
        rec = z64_offset - start
        cd_size, cd_offset = struct.unpack("<QQ", tail[rec + 40:rec + 56])
    if cd_offset < start:   # the directory begins before the tail read: read the rest of it
        _, _, head = index.range(url, f"{cd_offset}-{start - 1}")
        tail = head + tail
        start = cd_offset
    cd = tail[cd_offset - start:cd_offset - start + cd_size]
    at = 0
    found = None
    while at + 46 <= len(cd) and cd[at:at + 4] == b"PK\x01\x02":
        method, = struct.unpack("<H", cd[at + 10:at + 12])
        csize, usize = struct.unpack("<II", cd[at + 20:at + 28])
        nlen, elen, clen = struct.unpack("<HHH", cd[at + 28:at + 34])
        offset, = struct.unpack("<I", cd[at + 42:at + 46])
        name = cd[at + 46:at + 46 + nlen].decode("utf-8", "replace")
        extra = cd[at + 46 + nlen:at + 46 + nlen + elen]
        if 0xFFFFFFFF in (csize, usize, offset):
            e = 0
            while e + 4 <= len(extra):
                hid, hlen = struct.unpack("<HH", extra[e:e + 4])
                if hid == 1:
                    vals = extra[e + 4:e + 4 + hlen]
                    k = 0
                    if usize == 0xFFFFFFFF: usize, = struct.unpack("<Q", vals[k:k + 8]); k += 8
                    if csize == 0xFFFFFFFF: csize, = struct.unpack("<Q", vals[k:k + 8]); k += 8
                    if offset == 0xFFFFFFFF: offset, = struct.unpack("<Q", vals[k:k + 8]); k += 8
                e += 4 + hlen
        parts = name.split("/")
        if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA":
            found = (method, csize, offset)
        at += 46 + nlen + elen + clen
    if not found:
        raise RuntimeError(f"{url}: no *.dist-info/METADATA in the central directory")
    method, csize, offset = found
    want_end = offset + 30 + 1024 + csize
    if offset >= start and want_end <= start + len(tail):
        local = tail[offset - start:]
    else:
        _, _, local = index.range(url, f"{offset}-{min(total, want_end) - 1}")
    nlen, elen = struct.unpack("<HH", local[26:30])
    data = local[30 + nlen + elen:30 + nlen + elen + csize]
    if method == 8:
        data = zlib.decompressobj(-15).decompress(data)
    elif method != 0:
        raise RuntimeError(f"{url}: METADATA compressed with method {method}")
    return data.decode("utf-8")


def cut_metadata(text):
    """The header lines a resolver reads (continuation lines kept with their field)."""
    out = []
    keep = False
    for line in text.splitlines():
        if line == "":
            break
        if line[0] in " \t":
            if keep:
                out.append(line)
            continue
        keep = line.split(":", 1)[0].strip().lower() in KEEP_FIELDS
        if keep:
            out.append(line)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index-url", default="https://pypi.org/simple")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "live-index"))
    ap.add_argument("--per-project", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=8)
    args = ap.parse_args()
    index = Index(args.index_url)
    tags = target_tags()
    py = Version("3.10.12")

    pages = {}          # project -> page json
    specifiers = {}     # project -> list of SpecifierSet (any of them allows a version)
    extras = {}         # project -> set of extras asked for
    metadata = {}       # project -> {filename: cut METADATA}
    kept = {}           # project -> {version: best wheel filename}
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)

    def demand(req):
        name = canonicalize_name(req.name)
        specifiers.setdefault(name, [])
        extras.setdefault(name, set())
        changed = False
        if str(req.specifier) not in [str(s) for s in specifiers[name]]:
            specifiers[name].append(req.specifier)
            changed = True
        for e in req.extras:
            if e not in extras[name]:
                extras[name].add(e)
                changed = True
        return name, changed

    dirty = set()
    for reqs in SPECS.values():
        for r in reqs:
            dirty.add(demand(Requirement(r))[0])

    while dirty:
        wave = sorted(dirty)
        dirty = set()
        for name, page in zip(wave, pool.map(lambda n: pages.get(n) or index.page(n), wave)):
            pages[name] = page
        reads = []
        for name in wave:
            by_version = {}
            for f in pages[name]["files"]:
                fn = f["filename"]
                if not fn.endswith(".whl"):
                    continue
                try:
                    _, v, _, wtags = parse_wheel_filename(fn)
                except Exception:
                    continue
                rp = f.get("requires-python")
                try:
                    if rp and py not in SpecifierSet(rp):
                        continue
                except Exception:
                    continue
                rank = min((tags[t] for t in wtags if t in tags), default=None)
                if rank is None:
                    continue
                best = by_version.get(v)
                if best is None or rank < best[0]:
                    by_version[v] = (rank, fn)
            allowed = [v for v in by_version if any(s.contains(v) for s in specifiers[name])]
            allowed.sort(reverse=True)
            pinned = [v for v in allowed if any(str(s).startswith("==") for s in specifiers[name])]
            chosen = allowed[:args.per_project] + [v for v in pinned if v not in allowed[:args.per_project]]
            kept.setdefault(name, {})
            for v in chosen:
                fn = by_version[v][1]
                kept[name][v] = fn
                if fn not in metadata.setdefault(name, {}):
                    url = next(f["url"] for f in pages[name]["files"] if f["filename"] == fn)
                    reads.append((name, fn, url))
        results = pool.map(lambda t: (t, metadata_by_range(index, t[2])), reads)
        for (name, fn, url), text in results:
            metadata[name][fn] = cut_metadata(text)
        # Follow every kept version's requirements whose markers hold for the target.
        for name in list(kept):
            for v, fn in kept[name].items():
                for line in [l[len("Requires-Dist:"):].strip() for l in metadata[name][fn].splitlines() if l.startswith("Requires-Dist:")]:
                    try:
                        req = Requirement(line)
                    except Exception:
                        continue
                    if req.marker and not any(req.marker.evaluate(marker_env(e)) for e in (extras[name] | {""})):
                        continue
                    dep, changed = demand(req)
                    if changed or dep not in pages:
                        dirty.add(dep)
        print(f"wave of {len(wave)} projects, {len(reads)} metadata reads, {index.bytes >> 10} KiB so far", file=sys.stderr)

    os.makedirs(os.path.join(args.out, "pages"), exist_ok=True)
    os.makedirs(os.path.join(args.out, "metadata"), exist_ok=True)
    for name, page in sorted(pages.items()):
        versions = set(kept.get(name, {}))
        files = []
        for f in page["files"]:
            fn = f["filename"]
            try:
                v = parse_wheel_filename(fn)[1] if fn.endswith(".whl") else None
            except Exception:
                v = None
            if v not in versions:
                continue
            files.append({"filename": fn, "url": "../../files/" + fn, "hashes": {"sha256": f["hashes"]["sha256"]},
                          "requires-python": f.get("requires-python"), "size": f.get("size"),
                          "yanked": f.get("yanked", False)})
        with open(os.path.join(args.out, "pages", name + ".json"), "w") as fh:
            # One file a line: a re-recording reads as a diff of files.
            fh.write('{"meta": {"api-version": "1.0"}, "name": %s, "files": [\n' % json.dumps(name))
            fh.write(",\n".join(json.dumps(f, sort_keys=True) for f in files))
            fh.write("\n]}\n")
        with open(os.path.join(args.out, "metadata", name + ".json"), "w") as fh:
            json.dump(dict(sorted(metadata.get(name, {}).items())), fh, indent=0, sort_keys=True)
            fh.write("\n")
    print(f"{len(pages)} projects, {sum(len(m) for m in metadata.values())} METADATA, {index.bytes >> 10} KiB read",
          file=sys.stderr)


if __name__ == "__main__":
    main()
