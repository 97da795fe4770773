// An EchoFusion-like checkout: docs/install.md clones the repo itself, clones mmdetection3d
// into it at v0.17.3 and installs it with `pip install -v -e .`, installs local packages,
// and the repo carries an environment file and a vendored sub-project with its own CUDA op.
#include <doctest/doctest.h>

#include "fixture.hpp"
#include "fixtures_mmdet3d.hpp"
#include "resolver/lock/spec_io.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

const char* const install_md = R"MD(# Installation

**1. Environment**

```bash
git clone https://github.com/tusen-ai/EchoFusion
cd EchoFusion
mkdir ckpts ### weights go here
conda create -n echofusion python=3.7 -y
conda activate echofusion
conda install pytorch==1.9.1 torchvision==0.10.1 torchaudio==0.9.1 cudatoolkit=11.1 -c pytorch -c conda-forge
```

**2. mmcv-full**

```bash
pip install mmcv-full -f https://download.openmmlab.com/mmcv/dist/{cu_version}/{torch_version}/index.html
```
for example:
```bash
pip install mmcv-full==1.4.0 -f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.1/index.html
```

**3. mmdet, mmseg and mmdet3d**

```bash
pip install mmdet==2.19.0
pip install mmsegmentation==0.20.0
git clone https://github.com/open-mmlab/mmdetection3d.git
cd mmdetection3d
git checkout v0.17.3
rm -rf ./mmdet3d/core/bbox/iou_calculators
cp -r ../mmdet3d_supp/core/bbox/iou_calculators ./mmdet3d/core/bbox
pip install -v -e .
cd ..
```

**4. Others**

```bash
git clone https://github.com/valeoai/RADIal
cd RADIal/DBReader
pip install .
cd ../..
pip3 install --upgrade git+https://github.com/klintan/pypcd.git
cd Extensible-Object-Detection-Evaluator
pip install .
cd ..
pip install spconv-cu113
conda update ffmpeg
export TORCH_CUDA_ARCH_LIST="8.6"
export CUDA_HOME=/usr/local/cuda-11.1
```
)MD";

const char* const environment_yml = R"YML(name: echofusion
channels:
  - pytorch
  - conda-forge
dependencies:
  - python=3.7
  - cudatoolkit=11.1
  - pip
  - pip:
    - cupy-cuda111
    - numpy==1.20.0
)YML";

const char* const rotated_iou_setup = R"PY(from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='sort_vertices',
    ext_modules=[
        CUDAExtension('sort_vertices', [
            'sort_vert.cpp',
            'sort_vert_kernel.cu',
        ]),
    ],
    cmdclass={
        'build_ext': BuildExtension
    })
)PY";

void write_echofusion(const FixtureRepo& repo, bool with_environment = true) {
    repo.write("README.md", "# EchoFusion\n\nPlease refer to [install.md](docs/install.md).\n");
    repo.write("docs/install.md", install_md);
    if (with_environment) repo.write("environment.yml", environment_yml);
    write_mmdet3d(repo, "mmdetection3d");
    repo.write("Extensible-Object-Detection-Evaluator/setup.py",
               "from setuptools import setup\nsetup(\n    name='eod_evaluator',\n    install_requires=['treelib', 'tqdm'],\n)\n");
    repo.write("K-Radar-main/requirements.txt", "open3d==0.15.2\nspconv-cu113\nnumba\n");
    repo.write("K-Radar-main/utils/Rotated_IoU/cuda_op/setup.py", rotated_iou_setup);
    repo.write("K-Radar-main/utils/Rotated_IoU/cuda_op/sort_vert_kernel.cu", "// kernel\n");
}

}  // namespace

TEST_CASE("EchoFusion-like: conda pins with channels; python 3.7") {
    FixtureRepo repo("EchoFusion");
    write_echofusion(repo);
    auto spec = repo.infer();
    CHECK(spec.python == "3.7");
    CHECK(where(find_requirement(spec, "pytorch==1.9.1")->from) == "docs/install.md:11");
    CHECK(spec.channels == std::vector<std::string>{"pytorch", "conda-forge", "defaults"});
}

TEST_CASE("EchoFusion-like: the template mmcv line is a note; the example with its index is followed") {
    FixtureRepo repo("EchoFusion");
    write_echofusion(repo);
    auto spec = repo.infer();
    CHECK(find_note(spec, "template", "{cu_version}"));
    CHECK(where(find_requirement(spec, "mmcv-full==1.4.0")->from) == "docs/install.md:21");
    CHECK_FALSE(find_requirement(spec, "mmcv-full"));
    REQUIRE(spec.find_links.size() == 1);
    CHECK(spec.find_links[0] == "https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.1/index.html");
}

TEST_CASE("EchoFusion-like: mmdetection3d is a source at v0.17.3 with its ops as an extension") {
    FixtureRepo repo("EchoFusion");
    write_echofusion(repo);
    auto spec = repo.infer();
    REQUIRE(!spec.sources.empty());
    const auto& mmdet3d = spec.sources[0];
    CHECK(mmdet3d.name == "mmdet3d");
    CHECK(mmdet3d.rev == "v0.17.3");
    CHECK(mmdet3d.install == "pip install -e .");
    CHECK(where(mmdet3d.from) == "docs/install.md:31");
    REQUIRE(!spec.extensions.empty());
    CHECK(spec.extensions[0].in == "mmdetection3d");
    CHECK(spec.extensions[0].build == "pip install -e .");
    CHECK(spec.extensions[0].cuda);
    CHECK(where(find_requirement(spec, "numba==0.48.0")->from) == "mmdetection3d/requirements/runtime.txt:4");
}

TEST_CASE("EchoFusion-like: patching the cloned source is recorded, not reproduced") {
    FixtureRepo repo("EchoFusion");
    write_echofusion(repo);
    auto spec = repo.infer();
    auto* rm = find_note(spec, "ignored", "rm -rf ./mmdet3d/core/bbox/iou_calculators");
    REQUIRE(rm);
    CHECK(where(rm->from) == "docs/install.md:32");
    CHECK(find_note(spec, "ignored", "cp -r ../mmdet3d_supp"));
}

TEST_CASE("EchoFusion-like: a subdirectory of a clone and a local package are installed") {
    FixtureRepo repo("EchoFusion");
    write_echofusion(repo);
    auto spec = repo.infer();
    const SpecSource* radial = nullptr;
    for (const auto& s : spec.sources)
        if (s.name == "RADIal") radial = &s;
    REQUIRE(radial);
    CHECK(radial->install == "cd DBReader && pip install .");
    // The vendored evaluator's setup.py install_requires, from its own file and line.
    CHECK(where(find_requirement(spec, "treelib")->from) == "Extensible-Object-Detection-Evaluator/setup.py:4");
    // The vendored package itself is built from the checkout: a (non-CUDA) build step.
    const SpecExtension* evaluator = nullptr;
    for (const auto& e : spec.extensions)
        if (e.in == "Extensible-Object-Detection-Evaluator") evaluator = &e;
    REQUIRE(evaluator);
    CHECK(evaluator->name == "eod_evaluator");
    CHECK(evaluator->build == "pip install .");
    CHECK_FALSE(evaluator->cuda);
    CHECK(find_note(spec, "unpinned", "pypcd"));
}

TEST_CASE("EchoFusion-like: export lines set build variables; machine paths are noted, not kept") {
    FixtureRepo repo("EchoFusion");
    write_echofusion(repo);
    auto spec = repo.infer();
    CHECK(spec.env.at("TORCH_CUDA_ARCH_LIST") == "8.6");
    CHECK_FALSE(spec.env.count("CUDA_HOME"));
    CHECK(find_note(spec, "ignored", "CUDA_HOME"));
    CHECK(find_note(spec, "ignored", "conda update ffmpeg"));
}

TEST_CASE("EchoFusion-like: the environment file's numpy==1.20.0 contradicts mmdet3d's numpy<1.20.0") {
    FixtureRepo repo("EchoFusion");
    write_echofusion(repo);
    auto spec = repo.infer();
    CHECK(where(find_requirement(spec, "cupy-cuda111")->from) == "environment.yml:10");
    REQUIRE(spec.contradictions.size() == 1);
    CHECK(spec.contradictions[0].name == "numpy");
    CHECK(where(spec.contradictions[0].first.from) == "mmdetection3d/requirements/runtime.txt:5");
    CHECK(where(spec.contradictions[0].second.from) == "environment.yml:11");
}

TEST_CASE("EchoFusion-like: the vendored sub-project's CUDA op is found by scanning; its requirements are noted") {
    FixtureRepo repo("EchoFusion");
    write_echofusion(repo, false);
    auto spec = repo.infer();
    const SpecExtension* sort = nullptr;
    for (const auto& e : spec.extensions)
        if (e.name == "sort_vertices") sort = &e;
    REQUIRE(sort);
    CHECK(sort->in == "K-Radar-main/utils/Rotated_IoU/cuda_op");
    CHECK(sort->build == "python setup.py install");
    CHECK(sort->import == "sort_vertices");
    CHECK(where(sort->from) == "K-Radar-main/utils/Rotated_IoU/cuda_op/setup.py:7");
    CHECK(find_note(spec, "ignored", "K-Radar-main/requirements.txt"));
    CHECK_FALSE(find_requirement(spec, "open3d==0.15.2"));
    CHECK(spec.contradictions.empty());
}

TEST_CASE("docs: the working directory carries over from one code block to the next") {
    FixtureRepo repo("EchoFusion");
    write_mmdet3d(repo, "mmdetection3d");
    repo.write("docs/install.md",
               "**f. Install mmdet3d.**\n```bash\ngit clone https://github.com/open-mmlab/mmdetection3d.git\n"
               "cd mmdetection3d\ngit checkout v0.17.3\n```\nThen patch it.\n```bash\npip install -v -e .\ncd ..\n```\n");
    auto spec = repo.infer();
    REQUIRE(spec.sources.size() == 1);
    CHECK(spec.sources[0].install == "pip install -e .");
    REQUIRE(spec.extensions.size() == 1);
    CHECK(spec.extensions[0].in == "mmdetection3d");
    CHECK(where(spec.extensions[0].from) == "docs/install.md:9");
}

TEST_CASE("EchoFusion-like: the inferred spec (notes, contradictions and all) round-trips byte for byte") {
    FixtureRepo repo("EchoFusion");
    write_echofusion(repo);
    auto spec = repo.infer();
    REQUIRE(!spec.notes.empty());
    REQUIRE(!spec.contradictions.empty());
    auto text = spec_to_yaml_text(spec);
    CHECK(spec_to_yaml_text(spec_from_yaml_text(text, "envlock.yaml")) == text);
    CHECK(spec_to_yaml_text(spec_from_json(spec_to_json(spec), "spec.json")) == text);
}
