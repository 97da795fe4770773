#include "fetch/documents.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "fetch/http_cache.hpp"
#include "fetch/url.hpp"

namespace envlock::fetch {

namespace {

// The cache-control a stamp records for a document requested as immutable (named by its hash).
constexpr std::string_view kImmutable = "envlock: immutable";

std::string stat_stamp(const char* kind, const struct stat& st) {
    return std::string(kind) + " " + std::to_string(st.st_size) + " " +
           std::to_string(static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec) + " " +
           std::to_string(st.st_ino);
}

// Device, inode, size, and modification and change times to the nanosecond: any write changes
// the change time, which no program can set back.
std::string local_identity(const struct stat& st, const std::string& url) {
    char identity[256];
    std::snprintf(identity, sizeof identity, "local file dev %llu ino %llu size %llu mtime %lld.%09ld ctime %lld.%09ld\n",
                  static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino),
                  static_cast<unsigned long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec,
                  static_cast<long long>(st.st_ctim.tv_sec), st.st_ctim.tv_nsec);
    return identity + url + "\n";
}

std::string file_stamp(const std::string& file_url) {
    struct stat st{};
    if (::stat(file_url_path(file_url).c_str(), &st) != 0) return "file missing";
    return stat_stamp("file", st);
}

// The entry file's identity without its mtime, which a 304 touches.
std::string entry_stamp(const std::filesystem::path& cache_dir, const std::string& url, const std::string& accept,
                        struct stat* out = nullptr) {
    struct stat st{};
    if (cache_dir.empty() || ::stat(cache_entry_path(cache_dir, url, accept).c_str(), &st) != 0) return "";
    if (out) *out = st;
    return "http " + std::to_string(st.st_size) + " " + std::to_string(st.st_ino);
}

void log_read(const FetchContext& ctx, const DocumentRequest& request, const Document& d, std::string stamp,
              const std::string& etag = {}, const std::string& last_modified = {}, const std::string& cache_control = {}) {
    if (!ctx.read_log) return;
    DocumentStamp s{request.url, d.fetched_url, request.accept, std::move(stamp), d.status, etag, last_modified, cache_control};
    std::lock_guard lock(ctx.read_log->mutex);
    ctx.read_log->read.push_back(std::move(s));
}

}  // namespace

std::string_view body_kind_name(BodyKind kind) {
    switch (kind) {
    case BodyKind::json: return "JSON";
    case BodyKind::zstd: return "zstd data";
    case BodyKind::simple_page: return "a simple index page (PEP 691 JSON or PEP 503 HTML)";
    default: return "a document";
    }
}

namespace {

// A form element anywhere in the page: a login or consent page, never a list of files.
bool holds_form(std::string_view html) {
    for (std::size_t at = html.find('<'); at != std::string_view::npos; at = html.find('<', at + 1)) {
        std::string_view tag = html.substr(at + 1, 5);
        if (tag.size() == 5 && (tag[0] | 0x20) == 'f' && (tag[1] | 0x20) == 'o' && (tag[2] | 0x20) == 'r' && (tag[3] | 0x20) == 'm' &&
            (tag[4] == '>' || tag[4] == ' ' || tag[4] == '\t' || tag[4] == '\n' || tag[4] == '\r'))
            return true;
    }
    return false;
}

// An anchor (<a ...>) anywhere in the page: what a simple index's project page is made of.
bool holds_link(std::string_view html) {
    for (std::size_t at = html.find('<'); at != std::string_view::npos; at = html.find('<', at + 1)) {
        if (at + 2 < html.size() && (html[at + 1] | 0x20) == 'a' &&
            (html[at + 2] == ' ' || html[at + 2] == '\t' || html[at + 2] == '\n' || html[at + 2] == '\r' || html[at + 2] == '>'))
            return true;
    }
    return false;
}

}  // namespace

std::string body_mismatch(BodyKind expect, std::string_view body) {
    if (expect == BodyKind::any) return "";
    auto start = body.find_first_not_of(" \t\r\n");
    std::string_view head = start == std::string_view::npos ? std::string_view() : body.substr(start, 64);
    if (expect == BodyKind::simple_page) {
        // PEP 691: an object with "meta" (api-version) and "files"; an error object is neither.
        if (!head.empty() && head.front() == '{')
            return body.find("\"files\"") != std::string_view::npos || body.find("\"meta\"") != std::string_view::npos
                       ? ""
                       : "JSON that is no project page (no \"files\", no \"meta\")";
        // PEP 503: links, or at least the repository-version meta an empty project's page has.
        if (!head.empty() && head.front() == '<') {
            if (holds_form(body)) return "a page with a form (a login page?)";
            if (holds_link(body) || body.find("pypi:repository-version") != std::string_view::npos) return "";
            return "an HTML page with no links and no pypi:repository-version (an error page?)";
        }
    } else if (expect == BodyKind::zstd) {
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
                  std::string(body_kind_name(request.expect)) + " was expected";
        return true;
    }
    d.status = 200;
    d.data = std::move(mapped);
    // Files derived from it (a repodata name index) live in the cache, named after the path,
    // and hold the file's identity.
    d.identity = local_identity(st, d.fetched_url);
    if (!ctx.cache_dir.empty()) {
        d.cache_path = cache_entry_path(ctx.cache_dir, d.fetched_url, "local-file").string();
        d.cache_header = d.identity;
        std::filesystem::create_directories(std::filesystem::path(d.cache_path).parent_path(), ec);
    }
    return true;
}

}  // namespace

DocumentFetch start_document(const DocumentRequest& request, const FetchContext& ctx) {
    DocumentFetch f;
    f.request = request;
    Document& d = f.document;
    d.url = request.url;
    d.fetched_url = ctx.mirrors.apply(request.url);
    // A local simple index is a folder tree: "file:///srv/simple/torch/" reads its index.html.
    if (is_file_url(d.fetched_url) && d.fetched_url.back() == '/') d.fetched_url += "index.html";
    // file:// needs no cache: the file is already local.
    bool local = is_file_url(d.fetched_url);
    // Stamped before it is read: a file changed in between reads as changed next time (and
    // its records, kept under this identity, are not found next time either).
    if (local) {
        struct stat st{};
        bool exists = ::stat(file_url_path(d.fetched_url).c_str(), &st) == 0;
        if (ctx.read_log) log_read(ctx, request, d, exists ? stat_stamp("file", st) : "file missing");
        if (exists) d.identity = local_identity(st, d.fetched_url);
    }
    if (local && map_large_local_file(request, ctx, d)) return f;
    auto& entry = f.cached;
    if (!local) entry = cache_read(ctx.cache_dir, d.fetched_url, request.accept);
    const std::time_t now = std::time(nullptr);
    if (entry && entry->status == 200 && !body_mismatch(request.expect, entry->body()).empty()) entry.reset();
    bool known_absent = entry && entry->status == 404 && request.absent_for_s > 0 && now - entry->validated_at < request.absent_for_s;
    if (entry && (ctx.offline || entry->fresh(now) || known_absent || (request.immutable && entry->status == 200))) {
        d.status = entry->status;
        d.from_cache = true;
        d.content_type = entry->content_type;
        d.data = std::move(entry->data);
        d.body_offset = entry->body_offset;
        d.cache_path = cache_entry_path(ctx.cache_dir, d.fetched_url, request.accept).string();
        d.cache_header = std::move(entry->header);
        d.identity = d.cache_header;
        // A body named by its own hash never changes: its entry file is all there is to check.
        log_read(ctx, request, d, entry_stamp(ctx.cache_dir, d.fetched_url, request.accept), entry->etag, entry->last_modified,
                 request.immutable ? std::string(kImmutable) : entry->cache_control);
        return f;
    }
    if (ctx.offline && !local) {
        d.missing_offline = true;
        d.status = 404;
        log_read(ctx, request, d, "");
        return f;
    }
    Request r{d.fetched_url, {}, {}, {}, {}, {}};
    if (!request.accept.empty()) r.headers.emplace_back("Accept", request.accept);
    if (entry) {
        if (!entry->etag.empty()) r.headers.emplace_back("If-None-Match", entry->etag);
        if (!entry->last_modified.empty()) r.headers.emplace_back("If-Modified-Since", entry->last_modified);
    }
    f.wire = std::move(r);
    return f;
}

namespace {

// The kept entry as the answer: after a 304, or a 200 whose body and headers are the entry's own.
void answer_from_entry(DocumentFetch& f, CacheEntry& entry, const FetchContext& ctx) {
    Document& d = f.document;
    cache_touch(ctx.cache_dir, d.fetched_url, f.request.accept);
    d.status = entry.status;
    d.from_cache = d.revalidated = true;
    d.content_type = entry.content_type;
    d.data = std::move(entry.data);
    d.body_offset = entry.body_offset;
    d.cache_path = cache_entry_path(ctx.cache_dir, d.fetched_url, f.request.accept).string();
    d.cache_header = std::move(entry.header);
    d.identity = d.cache_header;
    log_read(ctx, f.request, d, entry_stamp(ctx.cache_dir, d.fetched_url, f.request.accept), entry.etag, entry.last_modified,
             entry.cache_control);
}

// An index without validators (the live PyPI here sends no ETag or Last-Modified) answers every
// request with the whole page: when the page is byte for byte the one kept, it counts as a 304,
// so what was read from the kept body (a page's records) is used again, not read again.
bool same_as_entry(const Response& r, const CacheEntry& entry) {
    return entry.status == 200 && r.status == 200 && r.etag == entry.etag && r.last_modified == entry.last_modified &&
           r.cache_control == entry.cache_control && r.content_type == entry.content_type && r.body == entry.body();
}

}  // namespace

void finish_document(DocumentFetch& f, Response r, const FetchContext& ctx) {
    Document& d = f.document;
    const DocumentRequest& request = f.request;
    auto& entry = f.cached;
    f.wire.reset();
    if (ctx.transport.tally) ctx.transport.tally->documents += 1;
    if (r.error.empty() && entry && (r.status == 304 || same_as_entry(r, *entry))) return answer_from_entry(f, *entry, ctx);
    d.status = r.status;
    d.error = r.error;
    d.content_type = r.content_type;
    // A local simple page is the user's own input: its reader names what is wrong in it (exit
    // 2). A server's answer that is no index is the network's fault (exit 3), and not kept.
    const bool local_page = request.expect == BodyKind::simple_page && is_file_url(d.fetched_url);
    if (r.ok() && !local_page) {
        if (auto looks = body_mismatch(request.expect, r.body); !looks.empty()) {
            d.error = "cannot use " + redact_url(d.fetched_url) + ": it answered " + looks + " where " +
                      std::string(body_kind_name(request.expect)) + " was expected (a proxy or login page in the way, or a wrong mirror?)";
            log_read(ctx, request, d, "");
            return;   // and not cached
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
        bool cached = cache_write(ctx.cache_dir, d.fetched_url, request.accept, meta, not_found ? std::string_view() : r.body, &header);
        if (cached && !not_found) {
            d.cache_path = cache_entry_path(ctx.cache_dir, d.fetched_url, request.accept).string();
            d.cache_header = std::move(header);
        }
        if (ctx.read_log)
            log_read(ctx, request, d, cached ? entry_stamp(ctx.cache_dir, d.fetched_url, request.accept) : "", r.etag, r.last_modified,
                     r.cache_control);
    } else if (!is_file_url(d.fetched_url)) {
        log_read(ctx, request, d, "");
    }
    if (r.ok()) d.data = PaddedBuffer(std::move(r.body));   // JSON parser padding reserved
    if (!is_file_url(d.fetched_url)) d.identity = d.cache_header;
}

std::vector<Document> get_documents(const std::vector<DocumentRequest>& requests, const FetchContext& ctx) {
    std::vector<DocumentFetch> fetches;
    std::vector<Request> wire;
    std::vector<std::size_t> wire_index;
    fetches.reserve(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        fetches.push_back(start_document(requests[i], ctx));
        if (fetches.back().wire) {
            wire.push_back(*fetches.back().wire);
            wire_index.push_back(i);
        }
    }
    auto responses = perform(wire, ctx.transport);
    for (std::size_t k = 0; k < responses.size(); ++k) finish_document(fetches[wire_index[k]], std::move(responses[k]), ctx);
    std::vector<Document> docs;
    docs.reserve(fetches.size());
    for (auto& f : fetches) docs.push_back(std::move(f.document));
    return docs;
}

}  // namespace envlock::fetch

namespace envlock::fetch {

std::vector<std::string> changed_documents(const std::vector<DocumentStamp>& read, const FetchContext& ctx) {
    std::vector<std::string> changed;
    std::vector<Request> wire;
    std::vector<const DocumentStamp*> asked;
    const std::time_t now = std::time(nullptr);
    for (const auto& d : read) {
        std::string fetched = ctx.mirrors.apply(d.url);
        if (is_file_url(fetched) && !fetched.empty() && fetched.back() == '/') fetched += "index.html";
        if (d.stamp.empty() || fetched != d.fetched_url) {
            changed.push_back(redact_url(d.url));
            continue;
        }
        if (is_file_url(fetched)) {
            if (file_stamp(fetched) != d.stamp) changed.push_back(redact_url(d.url));
            continue;
        }
        struct stat st{};
        if (entry_stamp(ctx.cache_dir, fetched, d.accept, &st) != d.stamp) {
            changed.push_back(redact_url(d.url));
            continue;
        }
        auto max_age = cache_max_age(d.cache_control);
        if (ctx.offline || d.cache_control == kImmutable || (max_age && *max_age > 0 && now - st.st_mtim.tv_sec < *max_age)) continue;
        Request r{fetched, {}, {}, {}, {}, {}};
        if (!d.accept.empty()) r.headers.emplace_back("Accept", d.accept);
        if (!d.etag.empty()) r.headers.emplace_back("If-None-Match", d.etag);
        if (!d.last_modified.empty()) r.headers.emplace_back("If-Modified-Since", d.last_modified);
        if (d.status != 404 && d.etag.empty() && d.last_modified.empty()) {
            changed.push_back(redact_url(d.url));   // nothing to revalidate with: only a full read tells
            continue;
        }
        wire.push_back(std::move(r));
        asked.push_back(&d);
    }
    if (!changed.empty()) return changed;   // the full path reads again anyway
    auto responses = perform(wire, ctx.transport);
    for (std::size_t k = 0; k < responses.size(); ++k) {
        const Response& r = responses[k];
        const DocumentStamp& d = *asked[k];
        if (r.error.empty() && r.status == 304) {
            cache_touch(ctx.cache_dir, d.fetched_url, d.accept);
            continue;
        }
        if (r.error.empty() && r.status == 404 && d.status == 404) continue;
        changed.push_back(redact_url(d.url));
    }
    return changed;
}

}  // namespace envlock::fetch
