#include "fetch/page_cache.hpp"

#include <climits>
#include <cstdint>
#include <cstring>

#include "fetch/build_id.hpp"
#include "fetch/files.hpp"
#include "fetch/http_cache.hpp"
#include "resolver/lock/sha256.hpp"

namespace envlock::fetch {

namespace fs = std::filesystem;

namespace {

// Bumped when the layout below changes; the build id covers changes to what is read.
constexpr std::string_view kMagic = "envlock page records 1\n";

void put_u64(std::string& out, std::uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
    out.append(b, 8);
}
void put(std::string& out, std::string_view s) {
    put_u64(out, s.size());
    out.append(s);
}
void put(std::string& out, const std::vector<std::string>& v) {
    put_u64(out, v.size());
    for (const auto& s : v) put(out, s);
}

// Every read is bounds-checked: a short or damaged file reads as "no records kept".
struct Reader {
    std::string_view in;
    bool ok = true;

    std::uint64_t u64() {
        if (in.size() < 8) return ok = false, 0;
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v |= std::uint64_t(static_cast<unsigned char>(in[i])) << (8 * i);
        in.remove_prefix(8);
        return v;
    }
    std::string_view view() {
        std::uint64_t n = u64();
        if (!ok || n > in.size()) return ok = false, std::string_view();
        std::string_view s = in.substr(0, n);
        in.remove_prefix(n);
        return s;
    }
    void get(std::string& s) { s = view(); }
    void get(std::vector<std::string>& v) {
        std::uint64_t n = u64();
        if (!ok || n > in.size() / 8) return void(ok = false);   // each string takes 8 bytes at least
        v.resize(n);
        for (auto& s : v) get(s);
    }
};

// Every field of the record, in declaration order. A field added to IndexRecord must be added
// here too (and kMagic bumped), or a cached page would lose it.
static_assert(sizeof(IndexRecord) == 688, "IndexRecord changed: keep every field in page records");
template <class S, class R>
void fields(S&& s, R& r) {
    s(r.name), s(r.version), s(r.build), s(r.filename), s(r.url), s(r.sha256), s(r.md5), s(r.channel), s(r.subdir), s(r.index);
    s(r.depends), s(r.constrains), s(r.track_features), s(r.features), s(r.noarch), s(r.license);
    s(r.requires_python), s(r.yanked_reason), s(r.metadata_url), s(r.git), s(r.rev);
}

fs::path page_path(const fs::path& cache_dir, const PageKey& key) {
    std::string id = sha256_hex(key.kind + "\n" + key.url + "\n" + key.project);
    return cache_dir / "pages" / id.substr(0, 2) / (id + ".records");
}

}  // namespace

std::string page_records_bytes(const PageKey& key, const IndexRecords& records) {
    std::string out(kMagic);
    put(out, binary_build_id());
    put(out, key.kind);
    put(out, key.url);
    put(out, key.project);
    put(out, key.identity);
    put_u64(out, records.size());
    for (const auto& r : records) {
        put_u64(out, static_cast<std::uint64_t>(r.ecosystem));
        put_u64(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(r.build_number)));
        put_u64(out, r.size);
        put_u64(out, r.timestamp);
        put_u64(out, (r.yanked ? 1u : 0u) | (r.depends_known ? 2u : 0u));
        fields([&](const auto& f) { put(out, f); }, r);
    }
    put_u64(out, out.size());   // the length written: a file cut short anywhere is refused
    return out;
}

std::optional<IndexRecords> page_records_from_bytes(std::string_view bytes, const PageKey& key) {
    if (bytes.substr(0, kMagic.size()) != kMagic || bytes.size() < kMagic.size() + 8) return std::nullopt;
    Reader tail{bytes.substr(bytes.size() - 8)};
    if (tail.u64() != bytes.size() - 8) return std::nullopt;
    Reader in{bytes.substr(kMagic.size(), bytes.size() - 8 - kMagic.size())};
    if (in.view() != binary_build_id() || in.view() != key.kind || in.view() != key.url || in.view() != key.project ||
        in.view() != key.identity || !in.ok)
        return std::nullopt;
    std::uint64_t count = in.u64();
    if (!in.ok || count > in.in.size() / 64) return std::nullopt;   // a record takes far more than 64 bytes
    IndexRecords records(count);
    for (auto& r : records) {
        std::uint64_t ecosystem = in.u64();
        if (ecosystem > static_cast<std::uint64_t>(Ecosystem::source)) return std::nullopt;
        r.ecosystem = static_cast<Ecosystem>(ecosystem);
        auto build_number = static_cast<std::int64_t>(in.u64());
        if (build_number < INT_MIN || build_number > INT_MAX) return std::nullopt;
        r.build_number = static_cast<int>(build_number);
        r.size = in.u64();
        r.timestamp = in.u64();
        std::uint64_t flags = in.u64();
        if (flags > 3) return std::nullopt;   // only what page_records_bytes writes is read
        r.yanked = flags & 1;
        r.depends_known = flags & 2;
        fields([&](auto& f) { in.get(f); }, r);
        if (!in.ok) return std::nullopt;
    }
    if (!in.in.empty()) return std::nullopt;
    return records;
}

std::optional<IndexRecords> load_page_records(const fs::path& cache_dir, const PageKey& key) {
    if (cache_dir.empty() || key.identity.empty()) return std::nullopt;
    std::string bytes = read_file_padded(page_path(cache_dir, key));
    if (bytes.empty()) return std::nullopt;
    return page_records_from_bytes(bytes, key);
}

bool save_page_records(const fs::path& cache_dir, const PageKey& key, const IndexRecords& records) {
    if (cache_dir.empty() || key.identity.empty()) return false;
    fs::path path = page_path(cache_dir, key);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    bool saved = replace_cache_file(path.string(), page_records_bytes(key, records));
    sweep_stale_temps(path.parent_path(), kStaleTempAge);   // temps of writers that died (no lock here)
    return saved;
}

}  // namespace envlock::fetch
