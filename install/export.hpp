#pragma once
// `envlock export`: a lock rewritten for people who keep using pip or conda — a pip
// --require-hashes requirements file, a conda @EXPLICIT list with hashes, an environment.yml
// with exact pins.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/lock/lock.hpp"
#include "resolver/specs/record.hpp"

namespace envlock::install {

enum class ExportFormat { requirements, conda_explicit, environment_yml };

// "requirements", "conda-explicit", "environment-yml"; InputError listing the formats otherwise.
ExportFormat parse_export_format(std::string_view name);

// What a requirements export lists for each PyPI release. A lock holds one file per release,
// the one its target installs; pip elsewhere needs the hash of the file it picks there. With
// `files` (each locked release's files as its index lists them, read by the caller: normalized
// name -> records), every file's hash is listed (as `uv pip compile --generate-hashes`), or,
// with `python` (and `platform`, default linux-64), only those that Python installs there.
struct RequirementsOptions {
    std::map<std::string, IndexRecords> files;
    std::string python, platform;
};

// `lock_name` is how the header comment names the lock ("envlock.yaml").
std::string export_lock(const Lock& lock, ExportFormat format, std::string_view lock_name = "envlock.yaml",
                        const RequirementsOptions& requirements = {});

// The indexes and find-links pages a lock's PyPI packages came through, where the caller reads
// every file of the locked releases.
struct PipSources {
    std::vector<std::string> indexes, find_links;
};
PipSources pip_sources(const Lock& lock);

// The sha256 of each file of `p`'s release among `files` that `python`/`platform` installs
// ("" = any), the locked file first; a local file:// one the index gives no hash for is hashed
// here, a remote one without a hash is left out. UnmetError where that Python has no file.
std::vector<std::string> release_hashes(const LockedPackage& p, const IndexRecords& files, const std::string& python,
                                        const std::string& platform);

}  // namespace envlock::install
