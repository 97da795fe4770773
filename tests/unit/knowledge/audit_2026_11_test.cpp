// The rows the 2026-11 knowledge audit found wrong, one case each, and the holes it listed.
// Each case names the audit row and the primary source the corrected value comes from.
#include <doctest/doctest.h>

#include <algorithm>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/solve/pool.hpp"

namespace kb = envlock::knowledge;

namespace {
const kb::Knowledge& builtin() {
    static const kb::Knowledge k = kb::load_builtin();
    return k;
}
bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }
bool has_int(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }
std::vector<std::string> gate(const std::string& package, const std::string& version) {
    return kb::gate_requirements(builtin(), package, version);
}
const kb::Advisory* advisory(const std::string& id) {
    static const auto list = kb::advisories(builtin());
    for (const auto& a : list)
        if (a.id == id) return &a;
    return nullptr;
}
}  // namespace

// ---------------------------------------------------------------- host compilers (rows 63, 65, 67, 71)

TEST_CASE("CUDA 12.3 accepts gcc up to 12, not 13 (audit row 63: Gentoo 12.3.2 ebuild, NVEnc#533)") {
    CHECK(kb::newest_gcc_major(builtin(), "12.3") == 12);
    CHECK(kb::newest_gcc_major(builtin(), "12.3.2") == 12);
}

TEST_CASE("newest clang per CUDA from the shipped host_config.h: 12.4 -> 17, 12.6 -> 18, 12.9 -> 19 (rows 65, 67, 71)") {
    CHECK(kb::newest_clang_major(builtin(), "12.4") == 17);
    CHECK(kb::newest_clang_major(builtin(), "12.6") == 18);
    CHECK(kb::newest_clang_major(builtin(), "12.9") == 19);
}

TEST_CASE("holes: CUDA 11.8 clang 14 verified, 12.8 clang 19, 13.4 gcc 16 / clang 22") {
    auto h118 = kb::host_compiler_limit(builtin(), "11.8");
    REQUIRE(h118);
    CHECK_FALSE(h118->unverified);
    CHECK(h118->clang_max == 14);
    CHECK(kb::newest_clang_major(builtin(), "12.8") == 19);
    CHECK(kb::newest_gcc_major(builtin(), "13.4") == 16);
    CHECK(kb::newest_clang_major(builtin(), "13.4") == 22);
}

// ---------------------------------------------------------------- nvcc targets (row 77), drivers

TEST_CASE("nvcc 13.0 lists its arch- and family-specific targets, and still builds plain sm_120 (row 77)") {
    const auto* row = kb::nvcc_targets_row(builtin(), "13.0");
    REQUIRE(row);
    for (const char* t : {"sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_120a", "sm_120f", "sm_121a"})
        CHECK_MESSAGE(has(row->sm, t), t);
    CHECK_FALSE(has(row->sm, "sm_101a"));
    auto plain = kb::nvcc_sm_targets(builtin(), "13.0");
    CHECK(has_int(plain, 120));
    CHECK(std::count(plain.begin(), plain.end(), 120) == 1);   // 120a/120f are not extra plain targets
}

TEST_CASE("drivers of CUDA 13.1 and 13.2 (NVIDIA 13.2.2 release notes, Table 3)") {
    CHECK(kb::min_driver_for_cuda(builtin(), "13.1") == "590.44.01");
    CHECK(kb::min_driver_for_cuda(builtin(), "13.2") == "595.45.04");
    CHECK(kb::driver_max_cuda(builtin(), "590.44.01") == "13.1");
    CHECK(kb::driver_max_cuda(builtin(), "595.71.05") == "13.2");
    CHECK(kb::driver_max_cuda(builtin(), "580.95.05") == "13.0");
}

// ---------------------------------------------------------------- torch releases (rows 124-135)

TEST_CASE("torch 1.8.2 LTS has conda builds for CUDA 10.2 and 11.1 (row 124)") {
    auto r = kb::torch_release(builtin(), "1.8.2");
    REQUIRE(r);
    CHECK(r->conda_cuda == std::vector<std::string>{"10.2", "11.1"});
    CHECK(r->note.find("pytorch-lts") != std::string::npos);
}

TEST_CASE("torch 1.10.0/1.10.1 have cu113 wheels; 1.11.0 has cu115 (rows 126, 127)") {
    for (const char* v : {"1.10.0", "1.10.1"}) CHECK_MESSAGE(has(kb::torch_release(builtin(), v)->variants, "cu113"), v);
    CHECK(has(kb::torch_release(builtin(), "1.11.0")->variants, "cu115"));
    // and the arch list of that wheel is known, so an RTX 3090 is placed
    auto a = kb::torch_arch_list(builtin(), "1.10.0+cu113", "", "pip");
    REQUIRE(a);
    CHECK(kb::arch_list_runs_on(*a, 86));
}

TEST_CASE("conda variants of 1.12.1, 1.13.1, 2.0.x, 2.1-2.4 (rows 129, 131, 133, 135)") {
    CHECK(kb::torch_release(builtin(), "1.12.1")->conda_cuda == std::vector<std::string>{"10.2", "11.3", "11.6 (conda-forge)"});
    CHECK(kb::torch_release(builtin(), "1.13.1")->conda_cuda == std::vector<std::string>{"11.6", "11.7"});
    for (const char* v : {"2.0.0", "2.0.1"})
        CHECK(kb::torch_release(builtin(), v)->conda_cuda == std::vector<std::string>{"11.7", "11.8"});
    for (const char* v : {"2.1.2", "2.2.0", "2.3.1"})
        CHECK(kb::torch_release(builtin(), v)->conda_cuda == std::vector<std::string>{"11.8", "12.1"});
    CHECK(kb::torch_release(builtin(), "2.4.0")->conda_cuda == std::vector<std::string>{"11.8", "12.1", "12.4"});
    // each conda variant has its arch list
    CHECK(kb::torch_arch_list(builtin(), "2.0.1", "11.8", "conda"));
    CHECK(kb::torch_arch_list(builtin(), "1.13.1", "11.7", "conda"));
}

TEST_CASE("holes: torch 2.10-2.14 from RELEASE.md, with Python ranges, variants and arch lists") {
    auto r210 = kb::torch_release(builtin(), "2.10.0");
    REQUIRE(r210);
    CHECK(r210->python_min == "3.10");
    CHECK(r210->python_max == "3.14");
    CHECK(has(r210->variants, "cu130"));
    auto r214 = kb::torch_release(builtin(), "2.14.0");
    REQUIRE(r214);
    CHECK(r214->python_max == "3.15");
    CHECK(has(r214->variants, "cu132"));
    CHECK(r214->pypi_default == "cu132");
    CHECK_FALSE(kb::torch_release(builtin(), "2.1.0")->version == "2.10.x");   // 2.1 is not 2.10
    auto a211 = kb::torch_arch_list(builtin(), "2.11.0", "cu128", "pip");
    REQUIRE(a211);
    CHECK_FALSE(kb::arch_list_runs_on(*a211, 70));   // Volta dropped from 12.8 builds in 2.11
    auto a210 = kb::torch_arch_list(builtin(), "2.10.0", "cu128", "pip");
    REQUIRE(a210);
    CHECK(kb::arch_list_runs_on(*a210, 70));
    auto a212 = kb::torch_arch_list(builtin(), "2.12.0", "cu132", "pip");
    REQUIRE(a212);
    CHECK(a212->ptx == std::vector<int>{120});
}

// ---------------------------------------------------------------- cpp_extension arch names (row 162)

TEST_CASE("cpp_extension arch names per release: 9.0a from 2.2, 10.0 from 2.6, 12.0 from 2.7, 11.0/12.1 from 2.9 (row 162)") {
    auto names = [](const char* torch) { return kb::torch_cpp_extension_archs(builtin(), torch); };
    CHECK_FALSE(has(names("2.1.2"), "9.0a"));
    CHECK(has(names("2.2.0"), "9.0a"));
    CHECK(has(names("2.6.0"), "10.0"));
    CHECK_FALSE(has(names("2.6.0"), "12.0"));
    CHECK(has(names("2.7.1"), "12.0"));
    CHECK(has(names("2.8.0"), "10.1"));
    CHECK(has(names("2.9.0"), "12.1"));
    CHECK(has(names("2.9.0"), "11.0"));
    CHECK_FALSE(has(names("2.9.0"), "10.1"));   // renamed 11.0 (pytorch#166120)
    CHECK(has(names("2.14.0"), "12.0"));
}

TEST_CASE("an RTX 5090 (sm_120) with torch 2.7+cu128 gets an extension arch list with 12.0 (row 162)") {
    CHECK(envlock::solve_detail::buildable_arch(builtin(), "2.7", "12.8", 120) == 120);
    CHECK(envlock::solve_detail::buildable_arch(builtin(), "2.8", "12.8", 100) == 100);   // B200
    CHECK_FALSE(envlock::solve_detail::buildable_arch(builtin(), "2.5", "12.4", 120));     // no nvcc or torch name for it
}

// ---------------------------------------------------------------- OpenMMLab gates (rows 172, 184, 186-188)

TEST_CASE("mmdet3d 0.6.1 passes mmcv-full 1.1.5-1.1.6 only (row 172: its assert compares against '1.2')") {
    CHECK(has(gate("mmdet3d", "0.6.1"), "mmcv-full>=1.1.5,<1.2.0"));
}

TEST_CASE("mmseg >= 1.0 rejects mmcv 2.2.0 at import (row 184: MMCV_MAX = '2.2.0', exclusive)") {
    CHECK(has(gate("mmsegmentation", "1.2.2"), "mmcv>=2.0.0rc4,<2.2.0"));
    CHECK(has(gate("mmsegmentation", "1.0.0"), "mmcv>=2.0.0rc4,<2.2.0"));
}

TEST_CASE("mmdet 2.x mmcv-full ranges per release (rows 186-188: FAQ table, inclusive upper bound of the assert)") {
    CHECK(has(gate("mmdet", "2.14.0"), "mmcv-full>=1.3.8,<=1.4.0"));    // BEVFormer's pair still holds
    CHECK(has(gate("mmdet", "2.17.0"), "mmcv-full>=1.3.14,<=1.4.0"));
    CHECK(has(gate("mmdet", "2.18.0"), "mmcv-full>=1.3.17,<=1.4.0"));
    CHECK(has(gate("mmdet", "2.19.1"), "mmcv-full>=1.3.17,<=1.5.0"));
    CHECK(has(gate("mmdet", "2.24.1"), "mmcv-full>=1.3.17,<=1.6.0"));
    CHECK(has(gate("mmdet", "2.25.1"), "mmcv-full>=1.3.17,<=1.6.0"));
    CHECK(has(gate("mmdet", "2.25.3"), "mmcv-full>=1.3.17,<=1.7.0"));
    CHECK(gate("mmdet", "2.17.0").size() == 1);   // one range per release, no overlap
}

TEST_CASE("holes: mmdet 3.x gates mmcv < 2.1.0 (3.0, 3.1) and < 2.2.0 (3.2, 3.3), mmengine 0.7.1-1.0") {
    CHECK(has(gate("mmdet", "3.1.0"), "mmcv>=2.0.0rc4,<2.1.0"));
    CHECK(has(gate("mmdet", "3.3.0"), "mmcv>=2.0.0rc4,<2.2.0"));
    CHECK(has(gate("mmdet", "3.3.0"), "mmengine>=0.7.1,<1.0.0"));
}

// ---------------------------------------------------------------- numba (row 201), advisories (rows 202, 203)

TEST_CASE("numba gained CUDA 11 / Ampere in 0.51, not 0.50 (row 201: 0.51.0 CHANGE_LOG, PR #5819)") {
    auto limits = kb::numba_cuda_limits(builtin());
    auto it = std::find_if(limits.begin(), limits.end(), [](const kb::NumbaCudaLimit& l) { return l.cuda == ">=11.0"; });
    REQUIRE(it != limits.end());
    CHECK(it->numba == "<0.51");
    CHECK_FALSE(it->unverified);
}

TEST_CASE("holes: numba 0.61-0.67 numpy and python ranges from setup.py at each tag") {
    CHECK(kb::numba_release(builtin(), "0.61.0")->numpy == ">=1.24,<2.2");
    CHECK(kb::numba_release(builtin(), "0.61.2")->numpy == ">=1.24,<2.3");
    CHECK(kb::numba_release(builtin(), "0.62.0")->python == ">=3.10,<3.14");
}

TEST_CASE("the yapf advisory is every yapf >= 0.40.2 with mmcv(-full) < 1.7.2 (rows 202, 203)") {
    const auto* full = advisory("yapf-0.40.2-mmcv-full-config");
    REQUIRE(full);
    CHECK(full->when == std::vector<std::string>{"yapf>=0.40.2", "mmcv-full<1.7.2"});
    const auto* lite = advisory("yapf-0.40.2-mmcv-config");
    REQUIRE(lite);
    CHECK(lite->when == std::vector<std::string>{"yapf>=0.40.2", "mmcv<1.7.2"});
}

TEST_CASE("holes: numpy 2 against binaries built for the NumPy 1.x ABI (torch < 2.3, opencv-python < 4.10.0.84)") {
    const auto* torch = advisory("numpy-2-abi-torch");
    REQUIRE(torch);
    CHECK(torch->when == std::vector<std::string>{"numpy>=2", "torch<2.3"});
    CHECK(torch->source.find("pytorch/pytorch/issues/132179") != std::string::npos);
    const auto* cv = advisory("numpy-2-abi-opencv");
    REQUIRE(cv);
    CHECK(cv->when == std::vector<std::string>{"numpy>=2", "opencv-python<4.10.0.84"});
}

TEST_CASE("holes: the plain PyPI wheel of torch 1.8.1-1.12.1 is the CUDA 10.2 build (RELEASE.md)") {
    for (const char* v : {"1.8.1", "1.9.0", "1.9.1", "1.10.0", "1.10.1", "1.11.0", "1.12.0", "1.12.1"})
        CHECK_MESSAGE(kb::torch_release(builtin(), v)->pypi_default == "cu102", v);
    CHECK(kb::torch_release(builtin(), "1.13.1")->pypi_default == "cu117");
    CHECK(kb::torch_release(builtin(), "1.8.2")->pypi_default.empty());   // LTS: not on PyPI
}
