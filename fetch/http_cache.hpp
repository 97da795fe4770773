#pragma once
// The HTTP cache: one file per URL under <cache dir>/http/, holding the validators
// (ETag, Last-Modified), Cache-Control and the body. Entries are written to a temp file and
// renamed into place, so several envlock processes can share a cache without locks: a
// reader sees the old entry or the new one, never a mix, and never a truncated body (the
// stored length is checked on every read). The file's mtime is when the entry was last
// known fresh; a 304 only touches it.
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "fetch/padded_buffer.hpp"

namespace envlock::fetch {

// $XDG_CACHE_HOME/envlock, else ~/.cache/envlock.
std::filesystem::path default_cache_dir();

struct CacheEntry {
    long status = 200;     // 200, or 404: "not on this index" is an answer worth keeping too
    std::string etag, last_modified, cache_control, content_type;
    std::time_t validated_at = 0;
    // The entry file's bytes, mapped (pages are read only when used); the body is
    // data[body_offset..], with JSON parsers' padding after it.
    PaddedBuffer data;
    std::size_t body_offset = 0;
    // The entry's header line, which names this one write of the entry (it holds a random
    // id): what a file derived from the body (a name index) records to know it is current.
    std::string header;

    std::string_view body() const { return data.view().substr(body_offset); }
    // Cache-Control max-age still running (no-cache and no max-age mean "revalidate").
    bool fresh(std::time_t now) const;
};

// `key` distinguishes representations of one URL (e.g. the Accept header sent).
std::filesystem::path cache_entry_path(const std::filesystem::path& cache_dir, std::string_view url,
                                       std::string_view key = {});

std::optional<CacheEntry> cache_read(const std::filesystem::path& cache_dir, std::string_view url,
                                     std::string_view key = {});
// Atomic (temp + rename). Honours "no-store" by storing nothing. Returns false when the cache
// cannot be written (the fetch still succeeds; a read-only cache is not fatal). `header`, when
// given, receives the header line written (see CacheEntry::header). The entry is written in
// two calls and not fsynced: one torn by a crash fails cache_read's size check and is fetched again.
bool cache_write(const std::filesystem::path& cache_dir, std::string_view url, std::string_view key,
                 const CacheEntry& meta, std::string_view body, std::string* header = nullptr);
// After a 304: the stored body is current as of now.
void cache_touch(const std::filesystem::path& cache_dir, std::string_view url, std::string_view key = {});

// Max-age in seconds from a Cache-Control value; nullopt when absent; 0 for no-cache.
std::optional<long> cache_max_age(std::string_view cache_control);

// A file read whole into a string with spare capacity after it (JSON parser padding).
std::string read_file_padded(const std::filesystem::path& path);

}  // namespace envlock::fetch
