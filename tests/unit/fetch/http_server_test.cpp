// The test server itself, checked with the curl command-line tool so the transport under
// test is not the judge of its own fixture.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/http_server.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

namespace fs = std::filesystem;
using envlock::test::Fault;
using envlock::test::HttpServer;
using envlock::test::run_program;

namespace {

fs::path make_tree() {
    fs::path root = envlock::test::scratch_dir("httpserver");
    fs::create_directories(root / "dir");
    std::ofstream(root / "dir" / "file.txt") << std::string(4000, 'x') << "END";
    std::ofstream(root / "dir" / "index.html") << "<html>index</html>";
    return root;
}

}  // namespace

TEST_CASE("test server serves files, index.html for directories, and 404 for missing paths") {
    HttpServer server(make_tree().string());
    auto r = run_program({"curl", "-s", "-w", "%{http_code}", server.url() + "/dir/file.txt"});
    CHECK(r.out == std::string(4000, 'x') + "END200");
    r = run_program({"curl", "-s", server.url() + "/dir/"});
    CHECK(r.out == "<html>index</html>");
    r = run_program({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", server.url() + "/nope"});
    CHECK(r.out == "404");
    REQUIRE(server.requests().size() == 3);
    CHECK(server.requests()[0].method == "GET");
    CHECK(server.requests()[0].path == "/dir/file.txt");
    CHECK(server.requests()[2].status == 404);
}

TEST_CASE("test server answers 304 to a matching If-None-Match and If-Modified-Since") {
    HttpServer server(make_tree().string());
    auto head = run_program({"curl", "-s", "-D", "-", "-o", "/dev/null", server.url() + "/dir/file.txt"});
    auto pos = head.out.find("ETag: ");
    REQUIRE(pos != std::string::npos);
    std::string etag = head.out.substr(pos + 6, head.out.find('\r', pos) - pos - 6);
    auto r = run_program({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "If-None-Match: " + etag,
                          server.url() + "/dir/file.txt"});
    CHECK(r.out == "304");
    r = run_program({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H",
                     "If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT", server.url() + "/dir/file.txt"});
    CHECK(r.out == "304");
    CHECK(server.requests_for("/dir/file.txt").back().header("if-modified-since") == "Fri, 01 Jan 2100 00:00:00 GMT");
}

TEST_CASE("test server honours Range with 206 and Content-Range") {
    HttpServer server(make_tree().string());
    auto r = run_program({"curl", "-s", "-r", "4000-", "-w", "%{http_code}", server.url() + "/dir/file.txt"});
    CHECK(r.out == "END206");
    r = run_program({"curl", "-s", "-r", "10-19", "-D", "-", "-o", "/dev/null", server.url() + "/dir/file.txt"});
    CHECK(r.out.find("Content-Range: bytes 10-19/4003") != std::string::npos);
    CHECK(r.out.find("Content-Length: 10") != std::string::npos);
    r = run_program({"curl", "-s", "-r", "9000-", "-o", "/dev/null", "-w", "%{http_code}", server.url() + "/dir/file.txt"});
    CHECK(r.out == "416");
}

TEST_CASE("test server faults: N failures then success, truncation, wrong length, reset") {
    HttpServer server(make_tree().string());
    std::string url = server.url() + "/dir/file.txt";
    server.add_fault("/dir/file.txt", {Fault::status_then_ok, 2, 503});
    CHECK(run_program({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url}).out == "503");
    CHECK(run_program({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url}).out == "503");
    CHECK(run_program({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url}).out == "200");

    server.add_fault("/dir/file.txt", {Fault::truncated});
    CHECK(run_program({"curl", "-s", "-o", "/dev/null", url}).exit_code == 18);  // partial file
    server.add_fault("/dir/file.txt", {Fault::wrong_length});
    CHECK(run_program({"curl", "-s", "-o", "/dev/null", url}).exit_code == 18);
    server.add_fault("/dir/file.txt", {Fault::reset_mid_body});
    int rc = run_program({"curl", "-s", "-o", "/dev/null", url}).exit_code;
    CHECK((rc == 56 || rc == 18));  // recv failure (RST), or partial when the RST raced the FIN
    server.add_fault("/dir/file.txt", {Fault::retry_after, 1, 0, 2000});
    auto r = run_program({"curl", "-s", "-D", "-", "-o", "/dev/null", url});
    CHECK(r.out.find("429") != std::string::npos);
    CHECK(r.out.find("Retry-After: 2") != std::string::npos);
}
