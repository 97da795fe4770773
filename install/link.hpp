#pragma once
// Placing files in a prefix: hardlinks from the cache (a copy where the filesystem or the
// file refuses), copies, symlinks; hashing installed files; joining archive paths safely.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace envlock::install {

enum class LinkMode { hardlink, copy, symlink };   // --link-mode; hardlink is the default
enum class Placed { hardlink, copy, symlink };

// "hardlink" / "copy" / "symlink"; InputError for anything else.
LinkMode parse_link_mode(std::string_view text);

// Puts `from` at `to` (parents created; an existing `to` is unlinked first, never written
// through, since it may share its inode with the cache or another prefix). hardlink falls
// back to a copy across filesystems (EXDEV) and where links are refused (EPERM, EMLINK,
// ENOTSUP); symlink links to the absolute `from`. A copy keeps the mode bits and mtime.
Placed place_file(const std::filesystem::path& from, const std::filesystem::path& to, LinkMode mode);

// Copies a file (copy_file_range: reflinks where the filesystem can), keeping mode and mtime.
void copy_regular_file(const std::filesystem::path& from, const std::filesystem::path& to);

// Writes a new file (parents created; an existing one unlinked first), with these mode bits.
void write_new_file(const std::filesystem::path& path, std::string_view content, unsigned mode = 0644);

// A symlink at `at` pointing to `target` (replacing what is there).
void make_symlink(const std::string& target, const std::filesystem::path& at);

// mkdir -p: one syscall per directory when its parent is there. EnvironmentError on failure.
void make_directories(const std::filesystem::path& dir);

std::string sha256_of_file(const std::filesystem::path& path);   // lowercase hex
std::string read_whole_file(const std::filesystem::path& path);

// `rel` (an archive's or a record's '/'-separated path) under `root`: InputError when it is
// absolute, empty, or has a ".." component or a NUL.
std::filesystem::path safe_join(const std::filesystem::path& root, std::string_view rel);
// The same checks alone, for callers that join strings themselves.
void check_relative_path(std::string_view rel);

}  // namespace envlock::install
