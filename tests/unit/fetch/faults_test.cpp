// The transport and the index fetches against a loopback server that misbehaves the ways real
// networks do (issue 20): each fault is either retried to success or ends in one clean error
// naming the URL, and the cache never keeps what was not a whole, usable answer.
#include <doctest/doctest.h>

#include <filesystem>

#include "fetch/conda_repodata.hpp"
#include "fetch/documents.hpp"
#include "fetch/http_cache.hpp"
#include "fetch/index_sources.hpp"
#include "fetch/transport.hpp"
#include "resolver/specs/errors.hpp"
#include "temp_tree.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/run_envlock.hpp"

using namespace envlock::fetch;
using envlock::test::Fault;
using envlock::test::HttpServer;
using envlock::test::TempTree;

namespace {

FetchContext context(const TempTree& t) {
    FetchContext ctx;
    ctx.cache_dir = t.path() / "cache";
    ctx.transport.retries = 2;
    ctx.transport.backoff_ms = 5;
    ctx.transport.connect_timeout_s = 2;
    return ctx;
}

size_t cached_files(const FetchContext& ctx) {
    size_t n = 0;
    std::error_code ec;
    if (std::filesystem::exists(ctx.cache_dir, ec))
        for (const auto& e : std::filesystem::recursive_directory_iterator(ctx.cache_dir)) n += e.is_regular_file();
    return n;
}

// `bytes` zeros compressed by the real tool, served as `name` beside the plain tree.
void write_compressed_zeros(const TempTree& t, const std::string& tool, size_t bytes, const std::string& name) {
    auto dir = t.path() / "www";
    std::filesystem::create_directories(dir);
    std::string out = (dir / name).string();
    auto r = envlock::test::run_program(
        {"sh", "-c", "head -c " + std::to_string(bytes) + " /dev/zero | " + tool + " > '" + out + "'"});
    REQUIRE(r.exit_code == 0);
}

}  // namespace

TEST_CASE("503 with Retry-After is waited out and retried, like 429 (RFC 9110 10.2.3)") {
    TempTree t;
    t.write("www/repodata.json", "{\"packages\": {}}");
    HttpServer server(t.str() + "/www");
    server.add_fault("/repodata.json", {Fault::retry_after, 1, 503, 0});
    auto ctx = context(t);
    auto d = get_documents({{server.url() + "/repodata.json", ""}}, ctx).at(0);
    CHECK(d.ok());
    REQUIRE(server.requests().size() == 2);
    CHECK(server.requests()[0].status == 503);
}

TEST_CASE("a redirect loop ends after libcurl's limit in an error naming the URL") {
    TempTree t;
    t.write("www/loop.json", "{}");
    HttpServer server(t.str() + "/www");
    server.add_fault("/loop.json", {Fault::redirect_loop, -1});
    auto ctx = context(t);
    auto d = get_documents({{server.url() + "/loop.json", ""}}, ctx).at(0);
    CHECK_FALSE(d.ok());
    CHECK(d.error.find(server.url() + "/loop.json") != std::string::npos);
    CHECK(d.error.find("redirect") != std::string::npos);
    CHECK(server.requests().size() <= 12);   // the first answer and at most ten redirects
    CHECK(cached_files(ctx) == 0);
}

TEST_CASE("a gzip bomb is cut off at the body limit, not decoded into memory, and not cached") {
    TempTree t;
    write_compressed_zeros(t, "gzip -1 -n", 64u << 20, "bomb.json");
    HttpServer server(t.str() + "/www");
    server.add_header("/bomb.json", "Content-Encoding", "gzip");
    auto ctx = context(t);
    ctx.transport.max_body_bytes = 1u << 20;
    auto d = get_documents({{server.url() + "/bomb.json", "", BodyKind::json}}, ctx).at(0);
    CHECK_FALSE(d.ok());
    CHECK(d.error.find(server.url() + "/bomb.json") != std::string::npos);
    CHECK(d.error.find("larger than 1 MB once decoded") != std::string::npos);
    CHECK(server.requests().size() == 1);   // not retried: the same bytes would come again
    CHECK(cached_files(ctx) == 0);
}

TEST_CASE("a zstd bomb is refused while decoding, and so is a frame header that claims too much") {
    TempTree t;
    write_compressed_zeros(t, "zstd -q -c", 8u << 20, "repodata.json.zst");
    std::string packed = envlock::test::run_program({"cat", t.str() + "/www/repodata.json.zst"}).out;
    CHECK_THROWS_WITH_AS(decompress_zstd(packed, "https://c/x/repodata.json.zst", 1u << 20),
                         doctest::Contains("https://c/x/repodata.json.zst: decodes to more than 1 MB"),
                         envlock::EnvironmentError);
    CHECK(decompress_zstd(packed, "x").size() == (8u << 20));   // under the default limit it is fine
}

TEST_CASE("repodata answered by a login page (200, HTML) is an error naming the URL, and never cached") {
    TempTree t;
    t.write("www/ch/linux-64/repodata.json", "{\"packages\": {}}");
    t.write("www/ch/noarch/repodata.json", "{\"packages\": {}}");
    HttpServer server(t.str() + "/www");
    server.add_fault("/ch/linux-64/repodata.json.zst", {Fault::html_body, -1});
    auto ctx = context(t);
    CHECK_THROWS_WITH_AS(fetch_repodata({server.url() + "/ch"}, {"linux-64", "noarch"}, ctx),
                         doctest::Contains("/ch/linux-64/repodata.json.zst: it answered an HTML page where zstd data was expected"),
                         envlock::EnvironmentError);
    CHECK_FALSE(cache_read(ctx.cache_dir, server.url() + "/ch/linux-64/repodata.json.zst"));

    // The page goes away: the next fetch reads the real repodata, from the network.
    server.clear_faults();
    auto docs = fetch_repodata({server.url() + "/ch"}, {"linux-64", "noarch"}, ctx);
    CHECK(docs.size() == 2);
}

TEST_CASE("a JSON body that a proxy replaced in the cache is not used again (the entry is refetched)") {
    TempTree t;
    t.write("www/repodata.json", "{\"packages\": {}}");
    HttpServer server(t.str() + "/www");
    auto ctx = context(t);
    std::string url = server.url() + "/repodata.json";
    CacheEntry poisoned;
    poisoned.cache_control = "max-age=3600";   // fresh: would be used without asking
    REQUIRE(cache_write(ctx.cache_dir, url, "", poisoned, "<html>sign in</html>"));
    auto d = get_documents({{url, "", BodyKind::json}}, ctx).at(0);
    CHECK(d.ok());
    CHECK(d.body() == "{\"packages\": {}}");
    CHECK(server.requests().size() == 1);
}

TEST_CASE("a PyPI simple page answered by a login page (200, HTML with a form) is an error naming the URL, and never cached") {
    TempTree t;
    t.write("www/simple/six/index.html", "<html><body><a href=\"six-1.16.0-py2.py3-none-any.whl\">six</a></body></html>\n");
    HttpServer server(t.str() + "/www");
    server.add_fault("/simple/six/", {Fault::html_body, -1});
    auto ctx = context(t);
    IndexSources sources;
    sources.index_urls = {server.url() + "/simple"};
    CHECK_THROWS_WITH_AS(find_pypi_records(sources, {"six"}, ctx),
                         doctest::Contains("/simple/six/: it answered a page with a form (a login page?) where a simple index page"),
                         envlock::EnvironmentError);
    // Not cached: offline, the page is missing, not the login page again.
    auto offline = ctx;
    offline.offline = true;
    CHECK_THROWS_WITH_AS(find_pypi_records(sources, {"six"}, offline), doctest::Contains("offline, and not in the cache"),
                         envlock::EnvironmentError);
    // The page goes away: the real page is read.
    server.clear_faults();
    auto records = find_pypi_records(sources, {"six"}, ctx);
    REQUIRE(records.size() == 1);
    CHECK(records[0].size() == 1);
}
