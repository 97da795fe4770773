#pragma once
// Read-only bytes followed by at least kPadding readable zero bytes, which simdjson reads past
// the end of its input (SIMDJSON_PADDING): either a file mapped in place, with no copy and no
// zero-fill however large it is, or a string with spare capacity. Cheap to move; copies share.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

namespace envlock::fetch {

class PaddedBuffer {
public:
    static constexpr std::size_t kPadding = 64;   // simdjson::SIMDJSON_PADDING

    PaddedBuffer();
    // Takes the string; reserves the padding when its capacity lacks it (one copy then).
    explicit PaddedBuffer(std::string s);

    // Maps a regular file read-only. The bytes after its end up to the end of its last page
    // are zero (the kernel's rule for a mapping's tail); when fewer than kPadding of them
    // remain, an anonymous zero page is mapped right after the file's pages. Only pages that
    // are read cost memory. An empty buffer and `error` set when the file cannot be mapped.
    // The file must not be truncated while mapped (cache entries never are: they are
    // replaced by rename). On a file system shared between hosts (NFS, SMB, FUSE, Lustre,
    // Ceph, GPFS) the file is read into a string instead: a rename there by another host
    // removes the mapped file on the server, and its unread pages would fault.
    static PaddedBuffer map_file(const std::filesystem::path& path, std::error_code& error);

    const char* data() const { return data_; }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::string_view view() const { return {data_, size_}; }
    bool mapped() const;

    // Hints that the bytes will be read once from start to end (readahead), or in scattered
    // places (no readahead beyond what is asked). No-ops for a string.
    void advise_sequential() const;
    void advise_random() const;

private:
    struct Storage;
    std::shared_ptr<const Storage> storage_;
    const char* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace envlock::fetch
