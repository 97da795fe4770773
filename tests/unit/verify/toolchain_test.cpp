// verify's toolchain checks: the nvcc of the locked release, nvcc vs torch's CUDA, a host
// compiler nvcc accepts (crt/host_config.h limits, knowledge host_compilers), every target sm
// in nvcc's list, the driver, the CPU. Machines are described as values or detected for real
// (fake compilers on a temp PATH; the machine's own nvcc where there is one).
#include "resolver/knowledge/detect.hpp"
#include "tests/unit/verify/verify_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

// A machine with one CUDA 13.0 toolkit (the archs nvcc 13.0 V13.0.88 lists) and no GPU.
Target machine_with_cuda13(const std::string& path = "/usr/local/cuda") {
    Target t;
    t.platform = "linux-64";
    t.cpu_flags = {"sse4_2", "avx", "avx2", "fma"};
    CudaToolkit tk;
    tk.path = path;
    tk.version = "13.0.88";
    for (int sm : {75, 80, 86, 87, 88, 89, 90, 100, 110, 103, 120, 121}) tk.gpu_archs.push_back("compute_" + std::to_string(sm));
    t.toolkits.push_back(tk);
    return t;
}

install::VerifyInputs inputs_for(const Target& machine, const std::string& path_env = "/usr/bin:/bin") {
    install::VerifyInputs in;
    in.machine = machine;
    in.env = {{"PATH", path_env}};
    return in;
}

}  // namespace

TEST_CASE("a lock that needs CUDA 11.1 on this machine: nvcc 11.1 is missing, 13.0 was found at /usr/local/cuda, and the fix") {
    if (system_nvcc().empty()) {
        MESSAGE("skipped: no nvcc at /usr/local/cuda on this machine");
        return;
    }
    // The real machine, as `envlock verify` detects it.
    Target here = detect_target(DetectRoots::host(), builtin_knowledge());
    Lock lock = verify_lock_with("11.1.105", "system:/usr/local/cuda-11.1");
    install::ChosenToolchain chosen;
    auto checks = install::check_toolchain(lock, inputs_for(here, "/usr/bin:/bin"), builtin_knowledge(), chosen);
    const auto* nvcc = find_check(checks, "nvcc");
    REQUIRE(nvcc);
    CHECK(nvcc->status == install::CheckStatus::failed);
    CHECK(nvcc->what == "nvcc 11.1.105 (locked: system:/usr/local/cuda-11.1) is not on this machine");
    CHECK(nvcc->cause.find("CUDA 13.0") != std::string::npos);
    CHECK(nvcc->cause.find("at /usr/local/cuda") != std::string::npos);
    CHECK(nvcc->fix.find("install the CUDA 11.1 toolkit") != std::string::npos);
    CHECK(nvcc->fix.find("/usr/local/cuda-11.1") != std::string::npos);
    CHECK(chosen.nvcc.empty());
}

TEST_CASE("the nvcc of the locked release is chosen among the toolkits, and its arch list is nvcc's") {
    Lock lock = verify_lock_with("13.0", "system:/usr/local/cuda-13.0");
    install::ChosenToolchain chosen;
    auto checks = install::check_toolchain(lock, inputs_for(machine_with_cuda13()), builtin_knowledge(), chosen);
    const auto* nvcc = find_check(checks, "nvcc");
    REQUIRE(nvcc);
    CHECK(nvcc->status == install::CheckStatus::passed);
    CHECK(chosen.cuda_home == "/usr/local/cuda");
    CHECK(chosen.cuda == "13.0");
    CHECK(chosen.nvcc_sms.size() == 12);
    CHECK(nvcc->what.find("the locked path /usr/local/cuda-13.0 is not it") != std::string::npos);
}

TEST_CASE("host compiler: the only gcc is newer than nvcc 13.0 accepts (gcc 15): fails, and says which to install") {
    TempDir bin, usr_local;
    fake_compiler(bin.path, "gcc", "16.1.0");
    fake_compiler(bin.path, "g++", "16.1.0");
    DetectRoots roots;
    roots.path_env = bin.str();
    roots.usr_local = usr_local.str();
    Target machine = detect_target(roots, builtin_knowledge());
    REQUIRE(machine.compilers.size() == 2);
    Lock lock = verify_lock_with("13.0");
    install::ChosenToolchain chosen;
    auto checks = install::check_toolchain(lock, inputs_for(machine, bin.str()), builtin_knowledge(), chosen);
    const auto* hc = find_check(checks, "host-compiler");
    REQUIRE(hc);
    CHECK(hc->status == install::CheckStatus::failed);
    CHECK(hc->what == bin.str("g++") + " 16.1.0 (the default on PATH) is newer than nvcc 13.0 accepts gcc 15 or older");
    CHECK(hc->cause.find("#error -- unsupported GNU version!") != std::string::npos);
    CHECK(hc->fix.find("install a gcc 15 or older") != std::string::npos);
    CHECK(hc->source.find("host_config.h") != std::string::npos);
}

TEST_CASE("host compiler: the default gcc is too new but an accepted one is here: the fix names it for CC, CXX and NVCC_CCBIN") {
    TempDir bin, usr_local;
    fake_compiler(bin.path, "gcc", "16.1.0");
    fake_compiler(bin.path, "g++", "16.1.0");
    fake_compiler(bin.path, "gcc-14", "14.2.0");
    fake_compiler(bin.path, "g++-14", "14.2.0");
    fake_compiler(bin.path, "g++-11", "11.4.0");
    DetectRoots roots;
    roots.path_env = bin.str();
    roots.usr_local = usr_local.str();
    Target machine = detect_target(roots, builtin_knowledge());
    Lock lock = verify_lock_with("13.0");
    install::ChosenToolchain chosen;
    auto checks = install::check_toolchain(lock, inputs_for(machine, bin.str()), builtin_knowledge(), chosen);
    const auto* hc = find_check(checks, "host-compiler");
    REQUIRE(hc);
    CHECK(hc->status == install::CheckStatus::failed);
    CHECK(hc->fix.find("export CC=" + bin.str("gcc-14") + " CXX=" + bin.str("g++-14") + " NVCC_CCBIN=" + bin.str("g++-14")) != std::string::npos);
    // The newest accepted one is what verify builds with from here on.
    CHECK(chosen.cxx == bin.str("g++-14"));
    CHECK(chosen.cc == bin.str("gcc-14"));
}

TEST_CASE("host compiler: nvcc 11.1 takes gcc 10 at most, so gcc 11 fails where nvcc 13.0 would take it") {
    TempDir bin, usr_local;
    fake_compiler(bin.path, "gcc", "11.4.0");
    fake_compiler(bin.path, "g++", "11.4.0");
    DetectRoots roots;
    roots.path_env = bin.str();
    roots.usr_local = usr_local.str();
    Target machine = detect_target(roots, builtin_knowledge());
    install::ChosenToolchain old_chosen, new_chosen;
    auto old_checks = install::check_toolchain(verify_lock_with("11.1"), inputs_for(machine, bin.str()), builtin_knowledge(), old_chosen);
    auto new_checks = install::check_toolchain(verify_lock_with("13.0"), inputs_for(machine, bin.str()), builtin_knowledge(), new_chosen);
    CHECK(find_check(old_checks, "host-compiler")->status == install::CheckStatus::failed);
    CHECK(find_check(old_checks, "host-compiler")->what.find("accepts gcc 10 or older") != std::string::npos);
    CHECK(find_check(new_checks, "host-compiler")->status == install::CheckStatus::passed);
}

TEST_CASE("host compiler: the lock's compiler is what `envlock run` sets, and passes when nvcc accepts it") {
    TempDir bin, usr_local;
    fake_compiler(bin.path, "g++", "16.1.0");
    fake_compiler(bin.path, "gcc-13", "13.3.0");
    fake_compiler(bin.path, "g++-13", "13.3.0");
    DetectRoots roots;
    roots.path_env = bin.str();
    roots.usr_local = usr_local.str();
    Lock lock = verify_lock_with("13.0");
    lock.toolchain.gcc = "13";
    lock.toolchain.gcc_from = "system:" + bin.str("gcc-13");
    install::ChosenToolchain chosen;
    auto checks = install::check_toolchain(lock, inputs_for(detect_target(roots, builtin_knowledge()), bin.str()), builtin_knowledge(), chosen);
    const auto* hc = find_check(checks, "host-compiler");
    REQUIRE(hc);
    CHECK(hc->status == install::CheckStatus::passed);
    CHECK(hc->what == bin.str("g++-13") + " 13.3.0 (the lock's): nvcc 13.0 accepts gcc 15 or older");
    CHECK(chosen.cc == bin.str("gcc-13"));
}

TEST_CASE("gpu-arch: an sm nvcc 13.0 dropped (sm_70) fails, with the toolkits that still list it") {
    Target machine = machine_with_cuda13();
    machine.gpus.push_back({"Tesla V100-SXM2-16GB", 7, 0});
    machine.gpus.push_back({"NVIDIA GeForce RTX 3090", 8, 6});
    install::ChosenToolchain chosen;
    auto checks = install::check_toolchain(verify_lock_with("13.0"), inputs_for(machine), builtin_knowledge(), chosen);
    const auto* arch = find_check(checks, "gpu-arch");
    REQUIRE(arch);
    CHECK(arch->status == install::CheckStatus::failed);
    CHECK(arch->what.rfind("sm_70 (this machine's GPUs) not in nvcc 13.0's --list-gpu-arch", 0) == 0);
    CHECK(arch->cause.find("Unsupported gpu architecture 'compute_70'") != std::string::npos);
    CHECK(arch->fix.find("12.") != std::string::npos);
}

TEST_CASE("gpu-arch: without a GPU the lock's targets decide, and all of sm_75 ... sm_120 pass on nvcc 13.0") {
    Lock lock = verify_lock_with("13.0");
    lock.targets.front().target.gpus = {{"NVIDIA GeForce RTX 4090", 8, 9}, {"NVIDIA RTX PRO 6000", 12, 0}};
    install::ChosenToolchain chosen;
    auto checks = install::check_toolchain(lock, inputs_for(machine_with_cuda13()), builtin_knowledge(), chosen);
    CHECK(find_check(checks, "gpu-arch")->status == install::CheckStatus::passed);
    CHECK(chosen.sms == std::vector<int>{89, 120});
    CHECK(chosen.arch_list == "8.9;12.0");   // always set: torch >= 1.9 crashes on an empty auto-detected list
}

TEST_CASE("nvcc-torch: torch built for CUDA 11.1 and nvcc 13.0 is the major mismatch torch refuses") {
    Lock lock = verify_lock_with("13.0");
    LockedPackage torch;
    torch.kind = Ecosystem::pypi;
    torch.name = "torch";
    torch.version = "1.9.1+cu111";
    torch.cuda = LockedCuda{"11.1", {37, 50, 60, 70, 75, 80, 86}, {86}};
    lock.packages.push_back(torch);
    install::ChosenToolchain chosen;
    auto checks = install::check_toolchain(lock, inputs_for(machine_with_cuda13()), builtin_knowledge(), chosen);
    const auto* c = find_check(checks, "nvcc-torch");
    REQUIRE(c);
    CHECK(c->status == install::CheckStatus::failed);
    CHECK(c->cause.find("The detected CUDA version (13.0) mismatches the version that was used to compile PyTorch (11.1)") != std::string::npos);
}

TEST_CASE("nvcc-torch: a CPU-only torch in the env cannot take CUDA extensions") {
    install::ChosenToolchain chosen;
    chosen.torch_version = "1.13.0a0";   // Debian's python3-torch: torch.version.cuda is None
    auto checks = install::check_toolchain(verify_lock_with("13.0"), inputs_for(machine_with_cuda13()), builtin_knowledge(), chosen);
    const auto* c = find_check(checks, "nvcc-torch");
    REQUIRE(c);
    CHECK(c->status == install::CheckStatus::failed);
    CHECK(c->what.find("CPU-only build") != std::string::npos);
    CHECK(c->fix.find("+cu130") != std::string::npos);
}

TEST_CASE("driver: a driver older than the runtime's minimum fails with the driver to install; no driver is skipped") {
    Target machine = machine_with_cuda13();
    install::ChosenToolchain chosen;
    auto none = install::check_toolchain(verify_lock_with("13.0"), inputs_for(machine), builtin_knowledge(), chosen);
    CHECK(find_check(none, "driver")->status == install::CheckStatus::skipped);
    machine.driver_version = "470.57.02";
    install::ChosenToolchain chosen2;
    auto old = install::check_toolchain(verify_lock_with("13.0"), inputs_for(machine), builtin_knowledge(), chosen2);
    const auto* d = find_check(old, "driver");
    CHECK(d->status == install::CheckStatus::failed);
    CHECK(d->fix.find("NVIDIA driver") != std::string::npos);
}

TEST_CASE("cpu: a lock made for an AVX2 machine, verified on a CPU without AVX2") {
    Target machine = machine_with_cuda13();
    machine.cpu_flags = {"sse4_2", "avx"};
    Lock lock = verify_lock_with("");
    lock.targets.front().target.cpu_flags = {"sse4_2", "avx", "avx2", "hypervisor"};
    install::ChosenToolchain chosen;
    auto checks = install::check_toolchain(lock, inputs_for(machine), builtin_knowledge(), chosen);
    const auto* c = find_check(checks, "cpu");
    CHECK(c->status == install::CheckStatus::failed);
    CHECK(c->what == "CPU lacks avx2 (the lock's target has them)");
    CHECK(find_check(checks, "nvcc")->status == install::CheckStatus::skipped);
}
