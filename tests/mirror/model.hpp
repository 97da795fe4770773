#pragma once
// The values the mirror is made of: conda records, Python distributions, and the tables
// (with their sources) they are generated from. Plain data, passed between functions.
#include <cstdint>
#include <string>
#include <vector>

namespace envlock::mirror {

struct CondaRecord {
    std::string channel;  // "pytorch", "nvidia", "conda-forge", "main"
    std::string subdir = "linux-64";
    std::string name, version, build;
    int build_number = 0;
    std::vector<std::string> depends, constrains;
    std::string features, track_features;
    std::string noarch;                      // "", "python" or "generic"
    std::string license = "BSD-3-Clause";
    std::int64_t timestamp = 0;              // ms since epoch, like conda's
    std::string ext = ".conda";              // or ".tar.bz2"
    std::vector<std::string> entry_points;   // noarch: python only, "cmd = module:func"
    std::string source;                      // the table or snapshot this row came from
    std::string filename() const { return name + "-" + version + "-" + build + ext; }
};

struct PyDist {  // one file of a Python project: a wheel or an sdist
    std::string project;          // as the project spells it ("Pillow", "mmcv-full")
    std::string version;          // may carry a local label ("1.9.1+cu111")
    std::string tag;              // "cp38-cp38-manylinux2014_x86_64"; empty for an sdist
    std::string requires_python;  // "" when the project declares none
    std::vector<std::string> requires_dist;
    std::vector<std::string> console_scripts;  // "name = module:func"
    std::vector<std::string> data_scripts;     // script names shipped in .data/scripts
    std::string data_file;                     // a path shipped under .data/data ("share/man/man1/x.1")
    std::string summary;
    std::string source;
    bool is_sdist() const { return tag.empty(); }
    std::string filename() const;  // wheel: PEP 427 escaped name; sdist: name-version.tar.gz
};

std::string normalize_project(const std::string& name);    // PEP 503
std::string wheel_escape(const std::string& name);         // PEP 427 distribution part

// A table the mirror was generated from, and where it came from (for SOURCES.md).
struct TableSource {
    std::string table;
    std::string origin;
};

struct TorchRelease {
    std::string torch, torchvision, torchaudio;  // torchaudio empty when unknown
    std::vector<std::string> pip_variants;       // "cpu", "cu111", …
    std::vector<std::string> conda_cuda;         // "10.2", "11.1", …
    int py_min = 6, py_max = 9;                  // minor versions of Python 3
    std::string source;
};

struct MmcvRow {
    std::string package;   // "mmcv-full" (1.x) or "mmcv" (2.x)
    std::string cuda;      // "11.1" or "cpu"
    std::string torch;     // "1.9" (the page is torch1.9.0)
    std::vector<std::string> versions;
    std::string source;
};

struct NumbaRow {
    std::string numba, python, numpy, llvmlite;  // PEP 440 specifier sets, "" when unbounded
    std::string source;
};

struct Mmdet3dRelease {
    std::string version;
    std::vector<std::string> runtime;    // requirements/runtime.txt
    std::vector<std::string> mminstall;  // requirements/mminstall.txt
    std::string mmcv_min, mmcv_max, mmdet_min, mmdet_max, mmseg_min, mmseg_max;
    std::string source;
};

struct Tables {
    std::vector<TorchRelease> torch;
    std::vector<MmcvRow> mmcv;
    std::vector<NumbaRow> numba;
    std::vector<Mmdet3dRelease> mmdet3d;
    std::vector<TableSource> sources;
};

}  // namespace envlock::mirror
