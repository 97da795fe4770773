#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/lock_path.hpp"
#include "cli/output.hpp"
#include "cli/shared_flags.hpp"
#include "fetch/files.hpp"
#include "fetch/settings.hpp"
#include "publish/lock_mirror.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::cli {
namespace {

struct MirrorFlags {
    std::vector<std::string> args;   // LOCK... DIR
    std::string cache_dir, base_url;
    std::vector<std::string> mirrors, mirrors_files;
    bool prune = false, with_builds = false, offline = false, json = false;
    int jobs = 0;
};

nlohmann::json summary_json(const publish::MirrorSummary& s, const std::string& dir) {
    return {{"dir", dir},
            {"files", s.files},
            {"files-added", s.files_added},
            {"bytes", s.bytes},
            {"bytes-added", s.bytes_added},
            {"locks-bytes", s.locks_bytes},
            {"git-commits", s.git_sources},
            {"git-added", s.git_added},
            {"builds", s.builds},
            {"builds-added", s.builds_added},
            {"builds-missing", s.builds_missing},
            {"removed", s.removed},
            {"folder-bytes", s.folder_bytes}};
}

}  // namespace

void add_mirror(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("mirror", "Copy exactly what the locks need into a folder any static HTTP server (or file://) "
                                             "serves: conda channels, a PyPI simple index, find-links pages, git repositories, "
                                             "and a mirrors file pointing a node at it");
    auto f = std::make_shared<MirrorFlags>();
    cmd->add_option("LOCK... DIR", f->args, "the locks (or directories holding envlock.yaml), then the folder to mirror into")
        ->expected(2, -1)
        ->required();
    cmd->add_flag("--prune", f->prune, "remove what none of the given locks needs (what earlier runs wrote)");
    cmd->add_flag("--with-builds", f->with_builds, "copy the built-wheel cache's entries of the locks' git sources and sdists "
                                                   "(<cache>/built/<key>) into DIR/built");
    cmd->add_option("--base-url", f->base_url, "the URL the folder is served at (http://host/mirror): DIR/mirrors.yaml maps to it "
                                               "instead of to the folder itself");
    cmd->add_option("--cache-dir", f->cache_dir, "package cache the files come through (default $XDG_CACHE_HOME/envlock)");
    cmd->add_option("--mirror", f->mirrors, "fetch URLs under FROM from TO instead (FROM=TO); repeatable")->allow_extra_args(false);
    cmd->add_option("--mirrors-file", f->mirrors_files, "a mirrors file to fetch through (`mirrors:` FROM: TO); repeatable; "
                                                        "ENVLOCK_MIRRORS may name one too")->allow_extra_args(false);
    cmd->add_flag("--offline", f->offline, "take files from the package cache and local folders only");
    cmd->add_option("-j,--jobs", f->jobs, "parallel downloads (default 8)")->check(CLI::PositiveNumber);
    cmd->add_flag("--json", f->json, "print the summary as JSON");
    cmd->callback([cmd, f] {
        std::vector<publish::LockFile> locks;
        for (size_t i = 0; i + 1 < f->args.size(); ++i) {
            std::string path = lock_path(f->args[i]);
            locks.push_back({read_lock(read_text_file(path, "lock"), path), path});
        }
        auto settings = download_settings(f->jobs, f->cache_dir, f->mirrors, f->mirrors_files, f->offline);
        publish::MirrorOptions o;
        o.dir = f->args.back();
        o.fetch = fetch::load_fetch_context(settings);
        o.prune = f->prune;
        o.with_builds = f->with_builds;
        o.base_url = f->base_url;
        const bool quiet = f->json || output_of(*cmd).quiet;
        if (!quiet) o.say = [](const std::string& line) { std::cerr << line << "\n"; };
        auto s = publish::mirror_locks(locks, o);
        const std::string dir = std::filesystem::absolute(o.dir).lexically_normal().string();
        if (f->json) {
            std::cout << summary_json(s, dir).dump(2) << "\n";
            return;
        }
        if (quiet) return;
        std::cout << dir << ": " << s.files << " files (" << s.files_added << " new, " << human_bytes(s.bytes_added) << "), "
                  << s.git_sources << " git commits (" << s.git_added << " new)";
        if (f->with_builds) std::cout << ", " << s.builds << " built wheels (" << s.builds_added << " new)";
        if (f->prune) std::cout << "; removed " << s.removed;
        std::cout << "\n  the locks' files: " << human_bytes(s.locks_bytes) << "; the folder: " << human_bytes(s.folder_bytes)
                  << " (with metadata, pages, git" << (f->with_builds ? ", builds" : "") << ")\n";
        for (const auto& m : s.builds_missing) std::cout << "  no built wheel in the cache for " << m << "\n";
        std::cout << "  on a node: ENVLOCK_MIRRORS=" << dir << "/mirrors.yaml envlock install LOCK --offline\n";
    });
    (void)exit_code;
}

}  // namespace envlock::cli
