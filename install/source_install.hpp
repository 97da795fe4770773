#pragma once
// Git sources of a lock: checked out at the locked commit under the env's src/, built with the
// env's own python through the project's PEP 517 backend (PEP 660 for editable installs), and
// installed as a wheel with direct_url.json naming the repository and commit (PEP 610).
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
    bool compile = false;
    int timeout_seconds = 3600;  // CUDA extensions take long to build
    std::string clone_url;       // where to clone from when a mirror serves package.url ("" = package.url);
                                 // direct_url.json still names package.url, as the lock does
};

struct SourceInstall {
    std::string checkout;        // prefix-relative: src/<name>
    std::string wheel;           // the wheel the backend built (removed after installing)
    InstalledWheel installed;
    std::string build_log;       // what the backend printed
};

// EnvironmentError naming the repository when it cannot be cloned or lacks the commit, and
// UnmetError (exit 1) with the backend's output when the build fails.
SourceInstall install_source(const LockedPackage& package, const PythonLayout& layout, const RunEnvironment& env,
                             const SourceOptions& options);

}  // namespace envlock::install
