// The CUDA probe, compiled for real by the machine's nvcc (skipped with a message without one).
#include <sstream>

#include "tests/unit/verify/verify_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

install::ChosenToolchain system_toolchain(const std::string& nvcc) {
    install::ChosenToolchain t;
    t.nvcc = nvcc;
    t.cuda_home = fs::path(nvcc).parent_path().parent_path().string();
    t.cuda = "13.0";
    if (::access("/usr/bin/g++", X_OK) == 0) t.cxx = "/usr/bin/g++";
    return t;
}

std::vector<int> listed_sms(const std::string& nvcc) {
    auto r = run_process({nvcc, "--list-gpu-arch"}, 60);
    std::vector<int> sms;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
        if (auto sm = knowledge::parse_sm(line)) sms.push_back(*sm);
    return sms;
}

}  // namespace

TEST_CASE("the probe uses what CUDA ops use: float and half atomics, warp shuffles, a template kernel, a host launcher") {
    std::string src = install::probe_source();
    for (const char* needle : {"atomicAdd(total, v)", "atomicAdd(total_half", "__shfl_sync", "__shfl_down_sync", "template <typename T>",
                               "launch_warp_sum<int>", "<<<blocks, threads, 0, stream>>>"})
        CHECK(src.find(needle) != std::string::npos);
}

TEST_CASE("the probe compiles with nvcc 13.0 and the host g++ for every sm nvcc lists, one -gencode each") {
    std::string nvcc = system_nvcc();
    if (nvcc.empty()) {
        MESSAGE("skipped: no nvcc at /usr/local/cuda on this machine");
        return;
    }
    auto sms = listed_sms(nvcc);
    REQUIRE_FALSE(sms.empty());
    TempDir work;
    auto c = install::run_probe(system_toolchain(nvcc), sms, work.str(), false, builtin_knowledge());
    INFO(read_text(c.log));
    CHECK(c.status == install::CheckStatus::passed);
    std::string log = read_text(c.log);
    for (int sm : sms) CHECK(log.find("-gencode=arch=compute_" + std::to_string(sm) + ",code=sm_" + std::to_string(sm)) != std::string::npos);
    CHECK(fs::exists(work.path / "probe/probe"));
}

TEST_CASE("a probe for an sm nvcc 13.0 dropped fails, and the log is explained as an unsupported architecture") {
    std::string nvcc = system_nvcc();
    if (nvcc.empty()) {
        MESSAGE("skipped: no nvcc at /usr/local/cuda on this machine");
        return;
    }
    TempDir work;
    auto c = install::run_probe(system_toolchain(nvcc), {70}, work.str(), false, builtin_knowledge());
    CHECK(c.status == install::CheckStatus::failed);
    REQUIRE_FALSE(c.explained.empty());
    CHECK(c.explained.front().id == "unsupported-gpu-architecture");
    CHECK(c.cause.find("compute_70") != std::string::npos);
}
