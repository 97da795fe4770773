#include "install/wheel_archive.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "fetch/files.hpp"
#include "install/extract.hpp"
#include "install/link.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {

namespace {

using ArchivePtr = std::unique_ptr<archive, decltype(&archive_read_free)>;

ArchivePtr open_zip(const std::string& path) {
    ArchivePtr a(archive_read_new(), archive_read_free);
    archive_read_support_format_zip(a.get());
    if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK)
        throw InputError(path + ": not a readable wheel (zip): " + archive_error_string(a.get()));
    return a;
}

// A member name a wheel may hold: relative, '/'-separated, no '.' or '..' component, no NUL
// or backslash (a zip member name uses '/', PKWARE APPNOTE 4.4.17).
std::string why_bad_name(const std::string& name) {
    if (name.empty()) return "an empty name";
    if (name[0] == '/') return "an absolute path";
    if (name.find('\\') != std::string::npos) return "a backslash in the name";
    if (name.find('\0') != std::string::npos) return "a NUL in the name";
    size_t start = 0;
    while (start <= name.size()) {
        size_t end = name.find('/', start);
        if (end == std::string::npos) end = name.size();
        std::string_view part(name.data() + start, end - start);
        if (part == "..") return "a '..' component";
        if (part == "." ) return "a '.' component";
        if (part.empty() && end != name.size()) return "an empty path component";
        start = end + 1;
    }
    return "";
}

// Walks the headers; calls `visit` for every regular file after checking it.
template <typename Visit>
void walk(const std::string& path, Visit&& visit) {
    ArchivePtr a = open_zip(path);
    std::set<std::string> seen;
    archive_entry* entry = nullptr;
    while (true) {
        int rc = archive_read_next_header(a.get(), &entry);
        if (rc == ARCHIVE_EOF) break;
        if (rc < ARCHIVE_WARN)
            throw InputError(path + ": corrupt wheel: " + std::string(archive_error_string(a.get())));
        const char* raw = archive_entry_pathname_utf8(entry);
        if (!raw) raw = archive_entry_pathname(entry);
        std::string name = raw ? raw : "";
        mode_t type = archive_entry_filetype(entry);
        std::string bare = name;
        if (type == AE_IFDIR && !bare.empty() && bare.back() == '/') bare.pop_back();
        if (auto why = path_too_long(bare, std::filesystem::path(path).filename().string()); !why.empty()) throw InputError(why);
        if (auto why = why_bad_name(bare); !why.empty())
            throw InputError(path + ": refused member '" + name + "': " + why);
        if (type == AE_IFDIR) continue;
        if (type != AE_IFREG)
            throw InputError(path + ": refused member '" + name + "': a wheel holds only regular files, this is a " +
                             (type == AE_IFLNK ? "symbolic link" : "special file"));
        if (archive_entry_hardlink(entry))
            throw InputError(path + ": refused member '" + name + "': a hard link");
        if (!seen.insert(name).second)
            throw InputError(path + ": refused member '" + name + "': the name appears twice in the archive");
        WheelMember m;
        m.name = name;
        m.size = archive_entry_size_is_set(entry) ? static_cast<std::uint64_t>(archive_entry_size(entry)) : 0;
        m.executable = (archive_entry_perm(entry) & 0111) != 0;
        visit(a.get(), m);
    }
}

}  // namespace

std::vector<WheelMember> list_wheel(const std::string& wheel_path) {
    std::vector<WheelMember> out;
    walk(wheel_path, [&](archive*, const WheelMember& m) { out.push_back(m); });
    return out;
}

void read_wheel_members(const std::string& wheel_path, const std::function<bool(const WheelMember&)>& want,
                        const std::function<void(const WheelMember&, std::string_view)>& chunk,
                        const std::function<void(const WheelMember&)>& done) {
    walk(wheel_path, [&](archive* a, const WheelMember& m) {
        if (!want(m)) return;
        char buffer[1 << 16];
        std::uint64_t total = 0;
        while (true) {
            la_ssize_t n = archive_read_data(a, buffer, sizeof buffer);
            if (n < 0)
                throw InputError(wheel_path + ": corrupt member '" + m.name + "': " + archive_error_string(a));
            if (n == 0) break;
            total += static_cast<std::uint64_t>(n);
            if (total > m.size)
                throw InputError(wheel_path + ": refused member '" + m.name + "': it expands beyond the " +
                                 std::to_string(m.size) + " bytes the archive declares");
            chunk(m, std::string_view(buffer, static_cast<size_t>(n)));
        }
        if (total != m.size)
            throw InputError(wheel_path + ": corrupt member '" + m.name + "': " + std::to_string(total) +
                             " bytes instead of the " + std::to_string(m.size) + " declared");
        if (done) done(m);
    });
}

std::vector<std::string> read_wheel_files(const std::string& wheel_path, const std::vector<std::string>& names,
                                          std::uint64_t limit) {
    std::vector<std::string> out(names.size());
    auto index_of = [&](const std::string& n) -> int {
        for (size_t i = 0; i < names.size(); ++i)
            if (names[i] == n) return static_cast<int>(i);
        return -1;
    };
    read_wheel_members(
        wheel_path,
        [&](const WheelMember& m) {
            int i = index_of(m.name);
            if (i < 0) return false;
            if (m.size > limit)
                throw InputError(wheel_path + ": refused member '" + m.name + "': " + std::to_string(m.size) +
                                 " bytes, more than a metadata file may hold");
            return true;
        },
        [&](const WheelMember& m, std::string_view chunk) { out[static_cast<size_t>(index_of(m.name))].append(chunk); });
    return out;
}

namespace {

struct Dir {
    DIR* d = nullptr;
    ~Dir() {
        if (d) ::closedir(d);
    }
};

// One directory of the tree, by descriptor: each entry is looked up by its own name under an
// open directory (fstatat, openat), not by its whole path, and never followed when a link.
void walk_unpacked(int fd, const std::string& root, const std::string& under, std::vector<WheelMember>& out) {
    Dir dir{::fdopendir(fd)};
    if (!dir.d) {
        int e = errno;
        ::close(fd);
        throw EnvironmentError("cannot read the unpacked wheel " + root + ": " + std::strerror(e));
    }
    std::vector<std::string> subdirs;
    for (;;) {
        errno = 0;
        dirent* e = ::readdir(dir.d);
        if (!e) {
            if (errno != 0) throw EnvironmentError("cannot read the unpacked wheel " + root + ": " + std::strerror(errno));
            break;
        }
        const char* n = e->d_name;
        if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
        struct stat st;
        if (::fstatat(::dirfd(dir.d), n, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            subdirs.emplace_back(n);
            continue;
        }
        std::string name = under + n;
        if (!S_ISREG(st.st_mode)) throw InputError(root + ": refused member '" + name + "': a wheel holds only regular files");
        out.push_back({std::move(name), static_cast<std::uint64_t>(st.st_size), (st.st_mode & 0111) != 0});
    }
    for (const auto& s : subdirs) {
        int sub = ::openat(::dirfd(dir.d), s.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) throw EnvironmentError("cannot read the unpacked wheel " + root + "/" + under + s + ": " + std::strerror(errno));
        walk_unpacked(sub, root, under + s + "/", out);
    }
}

}  // namespace

namespace {

std::vector<WheelMember> walk_unpacked_wheel(const std::string& dir) {
    std::vector<WheelMember> out;
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw EnvironmentError("cannot read the unpacked wheel " + dir + ": " + std::strerror(errno));
    walk_unpacked(fd, dir, "", out);
    std::sort(out.begin(), out.end(), [](const WheelMember& a, const WheelMember& b) { return a.name < b.name; });
    return out;
}

// "<size> <x|-> <name>\n" per member, sorted by name; nullopt when absent or not in that form.
std::optional<std::vector<WheelMember>> read_listing(const std::string& path) {
    std::string text;
    try {
        text = read_whole_file(path);
    } catch (const EnvironmentError&) {
        return std::nullopt;   // absent (a cache filled before listings were saved): walk instead
    }
    std::vector<WheelMember> out;
    std::string_view rest = text;
    while (!rest.empty()) {
        size_t nl = rest.find('\n');
        if (nl == std::string_view::npos) return std::nullopt;   // torn: walk instead
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl + 1);
        size_t sp1 = line.find(' ');
        if (sp1 == std::string_view::npos || sp1 == 0 || line.size() < sp1 + 4 || line[sp1 + 2] != ' ') return std::nullopt;
        WheelMember m;
        auto [end, ec] = std::from_chars(line.data(), line.data() + sp1, m.size);
        if (ec != std::errc() || end != line.data() + sp1) return std::nullopt;
        m.executable = line[sp1 + 1] == 'x';
        m.name = std::string(line.substr(sp1 + 3));
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace

std::vector<WheelMember> list_unpacked_wheel(const std::string& dir) {
    if (auto saved = read_listing(dir + ".members")) return std::move(*saved);
    return walk_unpacked_wheel(dir);
}

void save_unpacked_listing(const std::string& dir, const std::string& final_dir) {
    std::string text;
    for (const auto& m : walk_unpacked_wheel(dir)) {
        if (m.name.find_first_of("\t\n") != std::string::npos) return;
        text += std::to_string(m.size) + (m.executable ? " x " : " - ") + m.name + "\n";
    }
    write_file_atomically(final_dir + ".members", text);
}

void read_unpacked_members(const std::string& dir, const std::vector<WheelMember>& members,
                           const std::function<bool(const WheelMember&)>& want,
                           const std::function<void(const WheelMember&, std::string_view)>& chunk,
                           const std::function<void(const WheelMember&)>& done) {
    for (const auto& m : members) {
        if (!want(m)) continue;
        std::string path = dir + "/" + m.name;
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) throw EnvironmentError("cannot read " + path + ": " + std::strerror(errno));
        char buffer[1 << 16];
        std::uint64_t total = 0;
        while (true) {
            ssize_t n = ::read(fd, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            total += static_cast<std::uint64_t>(n);
            if (total > m.size) break;   // grew while read: the hash check below refuses it
            chunk(m, std::string_view(buffer, static_cast<size_t>(n)));
        }
        ::close(fd);
        if (done) done(m);
    }
}

void read_unpacked_members(const std::string& dir, const std::function<bool(const WheelMember&)>& want,
                           const std::function<void(const WheelMember&, std::string_view)>& chunk,
                           const std::function<void(const WheelMember&)>& done) {
    read_unpacked_members(dir, list_unpacked_wheel(dir), want, chunk, done);
}

std::vector<std::string> read_unpacked_files(const std::string& dir, const std::vector<std::string>& names,
                                             std::uint64_t limit) {
    std::vector<std::string> out(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
        std::string path = dir + "/" + names[i];
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) continue;   // absent: the caller says which file a wheel must have
        char buffer[1 << 16];
        while (true) {
            ssize_t n = ::read(fd, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            out[i].append(buffer, static_cast<size_t>(n));
            if (out[i].size() > limit) {
                ::close(fd);
                throw InputError(dir + ": refused member '" + names[i] + "': more than a metadata file may hold");
            }
        }
        ::close(fd);
    }
    return out;
}

}  // namespace envlock::install
