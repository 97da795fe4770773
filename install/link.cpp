#include "install/link.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what, const fs::path& p, int err) {
    throw EnvironmentError("cannot " + what + " " + p.string() + ": " + std::strerror(err));
}

// mkdir -p with one syscall per missing level (and one in all when only the last is missing):
// std::filesystem::create_directories stats every component first.
bool make_dirs(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0777) == 0 || errno == EEXIST) return true;
    if (errno != ENOENT) return false;
    auto slash = dir.find_last_of('/');
    if (slash == std::string::npos || slash == 0) return false;
    if (!make_dirs(dir.substr(0, slash))) return false;
    return ::mkdir(dir.c_str(), 0777) == 0 || errno == EEXIST;
}

void make_parent(const fs::path& p) {
    const std::string dir = p.parent_path().string();
    if (dir.empty() || make_dirs(dir)) return;
    std::error_code ec;   // the slow path names the reason well (a file where a directory should be)
    fs::create_directories(dir, ec);
    if (ec) throw EnvironmentError("cannot create " + dir + ": " + ec.message());
}

void remove_existing(const fs::path& p) {
    if (::unlink(p.c_str()) == 0 || errno == ENOENT) return;
    if (errno == EISDIR || errno == EPERM) {
        std::error_code ec;
        fs::remove_all(p, ec);
        if (!ec) return;
    }
    fail("replace", p, errno);
}

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

LinkMode parse_link_mode(std::string_view text) {
    if (text == "hardlink") return LinkMode::hardlink;
    if (text == "copy") return LinkMode::copy;
    if (text == "symlink") return LinkMode::symlink;
    throw InputError("--link-mode: expected hardlink, copy or symlink, got '" + std::string(text) + "'");
}

void copy_regular_file(const fs::path& from, const fs::path& to) {
    Fd in{::open(from.c_str(), O_RDONLY | O_CLOEXEC)};
    if (in.fd < 0) fail("read", from, errno);
    struct stat st {};
    if (::fstat(in.fd, &st) != 0) fail("read", from, errno);
    make_parent(to);
    remove_existing(to);
    Fd out{::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777)};
    if (out.fd < 0) fail("create", to, errno);
    off_t left = st.st_size;
    bool plain = false;
    while (left > 0 && !plain) {
        ssize_t n = ::copy_file_range(in.fd, nullptr, out.fd, nullptr, static_cast<size_t>(left), 0);
        if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) plain = true;
        else if (n < 0) fail("copy to", to, errno);
        else if (n == 0) break;
        else left -= n;
    }
    if (plain) {
        char buf[1 << 16];
        for (;;) {
            ssize_t n = ::read(in.fd, buf, sizeof buf);
            if (n < 0) fail("read", from, errno);
            if (n == 0) break;
            for (ssize_t off = 0; off < n;) {
                ssize_t w = ::write(out.fd, buf + off, static_cast<size_t>(n - off));
                if (w < 0) fail("write", to, errno);
                off += w;
            }
        }
    }
    ::fchmod(out.fd, st.st_mode & 07777);
    timespec times[2] = {st.st_atim, st.st_mtim};
    ::futimens(out.fd, times);
}

Placed place_file(const fs::path& from, const fs::path& to, LinkMode mode) {
    if (mode == LinkMode::symlink) {
        make_symlink(fs::absolute(from).string(), to);
        return Placed::symlink;
    }
    if (mode == LinkMode::hardlink) {
        // The link is tried first and its directory made only when missing: one syscall per
        // file in the common case, as `cp -al` does.
        bool made_parent = false, replaced = false;
        for (;;) {
            if (::link(from.c_str(), to.c_str()) == 0) return Placed::hardlink;
            if (errno == ENOENT && !made_parent) {
                make_parent(to);
                made_parent = true;
                continue;
            }
            if (errno == EEXIST && !replaced) {
                remove_existing(to);
                replaced = true;
                continue;
            }
            if (errno == EXDEV || errno == EPERM || errno == EMLINK || errno == ENOTSUP || errno == EACCES) break;
            fail("link " + from.string() + " to", to, errno);
        }
    }
    copy_regular_file(from, to);
    return Placed::copy;
}

void write_new_file(const fs::path& path, std::string_view content, unsigned mode) {
    // Created at the first try in the common case (a new name in an existing directory); the
    // parent made or the old file unlinked only when the attempt says so, as place_file does.
    Fd out{::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)};
    if (out.fd < 0 && (errno == ENOENT || errno == EEXIST)) {
        make_parent(path);
        remove_existing(path);
        out.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    }
    if (out.fd < 0) fail("create", path, errno);
    for (size_t off = 0; off < content.size();) {
        ssize_t w = ::write(out.fd, content.data() + off, content.size() - off);
        if (w < 0) fail("write", path, errno);
        off += static_cast<size_t>(w);
    }
    ::fchmod(out.fd, mode);
}

void make_directories(const fs::path& dir) { make_parent(dir / "x"); }

void make_symlink(const std::string& target, const fs::path& at) {
    make_parent(at);
    remove_existing(at);
    if (::symlink(target.c_str(), at.c_str()) != 0) fail("create the link", at, errno);
}

std::string sha256_of_file(const fs::path& path) {
    Fd in{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (in.fd < 0) fail("read", path, errno);
    Sha256 h;
    char buf[1 << 16];
    for (;;) {
        ssize_t n = ::read(in.fd, buf, sizeof buf);
        if (n < 0) fail("read", path, errno);
        if (n == 0) break;
        h.update(std::string_view(buf, static_cast<size_t>(n)));
    }
    return h.hex_digest();
}

std::string read_whole_file(const fs::path& path) {
    Fd in{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (in.fd < 0) fail("read", path, errno);
    std::string out;
    char buf[1 << 16];
    for (;;) {
        ssize_t n = ::read(in.fd, buf, sizeof buf);
        if (n < 0) fail("read", path, errno);
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

fs::path safe_join(const fs::path& root, std::string_view rel) {
    check_relative_path(rel);
    return root / fs::path(std::string(rel));
}

void check_relative_path(std::string_view rel) {
    auto bad = [&](const char* why) { throw InputError("unsafe path '" + std::string(rel) + "': " + why); };
    if (rel.empty()) bad("empty");
    if (rel.front() == '/') bad("absolute");
    if (rel.find('\0') != std::string_view::npos) bad("contains NUL");
    size_t start = 0;
    while (start <= rel.size()) {
        size_t end = rel.find('/', start);
        if (end == std::string_view::npos) end = rel.size();
        if (rel.substr(start, end - start) == "..") bad("has a '..' component");
        start = end + 1;
    }
}

}  // namespace envlock::install
