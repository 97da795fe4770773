#pragma once
// A real HTTP/1.1 server on 127.0.0.1 (a free port) for tests: serves a directory tree,
// records every request it saw, honours conditional requests and Range, and injects
// faults per path so the transport's retries, resumes and error messages can be tested
// against real sockets.
//
//   envlock::test::HttpServer server{"/path/to/tree"};
//   server.url();                                   // "http://127.0.0.1:PORT"
//   server.add_fault("/a/b.json", {Fault::status_then_ok, 2, 500});  // two 500s, then 200
//   server.add_header("/simple/x/", "Content-Type", "application/vnd.pypi.simple.v1+json");
//   ... run the code under test against server.url() + "/a/b.json" ...
//   server.requests();   // what was seen: method, path, headers, status answered
//
// Files: GET/HEAD "/x/y" serves root/x/y; a path ending in "/" serves its index.html
// (or index.json when there is no index.html). Missing files answer 404; ".." is refused.
// Every file answer carries ETag (quoted, from size and mtime) and Last-Modified;
// If-None-Match / If-Modified-Since that match answer 304 with no body. "Range: bytes=A-"
// or "bytes=A-B" answers 206 with Content-Range (416 when A is past the end).
// Responses are not compressed, so byte counts in tests are exact.
//
// Faults apply to the next `count` requests for that exact path, then the path is served
// normally again (a fault with count < 0 never wears off):
//   reset_mid_body  sends the headers and half the body, then resets the TCP connection (RST)
//   status_then_ok  answers `status` (default 500) with a short body
//   retry_after     answers 429 (or `status` when it is 503) with "Retry-After: <delay_ms/1000
//                   rounded up>" seconds
//   redirect_loop   answers 302 with Location: the same path, so a client that follows goes round
//   html_body       answers 200, text/html, a login page: what a captive portal or proxy sends
//   truncated       declares the full Content-Length, sends half the body, closes cleanly
//   wrong_length    declares Content-Length = real size + 100, sends the real body, closes
//   slow            sends the body in 1 KiB pieces with delay_ms between them
//   drip            honours Range (206): sends `piece` bytes every delay_ms; with per_answer > 0
//                   the connection closes after that many bytes (a server that sends a little
//                   per connection, so each resume makes progress)
//   claims_length   declares Content-Length `declared` (Range honoured against it), sends
//                   `piece` bytes of the file, then waits delay_ms and closes
//   error_page      answers 200 with `body` (default: an HTML error page without a form or a
//                   link) as `content_type` (default text/html): a proxy's or CDN's error page
//
// refuse_ranges(path) makes every answer for the path the whole file with 200, Range or not
// (a server or proxy that ignores Range), and sends no Accept-Ranges.
//
// The server runs on its own thread; the destructor stops it. Thread-safe.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib { class Server; }

namespace envlock::test {

struct Fault {
    enum Kind { reset_mid_body, status_then_ok, truncated, wrong_length, slow, retry_after, redirect_loop, html_body,
                drip, claims_length, error_page };
    Kind kind = status_then_ok;
    int count = 1;       // how many requests it applies to; < 0 for all of them
    int status = 500;    // status_then_ok only
    int delay_ms = 0;    // slow, drip: pause between pieces; retry_after: the advertised wait; claims_length: before closing
    std::size_t piece = 1024;        // drip, claims_length: bytes per piece
    std::size_t per_answer = 0;      // drip: bytes sent before the connection closes (0: all)
    std::uint64_t declared = 0;      // claims_length: the Content-Length announced
    std::string body{};              // error_page: the body ("" for the default page)
    std::string content_type{};      // error_page: the Content-Type ("" for text/html)
};

struct SeenRequest {
    std::string method;
    std::string path;                            // without the query string
    std::multimap<std::string, std::string> headers;  // names as the client sent them
    int status = 0;                              // what the server answered

    // Case-insensitive header lookup; "" when absent.
    std::string header(const std::string& name) const;
};

class HttpServer {
public:
    // port 0 picks a free one; a fixed port is for `envlock-mirror serve --port N`.
    explicit HttpServer(std::string root_dir, int port = 0);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    std::string url() const;   // "http://127.0.0.1:PORT", no trailing slash
    int port() const { return port_; }

    void add_fault(const std::string& path, Fault fault);
    void clear_faults();
    // Extra (or replacing) response header for one path, e.g. Cache-Control or Content-Type.
    void add_header(const std::string& path, const std::string& name, const std::string& value);
    // Every answer for `path` is the whole file with 200, whatever Range asks.
    void refuse_ranges(const std::string& path);
    // Every request without this exact Authorization header ("Basic ...") answers 401 with
    // WWW-Authenticate, as a private index does. "" lets everyone in again.
    void require_authorization(const std::string& value);

    std::vector<SeenRequest> requests() const;
    std::vector<SeenRequest> requests_for(const std::string& path) const;
    void clear_requests();

private:
    struct State;
    std::string root_;
    std::shared_ptr<State> state_;
    std::unique_ptr<httplib::Server> server_;
    std::thread thread_;
    int port_ = 0;
};

}  // namespace envlock::test
