#pragma once
// Which prefix and lock `run`, `shell-hook` (and `export --prefix`) act on: --prefix, else
// .envlock/<target> beside the lock; the lock the prefix was installed from when it kept a
// copy (<prefix>/.envlock/lock.yaml, written by install), else --lock / ./envlock.yaml when present.
#include <filesystem>
#include <optional>
#include <string>

#include "cli/lock_path.hpp"
#include "fetch/files.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::cli {

struct EnvChoice {
    std::string prefix;
    std::optional<Lock> lock;
};

inline EnvChoice choose_env(const std::string& prefix_flag, const std::string& lock_flag, const std::string& target_flag) {
    namespace fs = std::filesystem;
    EnvChoice c;
    std::error_code ec;
    std::string lock_file = lock_path(lock_flag);
    if (!prefix_flag.empty()) {
        c.prefix = prefix_flag;
        std::string kept = (fs::path(prefix_flag) / ".envlock/lock.yaml").string();
        if (fs::exists(kept, ec)) c.lock = read_lock(read_text_file(kept, "lock"), kept);
        else if (!lock_flag.empty() || fs::exists(lock_file, ec)) c.lock = read_lock(read_text_file(lock_file, "lock"), lock_file);
        return c;
    }
    c.lock = read_lock(read_text_file(lock_file, "lock"), lock_file);
    std::string target = target_flag;
    if (target.empty()) target = c.lock->targets.empty() ? "default" : c.lock->targets.front().name;
    c.prefix = (fs::absolute(lock_file, ec).parent_path() / ".envlock" / target).string();
    return c;
}

}  // namespace envlock::cli
