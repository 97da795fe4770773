#pragma once
// Small, real-shaped index records for solver specifications: conda records with the
// depends and build strings the real channels use, PyPI wheels named as the real indexes
// name them. The sha256 is derived from the file name so locks have a value to carry.
#include <string>
#include <vector>

#include "resolver/specs/record.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/lock/spec.hpp"
#include "resolver/lock/target.hpp"

namespace envlock::test {

inline IndexRecord conda_record(const std::string& name, const std::string& version, const std::string& build,
                                std::vector<std::string> depends = {}, const std::string& channel = "conda-forge") {
    IndexRecord r;
    r.ecosystem = Ecosystem::conda;
    r.name = name;
    r.version = version;
    r.build = build;
    auto underscore = build.rfind('_');
    r.build_number = underscore == std::string::npos ? 0 : std::atoi(build.c_str() + underscore + 1);
    r.filename = name + "-" + version + "-" + build + ".tar.bz2";
    r.channel = channel;
    r.subdir = "linux-64";
    r.url = "https://conda.anaconda.org/" + channel + "/linux-64/" + r.filename;
    r.sha256 = sha256_hex(r.filename);
    r.depends = std::move(depends);
    return r;
}

inline IndexRecord wheel_record(const std::string& name, const std::string& version, const std::string& tags,
                                std::vector<std::string> depends = {},
                                const std::string& index = "https://pypi.org/simple") {
    IndexRecord r;
    r.ecosystem = Ecosystem::pypi;
    r.name = name;
    r.version = version;
    std::string escaped = version;
    if (auto plus = escaped.find('+'); plus != std::string::npos) escaped.replace(plus, 1, "%2B");
    std::string file_name = name;   // wheel file names spell the project with underscores
    for (char& ch : file_name)
        if (ch == '-') ch = '_';
    r.filename = file_name + "-" + version + "-" + tags + ".whl";
    r.url = index + "/" + file_name + "-" + escaped + "-" + tags + ".whl";
    r.index = index;
    r.sha256 = sha256_hex(r.filename);
    r.depends = std::move(depends);
    return r;
}

inline SpecRequirement pypi_req(const std::string& text, int line = 0) {
    return {text, "pypi", {"docs/install.md", line}};
}

inline SpecRequirement conda_req(const std::string& text, int line = 0) {
    return {text, "conda", {"docs/install.md", line}};
}

inline Target linux_machine(const std::string& driver, const std::string& driver_cuda, std::vector<Gpu> gpus) {
    Target t;
    t.platform = "linux-64";
    t.glibc = "2.31";
    t.cpu_flags = {"sse4_2", "avx", "avx2", "fma"};
    t.driver_version = driver;
    t.driver_cuda = driver_cuda;
    t.gpus = std::move(gpus);
    t.compilers = {{"gcc", "/usr/bin/gcc", "12.2.0"}};
    return t;
}

inline Gpu rtx3090() { return {"NVIDIA GeForce RTX 3090", 8, 6}; }
inline Gpu rtx4090() { return {"NVIDIA GeForce RTX 4090", 8, 9}; }
inline Gpu h100() { return {"NVIDIA H100 80GB HBM3", 9, 0}; }
inline Gpu gtx1080ti() { return {"NVIDIA GeForce GTX 1080 Ti", 6, 1}; }

}  // namespace envlock::test
