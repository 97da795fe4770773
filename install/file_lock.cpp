#include "install/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

int open_lock_file(const std::filesystem::path& path) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw EnvironmentError("cannot open the lock file " + path.string() + ": " + std::strerror(errno));
    return fd;
}

bool flock_retrying(int fd, int op) {
    for (;;) {
        if (::flock(fd, op) == 0) return true;
        if (errno == EINTR) continue;
        return false;
    }
}

}  // namespace

FileLock::FileLock(const std::filesystem::path& path, const std::function<void(const std::string&)>& waiting) {
    fd_ = open_lock_file(path);
    if (flock_retrying(fd_, LOCK_EX | LOCK_NB)) {
        locked_ = true;
        return;
    }
    if (waiting) {
        char buf[512] = {};
        ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
        std::string who(buf, n > 0 ? static_cast<size_t>(n) : 0);
        while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
        waiting(who);
    }
    if (!flock_retrying(fd_, LOCK_EX))
        throw EnvironmentError("cannot lock " + path.string() + ": " + std::strerror(errno));
    locked_ = true;
}

FileLock FileLock::try_lock(const std::filesystem::path& path) {
    FileLock l;
    l.fd_ = open_lock_file(path);
    l.locked_ = flock_retrying(l.fd_, LOCK_EX | LOCK_NB);
    return l;
}

FileLock::~FileLock() {
    if (fd_ >= 0) ::close(fd_);   // closing the last descriptor releases the flock
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_), locked_(other.locked_) {
    other.fd_ = -1;
    other.locked_ = false;
}

void FileLock::note(const std::string& text) {
    if (fd_ < 0 || !locked_) return;
    if (::ftruncate(fd_, 0) != 0) return;
    std::string line = text + "\n";
    if (::pwrite(fd_, line.data(), line.size(), 0) < 0) return;
}

}  // namespace envlock::install
