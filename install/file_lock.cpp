#include "install/file_lock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fetch/files.hpp"
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

}  // namespace

FileLock::FileLock(const std::filesystem::path& path, const std::function<void(const std::string&)>& waiting) {
    fd_ = open_lock_file(path);
    if (lock_whole_file(fd_, false)) {
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
    if (!lock_whole_file(fd_, true))
        throw EnvironmentError("cannot lock " + path.string() + ": " + std::strerror(errno));
    locked_ = true;
}

FileLock FileLock::try_lock(const std::filesystem::path& path) {
    FileLock l;
    l.fd_ = open_lock_file(path);
    l.locked_ = lock_whole_file(l.fd_, false);
    return l;
}

FileLock::~FileLock() {
    if (fd_ >= 0) ::close(fd_);   // closing its own descriptor releases the lock
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
