#include "install/package_cache.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "fetch/artifacts.hpp"
#include "fetch/files.hpp"
#include "fetch/url.hpp"
#include "install/conda_package.hpp"
#include "install/extract.hpp"
#include "install/file_lock.hpp"
#include "install/link.hpp"
#include "install/parallel.hpp"
#include "install/signals.hpp"
#include "install/wheel_archive.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_conda(const CacheEntry& e) { return ends_with(e.filename, ".conda") || ends_with(e.filename, ".tar.bz2"); }

// Unique on every host sharing the cache: pids repeat across hosts.
std::string unique_suffix() { return unique_temp_tail(); }

void remove_tree(const fs::path& tree) {
    // Renamed aside first: a reader never sees a half-removed tree under the real name.
    fs::path aside = tree;
    aside += ".gone-" + unique_suffix();
    std::error_code ec;
    fs::rename(tree, aside, ec);
    fs::remove_all(ec ? tree : aside, ec);
}

bool archive_matches(const CacheEntry& e) {
    std::error_code ec;
    if (!fs::is_regular_file(e.archive(), ec)) return false;
    if (!e.sha256.empty()) return sha256_of_file(e.archive()) == e.sha256;
    return md5_of_file(e.archive()) == e.md5;
}

void extract_entry(const CacheEntry& e) {
    fs::path tmp = e.dir / ("tree.tmp-" + unique_suffix());
    if (is_conda(e)) {
        extract_conda_package(e.archive(), tmp);
        archive_md5(e);   // while the archive is in the page cache; its conda-meta record needs it
    } else {
        extract_archive(e.archive(), tmp);
        // Before the tree is in place: a warm install reads the listing instead of a stat per file.
        if (ends_with(e.filename, ".whl")) save_unpacked_listing(tmp.string(), e.tree().string());
    }
    std::error_code ec;
    fs::rename(tmp, e.tree(), ec);
    if (ec) {
        // Another envlock got there first (ENOTEMPTY/EEXIST): its tree is as good as ours.
        fs::remove_all(tmp, ec);
        if (!fs::exists(e.tree())) throw EnvironmentError("cannot move " + tmp.string() + " into place: " + ec.message());
    }
}

// Fetches and extracts the entries (indexes into `all`) this process holds the locks of.
void fill(const std::vector<CacheEntry>& all, const std::vector<size_t>& mine, const fetch::FetchContext& ctx,
          const std::function<void(const FetchProgress&)>& progress, bool extract) {
    std::vector<fetch::Artifact> downloads;
    std::vector<size_t> download_of;   // artifact index -> entry index
    std::vector<size_t> to_extract;
    for (size_t i : mine) {
        const CacheEntry& e = all[i];
        std::error_code ec;
        if (extract && fs::exists(e.tree(), ec)) continue;   // done while we waited for the lock
        fs::create_directories(e.dir, ec);
        if (ec) throw EnvironmentError("cannot create " + e.dir.string() + ": " + ec.message());
        // Whoever held the entry's lock before and left temps (a download's .part-, a
        // tree.tmp-, a tree.gone-) was killed or its host died: every writer of the entry holds
        // its lock, which this process holds now, so none of them is live.
        sweep_stale_temps(e.dir, std::chrono::seconds(0));
        bool have = fs::exists(e.archive(), ec);
        if (have && extract && !archive_matches(e)) {
            fs::remove(e.archive(), ec);   // damaged since it was verified: fetched again
            have = false;
        }
        if (!have) {
            downloads.push_back({e.url, e.archive().string(), e.sha256, e.md5, e.size});
            download_of.push_back(i);
        } else if (progress) {
            progress({i, e.size, e.size, true, true});
        }
        if (extract) to_extract.push_back(i);
    }
    // Each archive is extracted as soon as it is there and verified (the transport reports a
    // download done only after its hash matched and it was renamed into place), on a pool of
    // one thread per core, while the other downloads still stream in (as rattler does).
    const int threads = std::max(1, std::min<int>(ctx.transport.jobs, static_cast<int>(std::thread::hardware_concurrency())));
    FeedPool extractors(extract ? threads : 0, [&](size_t i) { extract_entry(all[i]); });
    if (extract) {
        std::set<size_t> downloading(download_of.begin(), download_of.end());
        for (size_t i : to_extract)
            if (!downloading.count(i)) extractors.put(i);
    }
    if (!downloads.empty()) {
        fetch::FetchContext c = ctx;
        // No fsync per archive: a kept archive is hashed again before it is ever extracted
        // (archive_matches), so one torn by a power cut is fetched again, never used; the
        // extracted trees are not synced either, as with conda, mamba, rattler and uv. Each
        // fsync would also flush the trees being extracted beside the downloads.
        c.transport.sync_files = false;
        c.transport.progress = [&](size_t k, std::uint64_t received, std::uint64_t total, bool done) {
            if (done && extract) extractors.put(download_of[k]);
            if (!progress) return true;
            progress({download_of[k], received, total, done});
            return !interrupted();
        };
        // A failed download is reported first (as before extraction overlapped), once the
        // extractions under way have stopped.
        try {
            fetch::download_artifacts(downloads, c);
        } catch (...) {
            try {
                extractors.finish();
            } catch (...) {
            }
            throw;
        }
    }
    extractors.finish();
}

// RECORD's "sha256=<urlsafe base64, no padding>" for a hex digest.
std::string record_hash(const std::string& hex) {
    static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    std::string out;
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                     static_cast<unsigned char>(bytes[i + 2]);
        for (int s : {18, 12, 6, 0}) out += table[(v >> s) & 63];
    }
    if (bytes.size() - i == 2) {
        unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8);
        for (int s : {18, 12, 6}) out += table[(v >> s) & 63];
    } else if (bytes.size() - i == 1) {
        unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
        for (int s : {18, 12}) out += table[(v >> s) & 63];
    }
    return "sha256=" + out;
}

bool conda_tree_ok(const fs::path& tree, bool full) {
    CondaPackageInfo info = read_conda_package(tree);
    for (const auto& p : info.paths) {
        fs::path f = tree / p.path;
        std::error_code ec;
        auto st = fs::symlink_status(f, ec);
        if (p.type == PathType::softlink) {
            if (!fs::is_symlink(st)) return false;
            continue;
        }
        if (p.type == PathType::directory) continue;
        if (!fs::is_regular_file(st)) return false;
        if (!p.sha256.empty() && fs::file_size(f, ec) != p.size) return false;
        if (full && !p.sha256.empty() && sha256_of_file(f) != p.sha256) return false;
    }
    return true;
}

bool wheel_tree_ok(const fs::path& tree, bool full) {
    std::error_code ec;
    for (const auto& d : fs::directory_iterator(tree, ec)) {
        if (!ends_with(d.path().filename().string(), ".dist-info")) continue;
        fs::path record = d.path() / "RECORD";
        if (!fs::exists(record, ec)) continue;
        std::istringstream in(read_whole_file(record));
        std::string line;
        while (std::getline(in, line)) {
            // path,hash,size: RECORD paths with commas are quoted; those rows are only size-checked
            // when simple, which is every row a wheel builder writes in practice.
            if (line.empty() || line.front() == '"') continue;
            auto c2 = line.rfind(','), c1 = line.rfind(',', c2 - 1);
            if (c1 == std::string::npos || c2 == std::string::npos) continue;
            std::string path = line.substr(0, c1), hash = line.substr(c1 + 1, c2 - c1 - 1), size = line.substr(c2 + 1);
            if (!size.empty() && size.back() == '\r') size.pop_back();
            if (hash.empty()) continue;
            fs::path f = safe_join(tree, path);
            if (!fs::is_regular_file(f, ec)) return false;
            // A stale RECORD size (torch 1.12.1's METADATA) is settled by the hash, as install does.
            bool stale = !size.empty() && fs::file_size(f, ec) != std::stoull(size);
            if (stale && hash.rfind("sha256=", 0) != 0) return false;
            if ((full || stale) && hash.rfind("sha256=", 0) == 0 && record_hash(sha256_of_file(f)) != hash) return false;
        }
    }
    return true;
}

}  // namespace

CacheEntry cache_entry(const fs::path& cache_dir, const LockedPackage& p) {
    CacheEntry e;
    e.url = p.url;
    std::string path(fetch::strip_fragment(p.url));
    if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
    e.filename = fetch::percent_decode(path.substr(path.rfind('/') + 1));
    if (e.filename.empty() || e.filename == "." || e.filename == ".." || e.filename.find('/') != std::string::npos)
        throw InputError("the lock's URL " + fetch::redact_url(p.url) + " does not end in a file name");
    e.sha256 = p.sha256;
    e.md5 = p.md5;
    e.size = p.size;
    if (!e.sha256.empty()) e.dir = cache_dir / "pkgs" / e.sha256;
    else if (!e.md5.empty()) e.dir = cache_dir / "pkgs" / ("md5-" + e.md5);
    else
        throw InputError("the lock has no sha256 (nor md5) for " + fetch::redact_url(p.url) +
                         "; envlock installs nothing it cannot verify");
    return e;
}

void populate_cache(const std::vector<CacheEntry>& entries, const fetch::FetchContext& ctx,
                    const std::function<void(const FetchProgress&)>& progress, bool extract) {
    auto missing = [&](const CacheEntry& e) {
        std::error_code ec;
        return extract ? !fs::exists(e.tree(), ec) : !fs::exists(e.archive(), ec);
    };
    // One job per cache entry, in a fixed order so that processes waiting on each other's
    // locks always take them in the same order.
    std::map<fs::path, size_t> by_dir;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (missing(entries[i])) by_dir.emplace(entries[i].dir, i);
        else if (progress) progress({i, entries[i].size, entries[i].size, true, true});
    }
    if (by_dir.empty()) return;
    std::vector<FileLock> held;
    std::vector<size_t> mine, theirs;
    for (const auto& [dir, i] : by_dir) {
        fs::path lock = dir;
        lock += ".lock";
        FileLock l = FileLock::try_lock(lock);
        if (l.locked()) {
            held.push_back(std::move(l));
            mine.push_back(i);
        } else {
            theirs.push_back(i);
        }
    }
    fill(entries, mine, ctx, progress, extract);
    held.clear();
    // Entries another envlock was filling: wait for it, then take what it left undone.
    if (theirs.empty()) return;
    std::vector<size_t> rest;
    for (size_t i : theirs) {
        fs::path lock = entries[i].dir;
        lock += ".lock";
        held.emplace_back(lock, std::function<void(const std::string&)>());
        if (missing(entries[i])) rest.push_back(i);
        else if (progress) progress({i, entries[i].size, entries[i].size, true, true});
    }
    fill(entries, rest, ctx, progress, extract);
}

bool check_tree(const CacheEntry& e, bool full) {
    std::error_code ec;
    if (!fs::is_directory(e.tree(), ec)) return false;
    bool ok;
    try {
        ok = fs::exists(e.tree() / "info/index.json", ec) ? conda_tree_ok(e.tree(), full) : wheel_tree_ok(e.tree(), full);
    } catch (const Error&) {
        ok = false;
    }
    if (!ok) {
        fs::path lock = e.dir;
        lock += ".lock";
        FileLock l(lock, std::function<void(const std::string&)>());
        remove_tree(e.tree());
    }
    return ok;
}

std::string archive_md5(const CacheEntry& e) {
    if (!e.md5.empty()) return e.md5;
    const fs::path sidecar = e.dir / "md5";
    std::error_code ec;
    if (fs::file_size(sidecar, ec) == 32 && !ec) {
        std::string known = read_whole_file(sidecar);
        if (known.find_first_not_of("0123456789abcdef") == std::string::npos) return known;
    }
    std::string md5 = md5_of_file(e.archive());
    // Best effort and not fsync'd: a torn sidecar fails the check above and is recomputed.
    fs::path tmp = e.dir / ("md5.tmp-" + unique_suffix());
    try {
        write_new_file(tmp, md5, 0644);
        fs::rename(tmp, sidecar, ec);
    } catch (const Error&) {
    }
    fs::remove(tmp, ec);
    return md5;
}

std::string md5_of_file(const fs::path& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw EnvironmentError("cannot read " + path.string());
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_md5(), nullptr);
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) EVP_DigestUpdate(ctx, buf, n);
    std::fclose(f);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx, digest, &len);
    EVP_MD_CTX_free(ctx);
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 15];
    }
    return out;
}

}  // namespace envlock::install
