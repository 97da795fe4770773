#!/usr/bin/env python3
"""Writes the seed inputs of one fuzz target (scripts/fuzz.sh calls this).

usage: fuzz_seed.py TARGET OUT_DIR SHARED_DIR

Seeds come from the tests' own inputs (the string literals of the test files that exercise
the target's parser, raw strings included) and, for the readers of real data, from small
slices of the snapshots in SHARED_DIR/snapshots (read in place, never copied whole; the
slices land in OUT_DIR, inside the fuzz build directory, never in the repo) and the install
commands documented in SHARED_DIR/cases. Snapshot files small enough to fuzz whole are
passed to libFuzzer in place by fuzz.sh instead.
"""
import glob
import hashlib
import json
import os
import re
import sys

TESTS = {
    "pep440": ["tests/unit/pypi/pep440_*.cpp"],
    "pep508": ["tests/unit/pypi/pep508_test.cpp", "tests/unit/pypi/pep440_specifier_test.cpp"],
    "conda_version": ["tests/unit/conda/version_*.cpp"],
    "matchspec": ["tests/unit/conda/matchspec_test.cpp", "tests/unit/conda/version_spec_test.cpp"],
    "filenames": ["tests/unit/conda/filename_test.cpp", "tests/unit/pypi/wheel_test.cpp",
                  "tests/unit/pypi/snapshot_wheels_test.cpp"],
    "repodata": ["tests/unit/fetch/conda_repodata_test.cpp", "tests/unit/conda/repodata_test.cpp"],
    "pypi_json": ["tests/unit/fetch/pypi_readers_test.cpp", "tests/unit/fetch/index_list_test.cpp"],
    "page_records": [],
    "pypi_html": ["tests/unit/fetch/pypi_readers_test.cpp", "tests/unit/fetch/index_list_test.cpp"],
    "requirements_txt": ["tests/unit/infer/requirements_txt_test.cpp", "tests/unit/infer/fixtures_*.hpp",
                         "tests/unit/infer/repo_*_test.cpp"],
    "infer_docs": ["tests/unit/infer/markdown_shell_test.cpp", "tests/unit/infer/fixtures_*.hpp",
                   "tests/unit/infer/repo_*_test.cpp", "tests/unit/infer/followed_paths_test.cpp"],
    "setup_py": ["tests/unit/infer/setup_py_test.cpp", "tests/unit/infer/fixtures_*.hpp",
                 "tests/unit/infer/repo_*_test.cpp"],
    "lock": ["tests/unit/solve/lock_test.cpp", "tests/unit/infer/spec_io_test.cpp", "examples/*/recipe.yaml"],
    "target": ["tests/unit/target/*.cpp"],
    "extract": [],
}

RAW = re.compile(r'R"([^()\s\\]{0,16})\((.*?)\)\1"', re.S)
PLAIN = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def c_unescape(s):
    out, i = bytearray(), 0
    simple = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, '"': 34, "'": 39, "a": 7, "b": 8, "f": 12, "v": 11}
    b = s.encode("utf-8", "surrogateescape")
    while i < len(b):
        c = b[i]
        if c == 92 and i + 1 < len(b):
            n = chr(b[i + 1])
            if n == "x":
                m = re.match(rb"[0-9a-fA-F]{1,2}", b[i + 2:])
                if m:
                    out.append(int(m.group(0), 16))
                    i += 2 + len(m.group(0))
                    continue
            if n in simple:
                out.append(simple[n])
                i += 2
                continue
        out.append(c)
        i += 1
    return bytes(out)


def literals(path):
    text = open(path, encoding="utf-8", errors="surrogateescape").read()
    if not path.endswith((".cpp", ".hpp")):
        return [text.encode("utf-8", "surrogateescape")]
    found = [m.group(2).encode("utf-8", "surrogateescape") for m in RAW.finditer(text)]
    text = RAW.sub('""', text)
    text = re.sub(r"//[^\n]*", "", text)
    found += [c_unescape(m.group(1)) for m in PLAIN.finditer(text)]
    return [f for f in found if f and not f.startswith(b"#include")]


def save(out_dir, data, tag):
    name = tag + "-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)


def repodata_slices(shared, out_dir, per_file=12):
    """Small real repodata documents: the info block and the first records of each section."""
    for path in sorted(glob.glob(os.path.join(shared, "snapshots", "**", "*.json"), recursive=True)):
        if os.path.getsize(path) < 64 * 1024:
            continue   # fuzz.sh passes the small ones whole, in place
        doc = json.load(open(path))
        sliced = {}
        for key, value in doc.items():
            if key in ("packages", "packages.conda") and isinstance(value, dict):
                sliced[key] = dict(list(value.items())[:per_file])
            elif key.endswith((".tar.bz2", ".conda")):
                if sum(1 for k in sliced if k.endswith((".tar.bz2", ".conda"))) < per_file:
                    sliced[key] = value
            elif key in ("info", "repodata_version"):
                sliced[key] = value
        save(out_dir, json.dumps(sliced, indent=1).encode(), "snapshot-" + os.path.basename(path))


def case_commands(shared, out_dir):
    """The install commands the real paper repos document, as a shell script and as markdown."""
    for path in sorted(glob.glob(os.path.join(shared, "cases", "*.yaml"))):
        lines, on = [], False
        for line in open(path, encoding="utf-8"):
            if line.startswith("install_commands_documented"):
                on = True
                continue
            if on and not line.startswith("  "):
                on = False
            if on:
                cmd = line.strip()[2:].strip()
                cmd = re.sub(r'\s+#\s.*$', "", cmd) if not cmd.startswith('"') else cmd.strip('"')
                lines.append(cmd)
        if not lines:
            continue
        shell = ("\n".join(lines) + "\n").encode()
        save(out_dir, b"\x01" + shell, "case-sh")
        save(out_dir, b"\x00# Install\n\n```bash\n" + shell + b"```\n", "case-md")
        save(out_dir, b"\x02FROM nvidia/cuda:11.1-devel\n" + b"".join(b"RUN " + l.encode() + b"\n" for l in lines),
             "case-docker")


def main():
    target, out_dir, shared = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out_dir, exist_ok=True)
    for pattern in TESTS[target]:
        for path in sorted(glob.glob(pattern)):
            for lit in literals(path):
                if target == "infer_docs":
                    for selector in (b"\x00", b"\x01", b"\x02"):
                        save(out_dir, selector + lit, "test")
                else:
                    save(out_dir, lit, "test")
    if os.path.isdir(shared):
        if target == "repodata":
            repodata_slices(shared, out_dir)
        if target in ("infer_docs", "requirements_txt"):
            case_commands(shared, out_dir)


if __name__ == "__main__":
    main()
