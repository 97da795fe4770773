#include "resolver/lock/target.hpp"

#include <algorithm>
#include <tuple>

namespace envlock {
namespace {

// The x86-64 feature levels prebuilt binaries are compiled for (the psABI's x86-64-v2, v3 and
// v4 are told apart by these) and the ones torch's CPU dispatch selects kernels by
// (aten/src/ATen/native/DispatchStub.cpp: DEFAULT, AVX2, AVX512).
bool binary_feature_flag(const std::string& flag) {
    static const char* const kept[] = {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "asimd", "sve"};
    return std::find_if(std::begin(kept), std::end(kept), [&](const char* k) { return flag == k; }) != std::end(kept);
}

}  // namespace

bool cpu_only(const Target& t) { return t.driver_version.empty() && t.gpus.empty(); }

std::string linux_version(const std::string& release) {
    if (release.empty()) return "";
    // \d+\.\d+(\.\d+)?(\.\d+)? at the start (conda/plugins/virtual_packages/linux.py).
    std::size_t i = 0, parts = 0, end = 0;
    while (parts < 4) {
        std::size_t start = i;
        while (i < release.size() && release[i] >= '0' && release[i] <= '9') ++i;
        if (i == start) break;
        ++parts;
        end = i;
        if (i >= release.size() || release[i] != '.') break;
        ++i;
    }
    return parts >= 2 ? release.substr(0, end) : "0";
}

Target without_kernel(Target t) {
    t.kernel.clear();
    return t;
}

const std::vector<std::string>& facts_a_lock_may_leave_out() {
    static const std::vector<std::string> keys = {"compilers", "cpu-flags", "cuda-toolkits", "driver", "glibc", "gpus", "osx", "wsl"};
    return keys;
}

namespace {

// Copies (or, from an empty target, clears) the fields a left-out key stands for.
void take_fact(Target& to, const Target& from, const std::string& key) {
    if (key == "glibc") to.glibc = from.glibc;
    else if (key == "osx") to.osx = from.osx;
    else if (key == "wsl") to.wsl = from.wsl;
    else if (key == "cpu-flags") to.cpu_flags = from.cpu_flags;
    else if (key == "driver") {
        to.driver_version = from.driver_version;
        to.driver_cuda = from.driver_cuda;
    } else if (key == "gpus") to.gpus = from.gpus;
    else if (key == "compilers") to.compilers = from.compilers;
    else if (key == "cuda-toolkits") to.toolkits = from.toolkits;
}

bool given(const Target& t, const std::string& key) {
    auto is = [&](const char* k) { return std::find(t.given.begin(), t.given.end(), k) != t.given.end(); };
    return key == "driver" ? is("driver") || is("driver-cuda") : is(key.c_str());
}

}  // namespace

Target leave_out(Target t, const std::vector<std::string>& keys) {
    const Target none;
    const bool osx = t.platform.rfind("osx", 0) == 0;
    for (const auto& key : keys) {
        if (given(t, key)) continue;
        // A fact the platform has not at all is not listed (a linux target has no macOS version).
        if ((key == "osx" && !osx) || ((key == "glibc" || key == "wsl") && osx)) continue;
        take_fact(t, none, key);
        t.left_out.push_back(key);
    }
    std::sort(t.left_out.begin(), t.left_out.end());
    t.left_out.erase(std::unique(t.left_out.begin(), t.left_out.end()), t.left_out.end());
    return t;
}

Target with_left_out(Target t, const Target& machine) {
    for (const auto& key : t.left_out) take_fact(t, machine, key);
    t.left_out.clear();
    return t;
}

Target locked_facts(Target t) {
    t.kernel = t.platform.rfind("linux", 0) == 0 ? linux_version(t.kernel) : "";
    if (t.platform.rfind("osx", 0) != 0) t.osx.clear();
    t.cpu_model.clear();
    t.cores = 0;
    t.memory_bytes = 0;
    t.cpu_flags.erase(std::remove_if(t.cpu_flags.begin(), t.cpu_flags.end(), [](const std::string& f) { return !binary_feature_flag(f); }),
                      t.cpu_flags.end());
    std::sort(t.cpu_flags.begin(), t.cpu_flags.end());
    t.cpu_flags.erase(std::unique(t.cpu_flags.begin(), t.cpu_flags.end()), t.cpu_flags.end());
    std::stable_sort(t.gpus.begin(), t.gpus.end(), [](const Gpu& a, const Gpu& b) {
        return std::tie(a.sm_major, a.sm_minor, a.name) < std::tie(b.sm_major, b.sm_minor, b.name);
    });
    for (auto& c : t.compilers) c.path.clear();
    auto compiler_key = [](const HostCompiler& c) { return std::tie(c.kind, c.version); };
    std::sort(t.compilers.begin(), t.compilers.end(), [&](const HostCompiler& a, const HostCompiler& b) { return compiler_key(a) < compiler_key(b); });
    t.compilers.erase(std::unique(t.compilers.begin(), t.compilers.end(),
                                  [&](const HostCompiler& a, const HostCompiler& b) { return compiler_key(a) == compiler_key(b); }),
                      t.compilers.end());
    std::stable_sort(t.toolkits.begin(), t.toolkits.end(), [](const CudaToolkit& a, const CudaToolkit& b) {
        return std::tie(a.version, a.path) < std::tie(b.version, b.path);
    });
    std::sort(t.given.begin(), t.given.end());
    t.given.erase(std::unique(t.given.begin(), t.given.end()), t.given.end());
    return t;
}

}  // namespace envlock
