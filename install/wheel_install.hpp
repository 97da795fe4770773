#pragma once
// Installing one wheel into a Python environment, per the binary distribution format spec
// (PEP 427): root and .data spread over the env's scheme, #!python scripts and entry-point
// launchers pointing at the env's interpreter, RECORD rewritten with installed paths and hashes,
// INSTALLER, REQUESTED, direct_url.json (PEP 610). Uninstalling and checking by RECORD.
#include <cstdint>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "install/python_env.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::install {

// direct_url.json (PEP 610): written only for installs from a direct URL or a VCS, never for a
// file an index or find-links page offered by name and version.
struct DirectUrl {
    std::string url;                 // credentials are stripped when written
    std::string archive_sha256;      // archive_info
    std::string vcs;                 // vcs_info ("git") with commit_id and requested_revision
    std::string commit_id, requested_revision;
    bool dir = false;                // dir_info, with editable
    bool editable = false;
    std::string subdirectory;
};
std::string direct_url_json(const DirectUrl& d);

// For a locked PyPI file: a direct URL only when no index or find-links page offered it (the
// lock's channel is empty); nullopt otherwise.
std::optional<DirectUrl> direct_url_for(const LockedPackage& package);

// REQUESTED: the spec asked for it (a "spec: …" entry in requested_by); with no record of who
// asked, the spec's default applies ("must default to creating the REQUESTED file").
bool requested_by_spec(const LockedPackage& package);

struct WheelOptions {
    // "" writes in place. Otherwise `stage` is the staged copy of the prefix a transaction will
    // swap in: every file goes to stage/<prefix-relative path>, while shebangs and RECORD name
    // the final paths under layout.prefix.
    std::string stage;
    bool requested = true;           // REQUESTED: the user's spec asked for it (PEP 376)
    bool compile = false;            // bytecode for the installed .py (--compile)
    std::string compile_python;      // runnable interpreter of the env's version; default layout.interpreter
    std::optional<DirectUrl> direct_url;
    std::string installer = "envlock";
    // Text replaced in the wheel's non-script files as they are written (a PEP 660 editable
    // wheel built in a stage names the staged checkout; the env must name the final one).
    // Each member is still verified against RECORD as it was built; RECORD gets the new hashes.
    std::vector<std::pair<std::string, std::string>> path_rewrites;
    // For an unpacked wheel (a cache tree): files are hard-linked into the env (copied across
    // filesystems or where links fail); sizes are always checked against RECORD, hashes only
    // with this flag (a cache tree was written from a verified archive; --repair sets it).
    bool hardlink = true;
    bool verify_unpacked_hashes = false;
};

struct WrittenFile {
    std::string path;                // prefix-relative, '/'-separated
    std::string sha256;              // lowercase hex; "" for RECORD and .pyc
    std::uint64_t size = 0;
};

struct InstalledWheel {
    std::string name, version;       // METADATA's Name and Version
    std::string dist_info;           // prefix-relative .dist-info directory
    std::vector<WrittenFile> files;     // every file written, RECORD included
    std::vector<std::string> replaced;    // files that existed before and were overwritten
    std::vector<std::string> warnings;    // what pip would warn of and install anyway (a stale RECORD size)
};

// `wheel_path` is a .whl whose archive sha256 was already checked against the lock, or a directory
// holding such a wheel unpacked. Before any file reaches its final name, every member of an
// archive is checked against the wheel's own RECORD (hash and size, as the spec requires of
// installers; an unpacked tree: see WheelOptions); a wheel that fails any check leaves nothing behind.
// InputError (exit 2) names the wheel and what is wrong; EnvironmentError (3) for I/O failures.
InstalledWheel install_wheel(const std::string& wheel_path, const PythonLayout& layout, const WheelOptions& options);

struct InstalledDist {
    std::string name, version;
    std::string dist_info;           // prefix-relative
    std::string installer;           // INSTALLER's first line, "" when absent
};
// Every *.dist-info in the layout's purelib and platlib, sorted by name.
// Bytecode for .py files written at their staged paths, each .pyc naming the file's final path
// (compileall's ddir, as pypa/installer and conda compile), with `python`; returns the .pyc
// files written (staged paths). EnvironmentError naming `what` when python fails.
std::vector<std::string> compile_bytecode(const std::vector<std::pair<std::string, std::string>>& staged_and_final,
                                          const std::string& python, const std::string& what);

std::vector<InstalledDist> installed_dists(const PythonLayout& layout);

// Removes what `dist_info`'s RECORD lists (and the .pyc of each removed .py, and directories
// left empty), never anything outside the prefix: a RECORD row that leads out of it is skipped
// and reported. Returns the prefix-relative paths removed. InputError when there is no RECORD.
struct Uninstalled {
    std::vector<std::string> removed;
    std::vector<std::string> refused;   // RECORD rows pointing outside the prefix
};
Uninstalled uninstall_dist(const PythonLayout& layout, const std::string& dist_info);

// Files of an installed distribution that no longer match its RECORD.
struct RecordProblem {
    std::string path;                // prefix-relative
    std::string what;                // "missing", "modified (size …)", "modified (sha256 …)"
};
std::vector<RecordProblem> check_record(const PythonLayout& layout, const std::string& dist_info);

// The header block of an email-style file (METADATA, PKG-INFO, WHEEL): "Key: value" lines up to
// the first blank line, keys as written; a field may repeat (Requires-Dist); continuation lines
// are skipped.
std::multimap<std::string, std::string> parse_headers(std::string_view text);

}  // namespace envlock::install
