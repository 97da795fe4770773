// The compiled-in copy of the facts the mirror needs when ../shared is absent. Every row
// is copied from the ../shared/facts file named in its source string; it is a subset,
// chosen so the lead's scenarios (BEVFormer, EchoFusion, Mask2Former, GTX 1080 Ti, H100)
// can still be solved offline.
#include "tests/mirror/tables.hpp"

namespace envlock::mirror {
namespace {

constexpr const char* kTorchSrc =
    "facts/torch.yaml (pytorch/pytorch.github.io@04862e37:_get_started/previous-versions.md; "
    "Python ranges from pytorch/vision README and pytorch RELEASE.md), compiled in";
constexpr const char* kMmcvSrc =
    "facts/mmcv.yaml mmcv_full_1x_prebuilt (open-mmlab/mmcv@4c01b026:docs/en/_static/version.json), compiled-in subset";
constexpr const char* kMmcv2Src =
    "facts/mmcv.yaml mmcv_2x_prebuilt (open-mmlab/mmcv@a8073c74:docs/en/_static/version.json), compiled-in subset";
constexpr const char* kNumbaSrc = "facts/python_libs.yaml numba rows (numba/numba setup.py per tag), compiled-in subset";
constexpr const char* kMmdet3dSrc =
    "facts/mmcv.yaml mmdet3d_version_checks (open-mmlab/mmdetection3d@f1107977 v0.17.1, @940e4294 v0.17.3: "
    "requirements/runtime.txt, requirements/mminstall.txt, mmdet3d/__init__.py), compiled in";

TorchRelease torch(const char* t, const char* tv, const char* ta, std::vector<std::string> pip,
                   std::vector<std::string> conda, int py_min, int py_max) {
    return TorchRelease{t, tv, ta, std::move(pip), std::move(conda), py_min, py_max, kTorchSrc};
}

// mmcv-full 1.x versions for the cu111/torch1.9.x row, newest first as version.json lists them.
const std::vector<std::string> kMmcvFullCu111Torch19 = {
    "1.7.1", "1.7.0", "1.6.2", "1.6.1", "1.6.0", "1.5.3", "1.5.2", "1.5.1", "1.5.0", "1.4.8",
    "1.4.7", "1.4.6", "1.4.5", "1.4.4", "1.4.3", "1.4.2", "1.4.1", "1.4.0", "1.3.9", "1.3.18",
    "1.3.17", "1.3.16", "1.3.15", "1.3.14", "1.3.13", "1.3.12", "1.3.11", "1.3.10"};
const std::vector<std::string> kMmcvFullTorch110 = {
    "1.7.1", "1.7.0", "1.6.2", "1.6.1", "1.6.0", "1.5.3", "1.5.2", "1.5.1", "1.5.0", "1.4.8", "1.4.7",
    "1.4.6", "1.4.5", "1.4.4", "1.4.3", "1.4.2", "1.4.1", "1.4.0", "1.3.18", "1.3.17", "1.3.16"};

}  // namespace

Tables builtin_tables() {
    Tables t;
    // Conda CUDA columns follow the real pytorch channel's builds (rattler-pytorch-channel
    // snapshot: 1.9.x has cuda10.2 and cuda11.1 builds), which is what `conda install
    // pytorch==1.9.1 cudatoolkit=11.1 -c pytorch` (EchoFusion) resolves against.
    t.torch = {
        torch("1.8.0", "0.9.0", "0.8.0", {"cpu", "cu102", "cu111"}, {"10.2", "11.1"}, 6, 9),
        torch("1.8.1", "0.9.1", "0.8.1", {"cpu", "cu101", "cu102", "cu111"}, {"10.1", "10.2", "11.1"}, 6, 9),
        torch("1.9.0", "0.10.0", "0.9.0", {"cpu", "cu102", "cu111"}, {"10.2", "11.1"}, 6, 9),
        torch("1.9.1", "0.10.1", "0.9.1", {"cpu", "cu102", "cu111"}, {"10.2", "11.1"}, 6, 9),
        torch("1.10.0", "0.11.0", "0.10.0", {"cpu", "cu102", "cu111"}, {"10.2", "11.1", "11.3"}, 6, 9),
        torch("1.10.1", "0.11.2", "0.10.1", {"cpu", "cu102", "cu111"}, {"10.2", "11.1", "11.3"}, 6, 9),
        torch("1.11.0", "0.12.0", "0.11.0", {"cpu", "cu102", "cu113"}, {"10.2", "11.3"}, 7, 10),
        torch("1.12.0", "0.13.0", "0.12.0", {"cpu", "cu102", "cu113", "cu116"}, {"10.2", "11.3", "11.6"}, 7, 10),
        torch("1.12.1", "0.13.1", "0.12.1", {"cpu", "cu102", "cu113", "cu116"}, {"10.2", "11.3", "11.6"}, 7, 10),
        torch("1.13.0", "0.14.0", "0.13.0", {"cpu", "cu116", "cu117"}, {"11.6", "11.7"}, 7, 10),
        torch("1.13.1", "0.14.1", "0.13.1", {"cpu", "cu116", "cu117"}, {"11.6", "11.7"}, 7, 10),
        torch("2.0.0", "0.15.1", "2.0.1", {"cpu", "cu117", "cu118"}, {"11.7", "11.8"}, 8, 11),
        torch("2.0.1", "0.15.2", "2.0.2", {"cpu", "cu117", "cu118"}, {"11.7", "11.8"}, 8, 11),
        // torchaudio for 2.1-2.4.0 is "not retrieved" in the facts; the real index pairs
        // torchaudio X.Y.Z with torch X.Y.Z from 2.1 on (facts: torch.yaml unverified list).
        torch("2.1.0", "0.16.0", "2.1.0", {"cpu", "cu118", "cu121"}, {"11.8", "12.1"}, 8, 11),
        torch("2.2.0", "0.17.0", "2.2.0", {"cpu", "cu118", "cu121"}, {"11.8", "12.1"}, 8, 11),
        torch("2.3.0", "0.18.0", "2.3.0", {"cpu", "cu118", "cu121"}, {"11.8", "12.1"}, 8, 11),
        torch("2.4.0", "0.19.0", "2.4.0", {"cpu", "cu118", "cu121", "cu124"}, {"11.8", "12.1", "12.4"}, 8, 12),
        torch("2.4.1", "0.19.1", "2.4.1", {"cpu", "cu118", "cu121", "cu124"}, {"11.8", "12.1", "12.4"}, 8, 12),
        torch("2.5.0", "0.20.0", "2.5.0", {"cpu", "cu118", "cu121", "cu124"}, {"11.8", "12.1", "12.4"}, 9, 12),
        torch("2.5.1", "0.20.1", "2.5.1", {"cpu", "cu118", "cu121", "cu124"}, {"11.8", "12.1", "12.4"}, 9, 12),
        torch("2.6.0", "0.21.0", "2.6.0", {"cpu", "cu118", "cu124", "cu126"}, {}, 9, 13),
        torch("2.7.0", "0.22.0", "2.7.0", {"cpu", "cu118", "cu126", "cu128"}, {}, 9, 13),
        torch("2.7.1", "0.22.1", "2.7.1", {"cpu", "cu118", "cu126", "cu128"}, {}, 9, 13),
    };

    t.mmcv = {
        {"mmcv-full", "11.1", "1.9", kMmcvFullCu111Torch19, kMmcvSrc},
        {"mmcv-full", "10.2", "1.9", kMmcvFullCu111Torch19, kMmcvSrc},
        {"mmcv-full", "cpu", "1.9", kMmcvFullCu111Torch19, kMmcvSrc},
        {"mmcv-full", "11.1", "1.10", kMmcvFullTorch110, kMmcvSrc},
        {"mmcv-full", "11.3", "1.10", kMmcvFullTorch110, kMmcvSrc},
        {"mmcv-full", "11.3", "1.11", {"1.7.1", "1.7.0", "1.6.2", "1.6.1", "1.6.0", "1.5.3", "1.5.2", "1.5.1", "1.5.0", "1.4.8", "1.4.7"}, kMmcvSrc},
        {"mmcv-full", "11.6", "1.12", {"1.7.1", "1.7.0", "1.6.2", "1.6.1", "1.6.0"}, kMmcvSrc},
        {"mmcv-full", "11.7", "1.13", {"1.7.1", "1.7.0"}, kMmcvSrc},
        {"mmcv", "11.8", "2.0", {"2.2.0", "2.1.0", "2.0.1", "2.0.0"}, kMmcv2Src},
        {"mmcv", "11.8", "2.1", {"2.2.0", "2.1.0"}, kMmcv2Src},
        {"mmcv", "12.1", "2.1", {"2.2.0", "2.1.0"}, kMmcv2Src},
        {"mmcv", "12.1", "2.4", {"2.2.0"}, kMmcv2Src},
    };

    auto numba = [](const char* n, const char* py, const char* np, const char* llvm) {
        return NumbaRow{n, py, np, llvm, kNumbaSrc};
    };
    t.numba = {
        numba("0.48.0", ">=3.6", ">=1.15", ">=0.31.0dev0,<0.32.0"),
        numba("0.50.1", ">=3.6", ">=1.15", ">=0.33.0.dev0,<0.34"),
        numba("0.53.1", ">=3.6,<3.10", ">=1.15", ">=0.36.0rc1,<0.37"),
        numba("0.54.1", ">=3.7,<3.10", ">=1.17,<1.21", ">=0.37.0rc1,<0.38"),
        numba("0.56.4", ">=3.7,<3.11", ">=1.18,<1.24", ">=0.39.0dev0,<0.40"),
        numba("0.57.1", ">=3.8,<3.12", ">=1.21,<1.25", ">=0.40.0dev0,<0.41"),
        numba("0.58.1", ">=3.8,<3.12", ">=1.22,<1.27", ">=0.41.0dev0,<0.42"),
    };

    const std::vector<std::string> runtime = {
        "lyft_dataset_sdk", "networkx>=2.2,<2.3", "numba==0.48.0", "numpy<1.20.0", "nuscenes-devkit",
        "plyfile", "scikit-image", "tensorboard", "trimesh>=2.35.39,<2.35.40"};
    const std::vector<std::string> mminstall = {"mmcv-full>=1.3.8,<=1.4.0", "mmdet>=2.14.0,<=3.0.0",
                                                "mmsegmentation>=0.14.1,<=1.0.0"};
    for (const char* v : {"0.17.0", "0.17.1", "0.17.2"})
        t.mmdet3d.push_back({v, runtime, mminstall, "1.3.8", "1.4.0", "2.14.0", "3.0.0", "0.14.1", "1.0.0", kMmdet3dSrc});
    t.mmdet3d.push_back({"0.17.3", runtime, mminstall, "1.3.8", "1.5.0", "2.14.0", "3.0.0", "0.14.1", "1.0.0", kMmdet3dSrc});

    t.sources = {
        {"torch releases (find-links, conda pytorch fallback)", kTorchSrc},
        {"mmcv wheel matrix", std::string(kMmcvSrc) + "; " + kMmcv2Src},
        {"numba/llvmlite/numpy ranges", kNumbaSrc},
        {"mmdet3d requirements and version gates", kMmdet3dSrc},
    };
    return t;
}

}  // namespace envlock::mirror
