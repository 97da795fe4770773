#pragma once
// `envlock mirror LOCK... DIR`: exactly what the locks need, in a folder any static HTTP server
// (nginx, an object store) or file:// serves as the original indexes: conda channels with their
// records, PEP 503/691 simple pages with PEP 658 metadata, find-links pages, bare git
// repositories at the locked commits, optionally the built-wheel cache's entries of the locks'
// source builds, and DIR/mirrors.yaml mapping every origin the locks use into the folder.
//
//   DIR/<host>/<path of the URL>     every artifact, at its URL's path (percent-decoded)
//   DIR/<host>/<path>.metadata       a wheel's METADATA (PEP 658)
//   DIR/<host>/<git repository path> bare repositories, branch locked/<commit> per locked commit
//   DIR/built/<key>/                 --with-builds: <cache>/built/<key> as install keys it
//   DIR/mirrors.yaml                 origin -> folder, relative (or under --base-url)
//   DIR/envlock-mirror.json          what the folder holds, so a re-run adds and --prune removes
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "fetch/settings.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::publish {

struct LockFile {
    Lock lock;
    std::string path;    // where it was read from: errors name its lines ("envlock.yaml:57: torch 1.9.1")
};

struct MirrorOptions {
    std::filesystem::path dir;
    fetch::FetchContext fetch;   // where the files come from: its mirrors, its package cache, offline
    bool prune = false;          // remove what no given lock needs (only what an earlier run wrote)
    bool with_builds = false;    // copy <cache>/built/<key> of the locks' git sources and sdists
    std::string base_url;        // "" : mirrors.yaml maps to folders beside it; else the URL DIR is served at
    std::function<void(const std::string&)> say;   // what it does, one line each ("" = quiet)
};

struct MirrorSummary {
    std::size_t files = 0, files_added = 0;       // artifacts the locks need; copied by this run
    std::uint64_t bytes = 0, bytes_added = 0;     // their sizes
    std::uint64_t locks_bytes = 0;                // the locks' artifacts, each file once, as the locks size them
    std::size_t git_sources = 0, git_added = 0;   // locked commits; fetched by this run
    std::size_t builds = 0, builds_added = 0;     // built-wheel entries (--with-builds)
    std::vector<std::string> builds_missing;      // sources with no built wheel in the cache, by lock line
    std::size_t removed = 0;                      // --prune: files and folders taken out
    std::uint64_t folder_bytes = 0;               // everything under DIR: artifacts, metadata, pages, git, builds
};

// Copies what `locks` need into options.dir. Each artifact comes through the package cache
// (install/package_cache: a file already there is linked or copied, not fetched again) and is
// hashed against the lock's sha256 (md5 when it has none) before it is renamed into the folder.
// A re-run adds what is new and removes nothing; with `prune` what no lock needs goes.
// Errors name the lock line: EnvironmentError for a file that cannot be fetched or does not
// match (exit 3), InputError for a lock entry without a hash or a URL no folder can hold.
MirrorSummary mirror_locks(const std::vector<LockFile>& locks, const MirrorOptions& options);

}  // namespace envlock::publish
