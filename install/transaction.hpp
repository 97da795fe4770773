#pragma once
// Installing a lock into a prefix as one transaction: the diff between what is installed and
// the lock; a complete new tree staged beside the prefix (kept files hardlinked from the old
// one, new packages written by their installers) and swapped in with one rename, so a program
// sees the old prefix or the new one, never a mix; a journal, so whatever interrupts an
// install, the next envlock rolls it back or completes it; and a file lock against concurrent
// installs. Layout in the `.envlock/` folder beside PREFIX (PREFIX's parent when that is the
// default `.envlock/`; the prefix itself is what gets swapped; `.gitignore` "*" keeps git out):
//   .<name>.envlock-lock      locked (install/file_lock) by the envlock working on the prefix
//   .<name>.envlock-journal   present while a transaction is open
//   .<name>.envlock-staging   the new tree; after the swap, the old one until it is deleted
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "fetch/settings.hpp"
#include "install/installed.hpp"
#include "install/link.hpp"
#include "install/package_cache.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::install {

// What one package's installer is handed. It writes under `stage` only, puts `prefix` (the
// final path) into file contents, and never writes in place into a file already in the stage
// (those are hardlinks of the live prefix's files): unlink first (link.hpp does).
struct PackageContext {
    const Lock& lock;
    const LockedPackage& package;
    std::filesystem::path stage;
    std::filesystem::path prefix;
    const CacheEntry* cache = nullptr;     // conda and pypi: the verified archive and its tree
    LinkMode link_mode = LinkMode::hardlink;
    PythonInfo python;                     // empty when the environment has no python
    std::function<void(const std::string&)> warn;
    bool compile = false;                  // --compile: bytecode for noarch: python packages' .py files
    std::string where;                     // how messages name it: "envlock.yaml:57: fvcore 0.1.5"
    std::function<void(const std::string&)> step;  // the package's own step line (a source build: built or linked from the cache)
};

// Returns every file it wrote (prefix-relative, with sha256 and size), its metadata included.
using PackageInstaller = std::function<InstalledPackage(const PackageContext&)>;

// For a lock without a conda `python`: writes the venv's own files into `stage` (pyvenv.cfg,
// bin/python links to a base interpreter of the locked version) and says where packages go.
struct VenvResult {
    InstalledPackage package;              // kind "venv"; id "venv:python=<version>"
    PythonInfo python;
};
using VenvMaker = std::function<VenvResult(const Lock& lock, const std::filesystem::path& stage,
                                           const std::filesystem::path& prefix)>;

struct InstallOptions {
    std::filesystem::path prefix;
    fetch::FetchContext fetch;             // cache_dir (packages go to <cache_dir>/pkgs), mirrors, offline, jobs
    LinkMode link_mode = LinkMode::hardlink;
    bool repair = false;                   // re-check every installed file; fix what is missing, modified or foreign
    bool dry_run = false;                  // plan only: nothing is fetched, locked or written (with repair: every file is still checked)
    bool compile = false;                  // bytecode for noarch: python packages (wheels: PythonStepOptions)
    std::string command;                   // the command line, for conda-meta/history
    std::string lock_file;                 // the lock's path, so every error names "<lock_file>:<line>: <package>"
    PackageInstaller install_wheel;        // pypi packages (the wheel half); unset: such locks are refused
    PackageInstaller install_source;       // git sources; unset: such locks are refused
    VenvMaker make_venv;                   // PyPI-only locks
    std::function<void(const std::string&)> say;                 // one line per event the user must see (waiting, recovered, restored …); warnings too
    // One line per package installed, built or linked from the build cache: a log's record of
    // each step, which a terminal does not need (the CLI shows them with -v).
    std::function<void(const std::string&)> step;
    std::function<void(const FetchProgress&)> fetch_progress;
};

struct PlannedPackage {
    std::string id, kind, name, version;
    std::uint64_t size = 0;                // download size when known
};

struct InstallPlan {
    std::vector<PlannedPackage> add, remove;   // a replaced package is in both
    std::size_t keep = 0;
    std::vector<std::string> reasons;          // why more than the diff is reinstalled (python X.Y, moved prefix)
};

struct InstallResult {
    InstallPlan plan;
    std::vector<std::string> recovered;        // what recovering an interrupted install did
    std::vector<std::string> restored;         // --repair: paths put back (missing or modified)
    std::vector<std::string> removed_foreign;  // --repair: paths removed that no locked package owns
    std::size_t unknown_kept = 0;              // --repair: files of no package that were left alone
    // --repair --dry-run: what would be restored ("path (modified)") and why foreign files would
    // go (one line per foreign distribution or record); restored/removed_foreign list the paths.
    std::vector<std::string> damage, foreign;
    bool changed = false;                      // the prefix was swapped for a new tree
};

// InputError for a lock it cannot install (an entry that is incomplete or contradicts its own
// URL, as `check` finds, refused before anything is touched; a package kind with no installer;
// a prefix longer than a binary placeholder; a non-envlock directory as prefix); EnvironmentError
// for the network and the filesystem; UnmetError for a source that does not build. An error of
// one package names it and its lock line. Sources (git sources and sdists) are built after
// every binary package is in place, in dependency order. On any error the prefix is left as it was.
InstallResult install_lock(const Lock& lock, const InstallOptions& options);

// Finishes or undoes an interrupted transaction on `prefix`; the caller holds the prefix
// lock. Returns what it did, in words ("" when there was nothing to do).
std::string recover_prefix(const std::filesystem::path& prefix);

// For commands that read a prefix (run, shell-hook): waits while an install holds the prefix
// lock (`waiting` is told once who holds it), finishes or undoes an interrupted transaction,
// and lets the lock go. Returns what recovering did ("" for nothing). A prefix whose lock
// cannot be taken (a read-only parent) is read as it is unless a journal says it is mid-install.
std::string settle_prefix(const std::filesystem::path& prefix, const std::function<void(const std::string&)>& waiting);

// The prefix's lock file (in the `.envlock/` folder beside it, which this creates). `run`,
// `verify` and `export --prefix` take it (with FileLock) and call recover_prefix before
// reading a prefix.
std::filesystem::path prefix_lock_path(const std::filesystem::path& prefix);

}  // namespace envlock::install
