#include "tests/mirror/git_repo.hpp"

#include <spawn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "resolver/specs/errors.hpp"
#include "tests/mirror/files.hpp"

extern char** environ;

namespace envlock::mirror {
namespace {

std::string join_lines(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

// Runs git in `dir` with a clean, fixed identity and date; throws on failure.
void git(const std::string& dir, const std::vector<std::string>& args, const std::string& date) {
    std::vector<std::string> argv = {"git", "-C", dir, "-c", "user.name=envlock mirror", "-c", "user.email=mirror@envlock.invalid",
                                     "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", "-c", "core.autocrlf=false",
                                     "-c", "init.defaultBranch=master"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env = {"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date, "GIT_CONFIG_NOSYSTEM=1",
                                    "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + dir, "LC_ALL=C"};
    for (char** e = environ; *e; ++e) {
        std::string s = *e;
        if (s.rfind("PATH=", 0) == 0) env.push_back(s);
    }
    std::vector<char*> cargv, cenv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "git", &actions, nullptr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw EnvironmentError("cannot run git (needed to build the mirror's source repository)");
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw EnvironmentError("git " + args.front() + " failed in " + dir);
}

std::string setup_py() {
    // Mirrors mmdetection3d v0.17's setup.py where it matters to an installer/verifier:
    // CUDAExtension when CUDA is available or FORCE_CUDA=1, CppExtension otherwise, the
    // WITH_CUDA macro and the -D__CUDA_NO_HALF_* nvcc flags (cases/mmdetection3d-v0.17.yaml).
    return R"PY(import os
from setuptools import find_packages, setup

import torch
try:
    from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension
except ImportError:
    # The demo mirror's torch is a stand-in with no cpp_extension: the ops cannot be built
    # against it, so the package installs without them (a real torch builds them).
    print('mmdet3d: torch {} has no cpp_extension (a stand-in?): installing without the ops'.format(torch.__version__))
    BuildExtension = None


def readme():
    with open('README.md', encoding='utf-8') as f:
        return f.read()


def get_version():
    scope = {}
    with open('mmdet3d/version.py') as f:
        exec(compile(f.read(), 'mmdet3d/version.py', 'exec'), scope)
    return scope['__version__']


def parse_requirements(fname='requirements/runtime.txt'):
    with open(fname) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith('#')]


def make_cuda_ext(name, module, sources, sources_cuda=[], extra_args=[]):
    define_macros = []
    extra_compile_args = {'cxx': [] + extra_args}
    if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
        define_macros += [('WITH_CUDA', None)]
        extension = CUDAExtension
        extra_compile_args['nvcc'] = extra_args + [
            '-D__CUDA_NO_HALF_OPERATORS__',
            '-D__CUDA_NO_HALF_CONVERSIONS__',
            '-D__CUDA_NO_HALF2_OPERATORS__',
        ]
        sources += sources_cuda
    else:
        print('Compiling {} without CUDA'.format(name))
        extension = CppExtension
    return extension(
        name='{}.{}'.format(module, name),
        sources=[os.path.join(*module.split('.'), p) for p in sources],
        define_macros=define_macros,
        extra_compile_args=extra_compile_args)


if __name__ == '__main__':
    setup(
        name='mmdet3d',
        version=get_version(),
        description='OpenMMLab 3D detection toolbox (envlock mirror stand-in)',
        long_description=readme(),
        long_description_content_type='text/markdown',
        packages=find_packages(exclude=('configs', 'tools', 'demo')),
        install_requires=parse_requirements('requirements/runtime.txt'),
        ext_modules=[
            make_cuda_ext(
                name='voxel_layer',
                module='mmdet3d.ops.voxel',
                sources=['src/voxelization.cpp'],
                sources_cuda=['src/voxelization_cuda.cu']),
        ] if BuildExtension else [],
        cmdclass={'build_ext': BuildExtension} if BuildExtension else {},
        zip_safe=False)
)PY";
}

std::string init_py(const Mmdet3dRelease& r) {
    // The version gate as mmdet3d/__init__.py writes it; bounds and message from the facts.
    return "import mmcv\n\nfrom .version import __version__, short_version\n\n\n"
           "def digit_version(version_str):\n"
           "    digit_version = []\n"
           "    for x in version_str.split('.'):\n"
           "        if x.isdigit():\n"
           "            digit_version.append(int(x))\n"
           "        elif x.find('rc') != -1:\n"
           "            patch_version = x.split('rc')\n"
           "            digit_version.append(int(patch_version[0]) - 1)\n"
           "            digit_version.append(int(patch_version[1]))\n"
           "    return digit_version\n\n\n"
           "mmcv_minimum_version = '" + r.mmcv_min + "'\n"
           "mmcv_maximum_version = '" + r.mmcv_max + "'\n"
           "mmcv_version = digit_version(mmcv.__version__)\n\n"
           "assert (mmcv_version >= digit_version(mmcv_minimum_version)\n"
           "        and mmcv_version <= digit_version(mmcv_maximum_version)), \\\n"
           "    f'MMCV=={mmcv.__version__} is used but incompatible. ' \\\n"
           "    f'Please install mmcv>={mmcv_minimum_version}, <={mmcv_maximum_version}.'\n\n"
           "mmdet_minimum_version = '" + r.mmdet_min + "'\n"
           "mmdet_maximum_version = '" + r.mmdet_max + "'\n"
           "mmseg_minimum_version = '" + r.mmseg_min + "'\n"
           "mmseg_maximum_version = '" + r.mmseg_max + "'\n\n"
           "__all__ = ['__version__', 'short_version']\n";
}

// A small self-written kernel: each point computes the index of the voxel it falls in.
const char* kVoxelCuda = R"CU(// envlock mirror: a tiny voxelization kernel (self-written, not mmdet3d's code).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

__global__ void point_to_voxel_kernel(const float* points, int* voxel_index, int num_points, int num_features,
                                      float voxel_size, float range_min, int grid) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= num_points) return;
  int coord[3];
  for (int d = 0; d < 3; ++d) {
    int c = static_cast<int>(floorf((points[i * num_features + d] - range_min) / voxel_size));
    if (c < 0 || c >= grid) {
      voxel_index[i] = -1;
      return;
    }
    coord[d] = c;
  }
  voxel_index[i] = (coord[2] * grid + coord[1]) * grid + coord[0];
}

at::Tensor point_to_voxel_cuda(const at::Tensor& points, double voxel_size, double range_min, int64_t grid) {
  auto pts = points.contiguous();
  auto out = at::empty({pts.size(0)}, pts.options().dtype(at::kInt));
  int threads = 256;
  int blocks = static_cast<int>((pts.size(0) + threads - 1) / threads);
  if (pts.size(0) > 0) {
    point_to_voxel_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        pts.data_ptr<float>(), out.data_ptr<int>(), static_cast<int>(pts.size(0)), static_cast<int>(pts.size(1)),
        static_cast<float>(voxel_size), static_cast<float>(range_min), static_cast<int>(grid));
  }
  return out;
}
)CU";

const char* kVoxelCpp = R"CPP(// envlock mirror: bindings for the voxel kernel, with a CPU fallback.
#include <torch/extension.h>

#include <cmath>

#ifdef WITH_CUDA
at::Tensor point_to_voxel_cuda(const at::Tensor& points, double voxel_size, double range_min, int64_t grid);
#endif

at::Tensor point_to_voxel_cpu(const at::Tensor& points, double voxel_size, double range_min, int64_t grid) {
  auto pts = points.contiguous();
  auto out = at::empty({pts.size(0)}, pts.options().dtype(at::kInt));
  auto p = pts.accessor<float, 2>();
  auto o = out.accessor<int, 1>();
  for (int64_t i = 0; i < pts.size(0); ++i) {
    int64_t index = 0;
    bool inside = true;
    for (int d = 2; d >= 0; --d) {
      int64_t c = static_cast<int64_t>(std::floor((p[i][d] - range_min) / voxel_size));
      if (c < 0 || c >= grid) inside = false;
      index = index * grid + c;
    }
    o[i] = inside ? static_cast<int>(index) : -1;
  }
  return out;
}

at::Tensor point_to_voxel(const at::Tensor& points, double voxel_size, double range_min, int64_t grid) {
#ifdef WITH_CUDA
  if (points.device().is_cuda()) return point_to_voxel_cuda(points, voxel_size, range_min, grid);
#endif
  return point_to_voxel_cpu(points, voxel_size, range_min, grid);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("point_to_voxel", &point_to_voxel, "index of the voxel each point falls in");
}
)CPP";

}  // namespace

std::vector<std::pair<std::string, std::string>> mmdet3d_tree(const Mmdet3dRelease& r) {
    return {
        {"README.md", "# mmdetection3d (envlock mirror stand-in)\n\nA tiny mmdet3d-like package at version " + r.version +
                          ", generated by envlock-mirror.\nInstall: `pip install -v -e .` (FORCE_CUDA=1 builds the CUDA op).\n"},
        {"setup.py", setup_py()},
        {"requirements.txt", "-r requirements/build.txt\n-r requirements/optional.txt\n-r requirements/runtime.txt\n-r requirements/tests.txt\n"},
        {"requirements/build.txt", ""},
        {"requirements/mminstall.txt", join_lines(r.mminstall)},
        {"requirements/optional.txt", "open3d\nspconv\nwaymo-open-dataset-tf-2-1-0==1.2.0\n"},
        {"requirements/runtime.txt", join_lines(r.runtime)},
        {"requirements/tests.txt", "flake8\nisort\npytest\nyapf\n"},
        {"mmdet3d/__init__.py", init_py(r)},
        {"mmdet3d/version.py", "__version__ = '" + r.version + "'\nshort_version = __version__\n"},
        {"mmdet3d/ops/__init__.py", "from .voxel import point_to_voxel\n\n__all__ = ['point_to_voxel']\n"},
        {"mmdet3d/ops/voxel/__init__.py", "from .voxel_layer import point_to_voxel\n\n__all__ = ['point_to_voxel']\n"},
        {"mmdet3d/ops/voxel/src/voxelization.cpp", kVoxelCpp},
        {"mmdet3d/ops/voxel/src/voxelization_cuda.cu", kVoxelCuda},
        {"SOURCE", r.source + "\n"},
    };
}

std::vector<std::string> make_mmdet3d_repo(const std::string& dir, const std::vector<Mmdet3dRelease>& releases) {
    namespace fs = std::filesystem;
    fs::create_directories(dir);
    const std::string epoch = "1633651200 +0000";  // 2021-10-08, the v0.17.1 tag date (cases/mmdetection3d-v0.17.yaml)
    git(dir, {"init", "-q"}, epoch);
    std::vector<std::string> tags;
    long long t = 1633651200 - 86400 * 30;
    for (const auto& r : releases) {
        t += 86400 * 7;
        std::string date = std::to_string(t) + " +0000";
        for (const auto& [path, content] : mmdet3d_tree(r)) write_file(dir, path, content);
        git(dir, {"add", "-A"}, date);
        git(dir, {"commit", "-q", "-m", "Bump version to v" + r.version}, date);
        git(dir, {"tag", "v" + r.version}, date);
        tags.push_back("v" + r.version);
    }
    return tags;
}

namespace {

struct SourceRepo {
    std::string dir;          // folder under git/
    std::string upstream;     // the URL the recipes name
    std::string package_dir;  // where setup.py sits ("" = the root)
    std::string name;         // setup(name=...)
    std::vector<std::string> requires_dist;
    std::string tag;          // "" = none
    std::string source;
};

// The version a stand-in builds as: its tag's ("v0.6" -> "0.6"), as the real project's setup.py
// says at that tag; untagged ones 0.0.0.
std::string stand_in_version(const SourceRepo& r) {
    if (r.tag.empty()) return "0.0.0";
    return r.tag[0] == 'v' || r.tag[0] == 'V' ? r.tag.substr(1) : r.tag;
}

std::string stand_in_setup_py(const SourceRepo& r) {
    std::string reqs;
    for (const auto& q : r.requires_dist) reqs += "    \"" + q + "\",\n";
    return "# envlock mirror stand-in: a small package in place of " + r.source + "\n"
           "from setuptools import find_packages, setup\n\n"
           "requirements = [\n" + reqs + "]\n\n"
           "setup(\n    name=\"" + r.name + "\",\n    version=\"" + stand_in_version(r) + "\",\n    packages=find_packages(),\n"
           "    install_requires=requirements,\n)\n";
}

// The git sources the built-in recipes name besides mmdetection3d. Requirements are each
// project's install_requires trimmed to what the mirror's PyPI table carries (said in SOURCE).
const std::vector<SourceRepo>& source_repos() {
    static const std::vector<SourceRepo> repos = {
        {"detectron2", "https://github.com/facebookresearch/detectron2", "", "detectron2",
         {"Pillow>=7.1", "matplotlib", "pycocotools>=2.0.2", "termcolor>=1.1", "yacs>=0.1.8", "tabulate", "cloudpickle",
          "tqdm>4.29.0", "tensorboard", "fvcore>=0.1.5,<0.1.6", "iopath>=0.1.7,<0.1.10", "future", "pydot", "omegaconf>=2.1",
          "hydra-core>=1.1", "black==21.4b2", "dataclasses; python_version<'3.7'"},
         "v0.6", "facebookresearch/detectron2 v0.6 setup.py install_requires (cases/detectron2-v0.6.yaml)"},
        {"panopticapi", "https://github.com/cocodataset/panopticapi", "", "panopticapi", {"numpy", "Pillow"}, "", "cocodataset/panopticapi (stand-in depends)"},
        {"cityscapesScripts", "https://github.com/mcordts/cityscapesScripts", "", "cityscapesScripts",
         {"numpy", "matplotlib", "pillow", "appdirs", "pyquaternion", "coloredlogs", "tqdm", "requests"}, "",
         "mcordts/cityscapesScripts setup.py install_requires, trimmed"},
        {"RADIal", "https://github.com/valeoai/RADIal", "DBReader", "dbreader", {"numpy", "opencv-python"}, "", "valeoai/RADIal DBReader (stand-in depends)"},
        {"pypcd", "https://github.com/klintan/pypcd", "", "pypcd", {"numpy", "python-lzf"}, "", "klintan/pypcd (stand-in depends)"},
    };
    return repos;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> git_upstreams() {
    std::vector<std::pair<std::string, std::string>> out = {{"https://github.com/open-mmlab/mmdetection3d", "mmdetection3d"}};
    for (const auto& r : source_repos()) out.emplace_back(r.upstream, r.dir);
    return out;
}

std::vector<std::string> make_source_repos(const std::string& git_root) {
    namespace fs = std::filesystem;
    std::vector<std::string> made;
    const std::string date = "1633651200 +0000";
    for (const auto& r : source_repos()) {
        std::string dir = git_root + "/" + r.dir;
        fs::create_directories(dir);
        git(dir, {"init", "-q"}, date);
        std::string pkg = r.package_dir.empty() ? "" : r.package_dir + "/";
        std::string module = r.name;
        for (auto& c : module)
            if (c == '-') c = '_';
        write_file(dir, "README.md", "# " + r.dir + " (envlock mirror stand-in)\n");
        write_file(dir, pkg + "setup.py", stand_in_setup_py(r));
        write_file(dir, pkg + module + "/__init__.py", "__version__ = '" + stand_in_version(r) + "'\n");
        write_file(dir, "SOURCE", r.source + "\n");
        git(dir, {"add", "-A"}, date);
        git(dir, {"commit", "-q", "-m", "envlock mirror stand-in of " + r.dir}, date);
        if (!r.tag.empty()) git(dir, {"tag", r.tag}, date);
        made.push_back(r.dir);
    }
    return made;
}

void make_boxops_repo(const std::string& dir) {
    std::filesystem::create_directories(dir);
    const std::string date = "1633651200 +0000";
    git(dir, {"init", "-q"}, date);
    for (const auto& [path, content] : boxops_tree()) write_file(dir, path, content);
    git(dir, {"add", "-A"}, date);
    git(dir, {"commit", "-q", "-m", "boxops 0.1.0: CUDA NMS without torch"}, date);
    git(dir, {"tag", "v0.1.0"}, date);
}

}  // namespace envlock::mirror
