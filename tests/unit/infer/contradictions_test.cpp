// Two pins on one project: can both hold?
#include <doctest/doctest.h>

#include "resolver/infer/parts.hpp"

using namespace envlock;
using namespace envlock::infer;

namespace {
SpecRequirement pypi(const std::string& t) { return {t, "pypi", {}}; }
SpecRequirement conda(const std::string& t) { return {t, "conda", {}}; }
}  // namespace

TEST_CASE("contradiction: BEVFormer's numpy==1.19.5 agrees with mmdet3d's numpy<1.20.0") {
    CHECK_FALSE(incompatible(pypi("numpy==1.19.5"), pypi("numpy<1.20.0")));
}

TEST_CASE("contradiction: numpy==1.20.0 next to mmdet3d's numpy<1.20.0 does not") {
    auto why = incompatible(pypi("numpy==1.20.0"), pypi("numpy<1.20.0"));
    REQUIRE(why);
    CHECK(*why == "numpy 1.20.0 is outside <1.20.0");
}

TEST_CASE("contradiction: overlapping ranges hold together") {
    CHECK_FALSE(incompatible(pypi("mmcv-full>=1.3.8,<=1.4.0"), pypi("mmcv-full==1.4.0")));
    CHECK_FALSE(incompatible(pypi("networkx>=2.2,<2.3"), pypi("networkx>2.2")));
    CHECK_FALSE(incompatible(pypi("timm"), pypi("timm==0.6.13")));
}

TEST_CASE("contradiction: disjoint ranges are named") {
    auto why = incompatible(pypi("mmcv-full>=1.5.2,<=1.7.0"), pypi("mmcv-full>=1.3.8,<=1.4.0"));
    REQUIRE(why);
    CHECK(why->find("no mmcv-full version is both") == 0);
}

TEST_CASE("contradiction: names compare after PEP 503 normalization") {
    CHECK(incompatible(pypi("Typing_Extensions==4.5.0"), pypi("typing-extensions==4.7.1")));
}

TEST_CASE("contradiction: a wheel's local label matches the public pin") {
    CHECK_FALSE(incompatible(pypi("torch==1.9.1+cu111"), pypi("torch==1.9.1")));
    CHECK_FALSE(incompatible(pypi("torch==1.9.1+cu111"), pypi("torch>=1.8,<1.11")));
}

TEST_CASE("contradiction: conda pins compared with conda's matcher") {
    CHECK(incompatible(conda("cudatoolkit=11.1"), conda("cudatoolkit=11.3")));
    CHECK_FALSE(incompatible(conda("cudatoolkit=11.1"), conda("cudatoolkit>=11.0,<11.2")));
    CHECK_FALSE(incompatible(conda("python=3.8"), conda("python>=3.6")));
    CHECK(incompatible(conda("python=3.7"), conda("python=3.8")));
}

TEST_CASE("contradiction: conda pytorch and PyPI torch are one project") {
    CHECK(incompatible(conda("pytorch==1.9.1"), pypi("torch==1.11.0+cu113")));
    CHECK_FALSE(incompatible(conda("pytorch==1.9.1"), pypi("torch==1.9.1+cu111")));
}

TEST_CASE("contradiction: requirements under a marker are not compared") {
    CHECK_FALSE(incompatible(pypi("numpy==1.20.0; python_version>'3.9'"), pypi("numpy<1.20.0")));
}

TEST_CASE("contradiction: find_contradictions records both sides with provenance") {
    Spec s;
    s.requirements = {{"numpy==1.20.0", "pypi", {"environment.yml", 9}},
                      {"numba==0.48.0", "pypi", {"mmdetection3d/requirements/runtime.txt", 3}},
                      {"numpy<1.20.0", "pypi", {"mmdetection3d/requirements/runtime.txt", 4}}};
    find_contradictions(s);
    REQUIRE(s.contradictions.size() == 1);
    CHECK(s.contradictions[0].name == "numpy");
    CHECK(s.contradictions[0].first.from.file == "environment.yml");
    CHECK(s.contradictions[0].second.from.line == 4);
}
