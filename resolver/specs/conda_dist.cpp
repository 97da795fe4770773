#include "resolver/specs/conda_dist.hpp"

#include <map>

#include "resolver/specs/pep508.hpp"

namespace envlock::conda {

std::string python_dist_name(const std::string& conda_name) {
    // conda names whose Python distribution has another name on PyPI.
    static const std::map<std::string, std::string> renamed = {
        {"pytorch", "torch"}, {"pytorch-cpu", "torch"}, {"pytorch-gpu", "torch"},
        {"py-opencv", "opencv-python"}, {"pytorch-lightning", "pytorch-lightning"},
    };
    if (auto it = renamed.find(conda_name); it != renamed.end()) return it->second;
    // Not Python distributions: runtimes, compilers, metapackages, virtual packages.
    if (conda_name.rfind("__", 0) == 0 || conda_name.rfind("lib", 0) == 0 || conda_name.rfind("cuda", 0) == 0 ||
        conda_name == "numpy-base" || conda_name == "python" || conda_name == "python_abi" || conda_name == "mkl" ||
        conda_name == "blas" || conda_name.rfind("gcc", 0) == 0 || conda_name.rfind("gxx", 0) == 0 ||
        conda_name.rfind("_", 0) == 0 || conda_name == "pytorch-mutex" || conda_name == "pytorch-cuda")
        return "";
    return pep508::normalize_name(conda_name);
}

}  // namespace envlock::conda
