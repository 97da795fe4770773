#!/usr/bin/env python3
"""One digest per prefix that does not depend on where the prefix is (bench/fanout.sh,
scripts/slurm-fanout.sh): equal digests mean byte-identical environments.

Each file's bytes (a link's target, and the x bit) with the prefix's own path replaced by
<PREFIX>; in the files that record hashes of prefix-replaced files (conda-meta records, RECORD,
.envlock/state.json) the hashes are masked, as are the install's own stamps (history's date
line, the state's generation), and so is the package cache a conda-meta record names (each
node may have its own). tests/unit/fanout/fanout_test.cpp applies the same rules.

usage: prefix_digest.py PREFIX...   prints "<digest> <files> PREFIX" per prefix
"""
import hashlib
import os
import re
import sys

HEX64 = re.compile(rb"[0-9a-f]{64}")
RECORD_HASH = re.compile(rb"sha256=[A-Za-z0-9_-]{43}")
GENERATION = re.compile(rb'"generation": "[0-9a-f]+"')
HISTORY_DATE = re.compile(rb"==> [0-9: -]+ <==")
CACHE_PATH = re.compile(rb'"/[^"]*?/pkgs/')


def normalized(prefix):
    own = os.path.abspath(prefix).encode()
    out = {}
    for d, dirs, files in os.walk(prefix):
        for name in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            path = os.path.join(d, name)
            rel = os.path.relpath(path, prefix)
            if os.path.islink(path):
                data = b"-> " + os.readlink(path).encode()
            else:
                with open(path, "rb") as f:
                    data = f.read()
                if os.access(path, os.X_OK):
                    data += b"\n[x]"
            data = data.replace(own, b"<PREFIX>")
            if rel.startswith("conda-meta/") or rel == ".envlock/state.json" or rel.endswith("/RECORD"):
                data = HEX64.sub(b"<sha256>", data)
                data = RECORD_HASH.sub(b"sha256=<hash>", data)
                data = GENERATION.sub(b'"generation": "<id>"', data)
                data = HISTORY_DATE.sub(b"==> <date> <==", data)
                data = CACHE_PATH.sub(b'"<CACHE>/pkgs/', data)
            out[rel] = hashlib.sha256(data).hexdigest()
    return out


for prefix in sys.argv[1:]:
    files = normalized(prefix)
    digest = hashlib.sha256("".join(f"{k}\0{v}\n" for k, v in sorted(files.items())).encode()).hexdigest()
    print(digest, len(files), prefix)
