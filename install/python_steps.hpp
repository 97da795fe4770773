#pragma once
// The Python half in the form the transaction calls it (transaction.hpp): PyPI wheels, sdists
// and git sources (built in the env, source_build.hpp), and a venv for locks without a conda python. Each writes under the stage only and
// names the final prefix in what it writes.
#include <string>
#include <vector>

#include "install/transaction.hpp"

namespace envlock::install {

struct PythonStepOptions {
    bool compile = false;                           // --compile: bytecode for installed .py files
    std::vector<std::string> interpreter_dirs;      // where base interpreters are looked for; empty: default_interpreter_dirs()
    fetch::Mirrors mirrors;                         // git sources are cloned through these (--mirror)
    std::string probe_cache;                        // where interpreter answers are kept; empty: ask every time
    // install --python X.Y[.Z]: the venv's base interpreter (as uv's -p); it must be of the
    // lock's Python, which the packages were chosen for. Empty: the lock's.
    std::string python;
    std::string cache_dir;                          // the shared cache: sources' built wheels go to <cache_dir>/built ("" = not kept)
    bool offline = false;                           // --offline: a git source is cloned only from a local folder (a mirror's file://)
};

// A PyPI entry whose file is not a wheel (an sdist: .tar.gz, .zip): it is built, not unpacked.
bool is_sdist(const LockedPackage& package);

PackageInstaller wheel_installer(const PythonStepOptions& options = {});
PackageInstaller source_installer(const PythonStepOptions& options = {});
VenvMaker venv_maker(const PythonStepOptions& options = {});

// Sets options.install_wheel, install_source and make_venv (mirrors taken from options.fetch).
void use_python_installers(InstallOptions& options, const PythonStepOptions& python = {});

}  // namespace envlock::install
