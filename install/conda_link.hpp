#pragma once
// One conda package from its cached tree into a staged prefix: files hardlinked (copied where
// a placeholder is replaced or the package says no_link), symlinks re-created, noarch: python
// relocated with its entry points, and its conda-meta/<name>-<version>-<build>.json record.
#include <string>

#include "install/transaction.hpp"

namespace envlock::install {

InstalledPackage install_conda_package(const PackageContext& ctx);

// Where the environment's python puts things, from the lock's conda `python` and its cached
// tree (CEP 17's python_site_packages_path, refused when it leaves the prefix).
PythonInfo conda_python_info(const LockedPackage& python, const CacheEntry& cached);

// The longest prefix the package's binary placeholders allow (SIZE_MAX when it has none).
std::size_t max_prefix_length(const CacheEntry& cached);

}  // namespace envlock::install
