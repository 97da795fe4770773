#pragma once
// An mmdetection3d v0.17-like source tree, as BEVFormer's and EchoFusion's docs clone it:
// setup.py with make_cuda_ext(...) extensions and install_requires read from
// requirements/runtime.txt (numba==0.48.0, numpy<1.20.0). Written for these tests.
#include "fixture.hpp"

namespace envlock::test {

inline const char* const mmdet3d_setup_py = R"FIXTURE(import os
from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import (BuildExtension, CppExtension,
                                       CUDAExtension)


def parse_requirements(fname='requirements.txt', with_version=True):
    """Pins of one requirements file, comments dropped."""
    with open(fname) as handle:
        return [ln.strip() for ln in handle if ln.strip() and not ln.startswith('#')]


def make_cuda_ext(name, module, sources, sources_cuda=[], extra_args=[]):
    macros = []
    ctor = CppExtension
    if os.getenv('FORCE_CUDA', '0') == '1' or torch.cuda.is_available():
        macros.append(('WITH_CUDA', None))
        ctor = CUDAExtension
        sources = sources + sources_cuda
    return ctor(
        name=module + '.' + name,
        sources=[os.path.join(*module.split('.'), s) for s in sources],
        define_macros=macros)


if __name__ == '__main__':
    setup(
        name='mmdet3d',
        version='0.17.1',
        packages=find_packages(),
        install_requires=parse_requirements('requirements/runtime.txt'),
        extras_require={
            'all': parse_requirements('requirements.txt'),
            'tests': parse_requirements('requirements/tests.txt'),
        },
        ext_modules=[
            make_cuda_ext(
                name='iou3d_cuda',
                module='mmdet3d.ops.iou3d',
                sources=['src/iou3d.cpp'],
                sources_cuda=['src/iou3d_kernel.cu']),
            make_cuda_ext(
                name='knn_ext',
                module='mmdet3d.ops.knn',
                sources=['src/knn.cpp'],
                sources_cuda=['src/knn_cuda.cu']),
        ],
        cmdclass={'build_ext': BuildExtension},
        zip_safe=False)
)FIXTURE";

inline const char* const mmdet3d_runtime_txt = R"FIXTURE(lyft_dataset_sdk
networkx>=2.2,<2.3
# we may unlock the version of numba in the future
numba==0.48.0
numpy<1.20.0
nuscenes-devkit
plyfile
scikit-image
tensorboard
trimesh>=2.35.39,<2.35.40
)FIXTURE";

inline void write_mmdet3d(const FixtureRepo& repo, const std::string& dir) {
    repo.write(dir + "/setup.py", mmdet3d_setup_py);
    repo.write(dir + "/requirements/runtime.txt", mmdet3d_runtime_txt);
    repo.write(dir + "/requirements/tests.txt", "pytest\nyapf\n");
    repo.write(dir + "/requirements.txt", "-r requirements/build.txt\n-r requirements/optional.txt\n-r requirements/runtime.txt\n-r requirements/tests.txt\n");
    repo.write(dir + "/mmdet3d/ops/iou3d/src/iou3d_kernel.cu", "// kernel\n");
    repo.write(dir + "/mmdet3d/ops/knn/src/knn_cuda.cu", "// kernel\n");
}

}  // namespace envlock::test
