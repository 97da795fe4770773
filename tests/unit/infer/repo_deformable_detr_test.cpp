// A Deformable-DETR-like checkout: the install is a README list whose items hold fenced
// blocks, then `cd ./models/ops; sh ./make.sh` builds the CUDA op.
#include <doctest/doctest.h>

#include "fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

const char* const readme = R"MD(# A detector

## Setting up

* Linux with CUDA 9.2+ and GCC 5.4+

* Python 3.7+

    A conda env keeps things apart:
    ```bash
    conda create -n deformable_detr python=3.7 pip
    ```
    and enter it:
    ```bash
    conda activate deformable_detr
    ```

* PyTorch 1.5.1+ and torchvision 0.6.1+

    With CUDA 9.2, for instance:
    ```bash
    conda install pytorch=1.5.1 torchvision=0.6.1 cudatoolkit=9.2 -c pytorch
    ```

* The rest
    ```bash
    pip install -r requirements.txt
    ```

### The CUDA op
```bash
cd ./models/ops
sh ./make.sh
# check it (every line should say True)
python test.py
```

## Training

```bash
GPUS_PER_NODE=8 ./tools/run_dist_launch.sh 8 ./configs/r50_deformable_detr.sh
```
)MD";

}  // namespace

TEST_CASE("Deformable-DETR-like: blocks nested in list items are read, with their lines") {
    FixtureRepo repo("Deformable-DETR");
    repo.write("README.md", readme);
    repo.write("requirements.txt", "pycocotools\ntqdm\ncython\nscipy\n");
    repo.write("models/ops/make.sh", "#!/usr/bin/env bash\npython setup.py build install\n");
    repo.write("models/ops/setup.py",
               "import torch\nfrom torch.utils.cpp_extension import CppExtension, CUDAExtension\n"
               "def exts():\n    ctor = CUDAExtension if torch.cuda.is_available() else CppExtension\n"
               "    return [CUDAExtension('MultiScaleDeformableAttention', srcs)]\n"
               "setup(name='MultiScaleDeformableAttention', ext_modules=exts())\n");
    repo.write("models/ops/src/cuda/ms_deform_attn_cuda.cu", "// kernel\n");
    auto spec = repo.infer();
    CHECK(spec.python == "3.7");
    CHECK(where(find_requirement(spec, "python=3.7")->from) == "README.md:11");
    CHECK(find_requirement(spec, "pip"));
    CHECK(where(find_requirement(spec, "cudatoolkit=9.2")->from) == "README.md:22");
    CHECK(spec.channels == std::vector<std::string>{"pytorch", "defaults"});
    CHECK(where(find_requirement(spec, "scipy")->from) == "requirements.txt:4");
    REQUIRE(spec.extensions.size() == 1);
    CHECK(spec.extensions[0].in == "models/ops");
    CHECK(spec.extensions[0].build == "sh make.sh");
    CHECK(spec.extensions[0].import == "MultiScaleDeformableAttention");
    CHECK(where(spec.extensions[0].from) == "README.md:33");
    CHECK(spec.notes.empty());
}
