// Transfer deadlines and restarts (#32) against a loopback server that drips, lies about
// lengths or ignores Range: a whole transfer, resumes included, is given up once it falls
// below the minimum average rate after the grace period; a resume answered with the whole
// file (200) starts again from byte 0 within the retries; each failure says which it was
// (too slow, truncated, refused range).
#include <doctest/doctest.h>

#include <chrono>

#include "fetch/artifacts.hpp"
#include "fetch/transport.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"
#include "temp_tree.hpp"
#include "tests/support/http_server.hpp"

using namespace envlock::fetch;
using envlock::test::Fault;
using envlock::test::HttpServer;
using envlock::test::TempTree;

namespace {

using Clock = std::chrono::steady_clock;

// Retries and backoff short; the low-speed rule out of the way (30 s), so what stops a
// transfer here is the deadline rule alone.
TransportOptions deadline_options() {
    TransportOptions o;
    o.retries = 3;
    o.backoff_ms = 10;
    o.connect_timeout_s = 2;
    o.low_speed_limit = 1;
    o.low_speed_time_s = 30;
    o.min_rate = 2000;
    o.grace_s = 1;
    return o;
}

std::string payload(size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + (i * 7) % 26);
    return s;
}

// A download into `dest` checked against `sha256`, of `size` bytes as a lock records them.
Request download(const std::string& url, const std::filesystem::path& dest, const std::string& sha256, std::uint64_t size = 0) {
    Request q{url, {}, dest.string(), sha256, {}, {}};
    q.expected_size = size;
    return q;
}

Request page(const std::string& url) { return Request{url, {}, {}, {}, {}, {}}; }

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

TEST_CASE("deadline: a server that drips a few bytes a second and honours Range is given up on, not resumed for ever") {
    TempTree tree;
    tree.write("simple/six/index.html", payload(64 * 1024));
    HttpServer server(tree.str());
    // 10 bytes every 200 ms, and each connection closes after 30 bytes: every resume (bytes=30-,
    // bytes=60-, ...) makes progress, so a retry budget alone would never end it.
    Fault drip{Fault::drip, -1, 0, 200};
    drip.piece = 10;
    drip.per_answer = 30;
    server.add_fault("/simple/six/", drip);
    const auto start = Clock::now();
    auto r = perform({page(server.url() + "/simple/six/")}, deadline_options()).at(0);
    const double took = seconds_since(start);
    CHECK_FALSE(r.ok());
    CHECK(r.body.empty());
    CHECK_MESSAGE(r.error.find("cannot fetch " + server.url() + "/simple/six/: too slow:") == 0, r.error);
    CHECK_MESSAGE(r.error.find("below the minimum of 2000 bytes/s") != std::string::npos, r.error);
    CHECK(took < 5);   // grace 1 s + (bytes so far / 2000 B/s): about a second; never the body's 64 KiB at 50 B/s
    auto seen = server.requests_for("/simple/six/");
    REQUIRE(seen.size() >= 2);
    CHECK(seen[1].header("Range") == "bytes=30-");   // it was resumed, and that did not save it
    CHECK(seen[1].status == 206);
}

TEST_CASE("deadline: an artifact's deadline comes from its size in the lock; one slower than the minimum rate ends") {
    TempTree tree;
    const std::string body = payload(20000);
    tree.write("pkgs/a.whl", body);
    HttpServer server(tree.str());
    Fault drip{Fault::drip, -1, 0, 100};
    drip.piece = 100;   // 1000 B/s: 20 s for the file, past its deadline of 1 + 20000 / 2000 = 11 s
    server.add_fault("/pkgs/a.whl", drip);
    auto o = deadline_options();
    o.min_rate = 4000;   // deadline 1 + 5 = 6 s
    Request q = download(server.url() + "/pkgs/a.whl", tree.path() / "out/a.whl", envlock::sha256_hex(body), body.size());
    const auto start = Clock::now();
    auto r = perform({q}, o).at(0);
    const double took = seconds_since(start);
    CHECK_FALSE(r.ok());
    CHECK_MESSAGE(r.error.find("too slow:") != std::string::npos, r.error);
    CHECK_MESSAGE(r.error.find(" of 20000 bytes in ") != std::string::npos, r.error);
    CHECK(took > 5);
    CHECK(took < 9);
    CHECK_FALSE(std::filesystem::exists(tree.path() / "out/a.whl"));

    // The same drip at a rate the rule allows is waited for.
    server.clear_faults();
    drip.piece = 1000;   // 10 KB/s: 2 s
    server.add_fault("/pkgs/a.whl", drip);
    r = perform({q}, o).at(0);
    CHECK_MESSAGE(r.ok(), r.error);
}

TEST_CASE("an artifact whose server announces more bytes than the lock records is refused at once") {
    TempTree tree;
    const std::string body = payload(5000);
    tree.write("pkgs/a.whl", body);
    HttpServer server(tree.str());
    Fault lie{Fault::claims_length, -1, 0, 300};
    lie.declared = 1000000000000ULL;   // 10^12 bytes, 100 per connection
    lie.piece = 100;
    server.add_fault("/pkgs/a.whl", lie);
    Request q = download(server.url() + "/pkgs/a.whl", tree.path() / "out/a.whl", envlock::sha256_hex(body), body.size());
    const auto start = Clock::now();
    auto r = perform({q}, deadline_options()).at(0);
    CHECK(seconds_since(start) < 3);
    CHECK_MESSAGE(r.error.find("announces 1000000000000 bytes where 5000 are expected") != std::string::npos, r.error);
    CHECK(server.requests_for("/pkgs/a.whl").size() == 1);
}

TEST_CASE("a page that announces 10^12 bytes and sends 100 per connection is given up on, not resumed for ever") {
    TempTree tree;
    tree.write("simple/six/index.html", payload(5000));
    HttpServer server(tree.str());
    Fault lie{Fault::claims_length, -1, 0, 1500};
    lie.declared = 1000000000000ULL;
    lie.piece = 100;
    server.add_fault("/simple/six/", lie);
    const auto start = Clock::now();
    auto r = perform({page(server.url() + "/simple/six/")}, deadline_options()).at(0);
    CHECK(seconds_since(start) < 3);
    CHECK_FALSE(r.ok());
    CHECK_MESSAGE(r.error.find("larger than") != std::string::npos, r.error);

    // Announcing a length within bounds, 100 bytes and a stall per connection: the deadline ends it.
    lie.declared = 1000000;
    server.add_fault("/simple/six/", lie);
    auto o = deadline_options();
    o.low_speed_time_s = 1;   // each stalled connection is cut after a second, then resumed
    r = perform({page(server.url() + "/simple/six/")}, o).at(0);
    CHECK_MESSAGE(r.error.find("too slow:") != std::string::npos, r.error);
    CHECK(server.requests_for("/simple/six/").size() >= 2);
}

TEST_CASE("a truncated answer whose resume the server answers with the whole file (200) restarts from byte 0 and succeeds") {
    TempTree tree;
    const std::string body = payload(200000);
    tree.write("pkgs/a.whl", body);
    HttpServer server(tree.str());
    server.refuse_ranges("/pkgs/a.whl");
    server.add_fault("/pkgs/a.whl", {Fault::truncated});
    Request q = download(server.url() + "/pkgs/a.whl", tree.path() / "out/a.whl", envlock::sha256_hex(body));
    auto r = perform({q}, deadline_options()).at(0);
    CHECK_MESSAGE(r.ok(), r.error);
    CHECK(r.sha256 == envlock::sha256_hex(body));
    auto seen = server.requests_for("/pkgs/a.whl");
    REQUIRE(seen.size() == 2);
    CHECK(seen[1].header("Range") == "bytes=100000-");
    CHECK(seen[1].status == 200);

    // In memory too.
    server.add_fault("/pkgs/a.whl", {Fault::truncated});
    auto m = perform({page(server.url() + "/pkgs/a.whl")}, deadline_options()).at(0);
    CHECK(m.ok());
    CHECK(m.body == body);
}

TEST_CASE("each failure says which it was: truncated every time with Range refused, and too slow") {
    TempTree tree;
    tree.write("a.bin", payload(100000));
    HttpServer server(tree.str());
    server.refuse_ranges("/a.bin");
    server.add_fault("/a.bin", {Fault::truncated, -1});
    auto r = perform({page(server.url() + "/a.bin")}, deadline_options()).at(0);
    CHECK_FALSE(r.ok());
    CHECK_MESSAGE(r.error.find("truncated: the answer ended after 50000 of its 100000 bytes") != std::string::npos, r.error);
    CHECK_MESSAGE(r.error.find("gave up after 5 attempts") != std::string::npos, r.error);
    CHECK_MESSAGE(r.error.find("the server refused range requests 4 times") != std::string::npos, r.error);
    CHECK(r.error.find("Cannot resume") == std::string::npos);

    // A stall: the low-speed rule, named as such.
    server.clear_faults();
    Fault stall{Fault::claims_length, -1, 0, 1500};
    stall.declared = 100000;
    stall.piece = 10;
    server.add_fault("/a.bin", stall);
    auto o = deadline_options();
    o.min_rate = 0;   // the deadline rule off: the low-speed rule alone
    o.low_speed_time_s = 1;
    o.low_speed_limit = 1000;
    o.retries = 0;
    r = perform({page(server.url() + "/a.bin")}, o).at(0);
    CHECK_MESSAGE(r.error.find("too slow: less than 1000 bytes/s for 1 s") != std::string::npos, r.error);
}
