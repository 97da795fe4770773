#pragma once
// --repair's two questions about a live prefix: which recorded files are missing or no longer
// what was installed (size, sha256, link target), and which files no locked package owns
// that must go because they change what the environment imports (a pip-installed numpy over
// the locked one, a stray .pth, a conda package installed by hand).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "install/installed.hpp"

namespace envlock::install {

struct Damage {
    std::size_t package = 0;      // index into the packages checked
    std::string path;             // prefix-relative
    std::string what;             // "missing", "modified", "not a link to X" ...
};

// Every file of every package, hashed on up to `threads` threads.
std::vector<Damage> find_damage(const std::filesystem::path& prefix, const std::vector<InstalledPackage>& packages,
                                int threads);

struct Foreign {
    std::vector<std::string> remove;   // prefix-relative files to take out
    std::vector<std::string> why;      // one line per foreign distribution or record found
    std::size_t unknown_kept = 0;      // other unowned files, left alone (user data, caches)
};

// Unowned *.dist-info / *.egg-info in site-packages (with every unowned file their RECORD or
// SOURCES list, confined to the prefix), unowned .pth and .egg-link files there, unowned files
// inside a locked package's import directory, and conda-meta records of packages not in the
// lock (with the unowned files they list). `site_packages` "" skips the Python rules.
Foreign find_foreign(const std::filesystem::path& prefix, const std::vector<InstalledPackage>& packages,
                     const std::string& site_packages);

}  // namespace envlock::install
