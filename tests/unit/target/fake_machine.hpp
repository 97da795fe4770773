#pragma once
// A fake machine for detection tests: a temp directory holding proc/, sys/, usr/local/, bin/ and
// any executables (small /bin/sh scripts standing in for nvidia-smi, nvcc, gcc, ldd). Detection
// runs its real parsing over these inputs.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "resolver/knowledge/detect.hpp"
#include "tests/support/scratch.hpp"

namespace envlock::test {

class FakeMachine {
public:
    FakeMachine() {
        root_ = scratch_dir("fake-machine");
        std::filesystem::create_directories(root_ / "bin");
        std::filesystem::create_directories(root_ / "proc");
        std::filesystem::create_directories(root_ / "sys");
        std::filesystem::create_directories(root_ / "usr/local");
    }
    ~FakeMachine() {
        std::error_code ec;
        std::filesystem::remove_all(root_, ec);
    }
    FakeMachine(const FakeMachine&) = delete;
    FakeMachine& operator=(const FakeMachine&) = delete;

    const std::filesystem::path& root() const { return root_; }

    void file(const std::string& rel, const std::string& content) const {
        auto p = root_ / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << content;
    }
    // An executable script; `body` is sh code that sees the arguments as "$@".
    void program(const std::string& rel, const std::string& body) const {
        file(rel, "#!/bin/sh\n" + body + "\n");
        chmod((root_ / rel).c_str(), 0755);
    }
    void symlink(const std::string& target, const std::string& rel) const {
        std::filesystem::create_directory_symlink(target, root_ / rel);
    }

    // Roots over the fake tree; PATH is only bin/ unless extra dirs are given.
    DetectRoots roots(const std::string& extra_path = "") const {
        DetectRoots r;
        r.proc = (root_ / "proc").string();
        r.sys = (root_ / "sys").string();
        r.usr_local = (root_ / "usr/local").string();
        r.wsl_lib = (root_ / "wsl/lib").string();
        r.mac_system_version = (root_ / "System/Library/CoreServices/SystemVersion.plist").string();
        r.path_env = (root_ / "bin").string() + (extra_path.empty() ? "" : ":" + extra_path);
        r.sysname = "Linux";
        r.machine = "x86_64";
        r.timeout_ms = 5000;
        return r;
    }

private:
    std::filesystem::path root_;
};

}  // namespace envlock::test
