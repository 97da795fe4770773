#include "fetch/transport.hpp"

#include "fetch/files.hpp"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "fetch/url.hpp"
#include "resolver/lock/sha256.hpp"

namespace envlock::fetch {

// The share handle is made by the first perform() that uses the pool, so a command that
// never transfers anything never loads libcurl (fetch/curl_loader.cpp).
struct ConnectionPool {
    static constexpr std::size_t kLocks = 8;   // one per curl_lock_data kind (CURL_LOCK_DATA_LAST is 8)
    CURLSH* share = nullptr;
    std::mutex locks[kLocks];
    ~ConnectionPool() {
        if (share) curl_share_cleanup(share);
    }
};

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr std::size_t kFileBuffer = std::size_t(1) << 20;

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string ca_bundle_from(const TransportOptions& o) {
    if (!o.ca_bundle.empty()) return o.ca_bundle;
    for (const char* var : {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"})
        if (const char* v = std::getenv(var); v && *v) return v;
    return {};
}

// Beside the destination, named for this host and process (fetch/files): a download killed
// halfway leaves only this name, which nothing reads and a later sweep removes.
std::string temp_name_for(const std::string& dest) { return dest + ".part-" + unique_temp_tail(); }

bool retryable(CURLcode c) {
    switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_BAD_CONTENT_ENCODING:
        return true;
    default:
        return false;
    }
}

// MD5 while streaming, for locks whose index published only md5 (old conda channels).
struct Md5 {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    Md5() { EVP_DigestInit_ex(ctx, EVP_md5(), nullptr); }
    ~Md5() { EVP_MD_CTX_free(ctx); }
    Md5(const Md5&) = delete;
    Md5& operator=(const Md5&) = delete;
    void update(std::string_view bytes) { EVP_DigestUpdate(ctx, bytes.data(), bytes.size()); }
    std::string hex_digest() {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        EVP_DigestFinal_ex(ctx, digest, &len);
        static const char* hex = "0123456789abcdef";
        std::string out;
        for (unsigned i = 0; i < len; ++i) out += hex[digest[i] >> 4], out += hex[digest[i] & 15];
        return out;
    }
};

struct Transfer {
    std::size_t index = 0;
    const Request* request = nullptr;
    Response* response = nullptr;
    const TransportOptions* options = nullptr;
    CURL* easy = nullptr;
    curl_slist* header_list = nullptr;
    char errbuf[CURL_ERROR_SIZE] = {};

    // Body so far (memory) or the temp file (dest), written through a 1 MiB buffer: a 500 MB
    // download is 500 write() calls, not 61,000 of 4-12 KiB.
    std::FILE* file = nullptr;
    std::unique_ptr<char[]> file_buffer;
    std::string temp_path;
    std::unique_ptr<Sha256> hash;
    std::unique_ptr<Md5> md5;      // only when the request expects one
    std::uint64_t held = 0;        // body bytes kept, across resumed attempts
    std::uint64_t best = 0;        // most bytes ever held: progress is measured against it
    std::uint64_t resume_from = 0; // Range start of the current attempt
    bool body_started = false;     // first body byte of this attempt seen
    bool encoded = false;          // Content-Encoding applied: decoded offsets cannot be resumed
    bool write_failed = false;
    bool cancelled = false;
    bool too_large = false;
    bool range_refused = false;
    std::uint64_t expected_total = 0;   // Content-Length of this attempt plus its resume point
    long retry_after_s = -1;
    int failures = 0;
    Clock::time_point ready_at{};
    bool done = false;
    // The whole transfer's clock: set when it first starts, kept across resumes and retries.
    Clock::time_point started{};
    bool past_deadline = false;    // this attempt was stopped by the deadline
    bool oversized = false;        // the server announced more than the request expects
    std::uint64_t announced = 0;   // this attempt's Content-Length plus its resume point (0: not said)
    int restarts = 0;              // resumes answered with the whole file (Range ignored): fetched again from byte 0

    // When the transfer is given up as too slow (see TransportOptions::min_rate); max() for never.
    Clock::time_point deadline() const {
        if (options->min_rate == 0 || started == Clock::time_point{}) return Clock::time_point::max();
        const std::uint64_t size = std::max({request->expected_size, held, best});
        const double seconds = double(options->grace_s) + double(size) / double(options->min_rate);
        return started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    }

    void reset_body() {
        held = 0;
        response->body.clear();
        hash = std::make_unique<Sha256>();
        if (md5) md5 = std::make_unique<Md5>();
        if (file) {
            std::fflush(file);
            if (ftruncate(fileno(file), 0) != 0) write_failed = true;
            std::fseek(file, 0, SEEK_SET);
        }
    }
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    std::string_view line(data, size * n);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.substr(0, 5) == "HTTP/") {
        // A new response (after a redirect or a 100 Continue): forget the previous one's headers.
        Response& r = *t->response;
        r.etag.clear(), r.last_modified.clear(), r.cache_control.clear(), r.content_type.clear();
        r.range_start = r.total_size = 0;
        t->encoded = false;
        t->retry_after_s = -1;
        return size * n;
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return size * n;
    std::string name(line.substr(0, colon));
    auto value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    auto is = [&](const char* h) { return strcasecmp(name.c_str(), h) == 0; };
    Response& r = *t->response;
    if (is("ETag")) r.etag = value;
    else if (is("Last-Modified")) r.last_modified = value;
    else if (is("Cache-Control")) r.cache_control = value;
    else if (is("Content-Type")) r.content_type = value;
    else if (is("Content-Encoding")) t->encoded = !value.empty() && value != "identity";
    else if (is("Content-Range")) {
        // "bytes 100-199/5000"; an unknown length ("/*") leaves total_size 0.
        std::string v(value);
        unsigned long long first = 0, last = 0, total = 0;
        if (std::sscanf(v.c_str(), "bytes %llu-%llu/%llu", &first, &last, &total) == 3) r.range_start = first, r.total_size = total;
        else if (std::sscanf(v.c_str(), "bytes %llu-%llu/", &first, &last) == 2) r.range_start = first;
    }
    else if (is("Retry-After")) {
        // Seconds, or an HTTP date (treated as "a while": the cap applies).
        char* end = nullptr;
        std::string v(value);
        long secs = std::strtol(v.c_str(), &end, 10);
        t->retry_after_s = (end && *end == '\0' && !v.empty()) ? secs : t->options->max_retry_after_s;
    }
    return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    size_t bytes = size * n;
    long code = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    // file:// reports code 0; only keep bodies of successful answers.
    if (code != 0 && (code < 200 || code >= 300)) return bytes;
    if (!t->body_started) {
        t->body_started = true;
        if (!t->request->range.empty() && code == 200) {
            t->range_refused = true;
            return 0;   // the whole file is coming: not read here (see Request::range)
        }
        // Asked to resume but got the whole body again (a server or proxy that ignores Range):
        // start over from byte 0 on this answer.
        if (t->resume_from > 0 && code != 206) {
            t->reset_body();
            t->resume_from = 0;
            ++t->restarts;
        }
        // A 264 MB repodata body grown by doubling is copied about 30 times over.
        curl_off_t length = -1;
        // An announced length past what the body may be is refused before a byte is kept: an
        // artifact longer than its lock says can never match its hash, and a page longer than
        // the body limit is no index (a server that declares 10^12 bytes and sends a few per
        // connection would otherwise be resumed for ever). A decoded body's length is unknown.
        if (!t->encoded && curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length > 0) {
            const std::uint64_t announced = t->held + static_cast<std::uint64_t>(length);
            t->announced = announced;
            if (t->request->expected_size > 0 && announced > t->request->expected_size) {
                t->oversized = true;
                return 0;
            }
            if (!t->file && announced > t->options->max_body_bytes) {
                t->too_large = true;
                return 0;
            }
        }
        if (!t->file && curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length > 0)
            t->response->body.reserve(t->response->body.size() + static_cast<size_t>(length) + 64);
        if (t->file && curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length > 0)
            t->expected_total = t->held + static_cast<std::uint64_t>(length);
    }
    std::string_view chunk(data, bytes);
    if (t->file) {
        if (std::fwrite(data, 1, bytes, t->file) != bytes) {
            t->write_failed = true;
            return 0;  // aborts the transfer
        }
        t->hash->update(chunk);   // only downloads to a file are checked against a sha256
        if (t->md5) t->md5->update(chunk);
    } else {
        if (t->response->body.size() + bytes > t->options->max_body_bytes) {
            t->too_large = true;
            t->response->body.clear();
            t->response->body.shrink_to_fit();
            return 0;  // aborts the transfer
        }
        t->response->body.append(chunk);
    }
    t->held += bytes;
    if (t->options->progress && !t->options->progress(t->index, t->held, t->expected_total, false)) {
        t->cancelled = true;
        return 0;  // aborts the transfer
    }
    return bytes;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* t = static_cast<Transfer*>(user);
    if (Clock::now() < t->deadline()) return 0;
    t->past_deadline = true;
    return 1;   // aborts the attempt (CURLE_ABORTED_BY_CALLBACK)
}

// "too slow: 1,200 of 64,000 bytes in 61 s ...": what the deadline rule says of a transfer.
std::string too_slow(const Transfer& t) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - t.started).count();
    std::string got = std::to_string(std::max(t.held, t.best));
    if (t.request->expected_size > 0) got += " of " + std::to_string(t.request->expected_size);
    got += " bytes";
    return "too slow: " + got + " in " + std::to_string(seconds) + " s, resumes included, below the minimum of " +
           std::to_string(t.options->min_rate) + " bytes/s after " + std::to_string(t.options->grace_s) +
           " s (the min-rate and transfer-grace settings)";
}

void configure(Transfer& t, const std::string& ca) {
    CURL* e = t.easy;
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_URL, t.request->url.c_str());
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https,file");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    // "" offers every encoding this libcurl decodes (gzip, deflate, br, zstd); a range is of the
    // unencoded file.
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, t.request->range.empty() ? "" : nullptr);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, t.options->connect_timeout_s);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, t.options->low_speed_limit);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, t.options->low_speed_time_s);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!ca.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, ca.c_str());
    if (!t.options->credentials.empty()) {
        const UrlAuthority a = url_authority(t.request->url);
        if (a.userinfo.empty() && !a.origin.empty())
            for (const auto& c : t.options->credentials)
                if (c.origin == a.origin) {
                    curl_easy_setopt(e, CURLOPT_USERNAME, c.user.c_str());
                    curl_easy_setopt(e, CURLOPT_PASSWORD, c.password.c_str());
                    break;
                }
    }
    curl_easy_setopt(e, CURLOPT_NETRC, static_cast<long>(CURL_NETRC_OPTIONAL));
    // $NETRC names another netrc file, as pip's lookup (through requests) honours it.
    if (const char* netrc = std::getenv("NETRC"); netrc && *netrc) curl_easy_setopt(e, CURLOPT_NETRC_FILE, netrc);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "envlock/" ENVLOCK_VERSION);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    if (t.options->pool) curl_easy_setopt(e, CURLOPT_SHARE, t.options->pool->share);
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 256L * 1024);   // fewer callbacks on big bodies
    curl_slist_free_all(t.header_list);
    t.header_list = nullptr;
    for (const auto& [k, v] : t.request->headers) t.header_list = curl_slist_append(t.header_list, (k + ": " + v).c_str());
    if (!t.request->range.empty()) t.header_list = curl_slist_append(t.header_list, ("Range: " + t.request->range).c_str());
    if (t.header_list) curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.header_list);
    // A resume asks for the rest with Range, and an answer with the whole file (200) is read
    // from byte 0 (on_body); CURLOPT_RESUME_FROM would fail that answer ("Cannot resume").
    const std::string rest = std::to_string(t.resume_from) + "-";
    if (t.resume_from > 0) curl_easy_setopt(e, CURLOPT_RANGE, rest.c_str());   // libcurl copies it
    // The deadline is checked while bytes flow (or do not): libcurl calls this about once a second.
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    if (t.started == Clock::time_point{}) t.started = Clock::now();
    t.errbuf[0] = '\0';
    t.body_started = false;
    t.past_deadline = false;
    t.announced = 0;
}

std::string describe(CURLcode code, const char* errbuf) {
    std::string msg = errbuf && *errbuf ? errbuf : curl_easy_strerror(code);
    return msg;
}

// What a failure message adds when resumes were answered with the whole file.
std::string restart_note(const Transfer& t) {
    if (t.restarts == 0) return "";
    return "; the server refused range requests " + std::to_string(t.restarts) +
           (t.restarts == 1 ? " time" : " times") + " (answered a resume with the whole file), so the transfer restarted from byte 0";
}

// Decides what happens after one attempt. Returns true when the transfer is finished.
bool finish_attempt(Transfer& t, CURLcode code) {
    Response& r = *t.response;
    r.attempts++;
    long status = 0;
    curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    const std::string shown = redact_url(t.request->url);
    bool file = is_file_url(t.request->url);
    std::string failure;

    if (code == CURLE_OK) {
        if (file) status = 200;
        r.status = status;
        bool retry_status = status >= 500 || status == 429;
        if (status == 416 && t.resume_from > 0) {
            // The resume point is past the end (the earlier answer overstated its length):
            // fetch the whole thing again.
            t.reset_body();
            t.resume_from = 0;
            failure = "HTTP 416 on resume";
        } else if (!retry_status) {
            return true;
        } else {
            failure = "HTTP " + std::to_string(status);
        }
    } else if (file && (code == CURLE_FILE_COULDNT_READ_FILE || code == CURLE_READ_ERROR)) {
        r.status = 404;
        return true;
    } else if (t.range_refused) {
        r.status = 200;
        r.range_refused = true;
        return true;
    } else if (t.cancelled) {
        r.error = "cancelled: " + shown;
        return true;
    } else if (t.past_deadline) {
        r.error = "cannot fetch " + shown + ": " + too_slow(t) + restart_note(t);
        return true;
    } else if (t.oversized) {
        r.error = "cannot fetch " + shown + ": the server announces " + std::to_string(t.announced) +
                  " bytes where " + std::to_string(t.request->expected_size) + " are expected (the size the lock records)";
        return true;
    } else if (t.too_large) {
        r.error = "cannot fetch " + shown + ": the answer is larger than " +
                  std::to_string(t.options->max_body_bytes >> 20) +
                  " MB once decoded, more than any index page (a compression bomb, or the wrong URL?)";
        return true;
    } else if (t.write_failed) {
        r.error = "cannot write " + t.temp_path + " while downloading " + shown;
        return true;
    } else if (!retryable(code)) {
        r.error = "cannot fetch " + shown + ": " + describe(code, t.errbuf);
        return true;
    } else if (code == CURLE_PARTIAL_FILE) {
        failure = "truncated: the answer ended after " + std::to_string(t.held - std::min(t.held, t.resume_from)) + " of its " +
                  (t.announced > t.resume_from ? std::to_string(t.announced - t.resume_from) + " bytes" : "bytes") +
                  (t.resume_from > 0 ? " (a resume from byte " + std::to_string(t.resume_from) + ")" : "");
    } else if (code == CURLE_OPERATION_TIMEDOUT) {
        failure = t.body_started || t.held > 0
                      ? "too slow: less than " + std::to_string(t.options->low_speed_limit) + " bytes/s for " +
                            std::to_string(t.options->low_speed_time_s) + " s (the low-speed-limit and low-speed-time settings)"
                      : describe(code, t.errbuf) + " (no answer within " + std::to_string(t.options->connect_timeout_s) +
                            " s to connect, or less than " + std::to_string(t.options->low_speed_limit) + " bytes/s for " +
                            std::to_string(t.options->low_speed_time_s) + " s)";
    } else {
        failure = describe(code, t.errbuf);
    }

    bool progressed = t.held > t.best;
    t.best = std::max(t.best, t.held);
    if (!progressed) t.failures++;
    if (t.failures > t.options->retries) {
        r.error = "cannot fetch " + shown + ": " + failure + " (gave up after " + std::to_string(r.attempts) +
                  (r.attempts == 1 ? " attempt)" : " attempts)") + restart_note(t);
        if (code == CURLE_OK) r.status = status;
        return true;
    }
    // Keep what arrived when it can be continued with a Range request.
    if (code != CURLE_OK && t.held > 0 && !t.encoded && !file && t.request->range.empty()) {
        t.resume_from = t.held;
    } else if (code != CURLE_OK || t.resume_from == 0) {
        t.reset_body();
        t.resume_from = 0;
    }
    long wait_ms = progressed ? 0 : t.options->backoff_ms << std::min(t.failures - 1, 16);
    if (t.retry_after_s >= 0) {
        wait_ms = std::min(t.retry_after_s, t.options->max_retry_after_s) * 1000;
        // A wait the server asked for (429/503) is not slowness: the deadline moves with it.
        t.started += std::chrono::milliseconds(wait_ms);
    }
    t.ready_at = Clock::now() + std::chrono::milliseconds(wait_ms);
    // A retry that could only start past the deadline is not made (the waits count too).
    if (t.ready_at >= t.deadline()) {
        r.error = "cannot fetch " + shown + ": " + too_slow(t) + "; the last attempt: " + failure + restart_note(t);
        if (code == CURLE_OK) r.status = status;
        return true;
    }
    r.status = 0;
    return false;
}

void complete(Transfer& t) {
    Response& r = *t.response;
    r.size = t.held;
    if (t.file) {
        bool ok = std::fflush(t.file) == 0 && (!t.options->sync_files || fsync(fileno(t.file)) == 0);
        std::fclose(t.file);
        t.file = nullptr;
        if (r.ok()) {
            r.sha256 = t.hash->hex_digest();
            std::error_code ec;
            if (!ok) {
                r.error = "cannot write " + t.temp_path + " while downloading " + redact_url(t.request->url);
            } else if (!t.request->expected_sha256.empty() && r.sha256 != t.request->expected_sha256) {
                r.error = "sha256 mismatch for " + redact_url(t.request->url) + ": expected " +
                          t.request->expected_sha256 + ", got " + r.sha256;
            } else if (t.md5 && t.request->expected_sha256.empty() &&
                       (r.md5 = t.md5->hex_digest()) != t.request->expected_md5) {
                r.error = "md5 mismatch for " + redact_url(t.request->url) + ": expected " + t.request->expected_md5 +
                          ", got " + r.md5;
            } else {
                fs::rename(t.temp_path, t.request->dest, ec);
                if (ec) r.error = "cannot move download into " + t.request->dest + ": " + ec.message();
            }
        }
        std::error_code ec;
        fs::remove(t.temp_path, ec);
    }
    if (r.ok() && t.options->progress) t.options->progress(t.index, r.size, r.size, true);
    if (!r.ok()) r.body.clear();
    t.done = true;
}

// A file:// download: the kernel copies the file (copy_file_range: a reflink or a server-side
// copy where the file system can, else an in-kernel copy; read/write of 1 MiB where it
// cannot), then the copy, which nothing else can change, is hashed and checked, synced once
// and renamed into place. What curl's file:// answers is kept: a missing file is a 404.
void copy_local(Transfer& t) {
    Response& r = *t.response;
    const std::string shown = redact_url(t.request->url);
    r.attempts = 1;
    t.done = true;
    int in = ::open(file_url_path(t.request->url).c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        if (errno == ENOENT || errno == ENOTDIR) r.status = 404;
        else r.error = "cannot fetch " + shown + ": " + std::strerror(errno);
        return;
    }
    struct stat st{};
    if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(in);
        r.error = "cannot fetch " + shown + ": not a regular file";
        return;
    }
    int out = ::open(t.temp_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
        ::close(in);
        r.error = "cannot create " + t.temp_path + " for " + shown;
        return;
    }
    std::unique_ptr<char[]> buffer;
    bool ok = true;
    std::uint64_t copied = 0;
    bool kernel_copy = true;
    for (;;) {
        ssize_t n = -1;
        if (kernel_copy) {
            n = ::copy_file_range(in, nullptr, out, nullptr, std::size_t(1) << 30, 0);
            if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL) && copied == 0) {
                kernel_copy = false;
                continue;
            }
        } else {
            if (!buffer) buffer = std::make_unique<char[]>(kFileBuffer);
            n = ::read(in, buffer.get(), kFileBuffer);
            for (ssize_t w = 0; n > 0 && w < n;) {
                ssize_t m = ::write(out, buffer.get() + w, static_cast<std::size_t>(n - w));
                if (m < 0 && errno == EINTR) continue;
                if (m <= 0) {
                    n = -1;
                    break;
                }
                w += m;
            }
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) ok = false;
        if (n <= 0) break;
        copied += static_cast<std::uint64_t>(n);
        if (t.options->progress && !t.options->progress(t.index, copied, static_cast<std::uint64_t>(st.st_size), false)) {
            t.cancelled = true;
            ok = false;
            break;
        }
    }
    ::close(in);
    // The hash is of the bytes stored, read back from the copy (in the page cache still).
    if (ok) {
        if (!buffer) buffer = std::make_unique<char[]>(kFileBuffer);
        for (off_t at = 0;;) {
            ssize_t n = ::pread(out, buffer.get(), kFileBuffer, at);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) ok = false;
            if (n <= 0) break;
            std::string_view chunk(buffer.get(), static_cast<std::size_t>(n));
            t.hash->update(chunk);
            if (t.md5) t.md5->update(chunk);
            at += n;
        }
    }
    ok = ok && (!t.options->sync_files || ::fsync(out) == 0);
    ok = ::close(out) == 0 && ok;
    std::error_code ec;
    if (t.cancelled) {
        r.error = "cancelled: " + shown;
    } else if (!ok) {
        r.error = "cannot write " + t.temp_path + " while downloading " + shown;
    } else {
        r.status = 200;
        r.size = copied;
        r.sha256 = t.hash->hex_digest();
        if (!t.request->expected_sha256.empty() && r.sha256 != t.request->expected_sha256) {
            r.error = "sha256 mismatch for " + shown + ": expected " + t.request->expected_sha256 + ", got " + r.sha256;
        } else if (t.md5 && t.request->expected_sha256.empty() && (r.md5 = t.md5->hex_digest()) != t.request->expected_md5) {
            r.error = "md5 mismatch for " + shown + ": expected " + t.request->expected_md5 + ", got " + r.md5;
        } else {
            fs::rename(t.temp_path, t.request->dest, ec);
            if (ec) r.error = "cannot move download into " + t.request->dest + ": " + ec.message();
        }
    }
    fs::remove(t.temp_path, ec);
    if (r.ok() && t.options->progress) t.options->progress(t.index, r.size, r.size, true);
}

// A file:// page kept in memory, read here rather than through libcurl: loading libcurl and
// a transfer through its multi loop cost more than the read (a warm re-resolve reads a few
// hundred local pages). The answer is libcurl's: the bytes of a regular file with status 200,
// a 404 for a missing one. Anything else (a directory, an unreadable file, a query or a host
// in the URL) is left to libcurl, so its answer stays the one given. Returns whether it answered.
bool read_local(Transfer& t) {
    const std::string& url = t.request->url;
    if (url.find_first_of("?#", 7) != std::string::npos || (url.compare(0, 8, "file:///") != 0 && url.compare(0, 17, "file://localhost/") != 0))
        return false;
    Response& r = *t.response;
    int fd = ::open(file_url_path(url).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT && errno != ENOTDIR) return false;
        r.attempts = 1;
        r.status = 404;
        t.done = true;
        return true;
    }
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return false;
    }
    if (static_cast<std::uint64_t>(st.st_size) > t.options->max_body_bytes) {
        ::close(fd);
        return false;   // libcurl's path refuses it with its message
    }
    std::string body;
    body.resize(static_cast<std::size_t>(st.st_size));
    std::size_t held = 0;
    bool ok = true;
    for (;;) {
        ssize_t n;
        if (held < body.size()) {
            n = ::read(fd, body.data() + held, body.size() - held);
        } else {
            // The end, unless it grew since the stat. Asked through a small buffer: growing the
            // body by 64 KiB to find out zero-filled 64 KiB per file (20 MB over a re-resolve).
            char more[4096];
            n = ::read(fd, more, sizeof more);
            if (n > 0) body.append(more, static_cast<std::size_t>(n));
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) ok = false;
        if (n <= 0) break;
        held += static_cast<std::size_t>(n);
    }
    ::close(fd);
    if (!ok || held > t.options->max_body_bytes) return false;
    body.resize(held);
    r.attempts = 1;
    r.status = 200;
    r.size = held;
    r.body = std::move(body);
    t.held = held;
    t.done = true;
    if (t.options->progress) t.options->progress(t.index, held, held, true);
    return true;
}

}  // namespace

std::shared_ptr<ConnectionPool> make_connection_pool() { return std::make_shared<ConnectionPool>(); }

std::vector<OriginCredentials> credentials_of(const std::vector<std::string>& urls) {
    std::vector<OriginCredentials> out;
    for (const auto& url : urls) {
        UrlAuthority a = url_authority(url);
        if (a.origin.empty() || a.userinfo.empty()) continue;
        if (std::any_of(out.begin(), out.end(), [&](const OriginCredentials& c) { return c.origin == a.origin; })) continue;
        auto colon = a.userinfo.find(':');
        out.push_back({a.origin, percent_decode(a.userinfo.substr(0, colon)),
                       colon == std::string::npos ? "" : percent_decode(a.userinfo.substr(colon + 1))});
    }
    return out;
}

namespace {

// Creates the pool's share handle on first use. Its lock functions make it safe for transfers
// of several threads at once (a stream's thread and a perform() beside it): libcurl locks
// each kind of shared data around its use.
void open_pool(ConnectionPool& pool) {
    if (pool.share) return;
    pool.share = curl_share_init();
    curl_share_setopt(pool.share, CURLSHOPT_LOCKFUNC, +[](CURL*, curl_lock_data data, curl_lock_access, void* user) {
        static_cast<ConnectionPool*>(user)->locks[std::size_t(data) % ConnectionPool::kLocks].lock();
    });
    curl_share_setopt(pool.share, CURLSHOPT_UNLOCKFUNC, +[](CURL*, curl_lock_data data, void* user) {
        static_cast<ConnectionPool*>(user)->locks[std::size_t(data) % ConnectionPool::kLocks].unlock();
    });
    curl_share_setopt(pool.share, CURLSHOPT_USERDATA, static_cast<void*>(&pool));
    for (auto data : {CURL_LOCK_DATA_CONNECT, CURL_LOCK_DATA_DNS, CURL_LOCK_DATA_SSL_SESSION})
        curl_share_setopt(pool.share, CURLSHOPT_SHARE, data);
}

// One request's transfer, owning what it reads and writes (its address never changes).
struct Slot {
    Request request;
    Response response;
    Transfer transfer;
};

// The transfers of one perform() call or of one stream: libcurl's multi loop over them. A
// transfer may be added at any time; a local one (file://) is answered as it is added, and
// libcurl is loaded only when the first one that is not local comes.
class TransferLoop {
public:
    explicit TransferLoop(const TransportOptions& options) : options_(options), limit_(std::max(1, options.jobs)) {}

    ~TransferLoop() {
        // Transfers not finished (a stream given up): stopped, their temp files removed.
        for (auto& [id, slot] : slots_) {
            Transfer& t = slot->transfer;
            if (t.easy && multi_) curl_multi_remove_handle(multi_, t.easy);
            if (t.file) std::fclose(t.file);
            if (!t.done && !t.temp_path.empty()) {
                std::error_code ec;
                fs::remove(t.temp_path, ec);
            }
            curl_slist_free_all(t.header_list);
            if (t.easy) curl_easy_cleanup(t.easy);
        }
        if (multi_) curl_multi_cleanup(multi_);
    }
    TransferLoop(const TransferLoop&) = delete;
    TransferLoop& operator=(const TransferLoop&) = delete;

    CURLM* multi() const { return multi_; }
    // Transfers running or waiting for their backoff.
    bool busy() const { return active_ > 0 || !waiting_.empty(); }

    void add(std::size_t id, Request request) {
        auto owned = std::make_unique<Slot>();
        Slot& slot = *owned;
        slot.request = std::move(request);
        Transfer& t = slot.transfer;
        t.index = id;
        t.request = &slot.request;
        t.response = &slot.response;
        t.options = &options_;
        slot.response.url = slot.request.url;
        slots_.emplace(id, std::move(owned));
        const Request& r = slot.request;
        if (is_file_url(r.url)) {
            if (r.dest.empty()) {
                if (read_local(t)) return finish(id);
            } else {
                t.hash = std::make_unique<Sha256>();
                if (!r.expected_md5.empty()) t.md5 = std::make_unique<Md5>();
                std::error_code ec;
                fs::create_directories(fs::path(r.dest).parent_path(), ec);
                t.temp_path = temp_name_for(r.dest);
                copy_local(t);
                return finish(id);
            }
        }
        open_multi();
        t.hash = std::make_unique<Sha256>();
        if (!r.expected_md5.empty()) t.md5 = std::make_unique<Md5>();
        t.easy = curl_easy_init();
        if (!r.dest.empty()) {
            std::error_code ec;
            fs::create_directories(fs::path(r.dest).parent_path(), ec);
            t.temp_path = temp_name_for(r.dest);
            t.file = std::fopen(t.temp_path.c_str(), "w+b");
            if (!t.file) {
                t.response->error = "cannot create " + t.temp_path + " for " + redact_url(r.url);
                t.done = true;
                return finish(id);
            }
            t.file_buffer = std::make_unique<char[]>(kFileBuffer);
            std::setvbuf(t.file, t.file_buffer.get(), _IOFBF, kFileBuffer);
        }
        waiting_.push_back(&t);
    }

    // Moves transfers on: starts those whose backoff has passed, reads what arrived, and waits
    // up to `wait_ms` for more when nothing finished (a stream's wake-up ends the wait early).
    // Returns the transfers finished since the last call, by id, in the order they finished.
    std::vector<std::pair<std::size_t, Response>> step(long wait_ms) {
        if (finished_.empty() && multi_) {
            auto now = Clock::now();
            for (auto it = waiting_.begin(); it != waiting_.end() && active_ < limit_;) {
                if ((*it)->ready_at <= now) {
                    configure(**it, ca_);
                    curl_multi_add_handle(multi_, (*it)->easy);
                    ++active_;
                    it = waiting_.erase(it);
                } else {
                    ++it;
                }
            }
            int running = 0;
            curl_multi_perform(multi_, &running);
            collect();
            if (finished_.empty() && wait_ms > 0) {
                long timeout_ms = wait_ms;
                for (auto* t : waiting_) {
                    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t->ready_at - Clock::now()).count();
                    timeout_ms = std::clamp<long>(ms, 0, timeout_ms);
                }
                curl_multi_poll(multi_, nullptr, 0, static_cast<int>(timeout_ms), nullptr);
            }
        }
        std::vector<std::pair<std::size_t, Response>> out;
        for (std::size_t id : finished_) {
            auto it = slots_.find(id);
            Transfer& t = it->second->transfer;
            if (t.file) std::fclose(t.file), t.file = nullptr;
            curl_slist_free_all(t.header_list);
            if (t.easy) curl_easy_cleanup(t.easy);
            t.header_list = nullptr;
            t.easy = nullptr;
            out.emplace_back(id, std::move(it->second->response));
            slots_.erase(it);
        }
        finished_.clear();
        return out;
    }

private:
    void open_multi() {
        if (multi_) return;
        global_init();
        if (options_.pool) open_pool(*options_.pool);
        ca_ = ca_bundle_from(options_);
        multi_ = curl_multi_init();
        curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
        curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(limit_));
    }

    void finish(std::size_t id) { finished_.push_back(id); }

    void collect() {
        int left = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
            if (msg->msg != CURLMSG_DONE) continue;
            Transfer* t = nullptr;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
            CURLcode code = msg->data.result;
            if (options_.tally) {
                curl_off_t wire = 0;
                curl_easy_getinfo(t->easy, CURLINFO_SIZE_DOWNLOAD_T, &wire);
                options_.tally->bytes += static_cast<std::uint64_t>(std::max<curl_off_t>(wire, 0));
                options_.tally->transfers += 1;
            }
            curl_multi_remove_handle(multi_, t->easy);
            --active_;
            if (finish_attempt(*t, code)) {
                complete(*t);
                finish(t->index);
            } else {
                waiting_.push_back(t);
            }
        }
    }

    const TransportOptions& options_;
    const int limit_;
    std::string ca_;
    CURLM* multi_ = nullptr;
    std::map<std::size_t, std::unique_ptr<Slot>> slots_;
    std::deque<Transfer*> waiting_;
    std::vector<std::size_t> finished_;
    int active_ = 0;
};

}  // namespace

std::vector<Response> perform(const std::vector<Request>& requests, const TransportOptions& options) {
    if (requests.empty()) return {};   // and libcurl stays unloaded
    std::vector<Response> responses(requests.size());
    TransferLoop loop(options);
    std::size_t answered = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) loop.add(i, requests[i]);
    while (answered < requests.size()) {
        for (auto& [id, response] : loop.step(200)) {
            responses[id] = std::move(response);
            ++answered;
        }
    }
    return responses;
}

// The stream's state, shared by the caller and the loop's thread under `mutex`.
struct TransferStream::State {
    explicit State(const TransportOptions& o) : options(o) {}
    TransportOptions options;
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<std::pair<std::size_t, Request>> inbox;
    std::deque<Finished> outbox;
    std::size_t submitted = 0, handed_back = 0;
    CURLM* multi = nullptr;   // once the loop has one: submit() wakes its wait
    bool stop = false;
    std::exception_ptr failure;
};

namespace {

// The loop's thread: takes what was submitted, moves the transfers on, hands back what finished.
void run_stream(TransferStream::State& s) {
    try {
        TransferLoop loop(s.options);
        for (;;) {
            std::deque<std::pair<std::size_t, Request>> batch;
            {
                std::unique_lock lock(s.mutex);
                // Nothing to move on: sleep until something is submitted.
                s.changed.wait(lock, [&] { return s.stop || !s.inbox.empty() || loop.busy(); });
                if (s.stop) return;
                batch.swap(s.inbox);
            }
            for (auto& [id, request] : batch) loop.add(id, std::move(request));
            {
                // A submit() that came before the loop had a multi handle did not wake it.
                std::lock_guard lock(s.mutex);
                if (!s.multi && loop.multi()) {
                    s.multi = loop.multi();
                    if (!s.inbox.empty()) curl_multi_wakeup(s.multi);
                }
            }
            auto done = loop.step(loop.busy() ? 200 : 0);
            if (done.empty()) continue;
            std::lock_guard lock(s.mutex);
            for (auto& [id, response] : done) s.outbox.push_back({id, std::move(response)});
            s.changed.notify_all();
        }
    } catch (...) {
        std::lock_guard lock(s.mutex);
        s.failure = std::current_exception();
        s.changed.notify_all();
    }
}

}  // namespace

TransferStream::TransferStream(const TransportOptions& options) : state_(std::make_shared<State>(options)) {
    thread_ = std::thread(run_stream, std::ref(*state_));
}

TransferStream::~TransferStream() {
    {
        std::lock_guard lock(state_->mutex);
        state_->stop = true;
        if (state_->multi) curl_multi_wakeup(state_->multi);
    }
    state_->changed.notify_all();
    thread_.join();
}

std::size_t TransferStream::submit(Request request) {
    std::lock_guard lock(state_->mutex);
    std::size_t id = state_->submitted++;
    state_->inbox.emplace_back(id, std::move(request));
    if (state_->multi) curl_multi_wakeup(state_->multi);
    state_->changed.notify_all();
    return id;
}

std::optional<TransferStream::Finished> TransferStream::next() { return next(std::chrono::milliseconds::max()); }

std::optional<TransferStream::Finished> TransferStream::next(std::chrono::milliseconds wait) {
    std::unique_lock lock(state_->mutex);
    auto ready = [&] { return !state_->outbox.empty() || state_->handed_back == state_->submitted || state_->failure; };
    if (wait == std::chrono::milliseconds::max()) state_->changed.wait(lock, ready);
    else state_->changed.wait_for(lock, wait, ready);
    if (state_->failure) std::rethrow_exception(state_->failure);
    if (state_->outbox.empty()) return std::nullopt;
    Finished f = std::move(state_->outbox.front());
    state_->outbox.pop_front();
    ++state_->handed_back;
    return f;
}

std::size_t TransferStream::outstanding() const {
    std::lock_guard lock(state_->mutex);
    return state_->submitted - state_->handed_back;
}

void TransferTally::record(std::size_t index, std::uint64_t received, bool done) {
    std::lock_guard lock(mutex_);
    if (done) {
        in_flight_.erase(index);
        finished_bytes_ += received;
        ++finished_;
    } else {
        in_flight_[index] = received;
    }
}

std::size_t TransferTally::finished() const {
    std::lock_guard lock(mutex_);
    return finished_;
}

std::uint64_t TransferTally::bytes() const {
    std::lock_guard lock(mutex_);
    std::uint64_t total = finished_bytes_;
    for (const auto& [index, held] : in_flight_) total += held;
    return total;
}

}  // namespace envlock::fetch
