#pragma once
// Cross-ecosystem identity: the Python distribution a conda package installs, by name. The
// solver lets one provider of a distribution in (conda's pytorch is PyPI's torch) and doctor
// reads a conda package as providing it, so both answer from this one table.
#include <string>

namespace envlock::conda {

// "pytorch" -> "torch", "py-opencv" -> "opencv-python", "typing_extensions" -> "typing-extensions"
// (PEP 503); "" for packages that are no Python distribution (runtimes, compilers, CUDA,
// metapackages, virtual packages, numpy-base whose files conda's numpy stands for).
std::string python_dist_name(const std::string& conda_name);

}  // namespace envlock::conda
