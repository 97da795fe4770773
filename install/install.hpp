#pragma once
// install/ owns materializing a lock: the content-addressed package cache, safe extraction,
// the prefix layout (conda-meta, prefix replacement, entry points; wheels and venvs), and
// transactions with recovery and --repair. It decides no versions: the lock has them.
#include "install/conda_link.hpp"
#include "install/extract.hpp"
#include "install/file_lock.hpp"
#include "install/installed.hpp"
#include "install/link.hpp"
#include "install/package_cache.hpp"
#include "install/prefix_record.hpp"
#include "install/python_steps.hpp"
#include "install/transaction.hpp"

namespace envlock::install {

// Fills the per-kind installers every envlock build has (wheels, venvs and sources, once
// they are built in); conda packages are always installed by install_conda_package.
void use_default_installers(InstallOptions& options, const PythonStepOptions& python = {});

}  // namespace envlock::install
