#pragma once
// The parts of a zip file (APPNOTE 6.3.x) that a reader needs to take one member out of a remote
// wheel by HTTP range requests, as uv (uv-client remote_metadata.rs) and pip (lazy_wheel.py) do:
// the end of central directory record (ZIP64 too), the central directory, one member's bytes.
// Pure functions over byte ranges; no I/O.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envlock::fetch {

struct ZipDirectoryPlace {
    std::uint64_t offset = 0;   // where the central directory starts in the file
    std::uint64_t size = 0;     // its length
};

// Finds the end of central directory record in `tail`, the bytes [tail_start, tail_start +
// tail.size()) of the file (its end). nullopt when the record is not in these bytes (a long
// archive comment, or too short a tail); InputError naming `source` when it is malformed.
std::optional<ZipDirectoryPlace> find_zip_directory(std::string_view tail, std::uint64_t tail_start, std::string_view source);

struct ZipMember {
    std::string name;
    std::uint16_t method = 0;          // 0 stored, 8 deflated
    std::uint64_t compressed_size = 0;
    std::uint64_t size = 0;
    std::uint64_t local_offset = 0;    // of its local file header
};

// The members the central directory lists; InputError naming `source` when it is damaged.
std::vector<ZipMember> read_zip_directory(std::string_view directory, std::string_view source);

// The entries at the end of a directory that begins before `tail` (bytes [tail_start, ...) of
// the file): those from the first entry signature on from which entries follow one another
// exactly to the directory's end. Wheel builders write the .dist-info entries last, so a big
// wheel's METADATA entry is usually here, and the rest of its directory need not be read.
std::vector<ZipMember> read_zip_directory_end(std::string_view tail, std::uint64_t tail_start, const ZipDirectoryPlace& place);

// The wheel's "<name>-<version>.dist-info/METADATA" (top-level .dist-info only).
std::optional<ZipMember> find_wheel_metadata(const std::vector<ZipMember>& members);

// How many bytes from the member's local header to read so that its data is surely inside: the
// header's variable part (name and extra field) is not known before it is read, so a margin.
std::uint64_t member_read_length(const ZipMember& member);

// The member's content from bytes that start at its local file header; InputError naming `source`
// when they are too short, not a local header, or do not inflate to the declared size.
std::string read_zip_member(std::string_view from_local_header, const ZipMember& member, std::string_view source);

}  // namespace envlock::fetch
