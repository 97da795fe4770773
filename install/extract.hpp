#pragma once
// Safe extraction of package archives (tar with any filter, zip/.whl, and .conda's zip of
// zstd tarballs) into a fresh directory: no member lands or points outside it, no special
// files, no duplicates, no more bytes than declared. Every artifact envlock unpacks goes here.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envlock::install {

struct ExtractLimits {
    // 0: derived from the archive's size (200 times it, at least 256 MiB, at most 64 GiB).
    std::uint64_t max_total_bytes = 0;
    std::uint64_t max_members = 1000000;
};

struct ExtractedMember {
    enum class Kind { file, directory, symlink, hardlink };
    std::string path;          // relative, '/'-separated, "./" stripped
    Kind kind = Kind::file;
    std::uint64_t size = 0;    // bytes written (files)
    std::string target;        // symlink: the target as stored; hardlink: the member it links to
    unsigned mode = 0;         // permission bits kept; setuid, setgid and sticky are dropped
};

// Extracts every member of `archive` into `dest` (created; must be absent or empty).
// Refused with InputError "unsafe archive <file>: member <m>: <why>", `dest` removed: absolute
// paths, paths too long (path_too_long),
// paths, ".." components, backslashes, device/FIFO/socket members, symlinks that resolve
// outside `dest`, members below a symlink member, hardlinks to anything but an earlier regular
// member, duplicate members, more bytes than a member declares, more than the limits.
// A damaged archive is an InputError too.
std::vector<ExtractedMember> extract_archive(const std::filesystem::path& archive, const std::filesystem::path& dest,
                                             const ExtractLimits& limits = {});

// A conda package: .tar.bz2, or .conda (metadata.json with format version 2, then
// info-*.tar.zst and pkg-*.tar.zst, both rooted at `dest`).
std::vector<ExtractedMember> extract_conda_package(const std::filesystem::path& archive,
                                                   const std::filesystem::path& dest, const ExtractLimits& limits = {});

// A member path longer than a file system takes (a component past NAME_MAX, 255 bytes, or a
// whole path past 2048 bytes, half of Linux's PATH_MAX, the rest left to the prefix): the
// refusal "unsafe archive: path too long (N bytes) in <archive>" with the path's start only.
// "" when the path is fine. Extraction and the wheel installer both ask it first.
std::string path_too_long(std::string_view member, std::string_view archive);

// One member's bytes, without extracting anything; nullopt when there is no such member.
// InputError when the member is larger than max_bytes or the archive is damaged.
std::optional<std::string> read_archive_member(const std::filesystem::path& archive, std::string_view member,
                                               std::uint64_t max_bytes = std::uint64_t{64} << 20);

}  // namespace envlock::install
