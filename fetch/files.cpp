#include "fetch/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
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
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    std::string temp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rng() % 1000000000);
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

}  // namespace envlock
