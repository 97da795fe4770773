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
//
// The server runs on its own thread; the destructor stops it. Thread-safe.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib { class Server; }

namespace envlock::test {

struct Fault {
    enum Kind { reset_mid_body, status_then_ok, truncated, wrong_length, slow, retry_after, redirect_loop, html_body };
    Kind kind = status_then_ok;
    int count = 1;       // how many requests it applies to; < 0 for all of them
    int status = 500;    // status_then_ok only
    int delay_ms = 0;    // slow: pause between 1 KiB pieces; retry_after: the advertised wait
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
