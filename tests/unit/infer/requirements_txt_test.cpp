// requirements.txt as pip reads it.
#include <doctest/doctest.h>

#include "resolver/infer/parts.hpp"

using namespace envlock::infer;
using K = PipItem::Kind;

TEST_CASE("requirements.txt: plain requirements keep their line numbers") {
    auto items = read_requirements_txt("cython\n\nscipy>=1.5\n");
    REQUIRE(items.size() == 2);
    CHECK(items[0].kind == K::requirement);
    CHECK(items[0].value == "cython");
    CHECK(items[0].line == 1);
    CHECK(items[1].value == "scipy>=1.5");
    CHECK(items[1].line == 3);
}

TEST_CASE("requirements.txt: comments are dropped, whole-line and trailing") {
    auto items = read_requirements_txt("# pinned for numba\nnumpy<1.20.0  # numba 0.48\n");
    REQUIRE(items.size() == 1);
    CHECK(items[0].value == "numpy<1.20.0");
    CHECK(items[0].line == 2);
}

TEST_CASE("requirements.txt: a backslash continues the line; the first line is the provenance") {
    auto items = read_requirements_txt("torch==1.9.1 \\\n    --hash=sha256:aaaa \\\n    --hash=sha256:bbbb\nnumpy\n");
    REQUIRE(items.size() == 2);
    CHECK(items[0].value == "torch==1.9.1");
    CHECK(items[0].line == 1);
    CHECK(items[1].value == "numpy");
    CHECK(items[1].line == 4);
}

TEST_CASE("requirements.txt: markers stay part of the requirement") {
    auto items = read_requirements_txt("dataclasses; python_version<'3.7'\n");
    REQUIRE(items.size() == 1);
    CHECK(items[0].kind == K::requirement);
    CHECK(items[0].value == "dataclasses; python_version<'3.7'");
}

TEST_CASE("requirements.txt: -r, -c, -f, --index-url, --extra-index-url options") {
    auto items = read_requirements_txt(
        "-r requirements/runtime.txt\n--requirement=requirements/tests.txt\n-c constraints.txt\n"
        "-f https://download.pytorch.org/whl/torch_stable.html\n--index-url https://mirror/simple\n"
        "--extra-index-url https://extra/simple\n-rrequirements/build.txt\n");
    REQUIRE(items.size() == 7);
    CHECK(items[0].kind == K::include);
    CHECK(items[0].value == "requirements/runtime.txt");
    CHECK(items[1].kind == K::include);
    CHECK(items[1].value == "requirements/tests.txt");
    CHECK(items[2].kind == K::constraint);
    CHECK(items[3].kind == K::find_links);
    CHECK(items[3].value == "https://download.pytorch.org/whl/torch_stable.html");
    CHECK(items[4].kind == K::index_url);
    CHECK(items[5].kind == K::extra_index_url);
    CHECK(items[5].value == "https://extra/simple");
    CHECK(items[6].kind == K::include);
    CHECK(items[6].value == "requirements/build.txt");
}

TEST_CASE("requirements.txt: -e with a VCS URL gives the repo, its rev and egg name") {
    auto items = read_requirements_txt("-e git+https://github.com/facebookresearch/detectron2.git@v0.6#egg=detectron2\n");
    REQUIRE(items.size() == 1);
    CHECK(items[0].kind == K::vcs);
    CHECK(items[0].editable);
    CHECK(items[0].value == "git+https://github.com/facebookresearch/detectron2.git");
    CHECK(items[0].rev == "v0.6");
    CHECK(items[0].egg == "detectron2");
}

TEST_CASE("requirements.txt: a '#' inside a URL is not a comment") {
    auto items = read_requirements_txt("git+https://github.com/cocodataset/panopticapi.git#egg=panopticapi\n");
    REQUIRE(items.size() == 1);
    CHECK(items[0].egg == "panopticapi");
    CHECK(items[0].rev == "");
}

TEST_CASE("requirements.txt: local paths and editable directories are local installs") {
    auto items = read_requirements_txt("-e .\n./third_party/lib\n");
    REQUIRE(items.size() == 2);
    CHECK(items[0].kind == K::local);
    CHECK(items[0].editable);
    CHECK(items[1].kind == K::local);
    CHECK(items[1].value == "./third_party/lib");
}

TEST_CASE("requirements.txt: PEP 508 direct references are requirements, bare archive URLs are not") {
    auto items = read_requirements_txt("pkg @ https://host/pkg-1.0.tar.gz\nhttps://host/other-1.0-py3-none-any.whl\n");
    REQUIRE(items.size() == 2);
    CHECK(items[0].kind == K::requirement);
    CHECK(items[1].kind == K::url);
}

TEST_CASE("requirements.txt: unknown options are ignored, not taken for requirements") {
    auto items = read_requirements_txt("--trusted-host pypi.example\n--pre\nnumpy\n");
    REQUIRE(items.size() == 3);
    CHECK(items[0].kind == K::ignored);
    CHECK(items[1].kind == K::ignored);
    CHECK(items[2].kind == K::requirement);
}

TEST_CASE("requirements.txt: Windows line endings") {
    auto items = read_requirements_txt("numpy\r\nscipy\r\n");
    REQUIRE(items.size() == 2);
    CHECK(items[1].value == "scipy");
}

// Found by fuzz/requirements_txt (issue 20, session 5): "-r" with nothing after it became the
// requirements file "" (a "missing" note without text, which the spec reader refuses). pip
// stops there: "-r option requires 1 argument".
TEST_CASE("requirements.txt: an option without its argument is an item of its own kind") {
    auto items = read_requirements_txt("-r\n--index-url\ntorch\n");
    REQUIRE(items.size() == 3);
    CHECK(items[0].kind == K::missing_value);
    CHECK(items[0].value == "-r");
    CHECK(items[1].kind == K::missing_value);
    CHECK(items[1].value == "--index-url");
    CHECK(items[2].kind == K::requirement);
}
