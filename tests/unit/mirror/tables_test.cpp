// The readers of ../shared/facts and the built-in PyPI table.
#include <doctest/doctest.h>

#include <algorithm>

#include "resolver/specs/errors.hpp"
#include "tests/mirror/python_tables.hpp"
#include "tests/mirror/tables.hpp"
#include "tests/unit/mirror/mirror_fixture.hpp"

using namespace envlock::mirror;

namespace {
bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }
}

TEST_CASE("pip variants come from the pip part of a torch.yaml cuda_variants cell") {
    auto v = parse_pip_variants("pip: cu102, cu111, cpu, rocm4.0.1/4.1/4.2; conda: 10.2, 11.3(conda-forge)");
    CHECK(v == std::vector<std::string>{"cpu", "cu102", "cu111"});
}

TEST_CASE("pip variants of the free-text rows read CUDA versions and drop ROCm") {
    CHECK(parse_pip_variants("11.8 (stable), 12.1 (experimental)") == std::vector<std::string>{"cpu", "cu118", "cu121"});
    CHECK(parse_pip_variants("12.6, 12.8 (stable), 12.9 (experimental); ROCm 6.4") ==
          std::vector<std::string>{"cpu", "cu126", "cu128", "cu129"});
    auto truncated = parse_pip_variants("conda: pytorch-cuda 11.8, 12.1, 12.4; pip list truncated in stored copy "
                                        "(RELEASE.md: 11.8, 12.1 stable + 12.4 experimental)");
    CHECK(truncated == std::vector<std::string>{"cpu", "cu118", "cu121", "cu124"});
}

TEST_CASE("python ranges read the minors of '>=3.X, <=3.Y' and clamp below 3.6") {
    int lo = 0, hi = 0;
    REQUIRE(parse_python_range("'>=3.6, <=3.9'", lo, hi));
    CHECK(lo == 6);
    CHECK(hi == 9);
    REQUIRE(parse_python_range(">=3.9, <=3.13 (3.13t experimental)", lo, hi));
    CHECK(lo == 9);
    CHECK(hi == 13);
    REQUIRE(parse_python_range("==2.7, >=3.5, <=3.8 (torchvision 0.5 row)", lo, hi));
    CHECK(lo == 6);
    CHECK_FALSE(parse_python_range("<=3.8 (\"PyTorch LTS ...\")", lo, hi));
}

TEST_CASE("the built-in torch table pairs torch 1.9.1 with torchvision 0.10.1 and cu102/cu111 wheels for 3.6-3.9") {
    auto t = builtin_tables();
    auto it = std::find_if(t.torch.begin(), t.torch.end(), [](const TorchRelease& r) { return r.torch == "1.9.1"; });
    REQUIRE(it != t.torch.end());
    CHECK(it->torchvision == "0.10.1");
    CHECK(it->torchaudio == "0.9.1");
    CHECK(it->pip_variants == std::vector<std::string>{"cpu", "cu102", "cu111"});
    CHECK(it->py_min == 6);
    CHECK(it->py_max == 9);
}

TEST_CASE("the facts' torch table agrees with the built-in copy where both have a release") {
    auto shared = test::shared_dir();
    if (shared.empty()) {
        MESSAGE("skipped: ../shared is absent (set ENVLOCK_SHARED_DIR)");
        return;
    }
    auto facts = load_tables(shared), builtin = builtin_tables();
    int compared = 0;
    for (const auto& b : builtin.torch)
        for (const auto& f : facts.torch)
            if (f.torch == b.torch) {
                INFO("torch " << b.torch);
                CHECK(f.torchvision == b.torchvision);
                CHECK(f.pip_variants == b.pip_variants);
                CHECK(f.py_min == b.py_min);
                CHECK(f.py_max == b.py_max);
                ++compared;
            }
    CHECK(compared >= 20);
}

TEST_CASE("the facts' mmcv matrix lists mmcv-full 1.4.0 for cu111/torch1.9") {
    auto shared = test::shared_dir();
    if (shared.empty()) {
        MESSAGE("skipped: ../shared is absent (set ENVLOCK_SHARED_DIR)");
        return;
    }
    auto t = load_tables(shared);
    auto it = std::find_if(t.mmcv.begin(), t.mmcv.end(), [](const MmcvRow& r) {
        return r.package == "mmcv-full" && r.cuda == "11.1" && r.torch == "1.9";
    });
    REQUIRE(it != t.mmcv.end());
    CHECK(has(it->versions, "1.4.0"));
    CHECK(has(it->versions, "1.3.9"));
    CHECK_FALSE(has(it->versions, "1.3.8"));  // version.json's cu111/torch1.9 row starts at 1.3.9
}

TEST_CASE("the pypi table DSL expands a cp range into one wheel per Python with the 'm' ABI before 3.8") {
    auto d = parse_pypi_table("numpy 1.19.5 cp36-cp39@manylinux2010_x86_64 >=3.6\n", "t");
    REQUIRE(d.size() == 4);
    CHECK(d[0].filename() == "numpy-1.19.5-cp36-cp36m-manylinux2010_x86_64.whl");
    CHECK(d[3].filename() == "numpy-1.19.5-cp39-cp39-manylinux2010_x86_64.whl");
    CHECK(d[0].requires_python == ">=3.6");
    CHECK(d[0].console_scripts == std::vector<std::string>{"f2py = numpy.f2py.f2py2e:main"});
}

TEST_CASE("the pypi table DSL keeps requirement markers whole") {
    auto d = parse_pypi_table("x 1.0 py3 - :: a>=1; python_version < \"3.8\" | b!=2.0,>=1.5\n", "t");
    REQUIRE(d.size() == 1);
    CHECK(d[0].requires_python.empty());
    CHECK(d[0].requires_dist == std::vector<std::string>{"a>=1; python_version < \"3.8\"", "b!=2.0,>=1.5"});
    CHECK(d[0].filename() == "x-1.0-py3-none-any.whl");
}

TEST_CASE("the pypi table DSL names the line of a malformed row") {
    CHECK_THROWS_WITH_AS(parse_pypi_table("# c\nx 1.0\n", "table.inc"), doctest::Contains("table.inc:2"), envlock::InputError);
    CHECK_THROWS_WITH_AS(parse_pypi_table("x 1.0 egg -\n", "table.inc"), doctest::Contains("unknown file kind 'egg'"),
                         envlock::InputError);
}

TEST_CASE("abi3 and explicit-tag rows give one wheel each") {
    auto d = parse_pypi_table("opencv-python 4.8.1.78 abi3:cp37 >=3.6\ncmake 3.27.7 tag:py2.py3-none-manylinux2014_x86_64 -\n", "t");
    REQUIRE(d.size() == 2);
    CHECK(d[0].filename() == "opencv_python-4.8.1.78-cp37-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
    CHECK(d[1].filename() == "cmake-3.27.7-py2.py3-none-manylinux2014_x86_64.whl");
}
