#pragma once
// Source builds: an sdist's tree or a git checkout built into a wheel by the project's PEP 517
// backend, run by the env's own python WITHOUT build isolation (the way mmcv-full, mmdet3d and
// detectron2 document `pip install -v -e .` / `--no-build-isolation`), under `run`'s
// environment (CUDA_HOME, TORCH_CUDA_ARCH_LIST, CC/CXX, MAX_JOBS). The build requirements are
// therefore the environment's own locked packages: each one [build-system] requires (for a
// setup.py project without one, setuptools>=40.8.0 and wheel, as pip assumes) must be
// installed in the env at a version its specifier allows, else the build is refused before it
// starts, naming what to add to the spec. Built wheels are kept in the shared cache under a key
// of everything the build depends on, so a second environment links the wheel instead of
// compiling again:
//
//   <cache>/built/<key>/<wheel>.whl   the wheel the backend built
//   <cache>/built/<key>/tree/         its contents (hardlinked into environments), tree.members
//   <cache>/built/<key>/build.log     what the build printed; key.txt: the key's inputs, in words
//   <cache>/built/<key>.lock          locked (install/file_lock) while it is built
//   <cache>/built/failed/<name>-<version>-<key>.log   the log of a failed build
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "resolver/lock/lock.hpp"

namespace envlock::install {

struct BuildRequest {
    std::string name, version;          // the lock's, for messages
    std::string where;                  // how errors name the package: "envlock.yaml:57: fvcore 0.1.5"
    std::string project_dir;            // holds setup.py / pyproject.toml
    bool build_in_copy = false;         // the project dir is shared (the package cache): build in a copy
    std::string source_id;              // identifies the source: "sdist sha256:<hex>", "git <url> <commit>"
    std::string python;                 // the env's runnable interpreter
    std::map<std::string, std::string> env;   // the whole build environment (run_env applied)
    const Lock* lock = nullptr;         // for the torch the env has (its version, build and CUDA)
    std::string cache_dir;              // "" = no built-wheel cache (the wheel goes to a temp dir)
    bool editable = false;              // PEP 660 (or setup.py develop's equivalent); never cached
    int timeout_seconds = 3600;         // CUDA extensions take long
};

// The project's [build-system], as the env's python reads it (tomllib, else tomli, else pip's).
struct BuildSystem {
    std::string backend;                // "setuptools.build_meta:__legacy__" when none is declared
    std::vector<std::string> backend_path;
    std::vector<std::string> requirements;   // PEP 508 texts ([build-system] requires)
    bool declared = false;              // pyproject.toml has a [build-system] table
    std::map<std::string, std::optional<std::string>> installed;   // requirement name -> version in the env
    std::string python_version;         // "3.11.2"
    std::string abi;                    // sysconfig SOABI: "cpython-311-x86_64-linux-gnu"
};

// Everything the built wheel depends on, in words (one "what: value" line each), and its sha256.
struct BuildKey {
    std::string text;
    std::string hex;
};

struct BuiltWheel {
    std::string wheel;                  // the .whl
    std::string tree;                   // its unpacked tree in the cache ("" when not cached)
    std::string log;                    // what the build printed ("" when taken from the cache)
    std::string log_path;               // where the log is kept ("" without a cache)
    std::string key;                    // BuildKey::hex
    bool from_cache = false;
    std::string temp_dir;               // remove after installing ("" when the wheel is the cache's)
};

// Reads the project's build system and the versions its requirements have in the env.
// UnmetError (naming request.where) when the env's python cannot run or read pyproject.toml.
BuildSystem read_build_system(const BuildRequest& request);

// The build requirements the env lacks or has at a version the specifier refuses, in words:
// "setuptools>=64 (the environment has setuptools 59.5.0)". Markers are evaluated for the env's python.
std::vector<std::string> unmet_build_requirements(const BuildSystem& system);

// The key: the source, the python ABI, the lock's torch (version, file sha256, CUDA), the nvcc
// and host compiler the build environment finds (their --version), the arch lists, the backend.
BuildKey build_key(const BuildRequest& request, const BuildSystem& system);

// Builds (or takes from the cache) the wheel. UnmetError naming request.where when a build
// requirement is missing or the build fails: the known build failure its log shows
// (knowledge build_failures), else its first error line, and where the whole log is kept.
BuiltWheel build_source(const BuildRequest& request);

// The message of a failed build: what failed, the known cause and fix (or the log's first
// error line), where the log is; the log's tail when it is short enough to read here.
std::string explain_build_failure(const std::string& where, const std::string& log, const std::string& log_path, int exit_code);

}  // namespace envlock::install
