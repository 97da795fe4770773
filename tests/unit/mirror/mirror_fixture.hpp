#pragma once
// Shared helpers of the mirror tests: where ../shared is, and mirrors built once per test
// process (into a temporary folder removed at exit).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/mirror/mirror.hpp"
#include "tests/support/scratch.hpp"

namespace envlock::mirror::test {

// ENVLOCK_SHARED_DIR (the build's ../shared), or the environment variable of that name
// when set (worktrees have no ../shared of their own). Empty when neither exists.
inline std::string shared_dir() {
    if (const char* env = std::getenv("ENVLOCK_SHARED_DIR"); env && std::filesystem::is_directory(env)) return env;
    if (std::filesystem::is_directory(ENVLOCK_SHARED_DIR)) return ENVLOCK_SHARED_DIR;
    return "";
}

struct BuiltMirror {
    std::filesystem::path dir;
    MirrorInfo info;
    ~BuiltMirror() {
        std::error_code ec;
        std::filesystem::remove_all(dir.parent_path(), ec);
    }
};

inline std::unique_ptr<BuiltMirror> build_into_temp(const MirrorOptions& options, const std::string& name) {
    auto m = std::make_unique<BuiltMirror>();
    m->dir = envlock::test::scratch_dir("mirror-test") / name;
    m->info = build_mirror(m->dir.string(), options);
    return m;
}

// The mirror from the compiled-in tables only (no ../shared).
inline const BuiltMirror& builtin_mirror() {
    static auto m = build_into_temp(MirrorOptions{"", false, true}, "builtin");
    return *m;
}

// The mirror from ../shared (facts + the real pytorch channel); nullptr when it is absent.
inline const BuiltMirror* shared_mirror() {
    static auto m = shared_dir().empty() ? nullptr : build_into_temp(MirrorOptions{shared_dir(), true, true}, "shared");
    return m.get();
}

inline std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline nlohmann::json read_json(const std::filesystem::path& p) { return nlohmann::json::parse(read_file(p)); }

}  // namespace envlock::mirror::test
