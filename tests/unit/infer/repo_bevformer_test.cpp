// A BEVFormer-like checkout: the whole install lives in docs/install.md.
#include <doctest/doctest.h>

#include "fixture.hpp"
#include "fixtures_bevformer.hpp"
#include "fixtures_mmdet3d.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

void write_bevformer(const FixtureRepo& repo) {
    repo.write("README.md", "# BEVFormer\n\n## Getting Started\n- [Installation](docs/install.md)\n");
    repo.write("docs/install.md", bevformer_install_md);
    repo.write("docs/prepare_dataset.md", "```shell\npip install nuscenes-devkit\n```\n");
}

}  // namespace

TEST_CASE("BEVFormer-like: every pip pin from the doc, with its line") {
    FixtureRepo repo("BEVFormer");
    write_bevformer(repo);
    auto spec = repo.infer();
    CHECK(spec.name == "BEVFormer");
    CHECK(spec.inferred_from == std::vector<std::string>{"docs/install.md"});
    for (const char* pin : {"torch==1.9.1+cu111", "torchvision==0.10.1+cu111", "torchaudio==0.9.1"}) {
        auto* r = find_requirement(spec, pin);
        REQUIRE_MESSAGE(r, pin);
        CHECK(r->ecosystem == "pypi");
        CHECK(where(r->from) == "docs/install.md:13");
    }
    CHECK(where(find_requirement(spec, "mmcv-full==1.4.0")->from) == "docs/install.md:24");
    CHECK(where(find_requirement(spec, "mmdet==2.14.0")->from) == "docs/install.md:30");
    CHECK(where(find_requirement(spec, "mmsegmentation==0.14.1")->from) == "docs/install.md:31");
    for (const char* pin : {"numpy==1.19.5", "numba==0.48.0", "setuptools==59.5.0", "timm==0.6.13", "einops"})
        CHECK_MESSAGE(find_requirement(spec, pin), pin);
    CHECK(spec.find_links == std::vector<std::string>{"https://download.pytorch.org/whl/torch_stable.html"});
}

TEST_CASE("BEVFormer-like: python from conda create") {
    FixtureRepo repo("BEVFormer");
    write_bevformer(repo);
    auto spec = repo.infer();
    CHECK(spec.python == "3.8");
    auto* py = find_requirement(spec, "python=3.8");
    REQUIRE(py);
    CHECK(py->ecosystem == "conda");
    CHECK(where(py->from) == "docs/install.md:7");
}

TEST_CASE("BEVFormer-like: mmdetection3d is a git source at the checked-out tag") {
    FixtureRepo repo("BEVFormer");
    write_bevformer(repo);
    auto spec = repo.infer();
    REQUIRE(spec.sources.size() == 2);
    CHECK(spec.sources[0].git == "https://github.com/open-mmlab/mmdetection3d");
    CHECK(spec.sources[0].rev == "v0.17.1");
    CHECK(spec.sources[0].install == "python setup.py install");
    CHECK(where(spec.sources[0].from) == "docs/install.md:38");
}

TEST_CASE("BEVFormer-like: the unpinned detectron2 git install is a source and a note") {
    FixtureRepo repo("BEVFormer");
    write_bevformer(repo);
    auto spec = repo.infer();
    REQUIRE(spec.sources.size() == 2);
    CHECK(spec.sources[1].name == "detectron2");
    CHECK(spec.sources[1].rev == "");
    auto* n = find_note(spec, "unpinned", "detectron2");
    REQUIRE(n);
    CHECK(where(n->from) == "docs/install.md:45");
}

TEST_CASE("BEVFormer-like: the optional gcc step and the commented-out mmcv line are recorded, not followed") {
    FixtureRepo repo("BEVFormer");
    write_bevformer(repo);
    auto spec = repo.infer();
    // omgarcia came only from the optional step; `conda create` searches conda's defaults.
    CHECK(spec.channels == std::vector<std::string>{"defaults"});
    for (const auto& r : spec.requirements) CHECK(r.text != "gcc-6");
    auto* gcc = find_note(spec, "optional", "gcc-6");
    REQUIRE(gcc);
    CHECK(where(gcc->from) == "docs/install.md:19");
    auto* mmcv = find_note(spec, "alternative", "download.openmmlab.com");
    REQUIRE(mmcv);
    CHECK(where(mmcv->from) == "docs/install.md:25");
    for (const auto& f : spec.find_links) CHECK(f.find("openmmlab") == std::string::npos);
}

TEST_CASE("BEVFormer-like: cloning the repo itself adds no source; docs not about installing are not read") {
    FixtureRepo repo("BEVFormer");
    write_bevformer(repo);
    auto spec = repo.infer();
    for (const auto& s : spec.sources) CHECK(s.git.find("BEVFormer") == std::string::npos);
    CHECK_FALSE(find_requirement(spec, "nuscenes-devkit"));
}

TEST_CASE("BEVFormer-like with mmdetection3d cloned in: its runtime pins and CUDA ops join the spec") {
    FixtureRepo repo("BEVFormer");
    write_bevformer(repo);
    write_mmdet3d(repo, "mmdetection3d");
    auto spec = repo.infer();
    auto* numpy = find_requirement(spec, "numpy<1.20.0");
    REQUIRE(numpy);
    CHECK(where(numpy->from) == "mmdetection3d/requirements/runtime.txt:5");
    REQUIRE(spec.extensions.size() == 1);
    const auto& ext = spec.extensions[0];
    CHECK(ext.name == "mmdet3d");
    CHECK(ext.in == "mmdetection3d");
    CHECK(ext.build == "python setup.py install");
    CHECK(ext.import == "mmdet3d.ops.iou3d.iou3d_cuda, mmdet3d.ops.knn.knn_ext");
    CHECK(ext.cuda);
    CHECK(where(ext.from) == "docs/install.md:39");
    CHECK(spec.sources[0].name == "mmdet3d");   // named by its setup.py
    // numpy==1.19.5 (the doc) agrees with numpy<1.20.0 (mmdet3d): nothing to report.
    CHECK(spec.contradictions.empty());
}

TEST_CASE("BEVFormer-like pinning numpy==1.20.0 next to mmdet3d 0.17: the contradiction is reported") {
    FixtureRepo repo("BEVFormer");
    std::string doc = bevformer_install_md;
    doc.replace(doc.find("numpy==1.19.5"), 13, "numpy==1.20.0");
    repo.write("docs/install.md", doc);
    write_mmdet3d(repo, "mmdetection3d");
    auto spec = repo.infer();
    REQUIRE(spec.contradictions.size() == 1);
    const auto& c = spec.contradictions[0];
    CHECK(c.name == "numpy");
    // In the order the requirements were met: mmdet3d is installed (line 39) before line 44.
    CHECK(where(c.first.from) == "mmdetection3d/requirements/runtime.txt:5");
    CHECK(where(c.second.from) == "docs/install.md:44");
    CHECK(c.why == "numpy 1.20.0 is outside <1.20.0");
}
