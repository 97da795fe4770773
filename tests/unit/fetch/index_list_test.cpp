// `envlock index list` end to end: the built binary against a loopback server over fixture
// trees and, when present, the real index snapshots in ../shared/snapshots.
#include <doctest/doctest.h>

#include <zstd.h>

#include <filesystem>
#include <future>

#include <nlohmann/json.hpp>

#include "fetch/http_cache.hpp"
#include "temp_tree.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/run_envlock.hpp"

using envlock::test::Fault;
using envlock::test::HttpServer;
using envlock::test::run_envlock;
using envlock::test::RunResult;
using envlock::test::TempTree;

namespace {

const std::string kSnapshots = envlock::test::shared_dir() + "/snapshots";

std::string conda_record(const std::string& name, const std::string& version, const std::string& build, int number) {
    return "\"" + name + "-" + version + "-" + build + ".tar.bz2\": {\"name\": \"" + name + "\", \"version\": \"" + version +
           "\", \"build\": \"" + build + "\", \"build_number\": " + std::to_string(number) +
           ", \"depends\": [\"python >=3.8\"], \"sha256\": \"" + std::string(64, 'a') + "\", \"size\": 10}";
}

// A small channel, a zstd-only channel, a simple index (HTML and PEP 691) and a find-links page.
struct Site {
    TempTree tree;
    std::unique_ptr<HttpServer> server;
    std::string url;

    Site() {
        tree.write("www/ch/linux-64/repodata.json",
                   "{\"info\": {\"subdir\": \"linux-64\"}, \"packages\": {" + conda_record("pytorch", "1.9.0", "py3.8_cuda11.1_cudnn8.0.5_0", 0) +
                       ", " + conda_record("pytorch", "1.10.0", "py3.8_cpu_0", 0) + ", " +
                       conda_record("pytorch", "1.9.0", "py3.8_cpu_0", 0) + ", " + conda_record("numpy", "1.19.5", "py38_0", 0) +
                       "}}");
        tree.write("www/ch/noarch/repodata.json",
                   "{\"info\": {\"subdir\": \"noarch\"}, \"packages\": {" + conda_record("pytorch-mutex", "1.0", "cuda", 0) + "}}");
        std::string plain = "{\"info\": {\"subdir\": \"linux-64\"}, \"packages\": {" +
                            conda_record("cudatoolkit", "11.1.1", "h6406543_8", 8) + "}}";
        std::string packed(ZSTD_compressBound(plain.size()), '\0');
        packed.resize(ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), 3));
        tree.write("www/zch/linux-64/repodata.json.zst", packed);
        tree.write("www/bad/linux-64/repodata.json", "{\"packages\": [1, 2, 3]");
        tree.write("www/simple/mmdet/index.html",
                   "<a href=\"../../files/mmdet-2.14.0-py3-none-any.whl#sha256=abcd\" data-requires-python=\"&gt;=3.6\">"
                   "mmdet-2.14.0-py3-none-any.whl</a>\n<a href=\"../../files/mmdet-2.14.0.tar.gz\">mmdet-2.14.0.tar.gz</a>\n"
                   "<a href=\"../../files/mmdet-2.2.0.tar.gz\" data-yanked=\"\">mmdet-2.2.0.tar.gz</a>\n");
        tree.write("www/simple/yapf/index.json",
                   R"({"meta": {"api-version": "1.0"}, "name": "yapf", "files": [
                       {"filename": "yapf-0.40.2-py3-none-any.whl", "url": "/files/yapf-0.40.2-py3-none-any.whl", "hashes": {"sha256": "ff"}},
                       {"filename": "yapf-0.32.0-py2.py3-none-any.whl", "url": "/files/yapf-0.32.0-py2.py3-none-any.whl", "hashes": {}}]})");
        tree.write("www/links/index.html",
                   "<a href=\"cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl\">torch-1.9.1+cu111-cp38-cp38-linux_x86_64.whl</a>\n"
                   "<a href=\"cpu/torch-1.9.1%2Bcpu-cp38-cp38-linux_x86_64.whl\">torch-1.9.1+cpu-cp38-cp38-linux_x86_64.whl</a>\n");
        tree.write("config/envlock/config.yaml", "retries: 2\nbackoff-ms: 10\nconnect-timeout: 2\nlow-speed-time: 2\n");
        server = std::make_unique<HttpServer>(tree.str() + "/www");
        server->add_header("/simple/yapf/", "Content-Type", "application/vnd.pypi.simple.v1+json");
        url = server->url();
    }

    RunResult list(std::vector<std::string> args, std::vector<std::string> env = {}) {
        args.insert(args.begin(), {"index", "list"});
        args.push_back("--cache-dir");
        args.push_back(tree.str() + "/cache");
        env.push_back("XDG_CONFIG_HOME=" + tree.str() + "/config");
        return run_envlock(args, env);
    }

    size_t cache_files() const {
        size_t n = 0;
        if (std::filesystem::exists(tree.path() / "cache"))
            for (const auto& e : std::filesystem::recursive_directory_iterator(tree.path() / "cache")) n += e.is_regular_file();
        return n;
    }
};

bool has_line_with(const std::string& text, const std::string& a, const std::string& b) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t nl = text.find('\n', pos);
        std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return true;
        if (nl == std::string::npos) break;
        pos = nl + 1;
    }
    return false;
}

}  // namespace

TEST_CASE("index list: a channel's versions newest first with their builds, noarch included") {
    Site site;
    auto r = site.list({"pytorch", "--channel", site.url + "/ch"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("pytorch: 2 versions\nAvailable versions: 1.10.0, 1.9.0\n") == 0);
    CHECK(r.out.find("py3.8_cuda11.1_cudnn8.0.5_0") != std::string::npos);
    CHECK(r.out.find("numpy") == std::string::npos);
    CHECK(site.list({"pytorch-mutex", "--channel", site.url + "/ch"}).out.find("noarch  cuda") != std::string::npos);
}

TEST_CASE("index list: repodata.json.zst is used when the server has it") {
    Site site;
    auto r = site.list({"cudatoolkit", "--channel", site.url + "/zch"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("Available versions: 11.1.1") != std::string::npos);
    CHECK(site.server->requests_for("/zch/linux-64/repodata.json").empty());
    CHECK(site.server->requests_for("/zch/linux-64/repodata.json.zst").at(0).status == 200);
}

TEST_CASE("index list --json gives every file with its fields") {
    Site site;
    auto r = site.list({"pytorch", "--channel", site.url + "/ch", "--json"});
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["name"] == "pytorch");
    REQUIRE(j["versions"].size() == 2);
    CHECK(j["versions"][0]["version"] == "1.10.0");
    CHECK(j["versions"][1]["files"].size() == 2);
    auto f = j["versions"][0]["files"][0];
    CHECK(f["ecosystem"] == "conda");
    CHECK(f["build"] == "py3.8_cpu_0");
    CHECK(f["subdir"] == "linux-64");
    CHECK(f["url"] == site.url + "/ch/linux-64/pytorch-1.10.0-py3.8_cpu_0.tar.bz2");
    CHECK(f["sha256"] == std::string(64, 'a'));
}

TEST_CASE("index list: simple indexes in PEP 503 HTML and PEP 691 JSON, and find-links pages") {
    Site site;
    auto r = site.list({"mmdet", "--index-url", site.url + "/simple"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("Available versions: 2.14.0, 2.2.0") != std::string::npos);
    CHECK(has_line_with(r.out, "py3-none-any  requires-python >=3.6", site.url + "/files/mmdet-2.14.0-py3-none-any.whl"));
    CHECK(has_line_with(r.out, "sdist  YANKED", "mmdet-2.2.0.tar.gz"));
    CHECK(site.server->requests_for("/simple/mmdet/").at(0).header("Accept").find("application/vnd.pypi.simple.v1+json") == 0);

    r = site.list({"yapf", "--index-url", site.url + "/simple/"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("Available versions: 0.40.2, 0.32.0") != std::string::npos);

    r = site.list({"torch", "--find-links", site.url + "/links/index.html"});
    REQUIRE(r.exit_code == 0);
    CHECK(has_line_with(r.out, "cp38-cp38-linux_x86_64", site.url + "/links/cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl"));
}

TEST_CASE("index list: a second run revalidates with 304s, and --offline then needs no server") {
    Site site;
    std::vector<std::string> args = {"pytorch", "--channel", site.url + "/ch", "--find-links", site.url + "/links/index.html"};
    auto first = site.list(args);
    REQUIRE(first.exit_code == 0);
    site.server->clear_requests();
    auto second = site.list(args);
    REQUIRE(second.exit_code == 0);
    CHECK(second.out == first.out);
    auto seen = site.server->requests_for("/ch/linux-64/repodata.json");
    REQUIRE(seen.size() == 1);
    CHECK_FALSE(seen[0].header("If-None-Match").empty());
    CHECK(seen[0].status == 304);
    CHECK(site.server->requests_for("/links/index.html").at(0).status == 304);

    site.server.reset();  // nothing listens any more
    args.push_back("--offline");
    auto offline = site.list(args);
    INFO(offline.err);
    CHECK(offline.exit_code == 0);
    CHECK(offline.out == first.out);
}

TEST_CASE("index list --offline with nothing cached names each missing URL and exits 3") {
    Site site;
    auto r = site.list({"pytorch", "--channel", site.url + "/ch", "--offline"});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("offline, and not in the cache") != std::string::npos);
    CHECK(r.err.find(site.url + "/ch/linux-64/repodata.json") != std::string::npos);
    CHECK(site.server->requests().empty());
}

TEST_CASE("index list: transient faults are retried; persistent ones exit 3 naming the URL") {
    Site site;
    site.server->add_fault("/ch/linux-64/repodata.json", {Fault::status_then_ok, 1, 502});
    site.server->add_fault("/links/index.html", {Fault::reset_mid_body});
    auto ok = site.list({"pytorch", "--channel", site.url + "/ch"});
    CHECK(ok.exit_code == 0);

    Site broken;
    broken.server->add_fault("/ch/linux-64/repodata.json", {Fault::truncated, -1});
    auto r = broken.list({"pytorch", "--channel", broken.url + "/ch"});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("cannot fetch " + broken.url + "/ch/linux-64/repodata.json") != std::string::npos);
    // The noarch subdir made it into the cache (and the 404s of the two .zst and of the two CEP 16
    // shard indexes asked for first); the truncated index did not.
    CHECK(broken.cache_files() == 5);
    CHECK(envlock::fetch::cache_read(broken.tree.path() / "cache", broken.url + "/ch/noarch/repodata.json"));
    CHECK_FALSE(envlock::fetch::cache_read(broken.tree.path() / "cache", broken.url + "/ch/linux-64/repodata.json"));

    auto down = broken.list({"pytorch", "--channel", "http://127.0.0.1:1/ch"});
    CHECK(down.exit_code == 3);
    CHECK(down.err.find("http://127.0.0.1:1/ch/linux-64/repodata.json.zst") != std::string::npos);
}

TEST_CASE("index list: a malformed index exits 2 naming the URL and what was expected") {
    Site site;
    auto r = site.list({"pytorch", "--channel", site.url + "/bad"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(site.url + "/bad/linux-64/repodata.json: malformed repodata") != std::string::npos);
}

TEST_CASE("index list: a channel without the platform subdir exits 3; an unknown package exits 1") {
    Site site;
    auto r = site.list({"pytorch", "--channel", site.url + "/nochannel"});
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("no conda channel subdir at " + site.url + "/nochannel/linux-64") != std::string::npos);
    r = site.list({"tensorflow", "--channel", site.url + "/ch"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("no versions of 'tensorflow'") != std::string::npos);
}

TEST_CASE("index list: --mirror, ENVLOCK_MIRRORS and config.yaml redirect a channel URL") {
    Site site;
    auto r = site.list({"pytorch", "--channel", "https://conda.anaconda.org/pytorch", "--mirror",
                        "https://conda.anaconda.org/pytorch=" + site.url + "/ch"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    // Records keep the original URL; only the fetch goes to the mirror.
    CHECK(r.out.find("https://conda.anaconda.org/pytorch/linux-64/pytorch-1.9.0-py3.8_cpu_0.tar.bz2") != std::string::npos);
    r = site.list({"pytorch", "-c", "pytorch"}, {"ENVLOCK_MIRRORS=https://example.invalid/=x;https://conda.anaconda.org/=" + site.url + "/"});
    INFO(r.err);
    CHECK(r.exit_code == 3);  // "/pytorch" does not exist on the site: the mirror was really asked
    CHECK(r.err.find("(fetched from " + site.url + "/pytorch/linux-64/repodata.json)") != std::string::npos);
    r = site.list({"pytorch", "-c", "pytorch"}, {"ENVLOCK_MIRRORS=https://conda.anaconda.org/pytorch=" + site.url + "/ch"});
    CHECK(r.exit_code == 0);
    site.tree.write("config/envlock/config.yaml", "retries: 1\nmirrors:\n  https://conda.anaconda.org/pytorch: file://" + site.tree.str() + "/www/ch\n");
    r = site.list({"pytorch", "-c", "pytorch", "--offline"});
    INFO(r.err);
    CHECK(r.exit_code == 0);  // file:// needs no cache, even offline
    CHECK(r.out.find("Available versions: 1.10.0, 1.9.0") != std::string::npos);
}

TEST_CASE("index list: bad flags are bad input") {
    Site site;
    CHECK(site.list({"pytorch", "--mirror", "nonsense", "-c", site.url + "/ch"}).exit_code == 2);
    CHECK(site.list({"pytorch", "--jobs", "0", "-c", site.url + "/ch"}).exit_code == 2);
}

TEST_CASE("real snapshots: the pytorch channel lists 1.5.1 ... 2.1.0 with 1.9.0's cuda11.1 builds") {
    if (!std::filesystem::exists(kSnapshots + "/rattler-pytorch-channel")) {
        MESSAGE("skipped: " << kSnapshots << " is absent");
        return;
    }
    TempTree t;
    HttpServer server(kSnapshots);
    auto r = run_envlock({"index", "list", "pytorch", "--channel", server.url() + "/rattler-pytorch-channel", "--cache-dir",
                          t.str()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("pytorch: 19 versions\nAvailable versions: 2.1.0, 2.0.1, 2.0.0, 1.13.1, 1.13.0, 1.12.1, 1.12.0, "
                     "1.11.0, 1.10.2, 1.10.1, 1.10.0, 1.9.1, 1.9.0, 1.8.1, 1.8.0, 1.7.1, 1.7.0, 1.6.0, 1.5.1\n") == 0);
    CHECK(has_line_with(r.out, "py3.9_cuda11.1_cudnn8.0.5_0", "pytorch-1.9.0-py3.9_cuda11.1_cudnn8.0.5_0.tar.bz2"));
}

TEST_CASE("real snapshots: torch_stable.html lists torch 1.8.0+cu111; the openmmlab page lists mmcv-full 1.6.0 ... 1.7.2") {
    if (!std::filesystem::exists(kSnapshots + "/pytorch-torch_stable-html-2021-03")) {
        MESSAGE("skipped: " << kSnapshots << " is absent");
        return;
    }
    TempTree t;
    HttpServer server(kSnapshots);
    auto r = run_envlock({"index", "list", "torch", "--find-links",
                          server.url() + "/pytorch-torch_stable-html-2021-03/torch_stable.html", "--cache-dir", t.str()});
    REQUIRE(r.exit_code == 0);
    CHECK(has_line_with(r.out, "cp38-cp38-linux_x86_64",
                        server.url() + "/pytorch-torch_stable-html-2021-03/cu111/torch-1.8.0%2Bcu111-cp38-cp38-linux_x86_64.whl"));
    r = run_envlock({"index", "list", "mmcv-full", "--find-links",
                     server.url() + "/poetry-fixture-openmmlab-mmcv-index/mmcv_torch_releases.html", "--cache-dir", t.str()});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("mmcv-full: 6 versions\nAvailable versions: 1.7.2, 1.7.1, 1.7.0, 1.6.2, 1.6.1, 1.6.0\n") == 0);
}

TEST_CASE("index list: credentials in an index URL are used but never printed") {
    Site site;
    std::string with_creds = "http://alice:s3cret@" + site.url.substr(7) + "/simple";
    auto r = site.list({"mmdet", "--index-url", with_creds, "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("s3cret") == std::string::npos);
    CHECK(r.out.find("alice") == std::string::npos);
    CHECK(site.server->requests_for("/simple/mmdet/").at(0).header("Authorization") == "Basic YWxpY2U6czNjcmV0");
}

TEST_CASE("index list: a file:// simple index is a folder tree with index.html pages") {
    Site site;
    auto r = site.list({"mmdet", "--index-url", "file://" + site.tree.str() + "/www/simple"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("Available versions: 2.14.0, 2.2.0") != std::string::npos);
    CHECK(r.out.find("file://" + site.tree.str() + "/www/files/mmdet-2.14.0-py3-none-any.whl") != std::string::npos);
}

TEST_CASE("index list: several processes sharing one cache all succeed and leave it whole") {
    Site site;
    std::vector<std::string> args = {"pytorch", "--channel", site.url + "/ch"};
    std::vector<std::future<RunResult>> runs;
    for (int i = 0; i < 4; ++i) runs.push_back(std::async(std::launch::async, [&] { return site.list(args); }));
    std::string first;
    for (auto& fut : runs) {
        auto r = fut.get();
        CHECK(r.exit_code == 0);
        if (first.empty()) first = r.out;
        CHECK(r.out == first);
    }
    for (const auto& e : std::filesystem::recursive_directory_iterator(site.tree.path() / "cache"))
        if (e.is_regular_file()) CHECK(e.path().extension() == ".entry");  // no temp file left behind
    auto offline = site.list({"pytorch", "--channel", site.url + "/ch", "--offline"});
    CHECK(offline.out == first);
}

TEST_CASE("index list: a JSON API root (/pypi) and a file:// find-links directory") {
    Site site;
    site.tree.write("www/pypi/yapf/json",
                    R"({"info": {"name": "yapf", "version": "0.40.2", "requires_dist": ["platformdirs>=3.5.1"]},
                        "releases": {"0.40.2": [{"filename": "yapf-0.40.2-py3-none-any.whl", "url": "https://files/yapf-0.40.2-py3-none-any.whl",
                                                 "digests": {"sha256": "ab"}}],
                                     "0.31.0": [{"filename": "yapf-0.31.0-py2.py3-none-any.whl", "url": "https://files/yapf-0.31.0-py2.py3-none-any.whl",
                                                 "digests": {"sha256": "cd"}}]}})");
    auto r = site.list({"yapf", "--index-url", site.url + "/pypi", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["versions"].size() == 2);
    CHECK(j["versions"][0]["version"] == "0.40.2");
    CHECK(j["versions"][1]["files"][0]["tags"] == "py2.py3-none-any");

    site.tree.write("wheels/mmcv_full-1.4.0-cp38-cp38-manylinux1_x86_64.whl", "w");
    site.tree.write("wheels/mmcv-full-1.3.17.tar.gz", "s");
    site.tree.write("wheels/README.txt", "not a distribution");
    r = site.list({"mmcv-full", "--find-links", "file://" + site.tree.str() + "/wheels"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("Available versions: 1.4.0, 1.3.17") != std::string::npos);
    CHECK(r.out.find("file://" + site.tree.str() + "/wheels/mmcv_full-1.4.0-cp38-cp38-manylinux1_x86_64.whl") != std::string::npos);
}
