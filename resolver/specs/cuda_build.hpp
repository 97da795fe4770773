#pragma once
// What CUDA a published artifact was built for, read from how the ecosystems name builds:
// a wheel's local version (+cu111), a conda build string (py3.8_cuda11.1_cudnn8.0.5_0,
// py38_cu111), or an openmmlab find-links page (…/mmcv/dist/cu111/torch1.9.0/index.html).
#include <optional>
#include <string>
#include <vector>

#include "resolver/specs/record.hpp"

namespace envlock {

struct CudaBuild {
    std::string runtime;        // "11.1"
    std::string variant;        // "cu111", the name torch's arch tables use
    std::string torch_series;   // for builds made against one torch ("1.9"), else ""
};

// "cu111" -> "11.1", "cu92" -> "9.2", "cu128" -> "12.8"; nullopt when not a cuXYZ tag.
std::optional<std::string> cuda_runtime_of_variant(const std::string& variant);
// "11.1" -> "cu111"
std::string variant_of_cuda_runtime(const std::string& runtime);

// `pypi_default_variant` is what a plain PyPI torch wheel of that release was built with
// ("cu102" for torch 1.9.1), from the knowledge base; "" when unknown or CPU.
std::optional<CudaBuild> cuda_build_of(const IndexRecord& record, const std::string& pypi_default_variant = "");

// The CUDA a plain PyPI torch wheel names in its own requirements ("cu128" for
// `nvidia-cuda-runtime-cu12==12.8.90`, "cu132" for `cuda-toolkit[cudart,…]==13.2.2`): the wheel's
// METADATA is the primary source where the knowledge base has no row. "" when it pins none.
std::string cuda_variant_pinned_by(const std::vector<std::string>& requires_dist);

// A PyPI project name that stands for a CUDA-variant choice, as install docs write one
// ("spconv-cuxxx", "cumm-cu1xx", "cupy-cudaxxx"): the solver picks the concrete project
// ("spconv-cu111") for the CUDA it locks. `stem` is the name up to the variant's digits
// ("spconv-cu"), `digits` the digits the doc fixed ("" for cuxxx, "1" for cu1xx, "11" for cu11x).
struct CudaPlaceholder {
    std::string stem;
    std::string digits;
};
// nullopt for a name that is no such placeholder (cupy-cuda11x is a real project: its "x" follows
// two digits of a CUDA major, and it is spelled so on PyPI; only runs of x after cu/cuda with at
// most one fixed digit before them, or cu11x/cu12x after "cu", count).
std::optional<CudaPlaceholder> cuda_placeholder(const std::string& normalized_name);
// The CUDA runtime of a concrete project that fills `p` ("spconv-cu113" -> "11.3"), else nullopt.
std::optional<std::string> fills_cuda_placeholder(const CudaPlaceholder& p, const std::string& normalized_name);

}  // namespace envlock
