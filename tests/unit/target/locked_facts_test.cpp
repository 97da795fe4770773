// A lock's targets hold what the solve depended on, not the author's inventory (issue 19): a
// colleague on an equivalent machine re-resolves to the same bytes, and `git diff` of a lock
// shows only what matters.
#include <doctest/doctest.h>

#include "resolver/lock/target.hpp"
#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

// `envlock detect` as two hosts of one model would print it: the same GPUs, driver, glibc and
// toolchain; another kernel, memory size, CPU stepping, flag list and compiler paths.
std::string detected(const std::string& kernel, const std::string& memory, const std::string& extra_flags,
                     const std::string& gcc_path) {
    return "platform: linux-64\nkernel: \"" + kernel + "\"\nwsl: false\nglibc: \"2.31\"\n"
           "cpu-model: \"AMD EPYC 7" + memory.substr(0, 3) + " 64-Core Processor\"\n"
           "cpu-flags: [fpu, vme, sse4_2, avx, avx2, fma, " + extra_flags + "]\n"
           "cores: " + memory.substr(0, 2) + "\nmemory-bytes: " + memory + "\n"
           "driver: \"470.82.01\"\ndriver-cuda: \"11.4\"\n"
           "gpus:\n  - {name: \"NVIDIA GeForce RTX 3090\", sm: sm_86}\n"
           "compilers:\n  - {kind: gcc, path: " + gcc_path + ", version: \"9.4.0\"}\n";
}

}  // namespace

TEST_CASE("locked_facts keeps platform, driver, GPUs by sm, CPU feature levels, compilers by version, and the kernel as conda's __linux") {
    envlock::Target t;
    t.platform = "linux-64";
    t.kernel = "5.15.0-91-generic";
    t.cpu_model = "Intel(R) Xeon(R) Gold 6248";
    t.cpu_flags = {"vmx", "avx2", "ht", "avx", "sse4_2", "avx512f", "avx"};
    t.cores = 80;
    t.memory_bytes = 404000000000;
    t.gpus = {{"NVIDIA A100-SXM4-80GB", 8, 0}, {"NVIDIA GeForce RTX 3090", 8, 6}, {"Tesla V100", 7, 0}};
    t.compilers = {{"gcc", "/usr/bin/gcc-9", "9.4.0"}, {"gcc", "/usr/bin/gcc", "9.4.0"}, {"clang", "/usr/bin/clang", "14.0.6"}};
    auto locked = envlock::locked_facts(t);
    // The solve reads __linux from it; the lock keeps it only where a package depends on it.
    CHECK(locked.kernel == "5.15.0");
    CHECK(envlock::without_kernel(locked).kernel.empty());
    CHECK(locked.cpu_model.empty());
    CHECK(locked.cores == 0);
    CHECK(locked.memory_bytes == 0);
    CHECK(locked.cpu_flags == std::vector<std::string>{"avx", "avx2", "avx512f", "sse4_2"});
    REQUIRE(locked.gpus.size() == 3);
    CHECK(locked.gpus[0].name == "Tesla V100");
    CHECK(locked.gpus[2].name == "NVIDIA GeForce RTX 3090");
    REQUIRE(locked.compilers.size() == 2);
    CHECK(locked.compilers[0].kind == "clang");
    CHECK(locked.compilers[1].kind == "gcc");
    CHECK(locked.compilers[1].path.empty());
}

TEST_CASE("two detect outputs of one machine model, with other kernels, memory and compiler paths, give byte-identical locks") {
    auto dir = temp_dir("samemodel");
    write_file(dir / "a.yaml", detected("5.4.0-150-generic", "270000000000", "ht, vmx, pdpe1gb", "/usr/bin/gcc"));
    write_file(dir / "b.yaml", detected("5.15.0-91-generic", "540000000000", "svm, rdrand", "/usr/bin/x86_64-linux-gnu-gcc-9"));
    std::vector<std::string> locks;
    for (std::string host : {"a", "b"}) {
        auto r = resolve_with({"BEVFormer", "-o", (dir / (host + "-lock.yaml")).string(), "--target", (dir / (host + ".yaml")).string()}, dir);
        REQUIRE_MESSAGE(r.exit_code == 0, r.err);
        locks.push_back(read_file(dir / (host + "-lock.yaml")));
    }
    CHECK(locks[0] == locks[1]);
    for (const char* inventory : {"kernel:", "memory-bytes", "cpu-model", "cores:", "/usr/bin/gcc", "pdpe1gb", "vme"})
        CHECK_MESSAGE(locks[0].find(inventory) == std::string::npos, inventory);
    CHECK(locks[0].find("cpu-flags: [avx, avx2, fma, sse4_2]") != std::string::npos);
}

TEST_CASE("a target described by --gpu and --driver over this host says which facts were given") {
    auto dir = temp_dir("given");
    write_file(dir / "host.yaml", detected("6.1.0-13-amd64", "250000000000", "ht", "/usr/bin/gcc"));
    auto r = resolve_with({"BEVFormer", "-o", (dir / "envlock.yaml").string(), "--target", (dir / "host.yaml").string(),
                           "--gpu", "RTX 4090", "--driver", "525.60.13"},
                          dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    auto lock = read_file(dir / "envlock.yaml");
    CHECK(lock.find("given: [driver, driver-cuda, gpus]") != std::string::npos);
    CHECK(lock.find("sm: sm_89") != std::string::npos);
}
