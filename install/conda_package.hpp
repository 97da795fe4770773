#pragma once
// What an extracted conda package says about itself: info/index.json, info/paths.json (or
// the older info/files, has_prefix and no_link), and info/link.json's noarch entry points
// (CEP 34, CEP 20).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace envlock::install {

enum class PathType { hardlink, softlink, directory };
enum class FileMode { text, binary };

struct PackagePath {
    std::string path;              // '/'-separated, relative to the package root
    PathType type = PathType::hardlink;
    FileMode file_mode = FileMode::text;
    std::string placeholder;       // "" when the file has no prefix to replace
    bool no_link = false;          // must be copied
    std::string sha256;            // "" when the package does not say (info/files only)
    std::uint64_t size = 0;
};

struct CondaPackageInfo {
    std::string name, version, build;
    int build_number = 0;
    std::string subdir, license;
    std::string noarch;                     // "", "generic" or "python" (legacy `true` = generic)
    std::uint64_t timestamp = 0;
    std::vector<std::string> depends, constrains;
    std::string track_features;
    std::string python_site_packages_path;  // CEP 17; the python package only
    std::vector<PackagePath> paths;
    std::vector<std::string> entry_points;  // noarch python: "cmd = module:func"
};

// InputError naming the file when index.json is missing or a manifest is malformed.
CondaPackageInfo read_conda_package(const std::filesystem::path& tree);

// paths.json text for a package that only has the old manifests; lets the cache check and
// repair work the same way on every package. (Exposed for tests.)
std::vector<PackagePath> read_legacy_manifests(const std::filesystem::path& tree);

// A noarch: python path moved where the environment's python wants it: "site-packages/x"
// -> "<site_packages>/x", "python-scripts/x" -> "bin/x"; others unchanged.
std::string relocate_noarch_python(const std::string& path, const std::string& site_packages);

}  // namespace envlock::install
