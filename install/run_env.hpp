#pragma once
// The environment a command runs in inside an installed prefix (`envlock run`, `envlock
// shell-hook`): PATH, CONDA_PREFIX or VIRTUAL_ENV, the locked CUDA toolkit and host compiler,
// TORCH_CUDA_ARCH_LIST (and CUDAARCHS), and the packages' etc/conda/activate.d scripts.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "resolver/lock/lock.hpp"

namespace envlock::install {

struct RunEnvironment {
    std::string prefix;                                       // absolute
    std::vector<std::pair<std::string, std::string>> set;     // in order
    std::vector<std::string> unset;
    std::vector<std::string> activate_scripts;                // absolute, in the order conda sources them
    std::vector<std::string> notes;                           // what could not be honoured, in words
};

// `parent` is the calling process's environment. `lock` may be null (then only the prefix's own
// variables are set). InputError when `prefix` is not an environment (no bin/, conda-meta/ or
// pyvenv.cfg).
RunEnvironment run_environment(const std::string& prefix, const Lock* lock, const std::map<std::string, std::string>& parent);

// The process environment as a map (for `parent`).
std::map<std::string, std::string> current_environment();

// POSIX shell code that does the same in the calling shell: `eval "$(envlock shell-hook)"`.
std::string shell_hook(const RunEnvironment& env);

// Replaces the process with `argv` run in `env` (through bash when activate.d scripts must be
// sourced first). Returns only on failure, after saying why on stderr: 127 when the command is not found, 126 when it cannot run.
int exec_in_environment(const RunEnvironment& env, const std::map<std::string, std::string>& parent,
                        const std::vector<std::string>& argv);

// TORCH_CUDA_ARCH_LIST as CMake's CUDAARCHS (which seeds CMAKE_CUDA_ARCHITECTURES), for builds
// that do not go through torch: "8.6;9.0+PTX" -> "86-real;90" (X.Y is SASS only, XY-real; X.Y+PTX
// is SASS and PTX, XY). InputError on an entry that is not X.Y[+PTX].
std::string cmake_cuda_archs(const std::string& torch_cuda_arch_list);

// The CUDA toolkit directory the lock's toolchain names, found on this machine: the prefix for a
// conda cuda-nvcc, else the locked system path, else a /usr/local/cuda-X.Y of the same release.
// "" when the lock has no nvcc or none is here.
std::string locked_cuda_home(const std::string& prefix, const Lock& lock);

}  // namespace envlock::install
