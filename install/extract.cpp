#include "install/extract.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

namespace fs = std::filesystem;
using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;
using Kind = ExtractedMember::Kind;

std::string la_error(struct archive* a) {
    const char* e = archive_error_string(a);
    return e ? e : "unknown libarchive error";
}

std::uint64_t default_total_cap(const fs::path& archive) {
    std::error_code ec;
    std::uint64_t size = fs::file_size(archive, ec);
    if (ec) size = 0;
    const std::uint64_t floor = std::uint64_t{256} << 20, ceiling = std::uint64_t{64} << 30;
    return std::clamp<std::uint64_t>(size * 200, floor, ceiling);
}

ArchivePtr open_reader(const fs::path& archive) {
    ArchivePtr a(archive_read_new(), archive_read_free);
    archive_read_support_format_tar(a.get());
    archive_read_support_format_gnutar(a.get());
    // The central directory is what pip and installer read; the local headers could differ.
    archive_read_support_format_zip_seekable(a.get());
    archive_read_support_filter_all(a.get());
    if (archive_read_open_filename(a.get(), archive.c_str(), 1 << 16) != ARCHIVE_OK)
        throw InputError("cannot read archive " + archive.string() + ": " + la_error(a.get()));
    return a;
}

// Splits a member name into components; "" and "." vanish. nullopt-like: sets `why`.
std::vector<std::string> components(std::string_view name, std::string& why) {
    std::vector<std::string> out;
    if (name.empty()) {
        why = "empty member name";
        return {};
    }
    if (name.front() == '/') {
        why = "absolute path";
        return {};
    }
    if (name.find('\\') != std::string_view::npos) {
        why = "backslash in the name";
        return {};
    }
    size_t start = 0;
    while (start <= name.size()) {
        size_t end = name.find('/', start);
        if (end == std::string_view::npos) end = name.size();
        std::string_view part = name.substr(start, end - start);
        if (part == "..") {
            why = "'..' in the path";
            return {};
        }
        if (!part.empty() && part != ".") out.emplace_back(part);
        start = end + 1;
    }
    return out;
}

std::string join(const std::vector<std::string>& parts, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        if (i) s += '/';
        s += parts[i];
    }
    return s;
}

bool inside(const fs::path& root, const fs::path& p) {
    auto r = root.begin(), q = p.begin();
    for (; r != root.end(); ++r, ++q)
        if (q == p.end() || *r != *q) return false;
    return true;
}

// Reads a nested archive (a tarball inside .conda's zip) straight from the outer one.
la_ssize_t read_from_outer(struct archive*, void* client, const void** buffer) {
    auto* outer = static_cast<struct archive*>(client);
    size_t size = 0;
    la_int64_t offset = 0;
    int rc = archive_read_data_block(outer, buffer, &size, &offset);
    if (rc == ARCHIVE_EOF) return 0;
    if (rc < ARCHIVE_WARN) return -1;
    return static_cast<la_ssize_t>(size);
}

constexpr std::size_t kMaxComponent = 255;     // NAME_MAX of ext4, xfs, btrfs, tmpfs
constexpr std::size_t kMaxMemberPath = 2048;   // half of PATH_MAX (4096): the rest is the prefix's

class Extractor {
public:
    Extractor(std::string archive_name, fs::path dest, std::uint64_t max_total, std::uint64_t max_members)
        : name_(std::move(archive_name)), dest_(std::move(dest)), max_total_(max_total), max_members_(max_members) {}

    [[noreturn]] void refuse(const std::string& member, const std::string& why) const {
        throw InputError("unsafe archive " + name_ + ": member " + member + ": " + why);
    }

    // Extracts every member `a` still has.
    void extract_all(struct archive* a) {
        archive_entry* e = nullptr;
        int rc;
        while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) add(a, e);
        if (rc != ARCHIVE_EOF) throw InputError("damaged archive " + name_ + ": " + la_error(a));
    }

    // Symlinks were checked one by one as they came; chains of them are only known at the end.
    void check_symlinks() const {
        fs::path root = fs::weakly_canonical(dest_);
        for (const auto& link : symlinks_) {
            std::error_code ec;
            fs::path resolved = fs::weakly_canonical(dest_ / link, ec);
            if (ec || !inside(root, resolved)) refuse(link, "symbolic link resolves outside the target directory");
        }
    }

    std::vector<ExtractedMember> members;

private:
    void add(struct archive* a, archive_entry* e) {
        const char* raw = archive_entry_pathname(e);
        std::string shown = raw ? raw : "";
        if (++count_ > max_members_) refuse(shown, "more than " + std::to_string(max_members_) + " members");
        if (auto why = path_too_long(shown, name_); !why.empty()) throw InputError(why);
        std::string why;
        auto parts = components(shown, why);
        if (!why.empty()) refuse(shown, why);
        if (parts.empty()) return;  // "./": the root itself
        std::string path = join(parts, parts.size());

        // No member may go below a symlink member or a file, so nothing is written through a link.
        for (size_t i = 1; i < parts.size(); ++i) {
            std::string parent = join(parts, i);
            auto it = seen_.find(parent);
            if (it == seen_.end()) continue;
            if (it->second == Kind::symlink) refuse(shown, "lies below the symbolic link " + parent);
            if (it->second != Kind::directory) refuse(shown, "lies below the file " + parent);
        }

        ExtractedMember m;
        m.path = path;
        auto type = archive_entry_filetype(e);
        const char* hardlink = archive_entry_hardlink(e);
        if (hardlink && *hardlink) m.kind = Kind::hardlink;
        else if (type == AE_IFREG) m.kind = Kind::file;
        else if (type == AE_IFDIR) m.kind = Kind::directory;
        else if (type == AE_IFLNK) m.kind = Kind::symlink;
        else refuse(shown, "is a device, FIFO or socket, which packages never contain");

        auto existing = seen_.find(path);
        if (existing != seen_.end()) {
            if (m.kind == Kind::directory && existing->second == Kind::directory) return;  // listed twice: harmless
            refuse(shown, "appears twice in the archive");
        }
        unsigned perm = archive_entry_perm(e) & 0777;
        if (perm == 0) perm = 0644;
        m.mode = perm | 0400;

        fs::path target = dest_ / path;
        std::error_code ec;
        fs::create_directories(target.parent_path(), ec);
        if (ec) throw InputError("cannot create " + target.parent_path().string() + ": " + ec.message());
        for (size_t i = 1; i < parts.size(); ++i) seen_.emplace(join(parts, i), Kind::directory);

        switch (m.kind) {
            case Kind::directory:
                if (::mkdir(target.c_str(), 0755) != 0 && errno != EEXIST)
                    throw InputError("cannot create " + target.string() + ": " + std::strerror(errno));
                if (fs::is_symlink(target)) refuse(shown, "directory over a symbolic link");
                m.mode = 0755;
                break;
            case Kind::symlink: {
                const char* to = archive_entry_symlink(e);
                m.target = to ? to : "";
                if (m.target.empty()) refuse(shown, "symbolic link without a target");
                if (m.target.front() == '/') refuse(shown, "symbolic link to the absolute path " + m.target);
                // Lexically, from the link's own directory; chains are checked at the end.
                int depth = static_cast<int>(parts.size()) - 1;
                size_t start = 0;
                while (start <= m.target.size()) {
                    size_t end = m.target.find('/', start);
                    if (end == std::string::npos) end = m.target.size();
                    std::string_view part(m.target.data() + start, end - start);
                    if (part == "..") --depth;
                    else if (!part.empty() && part != ".") ++depth;
                    if (depth < 0) refuse(shown, "symbolic link to " + m.target + " leaves the target directory");
                    start = end + 1;
                }
                if (::symlink(m.target.c_str(), target.c_str()) != 0)
                    throw InputError("cannot create the link " + target.string() + ": " + std::strerror(errno));
                symlinks_.push_back(path);
                break;
            }
            case Kind::hardlink: {
                std::string lwhy;
                auto tparts = components(hardlink, lwhy);
                if (!lwhy.empty()) refuse(shown, "hard link to " + std::string(hardlink) + ": " + lwhy);
                m.target = join(tparts, tparts.size());
                auto it = seen_.find(m.target);
                if (it == seen_.end() || it->second != Kind::file)
                    refuse(shown, "hard link to " + std::string(hardlink) + ", which is not an earlier file of the archive");
                if (::link((dest_ / m.target).c_str(), target.c_str()) != 0)
                    throw InputError("cannot create " + target.string() + ": " + std::strerror(errno));
                // A hard link with data ("pax hardlink with body") would rewrite the first file: refuse.
                if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0) {
                    const void* buf;
                    size_t size;
                    la_int64_t off;
                    if (archive_read_data_block(a, &buf, &size, &off) == ARCHIVE_OK && size > 0)
                        refuse(shown, "hard link that carries data");
                }
                break;
            }
            case Kind::file:
                m.size = write_file(a, e, target, shown, perm);
                break;
        }
        seen_.emplace(path, m.kind == Kind::hardlink ? Kind::file : m.kind);
        members.push_back(std::move(m));
    }

    std::uint64_t write_file(struct archive* a, archive_entry* e, const fs::path& target, const std::string& shown,
                             unsigned perm) {
        bool declared = archive_entry_size_is_set(e);
        std::uint64_t limit = declared ? static_cast<std::uint64_t>(archive_entry_size(e)) : max_total_ - total_;
        if (declared && total_ + limit > max_total_)
            refuse(shown, "declares " + std::to_string(limit) + " bytes, past the archive's limit of " +
                              std::to_string(max_total_) + " bytes");
        int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            if (errno == EEXIST) refuse(shown, "appears twice in the archive");
            throw InputError("cannot create " + target.string() + ": " + std::strerror(errno));
        }
        std::uint64_t written = 0;
        char buf[1 << 16];
        for (;;) {
            la_ssize_t n = archive_read_data(a, buf, sizeof buf);
            if (n == 0) break;
            if (n < 0) {
                ::close(fd);
                throw InputError("damaged archive " + name_ + ": member " + shown + ": " + la_error(a));
            }
            written += static_cast<std::uint64_t>(n);
            if (written > limit) {
                ::close(fd);
                refuse(shown, declared ? "holds more bytes than the " + std::to_string(limit) + " it declares (a zip bomb?)"
                                       : "unpacks past the archive's limit of " + std::to_string(max_total_) + " bytes");
            }
            for (la_ssize_t off = 0; off < n;) {
                ssize_t w = ::write(fd, buf + off, static_cast<size_t>(n - off));
                if (w < 0) {
                    int err = errno;
                    ::close(fd);
                    throw InputError("cannot write " + target.string() + ": " + std::strerror(err));
                }
                off += w;
            }
        }
        total_ += written;
        if (total_ > max_total_) {
            ::close(fd);
            refuse(shown, "the archive unpacks past its limit of " + std::to_string(max_total_) + " bytes");
        }
        ::fchmod(fd, perm | 0400);
        if (archive_entry_mtime_is_set(e)) {
            timespec times[2];
            times[0].tv_sec = times[1].tv_sec = archive_entry_mtime(e);
            times[0].tv_nsec = times[1].tv_nsec = archive_entry_mtime_nsec(e);
            ::futimens(fd, times);
        }
        ::close(fd);
        return written;
    }

    std::string name_;
    fs::path dest_;
    std::uint64_t max_total_, max_members_;
    std::uint64_t total_ = 0, count_ = 0;
    std::unordered_map<std::string, Kind> seen_;
    std::vector<std::string> symlinks_;
};

void prepare_dest(const fs::path& dest) {
    std::error_code ec;
    if (fs::exists(dest, ec) && !fs::is_empty(dest, ec))
        throw InputError("cannot extract into " + dest.string() + ": it is not empty");
    fs::create_directories(dest, ec);
    if (ec) throw EnvironmentError("cannot create " + dest.string() + ": " + ec.message());
}

template <class F>
std::vector<ExtractedMember> guarded(const fs::path& dest, F&& body) {
    prepare_dest(dest);
    try {
        return body();
    } catch (...) {
        std::error_code ec;
        fs::remove_all(dest, ec);
        throw;
    }
}

std::uint64_t cap_of(const ExtractLimits& limits, const fs::path& archive) {
    return limits.max_total_bytes ? limits.max_total_bytes : default_total_cap(archive);
}

}  // namespace

std::vector<ExtractedMember> extract_archive(const fs::path& archive, const fs::path& dest, const ExtractLimits& limits) {
    return guarded(dest, [&] {
        auto a = open_reader(archive);
        Extractor x(archive.filename().string(), dest, cap_of(limits, archive), limits.max_members);
        x.extract_all(a.get());
        x.check_symlinks();
        return std::move(x.members);
    });
}

std::vector<ExtractedMember> extract_conda_package(const fs::path& archive, const fs::path& dest,
                                                   const ExtractLimits& limits) {
    std::string fn = archive.filename().string();
    auto ends_with = [&](std::string_view s) { return fn.size() >= s.size() && fn.compare(fn.size() - s.size(), s.size(), s) == 0; };
    if (ends_with(".tar.bz2")) return extract_archive(archive, dest, limits);
    if (!ends_with(".conda")) throw InputError(fn + ": not a conda package (expected .conda or .tar.bz2)");
    return guarded(dest, [&] {
        // CEP 35: a stored zip of metadata.json, info-<stem>.tar.zst and pkg-<stem>.tar.zst.
        ArchivePtr outer(archive_read_new(), archive_read_free);
        archive_read_support_format_zip_seekable(outer.get());
        if (archive_read_open_filename(outer.get(), archive.c_str(), 1 << 16) != ARCHIVE_OK)
            throw InputError("cannot read " + fn + ": " + la_error(outer.get()));
        Extractor x(fn, dest, cap_of(limits, archive), limits.max_members);
        bool metadata = false, info = false, pkg = false;
        archive_entry* e = nullptr;
        int rc;
        while ((rc = archive_read_next_header(outer.get(), &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
            std::string name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
            auto tarball = [&](const char* prefix) {
                return name.rfind(prefix, 0) == 0 && name.size() > 8 && name.compare(name.size() - 8, 8, ".tar.zst") == 0 &&
                       name.find('/') == std::string::npos;
            };
            if (name == "metadata.json") {
                std::string text(static_cast<size_t>(std::min<la_int64_t>(archive_entry_size(e), 1 << 16)), '\0');
                auto n = archive_read_data(outer.get(), text.data(), text.size());
                text.resize(n > 0 ? static_cast<size_t>(n) : 0);
                auto j = nlohmann::json::parse(text, nullptr, false);
                if (!j.is_object() || j.value("conda_pkg_format_version", 0) != 2)
                    throw InputError(fn + ": metadata.json does not say conda_pkg_format_version 2");
                metadata = true;
            } else if (tarball("info-") || tarball("pkg-")) {
                bool is_info = name[0] == 'i';
                if ((is_info && info) || (!is_info && pkg)) x.refuse(name, "appears twice in the archive");
                (is_info ? info : pkg) = true;
                ArchivePtr inner(archive_read_new(), archive_read_free);
                archive_read_support_format_tar(inner.get());
                archive_read_support_filter_zstd(inner.get());
                if (archive_read_open(inner.get(), outer.get(), nullptr, read_from_outer, nullptr) != ARCHIVE_OK)
                    throw InputError("damaged archive " + fn + ": " + name + ": " + la_error(inner.get()));
                x.extract_all(inner.get());
            }
            // Anything else in the outer zip is not part of the package (CEP 35) and is skipped.
        }
        if (rc != ARCHIVE_EOF) throw InputError("damaged archive " + fn + ": " + la_error(outer.get()));
        if (!metadata || !info || !pkg)
            throw InputError(fn + ": not a .conda package (expected metadata.json, info-*.tar.zst and pkg-*.tar.zst)");
        x.check_symlinks();
        return std::move(x.members);
    });
}

std::optional<std::string> read_archive_member(const fs::path& archive, std::string_view member, std::uint64_t max_bytes) {
    auto a = open_reader(archive);
    archive_entry* e = nullptr;
    int rc;
    while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
        std::string why;
        auto parts = components(archive_entry_pathname(e) ? archive_entry_pathname(e) : "", why);
        if (!why.empty() || join(parts, parts.size()) != member) continue;
        if (archive_entry_filetype(e) != AE_IFREG) return std::nullopt;
        std::string out;
        char buf[1 << 16];
        la_ssize_t n;
        while ((n = archive_read_data(a.get(), buf, sizeof buf)) > 0) {
            out.append(buf, static_cast<size_t>(n));
            if (out.size() > max_bytes)
                throw InputError(archive.filename().string() + ": member " + std::string(member) + " is larger than " +
                                 std::to_string(max_bytes) + " bytes");
        }
        if (n < 0) throw InputError("damaged archive " + archive.filename().string() + ": " + la_error(a.get()));
        return out;
    }
    if (rc != ARCHIVE_EOF) throw InputError("damaged archive " + archive.filename().string() + ": " + la_error(a.get()));
    return std::nullopt;
}

std::string path_too_long(std::string_view member, std::string_view archive) {
    std::size_t longest = 0;
    for (std::size_t start = 0; start <= member.size();) {
        std::size_t end = member.find('/', start);
        if (end == std::string_view::npos) end = member.size();
        longest = std::max(longest, end - start);
        start = end + 1;
    }
    if (member.size() <= kMaxMemberPath && longest <= kMaxComponent) return "";
    // The start of it only: a 6,000-byte name would bury the message.
    const std::string start(member.substr(0, 60));
    return "unsafe archive: path too long (" + std::to_string(member.size()) + " bytes" +
           (longest > kMaxComponent ? ", one name of " + std::to_string(longest) : std::string()) + ") in " + std::string(archive) +
           ": " + start + "...";
}

}  // namespace envlock::install
