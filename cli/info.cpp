// `envlock info` (versions, the cache and this machine, as `pixi info` shows) and `envlock cache
// dir|clean|prune` (as `uv cache dir|clean|prune`).
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/shared_flags.hpp"
#include "fetch/settings.hpp"
#include "install/python_env.hpp"
#include "resolver/knowledge/detect.hpp"
#include "resolver/knowledge/knowledge.hpp"

namespace envlock::cli {

namespace {

namespace fs = std::filesystem;

struct Usage {
    std::uintmax_t files = 0, bytes = 0;
};

Usage usage_of(const fs::path& dir) {
    Usage u;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
        ++u.files;
        u.bytes += it->file_size(ec);
    }
    return u;
}

fs::path cache_dir_of(const std::string& flag) {
    fetch::CommandLineSettings s;
    if (!flag.empty()) s.cache_dir = flag;
    return fetch::load_fetch_context(s).cache_dir;
}

// Removes `dir` entirely; what it held, for the message.
Usage remove_counted(const fs::path& dir) {
    Usage u = usage_of(dir);
    std::error_code ec;
    fs::remove_all(dir, ec);
    return u;
}

}  // namespace

void add_info(CLI::App& app, int& exit_code) {
    auto* info = app.add_subcommand("info", "Versions, the cache (folder and size) and this machine as a target");
    auto json = std::make_shared<bool>(false);
    auto cache_flag = std::make_shared<std::string>();
    info->add_flag("--json", *json, "print it as JSON");
    info->add_option("--cache-dir", *cache_flag, "the cache folder to describe (default $XDG_CACHE_HOME/envlock)");
    info->callback([json, cache_flag, &exit_code] {
        auto k = knowledge::load(user_knowledge_files({}));
        Target t = detect_target(DetectRoots::host(), k);
        fs::path cache = cache_dir_of(*cache_flag);
        Usage u = usage_of(cache);
        std::vector<std::string> pythons;
        for (const auto& b : install::find_interpreters(install::default_interpreter_dirs()))
            pythons.push_back(b.version + " (" + b.executable + ")");
        std::string gpus;
        for (const auto& g : t.gpus)
            gpus += (gpus.empty() ? "" : ", ") + g.name + " sm_" + std::to_string(g.sm_major) + std::to_string(g.sm_minor);
        if (*json) {
            nlohmann::json j = {{"version", ENVLOCK_VERSION},
                                {"knowledge-version", k.version},
                                {"cache-dir", cache.string()},
                                {"cache-files", u.files},
                                {"cache-bytes", u.bytes},
                                {"platform", t.platform},
                                {"glibc", t.glibc},
                                {"driver", t.driver_version},
                                {"driver-cuda", t.driver_cuda},
                                {"gpus", gpus},
                                {"pythons", pythons}};
            std::cout << j.dump(2) << "\n";
            return;
        }
        std::cout << "envlock " << ENVLOCK_VERSION << " (knowledge " << k.version.substr(0, 12) << ")\n"
                  << "cache:     " << cache.string() << " (" << u.files << " files, " << human_bytes(u.bytes) << ")\n"
                  << "platform:  " << t.platform << (t.glibc.empty() ? "" : ", glibc " + t.glibc) << "\n"
                  << "driver:    " << (t.driver_version.empty() ? "none" : t.driver_version + " (CUDA " + t.driver_cuda + ")") << "\n"
                  << "gpus:      " << (gpus.empty() ? "none" : gpus) << "\n"
                  << "pythons:   " << (pythons.empty() ? std::string("none found") : pythons.front()) << "\n";
        for (size_t i = 1; i < pythons.size(); ++i) std::cout << "           " << pythons[i] << "\n";
        (void)exit_code;
    });

    auto* cache = app.add_subcommand("cache", "The cache: dir (where it is), clean (remove all of it), prune (remove what a resolve makes again)");
    cache->require_subcommand(1);
    auto dir_flag = std::make_shared<std::string>();
    cache->add_option("--cache-dir", *dir_flag, "the cache folder (default $XDG_CACHE_HOME/envlock)");
    cache->add_subcommand("dir", "print the cache folder")->callback([dir_flag] { std::cout << cache_dir_of(*dir_flag).string() << "\n"; });
    cache->add_subcommand("clean", "remove the whole cache (packages, index pages, interpreters' answers)")->callback([dir_flag] {
        fs::path dir = cache_dir_of(*dir_flag);
        Usage u = remove_counted(dir);
        std::cout << "removed " << u.files << " files (" << human_bytes(u.bytes) << ") from " << dir.string() << "\n";
    });
    cache->add_subcommand("prune",
                          "remove what the next resolve makes again from the index bodies it keeps (parsed page records, "
                          "resolve memos); keeps packages, index bodies and interpreters' answers")
        ->callback([dir_flag] {
            fs::path dir = cache_dir_of(*dir_flag);
            Usage total;
            for (const char* derived : {"pages", "resolves"}) {
                Usage u = remove_counted(dir / derived);
                total.files += u.files;
                total.bytes += u.bytes;
            }
            std::cout << "removed " << total.files << " files (" << human_bytes(total.bytes) << ") from " << dir.string() << "\n";
        });
}

}  // namespace envlock::cli
