#pragma once
// Whole-file reads and atomic writes: a write goes to a temp file beside the target and is
// renamed into place, so a reader never sees half a file and a failure loses nothing.
#include <string>
#include <string_view>

namespace envlock {

// Every file envlock reads is a regular file of bounded size: a FIFO, a device (/dev/zero,
// /dev/full) or a directory is refused at once instead of read without end.
inline constexpr size_t kMaxTextFileSize = 16u << 20;

// InputError (exit 2) naming the file when it does not exist, is not a regular file or is
// larger than `max_size`; EnvironmentError (exit 3) when it cannot be read. `what` ("lock",
// "spec", "target file") names the kind in the message.
std::string read_text_file(const std::string& path, std::string_view what = "", size_t max_size = kMaxTextFileSize);

// Only over a regular file or nothing: writing a lock "to" /dev/full or /dev/stdout is refused
// (InputError), as is a target inside a directory that does not exist. SIGINT, SIGTERM and
// SIGHUP wait until the temp file is renamed or removed, so no signal leaves one behind.
void write_file_atomically(const std::string& path, std::string_view content);

// What write_file_atomically refuses, checked up front (before a long solve): an existing
// non-regular file, or a path under /dev or /proc, which no rename can replace.
void check_output_path(const std::string& path, std::string_view what = "");

// All of `bytes` to `fd`, retrying short writes and EINTR; false on an error (errno set).
bool write_fully(int fd, std::string_view bytes);

// A cache file (an HTTP entry, a name index, a page's records) written whole to a temp file
// beside it and renamed over it; with `sync`, on disk before the rename. False when it cannot
// be written, and no temp file is left: a cache that cannot be written is not an error.
bool replace_cache_file(const std::string& path, std::string_view bytes, std::string_view more = {}, bool sync = false);

}  // namespace envlock
