#pragma once
// Index documents (repodata, simple pages, find-links pages, metadata files) fetched through
// the mirrors and the HTTP cache: a fresh cache entry is used as is, a stale one is
// revalidated with If-None-Match / If-Modified-Since (a 304 keeps it), and offline mode
// answers from the cache alone.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fetch/http_cache.hpp"
#include "fetch/padded_buffer.hpp"
#include "fetch/settings.hpp"

namespace envlock::fetch {

// What a body must look like to be used and cached at all: a proxy's login page or an error
// page answered with 200 where repodata was asked for is a network failure, not an index.
// simple_page: what a simple index serves for a project, PEP 691 JSON or PEP 503 HTML, which
// never holds a form (a login page answered with 200 does).
enum class BodyKind { any, json, zstd, simple_page };

// What a body of that kind is called in a message ("JSON", "zstd data", ...).
std::string_view body_kind_name(BodyKind kind);

struct DocumentRequest {
    std::string url;       // as the user or the lock names it; mirrors apply underneath
    std::string accept;    // Accept header ("" for none); part of the cache key
    BodyKind expect = BodyKind::any;
    // The URL names its content (a CEP 16 shard, by its sha256): a cached answer is used
    // without asking the server again, as `Cache-Control: immutable` says.
    bool immutable = false;
    // A cached 404 younger than this many seconds is the answer without asking again: the
    // CEP 16 probe, so that a channel without shards costs no extra round trip on every run.
    long absent_for_s = 0;
};

// "" when `body` can be of that kind, else what it looks like instead ("an HTML page").
std::string body_mismatch(BodyKind expect, std::string_view body);

struct Document {
    std::string url;          // as requested
    std::string fetched_url;  // after mirrors (redact before showing)
    long status = 0;          // 200 (from the network or the cache), 404, ...
    std::string content_type;
    bool from_cache = false;
    bool revalidated = false;     // the server answered 304
    bool missing_offline = false; // offline and not in the cache
    std::string error;            // network failure after retries (see Response::error)
    // Body storage (a cache entry mapped, or what the network sent); body() views into it,
    // with JSON padding after it.
    PaddedBuffer data;
    std::size_t body_offset = 0;
    // The HTTP cache entry that holds this body, and its header line (CacheEntry::header),
    // which files derived from the body (a repodata name index) are kept beside and checked
    // against. For a large file:// body mapped in place: a path in the cache named after the
    // file, and the file's identity (stat). Empty when there is nowhere to keep them.
    std::string cache_path, cache_header;
    // What names these exact bytes: a local file's identity (device, inode, size, modification
    // and change times) with its URL, or the cache entry's header (a random id per write).
    // What is derived from the body (an index page's records) is kept under it. Empty: unknown.
    std::string identity;

    std::string_view body() const { return data.view().substr(body_offset); }
    bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

// get_documents one document at a time, for a caller that streams its transfers
// (TransferStream): start_document answers from the cache or a local file when it can, else
// says the transfer to make (`wire`); finish_document takes that transfer's answer.
struct DocumentFetch {
    DocumentRequest request;
    Document document;                 // the answer, once `wire` is empty
    std::optional<Request> wire;       // the transfer to make
    std::optional<CacheEntry> cached;  // the entry a 304 (or the same body again) keeps
};
DocumentFetch start_document(const DocumentRequest& request, const FetchContext& ctx);
void finish_document(DocumentFetch& fetch, Response response, const FetchContext& ctx);

// Fetches all of them in parallel (ctx.transport.jobs at a time). Never throws for a
// failed transfer; callers decide what a 404 or an error means for them. With ctx.read_log
// set, each document used is stamped into it.
std::vector<Document> get_documents(const std::vector<DocumentRequest>& requests, const FetchContext& ctx);

// What identifies the version of a document a resolve used, so a later resolve can tell
// that nothing it read changed without reading it again (the re-resolve that reuses a lock).
// file://: the file's size, mtime (ns) and inode, taken before it is read, or "missing".
// HTTP: the status and validators of the cache entry used, and that entry file's inode and
// size (entries are replaced by rename, never rewritten; a 304 only touches the mtime).
// An empty stamp means "cannot tell" (no cache entry was written): always changed.
struct DocumentStamp {
    std::string url;            // as requested
    std::string fetched_url;    // after mirrors
    std::string accept;
    std::string stamp;
    long status = 0;
    std::string etag, last_modified, cache_control;
};

struct DocumentLog {
    std::mutex mutex;
    std::vector<DocumentStamp> read;
};

// The documents among `read` that changed since they were stamped, or whose answer cannot be
// known without reading them (redacted URLs; empty: none). file:// documents are stat'ed;
// an HTTP entry still fresh (Cache-Control max-age) or offline is unchanged when its entry
// file is the one stamped; otherwise it is revalidated with a conditional request, and only a
// 304 (or 404 again where 404 was the answer) keeps it. A mirror that now maps a URL elsewhere
// is a change. Network failures count as changes (the full path reports them).
std::vector<std::string> changed_documents(const std::vector<DocumentStamp>& read, const FetchContext& ctx);

}  // namespace envlock::fetch
