#include <filesystem>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/lock_path.hpp"
#include "cli/output.hpp"
#include "cli/shared_flags.hpp"
#include "fetch/files.hpp"
#include "fetch/settings.hpp"
#include "install/install.hpp"
#include "install/python_env.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::cli {
namespace {

namespace fs = std::filesystem;

struct InstallFlags {
    std::string lock, prefix, target, cache_dir, link_mode = "hardlink";
    std::vector<std::string> mirrors, mirrors_files;
    std::string python;
    bool offline = false, repair = false, dry_run = false, quiet = false, compile = false, json = false, seed = false;
    int jobs = 0;
};


// Bytes, rate and ETA on one rewritten line on a terminal; one line per finished download
// otherwise; nothing with --quiet.
class DownloadDisplay {
public:
    DownloadDisplay(const Lock& lock, bool quiet, bool verbose = false)
        : lock_(lock), quiet_(quiet), verbose_(verbose), tty_(::isatty(STDERR_FILENO)) {
        for (const auto& p : lock.packages)
            if (p.kind != Ecosystem::source) {
                sizes_.push_back(p.size);
                names_.push_back(p.url.substr(p.url.rfind('/') + 1));
            }
        received_.assign(sizes_.size(), 0);
        done_.assign(sizes_.size(), false);
    }
    ~DownloadDisplay() { finish(); }

    void update(const install::FetchProgress& p) {
        if (quiet_ || p.index >= received_.size()) return;
        std::lock_guard g(m_);
        if (!started_) start_ = Clock::now(), started_ = true;
        if (p.cached) {   // counted as done, left out of the bytes and the rate
            if (!done_[p.index]) done_[p.index] = true, ++cached_;
            return;
        }
        received_[p.index] = p.received;
        if (p.total) sizes_[p.index] = p.total;
        if (p.done && !done_[p.index]) {
            done_[p.index] = true;
            ++finished_;
            if (!tty_ && !p.cached && verbose_) std::cerr << "fetched " << names_[p.index] << " (" << human_bytes(p.received) << ")\n";
        }
        if (tty_ && (Clock::now() - last_ > std::chrono::milliseconds(100) || p.done)) draw();
    }

    void finish() {
        if (tty_ && drawn_) std::cerr << "\r\033[K" << std::flush;
        drawn_ = false;
    }
    // For the summary: packages downloaded, and packages the cache already held.
    size_t downloaded() const { return finished_; }
    size_t cached() const { return cached_; }

private:
    using Clock = std::chrono::steady_clock;
    void draw() {
        last_ = Clock::now();
        std::uint64_t got = 0, total = 0;
        size_t active = 0;
        for (size_t i = 0; i < received_.size(); ++i) {
            if (received_[i] == 0) continue;   // not started, or cached
            got += received_[i];
            total += std::max(sizes_[i], received_[i]);
            ++active;
        }
        double secs = std::chrono::duration<double>(Clock::now() - start_).count();
        double rate = secs > 0 ? got / secs : 0;
        std::string line = "fetching " + std::to_string(finished_) + "/" + std::to_string(active) + " packages (" +
                           std::to_string(cached_) + " cached), " +
                           human_bytes(got) + " of " + human_bytes(total) + ", " + human_bytes(static_cast<unsigned long long>(rate)) + "/s";
        if (rate > 0 && total > got) line += ", ETA " + std::to_string(int((total - got) / rate) + 1) + " s";
        std::cerr << "\r\033[K" << line << std::flush;
        drawn_ = true;
    }

    const Lock& lock_;
    bool quiet_, verbose_, tty_;
    std::mutex m_;
    std::vector<std::uint64_t> sizes_, received_;
    std::vector<std::string> names_;
    std::vector<bool> done_;
    size_t finished_ = 0, cached_ = 0;
    bool started_ = false, drawn_ = false;
    Clock::time_point start_, last_;
};

// What uv says after an install ("Installed 3 packages in 8ms"): the counts, the time, and
// where the files came from. `seconds` < 0 for a dry run.
std::string summary_tail(double seconds, size_t downloaded, size_t cached) {
    if (seconds < 0) return "";
    char took[32];
    if (seconds < 1) std::snprintf(took, sizeof took, "%dms", static_cast<int>(seconds * 1000));
    else std::snprintf(took, sizeof took, "%.2fs", seconds);
    return std::string(" in ") + took + " (" + std::to_string(downloaded) + " downloaded, " + std::to_string(cached) + " from the cache)";
}

void print_plan(const install::InstallPlan& plan, bool dry_run, const std::string& tail = "") {
    for (const auto& r : plan.reasons) std::cout << "  (" << r << ")\n";
    std::set<std::string> added;
    for (const auto& a : plan.add) added.insert(a.name);
    for (const auto& r : plan.remove)
        if (!added.count(r.name)) std::cout << "  - " << r.name << " " << r.version << " (" << r.kind << ")\n";
    std::map<std::string, std::string> removed;
    for (const auto& r : plan.remove) removed[r.name] = r.version;
    std::uint64_t bytes = 0;
    for (const auto& a : plan.add) {
        bytes += a.size;
        auto it = removed.find(a.name);
        if (it != removed.end()) std::cout << "  ~ " << a.name << " " << it->second << " -> " << a.version << " (" << a.kind << ")\n";
        else std::cout << "  + " << a.name << " " << a.version << " (" << a.kind << ")\n";
    }
    if (dry_run) std::cout << "would install " << plan.add.size() << ", remove " << plan.remove.size() << ", keep " << plan.keep << " packages";
    else std::cout << "installed " << plan.add.size() << ", removed " << plan.remove.size() << ", kept " << plan.keep << " packages" << tail;
    if (dry_run && bytes) std::cout << " (" << human_bytes(bytes) << " to fetch unless cached)";
    std::cout << "\n";
}

// The result with the lock's spelling of kinds and names, for scripts and CI.
nlohmann::json result_json(const install::InstallResult& r, const fs::path& prefix, bool dry_run, bool repair) {
    auto packages = [](const std::vector<install::PlannedPackage>& list) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& p : list) a.push_back({{"name", p.name}, {"version", p.version}, {"kind", p.kind}, {"size", p.size}});
        return a;
    };
    nlohmann::json j = {{"prefix", fs::absolute(prefix).lexically_normal().string()},
                        {"dry-run", dry_run},
                        {"changed", r.changed},
                        {"add", packages(r.plan.add)},
                        {"remove", packages(r.plan.remove)},
                        {"keep", r.plan.keep},
                        {"reasons", r.plan.reasons},
                        {"recovered", r.recovered}};
    if (repair) j["repair"] = {{"restored", r.restored}, {"removed-foreign", r.removed_foreign}, {"unknown-kept", r.unknown_kept}};
    return j;
}

}  // namespace

bool sync_environment(const Lock& lock, const std::string& prefix, const std::string& python, bool offline) {
    fetch::CommandLineSettings settings;
    settings.offline = offline;
    install::InstallOptions o;
    o.fetch = fetch::load_fetch_context(settings);
    o.prefix = prefix;
    o.command = "envlock run (install " + prefix + ")";
    install::PythonStepOptions py;
    py.python = python;
    install::use_default_installers(o, py);
    DownloadDisplay progress(lock, false);
    // Events (waiting for another envlock, a recovered install, warnings) are said; the
    // per-package step lines are not: the summary below says what changed.
    o.say = [&progress](const std::string& line) {
        progress.finish();
        std::cerr << line << "\n";
    };
    o.fetch_progress = [&progress](const install::FetchProgress& p) { progress.update(p); };
    install::InstallResult r = install::install_lock(lock, o);
    progress.finish();
    if (r.changed)
        std::cerr << "envlock: installed " << r.plan.add.size() << ", removed " << r.plan.remove.size() << ", kept " << r.plan.keep
                  << " packages in " << fs::absolute(o.prefix).lexically_normal().string() << " ("
                  << progress.downloaded() << " downloaded, " << progress.cached() << " from the cache)\n";
    return r.changed;
}

void add_install(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("install", "Materialize envlock.yaml into a prefix (--repair fixes a broken one)");
    auto f = std::make_shared<InstallFlags>();
    cmd->add_option("LOCK", f->lock, "the lock, or a directory holding envlock.yaml (default ./envlock.yaml)");
    cmd->add_option("--prefix", f->prefix, "where the environment goes (default .envlock/<target> beside the lock)");
    cmd->add_option("--target", f->target, "which of the lock's targets this machine is (default: the first)");
    cmd->add_flag("--offline", f->offline, "use the package cache only; name what is missing");
    cmd->add_option("-p,--python", f->python, "a venv lock's base interpreter, X.Y or X.Y.Z (of the lock's Python; default: the first found)");
    cmd->add_option("-j,--jobs", f->jobs, "parallel downloads and extractions (default 8)")->check(CLI::PositiveNumber);
    cmd->add_flag("--repair", f->repair, "re-check every installed file; fix only what is missing, modified or foreign");
    cmd->add_flag("--dry-run", f->dry_run, "print what would change, and change nothing");
    cmd->add_option("--link-mode", f->link_mode, "hardlink (default; copies across filesystems), copy or symlink");
    cmd->add_option("--cache-dir", f->cache_dir, "cache folder (default $XDG_CACHE_HOME/envlock; packages in pkgs/)");
    cmd->add_option("--mirror", f->mirrors, "fetch URLs under FROM from TO instead (FROM=TO); repeatable")->allow_extra_args(false);
    cmd->add_option("--mirrors-file", f->mirrors_files, "a mirrors file (`mirrors:` FROM: TO, as `envlock-mirror build` writes one); repeatable; ENVLOCK_MIRRORS may name one too")->allow_extra_args(false);
    cmd->add_flag("--compile", f->compile, "write bytecode (__pycache__/*.pyc) for the .py files of wheels and of conda noarch: python packages, as pip and conda do by default");
    cmd->add_flag("-q,--quiet", f->quiet, "print nothing but errors (no progress, no per-package lines)");
    cmd->add_flag("--json", f->json, "print the plan and what changed as JSON (no progress lines)");
    cmd->add_flag("--seed", f->seed, "a venv lock: give the venv pip (as `uv venv --seed`), from a pip wheel in the spec's find-links "
                                      "folders, the base interpreter's ensurepip or /usr/share/python-wheels; no index is read");
    cmd->callback([cmd, f, &exit_code] {
        std::string path = lock_path(f->lock);
        Lock lock = read_lock(read_text_file(path, "lock"), path);
        std::string target = f->target;
        if (target.empty()) target = lock.targets.empty() ? "default" : lock.targets.front().name;
        else if (std::none_of(lock.targets.begin(), lock.targets.end(), [&](const NamedTarget& t) { return t.name == target; })) {
            std::string known;
            for (const auto& t : lock.targets) known += (known.empty() ? "" : ", ") + t.name;
            throw InputError(path + ": --target " + target + ": the lock has no such target (it has " + known + ")");
        }
        auto settings = download_settings(f->jobs, f->cache_dir, f->mirrors, f->mirrors_files, f->offline);

        install::InstallOptions o;
        o.fetch = fetch::load_fetch_context(settings);
        o.prefix = !f->prefix.empty() ? fs::path(f->prefix) : fs::absolute(path).parent_path() / ".envlock" / target;
        o.link_mode = install::parse_link_mode(f->link_mode);
        o.repair = f->repair;
        o.dry_run = f->dry_run;
        o.lock_file = path;
        o.command = "envlock install " + path + " --prefix " + o.prefix.string() + (f->repair ? " --repair" : "");
        install::PythonStepOptions python;
        python.compile = f->compile;
        python.python = f->python;
        o.compile = f->compile;
        install::use_default_installers(o, python);
        const bool quiet = f->quiet || f->json || output_of(*cmd).quiet;   // `envlock -q install` too
        // Each package once: the plan below names it; the per-package fetch and install lines
        // (a log's record of each step) only with -v.
        const bool verbose = output_of(*cmd).verbose;
        DownloadDisplay progress(lock, quiet, verbose);
        o.say = [&progress, quiet](const std::string& line) {
            if (quiet && line.rfind("warning:", 0) != 0) return;
            progress.finish();
            std::cerr << line << "\n";
        };
        if (verbose && !quiet)
            o.step = [&progress](const std::string& line) {
                progress.finish();
                std::cerr << line << "\n";
            };
        o.fetch_progress = [&progress](const install::FetchProgress& p) { progress.update(p); };

        const auto started = std::chrono::steady_clock::now();
        install::InstallResult r = install::install_lock(lock, o);
        progress.finish();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        // Seeded after the transaction, by pip itself: envlock's record of the env does not
        // list it, so `run` and a later install leave it be (`install --repair` takes it out).
        std::string seeded;
        if (f->seed && !f->dry_run) {
            bool conda_python = std::any_of(lock.packages.begin(), lock.packages.end(),
                                            [](const LockedPackage& p) { return p.kind == Ecosystem::conda && p.name == "python"; });
            if (conda_python) throw InputError("--seed is for a venv lock; this lock's conda python gets pip from conda (add pip to the requirements)");
            seeded = install::seed_pip(o.prefix.string(), lock.spec.find_links);
        }
        if (f->json) {
            std::cout << result_json(r, o.prefix, f->dry_run, f->repair).dump(2) << "\n";
            return;
        }
        if (quiet) return;
        if (!seeded.empty()) std::cerr << "seeded " << seeded << "\n";
        for (const auto& line : r.recovered)
            if (f->dry_run) std::cout << line << "\n";
        if (f->dry_run) {
            std::cout << "plan for " << fs::absolute(o.prefix).lexically_normal().string() << ":\n";
            print_plan(r.plan, true);
            if (f->repair) {
                std::cout << "would restore " << r.damage.size() << " files, remove " << r.removed_foreign.size() << " foreign files\n";
                for (const auto& d : r.damage) std::cout << "  restore " << d << "\n";
                for (const auto& w : r.foreign) std::cout << "  remove  " << w << "\n";
            }
            return;
        }
        if (!r.changed) {
            std::cout << fs::absolute(o.prefix).lexically_normal().string() << " is up to date ("
                      << r.plan.keep << " packages)";
            if (f->repair) std::cout << "; every file checked, nothing to repair";
            std::cout << "\n";
        } else {
            std::cout << fs::absolute(o.prefix).lexically_normal().string() << ":\n";
            print_plan(r.plan, false, summary_tail(seconds, progress.downloaded(), progress.cached()));
            if (f->repair)
                std::cout << "repaired: " << r.restored.size() << " files restored, " << r.removed_foreign.size()
                          << " foreign files removed\n";
        }
        if (f->repair && r.unknown_kept)
            std::cout << r.unknown_kept << " files that no package installed were left alone\n";
        (void)exit_code;
    });
}

}  // namespace envlock::cli
