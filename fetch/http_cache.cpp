#include "fetch/http_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <nlohmann/json.hpp>

#include "fetch/files.hpp"
#include "fetch/url.hpp"
#include "resolver/lock/sha256.hpp"

namespace envlock::fetch {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "envlock-http-cache 1\n";
constexpr std::size_t kPadding = 64;

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

fs::path default_cache_dir() {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "envlock";
    if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "envlock";
    return fs::temp_directory_path() / "envlock-cache";
}

std::optional<long> cache_max_age(std::string_view cc) {
    std::string v = lower(cc);
    if (v.find("no-cache") != std::string::npos || v.find("no-store") != std::string::npos) return 0;
    auto pos = v.find("max-age=");
    if (pos == std::string::npos) return std::nullopt;
    return std::strtol(v.c_str() + pos + 8, nullptr, 10);
}

bool CacheEntry::fresh(std::time_t now) const {
    auto age = cache_max_age(cache_control);
    return age && *age > 0 && now - validated_at < *age;
}

fs::path cache_entry_path(const fs::path& dir, std::string_view url, std::string_view key) {
    std::string id = sha256_hex(std::string(url) + "\n" + std::string(key));
    return dir / "http" / id.substr(0, 2) / (id + ".entry");
}

std::string read_file_padded(const fs::path& path) {
    std::string data;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return data;
    struct stat st{};
    if (::fstat(fd, &st) == 0) {
        data.reserve(static_cast<std::size_t>(st.st_size) + kPadding);
        data.resize(static_cast<std::size_t>(st.st_size));
        std::size_t got = 0;
        while (got < data.size()) {
            ssize_t n = ::read(fd, data.data() + got, data.size() - got);
            if (n <= 0) break;
            got += static_cast<std::size_t>(n);
        }
        data.resize(got);
    }
    ::close(fd);
    return data;
}

std::optional<CacheEntry> cache_read(const fs::path& dir, std::string_view url, std::string_view key) {
    if (dir.empty()) return std::nullopt;
    fs::path path = cache_entry_path(dir, url, key);
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    CacheEntry e;
    std::error_code ec;
    // Mapped, not read: a 264 MB repodata entry whose name index is current is never read whole.
    e.data = PaddedBuffer::map_file(path, ec);
    if (ec) return std::nullopt;
    e.validated_at = st.st_mtim.tv_sec;
    std::string_view all = e.data.view();
    if (all.substr(0, kMagic.size()) != kMagic) return std::nullopt;
    auto meta_end = all.find('\n', kMagic.size());
    if (meta_end == std::string_view::npos) return std::nullopt;
    try {
        auto meta = nlohmann::json::parse(all.substr(kMagic.size(), meta_end - kMagic.size()));
        e.status = meta.value("status", 200L);
        e.etag = meta.value("etag", "");
        e.last_modified = meta.value("last_modified", "");
        e.cache_control = meta.value("cache_control", "");
        e.content_type = meta.value("content_type", "");
        e.body_offset = meta_end + 1;
        e.header = std::string(all.substr(0, e.body_offset));
        // A body of another length than recorded is damage, not data.
        if (meta.value("size", std::uint64_t{0}) != all.size() - e.body_offset) return std::nullopt;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
    return e;
}

bool cache_write(const fs::path& dir, std::string_view url, std::string_view key, const CacheEntry& meta,
                 std::string_view body, std::string* written_header) {
    if (dir.empty() || lower(meta.cache_control).find("no-store") != std::string::npos) return false;
    fs::path path = cache_entry_path(dir, url, key);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    // A random id per write: files derived from this body (a name index) name the write they
    // were made from, so a later entry for the URL, whatever its size, never passes for it.
    char id[33];
    std::snprintf(id, sizeof id, "%016llx%016llx", static_cast<unsigned long long>(rng()), static_cast<unsigned long long>(rng()));
    nlohmann::json j = {{"url", redact_url(url)},          {"status", meta.status}, {"etag", meta.etag},
                        {"last_modified", meta.last_modified}, {"cache_control", meta.cache_control},
                        {"content_type", meta.content_type},   {"size", body.size()}, {"id", id}};
    std::string header = std::string(kMagic) + j.dump() + "\n";
    // Two write() calls for the whole entry, not one per 4 KiB of a stdio buffer.
    if (!replace_cache_file(path.string(), header, body)) return false;
    // Temps beside it of writers that died (no lock covers the HTTP cache): removed by age.
    sweep_stale_temps(path.parent_path(), kStaleTempAge);
    if (written_header) *written_header = std::move(header);
    return true;
}

void cache_touch(const fs::path& dir, std::string_view url, std::string_view key) {
    if (dir.empty()) return;
    fs::path path = cache_entry_path(dir, url, key);
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
}

}  // namespace envlock::fetch
