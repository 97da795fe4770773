// The demo mirror's torch-free CUDA extension: `boxops`, greedy non-maximum suppression whose
// overlap mask a CUDA kernel computes, bound to Python with CPython's C API. Its setup.py is the
// shape Fast R-CNN-era repos used for gpu_nms (rbgirshick/py-faster-rcnn lib/setup.py: find the
// toolkit, hook setuptools' compiler so .cu files go to nvcc), written anew here; the CUDA
// runtime is linked statically, so the module imports without a GPU or driver.
#include "tests/mirror/git_repo.hpp"

namespace envlock::mirror {
namespace {
const char* kSetupPy = R"PY(# boxops: greedy non-maximum suppression whose IoU mask is computed by a CUDA kernel.
# A CPython extension without torch: setuptools' build_ext compiles the .cu with nvcc and the
# bindings with the host compiler, and links the CUDA runtime statically, the way Fast R-CNN-era
# repos built their gpu_nms (a locate-CUDA step plus a compiler hook that sends .cu to nvcc).
import os
import re
import shutil
import subprocess

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext


def locate_cuda():
    """The toolkit to build with: $CUDA_HOME (or the older $CUDAHOME), else nvcc on PATH."""
    home = os.environ.get('CUDA_HOME') or os.environ.get('CUDAHOME')
    if not home:
        nvcc = shutil.which('nvcc')
        if nvcc is None:
            raise OSError('boxops needs the CUDA toolkit: set CUDA_HOME or put nvcc on PATH')
        home = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    cuda = {'home': home, 'nvcc': os.path.join(home, 'bin', 'nvcc'),
            'include': os.path.join(home, 'include'), 'lib': os.path.join(home, 'lib64')}
    if not os.path.isdir(cuda['lib']):
        cuda['lib'] = os.path.join(home, 'lib')
    for key in ('nvcc', 'include', 'lib'):
        if not os.path.exists(cuda[key]):
            raise OSError('boxops: the CUDA {} was not found at {}'.format(key, cuda[key]))
    return cuda


def gencode_flags():
    """-gencode per entry of $CUDAARCHS (CMake's list: 86, 86-real, 90-virtual); nvcc's default without it."""
    flags = []
    for entry in filter(None, re.split('[;, ]+', os.environ.get('CUDAARCHS', ''))):
        m = re.fullmatch(r'(\d+)(-real|-virtual)?', entry)
        if not m:
            raise ValueError('boxops: CUDAARCHS entry {!r} is not like 86, 86-real or 86-virtual'.format(entry))
        sm, kind = m.group(1), m.group(2) or ''
        codes = []
        if kind != '-virtual':
            codes.append('sm_' + sm)
        if kind != '-real':
            codes.append('compute_' + sm)
        flags.append('-gencode=arch=compute_{},code=[{}]'.format(sm, ','.join(codes)))
    return flags


CUDA = locate_cuda()


class cuda_build_ext(build_ext):
    """Sends .cu sources to nvcc; everything else to the host compiler."""

    def build_extensions(self):
        self.compiler.src_extensions.append('.cu')
        host_compile = self.compiler._compile

        def compile_one(obj, src, ext, cc_args, extra_postargs, pp_opts):
            if os.path.splitext(src)[1] != '.cu':
                return host_compile(obj, src, ext, cc_args, extra_postargs['cxx'], pp_opts)
            command = [CUDA['nvcc'], '-c', src, '-o', obj, '-O2', '-std=c++17', '-Xcompiler', '-fPIC']
            command += [a for a in pp_opts if a.startswith(('-I', '-D'))] + gencode_flags() + extra_postargs['nvcc']
            print(' '.join(command), flush=True)
            subprocess.check_call(command)

        self.compiler._compile = compile_one
        super().build_extensions()


setup(
    name='boxops',
    version='0.1.0',
    packages=find_packages(),
    ext_modules=[
        Extension(
            'boxops._nms',
            sources=['src/nms_module.cpp', 'src/nms_kernel.cu'],
            include_dirs=[CUDA['include']],
            library_dirs=[CUDA['lib']],
            libraries=['cudart_static', 'dl', 'rt', 'pthread'],
            language='c++',
            extra_compile_args={'cxx': ['-std=c++17'], 'nvcc': []},
        )
    ],
    cmdclass={'build_ext': cuda_build_ext},
    zip_safe=False,
)
)PY";
const char* kNmsHeader = R"CPP(// boxops: what the CUDA translation unit offers the Python bindings.
#pragma once
#include <string>
#include <vector>

int boxops_runtime_version();                 // cudaRuntimeGetVersion: 13000 for CUDA 13.0
int boxops_device_count();                    // 0 without a driver or GPU
std::vector<int> boxops_compiled_archs();     // nvcc's __CUDA_ARCH_LIST__: 750, 860 ...
// Greedy NMS of boxes (x1 y1 x2 y2, sorted by score) on the GPU; "" on success, else why not.
std::string boxops_nms(const std::vector<float>& boxes, float threshold, std::vector<int>& keep);
)CPP";
const char* kNmsKernel = R"CU(// boxops: the IoU mask of greedy non-maximum suppression, one thread per (box, block of 64 boxes).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nms.h"

namespace {

constexpr int kBlock = 64;

__device__ float iou(const float* a, const float* b) {
  float w = fmaxf(0.0f, fminf(a[2], b[2]) - fmaxf(a[0], b[0]));
  float h = fmaxf(0.0f, fminf(a[3], b[3]) - fmaxf(a[1], b[1]));
  float inter = w * h;
  float area_a = (a[2] - a[0]) * (a[3] - a[1]);
  float area_b = (b[2] - b[0]) * (b[3] - b[1]);
  return inter / fmaxf(area_a + area_b - inter, 1e-12f);
}

// mask[i * blocks + j] bit k: box i overlaps box j*64+k (k > i) above the threshold.
__global__ void overlap_mask(const float* boxes, int n, float threshold, uint64_t* mask) {
  int row_block = blockIdx.y, col_block = blockIdx.x;
  int blocks = (n + kBlock - 1) / kBlock;
  __shared__ float cols[kBlock * 4];
  int col = col_block * kBlock + threadIdx.x;
  if (col < n)
    for (int d = 0; d < 4; ++d) cols[threadIdx.x * 4 + d] = boxes[col * 4 + d];
  __syncthreads();
  int row = row_block * kBlock + threadIdx.x;
  if (row >= n) return;
  uint64_t bits = 0;
  int cols_here = min(kBlock, n - col_block * kBlock);
  for (int k = 0; k < cols_here; ++k) {
    int other = col_block * kBlock + k;
    if (other > row && iou(boxes + row * 4, cols + k * 4) > threshold) bits |= 1ULL << k;
  }
  mask[row * blocks + col_block] = bits;
}

std::string cuda_error(const char* what, cudaError_t e) { return std::string(what) + ": " + cudaGetErrorString(e); }

}  // namespace

int boxops_runtime_version() {
  int v = 0;
  cudaRuntimeGetVersion(&v);
  return v;
}

int boxops_device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::vector<int> boxops_compiled_archs() {
#ifdef __CUDA_ARCH_LIST__
  return {__CUDA_ARCH_LIST__};
#else
  return {};
#endif
}

std::string boxops_nms(const std::vector<float>& boxes, float threshold, std::vector<int>& keep) {
  int n = static_cast<int>(boxes.size() / 4);
  keep.clear();
  if (n == 0) return "";
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) return e != cudaSuccess ? cuda_error("no CUDA device", e) : "no CUDA device";
  int blocks = (n + kBlock - 1) / kBlock;
  float* d_boxes = nullptr;
  uint64_t* d_mask = nullptr;
  std::vector<uint64_t> mask(static_cast<size_t>(n) * blocks);
  if ((e = cudaMalloc(&d_boxes, boxes.size() * sizeof(float))) != cudaSuccess) return cuda_error("cudaMalloc", e);
  if ((e = cudaMalloc(&d_mask, mask.size() * sizeof(uint64_t))) != cudaSuccess) {
    cudaFree(d_boxes);
    return cuda_error("cudaMalloc", e);
  }
  cudaMemcpy(d_boxes, boxes.data(), boxes.size() * sizeof(float), cudaMemcpyHostToDevice);
  overlap_mask<<<dim3(blocks, blocks), kBlock>>>(d_boxes, n, threshold, d_mask);
  e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpy(mask.data(), d_mask, mask.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost);
  cudaFree(d_boxes);
  cudaFree(d_mask);
  if (e != cudaSuccess) return cuda_error("overlap_mask", e);
  std::vector<uint64_t> removed(blocks, 0);
  for (int i = 0; i < n; ++i) {
    if (removed[i / kBlock] & (1ULL << (i % kBlock))) continue;
    keep.push_back(i);
    for (int b = 0; b < blocks; ++b) removed[b] |= mask[static_cast<size_t>(i) * blocks + b];
  }
  return "";
}
)CU";
const char* kNmsModule = R"CPP(// boxops._nms: Python bindings (CPython's C API, no torch) for the CUDA NMS.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "nms.h"

namespace {

PyObject* runtime_version(PyObject*, PyObject*) { return PyLong_FromLong(boxops_runtime_version()); }

PyObject* device_count(PyObject*, PyObject*) { return PyLong_FromLong(boxops_device_count()); }

PyObject* compiled_archs(PyObject*, PyObject*) {
  auto archs = boxops_compiled_archs();
  PyObject* out = PyTuple_New(static_cast<Py_ssize_t>(archs.size()));
  for (size_t i = 0; i < archs.size(); ++i) PyTuple_SET_ITEM(out, i, PyLong_FromLong(archs[i]));
  return out;
}

// nms(boxes, threshold): boxes a sequence of (x1, y1, x2, y2) sorted by descending score.
PyObject* nms(PyObject*, PyObject* args) {
  PyObject* seq = nullptr;
  float threshold = 0.5f;
  if (!PyArg_ParseTuple(args, "Of", &seq, &threshold)) return nullptr;
  PyObject* fast = PySequence_Fast(seq, "boxes must be a sequence of (x1, y1, x2, y2)");
  if (!fast) return nullptr;
  std::vector<float> boxes;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* box = PySequence_Fast(PySequence_Fast_GET_ITEM(fast, i), "each box must be (x1, y1, x2, y2)");
    if (!box || PySequence_Fast_GET_SIZE(box) != 4) {
      Py_XDECREF(box);
      Py_DECREF(fast);
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "each box must be (x1, y1, x2, y2)");
      return nullptr;
    }
    for (int d = 0; d < 4; ++d) boxes.push_back(static_cast<float>(PyFloat_AsDouble(PySequence_Fast_GET_ITEM(box, d))));
    Py_DECREF(box);
  }
  Py_DECREF(fast);
  if (PyErr_Occurred()) return nullptr;
  std::vector<int> keep;
  std::string error = boxops_nms(boxes, threshold, keep);
  if (!error.empty()) {
    PyErr_SetString(PyExc_RuntimeError, error.c_str());
    return nullptr;
  }
  PyObject* out = PyList_New(static_cast<Py_ssize_t>(keep.size()));
  for (size_t i = 0; i < keep.size(); ++i) PyList_SET_ITEM(out, i, PyLong_FromLong(keep[i]));
  return out;
}

PyMethodDef methods[] = {
    {"runtime_version", runtime_version, METH_NOARGS, "the CUDA runtime linked in (cudaRuntimeGetVersion)"},
    {"device_count", device_count, METH_NOARGS, "CUDA devices visible (0 without a driver)"},
    {"compiled_archs", compiled_archs, METH_NOARGS, "the compute capabilities compiled in (nvcc's __CUDA_ARCH_LIST__)"},
    {"nms", nms, METH_VARARGS, "indices kept by greedy NMS of score-sorted boxes, computed on the GPU"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "boxops._nms", "CUDA non-maximum suppression (no torch)", -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit__nms() { return PyModule_Create(&module); }
)CPP";
const char* kInitPy = R"PY("""boxops: non-maximum suppression on the GPU, without torch."""
from ._nms import compiled_archs, device_count, nms, runtime_version

__all__ = ['compiled_archs', 'device_count', 'nms', 'nms_reference', 'runtime_version']


def nms_reference(boxes, threshold):
    """The same greedy NMS in Python, to compare the GPU's answer with."""
    def iou(a, b):
        w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        inter = w * h
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
        return inter / max(union, 1e-12)

    keep = []
    for i, box in enumerate(boxes):
        if all(iou(boxes[k], box) <= threshold for k in keep):
            keep.append(i)
    return keep
)PY";
}  // namespace

std::vector<std::pair<std::string, std::string>> boxops_tree() {
    return {
        {"README.md",
         "# boxops (envlock mirror stand-in)\n\n"
         "Non-maximum suppression on the GPU without torch: a CPython extension whose setup.py compiles\n"
         "src/nms_kernel.cu with nvcc and links the CUDA runtime statically.\n\n"
         "    CUDA_HOME=/usr/local/cuda CUDAARCHS='86-real;90' python setup.py develop\n\n"
         "`CUDAARCHS` is CMake's list (86 = SASS + PTX, 86-real = SASS, 86-virtual = PTX); unset, nvcc's\n"
         "default architecture is used. `boxops.compiled_archs()` tells what was compiled in.\n"},
        {"setup.py", kSetupPy},
        {"src/nms.h", kNmsHeader},
        {"src/nms_kernel.cu", kNmsKernel},
        {"src/nms_module.cpp", kNmsModule},
        {"boxops/__init__.py", kInitPy},
        {"SOURCE", "envlock mirror: self-written; setup.py follows the pattern of rbgirshick/py-faster-rcnn lib/setup.py "
                   "(locate_cuda, customize_compiler_for_nvcc), the CUDA architectures read from CMake's CUDAARCHS\n"},
    };
}

}  // namespace envlock::mirror
