#include "install/source_install.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "fetch/files.hpp"
#include "fetch/git_source.hpp"
#include "fetch/process.hpp"
#include "install/record.hpp"
#include "install/source_build.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {

namespace fs = std::filesystem;

namespace {

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

// What every build of a source shares: the env's python, run's environment, the cache.
BuildRequest build_request(const LockedPackage& package, const SourceOptions& options, const RunEnvironment& env) {
    BuildRequest br;
    br.name = package.name;
    br.version = package.version;
    br.where = options.where.empty() ? package.name + " " + package.version : options.where;
    br.python = options.python;
    br.env = current_environment();
    for (const auto& k : env.unset) br.env.erase(k);
    for (const auto& [k, v] : env.set) br.env[k] = v;
    br.lock = options.lock;
    br.cache_dir = options.cache_dir;
    br.timeout_seconds = options.timeout_seconds;
    return br;
}

}  // namespace

bool is_editable_install(const std::string& cmd) {
    auto has_word = [&](const std::string& w) {
        size_t pos = 0;
        while ((pos = cmd.find(w, pos)) != std::string::npos) {
            bool start = pos == 0 || cmd[pos - 1] == ' ';
            bool end = pos + w.size() == cmd.size() || cmd[pos + w.size()] == ' ' || cmd[pos + w.size()] == '=';
            if (start && end) return true;
            pos += w.size();
        }
        return false;
    };
    return has_word("-e") || has_word("--editable") || has_word("develop");
}

SourceInstall install_source(const LockedPackage& package, const PythonLayout& layout, const RunEnvironment& env,
                             const SourceOptions& options) {
    SourceInstall result;
    if (!is_git_commit(package.rev))
        throw InputError("lock: source " + package.name + " is pinned to '" + package.rev + "', not a commit; run `envlock resolve` to pin it");
    result.checkout = "src/" + package.name;
    auto staged = [&](const std::string& rel) {
        return ((options.stage.empty() ? fs::path(layout.prefix) : fs::path(options.stage)) / rel).string();
    };
    std::string checkout = staged(result.checkout);
    std::string final_checkout = (fs::path(layout.prefix) / result.checkout).string();

    // The exact commit: an existing checkout at another commit is replaced, not reused.
    std::error_code ec;
    if (fs::exists(checkout, ec)) {
        auto head = run_process({"git", "-C", checkout, "rev-parse", "HEAD"});
        if (head.exit_code != 0 || trim(head.out) != package.rev) fs::remove_all(checkout, ec);
    }
    if (!fs::exists(checkout, ec)) {
        fs::create_directories(fs::path(checkout).parent_path(), ec);
        clone_at(options.clone_url.empty() ? package.url : options.clone_url, package.rev, checkout);
    }
    auto head = run_process({"git", "-C", checkout, "rev-parse", "HEAD"});
    if (head.exit_code != 0 || trim(head.out) != package.rev)
        throw EnvironmentError("git: " + package.url + " checked out at " + trim(head.out) + ", not the locked commit " + package.rev);

    // Built in the env (its torch, its compilers, CUDA_HOME, TORCH_CUDA_ARCH_LIST), or taken
    // from the built-wheel cache when everything the build depends on is the same.
    BuildRequest br = build_request(package, options, env);
    br.project_dir = options.project_dir.empty() ? checkout : (fs::path(checkout) / options.project_dir).string();
    br.source_id = "git " + package.url + " " + package.rev + (options.project_dir.empty() ? "" : " " + options.project_dir);
    br.editable = options.editable;
    BuiltWheel built = build_source(br);
    result.wheel = built.tree.empty() ? built.wheel : built.tree;
    result.build_log = built.log;
    result.log_path = built.log_path;
    result.from_cache = built.from_cache;
    std::string out_dir = built.temp_dir;

    WheelOptions wo;
    wo.stage = options.stage;
    wo.compile = options.compile;
    wo.compile_python = options.python;
    DirectUrl d;
    if (options.editable) {
        // PEP 660: the project directory, editable. The backend wrote the staged checkout's
        // path into the wheel; the installed files must name where it will live.
        d.url = "file://" + final_checkout;
        d.dir = true;
        d.editable = true;
    } else {
        d.url = package.url;
        d.vcs = "git";
        d.commit_id = package.rev;
        if (!package.build.empty() && package.build != package.rev) d.requested_revision = package.build;
    }
    wo.direct_url = d;
    wo.path_rewrites = {};
    if (options.editable && checkout != final_checkout) wo.path_rewrites.emplace_back(checkout, final_checkout);
    try {
        result.installed = install_wheel(result.wheel, layout, wo);
    } catch (...) {
        if (!out_dir.empty()) fs::remove_all(out_dir, ec);
        throw;
    }
    if (!out_dir.empty()) fs::remove_all(out_dir, ec);
    return result;
}

SdistInstall install_sdist(const LockedPackage& package, const std::string& tree, const PythonLayout& layout,
                           const RunEnvironment& env, const SourceOptions& options) {
    // An sdist unpacks to one directory, <name>-<version>/ (PEP 625; older ones spell the name
    // as they like): the project is the single directory at the top.
    std::string project;
    std::error_code ec;
    for (const auto& d : fs::directory_iterator(tree, ec)) {
        if (!d.is_directory()) continue;
        if (!project.empty()) {
            project.clear();
            break;
        }
        project = d.path().string();
    }
    if (project.empty() || (!fs::exists(fs::path(project) / "setup.py", ec) && !fs::exists(fs::path(project) / "pyproject.toml", ec)))
        throw InputError((options.where.empty() ? package.name + " " + package.version : options.where) + ": the sdist " +
                         package.url.substr(package.url.rfind('/') + 1) +
                         " is not one directory holding setup.py or pyproject.toml, so there is nothing to build");
    BuildRequest br = build_request(package, options, env);
    br.project_dir = project;
    br.build_in_copy = true;   // the tree is the shared package cache's
    br.source_id = "sdist sha256:" + package.sha256;
    BuiltWheel built = build_source(br);
    SdistInstall result;
    result.build_log = built.log;
    result.log_path = built.log_path;
    result.from_cache = built.from_cache;
    WheelOptions wo;
    wo.stage = options.stage;
    wo.compile = options.compile;
    wo.compile_python = options.python;
    wo.requested = options.requested;
    wo.direct_url = options.direct_url;
    try {
        result.installed = install_wheel(built.tree.empty() ? built.wheel : built.tree, layout, wo);
    } catch (...) {
        if (!built.temp_dir.empty()) fs::remove_all(built.temp_dir, ec);
        throw;
    }
    if (!built.temp_dir.empty()) fs::remove_all(built.temp_dir, ec);
    return result;
}

}  // namespace envlock::install
