#pragma once
// Scratch directories for the fetch tests, removed when the test case ends.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include "tests/support/scratch.hpp"

namespace envlock::test {

class TempTree {
public:
    TempTree() : path_(scratch_dir("fetch-test")) {}
    ~TempTree() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempTree(const TempTree&) = delete;
    TempTree& operator=(const TempTree&) = delete;

    const std::filesystem::path& path() const { return path_; }
    std::string str() const { return path_.string(); }

    // Writes `content` to path()/rel, creating folders.
    std::filesystem::path write(const std::string& rel, const std::string& content) const {
        auto p = path_ / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << content;
        return p;
    }

private:
    std::filesystem::path path_;
};

// ../shared as the build saw it; ENVLOCK_TEST_SHARED_DIR overrides it (a worktree whose
// parent has no shared/ can still run the snapshot tests).
inline std::string shared_dir() {
    if (const char* v = std::getenv("ENVLOCK_TEST_SHARED_DIR"); v && *v) return v;
    return ENVLOCK_SHARED_DIR;
}

inline std::string slurp_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace envlock::test
