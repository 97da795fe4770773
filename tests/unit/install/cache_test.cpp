// The package cache (install/package_cache.hpp) over a real HTTP server: hashes checked while
// streaming, before anything is extracted; a mismatch names the URL and both hashes and keeps
// nothing; a second environment costs no download and no extraction.
#include <doctest/doctest.h>

#include <thread>

#include "tests/unit/install/install_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

std::vector<std::string> leftovers(const fs::path& pkgs) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(pkgs, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (name.find(".part-") != std::string::npos || name.find(".tmp-") != std::string::npos) out.push_back(name);
    }
    return out;
}

fetch::FetchContext context(const fs::path& cache) {
    fetch::FetchContext ctx;
    ctx.cache_dir = cache;
    ctx.transport.retries = 0;
    return ctx;
}

}  // namespace

TEST_CASE("populate_cache downloads, verifies and extracts each package once; a second run fetches nothing") {
    Channel ch("cache-ok");
    auto a = ch.add(native_pkg("zlib", "1.2.13"));
    auto b = ch.add(noarch_pkg("six", "1.16.0"));
    fs::path cache = make_temp_dir("cache");
    std::vector<install::CacheEntry> entries = {install::cache_entry(cache, a), install::cache_entry(cache, b)};
    CHECK(entries[0].dir == cache / "pkgs" / a.sha256);
    std::vector<install::FetchProgress> seen;
    install::populate_cache(entries, context(cache), [&](const install::FetchProgress& p) { seen.push_back(p); });
    for (const auto& e : entries) {
        CHECK(fs::exists(e.archive()));
        CHECK(fs::exists(e.tree() / "info/index.json"));
        CHECK(install::check_tree(e, true));
    }
    CHECK(read_bytes(entries[0].tree() / "share/zlib/README") == "zlib 1.2.13\n");
    CHECK(std::count_if(seen.begin(), seen.end(), [](const install::FetchProgress& p) { return p.done; }) == 2);
    size_t requests = ch.server->requests().size();
    install::populate_cache(entries, context(cache));
    CHECK(ch.server->requests().size() == requests);
    CHECK(leftovers(cache / "pkgs").empty());
}

TEST_CASE("a tampered artifact is a hash error naming the URL and both hashes; nothing of it stays in the cache") {
    Channel ch("cache-bad");
    auto p = ch.add(native_pkg("openssl", "3.0.0"));
    std::string good = ch.bytes.begin()->second;
    std::string evil = good;
    evil[evil.size() / 2] ^= 0x20;
    write_bytes(ch.dir / "ch/linux-64" / ch.bytes.begin()->first, evil);
    fs::path cache = make_temp_dir("cache");
    auto e = install::cache_entry(cache, p);
    try {
        install::populate_cache({e}, context(cache));
        FAIL("a tampered file was accepted");
    } catch (const EnvironmentError& err) {
        std::string msg = err.what();
        CHECK(msg.find("sha256 mismatch for " + p.url) != std::string::npos);
        CHECK(msg.find("expected " + p.sha256) != std::string::npos);
        CHECK(msg.find("got " + mirror::sha256_hex_of(evil)) != std::string::npos);
    }
    CHECK(!fs::exists(e.archive()));
    CHECK(!fs::exists(e.tree()));
    CHECK(leftovers(cache / "pkgs").empty());
}

TEST_CASE("a lock with only md5 is checked against md5 while streaming") {
    Channel ch("cache-md5");
    auto p = ch.add(native_pkg("libfoo", "1.0"));
    p.sha256.clear();
    fs::path cache = make_temp_dir("cache");
    auto e = install::cache_entry(cache, p);
    CHECK(e.dir == cache / "pkgs" / ("md5-" + p.md5));
    install::populate_cache({e}, context(cache));
    CHECK(fs::exists(e.tree() / "info/index.json"));

    auto q = p;
    q.md5 = std::string(32, 'a');
    auto bad = install::cache_entry(make_temp_dir("cache"), q);
    CHECK_THROWS_WITH_AS(install::populate_cache({bad}, context(bad.dir.parent_path().parent_path())),
                         has("md5 mismatch for " + p.url + ": expected aaaa"), EnvironmentError);
    CHECK(!fs::exists(bad.archive()));
}

TEST_CASE("a package the lock gives no hash for is refused before anything is fetched") {
    LockedPackage p;
    p.url = "http://127.0.0.1:9/ch/linux-64/x-1-0.conda";
    CHECK_THROWS_WITH_AS(install::cache_entry("/tmp/c", p), has("installs nothing it cannot verify"), InputError);
}

TEST_CASE("offline, a package missing from the cache is named and nothing is fetched") {
    Channel ch("cache-offline");
    auto p = ch.add(native_pkg("libbar", "2.0"));
    fs::path cache = make_temp_dir("cache");
    auto ctx = context(cache);
    ctx.offline = true;
    CHECK_THROWS_WITH_AS(install::populate_cache({install::cache_entry(cache, p)}, ctx), has(p.url), EnvironmentError);
    CHECK(ch.server->requests().empty());
}

TEST_CASE("an archive damaged in the cache after its download is fetched again before extraction") {
    Channel ch("cache-damaged");
    auto p = ch.add(native_pkg("libbaz", "1.0"));
    fs::path cache = make_temp_dir("cache");
    auto e = install::cache_entry(cache, p);
    install::populate_cache({e}, context(cache), {}, /*extract=*/false);
    REQUIRE(fs::exists(e.archive()));
    write_bytes(e.archive(), "garbage");
    install::populate_cache({e}, context(cache));
    CHECK(mirror::sha256_hex_of(read_bytes(e.archive())) == p.sha256);
    CHECK(install::check_tree(e, true));
}

TEST_CASE("a tree edited through a hardlink fails the full check and is removed, so the next populate re-extracts it") {
    Channel ch("cache-edited");
    auto p = ch.add(native_pkg("libqux", "1.0"));
    fs::path cache = make_temp_dir("cache");
    auto e = install::cache_entry(cache, p);
    install::populate_cache({e}, context(cache));
    std::ofstream(e.tree() / "share/libqux/README", std::ios::app) << "edited\n";
    CHECK(install::check_tree(e, false) == false);   // the size changed
    CHECK(!fs::exists(e.tree()));
    install::populate_cache({e}, context(cache));
    CHECK(read_bytes(e.tree() / "share/libqux/README") == "libqux 1.0\n");
}

TEST_CASE("two populates of one cache at once: each package is downloaded once, both see complete trees") {
    Channel ch("cache-race");
    std::vector<LockedPackage> pkgs;
    for (int i = 0; i < 6; ++i) pkgs.push_back(ch.add(native_pkg("lib" + std::to_string(i), "1.0")));
    fs::path cache = make_temp_dir("cache");
    std::vector<install::CacheEntry> entries;
    for (const auto& p : pkgs) entries.push_back(install::cache_entry(cache, p));
    std::thread other([&] { install::populate_cache(entries, context(cache)); });
    install::populate_cache(entries, context(cache));
    other.join();
    for (const auto& e : entries) CHECK(install::check_tree(e, true));
    for (const auto& p : pkgs) {
        auto path = p.url.substr(ch.server->url().size());
        CHECK(ch.server->requests_for(path).size() == 1);
    }
}
