#include "install/transaction.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ctime>
#include <future>
#include <map>
#include <optional>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "fetch/files.hpp"
#include "fetch/http_cache.hpp"
#include "install/conda_link.hpp"
#include "install/file_lock.hpp"
#include "install/link.hpp"
#include "install/parallel.hpp"
#include "install/prefix_record.hpp"
#include "install/python_steps.hpp"
#include "install/repair.hpp"
#include "install/signals.hpp"
#include "install/stage.hpp"
#include "resolver/lock/lock_entries.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::install {
namespace {

namespace fs = std::filesystem;

void check_signal() {
    if (interrupted()) throw Interrupted{};
}

const char* kind_name(Ecosystem e) {
    return e == Ecosystem::conda ? "conda" : e == Ecosystem::pypi ? "pypi" : "source";
}

std::string major_minor(const std::string& version) {
    auto first = version.find('.');
    if (first == std::string::npos) return version;
    return version.substr(0, version.find('.', first + 1));
}

std::string dep_name(const std::string& spec) {
    std::string n = spec.substr(0, spec.find_first_of(" =<>!~[;"));
    if (auto colon = n.rfind("::"); colon != std::string::npos) n = n.substr(colon + 2);   // channel::name
    return n;
}

// Packages in dependency order (python before what needs it; a source before the sources whose
// build imports it), ties in lock order. `pypi_names`: names compare as PEP 503 normalizes them.
std::vector<const LockedPackage*> dependency_order(const std::vector<const LockedPackage*>& pkgs, bool pypi_names = false) {
    auto key = [&](const std::string& name) { return pypi_names ? pep508::normalize_name(name) : name; };
    std::unordered_map<std::string, size_t> by_name;
    for (size_t i = 0; i < pkgs.size(); ++i) by_name[key(pkgs[i]->name)] = i;
    std::vector<std::vector<size_t>> users(pkgs.size());
    std::vector<int> waiting(pkgs.size(), 0);
    for (size_t i = 0; i < pkgs.size(); ++i) {
        std::set<size_t> deps;
        for (const auto& d : pkgs[i]->depends) {
            auto it = by_name.find(key(dep_name(d)));
            if (it != by_name.end() && it->second != i) deps.insert(it->second);
        }
        for (size_t d : deps) users[d].push_back(i);
        waiting[i] = static_cast<int>(deps.size());
    }
    std::set<size_t> ready;
    for (size_t i = 0; i < pkgs.size(); ++i)
        if (!waiting[i]) ready.insert(i);
    std::vector<const LockedPackage*> out;
    std::vector<bool> done(pkgs.size(), false);
    while (out.size() < pkgs.size()) {
        if (ready.empty())   // a dependency cycle: take the first left, in lock order
            for (size_t i = 0; i < pkgs.size(); ++i)
                if (!done[i]) {
                    ready.insert(i);
                    break;
                }
        size_t i = *ready.begin();
        ready.erase(ready.begin());
        if (done[i]) continue;
        done[i] = true;
        out.push_back(pkgs[i]);
        for (size_t u : users[i])
            if (--waiting[u] == 0 && !done[u]) ready.insert(u);
    }
    return out;
}

std::string now_text() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
    return buf;
}

struct Plan {
    InstallPlan shown;
    std::vector<const LockedPackage*> add;           // lock order
    std::vector<const InstalledPackage*> keep, remove;
};

Plan make_plan(const Lock& lock, const std::optional<PrefixState>& state, const std::string& prefix,
               const std::string& python_mm) {
    Plan plan;
    std::unordered_map<std::string, const InstalledPackage*> installed;
    bool moved = false, python_changed = false;
    if (state) {
        for (const auto& p : state->packages) installed[p.id] = &p;
        moved = state->prefix != prefix;
        python_changed = !state->python.major_minor.empty() && !python_mm.empty() && state->python.major_minor != python_mm;
        if (moved) plan.shown.reasons.push_back("the prefix was installed for " + state->prefix + ": every package is installed again");
        if (python_changed)
            plan.shown.reasons.push_back("python " + state->python.major_minor + " -> " + python_mm +
                                         ": noarch: python packages and wheels are installed again");
    }
    std::set<const InstalledPackage*> kept;
    for (const auto& p : lock.packages) {
        auto it = installed.find(package_id(p));
        bool python_bound = p.kind == Ecosystem::pypi || (it != installed.end() && it->second->noarch == "python");
        if (it != installed.end() && !moved && !(python_changed && python_bound)) {
            kept.insert(it->second);
            continue;
        }
        plan.add.push_back(&p);
        plan.shown.add.push_back({package_id(p), kind_name(p.kind), p.name, p.version, p.size});
    }
    if (state)
        for (const auto& p : state->packages) {
            // The venv stays while python's minor version does (its files are the interpreter's links).
            if (p.kind == "venv" && !moved && !python_changed) kept.insert(&p);
            if (kept.count(&p)) plan.keep.push_back(&p);
            else {
                plan.remove.push_back(&p);
                plan.shown.remove.push_back({p.id, p.kind, p.name, p.version, 0});
            }
        }
    plan.shown.keep = plan.keep.size();
    return plan;
}

// The top-level names a wheel puts into the environment, as "<scheme>/<first component>"
// ("lib/" for the root, purelib and platlib alike), read from its RECORD in the cache's tree.
// None when that is not known, or when it writes scripts (entry points, .data/scripts): such
// wheels are installed one by one, so which one wins a clobber is the same on every run.
std::optional<std::set<std::string>> wheel_roots(const CacheEntry& e) {
    std::error_code ec;
    if (!fs::is_directory(e.tree(), ec)) return std::nullopt;
    std::optional<std::set<std::string>> out;
    for (const auto& d : fs::directory_iterator(e.tree(), ec)) {
        const std::string name = d.path().filename().string();
        if (name.size() < 10 || name.compare(name.size() - 10, 10, ".dist-info") != 0) continue;
        if (out || fs::exists(d.path() / "entry_points.txt", ec) || !fs::exists(d.path() / "RECORD", ec)) return std::nullopt;
        out.emplace();
        std::string text;
        try {
            text = read_whole_file(d.path() / "RECORD");
        } catch (const Error&) {
            return std::nullopt;
        }
        size_t start = 0;
        while (start < text.size()) {
            size_t end = text.find('\n', start);
            if (end == std::string::npos) end = text.size();
            std::string_view line(text.data() + start, end - start);
            start = end + 1;
            if (line.empty() || line == "\r") continue;
            if (line.front() == '"') return std::nullopt;   // a quoted path: not worth parsing here
            std::string_view path = line.substr(0, line.find(','));
            std::string scheme = "lib";
            auto first = path.find('/');
            std::string_view head = path.substr(0, first);
            if (head.size() > 5 && head.substr(head.size() - 5) == ".data" && first != std::string_view::npos) {
                std::string_view rest = path.substr(first + 1);
                auto second = rest.find('/');
                scheme = std::string(rest.substr(0, second));
                if (scheme == "scripts" || second == std::string_view::npos) return std::nullopt;
                if (scheme == "purelib" || scheme == "platlib") scheme = "lib";
                path = rest.substr(second + 1);
                head = path.substr(0, path.find('/'));
            }
            out->insert(scheme + "/" + std::string(head));
        }
    }
    return out;
}

// A wheel (or a source built into one) never replaces a file of a conda package or of the
// venv: `<name>.data/data/bin/python` would otherwise swap the environment's interpreter, and
// pip would not know the file is not its own. Between two wheels the later one wins, as pip's
// installs in a row do; between two conda packages likewise (conda's clobber warning).
bool overwrite_refused(const InstalledPackage& writer, const InstalledPackage& owner) {
    const bool wheel = writer.kind == "pypi" || writer.kind == "source";
    return wheel && (owner.kind == "conda" || owner.kind == "venv");
}

std::string describe_installed(const InstalledPackage& p, const std::unordered_map<std::string, const LockedPackage*>& locked,
                               const std::string& lock_file) {
    if (p.kind == "venv") return "the venv";
    const std::string kind = p.kind == "conda" ? "the conda package " : p.kind == "pypi" ? "the wheel " : "the source ";
    auto it = locked.find(p.id);
    return kind + (it == locked.end() ? p.name + " " + p.version : lock_entry_where(lock_file, *it->second));
}

std::string clobber_refusal(const InstalledPackage& writer, const InstalledPackage& owner, const std::string& path,
                            const std::unordered_map<std::string, const LockedPackage*>& locked, const std::string& lock_file) {
    return "refused: " + describe_installed(writer, locked, lock_file) + " would overwrite " + path + ", which " +
           describe_installed(owner, locked, lock_file) +
           " installed; a wheel never replaces another package's file (a hostile or broken wheel?)";
}

std::unordered_map<std::string, const LockedPackage*> locked_ids(const Lock& lock) {
    std::unordered_map<std::string, const LockedPackage*> out;
    for (const auto& p : lock.packages) out[package_id(p)] = &p;
    return out;
}

// The no-op check compares owners, not only the package list. Packages are recorded in the
// order they were installed, so the last one listing a path wrote it. A file a kept package
// lists that a package going away wrote last (it overwrote it) is damage: the kept package's
// bytes come back, as --repair would restore them. A kept wheel that wrote last over a conda
// package's or the venv's file (a prefix made before such installs were refused) is refused.
// Returns the damage, indexed as plan.keep.
std::vector<Damage> overwritten_files(const PrefixState& state, const Plan& plan,
                                      const std::unordered_map<std::string, const LockedPackage*>& locked,
                                      const std::string& lock_file) {
    std::vector<Damage> out;
    if (plan.keep.empty() || state.packages.size() < 2) return out;
    if (plan.remove.empty()) {
        // Nothing goes (a warm install's no-op check): only a wheel's write over a conda
        // package's or the venv's file can be wrong. Those packages' paths are looked up by the
        // wheels' paths, and only where both kinds are there.
        auto guarded_kind = [](const InstalledPackage& p) { return p.kind == "conda" || p.kind == "venv"; };
        if (std::all_of(state.packages.begin(), state.packages.end(), guarded_kind) ||
            std::none_of(state.packages.begin(), state.packages.end(), guarded_kind))
            return out;
        std::unordered_map<std::string_view, std::size_t> guarded;
        for (std::size_t i = 0; i < state.packages.size(); ++i)
            if (guarded_kind(state.packages[i]))
                for (const auto& f : state.packages[i].files) guarded[f.path] = i;
        for (std::size_t i = 0; i < state.packages.size(); ++i) {
            const InstalledPackage& writer = state.packages[i];
            if (guarded_kind(writer)) continue;
            for (const auto& f : writer.files)
                if (auto it = guarded.find(f.path); it != guarded.end() && it->second < i && overwrite_refused(writer, state.packages[it->second]))
                    throw InputError(clobber_refusal(writer, state.packages[it->second], f.path, locked, lock_file) +
                                     "; this prefix holds such a file from an earlier envlock: remove the wheel from the lock, "
                                     "or install into a new prefix");
        }
        return out;
    }
    std::size_t files = 0;
    for (const auto& p : state.packages) files += p.files.size();
    std::unordered_map<std::string_view, const InstalledPackage*> last;
    last.reserve(files);
    for (const auto& p : state.packages)
        for (const auto& f : p.files) last[f.path] = &p;
    std::unordered_set<const InstalledPackage*> kept(plan.keep.begin(), plan.keep.end());
    for (std::size_t k = 0; k < plan.keep.size(); ++k) {
        const InstalledPackage& mine = *plan.keep[k];
        for (const auto& f : mine.files) {
            const InstalledPackage* writer = last.at(f.path);
            if (writer == &mine) continue;
            if (kept.count(writer)) {
                if (overwrite_refused(*writer, mine))
                    throw InputError(clobber_refusal(*writer, mine, f.path, locked, lock_file) +
                                     "; this prefix holds such a file from an earlier envlock: remove the wheel from the lock, "
                                     "or install into a new prefix");
                continue;
            }
            // The same bytes (a shared license file): nothing to put back.
            auto same = std::find_if(writer->files.begin(), writer->files.end(), [&](const InstalledFile& g) { return g.path == f.path; });
            if (same != writer->files.end() && same->sha256 == f.sha256 && same->link_target == f.link_target && same->size == f.size)
                continue;
            out.push_back({k, f.path, "left by " + writer->name + " " + writer->version + ", which goes"});
        }
    }
    return out;
}

const LockedPackage* conda_python(const Lock& lock) {
    for (const auto& p : lock.packages)
        if (p.kind == Ecosystem::conda && p.name == "python") return &p;
    return nullptr;
}

}  // namespace

fs::path prefix_lock_path(const fs::path& prefix) {
    StagePaths paths = stage_paths(prefix);
    make_helper_dir(paths);
    return paths.lock;
}

std::string recover_prefix(const fs::path& prefix) { return recover(stage_paths(prefix)); }

std::string settle_prefix(const fs::path& prefix, const std::function<void(const std::string&)>& waiting) {
    const StagePaths paths = stage_paths(prefix);
    std::error_code ec;
    if (!fs::is_directory(paths.prefix.parent_path(), ec)) return "";
    try {
        make_helper_dir(paths);
        FileLock lock(paths.lock, waiting);
        return recover(paths);
    } catch (const EnvironmentError&) {
        if (fs::exists(paths.journal, ec)) throw;
        return "";
    }
}

InstallResult install_lock(const Lock& lock, const InstallOptions& o) {
    const StagePaths paths = stage_paths(o.prefix);
    const std::string prefix = paths.prefix.string();
    auto say = [&](const std::string& s) {
        if (o.say) o.say(s);
    };
    // Every error of one package's installation names the package and its lock line.
    auto naming = [&](const LockedPackage& p, const auto& install) {
        const std::string where = lock_entry_where(o.lock_file, p);
        auto named = [&](const Error& e) {
            std::string what = e.what();
            return what.rfind(where, 0) == 0 ? what : where + ": " + what;
        };
        try {
            return install();
        } catch (const InputError& e) {
            throw InputError(named(e));
        } catch (const UnmetError& e) {
            throw UnmetError(named(e));
        } catch (const EnvironmentError& e) {
            throw EnvironmentError(named(e));
        }
    };
    // The lock as `check` proves its entries, before anything is fetched or touched: a version
    // edited by hand must not be installed as the file's version while printing its own.
    {
        std::string problems;
        for (const auto& p : lock.packages)
            for (const auto& why : entry_problems(p)) problems += "\n  " + lock_entry_where(o.lock_file, p) + ": " + why;
        if (!problems.empty())
            throw InputError((o.lock_file.empty() ? std::string("the lock") : o.lock_file) + " has entries install cannot trust (`envlock check` says the same; resolve again):" + problems);
    }
    for (const auto& p : lock.packages) {
        if (p.kind == Ecosystem::pypi && !o.install_wheel)
            throw InputError("the lock has PyPI packages (" + p.name + " " + p.version +
                             "), and installing wheels is not built into this envlock yet");
        if (p.kind == Ecosystem::source && !o.install_source)
            throw InputError("the lock has a git source (" + p.name + "), and installing sources is not built into this envlock yet");
    }
    const LockedPackage* python_pkg = conda_python(lock);
    const std::string locked_mm = python_pkg ? major_minor(python_pkg->version) : "";
    InstallResult result;

    if (o.dry_run) {
        std::optional<PrefixState> state;
        try {
            state = read_state(paths.prefix);
        } catch (const Error&) {
        }
        std::error_code ec;
        if (fs::exists(paths.journal, ec))
            result.recovered.push_back("an interrupted install into " + prefix + " would be rolled back or completed first");
        Plan plan = make_plan(lock, state, prefix, locked_mm.empty() && state ? state->python.major_minor : locked_mm);
        result.plan = plan.shown;
        if (o.repair && state) {   // what --repair would restore and take out, checked as it would
            std::vector<InstalledPackage> kept;
            for (const auto* p : plan.keep) kept.push_back(*p);
            const int threads = std::max(1, std::min<int>(o.fetch.transport.jobs, static_cast<int>(std::thread::hardware_concurrency())));
            for (const auto& d : find_damage(paths.prefix, kept, threads)) {
                result.restored.push_back(d.path);
                result.damage.push_back(d.path + " (" + d.what + ")");
            }
            Foreign foreign = find_foreign(paths.prefix, kept, state->python.site_packages);
            for (const auto* p : plan.remove)
                for (const auto& f : p->files) std::erase(foreign.remove, f.path);
            result.removed_foreign = foreign.remove;
            result.foreign = foreign.why;
            result.unknown_kept = foreign.unknown_kept;
        }
        return result;
    }

    std::error_code ec;
    fs::create_directories(paths.prefix.parent_path(), ec);
    if (ec) throw EnvironmentError("cannot create " + paths.prefix.parent_path().string() + ": " + ec.message());
    make_helper_dir(paths);
    FileLock prefix_lock(paths.lock, [&](const std::string& who) {
        say("waiting for another envlock to finish with " + prefix + (who.empty() ? "" : " (" + who + ")"));
    });
    prefix_lock.note("pid " + std::to_string(::getpid()) + ": " + (o.command.empty() ? "envlock install" : o.command));
    if (std::string r = recover(paths); !r.empty()) {
        result.recovered.push_back(r);
        say(r);
    }
    std::optional<PrefixState> state = read_state(paths.prefix);
    if (!state && fs::exists(paths.prefix, ec) && !fs::is_empty(paths.prefix, ec))
        throw InputError(prefix + " exists and was not made by envlock (it has no " + kStateFile +
                         "); choose another --prefix, or remove it first");

    const fs::path cache_dir = o.fetch.cache_dir.empty() ? fetch::default_cache_dir() : o.fetch.cache_dir;
    std::vector<CacheEntry> entries;
    std::unordered_map<const LockedPackage*, size_t> entry_of;
    for (const auto& p : lock.packages)
        if (p.kind != Ecosystem::source) {
            entry_of[&p] = entries.size();
            entries.push_back(cache_entry(cache_dir, p));
        }

    Plan plan = make_plan(lock, state, prefix, locked_mm.empty() && state ? state->python.major_minor : locked_mm);
    result.plan = plan.shown;
    for (const auto& r : plan.shown.reasons) say(r);

    // Hashing (--repair) is CPU-bound: one thread per core. Linking and reading manifests are
    // syscalls that wait on the filesystem's locks and inode reads: --jobs threads, as many as
    // downloads (rattler and uv link on pools wider than the core count, too).
    const int threads = std::max(1, std::min<int>(o.fetch.transport.jobs, static_cast<int>(std::thread::hardware_concurrency())));
    const int link_threads = std::max(1, o.fetch.transport.jobs);
    std::vector<InstalledPackage> kept;
    for (const auto* p : plan.keep) kept.push_back(*p);
    std::vector<Damage> damage;
    Foreign foreign;
    std::string site_packages = state ? state->python.site_packages : "";
    if (o.repair && state) {
        damage = find_damage(paths.prefix, kept, threads);
        foreign = find_foreign(paths.prefix, kept, site_packages);
        // Removed packages' files are taken out anyway; foreign means "of no package at all".
        for (const auto* p : plan.remove)
            for (const auto& f : p->files) std::erase(foreign.remove, f.path);
    }
    if (state) {
        std::unordered_set<std::string> known;
        for (const auto& d : damage) known.insert(d.path);
        for (auto& d : overwritten_files(*state, plan, locked_ids(lock), o.lock_file))
            if (!known.count(d.path)) damage.push_back(std::move(d));
    }
    if (plan.add.empty() && plan.remove.empty() && damage.empty() && foreign.remove.empty()) {
        if (o.repair) result.unknown_kept = foreign.unknown_kept;
        return result;
    }

    SignalGuard signals;
    bool journal_written = false;
    try {
        // 1. Everything the new tree needs, verified, before the prefix is touched.
        std::set<size_t> needed;
        for (const auto* p : plan.add)
            if (entry_of.count(p)) needed.insert(entry_of[p]);
        std::set<size_t> damaged_packages;
        for (const auto& d : damage) damaged_packages.insert(d.package);
        std::unordered_map<std::string, const LockedPackage*> locked_by_id;
        for (const auto& p : lock.packages) locked_by_id[package_id(p)] = &p;
        for (size_t k : damaged_packages)
            if (auto it = locked_by_id.find(kept[k].id); it != locked_by_id.end() && entry_of.count(it->second))
                needed.insert(entry_of[it->second]);
        if (python_pkg && (!state || state->python.site_packages.empty() || std::find(plan.add.begin(), plan.add.end(), python_pkg) != plan.add.end()))
            needed.insert(entry_of[python_pkg]);
        std::vector<CacheEntry> wanted;
        std::vector<size_t> wanted_of;
        for (size_t i : needed) {
            wanted.push_back(entries[i]);
            wanted_of.push_back(i);
        }
        std::function<void(const FetchProgress&)> progress;
        if (o.fetch_progress)
            progress = [&](const FetchProgress& p) {
                FetchProgress q = p;
                q.index = wanted_of[p.index];
                o.fetch_progress(q);
            };
        try {
            populate_cache(wanted, o.fetch, progress);
        } catch (const Error& e) {
            // Download and extraction errors name a URL or a file: the package and its lock line go first.
            std::string what = e.what(), named;
            for (size_t i : needed)
                if (what.find(entries[i].filename) != std::string::npos)
                    for (const auto& [p, at] : entry_of)
                        if (at == i) named += (named.empty() ? "" : "; ") + lock_entry_where(o.lock_file, *p);
            if (named.empty()) throw;
            if (e.code == ExitCode::bad_input) throw InputError(named + ": " + what);
            if (e.code == ExitCode::unmet) throw UnmetError(named + ": " + what);
            throw EnvironmentError(named + ": " + what);
        }
        check_signal();
        // --repair: a file edited in place through a hardlink edited the cache too.
        if (!damaged_packages.empty()) {
            std::vector<CacheEntry> refill;
            for (size_t k : damaged_packages)
                if (auto it = locked_by_id.find(kept[k].id); it != locked_by_id.end() && entry_of.count(it->second)) {
                    const CacheEntry& e = entries[entry_of[it->second]];
                    if (!check_tree(e, /*full=*/true)) {
                        say("the cached " + e.filename + " was modified (through a hardlink?): extracting it again");
                        refill.push_back(e);
                    }
                }
            if (!refill.empty()) populate_cache(refill, o.fetch);
        }

        // 2. Where python puts things, and whether every package can be installed here.
        PythonInfo python = state ? state->python : PythonInfo{};
        if (python_pkg && needed.count(entry_of[python_pkg])) python = conda_python_info(*python_pkg, entries[entry_of[python_pkg]]);
        // Each conda package's manifest, read once: checked here, linked from in step 3.
        std::unordered_map<const LockedPackage*, CondaPackageInfo> conda_info;
        {
            std::vector<const LockedPackage*> todo;
            for (const auto* p : plan.add)
                if (p->kind == Ecosystem::conda) todo.push_back(p);
            std::vector<CondaPackageInfo> read(todo.size());
            parallel_for(todo.size(), link_threads, [&](size_t i) { read[i] = read_conda_package(entries[entry_of.at(todo[i])].tree()); });
            for (size_t i = 0; i < todo.size(); ++i) conda_info[todo[i]] = std::move(read[i]);
        }
        for (const auto* p : plan.add) {
            if (p->kind != Ecosystem::conda) continue;
            const CondaPackageInfo& info = conda_info.at(p);
            std::size_t limit = max_prefix_length(info);
            if (prefix.size() > limit)
                throw InputError(p->name + " " + p->version + " has binary files with a " + std::to_string(limit) +
                                 "-byte prefix placeholder; the prefix " + prefix + " is " + std::to_string(prefix.size()) +
                                 " bytes. Choose a shorter --prefix");
        }
        check_signal();

        // 3. The stage: the live prefix minus what goes, then what comes.
        const std::string generation = new_generation();
        write_journal(paths, generation, o.command);
        journal_written = true;
        std::unordered_set<std::string> omit = {kStateFile, kLockCopy, "conda-meta/history"};
        for (const auto* p : plan.remove)
            for (const auto& f : p->files) omit.insert(f.path);
        for (const auto& d : damage) omit.insert(d.path);
        for (const auto& f : foreign.remove) omit.insert(f);
        // Files a kept package owns stay, even when a removed one listed them too (a clobber).
        for (const auto* p : plan.keep)
            for (const auto& f : p->files)
                if (!std::any_of(damage.begin(), damage.end(), [&](const Damage& d) { return d.path == f.path; }))
                    omit.erase(f.path);
        if (fs::exists(paths.prefix, ec)) copy_tree(paths.prefix, paths.stage, omit, say);
        else fs::create_directories(paths.stage);
        check_signal();

        PrefixState next;
        next.generation = generation;
        next.prefix = prefix;
        next.lock_hash = lock.content_hash;
        next.packages = kept;
        // The prefix's copy of the lock does not depend on what is linked: its text is made
        // beside the linking instead of after it.
        std::future<std::string> lock_text = std::async(std::launch::async, [&lock] { return write_lock(lock); });
        std::mutex say_mutex;   // packages are linked on several threads
        auto warn = [&](const std::string& s) {
            std::lock_guard g(say_mutex);
            say("warning: " + s);
        };
        auto step_locked = [&](const std::string& s) {
            std::lock_guard g(say_mutex);
            if (o.step) o.step(s);
        };
        auto context = [&](const LockedPackage& p, const fs::path& stage) {
            const CacheEntry* cached = entry_of.count(&p) ? &entries[entry_of[&p]] : nullptr;
            return PackageContext{lock, p, stage, paths.prefix, cached, o.link_mode, python, warn, o.compile,
                                  lock_entry_where(o.lock_file, p), step_locked};
        };
        // Sources (git sources and sdists) are built after every binary package is in place,
        // with the env's python and the torch, compilers and CUDA the lock put there.
        std::vector<const LockedPackage*> conda, pypi, sources;
        for (const auto* p : plan.add)
            (p->kind == Ecosystem::conda ? conda : p->kind == Ecosystem::pypi && !is_sdist(*p) ? pypi : sources).push_back(p);
        // path -> index in next.packages, to name clobbers. The keys view the paths inside the
        // packages' file lists, which stay put while next.packages grows (a moved vector keeps
        // its buffer) and are not changed afterwards.
        std::unordered_map<std::string_view, size_t> owner;
        for (size_t i = 0; i < next.packages.size(); ++i)
            for (const auto& f : next.packages[i].files) owner[f.path] = i;
        auto record = [&](InstalledPackage installed) {
            const size_t index = next.packages.size();
            for (const auto& f : installed.files) {
                auto [it, fresh] = owner.emplace(f.path, index);
                const InstalledPackage& other = next.packages[it->second];
                if (!fresh && other.name != installed.name) {
                    if (overwrite_refused(installed, other))
                        throw InputError(clobber_refusal(installed, other, f.path, locked_by_id, o.lock_file));
                    // The same bytes (the empty nvidia/__init__.py every nvidia-* wheel ships) change nothing.
                    auto same = std::find_if(other.files.begin(), other.files.end(), [&](const auto& g) { return g.path == f.path; });
                    if (same == other.files.end() || f.sha256.empty() || same->sha256 != f.sha256)
                        warn(installed.name + " overwrites " + f.path + ", which " + other.name + " installed too");
                }
                it->second = index;
            }
            if (o.step) o.step("installed " + installed.name + " " + installed.version);
            next.packages.push_back(std::move(installed));
        };
        // Conda packages that share no path with another package are linked in parallel
        // (--jobs); those that do, one by one in dependency order afterwards, so the package
        // that wins a clobber is the same on every run. Records follow dependency order.
        {
            const std::vector<const LockedPackage*> ordered = dependency_order(conda);
            std::unordered_map<std::string, int> users;
            for (const auto& p : next.packages)
                for (const auto& f : p.files) ++users[f.path];
            std::vector<std::vector<std::string>> planned(ordered.size());
            for (size_t i = 0; i < ordered.size(); ++i) {
                planned[i] = conda_package_paths(conda_info.at(ordered[i]), python);
                for (const auto& f : planned[i]) ++users[f];
            }
            std::vector<size_t> alone, shared, compiled;
            for (size_t i = 0; i < ordered.size(); ++i) {
                bool is_alone = std::all_of(planned[i].begin(), planned[i].end(), [&](const std::string& f) { return users[f] == 1; });
                // --compile runs the env's python on noarch: python packages: they come after
                // the others, python among them (in dependency order when they share paths).
                if (is_alone && o.compile && conda_info.at(ordered[i]).noarch == "python") compiled.push_back(i);
                else (is_alone ? alone : shared).push_back(i);
            }
            std::vector<InstalledPackage> linked(ordered.size());
            auto link_one = [&](size_t i) {
                check_signal();
                linked[i] = naming(*ordered[i], [&] { return install_conda_package(context(*ordered[i], paths.stage), conda_info.at(ordered[i])); });
            };
            parallel_for(alone.size(), link_threads, [&](size_t k) { link_one(alone[k]); });
            for (size_t i : shared) link_one(i);
            parallel_for(compiled.size(), link_threads, [&](size_t k) { link_one(compiled[k]); });
            check_signal();
            for (auto& p : linked) record(std::move(p));
        }
        bool has_venv = std::any_of(next.packages.begin(), next.packages.end(), [](const InstalledPackage& p) { return p.kind == "venv"; });
        if (!python_pkg && !pypi.empty() && !has_venv) {
            if (!o.make_venv) throw InputError("the lock has PyPI packages but no conda python, and creating a virtual environment is not built into this envlock yet");
            VenvResult v = o.make_venv(lock, paths.stage, paths.prefix);
            python = v.python;
            record(std::move(v.package));
        }
        // Wheels likewise: those whose top-level names no other wheel of this install shares
        // (and that write no scripts) in parallel, the rest one by one in lock order after.
        {
            std::vector<std::optional<std::set<std::string>>> roots(pypi.size());
            std::unordered_map<std::string, int> users;
            parallel_for(pypi.size(), link_threads, [&](size_t i) {
                if (auto e = entry_of.find(pypi[i]); e != entry_of.end()) roots[i] = wheel_roots(entries[e->second]);
            });
            for (size_t i = 0; i < pypi.size(); ++i) {
                if (roots[i])
                    for (const auto& r : *roots[i]) ++users[r];
            }
            std::vector<size_t> alone, shared;
            for (size_t i = 0; i < pypi.size(); ++i)
                (roots[i] && std::all_of(roots[i]->begin(), roots[i]->end(), [&](const std::string& r) { return users[r] == 1; }) ? alone : shared)
                    .push_back(i);
            std::vector<InstalledPackage> installed(pypi.size());
            auto install_one = [&](size_t i) {
                check_signal();
                installed[i] = naming(*pypi[i], [&] { return o.install_wheel(context(*pypi[i], paths.stage)); });
            };
            parallel_for(alone.size(), link_threads, [&](size_t k) { install_one(alone[k]); });
            for (size_t i : shared) install_one(i);
            check_signal();
            size_t files = owner.size();
            for (const auto& p : installed) files += p.files.size();
            owner.reserve(files);
            for (auto& p : installed) record(std::move(p));
        }
        for (const auto* p : dependency_order(sources, /*pypi_names=*/true)) {
            record(naming(*p, [&] { return p->kind == Ecosystem::source ? o.install_source(context(*p, paths.stage))
                                                                         : o.install_wheel(context(*p, paths.stage)); }));
            check_signal();
        }
        next.python = python;

        // --repair: each damaged package is installed again aside, and only its bad files move in.
        for (size_t k : damaged_packages) {
            auto it = locked_by_id.find(kept[k].id);
            if (it == locked_by_id.end()) continue;
            const LockedPackage& p = *it->second;
            remove_tree_quietly(paths.scratch);
            fs::create_directories(paths.scratch);
            PackageContext c = context(p, paths.scratch);
            if (p.kind == Ecosystem::conda) install_conda_package(c);
            else if (p.kind == Ecosystem::pypi) o.install_wheel(c);
            else o.install_source(c);
            for (const auto& d : damage) {
                if (d.package != k) continue;
                fs::path from = paths.scratch / d.path, to = paths.stage / d.path;
                fs::create_directories(to.parent_path(), ec);
                fs::remove(to, ec);
                if (::rename(from.c_str(), to.c_str()) != 0)
                    throw EnvironmentError("cannot restore " + d.path + ": reinstalling " + p.name + " did not produce it");
                result.restored.push_back(d.path);
                say("restored " + d.path + " (" + d.what + ")");
            }
            remove_tree_quietly(paths.scratch);
        }
        result.removed_foreign = foreign.remove;
        result.unknown_kept = foreign.unknown_kept;
        for (const auto& w : foreign.why) say("removing " + w);

        // 4. The records: history (conda prefixes), the lock it came from, the state (last:
        // a stage is complete exactly when its state is there).
        bool conda_env = std::any_of(next.packages.begin(), next.packages.end(), [](const InstalledPackage& p) { return p.kind == "conda"; });
        if (conda_env) {
            std::string history;
            if (fs::exists(paths.prefix / "conda-meta/history", ec)) history = read_whole_file(paths.prefix / "conda-meta/history");
            std::vector<std::string> removed, added, specs;
            for (const auto* p : plan.remove)
                if (p->kind == "conda") removed.push_back(p->channel.empty() ? p->name + "-" + p->version + "-" + p->build : p->channel + "::" + p->name + "-" + p->version + "-" + p->build);
            for (const auto* p : conda) added.push_back(history_entry(p->channel, p->subdir, p->name, p->version, p->build));
            for (const auto& r : lock.spec.requirements)
                if (r.ecosystem != "pypi") specs.push_back(r.text);
            if (!added.empty() || !removed.empty() || o.repair)
                history += history_block(now_text(), o.command.empty() ? "envlock install" : o.command, removed, added, specs);
            write_new_file(paths.stage / "conda-meta/history", history);
        }
        for (auto& p : next.packages)
            if (auto it = locked_by_id.find(p.id); it != locked_by_id.end() && it->second->kind == Ecosystem::conda) {
                p.build = it->second->build;
                p.channel = channel_label(it->second->channel, it->second->subdir);
            }
        write_new_file(paths.stage / kLockCopy, lock_text.get());
        write_new_file(paths.stage / kStateFile, state_json(next));
        check_signal();

        // 5. One rename, then the old tree goes.
        swap_in(paths);
        result.changed = true;
        remove_tree_quietly(paths.stage);
        fs::remove(paths.journal, ec);
    } catch (...) {
        // Whatever failed, the prefix is as it was: the stage and journal go.
        if (journal_written) recover(paths);
        if (int sig = interrupting_signal()) {
            // Then die of the signal, as the user asked.
            std::signal(sig, SIG_DFL);
            std::raise(sig);
        }
        throw;
    }
    return result;
}

}  // namespace envlock::install
