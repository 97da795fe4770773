#include "install/repair.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "install/link.hpp"
#include "install/prefix_record.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

namespace fs = std::filesystem;

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string check_one(const fs::path& prefix, const InstalledFile& f) {
    fs::path p = prefix / f.path;
    struct stat st {};
    if (!f.link_target.empty()) {
        if (::lstat(p.c_str(), &st) != 0) return "missing";
        if (!S_ISLNK(st.st_mode)) return "modified (no longer a link)";
        std::error_code ec;
        if (fs::read_symlink(p, ec).string() != f.link_target) return "modified (links elsewhere)";
        return "";
    }
    if (::stat(p.c_str(), &st) != 0) return "missing";
    if (!S_ISREG(st.st_mode)) return "modified (no longer a file)";
    if (f.sha256.empty()) return "";   // RECORD and pyc rows: presence only
    if (static_cast<std::uint64_t>(st.st_size) != f.size)
        return "modified (" + std::to_string(st.st_size) + " bytes, installed " + std::to_string(f.size) + ")";
    if (sha256_of_file(p) != f.sha256) return "modified (sha256 differs)";
    return "";
}

// First CSV field of a RECORD row ("" quoting as in Python's csv module).
std::string first_field(const std::string& line) {
    if (line.empty() || line[0] != '"') return line.substr(0, line.find(','));
    std::string out;
    for (size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '"') {
            if (i + 1 < line.size() && line[i + 1] == '"') {
                out += '"';
                ++i;
            } else {
                break;
            }
        } else {
            out += line[i];
        }
    }
    return out;
}

// `rel` (relative to `base`, itself prefix-relative) as a prefix-relative path, or "" when it
// leaves the prefix (RECORD rows with ".." that escape are never followed: uv's guard).
std::string inside_prefix(const std::string& base, const std::string& rel) {
    if (rel.empty() || rel.front() == '/') return "";
    fs::path joined = (fs::path(base) / rel).lexically_normal();
    std::string s = joined.generic_string();
    if (s.empty() || s == "." || s.rfind("..", 0) == 0) return "";
    return s;
}

}  // namespace

std::vector<Damage> find_damage(const fs::path& prefix, const std::vector<InstalledPackage>& packages, int threads) {
    std::vector<std::pair<size_t, const InstalledFile*>> work;
    for (size_t i = 0; i < packages.size(); ++i)
        for (const auto& f : packages[i].files) work.emplace_back(i, &f);
    std::vector<Damage> out;
    std::mutex m;
    std::atomic<size_t> next{0};
    auto run = [&] {
        for (size_t k; (k = next++) < work.size();) {
            std::string what = check_one(prefix, *work[k].second);
            if (what.empty()) continue;
            std::lock_guard g(m);
            out.push_back({work[k].first, work[k].second->path, what});
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < std::max(1, threads); ++t) pool.emplace_back(run);
    run();
    for (auto& t : pool) t.join();
    std::sort(out.begin(), out.end(), [](const Damage& a, const Damage& b) { return a.path < b.path; });
    return out;
}

Foreign find_foreign(const fs::path& prefix, const std::vector<InstalledPackage>& packages, const std::string& site_packages) {
    std::unordered_set<std::string> owned;
    std::set<std::string> owned_tops;   // site-packages entries (import dirs, dist-info) a locked package has files in
    const std::string sp = site_packages.empty() ? "" : site_packages + "/";
    for (const auto& p : packages)
        for (const auto& f : p.files) {
            owned.insert(f.path);
            if (!sp.empty() && f.path.rfind(sp, 0) == 0) owned_tops.insert(f.path.substr(sp.size(), f.path.find('/', sp.size()) - sp.size()));
        }

    std::vector<std::string> unowned;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(prefix, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::string rel = it->path().lexically_relative(prefix).generic_string();
        if (rel == ".envlock" || rel == "conda-meta/history") {
            if (it->is_directory(ec)) it.disable_recursion_pending();
            continue;
        }
        if (it->is_directory(ec) && !it->is_symlink(ec)) continue;
        if (!owned.count(rel)) unowned.push_back(rel);
    }
    std::sort(unowned.begin(), unowned.end());
    std::set<std::string> remove;
    Foreign out;

    // conda-meta records of packages the lock does not have.
    for (const auto& rel : unowned) {
        if (rel.rfind("conda-meta/", 0) != 0 || !ends_with(rel, ".json") || rel.find('/', 11) != std::string::npos) continue;
        remove.insert(rel);
        std::vector<std::string> files;
        try {
            files = record_files(read_whole_file(prefix / rel), (prefix / rel).string());
        } catch (const Error&) {
        }
        for (const auto& f : files) {
            std::string in = inside_prefix("", f);
            if (!in.empty() && !owned.count(in)) remove.insert(in);
        }
        out.why.push_back(rel + ": a conda package the lock does not have");
    }

    if (!sp.empty()) {
        std::set<std::string> dists;
        for (const auto& rel : unowned) {
            if (rel.rfind(sp, 0) != 0) continue;
            std::string rest = rel.substr(sp.size());
            std::string top = rest.substr(0, rest.find('/'));
            bool top_level = rest.find('/') == std::string::npos;
            if ((ends_with(top, ".dist-info") || ends_with(top, ".egg-info")) && !owned_tops.count(top)) {
                dists.insert(top);
                remove.insert(rel);
            } else if (top_level && (ends_with(rest, ".pth") || ends_with(rest, ".egg-link"))) {
                remove.insert(rel);
                out.why.push_back(rel + ": changes what python imports, and no locked package installed it");
            } else if (!top_level && owned_tops.count(top) && rel.find("/__pycache__/") == std::string::npos) {
                remove.insert(rel);
                out.why.push_back(rel + ": inside " + top + "/, which a locked package owns");
            }
        }
        for (const auto& dist : dists) {
            std::string base = sp + dist;
            // RECORD paths are relative to site-packages; installed-files.txt to the egg-info dir.
            std::vector<std::pair<std::string, std::string>> lists = {{base + "/RECORD", site_packages},
                                                                      {base + "/installed-files.txt", base}};
            for (const auto& [list, relative_to] : lists) {
                if (!fs::exists(prefix / list, ec)) continue;
                std::istringstream in(read_whole_file(prefix / list));
                std::string line;
                while (std::getline(in, line)) {
                    if (!line.empty() && line.back() == '\r') line.pop_back();
                    std::string path = list.size() > 7 && ends_with(list, "/RECORD") ? first_field(line) : line;
                    std::string rel = inside_prefix(relative_to, path);
                    if (!rel.empty() && !owned.count(rel) && fs::exists(fs::symlink_status(prefix / rel, ec))) remove.insert(rel);
                }
            }
            out.why.push_back(base + ": a Python distribution the lock does not have");
        }
    }
    for (const auto& rel : unowned)
        if (!remove.count(rel) && !ends_with(rel, ".pyc")) ++out.unknown_kept;
    out.remove.assign(remove.begin(), remove.end());
    return out;
}

}  // namespace envlock::install
