#include <doctest/doctest.h>

#include <filesystem>

#include "fetch/artifacts.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/lock/sha256.hpp"
#include "temp_tree.hpp"
#include "tests/support/http_server.hpp"

using namespace envlock;
using namespace envlock::fetch;
using envlock::test::Fault;
using envlock::test::HttpServer;
using envlock::test::TempTree;

namespace {

FetchContext quick() {
    FetchContext ctx;
    ctx.transport.retries = 2;
    ctx.transport.backoff_ms = 5;
    return ctx;
}

}  // namespace

TEST_CASE("artifacts download in parallel through mirrors, resumed after a reset, checked by sha256") {
    TempTree t;
    std::string a(300000, 'a'), b = "wheel bytes";
    t.write("www/pkgs/a.conda", a);
    t.write("www/pkgs/b.whl", b);
    HttpServer server(t.str() + "/www");
    server.add_fault("/pkgs/a.conda", {Fault::reset_mid_body});
    auto ctx = quick();
    ctx.mirrors.rules = {{"https://conda.anaconda.org/", server.url() + "/", "--mirror"}};
    auto got = download_artifacts({{"https://conda.anaconda.org/pkgs/a.conda", t.str() + "/out/a.conda", sha256_hex(a)},
                                   {server.url() + "/pkgs/b.whl", t.str() + "/out/b.whl", sha256_hex(b)}},
                                  ctx);
    REQUIRE(got.size() == 2);
    CHECK(got[0].url == "https://conda.anaconda.org/pkgs/a.conda");
    CHECK(got[0].size == a.size());
    CHECK(envlock::test::slurp_file(t.path() / "out/a.conda") == a);
    CHECK(envlock::test::slurp_file(t.path() / "out/b.whl") == b);
}

TEST_CASE("a wrong sha256 or a 404 is an environment error naming the URL; nothing lands") {
    TempTree t;
    t.write("www/x.whl", "x");
    HttpServer server(t.str() + "/www");
    CHECK_THROWS_WITH_AS(download_artifacts({{server.url() + "/x.whl", t.str() + "/out/x.whl", std::string(64, 'f')}}, quick()),
                         doctest::Contains(("sha256 mismatch for " + server.url() + "/x.whl").c_str()), EnvironmentError);
    CHECK_FALSE(std::filesystem::exists(t.path() / "out/x.whl"));
    CHECK_THROWS_WITH_AS(download_artifacts({{server.url() + "/gone.whl", t.str() + "/out/g.whl", ""}}, quick()),
                         doctest::Contains(("cannot fetch " + server.url() + "/gone.whl: HTTP 404").c_str()), EnvironmentError);
    CHECK_FALSE(std::filesystem::exists(t.path() / "out/g.whl"));
}

TEST_CASE("offline, downloads are refused with the list of what is missing") {
    auto ctx = quick();
    ctx.offline = true;
    CHECK_THROWS_WITH_AS(download_artifacts({{"https://u:pw@h/a.whl", "/tmp/none", ""}}, ctx),
                         doctest::Contains("https://u:***@h/a.whl"), EnvironmentError);
}
