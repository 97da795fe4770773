// Building (replacing, refusing bad input, deterministic git ids) and serving the tree.
#include <doctest/doctest.h>
#include <httplib.h>

#include "resolver/specs/errors.hpp"
#include "tests/mirror/archive.hpp"
#include "tests/mirror/git_repo.hpp"
#include "tests/mirror/tables.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/unit/mirror/mirror_fixture.hpp"
#include "tests/support/scratch.hpp"

using namespace envlock::mirror;
using namespace envlock::mirror::test;
namespace fs = std::filesystem;

namespace {

std::string mirror_binary() { return (fs::path(ENVLOCK_BINARY).parent_path() / "envlock-mirror").string(); }

std::string git_head(const fs::path& repo, const std::string& rev) {
    std::string cmd = "git -C '" + repo.string() + "' rev-parse " + rev;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[128] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    pclose(p);
    return std::string(buf, n);
}

}  // namespace

TEST_CASE("a served mirror answers find-links downloads with the bytes the page's hash names") {
    envlock::test::HttpServer server(builtin_mirror().dir.string());
    httplib::Client client(server.url());
    auto page = client.Get("/whl/torch_stable.html");
    REQUIRE(page);
    CHECK(page->status == 200);
    std::string href = "cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl";
    auto at = page->body.find(href + "#sha256=");
    REQUIRE(at != std::string::npos);
    std::string sha = page->body.substr(at + href.size() + 8, 64);
    auto wheel = client.Get("/whl/" + href);
    REQUIRE(wheel);
    CHECK(wheel->status == 200);
    CHECK(sha256_hex_of(wheel->body) == sha);
    auto simple = client.Get("/pypi/simple/numpy/");
    REQUIRE(simple);
    CHECK(simple->body.find("numpy-1.19.5-cp38-cp38-manylinux2010_x86_64.whl") != std::string::npos);
    auto repodata = client.Get("/conda/pytorch/linux-64/repodata.json");
    REQUIRE(repodata);
    CHECK(repodata->status == 200);
}

TEST_CASE("the mmdet3d repository's commit ids are the same on every build") {
    fs::path base = envlock::test::scratch_dir("mirror-git");
    auto releases = builtin_tables().mmdet3d;
    make_mmdet3d_repo((base / "a").string(), releases);
    make_mmdet3d_repo((base / "b").string(), releases);
    std::string a = git_head(base / "a", "v0.17.1"), b = git_head(base / "b", "v0.17.1");
    CHECK(a.size() == 41);
    CHECK(a == b);
    fs::remove_all(base);
}

TEST_CASE("building into an existing folder replaces it whole") {
    fs::path base = envlock::test::scratch_dir("mirror-replace");
    fs::path out = base / "m";
    fs::create_directories(out / "stale");
    MirrorOptions options;
    options.with_git_repo = false;
    auto info = build_mirror(out.string(), options);
    CHECK_FALSE(fs::exists(out / "stale"));
    CHECK(fs::exists(out / "SOURCES.md"));
    CHECK(info.root == out.string());
    CHECK(info.git_tags.empty());
    int leftovers = 0;
    for (const auto& e : fs::directory_iterator(base)) leftovers += e.path().filename().string().find(".partial") != std::string::npos;
    CHECK(leftovers == 0);
    fs::remove_all(base);
}

TEST_CASE("an empty output folder is bad input") {
    CHECK_THROWS_AS(build_mirror("", MirrorOptions{}), envlock::InputError);
}

TEST_CASE("a malformed facts file is reported by name and stops the build") {
    fs::path shared = envlock::test::scratch_dir("mirror-badfacts");
    fs::create_directories(shared / "facts");
    {
        std::ofstream(shared / "facts" / "torch.yaml") << "releases: [\n  - torch: 1.9.1\n  bad: : :\n";
    }
    CHECK_THROWS_WITH_AS(load_tables(shared.string()), doctest::Contains("torch.yaml:"), envlock::InputError);
    fs::remove_all(shared);
}

TEST_CASE("envlock-mirror without a subcommand or with an unknown flag exits 2") {
    CHECK(envlock::test::run_program({mirror_binary()}).exit_code == 2);
    CHECK(envlock::test::run_program({mirror_binary(), "build", "/tmp/x", "--bogus"}).exit_code == 2);
}

TEST_CASE("envlock-mirror serve refuses a folder that is not a built mirror") {
    auto r = envlock::test::run_program({mirror_binary(), "serve", "/nonexistent-mirror"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("not a built mirror") != std::string::npos);
}

TEST_CASE("envlock index list reads the mirror's find-links pages: torch per the torch table, mmcv-full per the matrix") {
    std::string cache = envlock::test::scratch_dir("mirror-cache").string();
    std::string root = "file://" + builtin_mirror().dir.string();
    auto torch = envlock::test::run_envlock(
        {"index", "list", "torch", "--find-links", root + "/whl/torch_stable.html", "--cache-dir", cache});
    CHECK(torch.exit_code == 0);
    CHECK(torch.out.find("1.9.1+cu111") != std::string::npos);
    CHECK(torch.out.find("2.7.0+cu128") != std::string::npos);
    CHECK(torch.out.find("1.9.1+cu113") == std::string::npos);
    auto mmcv = envlock::test::run_envlock(
        {"index", "list", "mmcv-full", "--find-links", root + "/mmcv/dist/cu111/torch1.9.0/index.html", "--cache-dir", cache});
    CHECK(mmcv.exit_code == 0);
    CHECK(mmcv.out.find("mmcv-full: 28 versions") != std::string::npos);
    CHECK(mmcv.out.find("mmcv_full-1.4.0-cp38-cp38-manylinux1_x86_64.whl") != std::string::npos);
    fs::remove_all(cache);
}
