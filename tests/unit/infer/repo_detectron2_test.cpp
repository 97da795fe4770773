// A detectron2-like checkout: INSTALL.md offers `pip install git+<itself>` or a clone and
// `pip install -e detectron2`; setup.py builds detectron2._C as a CUDAExtension.
#include <doctest/doctest.h>

#include "fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

const char* const install_md = R"MD(## Installation

### Requirements
- Python 3.6+ on Linux or macOS
- PyTorch 1.8+ and its matching torchvision.

### Building from source

You need gcc and g++ 5.4 or newer.

```
python -m pip install 'git+https://github.com/facebookresearch/detectron2.git'
# --user helps without write access

# or from a clone of your own:
git clone https://github.com/facebookresearch/detectron2.git
python -m pip install -e detectron2
```

Before a rebuild, clear the old objects with `rm -rf build/ **/*.so`, then install
again.
)MD";

const char* const setup_py = R"PY(#!/usr/bin/env python
import glob
import os
import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

torch_ver = [int(x) for x in torch.__version__.split(".")[:2]]
assert torch_ver >= [1, 8], "torch 1.8 or newer needed"


def get_extensions():
    extension = CppExtension
    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        extension = CUDAExtension
    ext_modules = [
        extension(
            "detectron2._C",
            sources,
        )
    ]
    return ext_modules


setup(
    name="detectron2",
    version="0.6",
    python_requires=">=3.6",
    install_requires=[
        "Pillow>=7.1",
        "fvcore>=0.1.5,<0.1.6",
        "iopath>=0.1.7,<0.1.10",
        "dataclasses; python_version<'3.7'",
    ],
    extras_require={
        "dev": ["flake8==3.8.1", "isort==4.3.21"],
    },
    ext_modules=get_extensions(),
    cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension},
)
)PY";

}  // namespace

TEST_CASE("detectron2-like: installing the repo from its own git URL builds the checkout, not a source") {
    FixtureRepo repo("detectron2");
    repo.write("INSTALL.md", install_md);
    repo.write("setup.py", setup_py);
    repo.write("detectron2/layers/csrc/nms_rotated/nms_rotated_cuda.cu", "// kernel\n");
    auto spec = repo.infer();
    CHECK(spec.sources.empty());
    REQUIRE(spec.extensions.size() == 1);
    const auto& e = spec.extensions[0];
    CHECK(e.name == "detectron2._C");
    CHECK(e.in == ".");
    CHECK(e.build == "pip install .");
    CHECK(e.import == "detectron2._C");
    CHECK(e.cuda);
    CHECK(where(e.from) == "INSTALL.md:12");
    // The clone-and-install-e route is the same build, recorded as the alternative it is.
    auto* alt = find_note(spec, "alternative", "pip install -e .");
    REQUIRE(alt);
    CHECK(where(alt->from) == "INSTALL.md:17");
}

TEST_CASE("detectron2-like: setup.py's install_requires, python_requires and extras with lines") {
    FixtureRepo repo("detectron2");
    repo.write("INSTALL.md", install_md);
    repo.write("setup.py", setup_py);
    auto spec = repo.infer();
    CHECK(spec.python == ">=3.6");
    auto* py = find_requirement(spec, "python>=3.6");
    REQUIRE(py);
    CHECK(py->ecosystem.empty());   // constrains whichever Python the env gets (conda's or a venv's), asks no channel
    CHECK(where(py->from) == "setup.py:28");
    CHECK(where(find_requirement(spec, "fvcore>=0.1.5,<0.1.6")->from) == "setup.py:31");
    CHECK(find_requirement(spec, "dataclasses; python_version<'3.7'"));
    auto* flake8 = find_note(spec, "extra", "flake8==3.8.1");
    REQUIRE(flake8);
    CHECK(flake8->why.find("'dev'") != std::string::npos);
    // The prose's `rm -rf build/ **/*.so` is in an inline code span, not a command block.
    for (const auto& n : spec.notes) CHECK(n.text.find("rm -rf") == std::string::npos);
}

TEST_CASE("detectron2-like: with no docs at all, the root setup.py is read and its extension found") {
    FixtureRepo repo("detectron2");
    repo.write("setup.py", setup_py);
    auto spec = repo.infer();
    REQUIRE(spec.extensions.size() == 1);
    CHECK(spec.extensions[0].build == "pip install -e .");
    CHECK(where(spec.extensions[0].from) == "setup.py:17");
    CHECK(spec.inferred_from == std::vector<std::string>{"setup.py"});
}
