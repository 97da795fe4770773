#include "fetch/git_source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <sstream>
#include <vector>

#include "fetch/files.hpp"
#include "fetch/process.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock {
namespace {

// git takes its own lock files (shallow.lock, refs) and fails, rather than waits, when another
// process fetches into the same cached repository; so envlock processes take turns on it.
class RepoLock {
public:
    explicit RepoLock(const std::filesystem::path& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
        if (fd_ >= 0) lock_whole_file(fd_, true);   // NFS-safe (fetch/files); unlocked on error, as before
    }
    ~RepoLock() {
        if (fd_ >= 0) ::close(fd_);   // releases the lock
    }
    RepoLock(const RepoLock&) = delete;
    RepoLock& operator=(const RepoLock&) = delete;

private:
    int fd_;
};

}  // namespace

bool is_git_commit(const std::string& rev) {
    return rev.size() == 40 && rev.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::optional<std::string> resolve_git_rev(const std::string& url, const std::string& rev) {
    if (is_git_commit(rev)) return rev;
    // An annotated tag lists its object and, as "TAG^{}", the commit it points at: prefer that.
    auto r = run_process({"git", "ls-remote", "--", url, rev, rev + "^{}"}, 30);
    if (r.exit_code != 0) return std::nullopt;
    std::istringstream lines(r.out);
    std::string line, found;
    while (std::getline(lines, line)) {
        auto tab = line.find('\t');
        if (tab != 40) continue;
        std::string commit = line.substr(0, 40), ref = line.substr(41);
        if (ref.size() > 3 && ref.compare(ref.size() - 3, 3, "^{}") == 0) return commit;
        if (found.empty()) found = commit;
    }
    if (found.empty()) return std::nullopt;
    return found;
}

bool is_packaging_file(const std::string& rel) {
    if (rel == "setup.py" || rel == "setup.cfg" || rel == "pyproject.toml" || rel == "PKG-INFO") return true;
    bool txt = rel.size() > 4 && rel.compare(rel.size() - 4, 4, ".txt") == 0;
    if (!txt) return false;
    if (rel.find('/') == std::string::npos) return rel.rfind("requirements", 0) == 0;
    return rel.rfind("requirements/", 0) == 0 && rel.find('/', 13) == std::string::npos;
}

std::optional<std::map<std::string, std::string>> git_packaging_files(const std::string& url, const std::string& commit,
                                                                      const std::string& rev, const std::string& dir,
                                                                      const std::filesystem::path& cache_dir) {
    namespace fs = std::filesystem;
    fs::path repo = (cache_dir.empty() ? fs::temp_directory_path() / "envlock-git" : cache_dir / "git") /
                    (sha256_hex(url).substr(0, 24) + ".git");
    std::error_code ec;
    fs::create_directories(repo.parent_path(), ec);
    RepoLock turn(repo.string() + ".lock");
    if (!fs::exists(repo / "HEAD", ec)) {
        fs::create_directories(repo, ec);
        if (run_process({"git", "init", "--quiet", "--bare", repo.string()}, 30).exit_code != 0) return std::nullopt;
    }
    const std::string git_dir = "--git-dir=" + repo.string();
    auto has_commit = [&] { return run_process({"git", git_dir, "cat-file", "-e", commit + "^{commit}"}, 30).exit_code == 0; };
    if (!has_commit()) {
        // The commit alone where the server allows it (GitHub does), else the ref asked for,
        // else everything the remote has.
        std::vector<std::vector<std::string>> wants = {{commit}};
        if (!rev.empty() && rev != commit && rev != "HEAD") wants.push_back({rev});
        wants.push_back({});
        for (const auto& want : wants) {
            std::vector<std::string> argv = {"git", git_dir, "fetch", "--quiet", "--no-tags"};
            if (!want.empty()) argv.push_back("--depth=1");
            argv.push_back("--");
            argv.push_back(url);
            argv.insert(argv.end(), want.begin(), want.end());
            run_process(argv, 600);
            if (has_commit()) break;
        }
        if (!has_commit()) return std::nullopt;
    }
    auto listing = run_process({"git", git_dir, "ls-tree", "-r", "--name-only", commit}, 60);
    if (listing.exit_code != 0) return std::nullopt;
    std::map<std::string, std::string> files;
    std::istringstream lines(listing.out);
    std::string path;
    const std::string prefix = dir.empty() ? "" : dir + "/";
    while (std::getline(lines, path)) {
        if (path.rfind(prefix, 0) != 0 || !is_packaging_file(path.substr(prefix.size()))) continue;
        auto shown = run_process({"git", git_dir, "show", commit + ":" + path}, 60);
        if (shown.exit_code == 0) files[path.substr(prefix.size())] = shown.out;
    }
    return files;
}

void mirror_git_commit(const std::string& url, const std::string& commit, const std::string& rev,
                       const std::filesystem::path& bare_dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path repo = bare_dir;
    const bool fresh = !fs::exists(bare_dir / "HEAD", ec);
    if (fresh) {
        repo = bare_dir.parent_path() / ("." + bare_dir.filename().string() + ".tmp-" + std::to_string(::getpid()));
        fs::remove_all(repo, ec);
        fs::create_directories(repo, ec);
        if (run_process({"git", "init", "--quiet", "--bare", repo.string()}, 30).exit_code != 0)
            throw EnvironmentError("git init --bare " + repo.string() + " failed");
    }
    const std::string git_dir = "--git-dir=" + repo.string();
    auto has_commit = [&] { return run_process({"git", git_dir, "cat-file", "-e", commit + "^{commit}"}, 30).exit_code == 0; };
    auto fail = [&](const std::string& why) {
        if (fresh) fs::remove_all(repo, ec);
        throw EnvironmentError("git: cannot mirror " + url + " at " + commit + ": " + why);
    };
    bool everything = false;
    std::string said;
    if (!has_commit()) {
        // Unlike git_packaging_files, with history (no --depth): a shallow repository cannot be
        // served by a static HTTP server, and a clone of it has no history to build a version from.
        std::vector<std::vector<std::string>> wants = {{commit}};
        if (!rev.empty() && rev != commit && rev != "HEAD") wants.push_back({rev});
        wants.push_back({"+refs/heads/*:refs/envlock-fetch/heads/*", "+refs/tags/*:refs/envlock-fetch/tags/*"});
        for (const auto& want : wants) {
            std::vector<std::string> argv = {"git", git_dir, "fetch", "--quiet", "--no-tags", "--", url};
            argv.insert(argv.end(), want.begin(), want.end());
            auto r = run_process(argv, 3600);
            said = r.out;
            everything = want.size() == 2;
            if (has_commit()) break;
        }
        if (!has_commit()) fail(said.empty() ? "the repository has no such commit" : said);
    }
    const std::string branch = "refs/heads/locked/" + commit;
    if (run_process({"git", git_dir, "update-ref", branch, commit}, 30).exit_code != 0) fail("git update-ref failed");
    // The tag (or branch) the lock was resolved from, as a tag, so a resolve against the mirror
    // finds it again; created only where no ref of that name is there yet (the empty old value).
    if (!rev.empty() && rev != "HEAD" && !is_git_commit(rev) &&
        run_process({"git", "check-ref-format", "refs/tags/" + rev}, 30).exit_code == 0)
        run_process({"git", git_dir, "update-ref", "refs/tags/" + rev, commit, ""}, 30);
    if (everything) {
        // Only the locked commits stay: the branches and tags fetched to find it go again.
        auto refs = run_process({"git", git_dir, "for-each-ref", "--format=%(refname)", "refs/envlock-fetch/"}, 60);
        std::istringstream lines(refs.out);
        for (std::string ref; std::getline(lines, ref);)
            if (!ref.empty()) run_process({"git", git_dir, "update-ref", "-d", ref}, 30);
        run_process({"git", git_dir, "gc", "--quiet", "--prune=now"}, 3600);
    }
    // HEAD names a branch that exists, so a clone checks something out without a warning.
    if (run_process({"git", git_dir, "rev-parse", "--verify", "--quiet", "HEAD"}, 30).exit_code != 0)
        run_process({"git", git_dir, "symbolic-ref", "HEAD", branch}, 30);
    if (run_process({"git", git_dir, "update-server-info"}, 60).exit_code != 0) fail("git update-server-info failed");
    if (fresh) {
        fs::create_directories(bare_dir.parent_path(), ec);
        fs::rename(repo, bare_dir, ec);
        if (ec) {
            fs::remove_all(repo, ec);
            // Another envlock mirrored it first: take its repository when it has the commit.
            if (run_process({"git", "--git-dir=" + bare_dir.string(), "cat-file", "-e", commit + "^{commit}"}, 30).exit_code != 0)
                throw EnvironmentError("cannot move the mirrored repository of " + url + " into " + bare_dir.string());
        }
    }
}

void clone_at(const std::string& url, const std::string& rev, const std::string& dir) {
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_empty(dir, ec)) return;
    auto clone = run_process({"git", "clone", "--quiet", "--", url, dir}, 600);
    if (clone.exit_code != 0) throw EnvironmentError("git clone " + url + " failed: " + clone.out);
    if (rev.empty()) return;
    auto checkout = run_process({"git", "-C", dir, "checkout", "--quiet", rev}, 120);
    if (checkout.exit_code != 0) throw EnvironmentError("git checkout " + rev + " in " + dir + " failed: " + checkout.out);
}

}  // namespace envlock
