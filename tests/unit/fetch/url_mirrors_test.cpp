#include <doctest/doctest.h>

#include <curl/curl.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "fetch/mirrors.hpp"
#include "fetch/settings.hpp"
#include "fetch/url.hpp"
#include "resolver/specs/errors.hpp"
#include "temp_tree.hpp"

using namespace envlock::fetch;

TEST_CASE("url_join resolves hrefs the way browsers and pip do") {
    const std::string page = "https://download.pytorch.org/whl/torch_stable.html";
    CHECK(url_join(page, "cu111/torch-1.8.0%2Bcu111-cp38-cp38-linux_x86_64.whl") ==
          "https://download.pytorch.org/whl/cu111/torch-1.8.0%2Bcu111-cp38-cp38-linux_x86_64.whl");
    CHECK(url_join("https://download.openmmlab.com/mmcv/dist/cu113/torch1.12.0/index.html",
                   "../torch1.12.0/mmcv_full-1.7.0-cp38-cp38-manylinux1_x86_64.whl") ==
          "https://download.openmmlab.com/mmcv/dist/cu113/torch1.12.0/mmcv_full-1.7.0-cp38-cp38-manylinux1_x86_64.whl");
    CHECK(url_join("https://pypi.org/simple/numpy/", "/packages/a/b/numpy-1.0.tar.gz#sha256=ab") ==
          "https://pypi.org/packages/a/b/numpy-1.0.tar.gz#sha256=ab");
    CHECK(url_join("https://pypi.org/simple/numpy/", "//files.example.org/x.whl") == "https://files.example.org/x.whl");
    CHECK(url_join("https://pypi.org/simple/numpy/", "https://other.org/a/./b/../c.whl") == "https://other.org/a/c.whl");
    CHECK(url_join("https://h/a/b/c", "../../../../x") == "https://h/x");
    CHECK(url_join("https://h", "x") == "https://h/x");
    CHECK(url_join("file:///srv/links/index.html", "pkg-1.0.tar.gz") == "file:///srv/links/pkg-1.0.tar.gz");
}

TEST_CASE("redact_url hides passwords and bare tokens but keeps the user name") {
    CHECK(redact_url("https://alice:s3cret@pypi.example.org/simple") == "https://alice:***@pypi.example.org/simple");
    CHECK(redact_url("https://TOKEN@host/x") == "https://***@host/x");
    CHECK(redact_url("https://host/x@y") == "https://host/x@y");
    CHECK(redact_url("https://host/x") == "https://host/x");
}

TEST_CASE("percent_decode and file URLs") {
    CHECK(percent_decode("torch-1.8.0%2Bcu111") == "torch-1.8.0+cu111");
    CHECK(percent_decode("bad%zzescape%4") == "bad%zzescape%4");
    CHECK(percent_decode("%41%42") == "AB");
    CHECK(percent_decode("%") == "%");
    CHECK(percent_decode("%%41") == "%A");
    CHECK(percent_decode("a%4") == "a%4");
    CHECK(file_url_path("file:///srv/a%20b/x.json") == "/srv/a b/x.json");
    CHECK(file_url_path("file://localhost/srv/x") == "/srv/x");
}

TEST_CASE("a mirror rule replaces the longest matching prefix of its origin") {
    Mirrors m;
    m.rules = {{"https://conda.anaconda.org/", "https://mirror.edu/anaconda/", "--mirror"},
               {"https://conda.anaconda.org/pytorch", "file:///srv/pytorch", "--mirror"}};
    CHECK(m.apply("https://conda.anaconda.org/pytorch/linux-64/repodata.json") == "file:///srv/pytorch/linux-64/repodata.json");
    CHECK(m.apply("https://conda.anaconda.org/conda-forge/noarch/repodata.json") ==
          "https://mirror.edu/anaconda/conda-forge/noarch/repodata.json");
    CHECK(m.apply("https://pypi.org/simple/torch/") == "https://pypi.org/simple/torch/");
}

TEST_CASE("the command line beats the environment, which beats the config file") {
    Mirrors m;
    m.rules = {{"https://pypi.org/", "https://cli.example/", "--mirror"},
               {"https://pypi.org/simple", "https://env.example/simple", "ENVLOCK_MIRRORS"}};
    CHECK(m.apply("https://pypi.org/simple/torch/") == "https://cli.example/simple/torch/");
}

TEST_CASE("mirror lists parse FROM=TO items and reject anything else") {
    auto rules = parse_mirror_list("https://a/=https://b/; https://c=file:///d ;", "ENVLOCK_MIRRORS");
    REQUIRE(rules.size() == 2);
    CHECK(rules[1].from == "https://c");
    CHECK(rules[1].to == "file:///d");
    CHECK_THROWS_AS(parse_mirror_rule("https://a/", "--mirror"), envlock::InputError);
    CHECK_THROWS_WITH(parse_mirror_rule("=x", "--mirror"), doctest::Contains("--mirror: mirror '=x' is not FROM=TO"));
}

TEST_CASE("config.yaml supplies mirrors, cache dir and transport settings") {
    envlock::test::TempTree t;
    auto cfg = t.write("config.yaml",
                       "mirrors:\n  https://pypi.org/simple: file:///srv/simple\n"
                       "cache-dir: /tmp/elsewhere\njobs: 3\nretries: 1\nbackoff-ms: 5\n");
    CommandLineSettings cli;
    cli.mirrors = {"https://pypi.org/simple=https://cli/simple"};
    auto ctx = load_fetch_context(cli, cfg);
    CHECK(ctx.cache_dir == "/tmp/elsewhere");
    CHECK(ctx.transport.jobs == 3);
    CHECK(ctx.transport.retries == 1);
    CHECK(ctx.mirrors.apply("https://pypi.org/simple/x/") == "https://cli/simple/x/");
    cli.mirrors.clear();
    CHECK(load_fetch_context(cli, cfg).mirrors.apply("https://pypi.org/simple/x/") == "file:///srv/simple/x/");
}

TEST_CASE("a malformed config.yaml is bad input naming the file and line") {
    envlock::test::TempTree t;
    auto cfg = t.write("config.yaml", "jobs: many\n");
    CHECK_THROWS_WITH_AS(load_fetch_context({}, cfg), doctest::Contains("config.yaml:1: 'jobs' must be a number"),
                         envlock::InputError);
    auto cfg2 = t.write("c2.yaml", "mirrors: [\n");
    CHECK_THROWS_AS(load_fetch_context({}, cfg2), envlock::InputError);
}

TEST_CASE("a mirrors file maps URL prefixes; a relative target is the folder beside the file") {
    envlock::test::TempTree t;
    auto file = t.write("mirror/mirrors.yaml",
                        "# as envlock-mirror writes it\nmirrors:\n  https://pypi.org/simple: pypi/simple\n"
                        "  https://github.com/open-mmlab/mmdetection3d: git/mmdetection3d\n"
                        "  https://download.pytorch.org/whl: file:///srv/whl\n");
    auto rules = read_mirrors_file(file.string());
    REQUIRE(rules.size() == 3);
    CHECK(rules[0].to == "file://" + (t.path() / "mirror/pypi/simple").string());
    CHECK(rules[1].to == "file://" + (t.path() / "mirror/git/mmdetection3d").string());
    CHECK(rules[2].to == "file:///srv/whl");
    CHECK(rules[0].origin == file.string());
    auto list = t.write("list.yaml", "mirrors:\n  - https://conda.anaconda.org=conda\n");
    auto from_list = read_mirrors_file(list.string());
    REQUIRE(from_list.size() == 1);
    CHECK(from_list[0].to == "file://" + (t.path() / "conda").string());
}

TEST_CASE("a mirrors file that is not one is bad input naming the file; a missing one is an environment error") {
    envlock::test::TempTree t;
    CHECK_THROWS_WITH_AS(read_mirrors_file(t.write("a.yaml", "jobs: 3\n").string()), doctest::Contains("a.yaml: expected a mirrors file"),
                         envlock::InputError);
    CHECK_THROWS_WITH_AS(read_mirrors_file(t.write("b.yaml", "mirrors:\n  https://x: [a, b]\n").string()),
                         doctest::Contains("b.yaml:2: a mirror maps a URL prefix"), envlock::InputError);
    CHECK_THROWS_WITH_AS(read_mirrors_file(t.write("c.yaml", "mirrors:\n  - https://x\n").string()),
                         doctest::Contains("c.yaml:2: mirror 'https://x' is not FROM=TO"), envlock::InputError);
    CHECK_THROWS_AS(read_mirrors_file((t.path() / "none.yaml").string()), envlock::EnvironmentError);
}

TEST_CASE("--mirrors-file comes after --mirror and before ENVLOCK_MIRRORS, which may name a mirrors file itself") {
    envlock::test::TempTree t;
    auto a = t.write("a/mirrors.yaml", "mirrors:\n  https://pypi.org/simple: simple\n");
    auto b = t.write("b/mirrors.yaml", "mirrors:\n  https://pypi.org/simple: simple\n  https://conda.anaconda.org: conda\n");
    auto none = t.path() / "no-config.yaml";
    ::setenv("ENVLOCK_MIRRORS", ("https://download.pytorch.org/whl=file:///env/whl;" + b.string()).c_str(), 1);
    CommandLineSettings cli;
    cli.mirrors_files = {a.string()};
    auto ctx = load_fetch_context(cli, none);
    CHECK(ctx.mirrors.apply("https://pypi.org/simple/torch/") == "file://" + (t.path() / "a/simple/torch/").string());
    CHECK(ctx.mirrors.apply("https://conda.anaconda.org/pytorch/noarch/repodata.json") ==
          "file://" + (t.path() / "b/conda/pytorch/noarch/repodata.json").string());
    CHECK(ctx.mirrors.apply("https://download.pytorch.org/whl/torch_stable.html") == "file:///env/whl/torch_stable.html");
    cli.mirrors = {"https://pypi.org/simple=https://cli.example/simple"};
    CHECK(load_fetch_context(cli, none).mirrors.apply("https://pypi.org/simple/torch/") == "https://cli.example/simple/torch/");
    ::unsetenv("ENVLOCK_MIRRORS");
}

TEST_CASE("strip_userinfo removes credentials and nothing else") {
    CHECK(strip_userinfo("https://alice:pw@host/simple/x/") == "https://host/simple/x/");
    CHECK(strip_userinfo("https://TOKEN@host/x") == "https://host/x");
    CHECK(strip_userinfo("https://host/a@b") == "https://host/a@b");
    CHECK(strip_userinfo("file:///srv/x") == "file:///srv/x");
}

TEST_CASE("url_join follows RFC 3986 section 5.4.1's normal examples") {
    const std::string base = "http://a/b/c/d;p?q";
    CHECK(url_join(base, "g") == "http://a/b/c/g");
    CHECK(url_join(base, "./g") == "http://a/b/c/g");
    CHECK(url_join(base, "g/") == "http://a/b/c/g/");
    CHECK(url_join(base, "/g") == "http://a/g");
    CHECK(url_join(base, "//g") == "http://g/");
    CHECK(url_join(base, "?y") == "http://a/b/c/d;p?y");
    CHECK(url_join(base, "g?y") == "http://a/b/c/g?y");
    CHECK(url_join(base, "#s") == "http://a/b/c/d;p?q#s");
    CHECK(url_join(base, "g#s") == "http://a/b/c/g#s");
    CHECK(url_join(base, ";x") == "http://a/b/c/;x");
    CHECK(url_join(base, ".") == "http://a/b/c/");
    CHECK(url_join(base, "..") == "http://a/b/");
    CHECK(url_join(base, "../g") == "http://a/b/g");
    CHECK(url_join(base, "../..") == "http://a/");
    CHECK(url_join(base, "../../g") == "http://a/g");
}

namespace {

// libcurl's own RFC 3986 resolution, as url_join did for every href before it learned the
// plain case.
std::string libcurl_join(const std::string& base, const std::string& href) {
    std::unique_ptr<CURLU, void (*)(CURLU*)> url(curl_url(), curl_url_cleanup);
    const unsigned flags = CURLU_NON_SUPPORT_SCHEME | CURLU_ALLOW_SPACE;
    if (curl_url_set(url.get(), CURLUPART_URL, base.c_str(), flags) != CURLUE_OK ||
        curl_url_set(url.get(), CURLUPART_URL, href.c_str(), flags) != CURLUE_OK)
        return href;
    char* joined = nullptr;
    if (curl_url_get(url.get(), CURLUPART_URL, &joined, 0) != CURLUE_OK) return href;
    std::string out(joined);
    curl_free(joined);
    return out;
}

}  // namespace

TEST_CASE("url_join gives libcurl's answer for every href of the snapshot index pages, against page, file:// and odd bases") {
    std::set<std::string> hrefs = {"../x", "./y", "/abs/../p", "q?x", "?only", "..", ".", "a/./b/../c", "x%2By", "x%zz",
                                   "x y", "https://other/x", "//host/p", "mailto:x", "a:b/c", "p#a#b", "../../../../z#sha256=ab",
                                   "g;x?y#s", "%7Euser/x", "A/B/../C.whl"};
    std::regex href_attr("href=\"([^\"]*)\"");
    for (const auto& e : std::filesystem::recursive_directory_iterator(ENVLOCK_SHARED_DIR "/snapshots")) {
        if (e.path().extension() != ".html") continue;
        std::ifstream in(e.path());
        std::stringstream text;
        text << in.rdbuf();
        std::string page = text.str();
        for (std::sregex_iterator it(page.begin(), page.end(), href_attr), end; it != end; ++it) {
            std::string h = (*it)[1];
            for (auto at = h.find("&amp;"); at != std::string::npos; at = h.find("&amp;")) h.replace(at, 5, "&");
            hrefs.insert(h);
        }
    }
    REQUIRE(hrefs.size() > 1000);
    const std::vector<std::string> bases = {
        "https://pypi.org/simple/yapf/", "https://download.pytorch.org/whl/torch_stable.html",
        "https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html", "file:///srv/mirror/pypi/simple/yapf/index.html",
        "http://127.0.0.1:8080/simple/x/", "https://conda.anaconda.org/conda-forge/linux-64/", "https://a.b/c?x=1#f",
        "https://a.b", "https://User@Host.example/A/b", "http://a/b/c/d;p?q"};
    std::size_t differ = 0;
    for (const auto& base : bases)
        for (const auto& href : hrefs) {
            if (href.empty()) continue;
            std::string ours = url_join(base, href), theirs = libcurl_join(base, href);
            if (href.front() == '#') continue;   // libcurl 7.88 drops the base's query there (the case above)
            if (ours != theirs && ++differ <= 5) CHECK_MESSAGE(ours == theirs, base << " + " << href);
        }
    CHECK(differ == 0);
}
