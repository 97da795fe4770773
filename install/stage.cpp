#include "install/stage.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "fetch/files.hpp"
#include "install/installed.hpp"
#include "install/link.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what, const fs::path& p, int err) {
    throw EnvironmentError("cannot " + what + " " + p.string() + ": " + std::strerror(err));
}

void fsync_dir(const fs::path& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct Copier {
    const std::unordered_set<std::string>& omit;
    const std::function<void(const std::string&)>& warn;

    // A __pycache__/<stem>.<tag>.pyc whose <stem>.py is omitted goes with it.
    bool omitted_pyc(const std::string& dir_rel, const std::string& name) const {
        if (!ends_with(name, ".pyc")) return false;
        if (!(dir_rel == "__pycache__" || ends_with(dir_rel, "/__pycache__"))) return false;
        std::string parent = dir_rel.size() > 11 ? dir_rel.substr(0, dir_rel.size() - 12) : "";
        std::string source = (parent.empty() ? "" : parent + "/") + name.substr(0, name.find('.')) + ".py";
        return omit.count(source) > 0;
    }

    // Returns false when the directory was left out because omissions emptied it.
    bool copy_dir(const fs::path& from, const fs::path& to, const std::string& rel, mode_t mode) {
        if (::mkdir(to.c_str(), mode & 07777) != 0 && errno != EEXIST) fail("create", to, errno);
        DIR* d = ::opendir(from.c_str());
        if (!d) fail("read", from, errno);
        bool had_children = false, kept = false;
        std::vector<std::pair<std::string, unsigned char>> entries;
        while (dirent* e = ::readdir(d)) {
            std::string name = e->d_name;
            if (name == "." || name == "..") continue;
            entries.emplace_back(name, e->d_type);
        }
        ::closedir(d);
        for (const auto& [name, dtype] : entries) {
            had_children = true;
            std::string child_rel = rel.empty() ? name : rel + "/" + name;
            if (omit.count(child_rel) || omitted_pyc(rel, name)) continue;
            fs::path src = from / name, dst = to / name;
            struct stat st {};
            if (::lstat(src.c_str(), &st) != 0) fail("read", src, errno);
            if (S_ISDIR(st.st_mode)) {
                if (copy_dir(src, dst, child_rel, st.st_mode)) kept = true;
            } else if (S_ISLNK(st.st_mode)) {
                std::string target = fs::read_symlink(src).string();
                if (::symlink(target.c_str(), dst.c_str()) != 0) fail("create the link", dst, errno);
                kept = true;
            } else if (S_ISREG(st.st_mode)) {
                if (::link(src.c_str(), dst.c_str()) != 0) {
                    if (errno == EMLINK || errno == EPERM || errno == ENOTSUP) copy_regular_file(src, dst);
                    else fail("link " + src.string() + " to", dst, errno);
                }
                kept = true;
            } else {
                if (warn) warn("left out " + src.string() + ": not a file, directory or link");
            }
            (void)dtype;
        }
        if (had_children && !kept && !rel.empty()) {
            ::rmdir(to.c_str());
            return false;
        }
        return true;
    }
};

}  // namespace

StagePaths stage_paths(const fs::path& prefix_in) {
    fs::path prefix = fs::absolute(prefix_in).lexically_normal();
    if (!prefix.has_filename()) prefix = prefix.parent_path();
    std::string name = prefix.filename().string();
    if (name.empty() || prefix == prefix.root_path())
        throw InputError("--prefix " + prefix_in.string() + ": expected a directory below /, not the root");
    fs::path parent = prefix.parent_path();
    fs::path helpers = parent.filename() == ".envlock" ? parent : parent / ".envlock";
    auto beside = [&](const char* what) { return helpers / ("." + name + ".envlock-" + what); };
    return {prefix, helpers, beside("lock"), beside("journal"), beside("staging"), beside("scratch"), beside("old")};
}

void make_helper_dir(const StagePaths& p) {
    std::error_code ec;
    fs::create_directories(p.helpers, ec);
    if (ec) throw EnvironmentError("cannot create " + p.helpers.string() + ": " + ec.message());
    fs::path ignore = p.helpers / ".gitignore";
    if (!fs::exists(ignore, ec)) write_file_atomically(ignore.string(), "*\n");
}

std::string new_generation() {
    std::random_device rd;
    std::mt19937_64 rng((static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ static_cast<std::uint64_t>(::getpid()));
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
    return buf;
}

std::string generation_of(const fs::path& tree) {
    try {
        auto s = read_state(tree);
        return s ? s->generation : "";
    } catch (const Error&) {
        return "";
    }
}

void write_journal(const StagePaths& p, const std::string& generation, const std::string& command) {
    nlohmann::json j = {{"envlock-journal", 1}, {"generation", generation}, {"prefix", p.prefix.string()},
                        {"pid", ::getpid()}, {"command", command}};
    write_file_atomically(p.journal.string(), j.dump(1) + "\n");
    fsync_dir(p.journal.parent_path());
}

void remove_tree_quietly(const fs::path& dir) {
    std::error_code ec;
    // Read-only directories inside (a package may ship them) would stop remove_all.
    if (fs::is_directory(dir, ec) && !fs::is_symlink(dir, ec))
        for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
            if (it->is_directory(ec) && !it->is_symlink(ec))
                fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir, ec);
}

void copy_tree(const fs::path& from, const fs::path& to, const std::unordered_set<std::string>& omit,
               const std::function<void(const std::string&)>& warn) {
    struct stat st {};
    mode_t mode = ::stat(from.c_str(), &st) == 0 ? st.st_mode : 0755;
    Copier c{omit, warn};
    c.copy_dir(from, to, "", mode);
}

void swap_in(const StagePaths& p) {
    // No syncfs or per-file fsync here: against a killed process the journal and this one
    // rename are the whole guarantee (the page cache outlives the process); against power loss
    // the filesystem's own ordering is relied on, as conda, mamba, pip and uv do (ext4's
    // data=ordered commits the links and mkdirs before the rename that follows them). A syncfs
    // cost seconds on a warm install: it flushes every dirty page of the filesystem, not ours.
    std::error_code ec;
    if (!fs::exists(p.prefix, ec)) {
        if (::rename(p.stage.c_str(), p.prefix.c_str()) != 0) fail("move the new environment to", p.prefix, errno);
    } else if (::renameat2(AT_FDCWD, p.stage.c_str(), AT_FDCWD, p.prefix.c_str(), RENAME_EXCHANGE) != 0) {
        if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) fail("swap the new environment into", p.prefix, errno);
        // No exchange on this filesystem: two renames; recover() knows the state in between.
        if (::rename(p.prefix.c_str(), p.old.c_str()) != 0) fail("move aside", p.prefix, errno);
        if (::rename(p.stage.c_str(), p.prefix.c_str()) != 0) fail("move the new environment to", p.prefix, errno);
        if (::rename(p.old.c_str(), p.stage.c_str()) != 0) fail("move aside", p.old, errno);
    }
    fsync_dir(p.prefix.parent_path());
    if (p.helpers != p.prefix.parent_path()) fsync_dir(p.helpers);
}

// The atomic writer's temp files of the journal ("..<name>.envlock-journal.tmp-XXXXXX", from
// mkstemp) that a kill -9 between write and rename left in the helper folder. Only an envlock
// holding the prefix lock writes this journal, and the caller holds it: none is in use.
static void remove_journal_temps(const StagePaths& p) {
    const std::string stem = "." + p.journal.filename().string() + ".tmp-";
    std::error_code ec;
    for (fs::directory_iterator it(p.journal.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() == stem.size() + 6 && name.compare(0, stem.size(), stem) == 0) {
            std::error_code gone;
            fs::remove(it->path(), gone);
        }
    }
}

std::string recover(const StagePaths& p) {
    std::error_code ec;
    std::string said;
    if (fs::exists(p.journal, ec)) {
        std::string gen;
        try {
            auto j = nlohmann::json::parse(read_whole_file(p.journal), nullptr, false);
            if (j.is_object()) gen = j.value("generation", "");
        } catch (const Error&) {
        }
        bool prefix_there = fs::exists(p.prefix, ec);
        const std::string where = p.prefix.string();
        if (!gen.empty() && prefix_there && generation_of(p.prefix) == gen) {
            said = "completed an interrupted install into " + where + " (its new state was already in place)";
        } else if (!gen.empty() && !prefix_there && generation_of(p.stage) == gen) {
            if (::rename(p.stage.c_str(), p.prefix.c_str()) != 0) fail("move the new environment to", p.prefix, errno);
            said = "completed an interrupted install into " + where;
        } else if (!prefix_there && fs::exists(p.old, ec)) {
            if (::rename(p.old.c_str(), p.prefix.c_str()) != 0) fail("move back", p.old, errno);
            said = "rolled back an interrupted install into " + where + ": it keeps its previous state";
        } else {
            said = "rolled back an interrupted install into " + where +
                   (prefix_there ? ": it keeps its previous state" : ": it was not there before and is not now");
        }
    }
    remove_tree_quietly(p.stage);
    remove_tree_quietly(p.scratch);
    if (fs::exists(p.prefix, ec)) remove_tree_quietly(p.old);
    fs::remove(p.journal, ec);
    remove_journal_temps(p);
    if (!said.empty()) {
        fsync_dir(p.prefix.parent_path());
        if (p.helpers != p.prefix.parent_path()) fsync_dir(p.helpers);
    }
    return said;
}

}  // namespace envlock::install
