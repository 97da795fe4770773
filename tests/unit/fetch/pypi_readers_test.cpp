#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "fetch/http_cache.hpp"
#include "fetch/pypi_readers.hpp"
#include "resolver/specs/errors.hpp"
#include "temp_tree.hpp"

using namespace envlock;
using namespace envlock::fetch;

TEST_CASE("project names normalise per PEP 503") {
    CHECK(normalize_project_name("mmcv_full") == "mmcv-full");
    CHECK(normalize_project_name("Mmcv.__Full") == "mmcv-full");
    CHECK(normalize_project_name("torch") == "torch");
}

TEST_CASE("HTML character references decode, unknown ones stay") {
    CHECK(html_unescape("&gt;=3.6, !=3.7.*&amp;&lt;4") == ">=3.6, !=3.7.*&<4");
    CHECK(html_unescape("&#62;&#x3C;&quot;&apos;") == "><\"'");
    CHECK(html_unescape("a &unknown; b & c") == "a &unknown; b & c");
    // Runs between entities are copied whole; the edges of the text too.
    CHECK(html_unescape("&amp;") == "&");
    CHECK(html_unescape("&") == "&");
    CHECK(html_unescape("x&") == "x&");
    CHECK(html_unescape("&amp;&amp;x&lt") == "&&x&lt");
    CHECK(html_unescape("") == "");
}

TEST_CASE("distribution file names: wheels with and without build tags, sdists with dashed names") {
    auto w = parse_dist_filename("torch-1.8.0+cu111-cp38-cp38-linux_x86_64.whl");
    REQUIRE(w);
    CHECK(w->name == "torch");
    CHECK(w->version == "1.8.0+cu111");
    CHECK(w->build == "cp38-cp38-linux_x86_64");
    CHECK(w->wheel);
    auto b = parse_dist_filename("pkg-1.0-1build-py3-none-any.whl");
    REQUIRE(b);
    CHECK(b->build == "py3-none-any");
    auto s = parse_dist_filename("mmcv-full-1.7.0.tar.gz", "mmcv_full");
    REQUIRE(s);
    CHECK(s->name == "mmcv-full");
    CHECK(s->version == "1.7.0");
    CHECK(parse_dist_filename("mmcv-full-1.7.0.tar.gz")->version == "1.7.0");
    CHECK_FALSE(parse_dist_filename("torch-0.4.0-py3.6-linux-x86_64.egg"));
    CHECK_FALSE(parse_dist_filename("bad-name.whl"));
}

TEST_CASE("PEP 503 pages: hashes, requires-python, core metadata, yanked, entities") {
    const char* html = R"(<!DOCTYPE html><html><body><h1>Links for numpy</h1>
<a href="../../packages/ab/numpy-1.24.0-cp38-cp38-manylinux_2_17_x86_64.whl#sha256=00ff" data-requires-python="&gt;=3.8" data-dist-info-metadata="sha256=11ee">numpy-1.24.0-cp38-cp38-manylinux_2_17_x86_64.whl</a><br/>
<A HREF='../../packages/cd/numpy-1.19.5.zip#sha256=aa' data-yanked="broken &amp; bad" data-core-metadata="true">numpy-1.19.5.zip</A>
<a href="https://files.example/numpy-1.20.0-cp39-cp39-win_amd64.whl" data-yanked>numpy-1.20.0-cp39-cp39-win_amd64.whl</a>
<a href="../../packages/ef/other-1.0.tar.gz">other-1.0.tar.gz</a>
</body></html>)";
    auto rs = parse_simple_html(html, "https://pypi.org/simple/numpy/", "numpy");
    REQUIRE(rs.size() == 3);
    CHECK(rs[0].url == "https://pypi.org/packages/ab/numpy-1.24.0-cp38-cp38-manylinux_2_17_x86_64.whl");
    CHECK(rs[0].sha256 == "00ff");
    CHECK(rs[0].requires_python == ">=3.8");
    CHECK(rs[0].metadata_url == rs[0].url + ".metadata");
    CHECK_FALSE(rs[0].depends_known);
    CHECK_FALSE(rs[0].yanked);
    CHECK(rs[0].ecosystem == Ecosystem::pypi);
    CHECK(rs[1].version == "1.19.5");
    CHECK(rs[1].build.empty());
    CHECK(rs[1].yanked);
    CHECK(rs[1].yanked_reason == "broken & bad");
    CHECK(rs[1].metadata_url == rs[1].url + ".metadata");
    CHECK(rs[2].yanked);
    CHECK(rs[2].yanked_reason.empty());
    CHECK(rs[2].metadata_url.empty());
}

TEST_CASE("a <base href> changes what relative links resolve against") {
    auto links = parse_html_links(R"(<html><head><base href="https://mirror.example/files/"></head>
<a href="x-1.0.tar.gz">x</a>)", "https://index.example/simple/x/");
    REQUIRE(links.size() == 1);
    CHECK(links[0].url == "https://mirror.example/files/x-1.0.tar.gz");
}

TEST_CASE("PEP 691 JSON project pages") {
    const char* json = R"({"meta": {"api-version": "1.1"}, "name": "torch", "files": [
      {"filename": "torch-2.0.0-cp38-cp38-manylinux1_x86_64.whl", "url": "../../packages/t/torch-2.0.0-cp38-cp38-manylinux1_x86_64.whl",
       "hashes": {"sha256": "beef"}, "requires-python": ">=3.8.0", "core-metadata": {"sha256": "cafe"}, "size": 12345},
      {"filename": "torch-1.0.0.tar.gz", "url": "https://files.example/torch-1.0.0.tar.gz", "hashes": {},
       "yanked": "security", "dist-info-metadata": false}]})";
    auto rs = parse_simple_json(json, "https://pypi.org/simple/torch/", "torch");
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].url == "https://pypi.org/packages/t/torch-2.0.0-cp38-cp38-manylinux1_x86_64.whl");
    CHECK(rs[0].sha256 == "beef");
    CHECK(rs[0].requires_python == ">=3.8.0");
    CHECK(rs[0].metadata_url == rs[0].url + ".metadata");
    CHECK(rs[0].size == 12345);
    CHECK(rs[1].yanked);
    CHECK(rs[1].yanked_reason == "security");
    CHECK(rs[1].metadata_url.empty());
    CHECK_THROWS_WITH_AS(parse_simple_json("{\"name\": \"x\"}", "https://i/simple/x/"),
                         doctest::Contains("https://i/simple/x/: malformed PEP 691 project page"), InputError);
}

TEST_CASE("the PyPI JSON API knows Requires-Dist for the latest version only") {
    const char* json = R"({"info": {"name": "yapf", "version": "0.40.2", "requires_python": ">=3.7",
        "requires_dist": ["importlib-metadata>=6.6.0", "platformdirs>=3.5.1", "tomli>=2.0.1"]},
      "releases": {
        "0.32.0": [{"filename": "yapf-0.32.0-py2.py3-none-any.whl", "url": "https://files/yapf-0.32.0-py2.py3-none-any.whl",
                    "digests": {"sha256": "8fea", "md5": "m"}, "size": 190, "requires_python": null, "yanked": false}],
        "0.40.2": [{"filename": "yapf-0.40.2-py3-none-any.whl", "url": "https://files/yapf-0.40.2-py3-none-any.whl",
                    "digests": {"sha256": "adc8"}, "size": 254, "yanked": true, "yanked_reason": "oops"}]}})";
    auto rs = parse_pypi_json(json, "https://pypi.org/pypi/yapf/json");
    REQUIRE(rs.size() == 2);
    const auto& old = rs[0].version == "0.32.0" ? rs[0] : rs[1];
    const auto& latest = rs[0].version == "0.40.2" ? rs[0] : rs[1];
    CHECK_FALSE(old.depends_known);
    CHECK(old.depends.empty());
    CHECK(latest.depends_known);
    CHECK(latest.depends.size() == 3);
    CHECK(latest.requires_python == ">=3.7");
    CHECK(latest.yanked);
    CHECK(latest.yanked_reason == "oops");
    CHECK(old.sha256 == "8fea");
    CHECK(old.size == 190);
    CHECK_THROWS_AS(parse_pypi_json("{}", "https://pypi.org/pypi/x/json"), InputError);
}

TEST_CASE("PEP 658 core metadata: Requires-Dist, Requires-Python, folded lines, body ignored") {
    const char* meta = "Metadata-Version: 2.1\r\nName: mmdet\r\nVersion: 2.14.0\r\n"
                       "Requires-Python: >=3.6\r\nRequires-Dist: matplotlib\r\nRequires-Dist: numpy\r\n"
                       "Requires-Dist: pycocotools ; platform_system == \"Linux\"\r\nSummary: a\r\n  long summary\r\n"
                       "\r\nRequires-Dist: not-a-header-in-the-body\r\n";
    auto m = parse_core_metadata(meta);
    CHECK(m.name == "mmdet");
    CHECK(m.version == "2.14.0");
    CHECK(m.requires_python == ">=3.6");
    CHECK(m.requires_dist == std::vector<std::string>{"matplotlib", "numpy", "pycocotools ; platform_system == \"Linux\""});
}

TEST_CASE("real snapshot: torch_stable.html lists torch 1.8.0+cu111 with relative hrefs resolved") {
    std::filesystem::path file = envlock::test::shared_dir() + "/snapshots/pytorch-torch_stable-html-2021-03/torch_stable.html";
    if (!std::filesystem::exists(file)) {
        MESSAGE("skipped: " << file << " is absent");
        return;
    }
    auto rs = parse_find_links(read_file_padded(file), "https://download.pytorch.org/whl/torch_stable.html", "torch");
    bool found = false;
    for (const auto& r : rs)
        if (r.version == "1.8.0+cu111" && r.build == "cp38-cp38-linux_x86_64") {
            found = true;
            CHECK(r.url == "https://download.pytorch.org/whl/cu111/torch-1.8.0%2Bcu111-cp38-cp38-linux_x86_64.whl");
            CHECK(r.filename == "torch-1.8.0+cu111-cp38-cp38-linux_x86_64.whl");
        }
    CHECK(found);
    for (const auto& r : rs) CHECK(r.name == "torch");
    CHECK(parse_find_links(read_file_padded(file), "https://download.pytorch.org/whl/torch_stable.html", "torchvision").size() > 50);
}

TEST_CASE("real snapshot: the openmmlab page lists mmcv-full 1.6.0 to 1.7.2 from ../ links") {
    std::filesystem::path file = envlock::test::shared_dir() + "/snapshots/poetry-fixture-openmmlab-mmcv-index/mmcv_torch_releases.html";
    if (!std::filesystem::exists(file)) {
        MESSAGE("skipped: " << file << " is absent");
        return;
    }
    const std::string page = "https://download.openmmlab.com/mmcv/dist/cu113/torch1.12.0/index.html";
    auto rs = parse_find_links(read_file_padded(file), page, "mmcv-full");
    std::set<std::string> versions;
    for (const auto& r : rs) {
        versions.insert(r.version);
        CHECK(r.url.rfind("https://download.openmmlab.com/mmcv/dist/cu113/torch1.12.0/mmcv_full-", 0) == 0);
    }
    CHECK(versions == std::set<std::string>{"1.6.0", "1.6.1", "1.6.2", "1.7.0", "1.7.1", "1.7.2"});
    auto mmcv = parse_find_links(read_file_padded(file), page, "mmcv");
    for (const auto& r : mmcv) CHECK(r.name == "mmcv");
    CHECK(mmcv.size() > 0);
}

// Found by fuzz/pypi_html (issue 20): a page ending inside an unterminated attribute value
// made the link reader read past the page (std::out_of_range, an internal error).
TEST_CASE("a page that ends inside an unterminated <a href=\"… is read without failing") {
    std::string page = "<a href=\"mmdet-2.14.0-py3-none-any.whl\">mmdet</a>\n<a href=\"../../files/mmde.tar.gz</a>";
    auto links = parse_html_links(page, "https://pypi.example/simple/mmdet/");
    REQUIRE(!links.empty());
    CHECK(links[0].filename == "mmdet-2.14.0-py3-none-any.whl");
    CHECK_NOTHROW(parse_html_links("<a href=\"x", "https://pypi.example/simple/x/"));
}

// Found by fuzz/pypi_json (issue 20): read for project "torch", the sdist
// "torch-2.0.0-cp38-cp38-m-1.0.0.tar.gz" became torch "2.0.0-cp38-cp38-m-1.0.0" (not a PEP 440
// version), though read for every project it is project "torch-2.0.0-cp38-cp38-m" 1.0.0.
TEST_CASE("an sdist whose name/version split names another project is not this project's") {
    auto d = parse_dist_filename("torch-2.0.0-cp38-cp38-m-1.0.0.tar.gz", "torch");
    CHECK_FALSE(d.has_value());
    auto all = parse_dist_filename("torch-2.0.0-cp38-cp38-m-1.0.0.tar.gz");
    REQUIRE(all.has_value());
    CHECK(all->version == "1.0.0");
    auto dashed = parse_dist_filename("mmcv-full-1.7.0.tar.gz", "mmcv-full");
    REQUIRE(dashed.has_value());
    CHECK(dashed->version == "1.7.0");
}

// Found by fuzz/pypi_json (issue 20, sessions 5 and 6): read for the project "torch",
// "torch-*.0.0.tar.gz" gave the version "*.0.0", which the page read for every project skipped.
// A file whose version is not PEP 440 is skipped either way, as pip ≥ 22 skips it (packaging
// 22 removed LegacyVersion: https://packaging.pypa.io/en/stable/changelog.html).
TEST_CASE("an sdist whose version is not PEP 440 is skipped, read for one project or for all") {
    for (const char* file : {"torch-*.0.0.tar.gz", "torch-!.0.0.tar.gz", "torch-1.0.0-foo.tar.gz"}) {
        CAPTURE(file);
        CHECK_FALSE(parse_dist_filename(file, "torch").has_value());
        CHECK_FALSE(parse_dist_filename(file).has_value());
    }
    CHECK(parse_dist_filename("torch-1.0.0.post1.tar.gz", "torch")->version == "1.0.0.post1");
    CHECK(parse_dist_filename("Torch-1.0rc1.zip", "torch")->version == "1.0rc1");
}

// Found by fuzz/pypi_json (issue 20): a number too large for a double ("9e415") made the JSON
// parser throw out_of_range, which escaped as an internal error; it is malformed input.
TEST_CASE("a PEP 691 or JSON API page with a number out of range is malformed input") {
    CHECK_THROWS_AS(parse_simple_json(R"({"files": [], "x": 9e415})", "https://pypi.example/simple/torch/"), InputError);
    CHECK_THROWS_AS(parse_pypi_json(R"({"info": {}, "releases": {}, "x": 9e415})", "https://pypi.example/pypi/torch/json"),
                    InputError);
}

// Found by the 10-minute fuzz/pypi_json run (issue 20, session 6): read for the project "torch",
// a JSON API page whose info.name is "yapf" gave torch's files as records named "yapf". The page
// names the project it describes (https://docs.pypi.org/api/json/); another project's page is
// bad input, not an empty or mixed answer.
TEST_CASE("a PyPI JSON page that describes another project is refused when read for one project") {
    const std::string page = R"({"info": {"name": "yapf", "version": "0.40.2"},
      "releases": {"1.0.0": [{"filename": "torch-1.0.0-py3-none-any.whl", "url": "https://files/torch-1.0.0-py3-none-any.whl",
                              "digests": {"sha256": "ab"}}]}})";
    CHECK_THROWS_WITH_AS(parse_pypi_json(page, "https://pypi.example/pypi/torch/json", "torch"),
                         doctest::Contains("describes the project 'yapf', not 'torch'"), envlock::InputError);
    CHECK(parse_pypi_json(page, "https://pypi.example/pypi/yapf/json", "YAPF").empty());
    CHECK(parse_pypi_json(page, "https://pypi.example/pypi/yapf/json").empty());
}

// Found by fuzz/pypi_json under UBSan (issue 20, session 6): a JSON API file whose "size" is
// 4.4e100 was converted to an unsigned 64-bit integer (undefined behaviour). A size that is not
// a non-negative integer is ignored, as an absent one is.
TEST_CASE("a JSON API file size that is not a non-negative integer is ignored") {
    const std::string page = R"({"info": {"name": "yapf", "version": "0.32.0"},
      "releases": {"0.32.0": [{"filename": "yapf-0.32.0-py2.py3-none-any.whl", "url": "https://files/yapf-0.32.0-py2.py3-none-any.whl",
                               "digests": {"sha256": "8fea"}, "size": 4.4e100},
                              {"filename": "yapf-0.32.0.tar.gz", "url": "https://files/yapf-0.32.0.tar.gz", "size": -5},
                              {"filename": "yapf-0.32.0-py3-none-any.whl", "url": "https://files/yapf-0.32.0-py3-none-any.whl", "size": 190}]}})";
    auto rs = parse_pypi_json(page, "https://pypi.example/pypi/yapf/json");
    REQUIRE(rs.size() == 3);
    CHECK(rs[0].size == 0);
    CHECK(rs[1].size == 0);
    CHECK(rs[2].size == 190);
}
