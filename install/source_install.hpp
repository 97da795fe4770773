#pragma once
// Source packages of a lock. Git sources: checked out at the locked commit under the env's src/,
// built with the env's own python through the project's PEP 517 backend (PEP 660 for editable
// installs), and installed as a wheel with direct_url.json naming the repository and commit
// (PEP 610). Sdists: built from the package cache's unpacked tree the same way (source_build).
#include <optional>
#include <string>
#include <vector>

#include "install/python_env.hpp"
#include "install/run_env.hpp"
#include "install/wheel_install.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::install {

// "pip install -v -e .", "python setup.py develop" -> true; "pip install .", "python setup.py
// install" or nothing -> false.
bool is_editable_install(const std::string& documented_command);

struct SourceOptions {
    std::string stage;           // as WheelOptions::stage: "" in place, else the staged copy of the prefix
    std::string python;          // runnable interpreter of the env (in the stage when staging)
    bool editable = false;
    std::string project_dir;     // where setup.py/pyproject.toml sit in the checkout ("" = its root)
    bool compile = false;
    int timeout_seconds = 3600;  // CUDA extensions take long to build
    std::string clone_url;       // where to clone from when a mirror serves package.url ("" = package.url);
                                 // direct_url.json still names package.url, as the lock does
    std::string cache_dir;       // the shared cache: built wheels under <cache>/built ("" = none kept)
    const Lock* lock = nullptr;  // the lock being installed (its torch is part of the build's key)
    std::string where;           // how errors name the package ("envlock.yaml:57: fvcore 0.1.5")
    bool requested = true;       // sdists: REQUESTED (the spec asked for it)
    std::optional<DirectUrl> direct_url;   // sdists: as for a wheel from the same place
};

struct SourceInstall {
    std::string checkout;        // prefix-relative: src/<name>
    std::string wheel;           // the wheel the backend built (removed after installing)
    InstalledWheel installed;
    std::string build_log;       // what the backend printed ("" when the wheel came from the cache)
    std::string log_path;        // where the build's log is kept ("" without a cache)
    bool from_cache = false;     // the built-wheel cache had it: nothing was compiled
};

struct SdistInstall {
    InstalledWheel installed;
    std::string build_log, log_path;
    bool from_cache = false;
};

// EnvironmentError naming the repository when it cannot be cloned or lacks the commit, and
// UnmetError (exit 1) with the backend's output when the build fails.
SourceInstall install_source(const LockedPackage& package, const PythonLayout& layout, const RunEnvironment& env,
                             const SourceOptions& options);

// A PyPI sdist whose archive the package cache verified and unpacked into `tree`: built into a
// wheel with the env's python (install/source_build.hpp: no isolation, the built-wheel cache)
// and installed. InputError when the tree holds no project; UnmetError when the build fails.
SdistInstall install_sdist(const LockedPackage& package, const std::string& tree, const PythonLayout& layout,
                           const RunEnvironment& env, const SourceOptions& options);

}  // namespace envlock::install
