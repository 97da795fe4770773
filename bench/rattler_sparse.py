"""Peer for bench/channels.sh: py-rattler's sparse repodata over the same file, loading the
records of the given names (the names envlock's closure looks up in the big channel; its
generated records depend on random names, so following depends would read the whole channel).
Usage: python rattler_sparse.py REPODATA.json NAME...   (prints the record count)"""
import sys

from rattler import Channel, PackageName, SparseRepoData
from rattler.repo_data.sparse import PackageFormatSelection

repodata = SparseRepoData(Channel("big"), "linux-64", sys.argv[1])
print(sum(len(repodata.load_records(PackageName(n), PackageFormatSelection.BOTH)) for n in sys.argv[2:]))
