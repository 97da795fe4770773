#include "tests/support/http_server.hpp"

#include <httplib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <strings.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace envlock::test {

namespace fs = std::filesystem;

struct HttpServer::State {
    mutable std::mutex mutex;
    std::vector<SeenRequest> seen;
    std::map<std::string, Fault> faults;
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> headers;
    std::set<std::string> no_ranges;
    std::string authorization;   // required of every request when not empty
};

std::string SeenRequest::header(const std::string& name) const {
    for (const auto& [k, v] : headers)
        if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
    return {};
}

namespace {

std::string http_date(std::time_t t) {
    char buf[64];
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    return buf;
}

std::time_t parse_http_date(const std::string& s) {
    std::tm tm{};
    if (!strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm)) return -1;
    return timegm(&tm);
}

std::string content_type_for(const std::string& path) {
    auto ends = [&](const char* suffix) {
        std::string_view p = path, s = suffix;
        return p.size() >= s.size() && p.substr(p.size() - s.size()) == s;
    };
    if (ends(".json")) return "application/json";
    if (ends(".html") || ends("/")) return "text/html";
    if (ends(".metadata")) return "text/plain";
    return "application/octet-stream";
}

// The accepted socket serving this request, found by its peer port, so a fault can make
// close() send a TCP RST (SO_LINGER with a zero timeout) instead of a clean FIN.
int find_socket(int local_port, int remote_port) {
    for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
        int fd = std::atoi(entry.path().filename().c_str());
        sockaddr_in local{}, peer{};
        socklen_t len = sizeof local;
        if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 || local.sin_family != AF_INET)
            continue;
        len = sizeof peer;
        if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
        if (ntohs(local.sin_port) == local_port && ntohs(peer.sin_port) == remote_port) return fd;
    }
    return -1;
}

bool read_file(const fs::path& p, std::string& out) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
}

}  // namespace

HttpServer::HttpServer(std::string root_dir, int port)
    : root_(std::move(root_dir)), state_(std::make_shared<State>()), server_(std::make_unique<httplib::Server>()) {
    auto state = state_;
    std::string root = root_;
    // Short timeouts so a test that abandons a connection never holds the server up.
    server_->set_read_timeout(2, 0);
    server_->set_write_timeout(2, 0);
    server_->set_keep_alive_timeout(2);
    // A keep-alive connection holds one of httplib's threads (8 by default) until it closes:
    // a client that keeps its connections between fetches would otherwise starve the next.
    server_->new_task_queue = [] { return new httplib::ThreadPool(64); };

    auto handler = [this, state, root](const httplib::Request& req, httplib::Response& res) {
        SeenRequest seen{req.method, req.path, {req.headers.begin(), req.headers.end()}, 0};
        std::optional<Fault> fault;
        std::vector<std::pair<std::string, std::string>> extra;
        bool ranges_refused = false;
        std::string required;
        {
            std::lock_guard lock(state->mutex);
            required = state->authorization;
            ranges_refused = state->no_ranges.count(req.path) > 0;
            if (auto it = state->faults.find(req.path); it != state->faults.end()) {
                fault = it->second;
                if (it->second.count > 0 && --it->second.count == 0) state->faults.erase(it);
            }
            if (auto it = state->headers.find(req.path); it != state->headers.end()) extra = it->second;
        }
        auto record = [&](int status) {
            seen.status = status;
            std::lock_guard lock(state->mutex);
            state->seen.push_back(seen);
        };

        if (!required.empty() && req.get_header_value("Authorization") != required) {
            res.status = 401;
            res.set_header("WWW-Authenticate", "Basic realm=\"index\"");
            res.set_content("authorization required\n", "text/plain");
            return record(401);
        }
        if (fault && fault->kind == Fault::status_then_ok) {
            res.status = fault->status;
            res.set_content("injected failure\n", "text/plain");
            return record(res.status);
        }
        if (fault && fault->kind == Fault::retry_after) {
            res.status = fault->status == 503 ? 503 : 429;
            res.set_header("Retry-After", std::to_string((fault->delay_ms + 999) / 1000));
            res.set_content("slow down\n", "text/plain");
            return record(res.status);
        }
        if (fault && fault->kind == Fault::redirect_loop) {
            res.status = 302;
            res.set_header("Location", req.path);
            return record(302);
        }
        if (fault && fault->kind == Fault::error_page) {
            res.status = 200;
            res.set_content(fault->body.empty() ? "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>"
                                                  "<body><h1>Bad Gateway</h1><p>The upstream server is unavailable.</p></body></html>\n"
                                                : fault->body,
                            fault->content_type.empty() ? "text/html" : fault->content_type);
            return record(200);
        }
        if (ranges_refused) {
            // httplib slices any answer to a Range request itself; a server that ignores Range
            // is one whose request had none. (The Request object is httplib's own, not const.)
            const_cast<httplib::Request&>(req).ranges.clear();
        }
        if (fault && fault->kind == Fault::html_body) {
            res.status = 200;
            res.set_content("<!DOCTYPE html>\n<html><body><form>Please sign in to use this network</form></body></html>\n",
                            "text/html");
            return record(200);
        }

        std::string rel = req.path;
        if (rel.find("..") != std::string::npos) {
            res.status = 403;
            return record(403);
        }
        fs::path file = fs::path(root) / rel.substr(rel.empty() ? 0 : 1);
        if (!rel.empty() && rel.back() == '/') {
            file = fs::exists(file / "index.html") ? file / "index.html" : file / "index.json";
        }
        std::error_code ec;
        std::string body;
        if (!fs::is_regular_file(file, ec) || !read_file(file, body)) {
            res.status = 404;
            res.set_content("not found\n", "text/plain");
            return record(404);
        }
        struct stat st{};
        ::stat(file.c_str(), &st);
        std::string etag = "\"" + std::to_string(body.size()) + "-" + std::to_string(st.st_mtim.tv_sec) + "." +
                           std::to_string(st.st_mtim.tv_nsec) + "\"";
        std::string last_modified = http_date(st.st_mtim.tv_sec);
        std::string type = content_type_for(rel);
        res.set_header("ETag", etag);
        res.set_header("Last-Modified", last_modified);
        if (!ranges_refused) res.set_header("Accept-Ranges", "bytes");
        for (auto& [k, v] : extra) {
            if (strcasecmp(k.c_str(), "Content-Type") == 0) type = v;
            else res.set_header(k, v);
        }

        if (!fault) {
            std::string inm = req.get_header_value("If-None-Match");
            std::string ims = req.get_header_value("If-Modified-Since");
            bool not_modified = !inm.empty() ? (inm == etag || inm == "*")
                                             : (!ims.empty() && parse_http_date(ims) >= st.st_mtim.tv_sec);
            if (not_modified) {
                res.status = 304;
                return record(304);
            }
            if (!req.ranges.empty()) {
                auto [first, last] = req.ranges.front();
                size_t size = body.size();
                size_t from = first < 0 ? size - std::min<size_t>(size, last) : size_t(first);
                if (from >= size) {
                    res.status = 416;
                    res.set_header("Content-Range", "bytes */" + std::to_string(size));
                    return record(416);
                }
                // httplib slices a 206 answer itself and writes Content-Range.
                res.status = 206;
                auto shared = std::make_shared<std::string>(std::move(body));
                res.set_content_provider(shared->size(), type, [shared](size_t off, size_t len, httplib::DataSink& sink) {
                    sink.write(shared->data() + off, std::min(len, shared->size() - off));
                    return true;
                });
                return record(206);
            }
            res.status = 200;
            auto shared = std::make_shared<std::string>(std::move(body));
            res.set_content_provider(shared->size(), type, [shared](size_t off, size_t len, httplib::DataSink& sink) {
                sink.write(shared->data() + off, std::min(len, shared->size() - off));
                return true;
            });
            return record(200);
        }

        // Faults that damage the body.
        auto shared = std::make_shared<std::string>(std::move(body));
        res.status = 200;
        if (fault->kind == Fault::drip || fault->kind == Fault::claims_length) {
            // httplib answers a Range request with 206 and calls the provider from its start.
            if (!req.ranges.empty()) res.status = 206;
            const Fault f = *fault;
            auto sent = std::make_shared<std::size_t>(0);   // this answer's bytes
            std::uint64_t length = f.kind == Fault::claims_length ? f.declared : shared->size();
            if (f.kind == Fault::claims_length && !req.ranges.empty() &&
                req.ranges.front().first >= 0 && std::uint64_t(req.ranges.front().first) >= length) {
                res.status = 416;
                return record(416);
            }
            res.set_content_provider(length, type, [shared, f, sent](size_t off, size_t len, httplib::DataSink& sink) {
                if (f.kind == Fault::claims_length && *sent >= f.piece) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(f.delay_ms));
                    return false;
                }
                if (f.kind == Fault::drip && f.per_answer > 0 && *sent >= f.per_answer) return false;
                if (f.kind == Fault::drip && *sent > 0) std::this_thread::sleep_for(std::chrono::milliseconds(f.delay_ms));
                std::size_t n = std::min<std::size_t>(len, f.piece);
                if (f.kind == Fault::drip && f.per_answer > 0) n = std::min(n, f.per_answer - *sent);
                std::string bytes;
                for (std::size_t i = 0; i < n; ++i) bytes += off + i < shared->size() ? (*shared)[off + i] : 'x';
                *sent += n;
                return sink.write(bytes.data(), bytes.size());
            });
            return record(res.status);
        }
        size_t half = shared->size() / 2;
        switch (fault->kind) {
        case Fault::reset_mid_body: {
            int fd = find_socket(port_, req.remote_port);
            res.set_content_provider(shared->size(), type,
                                     [shared, half, fd](size_t off, size_t, httplib::DataSink& sink) {
                                         if (off < half) {
                                             sink.write(shared->data() + off, half - off);
                                             return true;
                                         }
                                         std::this_thread::sleep_for(std::chrono::milliseconds(30));
                                         if (fd >= 0) {
                                             linger lg{1, 0};
                                             setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
                                             ::shutdown(fd, SHUT_RD);
                                         }
                                         return false;
                                     });
            break;
        }
        case Fault::truncated:
            res.set_content_provider(shared->size(), type, [shared, half](size_t off, size_t, httplib::DataSink& sink) {
                if (off < half) {
                    sink.write(shared->data() + off, half - off);
                    return true;
                }
                return false;
            });
            break;
        case Fault::wrong_length:
            res.set_content_provider(shared->size() + 100, type,
                                     [shared](size_t off, size_t, httplib::DataSink& sink) {
                                         if (off < shared->size()) {
                                             sink.write(shared->data() + off, shared->size() - off);
                                             return true;
                                         }
                                         return false;
                                     });
            break;
        case Fault::slow: {
            int delay = fault->delay_ms;
            res.set_content_provider(shared->size(), type, [shared, delay](size_t off, size_t len, httplib::DataSink& sink) {
                std::this_thread::sleep_for(std::chrono::milliseconds(delay));
                sink.write(shared->data() + off, std::min<size_t>({len, 1024, shared->size() - off}));
                return true;
            });
            break;
        }
        default:
            break;
        }
        return record(200);
    };
    server_->Get(R"(.*)", handler);

    port_ = port > 0 ? (server_->bind_to_port("127.0.0.1", port) ? port : -1) : server_->bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("HttpServer: cannot bind 127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    for (int i = 0; i < 500 && !server_->is_running(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

HttpServer::~HttpServer() {
    server_->stop();
    if (thread_.joinable()) thread_.join();
}

std::string HttpServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

void HttpServer::add_fault(const std::string& path, Fault fault) {
    std::lock_guard lock(state_->mutex);
    state_->faults[path] = fault;
}

void HttpServer::require_authorization(const std::string& value) {
    std::lock_guard lock(state_->mutex);
    state_->authorization = value;
}

void HttpServer::refuse_ranges(const std::string& path) {
    std::lock_guard lock(state_->mutex);
    state_->no_ranges.insert(path);
}

void HttpServer::clear_faults() {
    std::lock_guard lock(state_->mutex);
    state_->faults.clear();
}

void HttpServer::add_header(const std::string& path, const std::string& name, const std::string& value) {
    std::lock_guard lock(state_->mutex);
    auto& list = state_->headers[path];
    std::erase_if(list, [&](const auto& kv) { return strcasecmp(kv.first.c_str(), name.c_str()) == 0; });
    list.emplace_back(name, value);
}

std::vector<SeenRequest> HttpServer::requests() const {
    std::lock_guard lock(state_->mutex);
    return state_->seen;
}

std::vector<SeenRequest> HttpServer::requests_for(const std::string& path) const {
    std::lock_guard lock(state_->mutex);
    std::vector<SeenRequest> out;
    for (const auto& r : state_->seen)
        if (r.path == path) out.push_back(r);
    return out;
}

void HttpServer::clear_requests() {
    std::lock_guard lock(state_->mutex);
    state_->seen.clear();
}

}  // namespace envlock::test
