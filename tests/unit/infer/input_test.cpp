// Inference's part of issue 14: a checkout is no source of itself; conda's implied `defaults`;
// a package's requirements and distribution name read statically from its packaging files.
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/unit/infer/fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

bool has_source(const Spec& s, const std::string& part) {
    return std::any_of(s.sources.begin(), s.sources.end(), [&](const SpecSource& x) { return x.git.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("a checkout whose folder is not named like the repo does not become a source of itself (its .git remote says who it is)") {
    FixtureRepo repo("bev-checkout");
    repo.write(".git/config", "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:fundamentalvision/BEVFormer.git\n"
                              "\tfetch = +refs/heads/*:refs/remotes/origin/*\n");
    repo.write("README.md", "## Install\n```bash\ngit clone https://github.com/fundamentalvision/BEVFormer.git\ncd BEVFormer\n"
                            "pip install git+https://github.com/fundamentalvision/BEVFormer.git\n"
                            "git clone https://github.com/open-mmlab/mmdetection3d.git\n```\n");
    Spec spec = repo.infer();
    CHECK_FALSE(has_source(spec, "BEVFormer"));
    CHECK(has_source(spec, "mmdetection3d"));
}

TEST_CASE("conda install -c pytorch -c nvidia searches pytorch, nvidia, then defaults (conda docs, 'Managing channels')") {
    FixtureRepo repo("m2f");
    repo.write("INSTALL.md", "```bash\nconda create -n m2f python=3.8\nconda install pytorch==1.9.0 cudatoolkit=11.1 -c pytorch -c nvidia\n```\n");
    CHECK(repo.infer().channels == std::vector<std::string>{"pytorch", "nvidia", "defaults"});
}

TEST_CASE("--override-channels leaves defaults out") {
    FixtureRepo repo("over");
    repo.write("README.md", "```bash\nconda install --override-channels -c conda-forge numpy=1.19\n```\n");
    CHECK(repo.infer().channels == std::vector<std::string>{"conda-forge"});
}

TEST_CASE("environment.yml: its channels then defaults; `nodefaults` removes defaults and names no channel") {
    FixtureRepo with("envdef");
    with.write("environment.yml", "channels:\n  - pytorch\ndependencies:\n  - python=3.8\n");
    CHECK(with.infer().channels == std::vector<std::string>{"pytorch", "defaults"});
    FixtureRepo without("envnodef");
    without.write("environment.yml", "channels:\n  - conda-forge\n  - nodefaults\ndependencies:\n  - python=3.8\n");
    CHECK(without.infer().channels == std::vector<std::string>{"conda-forge"});
}

TEST_CASE("an unreadable requirement line is an 'unreadable' note with its line, which resolve refuses") {
    FixtureRepo repo("unread");
    repo.write("requirements.txt", "numpy==1.19.5\ntorch=>1.9\n");
    Spec spec = repo.infer();
    auto* n = find_note(spec, "unreadable", "torch=>1.9");
    REQUIRE(n);
    CHECK(where(n->from) == "requirements.txt:2");
}

TEST_CASE("a package's requirements and name from setup.py, including install_requires read from requirements files") {
    // mmdetection3d v0.17's shape: setup(name='mmdet3d', install_requires=parse_requirements('requirements/runtime.txt')).
    std::map<std::string, std::string> files = {
        {"setup.py", "from setuptools import setup\ndef parse_requirements(fname):\n    return []\n"
                     "setup(name='mmdet3d', install_requires=parse_requirements('requirements/runtime.txt'))\n"},
        {"requirements/runtime.txt", "lyft_dataset_sdk\nnuscenes-devkit\nplyfile\n-r extra.txt\n"},
        {"requirements/extra.txt", "tensorboard\n"},
    };
    auto pkg = read_package_requirements(files);
    CHECK(pkg.known);
    CHECK(pkg.name == "mmdet3d");
    CHECK(pkg.requires_dist == std::vector<std::string>{"lyft_dataset_sdk", "nuscenes-devkit", "plyfile", "tensorboard"});
}

TEST_CASE("install_requires from a helper whose file is named only as its default argument (mmcv's setup.py) is still read") {
    std::map<std::string, std::string> files = {
        {"setup.py", "from setuptools import setup\n\ndef parse_requirements(fname='requirements/runtime.txt', with_version=True):\n"
                     "    return []\n\nsetup(name='mmcv-full', install_requires=parse_requirements())\n"},
        {"requirements/runtime.txt", "addict\nnumpy\npackaging\nPillow\npyyaml\nyapf\n"},
    };
    auto pkg = read_package_requirements(files);
    CHECK(pkg.known);
    CHECK(pkg.name == "mmcv-full");
    CHECK(std::find(pkg.requires_dist.begin(), pkg.requires_dist.end(), "yapf") != pkg.requires_dist.end());
}

TEST_CASE("setup.cfg and pyproject.toml declare requirements; dynamic ones follow [tool.setuptools.dynamic]") {
    auto cfg = read_package_requirements({{"setup.cfg", "[metadata]\nname = fvcore\n[options]\ninstall_requires =\n    yacs>=0.1.6\n    termcolor>=1.1\n"}});
    CHECK(cfg.known);
    CHECK(cfg.name == "fvcore");
    CHECK(cfg.requires_dist == std::vector<std::string>{"yacs>=0.1.6", "termcolor>=1.1"});
    auto dyn = read_package_requirements({{"pyproject.toml", "[project]\nname = \"x\"\ndynamic = [\"dependencies\"]\n"
                                                             "[tool.setuptools.dynamic]\ndependencies = {file = [\"requirements.txt\"]}\n"},
                                          {"requirements.txt", "tabulate\n"}});
    CHECK(dyn.known);
    CHECK(dyn.requires_dist == std::vector<std::string>{"tabulate"});
}

TEST_CASE("requirements no static reading can follow are unknown, not none") {
    auto pkg = read_package_requirements({{"setup.py", "from setuptools import setup\nsetup(name='x', install_requires=get_deps())\n"}});
    CHECK_FALSE(pkg.known);
    auto nothing = read_package_requirements({{"README.md", "hello\n"}});
    CHECK_FALSE(nothing.known);
    auto none = read_package_requirements({{"setup.py", "from setuptools import setup\nsetup(name='y')\n"}});
    CHECK(none.known);
    CHECK(none.requires_dist.empty());
}

// --- optional and alternative steps, placeholders, mim (item 5) ---------------------------------

TEST_CASE("a block the doc gives for CPU platforms is an alternative, and a cpuonly install is never a requirement") {
    FixtureRepo repo("cpu");
    repo.write("README.md", "## Install\n\nOn GPU platforms:\n```bash\nconda install pytorch==1.9.0 cudatoolkit=11.1 -c pytorch -c nvidia\n```\n"
                            "On CPU platforms:\n```bash\nconda install pytorch==1.9.0 torchvision==0.10.0 cpuonly -c pytorch\n```\n"
                            "Or:\n```bash\nconda install pytorch torchvision cpuonly -c pytorch\n```\n");
    Spec spec = repo.infer();
    CHECK(find_requirement(spec, "pytorch==1.9.0"));
    CHECK_FALSE(find_requirement(spec, "cpuonly"));
    CHECK_FALSE(find_requirement(spec, "torchvision==0.10.0"));
    auto* cpu = find_note(spec, "alternative", "torchvision==0.10.0 cpuonly");
    REQUIRE(cpu);
    CHECK(cpu->why.find("CPU-only") != std::string::npos);
    CHECK(find_note(spec, "alternative", "pytorch torchvision cpuonly"));
}

TEST_CASE("a step under an 'Optional' heading stays out even when a paragraph sits between (MinkowskiEngine)") {
    FixtureRepo repo("opt");
    repo.write("INSTALL.md", "# Install\n```bash\npip install numpy==1.19.5\n```\n### (Optional) MinkowskiEngine\n\nFor the sparse backbone:\n"
                             "```bash\npip install MinkowskiEngine==0.5.4\n```\n");
    Spec spec = repo.infer();
    CHECK(find_requirement(spec, "numpy==1.19.5"));
    CHECK_FALSE(find_requirement(spec, "MinkowskiEngine==0.5.4"));
    CHECK(find_note(spec, "optional", "MinkowskiEngine"));
}

TEST_CASE("CUDA-variant placeholders (spconv-cuxxx, cumm-cu<CUDA_VERSION>) are choices the solver makes, not names as written") {
    FixtureRepo repo("ph");
    repo.write("README.md", "```bash\npip install spconv-cuxxx\npip install cumm-cu<CUDA_VERSION>\npip install pkbar\n"
                            "pip install cupy-cuda11x\npip install ./<YOUR_FORK>\n```\n");
    Spec spec = repo.infer();
    // Each stands for the projects that fill it (spconv-cu102, spconv-cu111 …): resolve picks one.
    auto* spconv = find_requirement(spec, "spconv-cuxxx");
    REQUIRE(spconv);
    CHECK(spconv->ecosystem == "pypi");
    CHECK(where(spconv->from) == "README.md:2");
    auto* cumm = find_requirement(spec, "cumm-cuxxx");
    REQUIRE(cumm);
    CHECK(where(cumm->from) == "README.md:3");
    CHECK(find_requirement(spec, "pkbar"));
    // cupy-cuda11x is a real project (CuPy's wheel for every CUDA 11.x), taken as written.
    CHECK(find_requirement(spec, "cupy-cuda11x"));
    // A slot that is no CUDA variant stays a note for the reader.
    CHECK(find_note(spec, "template", "<YOUR_FORK>"));
}

TEST_CASE("mim install is pip with OpenMMLab's wheel index for the torch and CUDA the solver picks") {
    FixtureRepo repo("mim");
    repo.write("README.md", "```bash\npip install -U openmim\nmim install mmcv-full==1.4.0\n```\n");
    Spec spec = repo.infer();
    auto* r = find_requirement(spec, "mmcv-full==1.4.0");
    REQUIRE(r);
    CHECK(r->ecosystem == "pypi");
    CHECK(spec.find_links == std::vector<std::string>{"https://download.openmmlab.com/mmcv/dist/{cu_version}/{torch_version}/index.html"});
}
