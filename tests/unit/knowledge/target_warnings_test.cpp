// Target warnings (resolver/knowledge/target_warnings.yaml): which rows hold for a machine and a
// set of locked packages. Rows: torch on a CPU without AVX (pytorch/pytorch#37577, #43300,
// #22338); torch on a target with no GPU and no driver (c10/cuda/CUDAFunctions.cpp); NCCL older than 2.11.4 on WSL with several GPUs (NCCL 2.10.3 release notes: WSL2
// single GPU only; NVIDIA/nccl v2.11.4-1 p2p.cc; pytorch/pytorch#68165).
#include <doctest/doctest.h>

#include <algorithm>

#include "resolver/knowledge/knowledge.hpp"

using namespace envlock;
namespace kb = envlock::knowledge;

namespace {

using Packages = std::vector<std::pair<std::string, std::string>>;

std::vector<std::string> ids(const std::vector<kb::TargetWarning>& ws) {
    std::vector<std::string> out;
    for (const auto& w : ws) out.push_back(w.id);
    return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

Target machine(std::vector<std::string> flags, bool wsl = false, int gpus = 1) {
    Target t;
    t.platform = "linux-64";
    t.cpu_flags = std::move(flags);
    t.wsl = wsl;
    for (int i = 0; i < gpus; ++i) t.gpus.push_back({"NVIDIA GeForce RTX 3090", 8, 6});
    return t;
}

const kb::Knowledge& builtin() {
    static kb::Knowledge k = kb::load_builtin();
    return k;
}

}  // namespace

TEST_CASE("every target warning carries a source, a symptom and a fix") {
    REQUIRE(builtin().target_warnings.size() >= 3);
    for (const auto& w : builtin().target_warnings) {
        CAPTURE(w.id);
        CHECK(w.source.find("https://") != std::string::npos);
        CHECK_FALSE(w.symptom.empty());
        CHECK_FALSE(w.fix.empty());
    }
}

TEST_CASE("torch on a CPU without AVX is warned about (SIGILL, pytorch/pytorch#37577); with AVX it is not") {
    Packages locked{{"torch", "1.9.1+cu111"}, {"numpy", "1.19.5"}};
    auto no_avx = ids(kb::target_warnings(builtin(), machine({"fpu", "sse", "sse2", "sse4_1", "sse4_2"}), locked));
    CHECK(has(no_avx, "torch-cpu-without-avx"));
    auto avx = ids(kb::target_warnings(builtin(), machine({"sse4_2", "avx", "avx2", "fma"}), locked));
    CHECK_FALSE(has(avx, "torch-cpu-without-avx"));
}

TEST_CASE("conda's pytorch counts as torch; a lock without torch gets no AVX warning") {
    auto conda = ids(kb::target_warnings(builtin(), machine({"sse2"}), {{"pytorch", "1.9.1"}}));
    CHECK(has(conda, "torch-cpu-without-avx"));
    auto none = ids(kb::target_warnings(builtin(), machine({"sse2"}), {{"numpy", "1.19.5"}}));
    CHECK_FALSE(has(none, "torch-cpu-without-avx"));
}

TEST_CASE("torch on a target with neither a GPU nor a driver is warned about: it runs on the CPU (c10/cuda device_count_impl)") {
    Packages locked{{"torch", "2.15.0"}};
    CHECK(has(ids(kb::target_warnings(builtin(), machine({"avx", "avx2"}, false, 0), locked)), "torch-without-gpu"));
    // A GPU without a driver is another matter (the solve refuses CUDA builds there), and a GPU
    // with its driver runs CUDA.
    CHECK_FALSE(has(ids(kb::target_warnings(builtin(), machine({"avx", "avx2"}, false, 1), locked)), "torch-without-gpu"));
    Target with_driver = machine({"avx", "avx2"}, false, 1);
    with_driver.driver_version = "595.58.03";
    CHECK_FALSE(has(ids(kb::target_warnings(builtin(), with_driver, locked)), "torch-without-gpu"));
    CHECK_FALSE(has(ids(kb::target_warnings(builtin(), machine({"avx"}, false, 0), {{"numpy", "2.2.6"}})), "torch-without-gpu"));
}

TEST_CASE("a target whose CPU flags are unknown is not warned about: the warning is for a fact, not a guess") {
    auto unknown = ids(kb::target_warnings(builtin(), machine({}), {{"torch", "1.9.1"}}));
    CHECK_FALSE(has(unknown, "torch-cpu-without-avx"));
}

TEST_CASE("WSL with two GPUs and a torch that bundles NCCL < 2.11.4 is warned about; one GPU, or no WSL, is not") {
    std::vector<std::string> avx{"avx", "avx2"};
    Packages torch19{{"torch", "1.9.1+cu111"}};
    CHECK(has(ids(kb::target_warnings(builtin(), machine(avx, true, 2), torch19)), "torch-bundled-nccl-wsl-multi-gpu"));
    CHECK_FALSE(has(ids(kb::target_warnings(builtin(), machine(avx, true, 1), torch19)), "torch-bundled-nccl-wsl-multi-gpu"));
    CHECK_FALSE(has(ids(kb::target_warnings(builtin(), machine(avx, false, 2), torch19)), "torch-bundled-nccl-wsl-multi-gpu"));
    // torch 1.11 and later: no row says which NCCL they bundle, so nothing is claimed.
    CHECK(kb::target_warnings(builtin(), machine(avx, true, 2), {{"torch", "2.0.1+cu118"}}).empty());
}

TEST_CASE("with an nccl package locked its version decides, not torch's bundled copy") {
    std::vector<std::string> avx{"avx", "avx2"};
    auto old_nccl = ids(kb::target_warnings(builtin(), machine(avx, true, 2), {{"pytorch", "1.10.0"}, {"nccl", "2.10.3.1"}}));
    CHECK(has(old_nccl, "nccl-wsl-multi-gpu"));
    CHECK_FALSE(has(old_nccl, "torch-bundled-nccl-wsl-multi-gpu"));
    auto new_nccl = ids(kb::target_warnings(builtin(), machine(avx, true, 2), {{"pytorch", "1.10.0"}, {"nccl", "2.11.4.1"}}));
    CHECK(new_nccl.empty());
}

TEST_CASE("a user knowledge file's row with the same id replaces the builtin one") {
    auto k = kb::load_texts({{"mine.yaml",
                              "target_warnings:\n"
                              "- id: torch-cpu-without-avx\n"
                              "  when: [\"torch>=9\"]\n"
                              "  target: \"cpu-lacks:avx\"\n"
                              "  symptom: s\n  fix: f\n  source: https://example.invalid/x\n"}});
    CHECK(kb::target_warnings(k, machine({"sse2"}), {{"torch", "1.9.1"}}).empty());
}
