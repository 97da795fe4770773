// Known build, import and run failures (resolver/knowledge/build_failures.yaml) matched in logs.
// The logs are written for these tests; the tools' error strings in them are verbatim, as the
// sources of each row quote them (../shared/facts/extension-failures.md §1).
#include <set>

#include "tests/unit/verify/verify_fixture.hpp"
#include "resolver/specs/errors.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

struct Case {
    const char* id;
    const char* log;
    const char* cause_has;   // a captured value the explanation must carry ("" none)
};

const Case kCases[] = {
    {"unsupported-gnu-version",
     "[1/3] /usr/local/cuda-11.1/bin/nvcc -c /src/ops/roi_align_cuda.cu -o build/temp/roi_align_cuda.o\n"
     "FAILED: build/temp/roi_align_cuda.o\n"
     "In file included from /usr/local/cuda-11.1/include/cuda_runtime.h:83,\n"
     "/usr/local/cuda-11.1/include/crt/host_config.h:139:2: error: #error -- unsupported GNU version! gcc versions later than 10 are not "
     "supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported "
     "host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.\n"
     "ninja: build stopped: subcommand failed.\n",
     "later than 10"},
    {"unsupported-clang-version",
     "/usr/local/cuda-11.8/include/crt/host_config.h:151:2: error: #error -- unsupported clang version! clang version must be less "
     "than 15 and greater than 3.2 . The nvcc flag '-allow-unsupported-compiler' can be used to override this version check\n",
     "older than 15"},
    {"unsupported-gpu-architecture",
     "running build_ext\nbuilding 'deform_attn' extension\n/usr/local/cuda-11.0/bin/nvcc -gencode=arch=compute_86,code=sm_86 -c ms_deform_attn_cuda.cu\n"
     "nvcc fatal   : Unsupported gpu architecture 'compute_86'\nerror: command '/usr/local/cuda-11.0/bin/nvcc' failed with exit code 1\n",
     "compute_86"},
    {"unknown-cuda-arch",
     "  File \"/env/lib/python3.8/site-packages/torch/utils/cpp_extension.py\", line 1793, in _get_cuda_arch_flags\n"
     "    raise ValueError(f\"Unknown CUDA arch ({arch}) or GPU not supported\")\nValueError: Unknown CUDA arch (8.9) or GPU not supported\n",
     "8.9"},
    {"arch-list-unset-no-gpu",
     "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\nrunning build_ext\n"
     "  File \"/env/lib/python3.8/site-packages/torch/utils/cpp_extension.py\", line 1561, in _get_cuda_arch_flags\n"
     "    arch_list[-1] += '+PTX'\nIndexError: list index out of range\n",
     ""},
    {"torch-cuda-mismatch",
     "running build_ext\nTraceback (most recent call last):\n  File \"setup.py\", line 40, in <module>\n"
     "RuntimeError:\nThe detected CUDA version (12.1) mismatches the version that was used to compile\nPyTorch (11.8). Please make sure to use the same CUDA versions.\n",
     "CUDA 11.8"},
    {"torch-compiler-bounds",
     "RuntimeError: The current installed version of g++ (13.1.1) is greater than the maximum required version by CUDA 11.7. "
     "Please make sure to use an adequate version of g++ (>=6.0.0, <12.0).\n",
     "g++ 13.1.1"},
    {"cpu-torch-cuda-extension",
     "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\nrunning build_ext\n"
     "  File \"/usr/lib/python3/dist-packages/torch/utils/cpp_extension.py\", line 499, in build_extensions\n"
     "    _check_cuda_version(compiler_name, compiler_version)\n"
     "  File \"/usr/lib/python3/dist-packages/torch/utils/cpp_extension.py\", line 382, in _check_cuda_version\n"
     "    torch_cuda_version = packaging.version.parse(torch.version.cuda)\n"
     "TypeError: expected string or bytes-like object, got 'NoneType'\n",
     ""},
    {"cpu-torch-cuda-headers",
     "/usr/local/cuda/bin/nvcc -std=c++17 -c src/voxelization_cuda.cu -o build/voxelization_cuda.o\n"
     "In file included from /usr/lib/python3/dist-packages/torch/include/c10/cuda/CUDAStream.h:6,\n"
     "/usr/lib/python3/dist-packages/torch/include/c10/cuda/CUDAMacros.h:8:10: fatal error: c10/cuda/impl/cuda_cmake_macros.h: No such "
     "file or directory\ncompilation terminated.\n",
     "cuda_cmake_macros.h"},
    {"pybind11-missing",
     "FAILED: /src/build/temp.linux-x86_64-cpython-311/tinyop.o\n"
     "/usr/lib/python3/dist-packages/torch/include/torch/csrc/Exceptions.h:13:10: fatal error: pybind11/pybind11.h: No such file or directory\n"
     "compilation terminated.\n",
     ""},
    {"cuda-home-unset",
     "Traceback (most recent call last):\n  File \"setup.py\", line 12, in <module>\n"
     "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n",
     ""},
    {"cuda-not-found",
     "RuntimeError: CUDA was not found on the system, please set the CUDA_HOME or the CUDA_PATH environment variable or add NVCC to "
     "your system PATH. The extension compilation will fail.\n",
     ""},
    {"thc-removed",
     "/src/mmdet3d/ops/iou3d/src/iou3d.cpp:5:10: fatal error: THC/THC.h: No such file or directory\n    5 | #include <THC/THC.h>\n",
     "THC/THC.h"},
    {"at-check-removed",
     "/src/ops/nms/src/nms_cpu.cpp:12:3: error: 'AT_CHECK' was not declared in this scope; did you mean 'TORCH_CHECK'?\n", ""},
    {"cusparse-missing",
     "/src/ops/sparse/sparse_mm.cu(41): error: 'cusparseStatus_t' was not declared in this scope\n", ""},
    {"python-h-missing",
     "x86_64-linux-gnu-gcc -c tinyop.cpp\ntinyop.cpp:1:10: fatal error: Python.h: No such file or directory\ncompilation terminated.\n", ""},
    {"cxx17-required",
     "/usr/local/cuda-13.0/include/cccl/thrust/detail/config/cpp_dialect.h:78:6: error: #error Thrust requires at least C++17. "
     "Define CCCL_IGNORE_DEPRECATED_CPP_DIALECT to suppress this message.\n",
     "Thrust"},
    {"std-function-parameter-packs",
     "/usr/include/c++/11/bits/std_function.h:435:145: error: parameter packs not expanded with '...':\n", ""},
    {"cc1plus-killed", "c++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\n", ""},
    {"ninja-missing",
     "UserWarning: Attempted to use ninja as the BuildExtension backend but we could not find ninja.. Falling back to using the slow "
     "distutils backend.\n",
     ""},
    {"setuptools-too-old-for-torch", "ValueError: setuptools>=49.4.0 is required\n", ""},
    {"pkg-resources-packaging",
     "  File \"/env/lib/python3.8/site-packages/torch/utils/cpp_extension.py\", line 25, in <module>\n"
     "ImportError: cannot import name 'packaging' from 'pkg_resources' (/env/lib/python3.8/site-packages/pkg_resources/__init__.py)\n",
     ""},
    {"undefined-symbol-torch",
     "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
     "ImportError: /src/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol: "
     "_ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12MemoryFormatE\n",
     "_ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12MemoryFormatE"},
    {"glibcxx-missing",
     "ImportError: /env/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by /src/ops/_ext.so)\n", "GLIBCXX_3.4.30"},
    {"numpy-abi",
     "RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xe\n"
     "ImportError: numpy.core.multiarray failed to import\n",
     ""},
    {"illegal-instruction", "$ python -c 'import torch'\nIllegal instruction (core dumped)\n", ""},
    {"no-kernel-image",
     "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
     "CUDA kernel errors might be asynchronously reported at some other API call\n",
     ""},
    {"invalid-device-function", "RuntimeError: CUDA error: invalid device function\n", ""},
    {"numba-nvvm-ir",
     "numba.cuda.cudadrv.error.NvvmError: Failed to compile\n\n<unnamed> (81, 19): parse expected comma after load's type\n"
     "NVVM_ERROR_COMPILATION\n",
     ""},
    {"numba-numpy-dtype", "TypeError: expected dtype object, got 'numpy.dtype[float64]'\n", ""},
    {"yapf-verify",
     "  File \"/env/lib/python3.8/site-packages/mmcv/utils/config.py\", line 508, in pretty_text\n"
     "    text, _ = FormatCode(text, style_config=yapf_style, verify=True)\n"
     "TypeError: FormatCode() got an unexpected keyword argument 'verify'\n",
     ""},
    {"distutils-version",
     "    LooseVersion = distutils.version.LooseVersion\nAttributeError: module 'distutils' has no attribute 'version'\n", ""},
};

}  // namespace

TEST_CASE("each known failure is recognised in a log that shows it, with cause, fix and source") {
    const auto& k = builtin_knowledge();
    for (const auto& c : kCases) {
        CAPTURE(c.id);
        auto found = install::explain_log(c.log, k);
        REQUIRE_FALSE(found.empty());
        CHECK(found.front().id == c.id);
        CHECK_FALSE(found.front().fix.empty());
        CHECK_FALSE(found.front().source.empty());
        CHECK(found.front().cause.find("{1}") == std::string::npos);
        if (*c.cause_has) CHECK(found.front().cause.find(c.cause_has) != std::string::npos);
    }
}

TEST_CASE("every build_failures row of the knowledge base has a log in these tests, and unique ids") {
    std::set<std::string> tested, ids;
    for (const auto& c : kCases) tested.insert(c.id);
    for (const auto& row : builtin_knowledge().build_failures) {
        CAPTURE(row.id);
        CHECK(ids.insert(row.id).second);
        CHECK(tested.count(row.id) == 1);
    }
    CHECK(ids.size() == tested.size());
}

TEST_CASE("the mismatch explanation names both CUDA versions, the fix names torch's") {
    auto found = install::explain_log(
        "RuntimeError:\nThe detected CUDA version (13.0) mismatches the version that was used to compile\nPyTorch (11.1). Please make sure to use the same CUDA versions.\n",
        builtin_knowledge());
    REQUIRE(found.size() == 1);
    CHECK(found[0].cause.find("nvcc is CUDA 13.0 but torch was built with CUDA 11.1") != std::string::npos);
    CHECK(found[0].fix.find("/usr/local/cuda-11.1") != std::string::npos);
}

TEST_CASE("several known failures in one log are reported in log order") {
    std::string log =
        "UserWarning: Attempted to use ninja as the BuildExtension backend but we could not find ninja.. Falling back\n"
        "/src/a.cpp:3:10: fatal error: THC/THC.h: No such file or directory\n";
    auto found = install::explain_log(log, builtin_knowledge());
    REQUIRE(found.size() == 2);
    CHECK(found[0].id == "ninja-missing");
    CHECK(found[1].id == "thc-removed");
    CHECK(found[1].line == "/src/a.cpp:3:10: fatal error: THC/THC.h: No such file or directory");
}

TEST_CASE("an unknown failure: the first compiler error below ninja's FAILED line, not the command") {
    std::string log =
        "[1/2] c++ -c /src/op.cpp -o build/op.o\n"
        "FAILED: build/op.o\n"
        "c++ -MMD -c /src/op.cpp -o build/op.o -std=c++14\n"
        "/src/op.cpp:7:5: error: 'frobnicate' was not declared in this scope\n"
        "/src/op.cpp:9:1: error: expected ';' before '}' token\n"
        "ninja: build stopped: subcommand failed.\n"
        "Traceback (most recent call last):\n  File \"setup.py\", line 3, in <module>\n"
        "RuntimeError: Error compiling objects for extension\n";
    CHECK(install::explain_log(log, builtin_knowledge()).empty());
    CHECK(install::first_error_line(log) == "/src/op.cpp:7:5: error: 'frobnicate' was not declared in this scope");
}

TEST_CASE("an unknown Python failure: the traceback's last exception line") {
    std::string log =
        "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n  File \"/src/pkg/__init__.py\", line 2\n"
        "ModuleNotFoundError: No module named 'spconv'\n";
    CHECK(install::first_error_line(log) == "ModuleNotFoundError: No module named 'spconv'");
    CHECK(install::first_error_line("all good\n").empty());
}

TEST_CASE("a user knowledge row with a broken pattern is an input error naming the row") {
    auto k = knowledge::load_texts({{"mine.yaml", "build_failures:\n- id: broken\n  where: build\n  match: \"(unclosed\"\n"
                                                  "  cause: c\n  fix: f\n  source: my notes\n"}});
    CHECK_THROWS_WITH_AS(install::explain_log("anything", k), doctest::Contains("broken"), InputError);
}
