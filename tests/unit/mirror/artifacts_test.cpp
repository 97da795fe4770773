// The archives the mirror publishes are real and self-consistent.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "resolver/specs/errors.hpp"
#include "tests/mirror/archive.hpp"
#include "tests/mirror/artifacts.hpp"

using namespace envlock::mirror;

namespace {

std::map<std::string, ArchiveMember> members(const std::string& bytes) {
    std::map<std::string, ArchiveMember> out;
    for (auto& m : read_archive(bytes)) out[m.path] = m;
    return out;
}

CondaRecord sample_record(const std::string& ext) {
    CondaRecord r;
    r.channel = "conda-forge";
    r.name = "numba";
    r.version = "0.48.0";
    r.build = "py38habcdef0_0";
    r.depends = {"llvmlite >=0.31,<0.32.0a0", "numpy >=1.15", "python >=3.8,<3.9.0a0"};
    r.constrains = {"cudatoolkit >=9.2"};
    r.timestamp = 1609459200000;
    r.ext = ext;
    return r;
}

// Checks info/paths.json against the payload members: every hardlink's digest and size.
void check_paths_json(const std::map<std::string, ArchiveMember>& info, const std::map<std::string, ArchiveMember>& pkg) {
    auto paths = nlohmann::json::parse(info.at("info/paths.json").content);
    CHECK(paths["paths_version"] == 1);
    REQUIRE(paths["paths"].size() >= 2);
    for (const auto& p : paths["paths"]) {
        std::string path = p["_path"];
        INFO(path);
        REQUIRE(pkg.count(path));
        if (p["path_type"] == "hardlink") {
            CHECK(p["sha256"] == sha256_hex_of(pkg.at(path).content));
            CHECK(p["size_in_bytes"] == pkg.at(path).content.size());
        }
    }
}

}  // namespace

TEST_CASE("a .tar.bz2 package holds index.json, paths.json, files and has_prefix with a text and a binary placeholder") {
    auto m = members(build_conda_package(sample_record(".tar.bz2")));
    REQUIRE(m.count("info/index.json"));
    auto index = nlohmann::json::parse(m["info/index.json"].content);
    CHECK(index["name"] == "numba");
    CHECK(index["depends"][0] == "llvmlite >=0.31,<0.32.0a0");
    CHECK(index["constrains"][0] == "cudatoolkit >=9.2");
    CHECK(index["subdir"] == "linux-64");
    check_paths_json(m, m);
    std::string has_prefix = m["info/has_prefix"].content;
    CHECK(has_prefix.find(std::string(kTextPlaceholder) + " text etc/conda/numba.pc") != std::string::npos);
    CHECK(has_prefix.find(binary_placeholder() + " binary lib/libnumba.so") != std::string::npos);
    CHECK(m["lib/libnumba.so"].content.find(binary_placeholder()) != std::string::npos);
    CHECK(m.count("lib/python3.8/site-packages/numba/__init__.py"));
    CHECK(m["info/files"].content.find("lib/libnumba.so\n") != std::string::npos);
}

TEST_CASE("a .conda package is a stored zip of metadata.json and zstd info/pkg tarballs") {
    auto outer = read_archive(build_conda_package(sample_record(".conda")));
    REQUIRE(outer.size() == 3);
    CHECK(outer[0].path == "metadata.json");
    CHECK(nlohmann::json::parse(outer[0].content)["conda_pkg_format_version"] == 2);
    CHECK(outer[1].path == "info-numba-0.48.0-py38habcdef0_0.tar.zst");
    CHECK(outer[2].path == "pkg-numba-0.48.0-py38habcdef0_0.tar.zst");
    auto info = members(outer[1].content), pkg = members(outer[2].content);
    CHECK(info.count("info/index.json"));
    CHECK_FALSE(pkg.count("info/index.json"));
    check_paths_json(info, pkg);
}

TEST_CASE("a noarch: python package declares its entry points in info/link.json") {
    CondaRecord r;
    r.channel = "conda-forge";
    r.subdir = "noarch";
    r.noarch = "python";
    r.name = "pip";
    r.version = "23.3.1";
    r.build = "pyhd8ed1ab_0";
    r.depends = {"python >=3.7"};
    r.entry_points = {"pip = pip._internal.cli.main:main"};
    auto outer = read_archive(build_conda_package(r));
    auto info = members(outer[1].content), pkg = members(outer[2].content);
    auto link = nlohmann::json::parse(info.at("info/link.json").content);
    CHECK(link["noarch"]["type"] == "python");
    CHECK(link["noarch"]["entry_points"][0] == "pip = pip._internal.cli.main:main");
    CHECK(pkg.count("site-packages/pip/__init__.py"));
    CHECK(nlohmann::json::parse(info.at("info/index.json").content)["noarch"] == "python");
}

TEST_CASE("the python package carries an interpreter stand-in and a bin/python symlink") {
    CondaRecord r = sample_record(".tar.bz2");
    r.name = "python";
    r.version = "3.8.18";
    r.build = "habc1234_0_cpython";
    auto m = members(build_conda_package(r));
    REQUIRE(m.count("bin/python3.8"));
    CHECK(m["bin/python"].symlink_to == "python3.8");
    CHECK(m["bin/python3.8"].mode == 0755);
    auto paths = nlohmann::json::parse(m["info/paths.json"].content)["paths"];
    bool softlink = false;
    for (const auto& p : paths) softlink |= p["_path"] == "bin/python" && p["path_type"] == "softlink";
    CHECK(softlink);
}

TEST_CASE("a wheel's RECORD lists every member with its urlsafe sha256 and size") {
    PyDist d;
    d.project = "torch";
    d.version = "1.9.1+cu111";
    d.tag = "cp38-cp38-linux_x86_64";
    d.requires_python = ">=3.6.2";
    d.requires_dist = {"typing-extensions"};
    d.console_scripts = {"torchrun = torch.distributed.run:main"};
    d.data_scripts = {"torch-info"};
    d.source = "test";
    auto m = members(build_wheel(d));
    REQUIRE(m.count("torch-1.9.1+cu111.dist-info/RECORD"));
    std::string record = m["torch-1.9.1+cu111.dist-info/RECORD"].content;
    for (const auto& [path, member] : m) {
        if (path.ends_with("/RECORD")) continue;
        INFO(path);
        CHECK(record.find(path + "," + record_digest(member.content) + "," + std::to_string(member.content.size()) + "\n") !=
              std::string::npos);
    }
    CHECK(record.find("torch-1.9.1+cu111.dist-info/RECORD,,") != std::string::npos);
    CHECK(m["torch-1.9.1+cu111.dist-info/WHEEL"].content.find("Root-Is-Purelib: false\nTag: cp38-cp38-linux_x86_64\n") !=
          std::string::npos);
    CHECK(m["torch-1.9.1+cu111.dist-info/METADATA"].content.find("Requires-Dist: typing-extensions\n") != std::string::npos);
    CHECK(m["torch-1.9.1+cu111.dist-info/entry_points.txt"].content == "[console_scripts]\ntorchrun = torch.distributed.run:main\n");
    CHECK(m["torch-1.9.1+cu111.data/scripts/torch-info"].content.rfind("#!python\n", 0) == 0);
    CHECK(m["torch/__init__.py"].content.find("cuda = \"11.1\"") != std::string::npos);
}

TEST_CASE("a wheel with a compressed platform tag writes one Tag line per expanded tag") {
    PyDist d;
    d.project = "numpy";
    d.version = "1.23.5";
    d.tag = "cp38-cp38-manylinux_2_17_x86_64.manylinux2014_x86_64";
    auto m = members(build_wheel(d));
    CHECK(m["numpy-1.23.5.dist-info/WHEEL"].content.find(
              "Tag: cp38-cp38-manylinux_2_17_x86_64\nTag: cp38-cp38-manylinux2014_x86_64\n") != std::string::npos);
}

TEST_CASE("an sdist is a gzip tarball with PKG-INFO under name-version/; its requirements live in setup.py, as on PyPI") {
    PyDist d;
    d.project = "mmcv-full";
    d.version = "1.4.0";
    d.requires_dist = {"addict", "yapf"};
    CHECK(d.filename() == "mmcv-full-1.4.0.tar.gz");
    auto m = members(build_sdist(d));
    REQUIRE(m.count("mmcv-full-1.4.0/PKG-INFO"));
    CHECK(m["mmcv-full-1.4.0/PKG-INFO"].content.find("Name: mmcv-full\nVersion: 1.4.0\n") != std::string::npos);
    CHECK(m["mmcv-full-1.4.0/PKG-INFO"].content.find("Requires-Dist") == std::string::npos);
    // mmcv's setup.py reads requirements/runtime.txt through a helper's default argument.
    CHECK(m["mmcv-full-1.4.0/setup.py"].content.find("fname='requirements/runtime.txt'") != std::string::npos);
    CHECK(m["mmcv-full-1.4.0/requirements/runtime.txt"].content == "addict\nyapf\n");
    d.project = "fvcore";
    auto f = members(build_sdist(d));
    CHECK(f["fvcore-1.4.0/setup.py"].content.find("    \"yapf\",\n") != std::string::npos);
}

TEST_CASE("archives are byte-identical when built twice") {
    CHECK(build_conda_package(sample_record(".conda")) == build_conda_package(sample_record(".conda")));
    CHECK(build_conda_package(sample_record(".tar.bz2")) == build_conda_package(sample_record(".tar.bz2")));
    PyDist d;
    d.project = "yapf";
    d.version = "0.40.1";
    d.tag = "py3-none-any";
    CHECK(build_wheel(d) == build_wheel(d));
    CHECK(build_sdist(d) == build_sdist(d));
}

TEST_CASE("reading bytes that are no archive is an input error") {
    CHECK_THROWS_AS(read_archive("definitely not an archive"), envlock::InputError);
}

TEST_CASE("project names normalize per PEP 503 and escape per PEP 427") {
    CHECK(normalize_project("Pillow") == "pillow");
    CHECK(normalize_project("typing_extensions") == "typing-extensions");
    CHECK(normalize_project("zope.interface") == "zope-interface");
    CHECK(wheel_escape("mmcv-full") == "mmcv_full");
    CHECK(wheel_escape("lazy_loader") == "lazy_loader");
}

TEST_CASE("every package says it is a stand-in: conda packages and wheels carry the ENVLOCK-STAND-IN marker") {
    auto conda = members(build_conda_package(sample_record(".tar.bz2")));
    REQUIRE(conda.count("share/envlock-stand-in/numba/ENVLOCK-STAND-IN"));
    CHECK(conda["info/files"].content.find("share/envlock-stand-in/numba/ENVLOCK-STAND-IN\n") != std::string::npos);
    PyDist d;
    d.project = "mmcv-full";
    d.version = "1.4.0";
    d.tag = "cp38-cp38-manylinux1_x86_64";
    d.source = "test";
    auto wheel = members(build_wheel(d));
    REQUIRE(wheel.count("mmcv_full-1.4.0.dist-info/ENVLOCK-STAND-IN"));
    CHECK(wheel["mmcv_full-1.4.0.dist-info/RECORD"].content.find("mmcv_full-1.4.0.dist-info/ENVLOCK-STAND-IN,sha256=") != std::string::npos);
}

TEST_CASE("the stand-in cuda-nvcc ships bin/nvcc where the real one has it, and it compiles nothing") {
    CondaRecord r;
    r.channel = "nvidia";
    r.name = "cuda-nvcc";
    r.version = "11.1.105";
    r.build = "0";
    r.timestamp = 1609459200000;
    r.ext = ".tar.bz2";
    auto m = members(build_conda_package(r));
    REQUIRE(m.count("bin/nvcc"));
    CHECK(m["bin/nvcc"].mode == 0755);
    CHECK(m["bin/nvcc"].content.find("exit 1\n") != std::string::npos);
    CHECK(m.count("share/envlock-stand-in/cuda-nvcc/ENVLOCK-STAND-IN"));
}
