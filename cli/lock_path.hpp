#pragma once
// Where a command finds the lock: a file, a directory holding envlock.yaml, or ./envlock.yaml.
#include <filesystem>
#include <string>

namespace envlock::cli {

inline std::string lock_path(const std::string& given) {
    if (given.empty()) return "envlock.yaml";
    std::error_code ec;
    if (std::filesystem::is_directory(given, ec)) return (std::filesystem::path(given) / "envlock.yaml").string();
    return given;
}

}  // namespace envlock::cli
