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
- Linux or macOS with Python >= 3.6
- PyTorch >= 1.9 and a torchvision that matches it.
- `pip install -r requirements.txt`

### CUDA kernel for MSDeformAttn
After preparing the environment, compile the CUDA kernel for MSDeformAttn:

```bash
cd mask2former/modeling/pixel_decoder/ops
sh make.sh
```

#### Building on another system
To build on a system that does not have a GPU device but provide the drivers:
```bash
TORCH_CUDA_ARCH_LIST='8.0' FORCE_CUDA=1 python setup.py build install
```

### Example conda environment setup
```bash
conda create --name mask2former python=3.8 -y
conda activate mask2former
conda install pytorch==1.9.0 torchvision==0.10.0 cudatoolkit=11.1 -c pytorch -c nvidia
pip install -U opencv-python

# under your working dir
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

const char* const ops_setup_py = R"PY(import glob
import os

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

requirements = ["torch", "torchvision"]


def get_extensions():
    this_dir = os.path.dirname(os.path.abspath(__file__))
    extensions_dir = os.path.join(this_dir, "src")
    main_file = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))
    sources = main_file
    extension = CppExtension
    extra_compile_args = {"cxx": []}
    define_macros = []
    if (os.environ.get('FORCE_CUDA') or torch.cuda.is_available()) and CUDA_HOME is not None:
        extension = CUDAExtension
        sources += source_cuda
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = [
            "-DCUDA_HAS_FP16=1",
            "-D__CUDA_NO_HALF_OPERATORS__",
        ]
    else:
        raise NotImplementedError('No CUDA runtime is found. Please set FORCE_CUDA=1.')
    ext_modules = [
        extension(
            "MultiScaleDeformableAttention",
            sources,
            include_dirs=[extensions_dir],
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]
    return ext_modules


setup(
    name="MultiScaleDeformableAttention",
    version="1.0",
    packages=find_packages(exclude=("configs", "tests",)),
    ext_modules=get_extensions(),
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
    CHECK(spec.channels == std::vector<std::string>{"pytorch", "nvidia"});
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
