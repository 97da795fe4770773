#pragma once
// In-memory archive writers (libarchive) and the digests every index publishes. Every
// member gets a fixed mtime and owner so the same input gives the same bytes.
#include <string>
#include <vector>

namespace envlock::mirror {

struct ArchiveMember {
    std::string path;        // relative, '/'-separated
    std::string content;     // file bytes; empty for a symlink
    int mode = 0644;
    std::string symlink_to;  // non-empty: the member is a symbolic link
};

enum class TarFilter { none, bzip2, zstd, gzip };

std::string write_tar(const std::vector<ArchiveMember>& members, TarFilter filter);

// `stored`: no compression (the outer .conda zip must be stored); otherwise deflate.
std::string write_zip(const std::vector<ArchiveMember>& members, bool stored);

// The reverse, for tests and checks: every regular member's path and bytes, any format
// and filter libarchive knows. Throws InputError when the bytes are not an archive.
std::vector<ArchiveMember> read_archive(const std::string& bytes);

std::string md5_hex(const std::string& bytes);
std::string sha256_hex_of(const std::string& bytes);
// urlsafe base64 without padding, as wheel RECORD files write sha256 digests.
std::string record_digest(const std::string& bytes);

}  // namespace envlock::mirror
