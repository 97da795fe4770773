#pragma once
// Whole-file reads and atomic writes: a write goes to a temp file beside the target and is
// renamed into place, so a reader never sees half a file and a failure loses nothing.
#include <chrono>
#include <cstddef>
#include <filesystem>
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

// Sharing a folder (a cache) between processes on many hosts, over NFS too; the rules are
// docs/architecture.md's "Sharing a cache".

// "<host>-<pid>-<random>": the tail of a temp name that no other writer picks, whichever host
// it runs on (pids repeat across hosts), and that says whose it is, so a sweep can tell a
// temp of a process that is gone from one still being written.
std::string unique_temp_tail();

// Whether a file name is one of envlock's temp names: ".tmp-", ".part-" or ".gone-" in it.
bool is_temp_name(std::string_view name);

// How long a temp must lie untouched (its mtime) before a sweep takes its writer for dead,
// where no lock says so: writers touch their temps every few seconds at most.
inline constexpr std::chrono::seconds kStaleTempAge{3600};

// Removes the temps (is_temp_name; with `prefix`, only names starting with it) in `dir` whose
// writers are gone: a temp named for this host by a pid that no longer runs, or one untouched
// for `max_age`; with max_age 0, every temp (the caller holds the lock every writer of that
// folder holds, so none of them is live). Never a final name. Returns how many it removed.
std::size_t sweep_stale_temps(const std::filesystem::path& dir, std::chrono::seconds max_age,
                              std::string_view prefix = {});

// An exclusive lock on the whole open file `fd` that works over NFS and that only its own
// descriptor's close releases: an open file description lock (fcntl F_OFD_SETLKW), not flock
// (which NFS clients emulate, or not, by version) nor a POSIX record lock (dropped when any
// descriptor of the file in the process closes). The kernel, or the NFS server once a dead
// host's lease runs out, drops it when its holder dies. With `wait` false, returns false at
// once when another holds it; false with errno set on an error.
bool lock_whole_file(int fd, bool wait);

}  // namespace envlock
