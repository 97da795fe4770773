// Conda records of the mirror. Version facts come from the tables (../shared/facts or
// their compiled-in copy). Dependency *shapes* copy the real channels as the snapshots in
// ../shared/snapshots show them (rattler-pytorch-channel for pytorch; the conda-forge
// python=3.9 subchannel for python and its libraries; mamba's conda-forge numpy closure for
// numpy/libblas; conda's 2018 defaults index for blas/mkl/numpy-base). Where no snapshot
// has a package (cudatoolkit 10-11, cuda-nvcc, cuda-version, gcc, numba 0.48+…), the shape
// follows how the real channels publish it and the row's source says so.
#include "tests/mirror/conda_tables.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "resolver/specs/errors.hpp"
#include "resolver/lock/sha256.hpp"

namespace envlock::mirror {
namespace {

constexpr const char* kShapePytorch = "shape: rattler-pytorch-channel snapshot records, built-in copy";
constexpr const char* kShapeCfPython = "shape: conda-subchannel-demo-conda-forge-py39 python-3.9.18-h0755675_0_cpython";
constexpr const char* kShapeCfNumpy = "shape: mamba-tests-conda-forge-numpy numpy-1.26.4 (libblas/libcblas/liblapack split)";
constexpr const char* kShapeDefaults = "shape: conda-tests-defaults-2013-2018 index4.json (blas 1.0 mkl/openblas, numpy-base split)";
constexpr const char* kNoSnapshot =
    "no snapshot has this package; shape follows the real channel as published (not in ../shared/facts)";

struct Py {
    int minor;
    const char* full;
};
// One CPython per minor (conda-forge's last builds); 3.11 is there for torch 2.x.
const std::vector<Py> kPythons = {{6, "3.6.15"}, {7, "3.7.12"}, {8, "3.8.18"}, {9, "3.9.18"}, {10, "3.10.13"}, {11, "3.11.6"}};

std::string py_dep(int m) { return "python >=3." + std::to_string(m) + ",<3." + std::to_string(m + 1) + ".0a0"; }
std::string py_tag(int m) { return "py3" + std::to_string(m); }
std::string abi_dep(int m) {
    std::string s = std::to_string(m);
    return "python_abi 3." + s + ".* *_cp3" + s + (m < 8 ? "m" : "");
}
// conda-forge style build hash: "h" + 7 hex digits, stable for the same inputs.
std::string hash7(const std::string& seed) { return "h" + envlock::sha256_hex(seed).substr(0, 7); }

struct Adder {
    std::vector<CondaRecord>& out;
    std::int64_t clock = 1609459200000;  // 2021-01-01, advanced one minute per record

    CondaRecord& operator()(const std::string& channel, const std::string& name, const std::string& version,
                            const std::string& build, int build_number, std::vector<std::string> depends,
                            const std::string& source) {
        CondaRecord r;
        r.channel = channel;
        r.name = name;
        r.version = version;
        r.build = build;
        r.build_number = build_number;
        r.depends = std::move(depends);
        r.source = source;
        r.timestamp = clock;
        clock += 60000;
        if (channel == "pytorch" || channel == "pkgs/main" || channel == "pkgs/r") r.ext = ".tar.bz2";
        out.push_back(std::move(r));
        return out.back();
    }
    // A package built once per Python minor in [lo, hi].
    void per_python(const std::string& channel, const std::string& name, const std::string& version, int lo, int hi,
                    std::vector<std::string> depends, const std::string& source, bool abi = true) {
        for (const auto& py : kPythons) {
            if (py.minor < lo || py.minor > hi) continue;
            auto deps = depends;
            deps.push_back(py_dep(py.minor));
            if (abi && channel == "conda-forge") deps.push_back(abi_dep(py.minor));
            std::sort(deps.begin(), deps.end());
            (*this)(channel, name, version, py_tag(py.minor) + hash7(channel + name + version + py_tag(py.minor)) + "_0", 0,
                    deps, source);
        }
    }
    CondaRecord& noarch_python(const std::string& channel, const std::string& name, const std::string& version,
                               std::vector<std::string> depends, const std::string& source) {
        auto& r = (*this)(channel, name, version, "pyhd8ed1ab_0", 0, std::move(depends), source);
        r.subdir = "noarch";
        r.noarch = "python";
        return r;
    }
    CondaRecord& generic(const std::string& channel, const std::string& name, const std::string& version,
                         std::vector<std::string> depends, const std::string& source, bool noarch = false, int number = 0) {
        auto& r = (*this)(channel, name, version, hash7(channel + name + version) + "_" + std::to_string(number), number,
                          std::move(depends), source);
        if (noarch) {
            r.subdir = "noarch";
            r.noarch = "generic";
        }
        return r;
    }
};

// "0.31.0dev0" / "0.33.0.dev0" / "0.36.0rc1" -> "0.31.0" (the release the bound names).
std::string release_of(const std::string& v) {
    static const std::regex re(R"((\d+\.\d+(\.\d+)?))");
    std::smatch m;
    return std::regex_search(v, m, re) ? m[1].str() : v;
}
std::string lower_bound(const std::string& spec) {
    static const std::regex re(R"(>=\s*([0-9][0-9A-Za-z.]*))");
    std::smatch m;
    return std::regex_search(spec, m, re) ? release_of(m[1].str()) : "";
}
std::string upper_bound(const std::string& spec) {
    static const std::regex re(R"(<\s*([0-9][0-9A-Za-z.]*))");
    std::smatch m;
    return std::regex_search(spec, m, re) ? m[1].str() : "";
}
// Python minors allowed by ">=3.6,<3.10"; rows with no upper bound stop at `open_max`.
void python_window(const std::string& spec, int open_max, int& lo, int& hi) {
    lo = 6;
    hi = open_max;
    static const std::regex l(R"(>=\s*3\.(\d+))"), u(R"(<\s*3\.(\d+))");
    std::smatch m;
    if (std::regex_search(spec, m, l)) lo = std::stoi(m[1]);
    if (std::regex_search(spec, m, u)) hi = std::stoi(m[1]) - 1;
}

void base_libraries(Adder& add) {
    const std::string cf = "conda-forge";
    const std::string src = kShapeCfPython;
    auto& mutex = add(cf, "_libgcc_mutex", "0.1", "conda_forge", 0, {}, src);
    mutex.ext = ".tar.bz2";
    add(cf, "_openmp_mutex", "4.5", "2_gnu", 16, {"_libgcc_mutex 0.1 conda_forge", "libgomp >=7.5.0"}, src).constrains = {
        "openmp_impl 9999"};
    // One libgcc per GCC major the mirror ships compilers for, so "libgcc-ng >=X" always resolves.
    for (const char* v : {"7.5.0", "8.5.0", "9.5.0", "10.4.0", "11.2.0", "12.3.0", "13.2.0"}) {
        add.generic(cf, "libgomp", v, {"_libgcc_mutex 0.1 conda_forge"}, src, false, 3);
        add.generic(cf, "libgcc-ng", v, {"_libgcc_mutex 0.1 conda_forge", "_openmp_mutex >=4.5"}, src, false, 3)
            .constrains = {std::string("libgomp ") + v + " *_3"};
        add.generic(cf, "libstdcxx-ng", v, {}, src, false, 3);
    }
    add.generic(cf, "libgfortran5", "13.2.0", {"libgcc-ng >=13.2.0"}, src, false, 3);
    add.generic(cf, "libgfortran-ng", "13.2.0", {"libgfortran5 13.2.0 *_3"}, src, false, 3);
    add.generic(cf, "libzlib", "1.2.13", {"libgcc-ng >=12"}, src, false, 5).constrains = {"zlib 1.2.13 *_5"};
    add.generic(cf, "zlib", "1.2.13", {"libgcc-ng >=12", "libzlib 1.2.13 *_5"}, src, false, 5);
    add.generic(cf, "bzip2", "1.0.8", {"libgcc-ng >=12"}, src, false, 5);
    add.generic(cf, "xz", "5.2.6", {"libgcc-ng >=12"}, src);
    add.generic(cf, "libffi", "3.4.2", {"libgcc-ng >=9.4.0"}, src, false, 5);
    add.generic(cf, "ncurses", "6.4", {"libgcc-ng >=12"}, src);
    add.generic(cf, "readline", "8.2", {"libgcc-ng >=12", "ncurses >=6.3,<7.0a0"}, src, false, 1);
    add.generic(cf, "tk", "8.6.13", {"libgcc-ng >=12", "libzlib >=1.2.13,<1.3.0a0"}, src);
    add.generic(cf, "libsqlite", "3.44.2", {"libgcc-ng >=12", "libzlib >=1.2.13,<1.3.0a0"}, src);
    add.generic(cf, "libuuid", "2.38.1", {"libgcc-ng >=12"}, src);
    add.generic(cf, "libnsl", "2.0.1", {"libgcc-ng >=12"}, src);
    add.generic(cf, "libxcrypt", "4.4.36", {"libgcc-ng >=12"}, src, false, 1);
    add.generic(cf, "ld_impl_linux-64", "2.40", {}, src).constrains = {"binutils_impl_linux-64 2.40"};
    add.generic(cf, "ca-certificates", "2023.11.17", {}, src);
    add.generic(cf, "openssl", "3.2.0", {"ca-certificates", "libgcc-ng >=12"}, src, false, 1).constrains = {
        "pyopenssl >=22.1"};
    add.generic(cf, "tzdata", "2023c", {}, src, true);
    add.generic(cf, "libuv", "1.46.0", {"libgcc-ng >=12"}, kNoSnapshot);
    add.generic(cf, "ninja", "1.11.1", {"libgcc-ng >=12", "libstdcxx-ng >=12"}, kNoSnapshot);
    add.generic(cf, "llvm-openmp", "15.0.7", {"libzlib >=1.2.13,<1.3.0a0"}, kNoSnapshot).constrains = {"openmp 15.0.7|15.0.7.*"};
    add.generic(cf, "yaml", "0.2.5", {"libgcc-ng >=9.4.0"}, kNoSnapshot, false, 2);
    // Image and video libraries torchvision/pillow/ffmpeg depend on.
    add.generic(cf, "libpng", "1.6.39", {"libgcc-ng >=12", "libzlib >=1.2.13,<1.3.0a0"}, kNoSnapshot);
    add.generic(cf, "freetype", "2.12.1", {"libgcc-ng >=12", "libpng >=1.6.39,<1.7.0a0", "libzlib >=1.2.13,<1.3.0a0"}, kNoSnapshot, false, 2);
    add.generic(cf, "jpeg", "9e", {"libgcc-ng >=12"}, kNoSnapshot, false, 3);
    add.generic(cf, "libjpeg-turbo", "3.0.0", {"libgcc-ng >=12"}, kNoSnapshot, false, 1).constrains = {"jpeg <0.0.0a"};
    add.generic(cf, "libtiff", "4.6.0", {"libgcc-ng >=12", "libjpeg-turbo >=3.0.0,<4.0a0", "libstdcxx-ng >=12", "libzlib >=1.2.13,<1.3.0a0", "xz >=5.2.6,<6.0a0"}, kNoSnapshot);
    add.generic(cf, "gmp", "6.2.1", {"libgcc-ng >=7.5.0", "libstdcxx-ng >=7.5.0"}, kNoSnapshot);
    add.generic(cf, "nettle", "3.4.1", {"gmp >=6.1.2", "libgcc-ng >=7.3.0"}, kNoSnapshot, false, 1002);
    add.generic(cf, "gnutls", "3.6.13", {"libgcc-ng >=7.5.0", "libstdcxx-ng >=7.5.0", "nettle >=3.4.1,<3.5.0a0"}, kNoSnapshot);
    add.generic(cf, "lame", "3.100", {"libgcc-ng >=12"}, kNoSnapshot, false, 1003);
    add.generic(cf, "libiconv", "1.17", {"libgcc-ng >=10.3.0"}, kNoSnapshot);
    add.generic(cf, "openh264", "2.1.1", {"libgcc-ng >=9.3.0", "libstdcxx-ng >=9.3.0"}, kNoSnapshot);
    add.generic(cf, "tbb", "2021.10.0", {"libgcc-ng >=12", "libstdcxx-ng >=12"}, kNoSnapshot, false, 2);
}

void python_stack(Adder& add) {
    const std::string cf = "conda-forge";
    for (const auto& py : kPythons) {
        std::string m = std::to_string(py.minor);
        // Depends copied from the snapshot's python-3.9.18 record (conda-forge adds pip).
        auto& r = add(cf, "python", py.full, hash7(std::string("python") + py.full) + "_0_cpython", 0,
                      {"bzip2 >=1.0.8,<2.0a0", "ld_impl_linux-64 >=2.36.1", "libffi >=3.4,<4.0a0", "libgcc-ng >=12",
                       "libnsl >=2.0.0,<2.1.0a0", "libsqlite >=3.43.0,<4.0a0", "libuuid >=2.38.1,<3.0a0",
                       "libzlib >=1.2.13,<1.3.0a0", "ncurses >=6.4,<7.0a0", "openssl >=3.1.2,<4.0a0",
                       "readline >=8.2,<9.0a0", "tk >=8.6.12,<8.7.0a0", "tzdata", "xz >=5.2.6,<6.0a0", "pip"},
                      kShapeCfPython);
        r.constrains = {abi_dep(py.minor)};
        r.license = "Python-2.0";
        // conda-forge's python_abi builds: 2_cp36m, 2_cp37m, 2_cp38, 2_cp39, 3_cp310, 3_cp311.
        std::string abi_build = std::string(py.minor >= 10 ? "3" : "2") + "_cp3" + m + (py.minor < 8 ? "m" : "");
        auto& abi = add(cf, "python_abi", "3." + m, abi_build, py.minor >= 10 ? 3 : 2, {}, kShapeCfPython);
        abi.constrains = {"python 3." + m + ".* *_cpython"};
    }
    add.noarch_python(cf, "pip", "21.3.1", {"python >=3.6", "setuptools", "wheel"}, kShapeCfPython).entry_points = {
        "pip = pip._internal.cli.main:main", "pip3 = pip._internal.cli.main:main"};
    add.noarch_python(cf, "pip", "23.3.1", {"python >=3.7", "setuptools", "wheel"}, kShapeCfPython).entry_points = {
        "pip = pip._internal.cli.main:main", "pip3 = pip._internal.cli.main:main"};
    // setuptools 59.5.0 (the torch 1.9/1.10 advisory's fix) as per-Python builds, 68.2.2 noarch.
    add.per_python(cf, "setuptools", "59.5.0", 6, 10, {}, kShapeCfPython);
    add.noarch_python(cf, "setuptools", "68.2.2", {"python >=3.7"}, kShapeCfPython);
    add.noarch_python(cf, "wheel", "0.37.1", {"python >=2.7"}, kShapeCfPython).entry_points = {"wheel = wheel.cli:main"};
    add.noarch_python(cf, "wheel", "0.42.0", {"python >=3.7"}, kShapeCfPython).entry_points = {"wheel = wheel.cli:main"};
    for (const char* v : {"3.10.0.2", "4.5.0", "4.8.0"}) {
        std::string pyreq = std::string(v) == "3.10.0.2" ? "python >=3.6" : "python >=3.7";
        add.noarch_python(cf, "typing_extensions", v, {pyreq}, kNoSnapshot);
        add.noarch_python(cf, "typing-extensions", v, {std::string("typing_extensions ") + v + " pyhd8ed1ab_0"}, kNoSnapshot);
    }
    add.noarch_python(cf, "dataclasses", "0.8", {"python >=3.6,<3.7"}, kNoSnapshot);
    add.noarch_python(cf, "filelock", "3.13.1", {"python >=3.7"}, kNoSnapshot);
    add.per_python(cf, "markupsafe", "2.1.3", 7, 11, {"libgcc-ng >=12"}, kNoSnapshot);
    add.noarch_python(cf, "jinja2", "3.1.2", {"markupsafe >=2.0", "python >=3.7"}, kNoSnapshot);
    add.noarch_python(cf, "networkx", "2.5.1", {"decorator >=4.3,<5", "python >=3.6"}, kNoSnapshot);
    add.noarch_python(cf, "networkx", "3.1", {"python >=3.8"}, kNoSnapshot);
    add.noarch_python(cf, "decorator", "4.4.2", {"python >=2.7"}, kNoSnapshot);
    add.noarch_python(cf, "mpmath", "1.3.0", {"python >=3.6"}, kNoSnapshot);
    add.noarch_python(cf, "sympy", "1.12", {"__unix", "gmpy2 >=2.0.8", "mpmath >=0.19", "python >=3.8"}, kNoSnapshot)
        .entry_points = {"isympy = isympy:main"};
    add.per_python(cf, "gmpy2", "2.1.2", 8, 11, {"gmp >=6.2.1,<7.0a0", "libgcc-ng >=12"}, kNoSnapshot);
    add.noarch_python(cf, "certifi", "2023.11.17", {"python >=3.7"}, kShapeCfPython);
    add.noarch_python(cf, "idna", "3.6", {"python >=3.6"}, kNoSnapshot);
    add.noarch_python(cf, "charset-normalizer", "3.3.2", {"python >=3.7"}, kNoSnapshot).entry_points = {
        "normalizer = charset_normalizer.cli:cli_detect"};
    add.noarch_python(cf, "urllib3", "2.1.0", {"python >=3.7"}, kNoSnapshot);
    add.noarch_python(cf, "requests", "2.31.0",
                      {"certifi >=2017.4.17", "charset-normalizer >=2,<4", "idna >=2.5,<4", "python >=3.7",
                       "urllib3 >=1.21.1,<3"},
                      kNoSnapshot);
    add.per_python(cf, "pyyaml", "6.0.1", 6, 11, {"libgcc-ng >=12", "yaml >=0.2.5,<0.3.0a0"}, kNoSnapshot);
    add.per_python(cf, "pillow", "8.4.0", 6, 10,
                   {"freetype >=2.10.4,<3.0a0", "jpeg >=9d,<10a", "libgcc-ng >=9.4.0", "libtiff >=4.3.0,<5.0a0",
                    "libzlib >=1.2.11,<1.3.0a0", "tk >=8.6.11,<8.7.0a0"},
                   kNoSnapshot);
    add.per_python(cf, "pillow", "10.1.0", 8, 11,
                   {"freetype >=2.12.1,<3.0a0", "libgcc-ng >=12", "libjpeg-turbo >=3.0.0,<4.0a0",
                    "libtiff >=4.6.0,<4.7.0a0", "libzlib >=1.2.13,<1.3.0a0", "tk >=8.6.13,<8.7.0a0"},
                   kNoSnapshot);
}

void numeric_stack(Adder& add, const Tables& tables) {
    const std::string cf = "conda-forge";
    // conda-forge BLAS: libblas/libcblas/liblapack builds over openblas or mkl, as the
    // mamba numpy snapshot shows for 3.9.0 build 20.
    for (const std::string impl : {"openblas", "mkl"}) {
        std::string build = "20_linux64_" + impl;
        std::string impl_dep = impl == "openblas" ? "libopenblas >=0.3.25,<1.0a0" : "mkl >=2023.2.0,<2024.0a0";
        auto& blas = add(cf, "libblas", "3.9.0", build, 20, {impl_dep}, kShapeCfNumpy);
        blas.constrains = {"liblapack 3.9.0 " + build, "libcblas 3.9.0 " + build, "blas * " + impl};
        add(cf, "libcblas", "3.9.0", build, 20, {"libblas 3.9.0 " + build}, kShapeCfNumpy).constrains = {
            "liblapack 3.9.0 " + build, "blas * " + impl};
        add(cf, "liblapack", "3.9.0", build, 20, {"libblas 3.9.0 " + build}, kShapeCfNumpy).constrains = {
            "libcblas 3.9.0 " + build, "blas * " + impl};
        add(cf, "blas", "2.120", impl, 20,
            {"libblas 3.9.0 " + build, "libcblas 3.9.0 " + build, "liblapack 3.9.0 " + build}, kShapeCfNumpy);
    }
    add.generic(cf, "libopenblas", "0.3.25", {"libgcc-ng >=12", "libgfortran-ng", "libgfortran5 >=12.3.0"}, kShapeCfNumpy)
        .constrains = {"openblas >=0.3.25,<0.3.26.0a0"};
    add.generic(cf, "mkl", "2023.2.0", {"_openmp_mutex >=4.5", "tbb 2021.*"}, kNoSnapshot, false, 50496);

    // numpy: which Pythons each release was built for is not in the facts (python_libs.yaml
    // lists numpy<->Python as unverified); these windows follow the real conda-forge builds.
    struct NumpyRel {
        const char* v;
        int lo, hi;
    };
    for (const auto& n : {NumpyRel{"1.19.5", 6, 9}, NumpyRel{"1.21.6", 7, 10}, NumpyRel{"1.23.5", 8, 11},
                          NumpyRel{"1.24.4", 8, 11}, NumpyRel{"1.26.4", 9, 11}}) {
        for (const auto& py : kPythons) {
            if (py.minor < n.lo || py.minor > n.hi) continue;
            std::vector<std::string> deps = {"libblas >=3.9.0,<4.0a0", "libcblas >=3.9.0,<4.0a0", "libgcc-ng >=12",
                                             "liblapack >=3.9.0,<4.0a0", "libstdcxx-ng >=12", py_dep(py.minor),
                                             abi_dep(py.minor)};
            std::sort(deps.begin(), deps.end());
            auto& r = add(cf, "numpy", n.v, py_tag(py.minor) + hash7(std::string("numpy") + n.v + py_tag(py.minor)) + "_0", 0,
                          deps, kShapeCfNumpy);
            r.constrains = {"numpy-base <0a0"};
            r.entry_points = {};  // f2py ships as a plain script in bin/
        }
    }

    // numba and llvmlite: versions and ranges from the numba table (facts/python_libs.yaml).
    // Rows with no Python upper bound stop at 3.8, as python_libs.yaml's unverified note says
    // of numba 0.48-0.51.
    std::set<std::string> llvm_done;
    for (const auto& row : tables.numba) {
        int lo, hi;
        python_window(row.python, 8, lo, hi);
        std::string llvm_lo = lower_bound(row.llvmlite), llvm_hi = upper_bound(row.llvmlite);
        std::string llvm_dep = "llvmlite >=" + llvm_lo + ",<" + release_of(llvm_hi) + ".0a0";
        std::string numpy_dep = "numpy " + row.numpy;
        numpy_dep.erase(std::remove(numpy_dep.begin() + 6, numpy_dep.end(), ' '), numpy_dep.end());
        add.per_python(cf, "numba", row.numba, lo, hi,
                       {"_openmp_mutex >=4.5", "libgcc-ng >=12", "libstdcxx-ng >=12", llvm_dep, numpy_dep, "setuptools"},
                       row.source);
        for (auto it = add.out.rbegin(); it != add.out.rend() && it->name == "numba" && it->version == row.numba; ++it) {
            it->constrains = {"cudatoolkit >=9.2", "libopenblas !=0.3.6", "scipy >=1.0"};
            it->entry_points = {};
        }
        if (llvm_done.insert(llvm_lo).second)
            add.per_python(cf, "llvmlite", llvm_lo, lo, hi, {"libgcc-ng >=12", "libstdcxx-ng >=12", "libzlib >=1.2.13,<1.3.0a0"},
                           row.source + " (llvmlite at the lower bound numba " + row.numba + " accepts)");
    }
}

void cuda_stack(Adder& add) {
    const std::string cf = "conda-forge", nv = "nvidia";
    // cudatoolkit 10.1-11.8 (conda-forge). No snapshot has these records (snapshots/README
    // "Gaps"); versions are the toolkit releases in facts/cuda_driver.yaml.
    struct Tk {
        const char* v;
        int number;
    };
    for (const auto& tk : {Tk{"10.1.243", 10}, Tk{"10.2.89", 13}, Tk{"11.0.3", 11}, Tk{"11.1.1", 13}, Tk{"11.2.2", 12},
                           Tk{"11.3.1", 13}, Tk{"11.4.3", 13}, Tk{"11.5.2", 13}, Tk{"11.6.2", 13}, Tk{"11.7.1", 13},
                           Tk{"11.8.0", 13}}) {
        std::string v = tk.v;
        std::string mm = v.substr(0, v.rfind('.'));
        std::vector<std::string> deps = {"__glibc >=2.17,<3.0.a0", "libgcc-ng >=12", "libstdcxx-ng >=12"};
        if (v[0] == '1' && v[1] == '1') {
            int minor = std::stoi(mm.substr(3));
            deps.push_back("cuda-version >=" + mm + ",<11." + std::to_string(minor + 1) + ".0a0");
        }
        auto& r = add.generic(cf, "cudatoolkit", v, deps, std::string("facts/cuda_driver.yaml toolkit versions; ") + kNoSnapshot,
                              false, tk.number);
        r.ext = ".tar.bz2";
        r.license = "LicenseRef-NVIDIA-End-User-License-Agreement";
    }
    // cuda-version: the metapackage conda-forge and nvidia use to pin one CUDA minor; its
    // constrains carry the driver requirement (`__cuda`) and the cudatoolkit pairing.
    for (const char* v : {"10.2", "11.0", "11.1", "11.2", "11.3", "11.4", "11.5", "11.6", "11.7", "11.8", "12.0", "12.1",
                          "12.2", "12.3", "12.4", "12.5", "12.6", "12.8", "12.9"}) {
        std::string s = v;
        std::string major = s.substr(0, s.find('.'));
        auto& r = add.generic(cf, "cuda-version", s, {}, std::string("facts/cuda_driver.yaml (minor version compatibility per major); ") + kNoSnapshot,
                              true, 3);
        r.constrains = {"__cuda >=" + (major == "10" ? s : major), "cudatoolkit " + s + "|" + s + ".*"};
    }
    // cuda-nvcc in the nvidia channel's naming (component version of nvcc per toolkit).
    // The real nvidia channel starts its cuda-nvcc packages at 11.3; 11.0-11.2 are kept so an
    // nvcc matching torch cu111 exists (BEVFormer scenario). Component versions are from the
    // toolkits' release notes, not from ../shared/facts.
    for (const char* v : {"11.0.221", "11.1.105", "11.2.152", "11.3.58", "11.4.152", "11.5.119", "11.6.124", "11.7.99",
                          "11.8.89", "12.0.76", "12.1.105", "12.2.140", "12.3.107", "12.4.131", "12.5.82", "12.6.85",
                          "12.8.93", "12.9.86"}) {
        std::string s = v;
        std::string mm = s.substr(0, s.rfind('.'));
        std::string major = mm.substr(0, mm.find('.'));
        int minor = std::stoi(mm.substr(mm.find('.') + 1));
        std::vector<std::string> deps = {"__glibc >=2.17"};
        if (major == "12") deps.push_back("cuda-version >=" + mm + ",<" + major + "." + std::to_string(minor + 1) + ".0a0");
        auto& r = add(nv, "cuda-nvcc", s, "0", 0, deps, kNoSnapshot);
        r.license = "LicenseRef-NVIDIA-End-User-License-Agreement";
        r.ext = major == "12" ? ".conda" : ".tar.bz2";
    }
    // CUDA runtime libraries pytorch-cuda depends on, at the lower bound each pytorch-cuda
    // record asks for (rattler-pytorch-channel snapshot, pytorch-cuda 11.7 / 11.8 / 12.1).
    struct Rt {
        const char* cuda;
        const char* runtime;  // cuda-cudart & friends version
        std::vector<std::pair<const char*, const char*>> libs;
    };
    const std::vector<Rt> rts = {
        {"11.7", "11.7.99",
         {{"libcublas", "11.10.1.25"}, {"libcufft", "10.7.2.50"}, {"libcusolver", "11.3.5.50"}, {"libcusparse", "11.7.3.50"},
          {"libnpp", "11.7.3.21"}, {"libnvjpeg", "11.7.2.34"}}},
        {"11.8", "11.8.89",
         {{"libcublas", "11.11.3.6"}, {"libcufft", "10.9.0.58"}, {"libcusolver", "11.4.1.48"}, {"libcusparse", "11.7.5.86"},
          {"libnpp", "11.8.0.86"}, {"libnvjpeg", "11.9.0.86"}}},
        {"12.1", "12.1.105",
         {{"libcublas", "12.1.0.26"}, {"libcufft", "11.0.2.4"}, {"libcusolver", "11.4.4.55"}, {"libcusparse", "12.0.2.55"},
          {"libnpp", "12.0.2.50"}, {"libnvjitlink", "12.1.105"}, {"libnvjpeg", "12.1.0.39"}}},
    };
    const std::string rt_src = "versions: lower bounds in pytorch-cuda depends (rattler-pytorch-channel snapshot)";
    for (const auto& rt : rts) {
        for (const char* n : {"cuda-cudart", "cuda-cupti", "cuda-nvrtc", "cuda-nvtx"}) add(nv, n, rt.runtime, "0", 0, {}, rt_src);
        std::vector<std::string> libdeps;
        for (const auto& [name, version] : rt.libs) {
            add(nv, name, version, "0", 0, {}, rt_src);
            libdeps.push_back(std::string(name) + " >=" + version);
        }
        add(nv, "cuda-libraries", rt.runtime, "0", 0, libdeps, rt_src);
        add(nv, "cuda-runtime", rt.runtime, "0", 0, {std::string("cuda-libraries >=") + rt.runtime}, rt_src);
    }
}

void compilers(Adder& add) {
    const std::string cf = "conda-forge";
    const std::string src = std::string("conda-forge compiler naming (gcc_linux-64/gxx_linux-64 activation packages over "
                                        "gcc_impl_linux-64); ") + kNoSnapshot;
    add.generic(cf, "kernel-headers_linux-64", "3.10.0", {}, src, true, 16);
    add.generic(cf, "sysroot_linux-64", "2.17", {"kernel-headers_linux-64 3.10.0 *_16"}, src, true, 16).constrains = {
        "__glibc >=2.17"};
    add.generic(cf, "binutils_impl_linux-64", "2.40", {"ld_impl_linux-64 2.40.*", "sysroot_linux-64"}, src);
    add.generic(cf, "binutils_linux-64", "2.40", {"binutils_impl_linux-64 2.40.*", "sysroot_linux-64"}, src, false, 2);
    for (const char* v : {"7.5.0", "8.5.0", "9.5.0", "10.4.0", "11.4.0", "12.3.0", "13.2.0"}) {
        std::string s = v;
        std::string major = s.substr(0, s.find('.'));
        auto libgcc = [&] {  // the libgcc-ng the mirror has for this major (7.5.0, 11.2.0 …)
            for (const char* l : {"7.5.0", "8.5.0", "9.5.0", "10.4.0", "11.2.0", "12.3.0", "13.2.0"})
                if (std::string(l).substr(0, std::string(l).find('.')) == major) return std::string(l);
            return s;
        }();
        add.generic(cf, "gcc_impl_linux-64", s,
                    {"binutils_impl_linux-64 >=2.39", "libgcc-ng >=" + libgcc, "libgomp >=" + libgcc,
                     "libstdcxx-ng >=" + libgcc, "sysroot_linux-64"},
                    src);
        add.generic(cf, "gxx_impl_linux-64", s, {"gcc_impl_linux-64 " + s + ".*", "sysroot_linux-64"}, src);
        std::string gcc_build = hash7("gcc_linux-64" + s) + "_2";
        add(cf, "gcc_linux-64", s, gcc_build, 2, {"binutils_linux-64 2.40.*", "gcc_impl_linux-64 " + s + ".*", "sysroot_linux-64"}, src);
        add.generic(cf, "gxx_linux-64", s,
                    {"binutils_linux-64 2.40.*", "gcc_linux-64 " + s + " " + gcc_build, "gxx_impl_linux-64 " + s + ".*",
                     "sysroot_linux-64"},
                    src, false, 2);
        add.generic(cf, "gcc", s, {"gcc_impl_linux-64 " + s + ".*"}, src, false, 2);
        add.generic(cf, "gxx", s, {"gcc " + s + ".*", "gxx_impl_linux-64 " + s + ".*"}, src, false, 2);
    }
}

// conda's `defaults` (repo.anaconda.com pkgs/main and pkgs/r, conda/base/constants.py
// DEFAULT_CHANNELS_UNIX): pkgs/main's own shapes here; what else it needs is re-published
// from the conda-forge tables by publish_defaults_stand_ins.
void defaults_channel(Adder& add) {
    const std::string main = "pkgs/main";
    auto& mkl_blas = add(main, "blas", "1.0", "mkl", 0, {}, kShapeDefaults);
    (void)mkl_blas;
    add(main, "blas", "1.0", "openblas", 0, {}, kShapeDefaults).track_features = "nomkl";
    add(main, "nomkl", "3.0", "0", 0, {"blas 1.0 openblas"}, kShapeDefaults).track_features = "nomkl";
    add(main, "intel-openmp", "2021.4.0", "h06a4308_3561", 3561, {}, kShapeDefaults);
    add(main, "mkl", "2021.4.0", "h06a4308_640", 640, {"intel-openmp 2021.*"}, kShapeDefaults);
    add(main, "jpeg", "9b", "h024ee3a_2", 2, {"libgcc-ng >=7.2.0"}, kShapeDefaults);
    // torchvision <0.11 in the pytorch channel pins "jpeg <=9b"; conda-forge's pillow/libtiff
    // moved to libjpeg-turbo (which constrains jpeg away), so defaults' jpeg-9b stack is what
    // makes those builds installable, as it did for real.
    add(main, "libtiff", "4.2.0", "h85742a9_0", 0,
        {"jpeg >=9b,<10a", "libgcc-ng >=7.3.0", "libstdcxx-ng >=7.3.0", "xz >=5.2.5,<6.0a0", "zlib >=1.2.11,<1.3.0a0"},
        kShapeDefaults);
    add.per_python(main, "pillow", "8.3.1", 6, 9,
                   {"freetype >=2.10.4,<3.0a0", "jpeg", "libgcc-ng >=7.5.0", "libtiff >=4.1.0,<5.0a0", "tk",
                    "zlib >=1.2.11,<1.3.0a0"},
                   kShapeDefaults);
    add.per_python(main, "mkl-service", "2.4.0", 6, 11, {"libgcc-ng >=7.5.0", "mkl >=2021.4.0,<2022.0a0"}, kShapeDefaults);
    add.per_python(main, "mkl_fft", "1.3.1", 6, 11, {"libgcc-ng >=7.5.0", "mkl >=2021.4.0,<2022.0a0", "mkl-service >=2.3.0,<3.0a0", "numpy >=1.16"}, kShapeDefaults);
    add.per_python(main, "mkl_random", "1.2.2", 6, 11, {"libgcc-ng >=7.5.0", "libstdcxx-ng >=7.5.0", "mkl >=2021.4.0,<2022.0a0", "mkl-service >=2.3.0,<3.0a0", "numpy >=1.16"}, kShapeDefaults);
    struct Rel {
        const char* v;
        int lo, hi;
    };
    // defaults splits numpy into numpy (a thin package) and numpy-base (the code).
    for (const auto& n : {Rel{"1.19.2", 6, 9}, Rel{"1.21.5", 7, 10}, Rel{"1.23.5", 8, 11}}) {
        for (const auto& py : kPythons) {
            if (py.minor < n.lo || py.minor > n.hi) continue;
            std::string base_build = py_tag(py.minor) + hash7(std::string("numpy-base") + n.v + py_tag(py.minor)) + "_0";
            add(main, "numpy-base", n.v, base_build, 0,
                {"blas 1.0 mkl", "libgcc-ng >=7.3.0", "mkl >=2021.4.0,<2022.0a0", "mkl-service >=2.3.0,<3.0a0", py_dep(py.minor)},
                kShapeDefaults);
            add(main, "numpy", n.v, py_tag(py.minor) + hash7(std::string("numpy") + n.v + py_tag(py.minor)) + "_0", 0,
                {"blas 1.0 mkl", "libgcc-ng >=7.3.0", "mkl >=2021.4.0,<2022.0a0", "mkl-service >=2.3.0,<3.0a0", "mkl_fft",
                 "mkl_random", std::string("numpy-base ") + n.v + " " + base_build, py_dep(py.minor)},
                kShapeDefaults);
        }
    }
}

// The intel channel, only for what a built-in recipe asks of it (EchoFusion's
// `conda install -c intel intel-aikit-modin`): a stand-in metapackage without its real depends.
void intel_channel(Adder& add) {
    auto& r = add.generic("intel", "intel-aikit-modin", "2021.4.1", {},
                          "stand-in for the intel channel's metapackage (its depends left out); " + std::string(kNoSnapshot), true);
    r.license = "LicenseRef-Intel";
}

// The pytorch channel without the snapshot: builds in the real build-string shapes.
std::string cudnn_for(const std::string& cuda) {
    // cudnn versions in the real build strings (rattler-pytorch-channel snapshot).
    static const std::map<std::string, std::string> m = {{"10.1", "7.6.3"}, {"10.2", "7.6.5"}, {"11.1", "8.0.5"},
                                                         {"11.3", "8.2.0"}, {"11.6", "8.3.2"}, {"11.7", "8.5.0"},
                                                         {"11.8", "8.7.0"}, {"12.1", "8.9.2"}, {"12.4", "9.1.0"}};
    auto it = m.find(cuda);
    return it == m.end() ? "8.9.2" : it->second;
}

std::string next_minor(const std::string& mm) {  // "11.1" -> "11.2"
    auto dot = mm.find('.');
    return mm.substr(0, dot) + "." + std::to_string(std::stoi(mm.substr(dot + 1)) + 1);
}

int version_key(const std::string& v) {  // "1.13.1" -> 11301
    int a = 0, b = 0, c = 0;
    std::sscanf(v.c_str(), "%d.%d.%d", &a, &b, &c);
    return a * 10000 + b * 100 + c;
}

void pytorch_channel(Adder& add, const Tables& tables) {
    const std::string pt = "pytorch";
    for (const char* mutex : {"cpu", "cuda"}) {
        auto& r = add(pt, "pytorch-mutex", "1.0", mutex, 0, {}, std::string("real noarch subdir of the pytorch channel; ") + kNoSnapshot);
        r.subdir = "noarch";
        r.noarch = "generic";
        if (std::string(mutex) == "cpu") r.track_features = "pytorch-mutex";
    }
    auto& cpu1 = add(pt, "cpuonly", "1.0", "0", 0, {}, std::string("real noarch subdir of the pytorch channel; ") + kNoSnapshot);
    cpu1.subdir = "noarch";
    cpu1.noarch = "generic";
    cpu1.track_features = "cpuonly";
    auto& cpu2 = add(pt, "cpuonly", "2.0", "0", 0, {"pytorch-mutex 1.0 cpu"}, std::string("real noarch subdir of the pytorch channel; ") + kNoSnapshot);
    cpu2.subdir = "noarch";
    cpu2.noarch = "generic";
    add(pt, "ffmpeg", "4.3", "hf484d3e_0", 0,
        {"bzip2 >=1.0.8,<2.0a0", "freetype >=2.10.2,<3.0a0", "gmp >=6.1.2", "gnutls >=3.6.5,<3.7.0a0", "lame >=3.100,<3.101.0a0",
         "libgcc-ng >=7.3.0", "libiconv", "libstdcxx-ng >=7.3.0", "openh264 >=2.1.0,<2.2.0a0", "zlib >=1.2.11,<1.3.0a0"},
        kShapePytorch);
    for (const auto& [cuda, deps] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"11.7", {"cuda-cudart >=11.7,<11.8", "cuda-cupti >=11.7,<11.8", "cuda-libraries >=11.7,<11.8", "cuda-nvrtc >=11.7,<11.8",
                       "cuda-nvtx >=11.7,<11.8", "cuda-runtime >=11.7,<11.8", "libcublas >=11.10.1.25,<11.11.3.6",
                       "libcufft >=10.7.2.50,<10.9.0.58", "libcusolver >=11.3.5.50,<11.4.1.48", "libcusparse >=11.7.3.50,<11.7.5.86",
                       "libnpp >=11.7.3.21,<11.8.0.86", "libnvjpeg >=11.7.2.34,<11.9.0.86"}},
             {"11.8", {"cuda-cudart >=11.8,<12.0", "cuda-cupti >=11.8,<12.0", "cuda-libraries >=11.8,<12.0", "cuda-nvrtc >=11.8,<12.0",
                       "cuda-nvtx >=11.8,<12.0", "cuda-runtime >=11.8,<12.0", "libcublas >=11.11.3.6,<12.0.1.189",
                       "libcufft >=10.9.0.58,<11.0.0.21", "libcusolver >=11.4.1.48,<11.4.2.57", "libcusparse >=11.7.5.86,<12.0.0.76",
                       "libnpp >=11.8.0.86,<12.0.0.30", "libnvjpeg >=11.9.0.86,<12.0.0.28"}},
             {"12.1", {"cuda-cudart >=12.1,<12.2", "cuda-cupti >=12.1,<12.2", "cuda-libraries >=12.1,<12.2", "cuda-nvrtc >=12.1,<12.2",
                       "cuda-nvtx >=12.1,<12.2", "cuda-runtime >=12.1,<12.2", "libcublas >=12.1.0.26,<12.1.3.1",
                       "libcufft >=11.0.2.4,<11.0.2.54", "libcusolver >=11.4.4.55,<11.4.5.107", "libcusparse >=12.0.2.55,<12.1.0.106",
                       "libnpp >=12.0.2.50,<12.1.0.40", "libnvjitlink >=12.1.105,<12.2.0", "libnvjpeg >=12.1.0.39,<12.2.0.2"}}}) {
        add(pt, "pytorch-cuda", cuda, hash7("pytorch-cuda" + cuda) + "_5", 5, deps, kShapePytorch);
    }
    for (const char* tv : {"2.0.0", "2.1.0"})
        for (const auto& py : kPythons)
            if (py.minor >= 8) add(pt, "torchtriton", tv, py_tag(py.minor), 0, {"filelock", py_dep(py.minor), "pytorch"}, kShapePytorch);

    for (const auto& rel : tables.torch) {
        int key = version_key(rel.torch);
        if (key >= 20200) continue;  // the pytorch channel's last builds in the snapshot era
        std::vector<std::string> variants{"cpu"};
        for (const auto& c : rel.conda_cuda) variants.push_back(c);
        for (const auto& py : kPythons) {
            if (py.minor < rel.py_min || py.minor > std::min(rel.py_max, 11)) continue;
            std::string pyv = "3." + std::to_string(py.minor);
            for (const auto& var : variants) {
                bool cpu = var == "cpu";
                bool pytorch_cuda = !cpu && key >= 11300;  // 1.13+ moved from cudatoolkit to pytorch-cuda
                std::vector<std::string> deps = {"blas * mkl", "mkl >=2018", py_dep(py.minor), "typing_extensions"};
                if (key < 11200) deps.push_back("libuv >=1.40.0,<2.0a0");
                if (key < 11000) deps.push_back("ninja");
                if (key >= 11000) deps.push_back(std::string("pytorch-mutex 1.0 ") + (cpu ? "cpu" : "cuda"));
                if (key >= 20000) {
                    for (const char* d : {"filelock", "jinja2", "networkx", "sympy"}) deps.push_back(d);
                    if (!cpu) deps.push_back("torchtriton " + std::string(key >= 20100 ? "2.1.0" : "2.0.0"));
                }
                if (!cpu) deps.push_back(pytorch_cuda ? "pytorch-cuda >=" + var + ",<" + next_minor(var)
                                                      : "cudatoolkit >=" + var + ",<" + next_minor(var));
                std::sort(deps.begin(), deps.end());
                std::string build = cpu ? "py" + pyv + "_cpu_0" : "py" + pyv + "_cuda" + var + "_cudnn" + cudnn_for(var) + "_0";
                auto& r = add(pt, "pytorch", rel.torch, build, 0, deps, rel.source + "; " + kShapePytorch);
                if (key >= 11000) r.constrains = {cpu ? "cpuonly" : "cpuonly <0"};
                else if (cpu) r.features = "cpuonly";
                r.license = "BSD 3-Clause";

                std::string tag = cpu ? "cpu" : "cu" + std::string(var).erase(var.find('.'), 1);
                std::string cuda_dep = cpu ? "" : pytorch_cuda ? "pytorch-cuda " + var + ".*" : "cudatoolkit >=" + var + ",<" + next_minor(var);
                std::vector<std::string> tv = {"ffmpeg >=4.2", "jpeg", "libpng", "numpy >=1.11", "pillow >=5.3.0,!=8.3.*",
                                               py_dep(py.minor), "pytorch " + rel.torch};
                if (!cpu) tv.push_back(cuda_dep);
                if (key >= 11200) {
                    tv.push_back(std::string("pytorch-mutex 1.0 ") + (cpu ? "cpu" : "cuda"));
                    tv.push_back("requests");
                }
                std::sort(tv.begin(), tv.end());
                auto& v = add(pt, "torchvision", rel.torchvision, "py3" + std::to_string(py.minor) + "_" + tag, 0, tv,
                              rel.source + "; " + kShapePytorch);
                if (key >= 11200) v.constrains = {cpu ? "cpuonly" : "cpuonly <0"};
                else if (cpu) v.features = "cpuonly";
                if (!rel.torchaudio.empty() && (key >= 11000 || cpu)) {
                    // torchaudio before 0.10 had one build per Python (no CUDA variants).
                    std::vector<std::string> ta = {"numpy >=1.11", py_dep(py.minor), "pytorch " + rel.torch};
                    if (!cpu && key >= 11000) ta.push_back(cuda_dep);
                    std::sort(ta.begin(), ta.end());
                    std::string build_ta = key >= 11000 ? "py3" + std::to_string(py.minor) + "_" + tag : "py3" + std::to_string(py.minor);
                    add(pt, "torchaudio", rel.torchaudio, build_ta, 0, ta, rel.source + "; " + kShapePytorch);
                }
            }
        }
    }
}

std::string record_python_minor(const nlohmann::json& rec) {
    for (const auto& d : rec.value("depends", nlohmann::json::array())) {
        std::string s = d.get<std::string>();
        static const std::regex re(R"(^python >=3\.(\d+),)");
        std::smatch m;
        if (std::regex_search(s, m, re)) return m[1];
    }
    return "";
}

}  // namespace

std::vector<CondaRecord> conda_records(const Tables& tables) {
    std::vector<CondaRecord> out;
    Adder add{out};
    base_libraries(add);
    python_stack(add);
    numeric_stack(add, tables);
    cuda_stack(add);
    compilers(add);
    defaults_channel(add);
    intel_channel(add);
    pytorch_channel(add, tables);
    return out;
}

bool layer_pytorch_snapshot(const std::string& shared_dir, std::vector<CondaRecord>& records) {
    namespace fs = std::filesystem;
    fs::path file = fs::path(shared_dir) / "snapshots" / "rattler-pytorch-channel" / "linux-64" / "repodata.json";
    if (shared_dir.empty() || !fs::exists(file)) return false;
    std::ifstream in(file);
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(file.string() + ": not valid JSON: " + e.what());
    }
    // The names the pytorch channel is used for; the rest of the channel (ignite, faiss …)
    // would add archives nobody resolves.
    static const std::set<std::string> keep = {"pytorch", "torchvision", "torchaudio", "pytorch-cuda", "torchtriton",
                                               "ffmpeg", "libjpeg-turbo"};
    std::vector<CondaRecord> layered;
    for (const char* key : {"packages", "packages.conda"}) {
        if (!doc.contains(key)) continue;
        for (auto it = doc[key].begin(); it != doc[key].end(); ++it) {
            const auto& rec = it.value();
            std::string name = rec.value("name", "");
            if (!keep.count(name)) continue;
            std::string py = record_python_minor(rec);
            if (!py.empty() && (std::stoi(py) < 6 || std::stoi(py) > 11)) continue;  // no such python in the mirror
            CondaRecord r;
            r.channel = "pytorch";
            r.name = name;
            r.version = rec.value("version", "");
            r.build = rec.value("build", "");
            r.build_number = rec.value("build_number", 0);
            for (const auto& d : rec.value("depends", nlohmann::json::array())) r.depends.push_back(d.get<std::string>());
            for (const auto& d : rec.value("constrains", nlohmann::json::array())) r.constrains.push_back(d.get<std::string>());
            r.features = rec.value("features", "");
            r.track_features = rec.value("track_features", "");
            r.license = rec.value("license", "");
            r.timestamp = rec.value("timestamp", std::int64_t{0});
            r.ext = std::string(key) == "packages" ? ".tar.bz2" : ".conda";
            r.source = "snapshots/rattler-pytorch-channel/linux-64/repodata.json " + it.key() +
                       " (real record; archive and digests generated)";
            std::string expect = r.filename();
            if (expect != it.key()) continue;  // a record whose key is not its own name-version-build is left out
            layered.push_back(std::move(r));
        }
    }
    if (layered.empty()) return false;
    records.erase(std::remove_if(records.begin(), records.end(),
                                 [](const CondaRecord& r) {
                                     return r.channel == "pytorch" && r.subdir == "linux-64" && keep.count(r.name);
                                 }),
                  records.end());
    std::sort(layered.begin(), layered.end(), [](const CondaRecord& a, const CondaRecord& b) { return a.filename() < b.filename(); });
    records.insert(records.end(), layered.begin(), layered.end());
    return true;
}

int publish_defaults_stand_ins(std::vector<CondaRecord>& records) {
    std::set<std::string> in_main;
    for (const auto& r : records)
        if (r.channel == "pkgs/main") in_main.insert(r.name);
    std::vector<CondaRecord> copies;
    for (const auto& r : records) {
        if (r.channel != "conda-forge" || in_main.count(r.name)) continue;
        CondaRecord c = r;
        c.channel = "pkgs/main";
        c.ext = ".tar.bz2";
        c.source = r.source + "; re-published in pkgs/main as the mirror's stand-in for defaults (not a pkgs/main record)";
        copies.push_back(std::move(c));
    }
    // pkgs/r: the R channel `defaults` also searches; a few records so it exists in both subdirs.
    Adder add{copies, 1609459200000};
    const std::string src = "shape: conda-tests-defaults-2013-2018 repodata_r_linux-64.json (r-base, _r-mutex); trimmed";
    auto& mutex = add("pkgs/r", "_r-mutex", "1.0.0", "anacondar_1", 1, {}, src);
    mutex.subdir = "noarch";
    mutex.noarch = "generic";
    add("pkgs/r", "r-base", "3.5.1", "h1e0a451_2", 2, {"_r-mutex 1.* anacondar_1", "libgcc-ng >=7.2.0"}, src);
    int n = static_cast<int>(copies.size());
    records.insert(records.end(), copies.begin(), copies.end());
    return n;
}

std::vector<std::string> missing_conda_names(const std::vector<CondaRecord>& records) {
    std::set<std::string> have, missing;
    for (const auto& r : records) have.insert(r.name);
    for (const auto& r : records)
        for (const auto& d : r.depends) {
            std::string name = d.substr(0, d.find(' '));
            if (name.rfind("__", 0) == 0) continue;
            if (!have.count(name)) missing.insert(name);
        }
    return {missing.begin(), missing.end()};
}

int fill_conda_closure(std::vector<CondaRecord>& records) {
    auto missing = missing_conda_names(records);
    Adder add{records, 1640995200000};
    for (const auto& name : missing) {
        std::string version = "1.0";
        for (const auto& r : records)
            for (const auto& d : r.depends)
                if (d.substr(0, d.find(' ')) == name) {
                    std::string lb = lower_bound(d);
                    if (!lb.empty()) version = lb;
                }
        add.generic("conda-forge", name, version, {}, "closure filler: stand-in so the name some record depends on exists "
                                                      "(not from facts or snapshots)");
    }
    return static_cast<int>(missing.size());
}

}  // namespace envlock::mirror
