#include "fetch/padded_buffer.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>

namespace envlock::fetch {

struct PaddedBuffer::Storage {
    std::string text;              // when not mapped
    void* map = nullptr;           // the whole reservation: the file's pages and the zero page
    std::size_t map_size = 0;

    Storage() = default;
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
    ~Storage() {
        if (map) ::munmap(map, map_size);
    }
};

namespace {

// A string of zero bytes whose data() has the padding after it, for empty buffers.
const char kZeros[PaddedBuffer::kPadding + 1] = {};

// A file system shared between hosts (statfs f_type, <linux/magic.h>): NFS, SMB/CIFS, FUSE
// (sshfs, s3fs), Lustre, Ceph, GPFS. There another host's rename over a cache entry removes
// the old file on the server, and a mapping of it faults (SIGBUS) on its next unread page;
// a read copy stays whole.
bool on_shared_file_system(int fd) {
    struct statfs fs {};
    if (::fstatfs(fd, &fs) != 0) return false;
    switch (static_cast<unsigned long>(fs.f_type)) {
    case 0x6969UL:       // NFS
    case 0xFF534D42UL:   // CIFS
    case 0xFE534D42UL:   // SMB2
    case 0x517BUL:       // SMB
    case 0x65735546UL:   // FUSE
    case 0x0BD00BD0UL:   // Lustre
    case 0x00C36400UL:   // Ceph
    case 0x47504653UL:   // GPFS
        return true;
    default:
        return false;
    }
}

std::string read_all(int fd, std::size_t size, std::error_code& error) {
    std::string text;
    text.reserve(size + PaddedBuffer::kPadding);
    text.resize(size);
    std::size_t got = 0;
    while (got < size) {
        ssize_t n = ::pread(fd, text.data() + got, size - got, static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            error.assign(errno, std::generic_category());
            return {};
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    return text;
}

}  // namespace

PaddedBuffer::PaddedBuffer() : data_(kZeros) {}

PaddedBuffer::PaddedBuffer(std::string s) {
    auto storage = std::make_shared<Storage>();
    storage->text = std::move(s);
    std::string& t = storage->text;
    if (t.capacity() < t.size() + kPadding) t.reserve(t.size() + kPadding);
    // The padding is read, so it must be initialised bytes, not whatever the allocator left.
    std::size_t n = t.size();
    t.append(kPadding, '\0');
    t.resize(n);
    data_ = t.data();
    size_ = n;
    storage_ = std::move(storage);
}

PaddedBuffer PaddedBuffer::map_file(const std::filesystem::path& path, std::error_code& error) {
    error.clear();
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error.assign(errno, std::generic_category());
        return {};
    }
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        error.assign(errno ? errno : EINVAL, std::generic_category());
        ::close(fd);
        return {};
    }
    std::size_t size = static_cast<std::size_t>(st.st_size);
    if (size == 0) {
        ::close(fd);
        return {};
    }
    if (on_shared_file_system(fd)) {
        std::string text = read_all(fd, size, error);
        ::close(fd);
        if (error) return {};
        return PaddedBuffer(std::move(text));
    }
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t file_pages = (size + page - 1) / page * page;
    // Reading past the last page of a file mapping is SIGBUS; an anonymous page reads zeros.
    const std::size_t total = file_pages - size >= kPadding ? file_pages : file_pages + page;
    void* base = ::mmap(nullptr, total, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        error.assign(errno, std::generic_category());
        ::close(fd);
        return {};
    }
    void* file = ::mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
    int map_errno = errno;
    ::close(fd);   // the mapping keeps the file
    if (file == MAP_FAILED) {
        ::munmap(base, total);
        error.assign(map_errno, std::generic_category());
        return {};
    }
    auto storage = std::make_shared<Storage>();
    storage->map = base;
    storage->map_size = total;
    PaddedBuffer out;
    out.data_ = static_cast<const char*>(base);
    out.size_ = size;
    out.storage_ = std::move(storage);
    return out;
}

bool PaddedBuffer::mapped() const { return storage_ && storage_->map; }

void PaddedBuffer::advise_sequential() const {
    if (mapped()) ::madvise(storage_->map, storage_->map_size, MADV_SEQUENTIAL);
}

void PaddedBuffer::advise_random() const {
    if (mapped()) ::madvise(storage_->map, storage_->map_size, MADV_RANDOM);
}

}  // namespace envlock::fetch
