#include <doctest/doctest.h>

#include <fstream>

#include "fetch/documents.hpp"
#include "fetch/http_cache.hpp"
#include "temp_tree.hpp"
#include "tests/support/http_server.hpp"

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
    return ctx;
}

}  // namespace

TEST_CASE("a cache entry round-trips its validators and body, with parser padding after it") {
    TempTree t;
    CacheEntry meta;
    meta.etag = "\"abc\"";
    meta.last_modified = "Tue, 01 Jun 2021 00:00:00 GMT";
    meta.content_type = "application/json";
    REQUIRE(cache_write(t.path(), "https://x/repodata.json", "", meta, "{\"a\":1}"));
    auto e = cache_read(t.path(), "https://x/repodata.json");
    REQUIRE(e);
    CHECK(e->body() == "{\"a\":1}");
    CHECK(e->etag == "\"abc\"");
    CHECK(e->content_type == "application/json");
    CHECK(std::string_view(e->data.data() + e->data.size(), 64) == std::string(64, '\0'));   // JSON parser padding
    CHECK_FALSE(cache_read(t.path(), "https://x/repodata.json", "other-accept"));
}

TEST_CASE("a cache entry whose body was cut short is ignored") {
    TempTree t;
    REQUIRE(cache_write(t.path(), "https://x/y", "", {}, std::string(1000, 'z')));
    auto path = cache_entry_path(t.path(), "https://x/y");
    std::filesystem::resize_file(path, std::filesystem::file_size(path) - 10);
    CHECK_FALSE(cache_read(t.path(), "https://x/y"));
}

TEST_CASE("Cache-Control: max-age makes an entry fresh; no-cache and no-store do not") {
    CHECK(cache_max_age("public, max-age=600") == 600);
    CHECK(cache_max_age("no-cache") == 0);
    CHECK_FALSE(cache_max_age("public"));
    CacheEntry e;
    e.cache_control = "max-age=60";
    e.validated_at = 1000;
    CHECK(e.fresh(1030));
    CHECK_FALSE(e.fresh(1070));
    TempTree t;
    CacheEntry ns;
    ns.cache_control = "no-store";
    CHECK_FALSE(cache_write(t.path(), "https://x/z", "", ns, "secret"));
    CHECK_FALSE(cache_read(t.path(), "https://x/z"));
}

TEST_CASE("a second fetch revalidates: the server sees If-None-Match and answers 304") {
    TempTree t;
    t.write("www/repodata.json", "{\"packages\": {}}");
    HttpServer server(t.str() + "/www");
    auto ctx = context(t);
    auto first = get_documents({{server.url() + "/repodata.json", ""}}, ctx).at(0);
    CHECK(first.ok());
    CHECK_FALSE(first.from_cache);
    auto second = get_documents({{server.url() + "/repodata.json", ""}}, ctx).at(0);
    CHECK(second.ok());
    CHECK(second.revalidated);
    CHECK(second.body() == "{\"packages\": {}}");
    auto seen = server.requests();
    REQUIRE(seen.size() == 2);
    CHECK_FALSE(seen[1].header("If-None-Match").empty());
    CHECK_FALSE(seen[1].header("If-Modified-Since").empty());
    CHECK(seen[1].status == 304);
}

TEST_CASE("a fresh entry (max-age) is used without asking the server") {
    TempTree t;
    t.write("www/page.html", "<a href='x-1.0.tar.gz'>x</a>");
    HttpServer server(t.str() + "/www");
    server.add_header("/page.html", "Cache-Control", "max-age=600");
    auto ctx = context(t);
    get_documents({{server.url() + "/page.html", ""}}, ctx);
    auto again = get_documents({{server.url() + "/page.html", ""}}, ctx).at(0);
    CHECK(again.from_cache);
    CHECK_FALSE(again.revalidated);
    CHECK(server.requests().size() == 1);
}

TEST_CASE("offline answers from the cache and marks what is missing, without touching the network") {
    TempTree t;
    t.write("www/a.json", "{}");
    HttpServer server(t.str() + "/www");
    auto ctx = context(t);
    get_documents({{server.url() + "/a.json", ""}}, ctx);
    server.clear_requests();
    ctx.offline = true;
    auto docs = get_documents({{server.url() + "/a.json", ""}, {server.url() + "/b.json", ""}}, ctx);
    CHECK(docs[0].ok());
    CHECK(docs[0].body() == "{}");
    CHECK(docs[1].missing_offline);
    CHECK(server.requests().empty());
}

TEST_CASE("a 404 is remembered, so offline knows the page is not there rather than not cached") {
    TempTree t;
    t.write("www/a.json", "{}");
    HttpServer server(t.str() + "/www");
    auto ctx = context(t);
    CHECK(get_documents({{server.url() + "/simple/torch/", ""}}, ctx).at(0).status == 404);
    server.clear_requests();
    ctx.offline = true;
    auto d = get_documents({{server.url() + "/simple/torch/", ""}}, ctx).at(0);
    CHECK(d.status == 404);
    CHECK(d.from_cache);
    CHECK_FALSE(d.missing_offline);
    CHECK(server.requests().empty());
    // Online again, a remembered 404 is asked again: the page may exist by now.
    ctx.offline = false;
    t.write("www/torch.html", "<a href='torch-1.9.1.tar.gz'>torch</a>");
    get_documents({{server.url() + "/torch.html", ""}}, ctx);   // not cached as 404 before: a plain 200
    CHECK(get_documents({{server.url() + "/simple/torch/", ""}}, ctx).at(0).status == 404);
    CHECK(server.requests().size() == 2);
}

TEST_CASE("a body cut short by the network never lands in the cache") {
    TempTree t;
    t.write("www/big.json", std::string(100000, ' ') + "{}");
    HttpServer server(t.str() + "/www");
    server.add_fault("/big.json", {Fault::truncated, -1});
    auto ctx = context(t);
    auto d = get_documents({{server.url() + "/big.json", ""}}, ctx).at(0);
    CHECK_FALSE(d.ok());
    CHECK_FALSE(cache_read(ctx.cache_dir, server.url() + "/big.json"));
    size_t files = 0;
    if (std::filesystem::exists(ctx.cache_dir))
        for (const auto& e : std::filesystem::recursive_directory_iterator(ctx.cache_dir)) files += e.is_regular_file();
    CHECK(files == 0);
}

TEST_CASE("mirrors redirect fetches; file:// mirrors bypass the cache") {
    TempTree t;
    t.write("mirror/simple/x/index.html", "<a href='x-1.0.tar.gz'>x</a>");
    auto ctx = context(t);
    ctx.mirrors.rules = {{"https://pypi.org/simple", "file://" + t.str() + "/mirror/simple", "--mirror"}};
    auto d = get_documents({{"https://pypi.org/simple/x/index.html", ""}}, ctx).at(0);
    CHECK(d.ok());
    CHECK(d.fetched_url == "file://" + t.str() + "/mirror/simple/x/index.html");
    CHECK(d.body() == "<a href='x-1.0.tar.gz'>x</a>");
}
