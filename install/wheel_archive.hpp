#pragma once
// Reading a wheel (a zip) member by member with libarchive, refusing what a wheel must not hold:
// absolute or '..' names, links, devices, duplicate names, data longer than the size declared.
// The safe-extraction rules of install/ applied to zip; the wheel installer is its only user.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace envlock::install {

struct WheelMember {
    std::string name;          // '/'-separated, relative, checked
    std::uint64_t size = 0;    // as the zip's central directory declares it
    bool executable = false;   // any x bit in the zip's external attributes
};

// Every regular-file member, in archive order. InputError naming the wheel and the member
// for anything refused (see above).
std::vector<WheelMember> list_wheel(const std::string& wheel_path);

// Streams the members `want` accepts, in archive order: `chunk` for each piece of data, then
// `done` once the member is complete (also for empty members). A member yielding more bytes
// than its declared size is refused (zip bombs): no more than that is ever decompressed.
void read_wheel_members(const std::string& wheel_path, const std::function<bool(const WheelMember&)>& want,
                        const std::function<void(const WheelMember&, std::string_view chunk)>& chunk,
                        const std::function<void(const WheelMember&)>& done = {});

// Whole content of the named members (small metadata files), capped at `limit` bytes each.
std::vector<std::string> read_wheel_files(const std::string& wheel_path, const std::vector<std::string>& names,
                                          std::uint64_t limit = 64u << 20);

// The same three for a wheel already unpacked into a directory (a cache entry the safe extractor
// wrote from a verified archive): members are its regular files; a symlink or special file is
// refused as it would be in the archive.
// A listing saved beside the tree (<dir>.members, written by save_unpacked_listing when the
// cache entry was extracted) is read instead of walking the tree: one stat per file is what
// a warm install of many small files spends most of its system time on.
std::vector<WheelMember> list_unpacked_wheel(const std::string& dir);
// Walks `dir` and writes <final_dir>.members for list_unpacked_wheel(final_dir); nothing is
// written (the tree is walked each time) when a name holds a tab or a newline.
void save_unpacked_listing(const std::string& dir, const std::string& final_dir);
void read_unpacked_members(const std::string& dir, const std::function<bool(const WheelMember&)>& want,
                           const std::function<void(const WheelMember&, std::string_view chunk)>& chunk,
                           const std::function<void(const WheelMember&)>& done = {});
// The same, over a member list that list_unpacked_wheel already gave (one walk of the tree).
void read_unpacked_members(const std::string& dir, const std::vector<WheelMember>& members,
                           const std::function<bool(const WheelMember&)>& want,
                           const std::function<void(const WheelMember&, std::string_view chunk)>& chunk,
                           const std::function<void(const WheelMember&)>& done = {});
std::vector<std::string> read_unpacked_files(const std::string& dir, const std::vector<std::string>& names,
                                             std::uint64_t limit = 64u << 20);

}  // namespace envlock::install
