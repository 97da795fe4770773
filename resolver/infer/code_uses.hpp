#pragma once
// What a checkout's code does that advisories depend on (their `needs:`), read at grep level
// from its Python files and configs: SyncBatchNorm, numpy's removed aliases, tensorboard through
// torch, numba.cuda kernels, CUDA/C++ extensions. The names are the spec's `uses` entries.
#include <map>
#include <string>

namespace envlock {

// use -> where it was first seen ("tools/train.py:12"), e.g. "code-uses:torch.nn.SyncBatchNorm",
// "code-uses:numpy.float-aliases", "code-uses:torch.utils.tensorboard", "numba-cuda",
// "cuda-extensions". Comment lines do not count. Skips .git, build/, dist/, site-packages and
// hidden directories; reads at most `max_files` files (*.py, *.yaml, *.yml, *.cfg).
// InputError when `dir` is not a directory.
std::map<std::string, std::string> code_uses(const std::string& dir, std::size_t max_files = 20000);

}  // namespace envlock
