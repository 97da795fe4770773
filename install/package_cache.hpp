#pragma once
// The content-addressed package cache every environment shares: each verified artifact and
// its extracted tree under <cache>/pkgs/<sha256>/, fetched in parallel and extracted under
// per-entry file locks. Nothing unverified is ever extracted or kept.
//
//   <cache>/pkgs/<sha256>/<filename>   the archive, hashed while it streamed in
//   <cache>/pkgs/<sha256>/tree/        its contents (complete when present: renamed in whole)
//   <cache>/pkgs/<sha256>/tree.members a wheel tree's files (size, x bit, name), written before
//                                      the tree is renamed in, so a warm install stats nothing
//   <cache>/pkgs/<sha256>.lock         locked (install/file_lock) while the entry is fetched or extracted
//
// No repodata_record.json is written into a shared tree: records come from the lock, never
// from whichever lock first filled the cache (mamba#4052).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "fetch/settings.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::install {

struct CacheEntry {
    std::string url;
    std::string filename;           // the URL's last segment, percent-decoded
    std::string sha256, md5;        // expected (the lock's); sha256 wins when both are there
    std::uint64_t size = 0;         // expected archive size; 0 when unknown
    std::filesystem::path dir;      // <cache>/pkgs/<sha256> (md5-only: md5-<md5>)

    std::filesystem::path archive() const { return dir / filename; }
    std::filesystem::path tree() const { return dir / "tree"; }
};

// InputError when the package has neither sha256 nor md5: envlock installs nothing unverified.
CacheEntry cache_entry(const std::filesystem::path& cache_dir, const LockedPackage& package);

struct FetchProgress {
    std::size_t index = 0;          // into the entries given to populate_cache
    std::uint64_t received = 0, total = 0;   // total 0: not known yet
    bool done = false;
    bool cached = false;            // it was already in the cache: nothing was downloaded
};

// Makes every entry's archive (and, with `extract`, its tree) present and verified:
// downloads what is missing through fetch/ (parallel, hashed while streaming: a mismatch
// names the URL and both hashes, and nothing of the bad file stays), re-hashes a kept archive
// before extracting it, extracts with extract_conda_package / extract_archive. An entry
// another envlock is filling is waited for, then used. Throws EnvironmentError (network,
// offline and missing) or InputError (bad hash, unsafe archive); finished entries stay.
void populate_cache(const std::vector<CacheEntry>& entries, const fetch::FetchContext& ctx,
                    const std::function<void(const FetchProgress&)>& progress = {}, bool extract = true);

// The tree against the package's own manifest (conda info/paths.json, a wheel's RECORD):
// sizes only, or `full` sha256 too. A bad tree is removed (so the next populate_cache
// extracts it again from the re-verified archive) and false is returned.
bool check_tree(const CacheEntry& entry, bool full);

// Hex digests of a file, for re-verifying a kept archive.
std::string md5_of_file(const std::filesystem::path& path);

// The archive's md5 (conda-meta records carry it even when the lock has only sha256): the
// lock's when it has one, else <dir>/md5, written the first time it is needed, so a warm
// install reads 32 bytes instead of hashing the archive again.
std::string archive_md5(const CacheEntry& entry);

}  // namespace envlock::install
