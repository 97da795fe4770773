#pragma once
// Shared pieces of verify's tests: a lock built in code, fake compilers on a temp PATH, and
// whether the real tools (nvcc, Debian's torch) are on this machine.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fetch/process.hpp"
#include "install/verify.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

namespace envlock::test {

inline const knowledge::Knowledge& builtin_knowledge() {
    static const knowledge::Knowledge k = knowledge::load_builtin();
    return k;
}

// A lock whose extensions are built with CUDA `nvcc` (empty: C++ only).
inline Lock verify_lock_with(const std::string& nvcc, const std::string& nvcc_from = "") {
    Lock lock;
    lock.spec.name = "verify-fixture";
    lock.toolchain.nvcc = nvcc;
    lock.toolchain.nvcc_from = nvcc_from;
    NamedTarget t;
    t.name = "default";
    t.target.platform = "linux-64";
    lock.targets.push_back(t);
    return lock;
}

// A compiler that only answers version questions: gcc's -dumpfullversion and --version.
inline void fake_compiler(const fs::path& dir, const std::string& name, const std::string& version) {
    write_text(dir / name,
               "#!/bin/sh\n# a fake " + name + " for envlock's tests: it only tells its version\n"
               "case \"$1\" in\n  -dumpfullversion|-dumpversion) echo " + version + " ;;\n"
               "  --version) echo \"" + name + " (Fake GCC) " + version + "\" ;;\n  *) echo \"" + name +
               ": fake compiler\" >&2; exit 1 ;;\nesac\n",
               true);
}

// The machine's nvcc 13.0, where there is one (tests that need it skip without).
inline std::string system_nvcc() {
    for (const char* p : {"/usr/local/cuda/bin/nvcc", "/usr/local/cuda-13.0/bin/nvcc"})
        if (::access(p, X_OK) == 0) return p;
    return "";
}

inline bool debian_torch_importable() {
    static const bool ok = [] {
        auto r = run_process({"/usr/bin/python3", "-c", "import torch, torch.utils.cpp_extension"}, 120);
        return r.exit_code == 0;
    }();
    return ok;
}

inline const install::VerifyCheck* find_check(const install::VerifyReport& r, const std::string& name) {
    for (const auto& c : r.checks)
        if (c.name == name) return &c;
    return nullptr;
}
inline const install::VerifyCheck* find_check(const std::vector<install::VerifyCheck>& checks, const std::string& name) {
    for (const auto& c : checks)
        if (c.name == name) return &c;
    return nullptr;
}

}  // namespace envlock::test
