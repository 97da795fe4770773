#pragma once
// What a prefix holds, as envlock recorded it: every installed package with every file it
// wrote (hash, size), kept in <prefix>/.envlock/state.json. Removal, --repair and the
// transaction's diff all read this one record, whichever ecosystem a package came from.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "resolver/lock/lock.hpp"

namespace envlock::install {

struct InstalledFile {
    std::string path;          // prefix-relative, '/'-separated
    std::string sha256;        // of the installed bytes; "" for symlinks, RECORD and pyc rows
    std::uint64_t size = 0;
    std::string link_target;   // symlinks only
};

struct InstalledPackage {
    std::string id;            // package_id() of the locked package it came from
    std::string kind;          // "conda", "pypi", "source", "venv"
    std::string name, version;
    std::string noarch;        // conda: "python" marks packages tied to the python minor version
    std::string build;         // conda build string (for conda-meta/history)
    std::string channel;       // conda: "conda-forge/linux-64" (for conda-meta/history)
    std::vector<InstalledFile> files;   // every path it wrote, its metadata included
};

struct PythonInfo {
    std::string version;           // "3.8.18"
    std::string major_minor;       // "3.8"
    std::string site_packages;     // prefix-relative: "lib/python3.8/site-packages" or CEP 17's path
    std::string executable;        // prefix-relative: "bin/python3.8"
};

struct PrefixState {
    std::string generation;        // random id of the install that wrote it
    std::string prefix;            // the absolute path it was installed for
    std::string lock_hash;         // the lock's content hash
    PythonInfo python;
    std::vector<InstalledPackage> packages;
};

// "<kind>:<name>=<version>=<build>:<sha256, md5 or rev>": two locked packages with one id
// are interchangeable; any difference (a rebuilt artifact, another commit) is a new id.
std::string package_id(const LockedPackage& p);

inline constexpr const char* kStateFile = ".envlock/state.json";
inline constexpr const char* kLockCopy = ".envlock/lock.yaml";

// nullopt when the prefix has no state (not an envlock prefix, or not there).
// InputError naming the file when it is malformed.
std::optional<PrefixState> read_state(const std::filesystem::path& prefix);
std::string state_json(const PrefixState& state);

}  // namespace envlock::install
