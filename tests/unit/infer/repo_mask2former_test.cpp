// A Mask2Former-like checkout: INSTALL.md with a conda example, requirements.txt, and a CUDA op
// built by mask2former/modeling/pixel_decoder/ops/make.sh -> setup.py with CUDAExtension.
#include <doctest/doctest.h>

#include <algorithm>

#include "fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

const char* const install_md = R"MD(## Installation

### Requirements
- Python 3.6 or newer on Linux or macOS
- PyTorch 1.9+ with a matching torchvision.
- `pip install -r requirements.txt`

### The MSDeformAttn CUDA op
Once the environment is ready, build the op:

```bash
cd mask2former/modeling/pixel_decoder/ops
sh make.sh
```

#### Building without a GPU
On a machine with drivers but no GPU:
```bash
TORCH_CUDA_ARCH_LIST='8.0' FORCE_CUDA=1 python setup.py build install
```

### A worked conda example
```bash
conda create --name mask2former python=3.8 -y
conda activate mask2former
conda install pytorch==1.9.0 torchvision==0.10.0 cudatoolkit=11.1 -c pytorch -c nvidia
pip install -U opencv-python

# from the directory that holds your checkouts
git clone git@github.com:facebookresearch/detectron2.git
cd detectron2
pip install -e .
pip install git+https://github.com/cocodataset/panopticapi.git
pip install git+https://github.com/mcordts/cityscapesScripts.git

cd ..
git clone git@github.com:facebookresearch/Mask2Former.git
cd Mask2Former
pip install -r requirements.txt
cd mask2former/modeling/pixel_decoder/ops
sh make.sh
```
)MD";

const char* const ops_setup_py = R"PY(# Builds the multi-scale deformable attention op for this fixture.
import glob
import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


def ext_sources(root):
    return glob.glob(os.path.join(root, "src", "*.cpp")) + glob.glob(os.path.join(root, "src", "cuda", "*.cu"))


def build_list():
    here = os.path.dirname(os.path.abspath(__file__))
    ctor = CppExtension
    macros = []
    flags = {"cxx": []}
    if os.environ.get("FORCE_CUDA") or torch.cuda.is_available():
        if CUDA_HOME is None:
            raise RuntimeError("set CUDA_HOME to the toolkit")
        ctor = CUDAExtension
        macros.append(("WITH_CUDA", None))
        flags["nvcc"] = ["-DCUDA_HAS_FP16=1"]
    else:
        raise RuntimeError("no GPU and FORCE_CUDA unset")
    return [
        ctor(
            "MultiScaleDeformableAttention",
            ext_sources(here),
            define_macros=macros,
            extra_compile_args=flags,
        )
    ]


setup(
    name="MultiScaleDeformableAttention",
    version="1.0",
    ext_modules=build_list(),
    cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension},
)
)PY";

void write_mask2former(const FixtureRepo& repo) {
    repo.write("README.md", "# Mask2Former\n\n## Installation\n\nSee [installation instructions](INSTALL.md).\n");
    repo.write("INSTALL.md", install_md);
    repo.write("requirements.txt", "cython\nscipy\nshapely\ntimm\nh5py\nsubmitit\nscikit-image\n");
    const std::string ops = "mask2former/modeling/pixel_decoder/ops/";
    repo.write(ops + "make.sh", "#!/usr/bin/env bash\n# build the op\npython setup.py build install\n");
    repo.write(ops + "setup.py", ops_setup_py);
    repo.write(ops + "src/vision.cpp", "// binding\n");
    repo.write(ops + "src/cuda/ms_deform_attn_cuda.cu", "// kernel\n");
}

}  // namespace

TEST_CASE("Mask2Former-like: conda pins and channels from the example environment") {
    FixtureRepo repo("Mask2Former");
    write_mask2former(repo);
    auto spec = repo.infer();
    CHECK(spec.python == "3.8");
    for (const char* pin : {"python=3.8", "pytorch==1.9.0", "torchvision==0.10.0", "cudatoolkit=11.1"}) {
        auto* r = find_requirement(spec, pin);
        REQUIRE_MESSAGE(r, pin);
        CHECK(r->ecosystem == "conda");
    }
    CHECK(where(find_requirement(spec, "cudatoolkit=11.1")->from) == "INSTALL.md:26");
    CHECK(spec.channels == std::vector<std::string>{"pytorch", "nvidia", "defaults"});
    CHECK(where(find_requirement(spec, "opencv-python")->from) == "INSTALL.md:27");
}

TEST_CASE("Mask2Former-like: requirements.txt is followed through the doc's pip install -r") {
    FixtureRepo repo("Mask2Former");
    write_mask2former(repo);
    auto spec = repo.infer();
    auto* timm = find_requirement(spec, "timm");
    REQUIRE(timm);
    CHECK(where(timm->from) == "requirements.txt:4");
    CHECK(std::find(spec.inferred_from.begin(), spec.inferred_from.end(), "requirements.txt") != spec.inferred_from.end());
}

TEST_CASE("Mask2Former-like: detectron2 and the git+ installs are sources; the repo's own clone is not") {
    FixtureRepo repo("Mask2Former");
    write_mask2former(repo);
    auto spec = repo.infer();
    REQUIRE(spec.sources.size() == 3);
    CHECK(spec.sources[0].name == "detectron2");
    CHECK(spec.sources[0].git == "https://github.com/facebookresearch/detectron2");
    CHECK(spec.sources[0].install == "pip install -e .");
    CHECK(where(spec.sources[0].from) == "INSTALL.md:30");
    CHECK(spec.sources[1].name == "panopticapi");
    CHECK(spec.sources[2].name == "cityscapesScripts");
    CHECK(find_note(spec, "unpinned", "detectron2"));
}

TEST_CASE("Mask2Former-like: the MSDeformAttn op is a CUDA extension built by make.sh") {
    FixtureRepo repo("Mask2Former");
    write_mask2former(repo);
    auto spec = repo.infer();
    REQUIRE(spec.extensions.size() == 1);
    const auto& e = spec.extensions[0];
    CHECK(e.name == "MultiScaleDeformableAttention");
    CHECK(e.in == "mask2former/modeling/pixel_decoder/ops");
    CHECK(e.build == "sh make.sh");
    CHECK(e.import == "MultiScaleDeformableAttention");
    CHECK(e.cuda);
    CHECK(where(e.from) == "INSTALL.md:13");
}

TEST_CASE("Mask2Former-like: with no docs, the make.sh and setup.py are still found by scanning") {
    FixtureRepo repo("Mask2Former");
    write_mask2former(repo);
    repo.write("INSTALL.md", "Nothing to see.\n");
    auto spec = repo.infer();
    REQUIRE(spec.extensions.size() == 1);
    CHECK(spec.extensions[0].build == "sh make.sh");
    CHECK(spec.extensions[0].from.file == "mask2former/modeling/pixel_decoder/ops/make.sh");
    // requirements.txt at the root is part of the environment even when no doc mentions it.
    CHECK(find_requirement(spec, "scipy"));
}

TEST_CASE("Mask2Former-like: .cu files no build covers are reported") {
    FixtureRepo repo("Mask2Former");
    write_mask2former(repo);
    repo.write("tools/kernels/extra.cu", "// orphan\n");
    auto spec = repo.infer();
    auto* n = find_note(spec, "ignored", "tools/kernels");
    REQUIRE(n);
    CHECK(n->why.find("1 .cu file") == 0);
}

TEST_CASE("Mask2Former-like: a second build of the same op directory is recorded as an alternative") {
    FixtureRepo repo("Mask2Former");
    write_mask2former(repo);
    auto spec = repo.infer();
    auto* n = find_note(spec, "alternative", "TORCH_CUDA_ARCH_LIST=8.0 FORCE_CUDA=1 python setup.py build install");
    REQUIRE(n);
    CHECK(where(n->from) == "INSTALL.md:19");
    CHECK(spec.env.empty());   // a one-command variable is not the environment's
}
