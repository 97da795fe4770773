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
    std::vector<std::string> deactivate_scripts;              // etc/conda/deactivate.d, in the order conda sources them
    std::vector<std::string> notes;                           // what could not be honoured, in words
};

// `parent` is the calling process's environment. `lock` may be null (then only the prefix's own
// variables are set). InputError when `prefix` is not an environment (no bin/, conda-meta/ or
// pyvenv.cfg).
RunEnvironment run_environment(const std::string& prefix, const Lock* lock, const std::map<std::string, std::string>& parent);

// The process environment as a map (for `parent`).
std::map<std::string, std::string> current_environment();

// The environment as it was before a shell-hook activation (`current` with the variables the hook
// saved put back, and its own bookkeeping removed): what a second env is computed from, so
// nothing of the first (its bin or its toolkit on PATH) carries over. `current` when none is active.
std::map<std::string, std::string> before_activation(std::map<std::string, std::string> current);

enum class Shell { posix, bash, zsh, fish };

// "bash", "zsh", "fish", "posix" (sh, dash); InputError naming the ones there are otherwise.
Shell parse_shell(const std::string& name);

// Shell code that does the same in the calling shell: `eval "$(envlock shell-hook)"`, or
// `envlock shell-hook --shell fish | source`. It first runs the deactivate of an env activated
// before (so a second env never keeps the first one's CUDA_HOME or TORCH_CUDA_ARCH_LIST), saves
// every variable it changes, and defines `envlock_deactivate`, which restores them (PATH,
// CUDA_HOME, TORCH_CUDA_ARCH_LIST, CUDAARCHS, CC/CXX …), sources the env's deactivate.d scripts
// (posix shells) and removes itself.
std::string shell_hook(const RunEnvironment& env, Shell shell = Shell::posix);

// The variables as pixi's `shell-hook --json` gives them: {"environment-variables": {NAME: value},
// "unset": [...], "activate-scripts": [...], "prefix": ...}.
std::string shell_hook_json(const RunEnvironment& env);

// Replaces the process with `argv` run in `env` (through bash when activate.d scripts must be
// sourced first). Returns only on failure, after saying why on stderr: 127 when the command is not found, 126 when it cannot run.
int exec_in_environment(const RunEnvironment& env, const std::map<std::string, std::string>& parent,
                        const std::vector<std::string>& argv);

// Whether the prefix holds exactly what `lock` installs (its recorded packages, by package_id,
// and a venv of the lock's Python): what `run` checks before it runs anything, as uv run syncs.
bool environment_current(const std::string& prefix, const Lock& lock);

// A command that must come from the environment itself (pip, pip3, pip3.X, python, python3 …)
// and that the prefix's bin/ does not have: run would otherwise fall through to the host's,
// which installs into the wrong Python. The message says so and how to get one; "" otherwise.
std::string missing_in_environment(const RunEnvironment& env, const std::vector<std::string>& argv);

// TORCH_CUDA_ARCH_LIST as CMake's CUDAARCHS (which seeds CMAKE_CUDA_ARCHITECTURES), for builds
// that do not go through torch: "8.6;9.0+PTX" -> "86-real;90" (X.Y is SASS only, XY-real; X.Y+PTX
// is SASS and PTX, XY). InputError on an entry that is not X.Y[+PTX].
std::string cmake_cuda_archs(const std::string& torch_cuda_arch_list);

// The CUDA toolkit directory the lock's toolchain names, found on this machine: the prefix for a
// conda cuda-nvcc, else the locked system path, else a /usr/local/cuda-X.Y of the same release.
// "" when the lock has no nvcc or none is here.
std::string locked_cuda_home(const std::string& prefix, const Lock& lock);
// The host C compiler of a lock's "system:" toolchain: the path it names, else (a lock keeps no
// host paths) gcc-<major> or gcc on `path_env` whose version has the locked major. "" when none.
std::string locked_system_cc(const Lock& lock, const std::string& path_env);
// The CUDA home a locked PyPI nvcc wheel installed into the prefix (<site-packages>/nvidia/cu13
// for `pypi:nvidia-cuda-nvcc` 13.x), whether or not its bin/nvcc is there; "" when the lock's
// nvcc does not come from PyPI or the prefix has no site-packages.
std::string pypi_nvcc_home_in(const std::string& prefix, const Lock& lock);

}  // namespace envlock::install
