#pragma once
// Advisory whole-file locks that other envlock processes respect, on this host and on others
// sharing the folder over NFS: open file description locks (fetch/files' lock_whole_file). The
// kernel drops them when a process dies, even by kill -9 (the NFS server when a host's lease
// runs out), so a crash never leaves a stale lock behind.
#include <filesystem>
#include <functional>
#include <string>

namespace envlock::install {

class FileLock {
public:
    // Takes the lock on `path` (created if missing). When another process holds it,
    // `waiting` is called once with that process's note (what it wrote with note()), then
    // this blocks until the lock is free. EnvironmentError when the file cannot be opened.
    FileLock(const std::filesystem::path& path, const std::function<void(const std::string&)>& waiting);
    // Non-blocking: locked() says whether it was had.
    static FileLock try_lock(const std::filesystem::path& path);
    ~FileLock();
    FileLock(FileLock&& other) noexcept;
    FileLock& operator=(FileLock&&) = delete;
    FileLock(const FileLock&) = delete;

    bool locked() const { return locked_; }
    // Writes a line into the lock file ("pid 1234: envlock install ...") for whoever waits.
    void note(const std::string& text);

private:
    FileLock() = default;
    int fd_ = -1;
    bool locked_ = false;
};

}  // namespace envlock::install
