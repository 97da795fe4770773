// torch and Python versions a repo states only in a sentence of its install docs (issue 15's
// corpus: PETR's README, DiffusionDet's GETTING_STARTED, 4DGaussians' README). The fixtures
// are small repos written here, one per way of saying it.
#include <doctest/doctest.h>

#include "fixture.hpp"

using namespace envlock;
using namespace envlock::test;

TEST_CASE("a prerequisites list with >= bounds gives torch and Python floors, each with its line") {
    FixtureRepo repo("diffdet");
    repo.write("README.md", "# A detector\n\nSee [getting started](GETTING_STARTED.md) to install.\n");
    repo.write("GETTING_STARTED.md",
               "## Installation\n\n### Requirements\n- Linux or macOS with Python \xE2\x89\xA5 3.6\n"
               "- PyTorch \xE2\x89\xA5 1.9.0 and a matching torchvision\n");
    auto spec = repo.infer();
    auto* torch = find_requirement(spec, "torch>=1.9.0");
    REQUIRE(torch);
    CHECK(where(torch->from) == "GETTING_STARTED.md:5");
    CHECK(spec.python == ">=3.6");
    auto* py = find_requirement(spec, "python>=3.6");
    REQUIRE(py);
    CHECK(where(py->from) == "GETTING_STARTED.md:4");
    REQUIRE(find_note(spec, "prose", "torch>=1.9.0"));
    CHECK(find_note(spec, "prose", "torch>=1.9.0")->why.find("PyTorch") != std::string::npos);
}

TEST_CASE("an exact version in a sentence, with a CUDA label or a range, is read as written") {
    FixtureRepo exact("petr_like");
    exact.write("README.md", "## Environment\nWe trained with pytorch == 1.9.0, CUDA 11.2 on 8 GPUs.\n");
    CHECK(find_requirement(exact.infer(), "torch==1.9.0"));

    FixtureRepo label("gs_like");
    label.write("README.md", "## Setup\nIn our environment we use pytorch=1.13.1+cu116.\n");
    CHECK(find_requirement(label.infer(), "torch==1.13.1+cu116"));

    FixtureRepo range("bev_like");
    range.write("README.md", "## Prerequisites\n- PyTorch >= 1.9, <= 1.10.2\n");
    CHECK(find_requirement(range.infer(), "torch>=1.9,<=1.10.2"));
}

TEST_CASE("prose does not override a command that installs torch, nor is code or a link read as prose") {
    FixtureRepo pinned("pinned");
    pinned.write("README.md",
                 "## Install\nAny PyTorch >= 1.8 should work, we use:\n\n```bash\npip install torch==1.10.1\n```\n");
    auto spec = pinned.infer();
    CHECK(find_requirement(spec, "torch==1.10.1"));
    CHECK_FALSE(find_requirement(spec, "torch>=1.8"));
    CHECK_FALSE(find_note(spec, "prose", "torch"));

    FixtureRepo code("indented");
    code.write("README.md",
               "## Notes\nSee [the notes](https://example.invalid/torch>=2.0) and the snippet:\n\n    torch==2.1.0\n");
    auto s = code.infer();
    CHECK_FALSE(find_requirement(s, "torch>=2.0"));
    CHECK_FALSE(find_requirement(s, "torch==2.1.0"));
}

TEST_CASE("torchvision or other torch-prefixed names in prose are not torch") {
    FixtureRepo repo("tv");
    repo.write("README.md", "## Requirements\n- torchvision >= 0.10\n- torch_scatter >= 2.0.9\n");
    auto spec = repo.infer();
    for (const auto& r : spec.requirements) CHECK_MESSAGE(r.text.rfind("torch", 0) != 0, r.text);
}
