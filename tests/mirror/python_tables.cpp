#include "tests/mirror/python_tables.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include "resolver/specs/errors.hpp"

namespace envlock::mirror {
namespace {

constexpr const char* kPypiTable =
#include "tests/mirror/pypi_table.inc"
    ;
constexpr const char* kPypiSource =
    "tests/mirror/pypi_table.inc (no PyPI snapshot in ../shared; real index as published, from memory)";
constexpr const char* kDefaultPlatform = "manylinux_2_17_x86_64.manylinux2014_x86_64";

std::vector<std::string> split(const std::string& s, const std::string& sep) {
    std::vector<std::string> out;
    size_t start = 0, pos;
    while ((pos = s.find(sep, start)) != std::string::npos) {
        out.push_back(s.substr(start, pos - start));
        start = pos + sep.size();
    }
    out.push_back(s.substr(start));
    return out;
}

std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Console scripts and .data members the real wheels of these projects carry.
void add_extras(PyDist& d) {
    static const std::map<std::string, std::vector<std::string>> scripts = {
        {"numpy", {"f2py = numpy.f2py.f2py2e:main"}},
        {"yapf", {"yapf = yapf:run_main", "yapf-diff = yapf_third_party.yapf_diff.yapf_diff:main"}},
        {"tensorboard", {"tensorboard = tensorboard.main:run_main"}},
        {"tqdm", {"tqdm = tqdm.cli:main"}},
        {"pip", {"pip = pip._internal.cli.main:main", "pip3 = pip._internal.cli.main:main"}},
        {"wheel", {"wheel = wheel.cli:main"}},
        {"pylint", {"pylint = pylint:run_pylint", "pyreverse = pylint:run_pyreverse"}},
        {"ipython", {"ipython = IPython:start_ipython", "ipython3 = IPython:start_ipython"}},
        {"isort", {"isort = isort.main:main"}},
        {"markdown", {"markdown_py = markdown.__main__:run"}},
        {"pygments", {"pygmentize = pygments.cmdline:main"}},
        {"charset-normalizer", {"normalizer = charset_normalizer.cli:cli_detect"}},
        {"huggingface-hub", {"huggingface-cli = huggingface_hub.commands.huggingface_cli:main"}},
        {"fonttools", {"fonttools = fontTools.__main__:main"}},
        {"torch", {"torchrun = torch.distributed.run:main"}},
    };
    std::string n = normalize_project(d.project);
    auto it = scripts.find(n);
    if (it != scripts.end() && !d.is_sdist()) d.console_scripts = it->second;
    // numba ships bin scripts through setup(scripts=…) (.data/scripts); IPython its man page (.data/data).
    if (n == "numba" && !d.is_sdist()) d.data_scripts = {"numba"};
    if (n == "ipython") d.data_file = "share/man/man1/ipython.1";
}

std::vector<std::string> python_tags(int lo, int hi, const std::string& platform) {
    std::vector<std::string> out;
    for (int m = lo; m <= hi; ++m) out.push_back(cp_tag(m) + "-" + abi_tag(m) + "-" + platform);
    return out;
}

int minor_of(const std::string& cp) {  // "cp38" -> 8, "cp310" -> 10
    return std::stoi(cp.substr(3));
}

std::string torch_key(const std::string& v) {  // "1.9" from "1.9.1"
    return v.substr(0, v.find('.', v.find('.') + 1));
}

int version_key(const std::string& v) {
    int a = 0, b = 0, c = 0;
    std::sscanf(v.c_str(), "%d.%d.%d", &a, &b, &c);
    return a * 10000 + b * 100 + c;
}

std::string pep440_only(const std::string& spec) {  // numba's ">=0.31.0dev0,<0.32.0" is already PEP 440
    std::string s;
    for (char c : spec)
        if (c != ' ') s += c;
    return s;
}

}  // namespace

std::string cp_tag(int minor) { return "cp3" + std::to_string(minor); }
std::string abi_tag(int minor) { return cp_tag(minor) + (minor < 8 ? "m" : ""); }

std::vector<PyDist> parse_pypi_table(const std::string& text, const std::string& source) {
    std::vector<PyDist> out;
    std::istringstream in(text);
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        line = trim(line);
        if (line.empty() || line[0] == '#') continue;
        auto halves = split(line, " :: ");
        std::istringstream head(halves[0]);
        std::string project, version, kind, requires_python;
        if (!(head >> project >> version >> kind >> requires_python))
            throw InputError(source + ":" + std::to_string(lineno) +
                             ": expected 'Project version kind requires-python [:: requirements]'");
        PyDist base;
        base.project = project;
        base.version = version;
        base.requires_python = requires_python == "-" ? "" : requires_python;
        base.source = source + ":" + std::to_string(lineno);
        if (halves.size() > 1)
            for (const auto& r : split(halves[1], " | "))
                if (!trim(r).empty()) base.requires_dist.push_back(trim(r));
        std::vector<std::string> tags;
        static const std::regex range(R"(^cp3(\d+)-cp3(\d+)(@(\S+))?$)"), abi3(R"(^abi3:cp3(\d+)(@(\S+))?$)");
        std::smatch m;
        if (kind == "py3" || kind == "py2.py3") tags = {kind + "-none-any"};
        else if (kind == "sdist") tags = {""};
        else if (kind.rfind("tag:", 0) == 0) tags = {kind.substr(4)};
        else if (std::regex_match(kind, m, range))
            tags = python_tags(std::stoi(m[1]), std::stoi(m[2]), m[4].matched ? m[4].str() : kDefaultPlatform);
        else if (std::regex_match(kind, m, abi3))
            tags = {cp_tag(std::stoi(m[1])) + "-abi3-" + (m[3].matched ? m[3].str() : kDefaultPlatform)};
        else
            throw InputError(source + ":" + std::to_string(lineno) + ": unknown file kind '" + kind +
                             "' (expected py3, py2.py3, cpAA-cpBB[@platform], abi3:cpAA[@platform], tag:<tag> or sdist)");
        for (const auto& tag : tags) {
            PyDist d = base;
            d.tag = tag;
            add_extras(d);
            out.push_back(std::move(d));
        }
    }
    return out;
}

std::vector<Published> pypi_dists(const Tables& tables) {
    std::vector<PyDist> dists = parse_pypi_table(kPypiTable, kPypiSource);

    // numba and llvmlite from the numba table (facts/python_libs.yaml): llvmlite is published
    // at the lower bound each numba release accepts, for the same Pythons.
    std::map<std::string, std::pair<int, int>> llvm_windows;
    for (const auto& row : tables.numba) {
        int lo = 6, hi = 8;  // no declared upper bound: wheels stop at 3.8 (python_libs.yaml unverified note)
        std::smatch m;
        static const std::regex l(R"(>=\s*3\.(\d+))"), u(R"(<\s*3\.(\d+))");
        if (std::regex_search(row.python, m, l)) lo = std::max(6, std::stoi(m[1]));
        if (std::regex_search(row.python, m, u)) hi = std::stoi(m[1]) - 1;
        PyDist n;
        n.project = "numba";
        n.version = row.numba;
        n.requires_python = pep440_only(row.python);
        n.requires_dist = {"llvmlite" + pep440_only(row.llvmlite), "numpy" + pep440_only(row.numpy)};
        if (version_key(row.numba) < 5700) n.requires_dist.push_back("setuptools");
        n.source = row.source;
        static const std::regex rel(R"(>=\s*(\d+\.\d+\.\d+))");
        std::string llvm = std::regex_search(row.llvmlite, m, rel) ? m[1].str() : "";
        for (const auto& tag : python_tags(lo, hi, version_key(row.numba) < 5300 ? "manylinux1_x86_64" : "manylinux2014_x86_64")) {
            PyDist d = n;
            d.tag = tag;
            add_extras(d);
            dists.push_back(d);
        }
        if (!llvm.empty()) {
            auto& w = llvm_windows[llvm];
            if (w.first == 0) w = {lo, hi};
            w.first = std::min(w.first, lo);
            w.second = std::max(w.second, hi);
        }
    }
    for (const auto& [version, window] : llvm_windows)
        for (const auto& tag : python_tags(window.first, window.second, "manylinux2010_x86_64")) {
            PyDist d;
            d.project = "llvmlite";
            d.version = version;
            d.tag = tag;
            d.requires_python = ">=3." + std::to_string(window.first);
            d.source = "llvmlite at the lower bound of a numba row's llvmlite range (facts/python_libs.yaml)";
            dists.push_back(d);
        }

    // mmdet3d sdists (0.17.x-0.18.x, 1.0.0rcN): install_requires = requirements/runtime.txt (facts).
    for (const auto& r : tables.mmdet3d) {
        PyDist d;
        d.project = "mmdet3d";
        d.version = r.version;
        d.requires_dist = r.runtime;
        d.source = r.source;
        dists.push_back(d);
    }

    std::vector<Published> out;
    for (auto& d : dists) {
        std::string path = "pypi/packages/" + normalize_project(d.project) + "/" + d.filename();
        out.push_back({std::move(d), std::move(path)});
    }
    return out;
}

std::vector<Published> torch_wheels(const Tables& tables) {
    std::vector<Published> out;
    for (const auto& rel : tables.torch) {
        int key = version_key(rel.torch);
        if (key < 10800) continue;
        std::string platform = key >= 20600 ? "manylinux_2_28_x86_64" : "linux_x86_64";
        std::string triton;
        // torch's own Requires-Dist pins one triton per release (torch METADATA; not in facts).
        static const std::map<std::string, std::string> triton_of = {
            {"2.0", "2.0.0"}, {"2.1", "2.1.0"}, {"2.2", "2.2.0"}, {"2.3", "2.3.0"}, {"2.4", "3.0.0"},
            {"2.5", "3.1.0"}, {"2.6", "3.2.0"}, {"2.7", "3.3.0"}, {"2.8", "3.4.0"}, {"2.9", "3.5.0"}};
        auto t = triton_of.find(torch_key(rel.torch));
        if (t != triton_of.end()) triton = rel.torch == "2.3.1" ? "2.3.1" : rel.torch == "2.7.1" ? "3.3.1" : t->second;
        std::string requires_python = key >= 20900 ? ">=3.10" : key >= 20500 ? ">=3.9.0" : key >= 20000 ? ">=3.8.0"
                                      : key >= 11100 ? ">=3.7.0" : ">=3.6.2";
        for (int m = rel.py_min; m <= std::min(rel.py_max, 13); ++m) {
            std::string tag = cp_tag(m) + "-" + abi_tag(m) + "-" + platform;
            for (const auto& var : rel.pip_variants) {
                PyDist torch;
                torch.project = "torch";
                torch.version = rel.torch + "+" + var;
                torch.tag = tag;
                torch.requires_python = requires_python;
                if (key >= 20000) {
                    torch.requires_dist = {"filelock", "typing-extensions", "sympy", "networkx", "jinja2"};
                    if (key >= 20100) torch.requires_dist.push_back("fsspec");
                    if (var != "cpu" && !triton.empty())
                        torch.requires_dist.push_back("triton==" + triton +
                                                      "; platform_system == \"Linux\" and platform_machine == \"x86_64\"");
                } else {
                    torch.requires_dist = {"typing-extensions"};
                    if (key < 10900) torch.requires_dist.push_back("numpy");
                    if (m < 7) torch.requires_dist.push_back("dataclasses; python_version < \"3.7\"");
                }
                torch.source = rel.source;
                add_extras(torch);
                if (key < 11000) torch.console_scripts.clear();  // torchrun arrived in 1.10
                out.push_back({torch, "whl/" + var + "/" + torch.filename()});

                PyDist tv;
                tv.project = "torchvision";
                tv.version = rel.torchvision + "+" + var;
                tv.tag = tag;
                tv.requires_python = key >= 20000 ? requires_python : "";
                if (key >= 11100) tv.requires_dist = {"numpy", "requests", "torch==" + rel.torch, "pillow!=8.3.*,>=5.3.0"};
                else tv.requires_dist = {"numpy", "torch==" + rel.torch, "pillow>=5.3.0"};
                if (key >= 11100 && key < 20100) tv.requires_dist.insert(tv.requires_dist.begin(), "typing-extensions");
                tv.source = rel.source;
                out.push_back({tv, "whl/" + var + "/" + tv.filename()});
                if (rel.torch == "1.10.0" && rel.torchvision == "0.11.0") {
                    // torchvision 0.11.1, also built for torch 1.10.0, is the one detectron2 v0.6's
                    // Dockerfile pins (cases/detectron2-v0.6.yaml); the previous-versions page names 0.11.0.
                    PyDist tv1 = tv;
                    tv1.version = "0.11.1+" + var;
                    tv1.source = "cases/detectron2-v0.6.yaml (docker/Dockerfile pin), beside " + rel.source;
                    out.push_back({tv1, "whl/" + var + "/" + tv1.filename()});
                }

                if (!rel.torchaudio.empty() && version_key(rel.torchaudio) >= 1000) {
                    PyDist ta;
                    ta.project = "torchaudio";
                    ta.version = rel.torchaudio + "+" + var;
                    ta.tag = tag;
                    ta.requires_dist = {"torch==" + rel.torch};
                    ta.source = rel.source;
                    out.push_back({ta, "whl/" + var + "/" + ta.filename()});
                }
            }
            // torchaudio before 0.10 had no CUDA variants: one unlabeled wheel per Python at
            // the top of the page, as the real torch_stable.html lists torchaudio-0.8.0.
            if (!rel.torchaudio.empty() && version_key(rel.torchaudio) < 1000) {
                PyDist ta;
                ta.project = "torchaudio";
                ta.version = rel.torchaudio;
                ta.tag = tag;
                ta.requires_dist = {"torch==" + rel.torch};
                ta.source = rel.source;
                out.push_back({ta, "whl/" + ta.filename()});
            }
        }
    }
    return out;
}

std::vector<Published> mmcv_wheels(const Tables& tables) {
    std::vector<Published> out;
    for (const auto& row : tables.mmcv) {
        // Pythons: those the page's torch release supports (facts/torch.yaml); torch before
        // 1.8 is not in the mirror's torch table, so 3.6-3.8 as the real pages of that era.
        int lo = 6, hi = 8;
        for (const auto& rel : tables.torch)
            if (torch_key(rel.torch) == row.torch) {
                lo = rel.py_min;
                hi = rel.py_max;
                break;
            }
        if (row.package == "mmcv") lo = std::max(lo, 7);
        hi = std::min(hi, 11);
        std::string dir = "mmcv/dist/" + (row.cuda == "cpu" ? std::string("cpu") : "cu" + std::regex_replace(row.cuda, std::regex("\\."), "")) +
                          "/torch" + row.torch + ".0/";
        for (const auto& version : row.versions) {
            for (int m = lo; m <= hi; ++m) {
                PyDist d;
                d.project = row.package;
                d.version = version;
                d.tag = cp_tag(m) + "-" + abi_tag(m) + "-manylinux1_x86_64";
                d.requires_dist = {"addict", "numpy", "packaging", "Pillow", "pyyaml", "yapf", "opencv-python>=3"};
                if (row.package == "mmcv") d.requires_dist.insert(d.requires_dist.begin() + 1, "mmengine>=0.3.0");
                if (version_key(version) >= 10600) d.requires_dist.push_back("regex; sys_platform == \"win32\"");
                d.source = row.source;
                out.push_back({d, dir + d.filename()});
            }
        }
    }
    return out;
}

}  // namespace envlock::mirror
