// Faults and attacks on the index side, round two (#32), as a user meets them through the real
// binary: an index's credentials go to its own host's files and metadata and nowhere else; a
// mirror rule matches an index URL that carries credentials, which stay behind; a PyPI page
// that is no index page (an error page or an error object answered with 200) is exit 3 naming
// the URL and never cached; a server that drips is given up on after the transfer deadline.
// Every server is a loopback HttpServer (tests/support).
#include <doctest/doctest.h>

#include <chrono>

#include "resolver/lock/sha256.hpp"
#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

const std::string kToken = "tok123secret";
const std::string kAlice = "Basic YWxpY2U6dG9rMTIzc2VjcmV0";   // alice:tok123secret
const std::string kCarol = "Basic Y2Fyb2w6cHc=";               // carol:pw

// A PEP 503 index with six 1.16.0 and its PEP 658 metadata file; the file links are absolute to
// `files_origin` when given (another host), else relative (the index's own host).
void write_six_index(const fs::path& root, const std::string& files_origin = "") {
    const std::string wheel = "six-1.16.0-py2.py3-none-any.whl";
    const std::string metadata = "Metadata-Version: 2.1\nName: six\nVersion: 1.16.0\n";
    write_file(root / "files" / (wheel + ".metadata"), metadata);
    write_file(root / "files" / wheel, "not read by a resolve");
    const std::string href = (files_origin.empty() ? "../../files/" : files_origin + "/files/") + wheel;
    write_file(root / "simple/six/index.html",
               "<!DOCTYPE html>\n<html><body>\n<a href=\"" + href + "#sha256=" + envlock::sha256_hex(wheel) +
                   "\" data-dist-info-metadata=\"sha256=" + envlock::sha256_hex(metadata) + "\">" + wheel + "</a>\n</body></html>\n");
}

RunResult resolve_six(const fs::path& dir, const std::string& index_url, const std::vector<std::string>& extra = {}) {
    write_file(dir / "spec.yaml", "name: creds\npython: \"3.10\"\nindexes: [" + index_url + "]\nrequirements: [six==1.16.0]\n");
    std::vector<std::string> args{"resolve", (dir / "spec.yaml").string(), "-o", (dir / "envlock.yaml").string(),
                                  "--cache-dir", (dir / "cache").string(), "--platform", "linux-64", "--glibc", "2.31"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_envlock(args);
}

std::string with_user(const HttpServer& server, const std::string& userinfo) {
    return "http://" + userinfo + "@" + server.url().substr(7);
}

size_t requests_with(const HttpServer& server, const std::string& authorization) {
    size_t n = 0;
    for (const auto& r : server.requests()) n += r.header("Authorization") == authorization;
    return n;
}

}  // namespace

TEST_CASE("credentials: the index's credentials go to its files and .metadata on the same scheme, host and port") {
    fs::path dir = temp_dir("creds-same-host");
    write_six_index(dir / "index");
    HttpServer index((dir / "index").string());
    index.require_authorization(kAlice);
    auto run = resolve_six(dir, with_user(index, "alice:" + kToken) + "/simple");
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    CHECK(locked_version(read_file(dir / "envlock.yaml"), "six") == "1.16.0");
    bool read_metadata = false;
    for (const auto& r : index.requests()) {
        CAPTURE(r.path);
        CHECK(r.status != 401);
        read_metadata = read_metadata || r.path == "/files/six-1.16.0-py2.py3-none-any.whl.metadata";
    }
    CHECK(read_metadata);
    CHECK(read_file(dir / "envlock.yaml").find(kToken) == std::string::npos);
}

TEST_CASE("credentials: never to another host, nor to another port of the same host") {
    fs::path dir = temp_dir("creds-other-host");
    write_six_index(dir / "files-host");
    HttpServer files((dir / "files-host").string());   // 127.0.0.1 as well, on another port: another origin
    write_six_index(dir / "index", files.url());
    HttpServer index((dir / "index").string());
    index.require_authorization(kAlice);
    auto run = resolve_six(dir, with_user(index, "alice:" + kToken) + "/simple");
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    REQUIRE_FALSE(files.requests().empty());
    for (const auto& r : files.requests()) {
        CAPTURE(r.path);
        CHECK(r.header("Authorization").empty());
    }
}

TEST_CASE("mirrors: a rule matches an index URL that carries credentials, and the credentials stay behind") {
    fs::path dir = temp_dir("creds-mirror");
    write_six_index(dir / "public");
    write_six_index(dir / "mirror");
    HttpServer upstream((dir / "public").string());
    HttpServer mirror((dir / "mirror").string());
    auto run = resolve_six(dir, with_user(upstream, "alice:" + kToken) + "/simple",
                           {"--mirror", upstream.url() + "/=" + mirror.url() + "/"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    CHECK(upstream.requests().empty());   // neither the page nor the token went to the index
    REQUIRE_FALSE(mirror.requests().empty());
    CHECK(requests_with(mirror, kAlice) == 0);

    // A rule whose replacement carries credentials sends those, to every request on the mirror.
    mirror.require_authorization(kCarol);
    mirror.clear_requests();
    fs::remove_all(dir / "cache");
    run = resolve_six(dir, with_user(upstream, "alice:" + kToken) + "/simple",
                      {"--mirror", upstream.url() + "/=" + with_user(mirror, "carol:pw") + "/"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    CHECK(upstream.requests().empty());
    CHECK(requests_with(mirror, kCarol) == mirror.requests().size());
    CHECK(requests_with(mirror, kCarol) >= 2);   // the page and the metadata file
}

TEST_CASE("a PyPI page answered by an error page or an error object with 200 is exit 3 naming the URL, and never cached") {
    fs::path dir = temp_dir("pypi-error-page");
    write_six_index(dir / "index");
    HttpServer index((dir / "index").string());
    const std::string page = index.url() + "/simple/six/";
    const std::vector<std::string> list{"index", "list", "six", "-i", index.url() + "/simple", "--cache-dir", (dir / "cache").string()};
    auto offline = list;
    offline.push_back("--offline");

    Fault error_page{Fault::error_page, -1};
    Fault json_error{Fault::error_page, -1};
    json_error.body = "{\"message\": \"Unauthorized\", \"code\": 401}";
    json_error.content_type = "application/vnd.pypi.simple.v1+json";
    Fault html_as_json{Fault::error_page, -1};
    html_as_json.content_type = "application/vnd.pypi.simple.v1+json";
    for (const auto& [fault, looks] : {std::pair<Fault, std::string>{error_page, "an HTML page with no links"},
                                       {json_error, "JSON that is no project page"},
                                       {html_as_json, "an HTML page with no links"}}) {
        CAPTURE(looks);
        index.add_fault("/simple/six/", fault);
        auto run = run_envlock(list);
        CHECK(run.exit_code == 3);
        CHECK_MESSAGE(run.err.find(page + ": it answered " + looks) != std::string::npos, run.err);
        auto again = run_envlock(offline);
        CHECK(again.exit_code == 3);
        CHECK_MESSAGE(again.err.find("offline, and not in the cache") != std::string::npos, again.err);
        index.clear_faults();
    }
    auto ok = run_envlock(list);
    CHECK_MESSAGE(ok.exit_code == 0, ok.err);
    CHECK(ok.out.find("1.16.0") != std::string::npos);
}

TEST_CASE("index list against a server that drips and honours Range ends at the transfer deadline, exit 3 saying too slow") {
    fs::path dir = temp_dir("drip-cli");
    write_six_index(dir / "index");
    std::string big = read_file(dir / "index/simple/six/index.html");
    while (big.size() < 100000) big += "<!-- padding -->\n";
    write_file(dir / "index/simple/six/index.html", big);
    HttpServer index((dir / "index").string());
    Fault drip{Fault::drip, -1, 0, 300};
    drip.piece = 10;
    drip.per_answer = 30;
    index.add_fault("/simple/six/", drip);
    write_file(dir / "config/envlock/config.yaml", "min-rate: 2000\ntransfer-grace: 2\nbackoff-ms: 10\n");
    const auto start = std::chrono::steady_clock::now();
    auto run = run_envlock({"index", "list", "six", "-i", index.url() + "/simple", "--cache-dir", (dir / "cache").string()},
                           {"XDG_CONFIG_HOME=" + (dir / "config").string()});
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(run.exit_code == 3);
    CHECK_MESSAGE(run.err.find(index.url() + "/simple/six/: too slow:") != std::string::npos, run.err);
    CHECK(took < 10);
    CHECK(index.requests_for("/simple/six/").size() >= 2);   // resumed, and still given up on
}
