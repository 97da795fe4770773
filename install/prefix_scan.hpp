#pragma once
// Reading any Python prefix, envlock's or not (a conda env, a venv, Debian's /usr): its conda-meta
// records, every *.dist-info and *.egg-info (egg-links of `setup.py develop` followed), the
// interpreter's version, torch's CUDA, and the compiled modules that link a CUDA runtime or torch.
#include <string>
#include <vector>

namespace envlock::install {

// The file that marks a package as a stand-in (envlock-mirror's demo and test packages: real
// archives, metadata and digests around no real code, e.g. a cuda-nvcc with no compiler): a conda
// package ships share/envlock-stand-in/<name>/ENVLOCK-STAND-IN, a wheel <dist>.dist-info/ENVLOCK-STAND-IN.
// verify and doctor read it to skip, with that reason, what a stand-in cannot show.
inline constexpr const char* kStandInMarker = "ENVLOCK-STAND-IN";

// One conda-meta/<name>-<version>-<build>.json, as conda and mamba write them.
struct CondaMetaRecord {
    std::string json;                   // prefix-relative path of the record
    std::string name, version, build, channel;
    std::vector<std::string> depends;   // MatchSpecs
    std::vector<std::string> files;     // prefix-relative
    std::string python_dist;            // PEP 503 name of the Python distribution it installs, "" when none
    bool stand_in = false;              // a test/demo mirror's stand-in: one of its files is kStandInMarker
};

// One installed Python distribution, from its *.dist-info or *.egg-info.
struct PythonDist {
    std::string name;                   // as its metadata spells it
    std::string normalized;             // PEP 503
    std::string version;
    std::string metadata;               // prefix-relative metadata dir (absolute when outside the prefix)
    std::string format;                 // "dist-info" | "egg-info"
    std::vector<std::string> requires_dist;   // PEP 508; egg-info's [extra] / [:marker] sections as markers
    std::string installer;              // INSTALLER's first line; "conda" when a conda record owns the metadata
    std::string conda_record;           // name of the owning conda record, "" when none
    bool has_record = false;            // a RECORD file lists its files
    std::vector<std::string> files;     // RECORD's rows, prefix-relative (only when has_record)
    bool editable = false;              // PEP 660 / direct_url.json dir_info editable, or an .egg-link
    std::string editable_location;
    bool stand_in = false;              // a test/demo mirror's stand-in: its metadata holds kStandInMarker
};

// A compiled module (*.so) that links a CUDA runtime or torch's libraries, or carries GPU code
// (a CUDA fat binary, the runtime linked in statically): what it was built against, as far as
// the file tells without loading it.
struct CompiledExtension {
    std::string path;                   // prefix-relative
    std::string dist;                   // PEP 503 name of the distribution whose RECORD lists it, "" when unknown
    std::string cudart;                 // the libcudart DT_NEEDED soname's version: "11.0", "10.2", "12"; "" for none
    std::vector<std::string> torch_libs;   // DT_NEEDED of torch's: libc10.so, libtorch_cpu.so …
    bool fatbin = false;                // has a .nv_fatbin section
    std::vector<int> sass, ptx;         // its GPU code (sm numbers), from the fat binary's headers
    // Undefined symbols in torch's C++ namespaces (c10, at, torch, caffe2) it imports, and those
    // the installed torch's libraries do not export: the dynamic linker's "undefined symbol" at
    // import. Mangled, sorted; `torch_checked` false when torch's libraries were not found.
    bool torch_checked = false;
    std::size_t torch_symbols = 0;
    std::vector<std::string> missing_torch_symbols;
    std::string torch_lib_dir;          // where torch's libraries were read (absolute)
};

// A mangled name in torch's namespaces: _ZN3c10…, _ZNK2at…, _ZN5torch…, _ZTVN6caffe2… .
bool torch_symbol(const std::string& mangled);

struct TorchBuild {
    std::string version;                // "1.9.1+cu111"; "" when torch is absent
    std::string cuda;                   // "11.1"; "" for a CPU build
    std::string cuda_from;              // "torch/version.py", "conda build string", "local version label"
};

struct PrefixScan {
    std::string prefix;                 // absolute
    std::string python_version;         // "3.11.2", "3.11"; "" when no interpreter was found
    std::string python_from;            // where the version was read
    std::vector<std::string> site_dirs; // absolute, those that exist
    bool conda = false;                 // has conda-meta/
    std::vector<CondaMetaRecord> conda_records;
    std::vector<PythonDist> dists;      // sorted by normalized name, then metadata path
    std::vector<CompiledExtension> extensions;   // sorted by path
    TorchBuild torch;
    std::vector<std::string> unreadable;   // "<path>: <why>" for metadata that could not be read
};

// The conda-meta records of `prefix` (none without conda-meta/); unreadable ones are listed in
// `unreadable` when given. python_dist is left to scan_prefix.
std::vector<CondaMetaRecord> read_conda_records(const std::string& prefix, std::vector<std::string>* unreadable = nullptr);

// InputError (exit 2) when `prefix` is not a directory, or holds neither conda-meta/ nor a Python
// site directory (lib/pythonX.Y/site-packages, Debian's lib/python3/dist-packages).
// Unreadable or malformed metadata is not an error: it is listed in `unreadable`.
PrefixScan scan_prefix(const std::string& prefix);

// egg-info requires.txt -> PEP 508 lines: "[extra]" sections get `extra == "…"`, "[:marker]"
// sections their marker (setuptools' format; pkg_resources reads it the same way).
std::vector<std::string> requires_txt_to_pep508(const std::string& text);

}  // namespace envlock::install
