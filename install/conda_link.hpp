#pragma once
// One conda package from its cached tree into a staged prefix: files hardlinked (copied where
// a placeholder is replaced or the package says no_link), symlinks re-created, noarch: python
// relocated with its entry points, and its conda-meta/<name>-<version>-<build>.json record.
#include <string>

#include "install/conda_package.hpp"
#include "install/transaction.hpp"

namespace envlock::install {

// `info` is the cached tree's read_conda_package (read once by the transaction).
InstalledPackage install_conda_package(const PackageContext& ctx, const CondaPackageInfo& info);
InstalledPackage install_conda_package(const PackageContext& ctx);

// Every path (files, links, entry points, the conda-meta record) the package will put into a
// prefix with this python: what the transaction compares to find packages that clobber.
std::vector<std::string> conda_package_paths(const CondaPackageInfo& info, const PythonInfo& python);

// Where the environment's python puts things, from the lock's conda `python` and its cached
// tree (CEP 17's python_site_packages_path, refused when it leaves the prefix).
PythonInfo conda_python_info(const LockedPackage& python, const CacheEntry& cached);

// The longest prefix the package's binary placeholders allow (SIZE_MAX when it has none).
std::size_t max_prefix_length(const CondaPackageInfo& info);
std::size_t max_prefix_length(const CacheEntry& cached);

}  // namespace envlock::install
