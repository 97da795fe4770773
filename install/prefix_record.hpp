#pragma once
// conda-meta/: the per-package records (conda's PrefixRecord: what conda, mamba, micromamba
// and rattler read to list and remove packages, CEP 32) and the conda-meta/history log.
#include <cstdint>
#include <string>
#include <vector>

namespace envlock::install {

struct PrefixPath {
    std::string path;              // final, prefix-relative (noarch already relocated)
    std::string path_type;         // hardlink, softlink, directory, unix_python_entry_point, pyc_file
    std::string sha256;            // of the package's file (paths.json)
    std::string sha256_in_prefix;  // of the installed bytes (differs once a prefix is replaced)
    std::uint64_t size_in_bytes = 0;
    std::string file_mode;         // "text" / "binary" when the file had a placeholder
    std::string prefix_placeholder;
    bool no_link = false;
};

struct PrefixRecord {
    std::string name, version, build;
    int build_number = 0;
    std::string channel, subdir, fn, url, md5, sha256;
    std::uint64_t size = 0;
    std::vector<std::string> depends, constrains;
    std::string license, noarch, track_features, python_site_packages_path;
    std::uint64_t timestamp = 0;
    std::vector<std::string> files;            // every installed path
    std::vector<PrefixPath> paths;             // paths_data.paths
    std::string link_source;                   // the extracted package dir
    int link_type = 1;                         // 1 hardlink, 2 softlink, 3 copy
    std::string package_tarball_full_path;
    std::string requested_spec;
};

// conda-meta/<name>-<version>-<build>.json (conda ignores a record whose name does not split so).
std::string prefix_record_filename(const PrefixRecord& r);

// Deterministic JSON, keys sorted, as conda writes them (json.dump(sort_keys=True, indent=2)).
std::string prefix_record_json(const PrefixRecord& r);

// The paths a conda-meta record says its package installed (for a record envlock did not
// write: a `conda install` into the env). InputError naming the file when malformed.
std::vector<std::string> record_files(const std::string& json_text, const std::string& file);

// One conda-meta/history block (CEP 32): "==> date <==", "# cmd:", removed "-" then added "+"
// lines (each sorted), "# update specs:". Never a "# conda version:" line: conda refuses envs
// whose history names a newer conda than itself (C:conda/history.py L240-275).
std::string history_block(const std::string& when, const std::string& command, const std::vector<std::string>& removed,
                          const std::vector<std::string>& added, const std::vector<std::string>& update_specs);

// "conda-forge/linux-64" from a channel URL (or a subdir URL) and a subdir; "" when unknown.
std::string channel_label(const std::string& channel, const std::string& subdir);

// "conda-forge/linux-64::numpy-1.19.5-py38_0" for a history line.
std::string history_entry(const std::string& channel, const std::string& subdir, const std::string& name,
                          const std::string& version, const std::string& build);

}  // namespace envlock::install
