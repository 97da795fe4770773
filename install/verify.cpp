#include "install/verify.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "fetch/files.hpp"
#include "fetch/process.hpp"
#include "install/prefix_scan.hpp"
#include "install/run_env.hpp"
#include "resolver/knowledge/detect.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {

namespace fs = std::filesystem;
namespace kb = envlock::knowledge;

namespace {

std::string major_minor(const std::string& v) {
    size_t a = v.find('.');
    if (a == std::string::npos) return v;
    size_t b = v.find('.', a + 1);
    return v.substr(0, b);
}

int major_of(const std::string& v) {
    try {
        return std::stoi(v);
    } catch (const std::exception&) {
        return 0;
    }
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
    return out;
}

std::string sm_names(const std::vector<int>& sms) {
    std::vector<std::string> names;
    for (int sm : sms) names.push_back(kb::sm_name(sm));
    return join(names, " ");
}

std::string first_line(const std::string& s) {
    std::string line = s.substr(0, s.find('\n'));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    return line;
}

bool executable(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// `name` on a PATH string, "" when absent.
std::string on_path(const std::string& path_env, const std::string& name) {
    size_t pos = 0;
    while (pos <= path_env.size()) {
        size_t end = path_env.find(':', pos);
        if (end == std::string::npos) end = path_env.size();
        if (end > pos) {
            fs::path candidate = fs::path(path_env.substr(pos, end - pos)) / name;
            if (executable(candidate)) return candidate.string();
        }
        pos = end + 1;
    }
    return "";
}

std::string env_of(const std::map<std::string, std::string>& env, const std::string& key) {
    auto it = env.find(key);
    return it == env.end() ? "" : it->second;
}

// A compiler's version: gcc's -dumpfullversion, else the last version on --version's first line
// ("clang version 14.0.6" -> 14.0.6).
std::string compiler_version(const std::string& path) {
    auto r = run_process({path, "-dumpfullversion", "-dumpversion"}, 20);
    std::string v = first_line(r.out);
    if (r.exit_code == 0 && !v.empty() && std::isdigit(static_cast<unsigned char>(v[0]))) return v;
    r = run_process({path, "--version"}, 20);
    if (r.exit_code != 0) return "";
    std::string line = first_line(r.out);
    static const std::regex clang_v(R"(clang version ([0-9]+\.[0-9]+(\.[0-9]+)?))");
    std::smatch m;
    if (std::regex_search(line, m, clang_v)) return m[1];
    static const std::regex version(R"(([0-9]+\.[0-9]+(\.[0-9]+)?))");
    std::string last;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), version); it != std::sregex_iterator(); ++it) last = (*it)[1];
    return last;
}

bool is_clang(const std::string& path) { return fs::path(path).filename().string().find("clang") != std::string::npos; }

// g++-12 -> gcc-12, clang++ -> clang: CC beside a CXX.
std::string c_compiler_beside(const std::string& cxx) {
    fs::path p(cxx);
    std::string name = p.filename().string();
    std::string c;
    if (name.rfind("g++", 0) == 0) c = "gcc" + name.substr(3);
    else if (name.rfind("clang++", 0) == 0) c = "clang" + name.substr(7);
    else if (name == "c++") c = "cc";
    if (c.empty() || !executable(p.parent_path() / c)) return "";
    return (p.parent_path() / c).string();
}

std::string cxx_beside(const std::string& cc) {
    fs::path p(cc);
    std::string name = p.filename().string();
    std::string cxx;
    if (name.rfind("gcc", 0) == 0) cxx = "g++" + name.substr(3);
    else if (name.rfind("clang", 0) == 0 && name.rfind("clang++", 0) != 0) cxx = "clang++" + name.substr(5);
    if (cxx.empty() || !executable(p.parent_path() / cxx)) return "";
    return (p.parent_path() / cxx).string();
}

std::vector<int> nvcc_gpu_sms(const std::string& nvcc, const std::vector<std::string>& known) {
    std::vector<std::string> archs = known;
    if (archs.empty()) {
        auto r = run_process({nvcc, "--list-gpu-arch"}, 30);
        std::istringstream in(r.out);
        for (std::string line; std::getline(in, line);)
            if (line.rfind("compute_", 0) == 0) archs.push_back(line);
    }
    std::vector<int> out;
    for (const auto& a : archs)
        if (auto sm = kb::parse_sm(a)) out.push_back(*sm);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

VerifyCheck check(std::string name, CheckStatus s, std::string what) {
    VerifyCheck c;
    c.name = std::move(name);
    c.status = s;
    c.what = std::move(what);
    return c;
}

// ---------------------------------------------------------------- nvcc

// Where a conda nvcc is in a prefix: the file the locked package's record lists as bin/nvcc
// (nvidia's cuda-nvcc 11.x), else one another record lists (conda-forge's CUDA 12 splits the
// compiler into cuda-nvcc-tools under the cuda-nvcc metapackage).
struct PrefixNvcc {
    std::optional<CondaMetaRecord> record;   // the locked package, when installed
    std::string path;                        // absolute; "" when no record lists one
};

bool is_nvcc_file(const std::string& f) { return f == "bin/nvcc" || f.ends_with("/bin/nvcc"); }

PrefixNvcc prefix_nvcc(const std::string& prefix, const std::string& package) {
    PrefixNvcc out;
    auto records = read_conda_records(prefix);
    for (const auto& r : records)
        if (r.name == package) out.record = r;
    if (!out.record) {
        // No record (a prefix conda did not make): where conda's cuda-nvcc puts it.
        if (executable(fs::path(prefix) / "bin/nvcc")) out.path = (fs::path(prefix) / "bin/nvcc").string();
        return out;
    }
    auto listed = [&](const CondaMetaRecord& r) {
        for (const auto& f : r.files)
            if (is_nvcc_file(f) && executable(fs::path(prefix) / f)) return (fs::path(prefix) / f).string();
        return std::string();
    };
    out.path = listed(*out.record);
    for (const auto& r : records)
        if (out.path.empty()) out.path = listed(r);
    return out;
}

// The locked nvcc is a stand-in (a demo mirror's package with no compiler in it): nothing of
// the lock's own CUDA release can be checked, and the check says so instead of passing. The probe
// still compiles for real, for the target's sm, with the newest toolkit here that lists them all.
VerifyCheck stand_in_nvcc(const Lock& lock, const VerifyInputs& in, const CondaMetaRecord& record, ChosenToolchain& chosen) {
    chosen.stand_in = record.name + " " + record.version + " (" + record.json + ")";
    std::string what = "the locked " + record.name + " " + lock.toolchain.nvcc + " in the prefix is a stand-in (" + record.json +
                       " lists " + kStandInMarker + "): it compiles nothing, so nvcc " + major_minor(lock.toolchain.nvcc) + " is not checked";
    std::vector<const CudaToolkit*> toolkits;
    for (const auto& t : in.machine.toolkits) toolkits.push_back(&t);
    std::stable_sort(toolkits.begin(), toolkits.end(), [](const CudaToolkit* a, const CudaToolkit* b) {
        return kb::compare_dotted(b->version, a->version) < 0;
    });
    for (const auto* t : toolkits) {
        std::string nvcc = (fs::path(t->path) / "bin/nvcc").string();
        if (!executable(nvcc)) continue;
        auto sms = nvcc_gpu_sms(nvcc, t->gpu_archs);
        bool all = std::all_of(chosen.sms.begin(), chosen.sms.end(), [&](int sm) { return std::find(sms.begin(), sms.end(), sm) != sms.end(); });
        if (!all) continue;
        chosen.cuda_home = t->path;
        chosen.nvcc = nvcc;
        chosen.cuda = major_minor(t->version);
        chosen.nvcc_sms = sms;
        return check("nvcc", CheckStatus::skipped,
                     what + "; the probe compiles with CUDA " + t->version + " at " + t->path + " instead, for " + sm_names(chosen.sms));
    }
    return check("nvcc", CheckStatus::skipped, what + "; no CUDA toolkit here compiles for " + sm_names(chosen.sms) + ", so the probe is skipped too");
}

VerifyCheck check_nvcc(const Lock& lock, const VerifyInputs& in, ChosenToolchain& chosen) {
    const auto& tc = lock.toolchain;
    std::string want = major_minor(tc.nvcc);
    std::vector<std::pair<std::string, std::string>> candidates;   // (cuda home, release)
    // The prefix's own nvcc, when the lock's comes from conda: found where the installed package
    // put it; otherwise why not (conda_missing) and what makes it so (conda_fix).
    std::string conda_missing, conda_fix;
    if (tc.nvcc_from.rfind("conda:", 0) == 0) {
        std::string package = tc.nvcc_from.substr(6);
        if (in.prefix.empty()) {
            conda_missing = "no --prefix: the locked conda nvcc (" + package + ") was not looked for";
        } else {
            PrefixNvcc found = prefix_nvcc(in.prefix, package);
            std::string installed = found.record ? package + " " + found.record->version + " (" + found.record->json + ")" : "";
            if (found.record && found.record->stand_in) return stand_in_nvcc(lock, in, *found.record, chosen);
            if (!found.record && found.path.empty()) {
                conda_missing = "the prefix has no bin/nvcc (the locked " + package + " is not installed in it)";
                conda_fix = "install the lock into the environment (`envlock install`), which puts its " + package + " " + tc.nvcc + " at <prefix>/bin/nvcc";
            } else if (found.path.empty()) {
                conda_missing = "the locked " + installed + " is installed, but no installed file is bin/nvcc";
                conda_fix = "`envlock install --repair` puts back the files the lock installs; if nvcc is still missing, the locked " + package +
                            " carries none (a metapackage without its compiler): re-resolve (`envlock resolve`)";
            } else {
                auto r = run_process({found.path, "--version"}, 30);
                std::string release = r.exit_code == 0 ? parse_nvcc_release(r.out) : "";
                if (release.empty()) {
                    conda_missing = found.path + (installed.empty() ? "" : " (from " + installed + ")") + " does not run: `nvcc --version` " +
                                    (r.exit_code == 0 ? "printed no release" : "exited " + std::to_string(r.exit_code)) +
                                    (first_line(r.out).empty() ? "" : " (" + first_line(r.out) + ")");
                    conda_fix = "`envlock install --repair` restores modified files; a package made for another platform or glibc needs a lock for this machine (`envlock resolve`)";
                } else {
                    candidates.emplace_back(fs::path(found.path).parent_path().parent_path().string(), release);
                    // Another release than the lock's: the prefix was not installed from this lock.
                    if (major_minor(release) != want)
                        conda_fix = "install the lock into the environment (`envlock install`), which puts its " + package + " " + tc.nvcc +
                                    " at <prefix>/bin/nvcc";
                }
            }
        }
    }
    // A PyPI nvcc wheel (CUDA 13+): the compiler sits in the env's site-packages.
    if (tc.nvcc_from.rfind("pypi:", 0) == 0) {
        std::string package = tc.nvcc_from.substr(5);
        std::string home = pypi_nvcc_home_in(in.prefix, lock);
        std::string nvcc = home.empty() ? "" : (fs::path(home) / "bin/nvcc").string();
        std::error_code ec;
        if (in.prefix.empty()) {
            conda_missing = "no --prefix: the locked PyPI nvcc (" + package + ") was not looked for";
        } else if (nvcc.empty() || !fs::exists(nvcc, ec)) {
            conda_missing = "the prefix has no " + (home.empty() ? std::string("site-packages/nvidia/cuXY") : home) + "/bin/nvcc (the locked " + package +
                            " " + tc.nvcc + " is not installed in it)";
            conda_fix = "install the lock into the environment (`envlock install`), which puts " + package + " " + tc.nvcc + "'s nvcc there";
        } else {
            auto r = run_process({nvcc, "--version"}, 30);
            std::string release = r.exit_code == 0 ? parse_nvcc_release(r.out) : "";
            if (release.empty())
                conda_missing = nvcc + " (from " + package + ") does not run: `nvcc --version` " +
                                (r.exit_code == 0 ? "printed no release" : "exited " + std::to_string(r.exit_code));
            else
                candidates.emplace_back(home, release);
        }
    }
    std::string locked_path = tc.nvcc_from.rfind("system:", 0) == 0 ? tc.nvcc_from.substr(7) : "";
    // The locked path first, then every toolkit detect found (CUDA_HOME, PATH, /usr/local/cuda*).
    std::vector<const CudaToolkit*> toolkits;
    for (const auto& t : in.machine.toolkits)
        if (!locked_path.empty() && fs::path(t.path).lexically_normal() == fs::path(locked_path).lexically_normal()) toolkits.insert(toolkits.begin(), &t);
        else toolkits.push_back(&t);
    for (const auto* t : toolkits) candidates.emplace_back(t->path, t->version);

    for (const auto& [home, release] : candidates) {
        if (major_minor(release) != want) continue;
        chosen.cuda_home = home;
        chosen.nvcc = (fs::path(home) / "bin/nvcc").string();
        chosen.cuda = want;
        for (const auto& t : in.machine.toolkits)
            if (t.path == home) chosen.nvcc_sms = nvcc_gpu_sms(chosen.nvcc, t.gpu_archs);
        if (chosen.nvcc_sms.empty()) chosen.nvcc_sms = nvcc_gpu_sms(chosen.nvcc, {});
        std::string what = "nvcc " + release + " at " + chosen.nvcc + " (locked: CUDA " + tc.nvcc + ", " + tc.nvcc_from + ")";
        if (!locked_path.empty() && fs::path(home).lexically_normal() != fs::path(locked_path).lexically_normal())
            what += "; the locked path " + locked_path + " is not it";
        if (!conda_missing.empty()) what += "; " + conda_missing;
        else if (tc.nvcc_from.rfind("conda:", 0) == 0 && home.rfind(in.prefix, 0) != 0) what += "; the prefix's own nvcc is not of this release";
        return check("nvcc", CheckStatus::passed, what);
    }

    VerifyCheck c = check("nvcc", CheckStatus::failed,
                          "nvcc " + tc.nvcc + " (locked: " + (tc.nvcc_from.empty() ? "no path" : tc.nvcc_from) + ") is not on this machine");
    std::vector<std::string> found;
    for (const auto& [home, release] : candidates) found.push_back("CUDA " + release + " at " + home);
    c.cause = found.empty() ? "no CUDA toolkit was found (CUDA_HOME, nvcc on PATH, /usr/local/cuda, /usr/local/cuda-X.Y)"
                            : "found instead: " + join(found, ", ") + "; the extensions must be built by the nvcc of the locked release";
    if (!conda_missing.empty()) c.cause = conda_missing + "; " + c.cause;
    std::string dir = locked_path.empty() ? "/usr/local/cuda-" + want : locked_path;
    c.fix = "install the CUDA " + want + " toolkit (toolkit only, from NVIDIA's CUDA " + want + " archive) at " + dir +
            ", then run `envlock verify` again";
    if (!conda_fix.empty()) c.fix = conda_fix + ", then run `envlock verify` again";
    if (!found.empty())
        c.fix += "; or build with what is here: re-resolve on this machine (`envlock resolve`) with a torch built for CUDA " +
                 major_minor(candidates.front().second);
    c.source = "torch.utils.cpp_extension builds with $CUDA_HOME/bin/nvcc and compares its release with torch.version.cuda "
               "(pytorch/pytorch@v1.13.1:torch/utils/cpp_extension.py L370-387)";
    return c;
}

VerifyCheck check_nvcc_torch(const Lock& lock, const ChosenToolchain& chosen, const kb::Knowledge& k) {
    if (!chosen.stand_in.empty() || chosen.torch_stand_in)
        return check("nvcc-torch", CheckStatus::skipped,
                     std::string(chosen.torch_stand_in ? "the env's torch " + chosen.torch_version : "the locked nvcc " + chosen.stand_in) +
                         " is a stand-in: no extension is built against torch here, so nvcc " + major_minor(lock.toolchain.nvcc) +
                         " and torch's CUDA are not checked together");
    std::string nvcc = chosen.cuda.empty() ? major_minor(lock.toolchain.nvcc) : chosen.cuda;
    std::string torch_cuda = chosen.torch_cuda;
    std::string from = "the env's torch " + chosen.torch_version;
    if (chosen.torch_version.empty()) {
        for (const auto& p : lock.packages)
            if ((p.name == "torch" || p.name == "pytorch") && p.cuda) {
                torch_cuda = p.cuda->runtime;
                from = "the lock's " + p.name + " " + p.version;
            }
        if (torch_cuda.empty())
            return check("nvcc-torch", CheckStatus::skipped, "no torch in the env or with CUDA in the lock: nothing to match nvcc " + nvcc + " with");
    }
    if (torch_cuda.empty()) {
        VerifyCheck c = check("nvcc-torch", CheckStatus::failed, from + " is a CPU-only build (torch.version.cuda is None); the lock builds CUDA extensions with nvcc " + nvcc);
        c.cause = "a CUDAExtension cannot be built or run against a CPU-only torch: torch 1.10-2.3 fail comparing None with nvcc's "
                  "version, torch >= 2.4 report CUDA_HOME as not set";
        c.fix = "lock a CUDA build of torch for CUDA " + nvcc + " (a +cu" + [&] {
            std::string s;
            for (char ch : nvcc) if (ch != '.') s.push_back(ch);
            return s;
        }() + " wheel, or conda pytorch with pytorch-cuda), or build the extensions' CPU variants only";
        c.source = "pytorch/pytorch@v1.13.1:torch/utils/cpp_extension.py L382; @v2.4.0 L208 (facts row 1)";
        return c;
    }
    std::string verdict = kb::cpp_extension_cuda_check(k, torch_cuda, nvcc);
    if (verdict == "error") {
        VerifyCheck c = check("nvcc-torch", CheckStatus::failed, "nvcc is CUDA " + nvcc + ", " + from + " was built with CUDA " + torch_cuda);
        c.cause = "torch.utils.cpp_extension refuses an nvcc whose CUDA major differs from torch's: \"The detected CUDA version (" + nvcc +
                  ") mismatches the version that was used to compile PyTorch (" + torch_cuda + ")\"";
        c.fix = "build with an nvcc of CUDA " + torch_cuda + " (lock it: `envlock resolve` picks the toolkit torch needs), or lock a torch built for CUDA " + nvcc;
        c.source = k.cpp_extension_rules.source;
        return c;
    }
    std::string what = "nvcc CUDA " + nvcc + " and " + from + " (CUDA " + torch_cuda + ")";
    if (verdict == "warning") what += ": minor versions differ, which torch accepts with a warning";
    return check("nvcc-torch", CheckStatus::passed, what);
}

// ---------------------------------------------------------------- host compiler

struct CompilerPick {
    std::string cc, cxx, version, why;   // why: where the pick came from
};

}  // namespace

VerifyCheck check_host_compiler(const Lock& lock, const VerifyInputs& in, const kb::Knowledge& k, ChosenToolchain& chosen) {
    std::string cuda = chosen.cuda.empty() ? major_minor(lock.toolchain.nvcc) : chosen.cuda;
    auto limit = kb::host_compiler_limit(k, cuda);
    std::string path_env = env_of(in.env, "PATH");

    // What a build in `envlock run` uses: the lock's compiler (run sets CC/CXX), else the
    // caller's CXX/CC, else g++ on PATH (nvcc's own default host compiler is gcc/g++ on PATH).
    CompilerPick pick;
    const auto& tc = lock.toolchain;
    if (tc.gcc_from.rfind("system:", 0) == 0) {
        pick.cc = locked_system_cc(lock, path_env);
        if (pick.cc.empty() || !executable(pick.cc)) {
            std::string named = tc.gcc_from.substr(7).empty() ? "gcc-" + tc.gcc.substr(0, tc.gcc.find('.')) + " or gcc on PATH" : tc.gcc_from.substr(7);
            VerifyCheck c = check("host-compiler", CheckStatus::failed, "the lock's host compiler " + named + " (gcc " + tc.gcc + ") is not on this machine");
            c.fix = "install gcc " + tc.gcc + " (e.g. `apt-get install gcc-" + tc.gcc + " g++-" + tc.gcc + "`) or re-resolve on this machine (`envlock resolve`)";
            return c;
        }
        pick.cxx = cxx_beside(pick.cc);
        pick.why = "the lock's";
    } else if (!env_of(in.env, "CXX").empty() || !env_of(in.env, "CC").empty()) {
        pick.cxx = env_of(in.env, "CXX");
        pick.cc = env_of(in.env, "CC");
        if (pick.cxx.find('/') == std::string::npos && !pick.cxx.empty()) pick.cxx = on_path(path_env, pick.cxx);
        if (pick.cc.find('/') == std::string::npos && !pick.cc.empty()) pick.cc = on_path(path_env, pick.cc);
        pick.why = "$CXX/$CC";
    } else {
        pick.cxx = on_path(path_env, "g++");
        pick.cc = on_path(path_env, "gcc");
        pick.why = "the default on PATH";
    }
    std::string probe_path = !pick.cxx.empty() ? pick.cxx : pick.cc;
    if (probe_path.empty()) {
        VerifyCheck c = check("host-compiler", CheckStatus::failed, "no host C++ compiler (g++ or $CXX) on PATH");
        c.fix = limit ? "install a gcc " + std::to_string(limit->gcc_max) + " or older (`apt-get install g++-" + std::to_string(limit->gcc_max) +
                            "` where the distribution has it, or conda-forge gxx_linux-64)"
                      : "install g++ (`apt-get install g++`)";
        return c;
    }
    pick.version = compiler_version(probe_path);
    chosen.cc = pick.cc;
    chosen.cxx = pick.cxx;
    chosen.cxx_version = pick.version;
    if (!limit) {
        return check("host-compiler", CheckStatus::skipped,
                     probe_path + " " + pick.version + ": the knowledge base has no host-compiler limit for CUDA " + cuda);
    }
    bool clang = is_clang(probe_path);
    int max = clang ? limit->clang_max.value_or(0) : limit->gcc_max;
    int have = major_of(pick.version);
    std::string family = clang ? "clang" : "gcc";
    std::string rule = "nvcc " + cuda + " accepts " + family + " " + std::to_string(max) + " or older";
    if (max > 0 && have > 0 && have <= max)
        return check("host-compiler", CheckStatus::passed, probe_path + " " + pick.version + " (" + pick.why + "): " + rule);

    VerifyCheck c = check("host-compiler", CheckStatus::failed,
                          probe_path + " " + (pick.version.empty() ? "(version unknown)" : pick.version) + " (" + pick.why + ") is newer than " + rule);
    c.cause = "nvcc's crt/host_config.h stops the build: \"#error -- unsupported " + std::string(clang ? "clang" : "GNU") + " version!\"";
    c.source = limit->source + (limit->unverified ? " (unverified: " + limit->why + ")" : "");
    // Another compiler here that this nvcc accepts: the newest g++ within the limit.
    const HostCompiler* best = nullptr;
    for (const auto& hc : in.machine.compilers) {
        if (hc.kind != "g++") continue;
        int m = major_of(hc.version);
        if (m == 0 || m > limit->gcc_max) continue;
        if (!limit->gcc_min.empty() && m < major_of(limit->gcc_min)) continue;
        if (!best || major_of(best->version) < m) best = &hc;
    }
    if (best) {
        std::string cc = c_compiler_beside(best->path);
        c.fix = "build with " + best->path + " (" + best->version + "), which nvcc " + cuda + " accepts: export " +
                (cc.empty() ? "" : "CC=" + cc + " ") + "CXX=" + best->path + " NVCC_CCBIN=" + best->path +
                " (torch passes CC to nvcc as -ccbin; plain nvcc reads NVCC_CCBIN), or re-resolve (`envlock resolve`) so the lock names it and `envlock run` sets them; verify builds with it from here on";
        chosen.cc = cc;
        chosen.cxx = best->path;
        chosen.cxx_version = best->version;
    } else {
        std::string n = std::to_string(limit->gcc_max);
        c.fix = "install a gcc " + n + " or older (`apt-get install gcc-" + n + " g++-" + n +
                "` where the distribution has it, or conda-forge gxx_linux-64=" + n + " in the lock), then export CC/CXX/NVCC_CCBIN to it; "
                "nvcc's -allow-unsupported-compiler is a last resort";
    }
    return c;
}

namespace {

// ---------------------------------------------------------------- GPUs, driver, CPU

std::vector<int> target_sms(const Lock& lock, const VerifyInputs& in, std::string& from) {
    std::vector<int> sms;
    for (const auto& g : in.machine.gpus) sms.push_back(g.sm_major * 10 + g.sm_minor);
    from = "this machine's GPUs";
    if (sms.empty()) {
        for (const auto& t : lock.targets)
            for (const auto& g : t.target.gpus) sms.push_back(g.sm_major * 10 + g.sm_minor);
        from = "the lock's targets";
    }
    if (sms.empty() && !lock.toolchain.cuda_arch_list.empty()) {
        try {
            sms = kb::parse_arch_list(lock.toolchain.cuda_arch_list).sass;
            from = "the lock's cuda-arch-list";
        } catch (const Error&) {
        }
    }
    std::sort(sms.begin(), sms.end());
    sms.erase(std::unique(sms.begin(), sms.end()), sms.end());
    return sms;
}

VerifyCheck check_gpu_arch(const ChosenToolchain& chosen, const std::string& from, const kb::Knowledge& k) {
    if (chosen.sms.empty()) return check("gpu-arch", CheckStatus::skipped, "no GPU here and none in the lock: no sm to check");
    if (chosen.nvcc.empty()) return check("gpu-arch", CheckStatus::skipped, "no nvcc of the locked release: " + sm_names(chosen.sms) + " unchecked");
    std::vector<int> missing;
    for (int sm : chosen.sms)
        if (std::find(chosen.nvcc_sms.begin(), chosen.nvcc_sms.end(), sm) == chosen.nvcc_sms.end()) missing.push_back(sm);
    std::vector<std::string> torch_missing;
    if (!chosen.torch_version.empty() && !chosen.arch_list.empty()) {
        auto accepted = kb::torch_cpp_extension_archs(k, chosen.torch_version);
        if (!accepted.empty()) {
            std::string list = chosen.arch_list;
            for (auto& ch : list) if (ch == ';' || ch == ',') ch = ' ';
            std::istringstream ss(list);
            for (std::string e; ss >> e;) {
                std::string bare = e.substr(0, e.find('+'));
                if (std::find(accepted.begin(), accepted.end(), bare) == accepted.end()) torch_missing.push_back(e);
            }
        }
    }
    if (missing.empty() && torch_missing.empty())
        return check("gpu-arch", CheckStatus::passed, sm_names(chosen.sms) + " (" + from + ") all in nvcc " + chosen.cuda + "'s --list-gpu-arch");
    VerifyCheck c = check("gpu-arch", CheckStatus::failed, "");
    if (!missing.empty()) {
        c.what = sm_names(missing) + " (" + from + ") not in nvcc " + chosen.cuda + "'s --list-gpu-arch (" + sm_names(chosen.nvcc_sms) + ")";
        c.cause = "nvcc stops with \"nvcc fatal   : Unsupported gpu architecture 'compute_" + std::to_string(missing.front()) + "'\"";
        std::vector<std::string> covering;
        for (const auto& row : k.nvcc_targets) {
            bool all = true;
            for (int sm : missing)
                if (std::find(row.sm.begin(), row.sm.end(), kb::sm_name(sm)) == row.sm.end()) all = false;
            if (all) covering.push_back(row.cuda);
        }
        c.fix = covering.empty() ? "drop " + sm_names(missing) + " from TORCH_CUDA_ARCH_LIST"
                                 : "lock an nvcc that lists them (CUDA " + join(covering, ", ") + "), or drop them from TORCH_CUDA_ARCH_LIST";
        const auto* row = kb::nvcc_targets_row(k, chosen.cuda);
        c.source = row ? row->source : "nvcc --list-gpu-arch";
    } else {
        c.what = "TORCH_CUDA_ARCH_LIST " + chosen.arch_list + ": torch " + chosen.torch_version + " does not know " + join(torch_missing, " ");
        c.cause = "torch.utils.cpp_extension raises \"Unknown CUDA arch (" + torch_missing.front() + ") or GPU not supported\"";
        c.fix = "drop them from the arch list, or lock a torch that knows them";
        c.source = k.cpp_extension_rules.source;
    }
    return c;
}

VerifyCheck check_driver(const Lock& lock, const VerifyInputs& in, const ChosenToolchain& chosen, const kb::Knowledge& k) {
    const auto& m = in.machine;
    if (m.driver_version.empty())
        return check("driver", CheckStatus::skipped, "no NVIDIA driver on this machine: kernels are compiled, not run");
    std::string runtime = !chosen.torch_cuda.empty() ? chosen.torch_cuda : !chosen.cuda.empty() ? chosen.cuda : major_minor(lock.toolchain.nvcc);
    if (runtime.empty()) return check("driver", CheckStatus::skipped, "driver " + m.driver_version + ": no CUDA runtime in the lock");
    if (kb::driver_runs_cuda(k, m.driver_version, runtime))
        return check("driver", CheckStatus::passed, "driver " + m.driver_version + " runs the CUDA " + runtime + " runtime");
    VerifyCheck c = check("driver", CheckStatus::failed, "driver " + m.driver_version + " is too old for the CUDA " + runtime + " runtime");
    auto min = kb::min_driver_for_cuda(k, runtime);
    c.cause = "CUDA calls fail with \"CUDA driver version is insufficient for CUDA runtime version\"";
    c.fix = min ? "install NVIDIA driver " + *min + " or newer, or lock an older CUDA" : "install a newer NVIDIA driver, or lock an older CUDA";
    c.source = "knowledge: cuda_drivers";
    return c;
}

VerifyCheck check_cpu(const Lock& lock, const VerifyInputs& in) {
    const auto& have = in.machine.cpu_flags;
    if (have.empty()) return check("cpu", CheckStatus::skipped, "this machine's CPU flags are unknown");
    auto has = [&](const std::string& f) { return std::find(have.begin(), have.end(), f) != have.end(); };
    // The SIMD levels binaries are built for; a lock made on another machine names its flags.
    static const std::vector<std::string> simd = {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f"};
    std::set<std::string> need = {"avx"};   // prebuilt torch wheels need AVX (pytorch/pytorch#37577)
    for (const auto& t : lock.targets)
        for (const auto& f : t.target.cpu_flags)
            if (std::find(simd.begin(), simd.end(), f) != simd.end()) need.insert(f);
    std::vector<std::string> missing;
    for (const auto& f : need)
        if (!has(f)) missing.push_back(f);
    std::vector<std::string> needed(need.begin(), need.end());
    if (missing.empty()) return check("cpu", CheckStatus::passed, "CPU has " + join(needed, " "));
    VerifyCheck c = check("cpu", CheckStatus::failed, "CPU lacks " + join(missing, " ") + " (the lock's target has them)");
    c.cause = "binaries built for them stop with \"Illegal instruction\"";
    c.fix = "lock for this machine (`envlock detect` then `envlock resolve`), or run on a CPU with " + join(missing, " ");
    c.source = "https://github.com/pytorch/pytorch/issues/37577 (facts row 38)";
    return c;
}

// ---------------------------------------------------------------- extensions

std::map<std::string, std::string> build_environment(const Lock& lock, const VerifyInputs& in, const ChosenToolchain& chosen,
                                                     std::vector<std::string>& activate, std::vector<std::string>& notes) {
    std::map<std::string, std::string> vars = in.env;
    RunEnvironment re = run_environment(in.prefix, &lock, in.env);
    for (const auto& u : re.unset) vars.erase(u);
    for (const auto& [key, value] : re.set) vars[key] = value;
    activate = re.activate_scripts;
    notes = re.notes;
    // What verify chose wins: the toolkit it found, a host compiler nvcc accepts, an arch list
    // always (torch >= 1.9 crashes on an empty auto-detected list without a GPU), jobs by cores.
    if (!chosen.cuda_home.empty()) {
        vars["CUDA_HOME"] = chosen.cuda_home;
        vars["CUDAHOME"] = chosen.cuda_home;   // what py-faster-rcnn-style setup.py files (locate_cuda) read
        std::string bin = chosen.cuda_home + "/bin";
        std::string path = vars["PATH"];
        if (("" + path + ":").find(bin + ":") == std::string::npos) {
            size_t first = path.find(':');
            vars["PATH"] = first == std::string::npos ? path + ":" + bin : path.substr(0, first) + ":" + bin + path.substr(first);
        }
    }
    if (!chosen.arch_list.empty()) {
        vars["TORCH_CUDA_ARCH_LIST"] = chosen.arch_list;
        // The same list for CMake (CUDAARCHS seeds CMAKE_CUDA_ARCHITECTURES) and builds that read it.
        try {
            vars["CUDAARCHS"] = cmake_cuda_archs(chosen.arch_list);
        } catch (const Error& e) {
            vars.erase("CUDAARCHS");
            if (chosen.arch_list != lock.toolchain.cuda_arch_list) notes.push_back("CUDAARCHS is not set: " + std::string(e.what()));
        }
    }
    if (!chosen.cxx.empty()) {
        vars["CXX"] = chosen.cxx;
        if (!chosen.cuda_home.empty()) vars["NVCC_CCBIN"] = chosen.cxx;
    }
    if (!chosen.cc.empty()) vars["CC"] = chosen.cc;
    int cores = in.machine.cores > 0 ? in.machine.cores : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (vars.find("MAX_JOBS") == vars.end()) vars["MAX_JOBS"] = std::to_string(cores);
    return vars;
}

std::string find_extension_dir(const Lock& lock, const VerifyInputs& in, const SpecExtension& ext, std::vector<std::string>& looked) {
    std::vector<fs::path> candidates;
    fs::path in_path(ext.in.empty() ? "." : ext.in);
    if (in_path.is_absolute()) candidates.push_back(in_path);
    else {
        if (!in.prefix.empty()) candidates.push_back(fs::path(in.prefix) / "src" / in_path);
        if (!in.lock_dir.empty()) {
            if (!lock.checkout.empty()) candidates.push_back(fs::path(in.lock_dir) / lock.checkout / in_path);
            candidates.push_back(fs::path(in.lock_dir) / in_path);
        }
    }
    std::error_code ec;
    for (const auto& c : candidates) {
        looked.push_back(c.lexically_normal().string());
        if (fs::is_directory(c, ec)) return fs::absolute(c, ec).lexically_normal().string();
    }
    return "";
}

std::string safe_name(const std::string& s) {
    std::string out;
    for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_');
    return out.empty() ? "extension" : out;
}

void write_log(const std::string& path, const std::string& header, const std::string& body) {
    write_file_atomically(path, header + body);
}

void explain_failure(VerifyCheck& c, const std::string& output, const kb::Knowledge& k) {
    c.explained = explain_log(output, k);
    if (!c.explained.empty()) {
        c.cause = c.explained.front().cause;
        c.fix = c.explained.front().fix;
        c.source = c.explained.front().source;
    } else {
        std::string line = first_error_line(output);
        c.cause = line.empty() ? "no known failure in the log" : "first error: " + line;
        c.fix = "read the log: " + c.log;
    }
}

std::vector<VerifyCheck> build_extensions(const Lock& lock, const VerifyInputs& in, const ChosenToolchain& chosen,
                                          const std::string& work_dir, const kb::Knowledge& k) {
    std::vector<VerifyCheck> out;
    if (lock.spec.extensions.empty()) {
        out.push_back(check("build", CheckStatus::skipped, "the lock's spec lists no extensions"));
        return out;
    }
    std::vector<std::string> activate, notes;
    auto vars = build_environment(lock, in, chosen, activate, notes);
    std::string python = (fs::path(in.prefix) / "bin/python").string();
    for (const auto& ext : lock.spec.extensions) {
        std::string name = ext.name.empty() ? ext.in : ext.name;
        std::vector<std::string> looked;
        std::string dir = find_extension_dir(lock, in, ext, looked);
        if (dir.empty()) {
            VerifyCheck c = check("build " + name, CheckStatus::failed, "its directory `" + ext.in + "` is not here (looked in " + join(looked, ", ") + ")");
            c.fix = "install the lock first (`envlock install`: sources go to <prefix>/src), or run verify beside the checkout";
            out.push_back(c);
            continue;
        }
        auto removed = clean_extension_dir(dir);
        std::string cleaned = removed.empty() ? "nothing stale" : "removed stale " + join(removed, ", ");

        std::string script;
        for (const auto& a : activate) script += ". '" + a + "' && ";
        script += ext.build.empty() ? "python setup.py develop" : ext.build;
        std::string log = (fs::path(work_dir) / (safe_name(name) + ".build.log")).string();
        std::string header = "# envlock verify: build of " + name + " in " + dir + "\n# $ " + script + "\n";
        for (const char* key : {"CUDA_HOME", "TORCH_CUDA_ARCH_LIST", "CUDAARCHS", "CC", "CXX", "NVCC_CCBIN", "MAX_JOBS", "PATH"})
            if (vars.count(key)) header += "# " + std::string(key) + "=" + vars[key] + "\n";
        for (const auto& n : notes) header += "# note: " + n + "\n";
        header += "\n";
        auto started = std::chrono::steady_clock::now();
        ProcessOptions po;
        po.cwd = dir;
        po.env = vars;
        auto r = run_process({"bash", "-c", script}, in.build_timeout_seconds, po);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        write_log(log, header, r.out);
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.0f s", seconds);
        VerifyCheck b = check("build " + name, CheckStatus::passed, "`" + script + "` in " + dir + " (" + cleaned + "), " + secs);
        b.log = log;
        if (r.exit_code != 0) {
            b.status = CheckStatus::failed;
            b.what = "`" + script + "` in " + dir + " exited " + (r.exit_code == 124 ? "on the time limit" : std::to_string(r.exit_code)) + " (" + cleaned + ")";
            explain_failure(b, r.out, k);
            out.push_back(b);
            continue;
        }
        out.push_back(b);

        if (ext.import.empty()) continue;
        std::string ilog = (fs::path(work_dir) / (safe_name(name) + ".import.log")).string();
        ProcessOptions io;
        io.cwd = work_dir;   // not the source tree: the installed module must be the one found
        io.env = vars;
        // A torch extension links torch's own libraries (libc10_cuda.so …), which `import torch`
        // loads: its package imports torch first, and so does this check when the lock has torch.
        bool has_torch = std::any_of(lock.packages.begin(), lock.packages.end(), [](const LockedPackage& p) { return p.name == "torch" || p.name == "pytorch"; });
        std::string code = std::string(has_torch ? "import torch; " : "") + "import " + ext.import + "; print('imported', " + ext.import + ".__name__)";
        auto ir = run_process({python, "-c", code}, 300, io);
        write_log(ilog, "# envlock verify: import " + ext.import + " with " + python + "\n\n", ir.out);
        VerifyCheck c = check("import " + name, CheckStatus::passed, "import " + ext.import + " with " + python);
        c.log = ilog;
        if (ir.exit_code != 0) {
            c.status = CheckStatus::failed;
            c.what = "import " + ext.import + " with " + python + " failed";
            explain_failure(c, ir.out, k);
        }
        out.push_back(c);
    }
    return out;
}

std::string temporary_work_dir() {
    std::string tmpl = (fs::temp_directory_path() / "envlock-verify-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw EnvironmentError("verify: cannot create " + tmpl + ": " + std::strerror(errno));
    return tmpl;
}

}  // namespace

std::string status_name(CheckStatus s) {
    switch (s) {
        case CheckStatus::passed: return "passed";
        case CheckStatus::failed: return "failed";
        case CheckStatus::skipped: return "skipped";
    }
    return "";
}

int VerifyReport::exit_code() const {
    for (const auto& c : checks)
        if (c.status == CheckStatus::failed) return 1;
    return 0;
}

std::vector<VerifyCheck> check_toolchain(const Lock& lock, const VerifyInputs& in, const kb::Knowledge& k, ChosenToolchain& chosen) {
    std::vector<VerifyCheck> out;
    bool cuda = !lock.toolchain.nvcc.empty();
    std::string sms_from;
    chosen.sms = target_sms(lock, in, sms_from);
    if (!lock.toolchain.cuda_arch_list.empty()) chosen.arch_list = lock.toolchain.cuda_arch_list;
    else if (!chosen.sms.empty()) {
        for (int sm : chosen.sms) chosen.arch_list += (chosen.arch_list.empty() ? "" : ";") + kb::cc_name(sm);
    }
    if (cuda) {
        out.push_back(check_nvcc(lock, in, chosen));
        out.push_back(check_nvcc_torch(lock, chosen, k));
        if (!chosen.stand_in.empty() && chosen.nvcc.empty())
            out.push_back(check("host-compiler", CheckStatus::skipped,
                                "the locked nvcc " + chosen.stand_in + " is a stand-in and no toolkit here stands for it: no nvcc to match a host compiler with"));
        else
            out.push_back(check_host_compiler(lock, in, k, chosen));
        out.push_back(check_gpu_arch(chosen, sms_from, k));
    } else {
        out.push_back(check("nvcc", CheckStatus::skipped, "the lock builds no CUDA extensions (its toolchain names no nvcc)"));
        // C++ extensions still need a host compiler; any g++ does.
        std::string cxx = env_of(in.env, "CXX");
        if (cxx.empty()) cxx = on_path(env_of(in.env, "PATH"), "g++");
        if (!cxx.empty()) {
            chosen.cxx = cxx;
            chosen.cxx_version = compiler_version(cxx);
        }
    }
    out.push_back(check_driver(lock, in, chosen, k));
    out.push_back(check_cpu(lock, in));
    return out;
}

std::string probe_source() {
    return R"CU(// envlock verify probe: the constructs compiled CUDA ops lean on (atomics on float and
// half, warp shuffles, templates, a host launcher), compiled for every target sm.
#include <cuda_fp16.h>
#include <cstdio>

template <typename T>
__global__ void warp_sum(const T* in, int n, float* total, __half* total_half) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? static_cast<float>(in[i]) : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  v = __shfl_sync(0xffffffffu, v, 0);   // every lane holds the warp's sum
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(total, v);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
    atomicAdd(total_half, __float2half(1.0f));   // half atomics: sm_70 and newer
#endif
  }
}

template <typename T>
cudaError_t launch_warp_sum(const T* in, int n, float* total, __half* total_half, cudaStream_t stream) {
  int threads = 256;
  int blocks = (n + threads - 1) / threads;
  warp_sum<T><<<blocks, threads, 0, stream>>>(in, n, total, total_half);
  return cudaGetLastError();
}

int main() {
  const int n = 1000;
  int host[n];
  for (int i = 0; i < n; ++i) host[i] = i;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("probe: no CUDA device\n");
    return 3;
  }
  int* in = nullptr;
  float* total = nullptr;
  __half* total_half = nullptr;
  cudaMalloc(&in, sizeof host);
  cudaMalloc(&total, sizeof(float));
  cudaMalloc(&total_half, sizeof(__half));
  cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
  cudaMemset(total, 0, sizeof(float));
  cudaMemset(total_half, 0, sizeof(__half));
  cudaError_t err = launch_warp_sum<int>(in, n, total, total_half, 0);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    std::printf("probe: CUDA error: %s\n", cudaGetErrorString(err));
    return 1;
  }
  float result = 0;
  cudaMemcpy(&result, total, sizeof result, cudaMemcpyDeviceToHost);
  if (result != 499500.0f) {
    std::printf("probe: wrong sum %.1f (expected 499500)\n", result);
    return 1;
  }
  std::printf("probe ok: sum %.1f\n", result);
  return 0;
}
)CU";
}

VerifyCheck run_probe(const ChosenToolchain& chosen, const std::vector<int>& sms, const std::string& work_dir, bool run,
                      const kb::Knowledge& k) {
    if (chosen.nvcc.empty()) return check("probe", CheckStatus::skipped, "no nvcc of the locked release to compile with");
    if (sms.empty()) return check("probe", CheckStatus::skipped, "no target sm to compile for");
    fs::path dir = fs::path(work_dir) / "probe";
    std::error_code ec;
    fs::create_directories(dir, ec);
    write_file_atomically((dir / "probe.cu").string(), probe_source());
    std::vector<std::string> argv = {chosen.nvcc, "-O2"};
    if (!chosen.cxx.empty()) argv.insert(argv.end(), {"-ccbin", chosen.cxx});
    for (int sm : sms) argv.push_back("-gencode=arch=compute_" + std::to_string(sm) + ",code=sm_" + std::to_string(sm));
    argv.insert(argv.end(), {"probe.cu", "-o", "probe"});
    ProcessOptions po;
    po.cwd = dir.string();
    auto r = run_process(argv, 900, po);
    std::string command = join(argv, " ");
    std::string log = (dir / "probe.log").string();
    write_log(log, "# $ " + command + "\n\n", r.out);
    VerifyCheck c = check("probe", CheckStatus::passed,
                          "compiled with nvcc " + chosen.cuda + (chosen.cxx.empty() ? "" : ", -ccbin " + chosen.cxx) + " for " + sm_names(sms));
    c.log = log;
    if (r.exit_code != 0) {
        c.status = CheckStatus::failed;
        c.what = "nvcc " + chosen.cuda + " could not compile the probe for " + sm_names(sms);
        explain_failure(c, r.out, k);
        return c;
    }
    if (!run) return c;
    auto rr = run_process({(dir / "probe").string()}, 120, po);
    write_log(log, "# $ " + command + "\n\n" + r.out + "\n# $ ./probe\n", rr.out);
    if (rr.exit_code == 0) {
        c.what += ", ran: " + first_line(rr.out);
    } else {
        c.status = CheckStatus::failed;
        c.what = "the probe compiled for " + sm_names(sms) + " but did not run: " + first_line(rr.out);
        explain_failure(c, rr.out, k);
    }
    return c;
}

std::vector<std::string> clean_extension_dir(const std::string& dir_in) {
    std::vector<std::string> removed;
    fs::path dir(dir_in);
    std::error_code ec;
    if (fs::is_directory(dir / "build", ec)) {
        fs::remove_all(dir / "build", ec);
        removed.push_back("build/");
    }
    std::vector<fs::path> doomed;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        std::string name = e.path().filename().string();
        if (name.size() > 9 && name.substr(name.size() - 9) == ".egg-info" && e.is_directory(ec)) doomed.push_back(e.path());
    }
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        std::string name = it->path().filename().string();
        if (it->is_directory(ec) && (name == ".git" || name == "node_modules")) {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file(ec) && it->path().extension() == ".so") doomed.push_back(it->path());
    }
    std::sort(doomed.begin(), doomed.end());
    for (const auto& p : doomed) {
        fs::remove_all(p, ec);
        removed.push_back(fs::relative(p, dir, ec).string() + (fs::path(p).extension() == ".so" ? "" : "/"));
    }
    return removed;
}

std::pair<std::string, std::string> env_torch(const std::map<std::string, std::string>& env, const std::string& python) {
    ProcessOptions po;
    po.env = env;
    auto r = run_process({python, "-c",
                          "import json\ntry:\n import torch\n print(json.dumps([torch.__version__, torch.version.cuda or '']))\n"
                          "except ImportError:\n print(json.dumps(['', '']))\n"},
                         120, po);
    if (r.exit_code != 0) return {"", ""};
    try {
        std::string last;
        std::istringstream ss(r.out);
        for (std::string line; std::getline(ss, line);)
            if (!line.empty() && line[0] == '[') last = line;
        auto j = nlohmann::json::parse(last);
        return {j.at(0).get<std::string>(), j.at(1).get<std::string>()};
    } catch (const std::exception&) {
        return {"", ""};
    }
}

namespace {

// torch in the prefix is a stand-in: conda's pytorch record, or a torch wheel's metadata, says so.
bool torch_is_stand_in(const std::string& prefix) {
    for (const auto& r : read_conda_records(prefix))
        if ((r.name == "pytorch" || r.name == "torch") && r.stand_in) return true;
    std::error_code ec;
    for (const auto& lib : fs::directory_iterator(fs::path(prefix) / "lib", ec)) {
        if (lib.path().filename().string().rfind("python", 0) != 0) continue;
        for (const auto& e : fs::directory_iterator(lib.path() / "site-packages", ec)) {
            std::string name = e.path().filename().string();
            if (name.rfind("torch-", 0) == 0 && name.ends_with(".dist-info") && fs::exists(e.path() / kStandInMarker, ec)) return true;
        }
    }
    return false;
}

VerifyReport verify_in(const Lock& lock, const VerifyInputs& in, const kb::Knowledge& k, const std::string& work_dir) {
    VerifyReport report;
    auto& chosen = report.toolchain;
    if (!in.prefix.empty()) {
        std::string python = (fs::path(in.prefix) / "bin/python").string();
        if (executable(python)) {
            std::vector<std::string> activate, notes;
            auto vars = build_environment(lock, in, chosen, activate, notes);
            std::tie(chosen.torch_version, chosen.torch_cuda) = env_torch(vars, python);
        }
        chosen.torch_stand_in = torch_is_stand_in(in.prefix);
    }
    report.checks = check_toolchain(lock, in, k, chosen);
    if (in.probe && !lock.toolchain.nvcc.empty()) {
        bool run = !in.machine.gpus.empty() && !in.machine.driver_version.empty();
        report.checks.push_back(run_probe(chosen, chosen.sms, work_dir, run, k));
    }
    if (in.build_extensions) {
        if (in.prefix.empty()) {
            VerifyCheck c = check("build", CheckStatus::failed, "--build-extensions needs an installed environment");
            c.fix = "give --prefix DIR, or `envlock install` first";
            report.checks.push_back(c);
        } else if (chosen.torch_stand_in || !chosen.stand_in.empty()) {
            report.checks.push_back(check("build", CheckStatus::skipped,
                                          std::string(chosen.torch_stand_in ? "the env's torch " + chosen.torch_version : "the locked nvcc " + chosen.stand_in) +
                                              " is a stand-in: the extensions cannot be built against it"));
        } else {
            for (auto& c : build_extensions(lock, in, chosen, work_dir, k)) report.checks.push_back(std::move(c));
        }
    }
    return report;
}

}  // namespace

VerifyReport verify_lock(const Lock& lock, const VerifyInputs& in, const kb::Knowledge& k) {
    // Without a prefix or --work-dir the logs go to a temporary folder, kept only when a failed
    // check points at its log there, so that other runs leave nothing behind.
    const bool temporary = in.work_dir.empty() && in.prefix.empty();
    std::string work_dir = !in.work_dir.empty() ? in.work_dir
                           : !in.prefix.empty() ? (fs::path(in.prefix) / ".envlock/verify").string()
                                                : temporary_work_dir();
    std::error_code ec;
    fs::create_directories(work_dir, ec);
    if (ec) throw EnvironmentError("verify: cannot create " + work_dir + ": " + ec.message());
    try {
        VerifyReport report = verify_in(lock, in, k, work_dir);
        bool logs_needed = false;
        for (const auto& c : report.checks)
            if (c.status == CheckStatus::failed && c.log.rfind(work_dir, 0) == 0) logs_needed = true;
        if (temporary && !logs_needed) fs::remove_all(work_dir, ec);
        return report;
    } catch (...) {
        if (temporary) fs::remove_all(work_dir, ec);
        throw;
    }
}

nlohmann::json report_json(const VerifyReport& r) {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : r.checks) {
        nlohmann::json j = {{"check", c.name}, {"status", status_name(c.status)}, {"what", c.what}};
        if (!c.cause.empty()) j["cause"] = c.cause;
        if (!c.fix.empty()) j["fix"] = c.fix;
        if (!c.source.empty()) j["source"] = c.source;
        if (!c.log.empty()) j["log"] = c.log;
        if (!c.explained.empty()) {
            j["known-failures"] = nlohmann::json::array();
            for (const auto& e : c.explained)
                j["known-failures"].push_back({{"id", e.id}, {"where", e.where}, {"line", e.line}, {"cause", e.cause}, {"fix", e.fix}, {"source", e.source}});
        }
        checks.push_back(j);
    }
    const auto& t = r.toolchain;
    return {{"ok", r.exit_code() == 0},
            {"toolchain",
             {{"cuda-home", t.cuda_home}, {"nvcc", t.nvcc}, {"cuda", t.cuda}, {"cc", t.cc}, {"cxx", t.cxx}, {"cxx-version", t.cxx_version},
              {"sm", t.sms}, {"cuda-arch-list", t.arch_list}, {"torch", t.torch_version}, {"torch-cuda", t.torch_cuda},
              {"stand-in-nvcc", t.stand_in}, {"stand-in-torch", t.torch_stand_in}}},
            {"checks", checks}};
}

LockVerified verification_record(const VerifyReport& r, const std::string& date_utc) {
    LockVerified v;
    v.date = date_utc;
    v.result = r.exit_code() == 0 ? "passed" : "failed";
    const auto& t = r.toolchain;
    if (!t.nvcc.empty()) {
        v.nvcc_path = t.nvcc;
        v.nvcc = parse_nvcc_release(run_process({t.nvcc, "--version"}, 30).out);
        if (v.nvcc.empty()) v.nvcc = t.cuda;
    }
    if (!t.cxx.empty()) v.host_compiler = t.cxx + (t.cxx_version.empty() ? "" : " " + t.cxx_version);
    for (int sm : t.sms) v.sm.push_back(kb::sm_name(sm));
    if (!t.torch_version.empty()) v.torch = t.torch_version + (t.torch_cuda.empty() ? " (CPU)" : " (CUDA " + t.torch_cuda + ")");
    for (const auto& c : r.checks)
        if (c.status == CheckStatus::failed) v.failed.push_back(c.name);
    return v;
}

}  // namespace envlock::install
