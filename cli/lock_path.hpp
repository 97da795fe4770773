#pragma once
// Where a command finds the lock: a file, a directory holding envlock.yaml, or the nearest
// envlock.yaml from the working directory upward (as uv and pixi find their project from a
// subfolder); ./envlock.yaml when there is none, so the error names it.
#include <filesystem>
#include <string>

namespace envlock::cli {

inline std::string lock_path(const std::string& given) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (given.empty()) {
        fs::path cwd = fs::current_path(ec);
        for (fs::path dir = cwd; !ec && !dir.empty(); dir = dir.parent_path()) {
            std::error_code missing;   // not found sets it; the walk goes on
            if (fs::is_regular_file(dir / "envlock.yaml", missing)) {
                fs::path rel = (dir / "envlock.yaml").lexically_relative(cwd);
                return rel.empty() ? (dir / "envlock.yaml").string() : rel.string();
            }
            if (dir == dir.root_path()) break;
        }
        return "envlock.yaml";
    }
    if (fs::is_directory(given, ec)) return (fs::path(given) / "envlock.yaml").string();
    return given;
}

}  // namespace envlock::cli
