#include "fetch/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>

#include "resolver/specs/errors.hpp"

namespace envlock {

namespace {

std::string kind_of(std::string_view what) { return what.empty() ? "file" : std::string(what); }

const char* file_type(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

std::string size_text(size_t n) {
    return n >= (1u << 20) ? std::to_string(n >> 20) + " MB" : std::to_string(n) + " bytes";
}

// Signals that end the process wait while a temp file exists; the previous mask comes back
// (and a pending signal is delivered) once the temp file is renamed or removed.
class BlockTerminatingSignals {
public:
    BlockTerminatingSignals() {
        sigset_t set;
        sigemptyset(&set);
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
        pthread_sigmask(SIG_BLOCK, &set, &old_);
    }
    ~BlockTerminatingSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
    BlockTerminatingSignals(const BlockTerminatingSignals&) = delete;
    BlockTerminatingSignals& operator=(const BlockTerminatingSignals&) = delete;

private:
    sigset_t old_ {};
};

}  // namespace

std::string read_text_file(const std::string& path, std::string_view what, size_t max_size) {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT || err == ENOTDIR) throw InputError(path + ": no such " + kind_of(what));
        throw EnvironmentError(path + ": cannot read: " + std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        throw EnvironmentError(path + ": cannot read: " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw InputError(path + ": is " + file_type(st.st_mode) + "; a " + kind_of(what) + " must be a regular file");
    }
    auto too_large = [&] {
        return InputError(path + ": larger than " + size_text(max_size) + ", more than any " + kind_of(what) +
                          " envlock reads; is this the right file?");
    };
    if (static_cast<unsigned long long>(st.st_size) > max_size) {
        ::close(fd);
        throw too_large();
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    std::string text;
    text.resize(static_cast<size_t>(st.st_size) + 1);
    size_t got = 0;
    for (;;) {
        if (got == text.size()) {
            if (text.size() > max_size) {   // grew while being read
                ::close(fd);
                throw too_large();
            }
            text.resize(std::min(max_size + 1, text.size() * 2));
        }
        ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            throw EnvironmentError(path + ": cannot read: " + std::strerror(err));
        }
        if (n == 0) break;
        got += static_cast<size_t>(n);
    }
    ::close(fd);
    if (got > max_size) throw too_large();
    text.resize(got);
    return text;
}

void check_output_path(const std::string& path, std::string_view what) {
    const std::string hint = "; a " + kind_of(what) + " is written only as a regular file (use '-o -' for standard output)";
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) throw InputError(path + ": is " + file_type(st.st_mode) + hint);
    auto absolute = std::filesystem::absolute(path).lexically_normal().generic_string();
    for (const char* system : {"/dev/", "/proc/"})
        if (absolute.rfind(system, 0) == 0) throw InputError(path + ": is a system path" + hint);
}

void write_file_atomically(const std::string& path, std::string_view content) {
    std::filesystem::path target(path);
    check_output_path(path);
    std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    BlockTerminatingSignals hold;
    int fd = mkstemp(tmpl.data());
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT || err == ENOTDIR) throw InputError(path + ": no such directory: " + dir.string());
        throw EnvironmentError(path + ": cannot create a temporary file beside it: " + std::strerror(err));
    }
    if (!write_fully(fd, content)) {
        int err = errno;
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw EnvironmentError(path + ": write failed: " + std::strerror(err));
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        throw EnvironmentError(path + ": write failed: " + std::strerror(err));
    }
    ::chmod(tmpl.c_str(), 0644);
    if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        throw EnvironmentError(path + ": cannot move the new file into place: " + std::strerror(err));
    }
}

bool write_fully(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) {
            errno = EIO;
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

bool replace_cache_file(const std::string& path, std::string_view bytes, std::string_view more, bool sync) {
    std::string temp = path + ".tmp-" + unique_temp_tail();
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    bool ok = write_fully(fd, bytes) && write_fully(fd, more);
    if (ok && sync) ok = ::fsync(fd) == 0;
    ok = ::close(fd) == 0 && ok;
    std::error_code ec;
    if (ok) std::filesystem::rename(temp, path, ec);
    if (!ok || ec) {
        std::filesystem::remove(temp, ec);
        return false;
    }
    return true;
}

namespace {

const std::string& host_name() {
    static const std::string name = [] {
        char buf[256] = {};
        if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return std::string("host");
        std::string n(buf);
        // A temp name is one path segment: nothing of the host name may split or hide it.
        for (char& c : n)
            if (c == '/' || c == '\0' || c == ' ') c = '_';
        return n;
    }();
    return name;
}

constexpr std::string_view kTempMarkers[] = {".tmp-", ".part-", ".gone-"};

// The writer a temp name records: "<host>-<pid>-<random>" after its last marker (a marker
// may repeat: a download's ".part-" temp of a ".tmp-" name). pid 0 when the name says none
// (mkstemp's names), which only its age can retire.
struct TempOwner {
    std::string host;
    long pid = 0;
};

TempOwner temp_owner(std::string_view name) {
    size_t at = std::string_view::npos, len = 0;
    for (auto m : kTempMarkers) {
        auto p = name.rfind(m);
        if (p != std::string_view::npos && (at == std::string_view::npos || p > at)) at = p, len = m.size();
    }
    TempOwner o;
    if (at == std::string_view::npos) return o;
    std::string_view tail = name.substr(at + len);
    auto last = tail.rfind('-');
    if (last == std::string_view::npos || last == 0) return o;
    auto before = tail.rfind('-', last - 1);
    if (before == std::string_view::npos || before == 0) return o;
    std::string_view pid = tail.substr(before + 1, last - before - 1);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string_view::npos || pid.size() > 9) return o;
    o.host = std::string(tail.substr(0, before));
    o.pid = std::stol(std::string(pid));
    return o;
}

bool process_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

std::string unique_temp_tail() {
    static std::mt19937_64 rng{std::random_device{}()};
    static std::mutex m;
    std::lock_guard lock(m);
    char random[17];
    std::snprintf(random, sizeof random, "%016llx", static_cast<unsigned long long>(rng()));
    return host_name() + "-" + std::to_string(::getpid()) + "-" + random;
}

bool is_temp_name(std::string_view name) {
    for (auto m : kTempMarkers)
        if (name.find(m) != std::string_view::npos) return true;
    return false;
}

std::size_t sweep_stale_temps(const std::filesystem::path& dir, std::chrono::seconds max_age, std::string_view prefix) {
    namespace fs = std::filesystem;
    std::size_t removed = 0;
    std::error_code ec;
    const auto now = fs::file_time_type::clock::now();
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!is_temp_name(name) || name.compare(0, prefix.size(), prefix) != 0) continue;
        bool stale = max_age.count() == 0;
        if (!stale) {
            TempOwner owner = temp_owner(name);
            stale = owner.host == host_name() && process_gone(owner.pid);
        }
        if (!stale) {
            std::error_code e;
            auto mtime = it->last_write_time(e);   // an error: gone already, or not ours to judge
            stale = !e && now - mtime > max_age;
        }
        if (!stale) continue;
        std::error_code e;
        if (fs::remove_all(it->path(), e) > 0 && !e) ++removed;
    }
    return removed;
}

bool lock_whole_file(int fd, bool wait) {
    struct flock whole {};
    whole.l_type = F_WRLCK;
    whole.l_whence = SEEK_SET;
    whole.l_start = 0;
    whole.l_len = 0;   // to the end, however long the file grows
    whole.l_pid = 0;   // F_OFD_* require 0
    for (;;) {
        if (::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &whole) == 0) return true;
        if (errno == EINTR) continue;
        return false;
    }
}

}  // namespace envlock
