#include "publish/lock_mirror.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fetch/files.hpp"
#include "fetch/git_source.hpp"
#include "fetch/http_cache.hpp"
#include "fetch/process.hpp"
#include "fetch/pypi_readers.hpp"
#include "fetch/url.hpp"
#include "install/extract.hpp"
#include "install/file_lock.hpp"
#include "install/link.hpp"
#include "install/package_cache.hpp"
#include "install/wheel_archive.hpp"
#include "publish/index_pages.hpp"
#include "resolver/lock/lock_entries.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::publish {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStateFile = "envlock-mirror.json";

// An artifact a lock needs, with the first lock line that names it (for messages).
struct Wanted {
    MirroredFile file;
    const LockedPackage* package = nullptr;
    std::string where;   // "envlock.yaml:57: torch 1.9.1+cu111"
};

struct WantedGit {
    std::string url, path, commit, rev, where;
};

// What an earlier run left in the folder (DIR/envlock-mirror.json).
struct State {
    std::vector<MirroredFile> files;
    std::vector<WantedGit> git;                      // url, path, commit
    std::vector<std::pair<std::string, std::string>> builds;   // key, source
    std::vector<std::string> pages;
};

std::string temp_suffix() {
    static std::atomic<unsigned> counter{0};
    return ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

bool ends_with(const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool is_wheel(const std::string& path) { return ends_with(path, ".whl"); }

// The locks' artifacts, each once: two locks naming one URL path with different hashes cannot
// both be served from one folder.
std::vector<Wanted> wanted_files(const std::vector<LockFile>& locks) {
    std::vector<Wanted> out;
    std::map<std::string, size_t> by_path;
    for (const auto& l : locks) {
        std::set<std::string> find_links(l.lock.spec.find_links.begin(), l.lock.spec.find_links.end());
        for (const auto& p : l.lock.packages) {
            if (p.kind == Ecosystem::source) continue;
            std::string where = lock_entry_where(l.path, p);
            if (p.sha256.empty() && p.md5.empty())
                throw InputError(where + ": the lock has no sha256 (nor md5) for " + fetch::redact_url(p.url) +
                                 "; envlock mirrors nothing it cannot verify");
            Wanted w;
            w.package = &p;
            w.where = where;
            MirroredFile& f = w.file;
            f.kind = p.kind;
            f.url = p.url;
            f.path = mirror_path(p.url);
            if (f.path.back() == '/') throw InputError(where + ": the lock's URL " + fetch::redact_url(p.url) + " does not end in a file name");
            f.name = p.name;
            f.version = p.version;
            f.sha256 = p.sha256;
            f.md5 = p.md5;
            f.size = p.size;
            f.channel = p.channel;
            f.subdir = p.subdir;
            f.find_links = find_links.count(p.channel) > 0;
            auto [it, added] = by_path.emplace(f.path, out.size());
            if (!added) {
                const Wanted& first = out[it->second];
                if ((!f.sha256.empty() && !first.file.sha256.empty() && f.sha256 != first.file.sha256) ||
                    (f.sha256.empty() && f.md5 != first.file.md5))
                    throw InputError(where + " and " + first.where + " name one file, " + f.path +
                                     ", with different hashes; one folder cannot serve both");
                continue;
            }
            out.push_back(std::move(w));
        }
    }
    return out;
}

std::vector<WantedGit> wanted_git(const std::vector<LockFile>& locks) {
    std::vector<WantedGit> out;
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& l : locks)
        for (const auto& p : l.lock.packages) {
            if (p.kind != Ecosystem::source) continue;
            std::string where = lock_entry_where(l.path, p);
            if (!is_git_commit(p.rev))
                throw InputError(where + ": the source is pinned to '" + p.rev + "', not a commit; run `envlock resolve` to pin it");
            std::string path = mirror_path(fetch::trim_trailing_slashes(p.url));
            if (!seen.insert({path, p.rev}).second) continue;
            out.push_back({p.url, path, p.rev, p.build, where});
        }
    return out;
}

// --- the state file ---

nlohmann::json file_json(const MirroredFile& f) {
    nlohmann::json j = {{"kind", f.kind == Ecosystem::conda ? "conda" : "pypi"},
                        {"url", f.url},
                        {"path", f.path},
                        {"name", f.name},
                        {"version", f.version},
                        {"sha256", f.sha256},
                        {"md5", f.md5},
                        {"size", f.size},
                        {"channel", f.channel},
                        {"subdir", f.subdir},
                        {"find-links", f.find_links},
                        {"metadata-sha256", f.metadata_sha256},
                        {"requires-python", f.requires_python}};
    if (f.kind == Ecosystem::conda) j["record"] = f.record;
    return j;
}

MirroredFile file_from_json(const nlohmann::json& j) {
    MirroredFile f;
    f.kind = j.at("kind").get<std::string>() == "conda" ? Ecosystem::conda : Ecosystem::pypi;
    f.url = j.at("url").get<std::string>();
    f.path = j.at("path").get<std::string>();
    f.name = j.value("name", "");
    f.version = j.value("version", "");
    f.sha256 = j.value("sha256", "");
    f.md5 = j.value("md5", "");
    f.size = j.value("size", std::uint64_t{0});
    f.channel = j.value("channel", "");
    f.subdir = j.value("subdir", "");
    f.find_links = j.value("find-links", false);
    f.metadata_sha256 = j.value("metadata-sha256", "");
    f.requires_python = j.value("requires-python", "");
    if (j.contains("record")) f.record = j["record"];
    return f;
}

State read_state(const fs::path& dir) {
    State s;
    const fs::path file = dir / kStateFile;
    std::error_code ec;
    if (!fs::exists(file, ec)) return s;
    std::string text = read_text_file(file.string(), "mirror state", std::size_t{1} << 30);
    try {
        auto j = nlohmann::json::parse(text);
        for (const auto& f : j.at("files")) s.files.push_back(file_from_json(f));
        for (const auto& g : j.at("git"))
            s.git.push_back({g.at("url").get<std::string>(), g.at("path").get<std::string>(), g.at("commit").get<std::string>(), "", ""});
        for (const auto& b : j.at("builds")) s.builds.emplace_back(b.at("key").get<std::string>(), b.at("source").get<std::string>());
        for (const auto& p : j.at("pages")) s.pages.push_back(p.get<std::string>());
    } catch (const nlohmann::json::exception& e) {
        throw InputError(file.string() + ": not the record `envlock mirror` keeps of what the folder holds (" + e.what() +
                         "); remove it to start the folder's record afresh");
    }
    return s;
}

void write_state(const fs::path& dir, const State& s) {
    nlohmann::json j;
    j["envlock-mirror"] = 1;
    j["files"] = nlohmann::json::array();
    for (const auto& f : s.files) j["files"].push_back(file_json(f));
    j["git"] = nlohmann::json::array();
    for (const auto& g : s.git) j["git"].push_back({{"url", g.url}, {"path", g.path}, {"commit", g.commit}});
    j["builds"] = nlohmann::json::array();
    for (const auto& [key, source] : s.builds) j["builds"].push_back({{"key", key}, {"source", source}});
    j["pages"] = s.pages;
    write_file_atomically((dir / kStateFile).string(), j.dump(1) + "\n");
}

// --- artifacts ---

std::string digest_of(const fs::path& file, const MirroredFile& f) {
    return f.sha256.empty() ? install::md5_of_file(file) : install::sha256_of_file(file);
}

// Into the folder under a temporary name (a hard link to the cache's verified archive where
// both are on one file system, else a copy), hashed there against the lock, then renamed into
// place: the folder never holds a file its lock would refuse, nor half a file. False when the
// hash differs (the temporary file is gone again).
bool place(const fs::path& from, const fs::path& dest, const MirroredFile& f) {
    std::error_code ec;
    fs::create_directories(dest.parent_path(), ec);
    if (ec) throw EnvironmentError("cannot create " + dest.parent_path().string() + ": " + ec.message());
    fs::path tmp = dest.parent_path() / ("." + dest.filename().string() + temp_suffix());
    fs::create_hard_link(from, tmp, ec);
    if (ec) {
        ec.clear();
        fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
        if (ec) throw EnvironmentError("cannot copy " + from.string() + " to " + tmp.string() + ": " + ec.message());
    }
    if (digest_of(tmp, f) != (f.sha256.empty() ? f.md5 : f.sha256)) {
        fs::remove(tmp, ec);
        return false;
    }
    fs::rename(tmp, dest, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw EnvironmentError("cannot move " + tmp.string() + " into place: " + ec.message());
    }
    return true;
}

// A conda package's own repodata record: info/index.json, inside the .conda's info tarball.
nlohmann::json conda_record(const fs::path& archive, const MirroredFile& f) {
    std::optional<std::string> index;
    std::string name = archive.filename().string();
    if (ends_with(name, ".conda")) {
        std::string stem = name.substr(0, name.size() - 6);
        auto info = install::read_archive_member(archive, "info-" + stem + ".tar.zst");
        if (info) {
            fs::path tmp = archive.parent_path() / ("." + stem + ".info" + temp_suffix() + ".tar.zst");
            {
                std::ofstream out(tmp, std::ios::binary);
                out.write(info->data(), static_cast<std::streamsize>(info->size()));
            }
            try {
                index = install::read_archive_member(tmp, "info/index.json");
            } catch (...) {
                std::error_code ec;
                fs::remove(tmp, ec);
                throw;
            }
            std::error_code ec;
            fs::remove(tmp, ec);
        }
    } else {
        index = install::read_archive_member(archive, "info/index.json");
    }
    if (!index) throw InputError(name + " holds no info/index.json: not a conda package");
    nlohmann::json record = nlohmann::json::parse(*index, nullptr, false);
    if (!record.is_object()) throw InputError(name + ": info/index.json is not a JSON object");
    if (!f.sha256.empty()) record["sha256"] = f.sha256;
    record["md5"] = f.md5.empty() ? install::md5_of_file(archive) : f.md5;
    record["size"] = f.size;
    return record;
}

// A wheel's METADATA beside it (PEP 658), and its Requires-Python for the pages.
void write_wheel_metadata(const fs::path& wheel, MirroredFile& f) {
    std::string member;
    for (const auto& m : install::list_wheel(wheel.string())) {
        auto slash = m.name.find('/');
        if (slash != std::string::npos && m.name.compare(slash, std::string::npos, "/METADATA") == 0 &&
            ends_with(m.name.substr(0, slash), ".dist-info")) {
            member = m.name;
            break;
        }
    }
    if (member.empty()) return;   // not a wheel pip would install either; the pages say no metadata
    std::string text = install::read_wheel_files(wheel.string(), {member}).at(0);
    write_file_atomically(wheel.string() + ".metadata", text);
    f.metadata_sha256 = sha256_hex(text);
    f.requires_python = fetch::parse_core_metadata(text).requires_python;
}

// An sdist's Requires-Python, from the PKG-INFO at the top of its one folder (PEP 643's metadata):
// empty when the sdist has none there.
std::string sdist_requires_python(const fs::path& sdist) {
    std::string name = sdist.filename().string();
    for (std::string_view ext : {".tar.gz", ".zip", ".tar.bz2", ".tgz"})
        if (ends_with(name, ext)) {
            std::string stem = name.substr(0, name.size() - ext.size());
            try {
                if (auto text = install::read_archive_member(sdist, stem + "/PKG-INFO", 1 << 20))
                    return fetch::parse_core_metadata(*text).requires_python;
            } catch (const Error&) {
            }
            return "";
        }
    return "";
}

// What a cache failure names (a URL or a file name) put after the lock lines it concerns.
[[noreturn]] void rethrow_with_lines(const Error& e, const std::vector<Wanted*>& todo) {
    std::string what = e.what(), named;
    for (const auto* w : todo) {
        std::string name = w->file.path.substr(w->file.path.rfind('/') + 1);
        if (what.find(name) != std::string::npos || what.find(fetch::redact_url(w->file.url)) != std::string::npos)
            named += (named.empty() ? "" : "; ") + w->where;
    }
    if (named.empty()) throw;
    if (e.code == ExitCode::bad_input) throw InputError(named + ": " + what);
    if (e.code == ExitCode::unmet) throw UnmetError(named + ": " + what);
    throw EnvironmentError(named + ": " + what);
}

// Fetches (through the package cache) and places every artifact in `todo`.
void copy_artifacts(const std::vector<Wanted*>& todo, const fs::path& dir, const MirrorOptions& o) {
    if (todo.empty()) return;
    const fs::path cache = o.fetch.cache_dir.empty() ? fetch::default_cache_dir() : o.fetch.cache_dir;
    std::vector<install::CacheEntry> entries;
    for (const auto* w : todo) entries.push_back(install::cache_entry(cache, *w->package));
    try {
        install::populate_cache(entries, o.fetch, {}, /*extract=*/false);
    } catch (const Error& e) {
        rethrow_with_lines(e, todo);
    }
    for (size_t i = 0; i < todo.size(); ++i) {
        MirroredFile& f = todo[i]->file;
        const fs::path dest = dir / f.path;
        if (!place(entries[i].archive(), dest, f)) {
            // The cache's copy changed since it was verified: fetched again, once.
            std::error_code ec;
            fs::remove(entries[i].archive(), ec);
            try {
                install::populate_cache({entries[i]}, o.fetch, {}, /*extract=*/false);
            } catch (const Error& e) {
                rethrow_with_lines(e, {todo[i]});
            }
            if (!place(entries[i].archive(), dest, f))
                throw EnvironmentError(todo[i]->where + ": " + entries[i].archive().string() + " does not match the lock's " +
                                       (f.sha256.empty() ? "md5" : "sha256") + " " + (f.sha256.empty() ? f.md5 : f.sha256));
        }
        std::error_code ec;
        f.size = fs::file_size(dest, ec);
        try {
            if (f.kind == Ecosystem::conda) f.record = conda_record(dest, f);
            else if (is_wheel(f.path)) write_wheel_metadata(dest, f);
            else f.requires_python = sdist_requires_python(dest);
        } catch (const Error& e) {
            throw InputError(todo[i]->where + ": " + e.what());
        }
    }
}

// --- git sources and built wheels ---

bool is_local(const std::string& url) { return fetch::is_file_url(url) || (!url.empty() && url.front() == '/'); }

// <cache>/built/<key>/key.txt begins "source: git <url> <commit>[ <dir>]" or "source: sdist sha256:<hex>".
std::map<std::string, std::string> built_entries(const fs::path& cache) {
    std::map<std::string, std::string> out;   // key -> source
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cache / "built", ec)) {
        if (!e.is_directory() || e.path().filename() == "failed" || e.path().filename().string().front() == '.') continue;
        std::ifstream in(e.path() / "key.txt");
        std::string first;
        if (!std::getline(in, first) || first.rfind("source: ", 0) != 0) continue;
        if (!fs::is_directory(e.path() / "tree", ec)) continue;   // incomplete entries are never renamed in; be sure
        out[e.path().filename().string()] = first.substr(8);
    }
    return out;
}

// A whole built entry, copied beside and renamed in (files hard-linked where they can be).
void copy_build(const fs::path& from, const fs::path& dest) {
    std::error_code ec;
    fs::create_directories(dest.parent_path(), ec);
    fs::path tmp = dest.parent_path() / ("." + dest.filename().string() + temp_suffix());
    fs::copy(from, tmp, fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::create_hard_links, ec);
    if (ec) {
        fs::remove_all(tmp, ec);
        ec.clear();
        fs::copy(from, tmp, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
    }
    if (ec) {
        fs::remove_all(tmp, ec);
        throw EnvironmentError("cannot copy the built wheel " + from.string() + " into " + dest.string() + ": " + ec.message());
    }
    fs::rename(tmp, dest, ec);
    if (ec) {
        fs::remove_all(tmp, ec);
        if (!fs::is_directory(dest / "tree")) throw EnvironmentError("cannot move " + tmp.string() + " into place: " + ec.message());
    }
}

// --- pruning and sizes ---

// Removes a file or folder, then the folders it leaves empty up to the mirror's root.
size_t remove_and_tidy(const fs::path& dir, const fs::path& what) {
    std::error_code ec;
    size_t n = fs::exists(fs::symlink_status(what, ec)) ? 1 : 0;
    fs::remove_all(what, ec);
    for (fs::path p = what.parent_path(); p != dir && p.string().size() > dir.string().size(); p = p.parent_path())
        if (!fs::remove(p, ec)) break;   // not empty (or gone): stop
    return n;
}

std::uint64_t folder_size(const fs::path& dir) {
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        if (it->is_regular_file(ec) && !it->is_symlink(ec)) total += it->file_size(ec);
    }
    return total;
}

std::string mirrors_file_text(const State& s, const std::string& base_url) {
    std::set<std::string> origins;
    for (const auto& f : s.files) {
        origins.insert(url_origin(f.url));
        if (!f.channel.empty()) origins.insert(url_origin(f.channel));
    }
    for (const auto& g : s.git) origins.insert(url_origin(g.url));
    origins.erase("");
    std::string base = fetch::trim_trailing_slashes(base_url);
    std::string text =
        "# Written by `envlock mirror`: every origin the mirrored locks use, mapped into this folder.\n"
        "# On a node: ENVLOCK_MIRRORS=<this file> (or --mirrors-file <this file>), with --offline where\n"
        "# the folder is the only source.\n"
        "mirrors:\n";
    for (const auto& o : origins) {
        std::string folder = o == "file://" ? "file" : o.substr(o.find("://") + 3);
        text += "  " + o + ": " + (base.empty() ? folder : base + "/" + folder) + "\n";
    }
    return text;
}

}  // namespace

MirrorSummary mirror_locks(const std::vector<LockFile>& locks, const MirrorOptions& o) {
    if (o.dir.empty()) throw InputError("envlock mirror: the folder to mirror into is missing");
    const fs::path dir = fs::absolute(o.dir).lexically_normal();
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw InputError(dir.string() + ": not a folder");
    fs::create_directories(dir, ec);
    if (ec) throw EnvironmentError("cannot create " + dir.string() + ": " + ec.message());
    auto say = [&](const std::string& line) {
        if (o.say) o.say(line);
    };

    std::vector<Wanted> files = wanted_files(locks);
    std::vector<WantedGit> git = wanted_git(locks);
    // One writer at a time: two runs into one folder would each write a record without the other's files.
    install::FileLock turn(dir / ".envlock-mirror.lock", [&](const std::string& holder) {
        say("waiting for another envlock mirror writing " + dir.string() + (holder.empty() ? "" : " (" + holder + ")"));
    });
    turn.note("pid " + std::to_string(::getpid()) + ": envlock mirror");
    const State old = read_state(dir);
    MirrorSummary sum;

    // 1. Artifacts: those the folder already holds as an earlier run left them are kept as they are.
    std::map<std::string, const MirroredFile*> had;
    for (const auto& f : old.files) had[f.path] = &f;
    std::vector<Wanted*> todo;
    for (auto& w : files) {
        auto it = had.find(w.file.path);
        bool same = it != had.end() && it->second->sha256 == w.file.sha256 && it->second->md5 == w.file.md5;
        if (same && fs::is_regular_file(dir / w.file.path, ec) &&
            (!is_wheel(w.file.path) || it->second->metadata_sha256.empty() || fs::exists(dir / (w.file.path + ".metadata"), ec))) {
            MirroredFile kept = *it->second;
            kept.channel = w.file.channel;   // the page that lists it is this lock's
            kept.subdir = w.file.subdir;
            kept.find_links = w.file.find_links;
            kept.name = w.file.name;
            kept.version = w.file.version;
            w.file = kept;
            continue;
        }
        todo.push_back(&w);
    }
    if (!todo.empty()) say("copying " + std::to_string(todo.size()) + " files into " + dir.string());
    copy_artifacts(todo, dir, o);
    for (const auto& w : files) {
        sum.files++;
        sum.bytes += w.file.size;
        sum.locks_bytes += w.package->size ? w.package->size : w.file.size;
    }
    sum.files_added = todo.size();
    for (const auto* w : todo) sum.bytes_added += w->file.size;

    // 2. Git sources: a bare repository per URL, a branch per locked commit.
    std::set<std::pair<std::string, std::string>> had_git;
    for (const auto& g : old.git) had_git.insert({g.path, g.commit});
    for (const auto& g : git) {
        std::string from = o.fetch.mirrors.apply(g.url);
        bool known = had_git.count({g.path, g.commit}) && fs::exists(dir / g.path / "HEAD", ec);
        if (!known && o.fetch.offline && !is_local(from))
            throw EnvironmentError(g.where + ": offline, and the git source " + fetch::redact_url(g.url) + " is not in a local mirror");
        if (!known) say("git " + fetch::redact_url(g.url) + " at " + g.commit);
        try {
            mirror_git_commit(from, g.commit, g.rev, dir / g.path);
        } catch (const Error& e) {
            throw EnvironmentError(g.where + ": " + e.what());
        }
        sum.git_sources++;
        if (!known) sum.git_added++;
    }

    // 3. Built wheels of the locks' git sources and sdists, keyed as install keys them.
    std::vector<std::pair<std::string, std::string>> builds;
    if (o.with_builds) {
        const fs::path cache = o.fetch.cache_dir.empty() ? fetch::default_cache_dir() : o.fetch.cache_dir;
        auto entries = built_entries(cache);
        std::set<std::string> had_builds;
        for (const auto& b : old.builds) had_builds.insert(b.first);
        for (const auto& l : locks)
            for (const auto& p : l.lock.packages) {
                bool sdist = p.kind == Ecosystem::pypi && !is_wheel(p.url) && !p.sha256.empty();
                if (p.kind != Ecosystem::source && !sdist) continue;
                std::string id = sdist ? "sdist sha256:" + p.sha256 : "git " + p.url + " " + p.rev;
                bool found = false;
                for (const auto& [key, source] : entries) {
                    if (source != id && source.rfind(id + " ", 0) != 0) continue;
                    found = true;
                    if (std::any_of(builds.begin(), builds.end(), [&](const auto& b) { return b.first == key; })) continue;
                    builds.emplace_back(key, source);
                    if (!(had_builds.count(key) && fs::is_directory(dir / "built" / key / "tree", ec))) {
                        copy_build(cache / "built" / key, dir / "built" / key);
                        sum.builds_added++;
                    }
                }
                if (!found) sum.builds_missing.push_back(lock_entry_where(l.path, p));
            }
        sum.builds = builds.size();
    }

    // 4. The new record: what the locks need, and (without --prune) what the folder held before.
    State next;
    for (const auto& w : files) next.files.push_back(w.file);
    for (const auto& g : git) next.git.push_back({g.url, g.path, g.commit, "", ""});
    next.builds = builds;
    std::set<std::string> kept_paths;
    for (const auto& f : next.files) kept_paths.insert(f.path);
    std::set<std::pair<std::string, std::string>> kept_git;
    for (const auto& g : next.git) kept_git.insert({g.path, g.commit});
    std::set<std::string> kept_builds;
    for (const auto& b : next.builds) kept_builds.insert(b.first);
    std::vector<fs::path> remove;
    std::map<std::string, std::vector<std::string>> drop_commits;   // repository path -> commits
    for (const auto& f : old.files)
        if (!kept_paths.count(f.path)) {
            if (o.prune) {
                remove.push_back(dir / f.path);
                if (!f.metadata_sha256.empty()) remove.push_back(dir / (f.path + ".metadata"));
            } else {
                next.files.push_back(f);
                kept_paths.insert(f.path);
            }
        }
    for (const auto& g : old.git)
        if (!kept_git.count({g.path, g.commit})) {
            if (o.prune) drop_commits[g.path].push_back(g.commit);
            else next.git.push_back(g);
        }
    for (const auto& b : old.builds)
        if (!kept_builds.count(b.first)) {
            if (o.prune) remove.push_back(dir / "built" / b.first);
            else next.builds.push_back(b);
        }

    // 5. Pages, the mirrors file and the record, each written whole and renamed into place.
    auto pages = index_pages(next.files);
    for (const auto& p : pages) {
        fs::path at = dir / p.path;
        std::error_code e2;
        if (fs::is_regular_file(at, e2) && read_text_file(at.string(), "page", std::size_t{1} << 30) == p.text) {
            next.pages.push_back(p.path);
            continue;
        }
        fs::create_directories(at.parent_path(), e2);
        write_file_atomically(at.string(), p.text);
        next.pages.push_back(p.path);
    }
    std::set<std::string> new_pages(next.pages.begin(), next.pages.end());
    for (const auto& p : old.pages)
        if (!new_pages.count(p)) remove.push_back(dir / p);   // a page no file is listed on any more (only --prune empties one)
    write_file_atomically((dir / "mirrors.yaml").string(), mirrors_file_text(next, o.base_url));

    // 6. --prune: what no lock needs goes, once the pages no longer list it.
    for (const auto& p : remove) sum.removed += remove_and_tidy(dir, p);
    std::set<std::string> repos_kept;
    for (const auto& g : next.git) repos_kept.insert(g.path);
    for (const auto& [path, commits] : drop_commits) {
        if (!repos_kept.count(path)) {
            sum.removed += remove_and_tidy(dir, dir / path);
            continue;
        }
        const std::string git_dir = "--git-dir=" + (dir / path).string();
        for (const auto& c : commits) {
            run_process({"git", git_dir, "update-ref", "-d", "refs/heads/locked/" + c}, 30);
            // and the tags mirror_git_commit made for it, which would keep its objects
            auto tags = run_process({"git", git_dir, "for-each-ref", "--points-at", c, "--format=%(refname)", "refs/tags/"}, 30);
            std::istringstream lines(tags.out);
            for (std::string ref; std::getline(lines, ref);)
                if (!ref.empty()) run_process({"git", git_dir, "update-ref", "-d", ref}, 30);
            sum.removed++;
        }
        // HEAD on a branch that is still there, and the dropped commits' objects gone.
        for (const auto& g : next.git)
            if (g.path == path) {
                run_process({"git", git_dir, "symbolic-ref", "HEAD", "refs/heads/locked/" + g.commit}, 30);
                break;
            }
        run_process({"git", git_dir, "gc", "--quiet", "--prune=now"}, 3600);
        run_process({"git", git_dir, "update-server-info"}, 60);
    }
    write_state(dir, next);
    sum.folder_bytes = folder_size(dir);
    return sum;
}

}  // namespace envlock::publish
