#pragma once
// HTTP(S) and file:// transfers on libcurl's multi interface: several at once, retried with
// exponential backoff on 5xx, 429 (honouring Retry-After) and broken connections, resumed
// with Range where the server allows it. TLS is always verified. Proxies come from the
// usual variables (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, lower case too), credentials from the
// URL, ~/.netrc or the file $NETRC names (a lock never holds them); neither ever appears in an error message (URLs are redacted).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <string>
#include <utility>
#include <vector>

namespace envlock::fetch {

// Open connections, DNS answers and TLS sessions kept from one perform() call (or stream) to
// the next, so a resolve connects to each host once. Copies of the options share it; transfers
// of several threads may use it at once.
struct ConnectionPool;
std::shared_ptr<ConnectionPool> make_connection_pool();

// What a run fetched, for its summary ("Fetched 41 index documents, 23 metadata reads (1.8 MB)"):
// bytes as they came over the wire (before content decoding; local files count nothing) and the
// transfers that carried them; the readers above count what the transfers were for. Copies of
// the options share it.
struct FetchTally {
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<std::uint64_t> transfers{0};
    std::atomic<std::uint64_t> documents{0};        // index pages, repodata, shards
    std::atomic<std::uint64_t> metadata_reads{0};   // files whose core metadata came over the network
    std::atomic<std::uint64_t> whole_files{0};      // of them, read by downloading the whole file
};

// The credentials of an index (from its URL's userinfo), for every request to the same
// scheme, host and port: its files and metadata too, whose URLs a page gives without them
// (as pip and uv send an index's credentials to its host). Never to another origin: libcurl
// drops them on a redirect elsewhere.
struct OriginCredentials {
    std::string origin;     // url_authority(url).origin: "https://host:443"
    std::string user, password;   // percent-decoded
};

// One entry per distinct origin among `urls` whose URL carries userinfo (the first wins).
std::vector<OriginCredentials> credentials_of(const std::vector<std::string>& urls);

struct TransportOptions {
    int jobs = 8;                    // transfers in flight at once
    long connect_timeout_s = 30;
    long low_speed_limit = 1024;     // bytes/s; slower than this for low_speed_time_s aborts (and retries)
    long low_speed_time_s = 30;
    // A whole transfer, its resumes, restarts and waits included, must keep up an average of
    // min_rate bytes/s once grace_s have passed: it is given up ("too slow") at
    //   start + grace_s + size / min_rate,
    // size being what the request expects (an artifact's size in the lock), else the bytes
    // received so far. A server that drips, or answers each resume with a few bytes, ends
    // there instead of being resumed for ever. 0 turns the rule off.
    std::uint64_t min_rate = 10 * 1024;
    long grace_s = 60;
    int retries = 4;                 // attempts after the first (an attempt that made progress is free)
    long backoff_ms = 500;           // wait before the first retry; doubles each time
    long max_retry_after_s = 60;     // a longer Retry-After is capped to this
    // A body kept in memory (an index page, repodata) larger than this, after content decoding,
    // is refused: a gzip bomb or the wrong URL, never an index. conda-forge's largest
    // repodata.json is a few hundred MB.
    std::uint64_t max_body_bytes = std::uint64_t(1) << 30;
    std::string ca_bundle;           // "" -> SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, system store
    // Sent with a request whose URL has no userinfo of its own, when its origin matches (before
    // ~/.netrc, which libcurl reads only when no credentials are given).
    std::vector<OriginCredentials> credentials;
    std::shared_ptr<ConnectionPool> pool;   // null: each perform() connects afresh
    std::shared_ptr<FetchTally> tally;      // null: nothing counted
    // fsync each file streamed to `dest` before its rename. A caller that re-verifies kept
    // files before using them may turn it off: on ext4 (data=ordered) every fsync commits the
    // journal and so writes out every dirty page of the filesystem, other writers' included.
    bool sync_files = true;
    // Transfers report here as bytes arrive (index into the requests, bytes so far, the
    // expected total or 0, done) and once more when finished. Returning false cancels every
    // transfer still running (their temp files are removed; each answers "cancelled").
    std::function<bool(std::size_t index, std::uint64_t received, std::uint64_t total, bool done)> progress;
};

struct Request {
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    // Empty: keep the body in memory. Otherwise stream it into a temp file next to `dest`
    // and rename it into place once complete (and its sha256 checked).
    std::string dest;
    std::string expected_sha256;     // lowercase hex; with `dest` only
    std::string expected_md5;        // lowercase hex; with `dest` only, for locks that have no sha256
    // "bytes=-16384", "bytes=100-199": a part of the resource (RFC 9110 14.2), asked without
    // content encoding and never resumed. A server that answers 200 (it ignores ranges) is not
    // read: the transfer stops at the headers and the answer says range_refused.
    std::string range;
    // The size the body must have (an artifact's, from the lock; 0: unknown): the transfer's
    // deadline is reckoned from it, and a server that announces more is refused at once.
    std::uint64_t expected_size = 0;
};

struct Response {
    std::string url;                 // as requested
    long status = 0;                 // HTTP status; file:// answers 200, or 404 when the file is missing
    std::string body;                // when the request had no `dest`
    std::string etag, last_modified, cache_control, content_type;
    std::string sha256;              // of the bytes written to `dest`
    std::string md5;                 // likewise, when the request expected one
    std::uint64_t size = 0;          // bytes of body received (after content decoding)
    // A 206 answer's Content-Range: where the part starts and the whole resource's length.
    std::uint64_t range_start = 0, total_size = 0;
    bool range_refused = false;      // asked for a range, answered 200: body not read
    int attempts = 0;
    // Set when the transfer failed for good: network errors after the retries, 5xx/429
    // after the retries, a sha256 mismatch. Names the (redacted) URL and the cause.
    std::string error;

    bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

// Running totals over the transfers of successive perform() calls, for a progress display
// (TransportOptions::progress feeds record()): calls follow one another, so a transfer in
// flight is known by its index; a finished one is counted once. Thread-safe.
class TransferTally {
public:
    void record(std::size_t index, std::uint64_t received, bool done);
    std::size_t finished() const;
    std::uint64_t bytes() const;   // finished ones and what the ones in flight hold so far

private:
    mutable std::mutex mutex_;
    std::map<std::size_t, std::uint64_t> in_flight_;
    std::size_t finished_ = 0;
    std::uint64_t finished_bytes_ = 0;
};

// Runs every request to completion; the answers come back in the order of `requests`.
// Never throws for a failed transfer (see Response::error). Progress indexes are positions in
// `requests`.
std::vector<Response> perform(const std::vector<Request>& requests, const TransportOptions& options);

// Transfers that start as they are submitted and come back as each one finishes, in whatever
// order they finish: a caller that learns from one answer what to ask next (a page names the
// files whose metadata to read; a zip's end says where its directory is) asks it at once, while
// the others are in flight, instead of waiting for a batch to end. One libcurl multi loop runs
// on a thread of its own, so the caller's work on an answer (parsing a page, inflating
// METADATA) never holds up the transfers in flight. Each transfer behaves as in perform():
// retries and backoff, Range resume, the deadline, credentials per origin, the pool, the tally,
// at most options.jobs at once; `progress` is called on the stream's thread, with the
// transfer's id as its index. Never throws for a failed transfer.
class TransferStream {
public:
    explicit TransferStream(const TransportOptions& options);
    // Transfers still in flight are stopped and their temp files removed.
    ~TransferStream();
    TransferStream(const TransferStream&) = delete;
    TransferStream& operator=(const TransferStream&) = delete;

    // Starts a transfer; its id is the number of those submitted before it.
    std::size_t submit(Request request);

    struct Finished {
        std::size_t id;
        Response response;
    };
    // The next transfer to finish, waiting for it; nullopt once every one submitted has come back.
    std::optional<Finished> next();
    // The same, waiting at most `wait`: nullopt also when none finished by then.
    std::optional<Finished> next(std::chrono::milliseconds wait);
    // Submitted and not yet handed back by next().
    std::size_t outstanding() const;

    struct State;

private:
    std::shared_ptr<State> state_;
    std::thread thread_;
};

}  // namespace envlock::fetch
