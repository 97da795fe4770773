# msda: multi-scale deformable attention (the sampling step of Deformable DETR's encoder and
# decoder) as a torch CUDA extension, written for envlock's flagship check: it is built the way
# paper repos build theirs (torch.utils.cpp_extension, `python setup.py develop`), by the nvcc the
# lock names, for the arch list the lock names (TORCH_CUDA_ARCH_LIST).
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='msda',
    version='0.1.0',
    ext_modules=[CUDAExtension('msda_ext', ['msda.cpp', 'msda_cuda.cu'])],
    cmdclass={'build_ext': BuildExtension},
)
