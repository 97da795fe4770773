#pragma once
// A re-resolve whose inputs did not change reuses the lock it would write again, as `uv lock`
// does when its lock is current: the spec, targets and knowledge hash to the lock's
// content-hash, the envlock binary is the one that solved it, and every index document that
// solve read answers unchanged (file:// by stat, HTTP by a 304 or a still-fresh cache entry).
// The proof still runs on the reused lock (check_lock: entries, names, self-check).
//
// What makes that cheap is the memo a full resolve leaves in the cache, one per lock path:
// the stamps of the documents read, the notes said, and the lock in JSON form with the
// sha256 of the lock file's bytes, so the lock is read without YAML while the file is the one
// written. <cache>/resolves/<sha256 of the lock's absolute path>.json
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "fetch/build_id.hpp"
#include "fetch/documents.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock {

struct ResolveMemo {
    std::string lock_sha256;                  // of the lock file's bytes as written
    std::string build_id;                     // binary_build_id() of the envlock that solved
    std::vector<fetch::DocumentStamp> read;   // every index document the solve used
    std::vector<std::string> notes;           // what that resolve said besides the lock
    Lock lock;
};


std::filesystem::path memo_path(const std::filesystem::path& cache_dir, const std::string& lock_path);

// The memo of `lock_path` when it was made by this binary from exactly `lock_text`; nullopt
// when there is none, it is damaged, or it is another lock's.
std::optional<ResolveMemo> read_memo(const std::filesystem::path& cache_dir, const std::string& lock_path,
                                     std::string_view lock_text);

// Written to a temp file and renamed; a cache that cannot be written only costs the next
// re-resolve its shortcut.
void write_memo(const std::filesystem::path& cache_dir, const std::string& lock_path, const ResolveMemo& memo);

}  // namespace envlock
