#include "fetch/documents.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "fetch/http_cache.hpp"
#include "fetch/url.hpp"

namespace envlock::fetch {

std::string body_mismatch(BodyKind expect, std::string_view body) {
    if (expect == BodyKind::any) return "";
    auto start = body.find_first_not_of(" \t\r\n");
    std::string_view head = start == std::string_view::npos ? std::string_view() : body.substr(start, 64);
    if (expect == BodyKind::zstd) {
        // RFC 8878 3.1.1: every zstd frame starts with the magic number 0xFD2FB528, little-endian.
        if (body.size() >= 4 && body.substr(0, 4) == std::string_view("\x28\xb5\x2f\xfd", 4)) return "";
    } else if (!head.empty() && (head.front() == '{' || head.front() == '[')) {
        return "";
    }
    if (head.empty()) return "an empty body";
    if (head.front() == '<') return "an HTML page";
    return "something else";
}

namespace {

// Local files this large (a big channel's repodata) are mapped in place, not copied through
// libcurl; smaller ones keep the ordinary path. The mapped file must not be truncated while
// envlock runs (conda-index replaces repodata by rename).
constexpr std::uint64_t kMapLocalFrom = std::uint64_t(16) << 20;

bool map_large_local_file(const DocumentRequest& request, const FetchContext& ctx, Document& d) {
    std::string path = file_url_path(d.fetched_url);
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) < kMapLocalFrom) return false;
    std::error_code ec;
    PaddedBuffer mapped = PaddedBuffer::map_file(path, ec);
    if (ec || mapped.size() != static_cast<std::size_t>(st.st_size)) return false;
    if (auto looks = body_mismatch(request.expect, mapped.view()); !looks.empty()) {
        d.status = 200;
        d.error = "cannot use " + redact_url(d.fetched_url) + ": it holds " + looks + " where " +
                  (request.expect == BodyKind::zstd ? "zstd data" : "JSON") + " was expected";
        return true;
    }
    d.status = 200;
    d.data = std::move(mapped);
    // Files derived from it (a repodata name index) live in the cache, named after the path,
    // and hold the file's identity: device, inode, size, and modification and change times to
    // the nanosecond (any write changes the change time, which no program can set back).
    if (!ctx.cache_dir.empty()) {
        d.cache_path = cache_entry_path(ctx.cache_dir, d.fetched_url, "local-file").string();
        char identity[256];
        std::snprintf(identity, sizeof identity, "local file dev %llu ino %llu size %llu mtime %lld.%09ld ctime %lld.%09ld\n",
                      static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino),
                      static_cast<unsigned long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec,
                      static_cast<long long>(st.st_ctim.tv_sec), st.st_ctim.tv_nsec);
        d.cache_header = identity + d.fetched_url + "\n";
        std::filesystem::create_directories(std::filesystem::path(d.cache_path).parent_path(), ec);
    }
    return true;
}

}  // namespace

std::vector<Document> get_documents(const std::vector<DocumentRequest>& requests, const FetchContext& ctx) {
    std::vector<Document> docs(requests.size());
    std::vector<Request> wire;
    std::vector<std::size_t> wire_index;
    std::vector<std::optional<CacheEntry>> cached(requests.size());
    const std::time_t now = std::time(nullptr);

    for (std::size_t i = 0; i < requests.size(); ++i) {
        Document& d = docs[i];
        d.url = requests[i].url;
        d.fetched_url = ctx.mirrors.apply(requests[i].url);
        // A local simple index is a folder tree: "file:///srv/simple/torch/" reads its index.html.
        if (is_file_url(d.fetched_url) && d.fetched_url.back() == '/') d.fetched_url += "index.html";
        // file:// needs no cache: the file is already local.
        bool local = is_file_url(d.fetched_url);
        if (local && map_large_local_file(requests[i], ctx, d)) continue;
        if (!local) cached[i] = cache_read(ctx.cache_dir, d.fetched_url, requests[i].accept);
        auto& entry = cached[i];
        if (entry && entry->status == 200 && !body_mismatch(requests[i].expect, entry->body()).empty()) entry.reset();
        if (entry && (ctx.offline || entry->fresh(now) || (requests[i].immutable && entry->status == 200))) {
            d.status = entry->status;
            d.from_cache = true;
            d.content_type = entry->content_type;
            d.data = std::move(entry->data);
            d.body_offset = entry->body_offset;
            d.cache_path = cache_entry_path(ctx.cache_dir, d.fetched_url, requests[i].accept).string();
            d.cache_header = std::move(entry->header);
            continue;
        }
        if (ctx.offline && !local) {
            d.missing_offline = true;
            d.status = 404;
            continue;
        }
        Request r{d.fetched_url, {}, {}, {}, {}};
        if (!requests[i].accept.empty()) r.headers.emplace_back("Accept", requests[i].accept);
        if (entry) {
            if (!entry->etag.empty()) r.headers.emplace_back("If-None-Match", entry->etag);
            if (!entry->last_modified.empty()) r.headers.emplace_back("If-Modified-Since", entry->last_modified);
        }
        wire.push_back(std::move(r));
        wire_index.push_back(i);
    }

    auto responses = perform(wire, ctx.transport);
    for (std::size_t k = 0; k < responses.size(); ++k) {
        std::size_t i = wire_index[k];
        Document& d = docs[i];
        Response& r = responses[k];
        auto& entry = cached[i];
        if (r.status == 304 && entry && r.error.empty()) {
            cache_touch(ctx.cache_dir, d.fetched_url, requests[i].accept);
            d.status = entry->status;
            d.from_cache = d.revalidated = true;
            d.content_type = entry->content_type;
            d.data = std::move(entry->data);
            d.body_offset = entry->body_offset;
            d.cache_path = cache_entry_path(ctx.cache_dir, d.fetched_url, requests[i].accept).string();
            d.cache_header = std::move(entry->header);
            continue;
        }
        d.status = r.status;
        d.error = r.error;
        d.content_type = r.content_type;
        if (r.ok()) {
            if (auto looks = body_mismatch(requests[i].expect, r.body); !looks.empty()) {
                d.error = "cannot use " + redact_url(d.fetched_url) + ": it answered " + looks + " where " +
                          (requests[i].expect == BodyKind::zstd ? "zstd data" : "JSON") +
                          " was expected (a proxy or login page in the way, or a wrong mirror?)";
                continue;   // and not cached
            }
        }
        // A 404 is kept too (without its body), so --offline knows a project is not on an index.
        bool not_found = r.error.empty() && r.status == 404;
        if ((r.ok() || not_found) && !is_file_url(d.fetched_url)) {
            CacheEntry meta;
            meta.status = not_found ? 404 : 200;
            meta.etag = r.etag;
            meta.last_modified = r.last_modified;
            meta.cache_control = r.cache_control;
            if (!not_found) meta.content_type = r.content_type;
            std::string header;
            if (cache_write(ctx.cache_dir, d.fetched_url, requests[i].accept, meta, not_found ? std::string_view() : r.body,
                            &header) && !not_found) {
                d.cache_path = cache_entry_path(ctx.cache_dir, d.fetched_url, requests[i].accept).string();
                d.cache_header = std::move(header);
            }
        }
        if (r.ok()) d.data = PaddedBuffer(std::move(r.body));   // JSON parser padding reserved
    }
    return docs;
}

}  // namespace envlock::fetch
