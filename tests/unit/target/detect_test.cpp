#include <doctest/doctest.h>

#include <gnu/libc-version.h>

#include <algorithm>
#include <filesystem>

#include "resolver/knowledge/detect.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "tests/unit/target/fake_machine.hpp"

using envlock::test::FakeMachine;
namespace kb = envlock::knowledge;

namespace {
const kb::Knowledge& knowledge() {
    static const kb::Knowledge k = kb::load_builtin();
    return k;
}
bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

const char* kCpuinfoAvx2 =
    "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma avx512f\n\n"
    "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma avx512f\n\n"
    "processor\t: 2\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma avx512f\n\n"
    "processor\t: 3\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma avx512f\n";

void basic_machine(const FakeMachine& m) {
    m.file("proc/cpuinfo", kCpuinfoAvx2);
    m.file("proc/meminfo", "MemTotal:       65843964 kB\nMemFree:         1000 kB\n");
    m.file("proc/sys/kernel/osrelease", "5.15.0-91-generic\n");
    m.file("proc/version", "Linux version 5.15.0-91-generic (buildd@lcy02) (gcc 11.4.0)\n");
    m.program("bin/ldd", "echo 'ldd (Ubuntu GLIBC 2.35-0ubuntu3.6) 2.35'; echo 'Copyright (C) 2022'");
}

const char* kSmiHeader = "echo '| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |'";
}  // namespace

TEST_CASE("machine facts come from /proc, uname and ldd") {
    FakeMachine m;
    basic_machine(m);
    auto t = envlock::detect_target(m.roots(), knowledge());
    CHECK(t.platform == "linux-64");
    CHECK(t.kernel == "5.15.0-91-generic");
    CHECK_FALSE(t.wsl);
    CHECK(t.glibc == "2.35");
    CHECK(t.cpu_model == "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz");
    CHECK(t.cores == 4);
    CHECK(t.memory_bytes == 65843964ULL * 1024);
    CHECK(has(t.cpu_flags, "avx2"));
    CHECK(has(t.cpu_flags, "avx512f"));
}

TEST_CASE("no driver and no GPU is a normal, empty answer") {
    FakeMachine m;
    basic_machine(m);
    auto t = envlock::detect_target(m.roots(), knowledge());
    CHECK(t.driver_version.empty());
    CHECK(t.driver_cuda.empty());
    CHECK(t.gpus.empty());
    CHECK(t.toolkits.empty());
}

TEST_CASE("a CPU without AVX reports no avx flags") {
    FakeMachine m;
    basic_machine(m);
    m.file("proc/cpuinfo", "processor\t: 0\nmodel name\t: Intel(R) Pentium(R) CPU G4560\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2\n");
    auto t = envlock::detect_target(m.roots(), knowledge());
    CHECK(t.cores == 1);
    CHECK(has(t.cpu_flags, "sse4_2"));
    CHECK_FALSE(has(t.cpu_flags, "avx"));
    CHECK_FALSE(has(t.cpu_flags, "avx2"));
}

TEST_CASE("aarch64: platform, Features line and a musl-free glibc") {
    FakeMachine m;
    m.file("proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd evtstrm aes crc32\nCPU part\t: 0xd0c\n");
    m.program("bin/ldd", "echo 'ldd (GNU libc) 2.31'");
    auto r = m.roots();
    r.machine = "aarch64";
    auto t = envlock::detect_target(r, knowledge());
    CHECK(t.platform == "linux-aarch64");
    CHECK(has(t.cpu_flags, "asimd"));
    CHECK(t.glibc == "2.31");
}

TEST_CASE("driver from /proc/driver/nvidia/version, GPUs and CUDA from nvidia-smi") {
    FakeMachine m;
    basic_machine(m);
    m.file("proc/driver/nvidia/version",
           "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\nGCC version:  gcc version 12.3.0\n");
    m.program("bin/nvidia-smi",
              "case \"$1\" in\n"
              "  --query-gpu=name,compute_cap) echo 'NVIDIA GeForce RTX 3090, 8.6'; echo 'NVIDIA GeForce RTX 3090, 8.6'; echo 'NVIDIA H100 80GB HBM3, 9.0';;\n"
              "  --query-gpu=driver_version) echo 999.0;;\n"
              "  '') " + std::string(kSmiHeader) + ";;\n"
              "  *) exit 2;;\n"
              "esac");
    auto t = envlock::detect_target(m.roots(), knowledge());
    CHECK(t.driver_version == "535.104.05");   // the kernel module wins over nvidia-smi
    CHECK(t.driver_cuda == "12.2");
    REQUIRE(t.gpus.size() == 3);
    CHECK(t.gpus[0].name == "NVIDIA GeForce RTX 3090");
    CHECK(t.gpus[0].sm_major == 8);
    CHECK(t.gpus[0].sm_minor == 6);
    CHECK(t.gpus[2].name == "NVIDIA H100 80GB HBM3");
    CHECK(t.gpus[2].sm_major == 9);
}

TEST_CASE("the open kernel module's version line parses too") {
    CHECK(envlock::parse_nvidia_proc_version(
              "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  (dvs-builder@U16-I3-B03-4-3)") ==
          "550.54.14");
    CHECK(envlock::parse_nvidia_proc_version("garbage").empty());
}

TEST_CASE("driver from /sys/module/nvidia/version; the driver's CUDA from the knowledge base without nvidia-smi") {
    FakeMachine m;
    basic_machine(m);
    m.file("sys/module/nvidia/version", "525.60.13\n");
    m.file("proc/driver/nvidia/gpus/0000:01:00.0/information", "Model: \t\t NVIDIA GeForce RTX 4090\nIRQ:   130\n");
    m.file("proc/driver/nvidia/gpus/0000:02:00.0/information", "Model: \t\t NVIDIA A100-SXM4-80GB\nIRQ:   131\n");
    auto t = envlock::detect_target(m.roots(), knowledge());
    CHECK(t.driver_version == "525.60.13");
    CHECK(t.driver_cuda == "12.0");
    REQUIRE(t.gpus.size() == 2);
    CHECK(t.gpus[0].name == "NVIDIA GeForce RTX 4090");
    CHECK(t.gpus[0].sm_major * 10 + t.gpus[0].sm_minor == 89);
    CHECK(t.gpus[1].sm_major * 10 + t.gpus[1].sm_minor == 80);
}

TEST_CASE("an nvidia-smi without the compute_cap field: names, capability from the knowledge base") {
    FakeMachine m;
    basic_machine(m);
    m.program("bin/nvidia-smi",
              "case \"$1\" in\n"
              "  --query-gpu=name,compute_cap) echo 'Field \"compute_cap\" is not a valid field to query.'; exit 2;;\n"
              "  --query-gpu=name) echo 'Tesla V100-SXM2-16GB'; echo 'Some Unknown GPU';;\n"
              "  --query-gpu=driver_version) echo 450.80.02;;\n"
              "  *) exit 0;;\n"
              "esac");
    auto t = envlock::detect_target(m.roots(), knowledge());
    CHECK(t.driver_version == "450.80.02");
    CHECK(t.driver_cuda == "11.0");
    REQUIRE(t.gpus.size() == 2);
    CHECK(t.gpus[0].sm_major == 7);
    CHECK(t.gpus[0].sm_minor == 0);
    CHECK(t.gpus[1].name == "Some Unknown GPU");
    CHECK(t.gpus[1].sm_major == 0);   // unknown capability, still listed
}

TEST_CASE("WSL: detected from the kernel release, nvidia-smi found in the WSL library folder") {
    FakeMachine m;
    basic_machine(m);
    m.file("proc/sys/kernel/osrelease", "5.15.133.1-microsoft-standard-WSL2\n");
    m.program("wsl/lib/nvidia-smi",
              "case \"$1\" in\n"
              "  --query-gpu=name,compute_cap) echo 'NVIDIA GeForce RTX 4090, 8.9'; echo 'NVIDIA GeForce RTX 4090, 8.9';;\n"
              "  --query-gpu=driver_version) echo 546.33;;\n"
              "  '') echo '| NVIDIA-SMI 545.36   Driver Version: 546.33   CUDA Version: 12.3 |';;\n"
              "esac");
    auto t = envlock::detect_target(m.roots(), knowledge());
    CHECK(t.wsl);
    CHECK(t.driver_version == "546.33");
    CHECK(t.driver_cuda == "12.3");
    CHECK(t.gpus.size() == 2);
}

TEST_CASE("several gcc/g++/clang on PATH, with versions; earlier PATH entries shadow later ones") {
    FakeMachine m;
    basic_machine(m);
    m.program("bin/gcc", "[ \"$1\" = -dumpfullversion ] && echo 12.2.0");
    m.program("bin/gcc-9", "[ \"$1\" = -dumpfullversion ] && echo 9.5.0");
    m.program("bin/g++-10", "[ \"$1\" = -dumpfullversion ] && echo 10.4.0");
    m.program("bin/clang", "echo 'Debian clang version 14.0.6'; echo 'Target: x86_64-pc-linux-gnu'");
    m.program("old/gcc-5", "[ \"$1\" = --version ] && echo 'gcc-5 (Ubuntu 5.4.0-6ubuntu1~16.04.12) 5.4.0 20160609' || exit 1");
    m.program("other/gcc", "echo 4.8.5");   // shadowed by bin/gcc
    m.program("bin/gcc-broken", "exit 1");   // not a compiler name pattern anyway
    auto t = envlock::detect_target(m.roots((m.root() / "old").string() + ":" + (m.root() / "other").string()), knowledge());
    std::vector<std::string> seen;
    for (const auto& c : t.compilers) seen.push_back(c.kind + " " + c.version);
    CHECK(seen == std::vector<std::string>{"clang 14.0.6", "g++ 10.4.0", "gcc 12.2.0", "gcc 9.5.0", "gcc 5.4.0"});
    CHECK(t.compilers[2].path == (m.root() / "bin/gcc").string());
}

namespace {
std::string fake_nvcc(const std::string& release, const std::string& full, const std::string& archs) {
    std::string list = archs.empty() ? "exit 1" : "for a in " + archs + "; do echo $a; done";
    return "case \"$1\" in\n"
           "  --version) echo 'nvcc: NVIDIA (R) Cuda compiler driver'; echo 'Cuda compilation tools, release " + release + ", V" + full + "';;\n"
           "  --list-gpu-arch) " + list + ";;\n"
           "esac";
}
}  // namespace

TEST_CASE("several CUDA toolkits: /usr/local/cuda*, CUDA_HOME, nvcc on PATH, each once") {
    FakeMachine m;
    basic_machine(m);
    m.program("usr/local/cuda-11.1/bin/nvcc", fake_nvcc("11.1", "11.1.105", "compute_35 compute_86"));
    m.program("usr/local/cuda-12.1/bin/nvcc", fake_nvcc("12.1", "12.1.66", "compute_50 compute_90"));
    m.symlink((m.root() / "usr/local/cuda-12.1").string(), "usr/local/cuda");
    m.program("opt/cuda-10.2/bin/nvcc", fake_nvcc("10.2", "10.2.89", ""));   // too old for --list-gpu-arch
    auto r = m.roots((m.root() / "usr/local/cuda-11.1/bin").string());
    r.cuda_home = (m.root() / "opt/cuda-10.2").string();
    auto t = envlock::detect_target(r, knowledge());
    REQUIRE(t.toolkits.size() == 3);
    CHECK(t.toolkits[0].version == "10.2.89");   // CUDA_HOME first
    CHECK(has(t.toolkits[0].gpu_archs, "compute_75"));   // from the knowledge base
    CHECK(t.toolkits[1].version == "11.1.105");  // nvcc on PATH
    CHECK(t.toolkits[1].gpu_archs == std::vector<std::string>{"compute_35", "compute_86"});
    CHECK(t.toolkits[2].version == "12.1.66");   // /usr/local/cuda, the same toolkit as cuda-12.1
    CHECK(t.toolkits[2].path == (m.root() / "usr/local/cuda").string());
}

TEST_CASE("this machine: glibc, CPU flags, gcc and the CUDA toolkit, no driver") {
    auto t = envlock::detect_target(envlock::DetectRoots::host(), knowledge());
    CHECK(t.glibc == std::string(gnu_get_libc_version()));
    CHECK(!t.cpu_flags.empty());
    CHECK(t.cores > 0);
    if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) {
        MESSAGE("skipping the toolkit check: no nvcc at /usr/local/cuda/bin/nvcc on this machine");
        return;
    }
    REQUIRE(!t.toolkits.empty());
    CHECK(t.toolkits[0].path == "/usr/local/cuda");
    CHECK(!t.toolkits[0].gpu_archs.empty());
}

TEST_CASE("output parsers") {
    CHECK(envlock::parse_glibc_from_ldd("ldd (Debian GLIBC 2.36-9+deb12u4) 2.36\nCopyright") == "2.36");
    CHECK(envlock::parse_glibc_from_ldd("musl libc (x86_64)\nVersion 1.2.4\n").empty());
    CHECK(envlock::parse_nvcc_release("Cuda compilation tools, release 13.0, V13.0.88\n") == "13.0.88");
    CHECK(envlock::parse_nvcc_release("Cuda compilation tools, release 9.2\n") == "9.2");
    CHECK(envlock::conda_platform("Darwin", "arm64") == "osx-arm64");
    CHECK(envlock::conda_platform("Linux", "ppc64le") == "linux-ppc64le");
}

// ---------------------------------------------------------------- overrides

TEST_CASE("overrides describe another machine") {
    envlock::TargetOverrides o;
    o.gpus = {"RTX 4090", "sm_90"};
    o.driver = "525.60.13";
    o.glibc = "2.31";
    o.cpu_flags = std::vector<std::string>{"AVX", "avx2"};
    o.platform = "linux-64";
    auto t = envlock::apply_overrides({}, o, knowledge());
    REQUIRE(t.gpus.size() == 2);
    CHECK(t.gpus[0].sm_major * 10 + t.gpus[0].sm_minor == 89);
    CHECK(t.gpus[1].sm_major * 10 + t.gpus[1].sm_minor == 90);
    CHECK(t.driver_version == "525.60.13");
    CHECK(t.driver_cuda == "12.0");
    CHECK(t.glibc == "2.31");
    CHECK(t.cpu_flags == std::vector<std::string>{"avx", "avx2"});
}

TEST_CASE("--cuda-driver wins over the CUDA derived from --driver") {
    envlock::TargetOverrides o;
    o.driver = "525.60.13";
    o.cuda_driver = "12.2";
    CHECK(envlock::apply_overrides({}, o, knowledge()).driver_cuda == "12.2");
}

TEST_CASE("bad overrides are InputErrors") {
    auto bad = [](auto set) {
        envlock::TargetOverrides o;
        set(o);
        CHECK_THROWS_AS(envlock::apply_overrides({}, o, knowledge()), envlock::InputError);
    };
    bad([](auto& o) { o.gpus = {"Voodoo 3"}; });
    bad([](auto& o) { o.driver = "latest"; });
    bad([](auto& o) { o.driver = "100.1"; });   // older than any known toolkit's driver
    bad([](auto& o) { o.cuda_driver = "12"; });
    bad([](auto& o) { o.glibc = "two"; });
    bad([](auto& o) { o.platform = "amiga-68k"; });
    bad([](auto& o) { o.cpu_flags = std::vector<std::string>{"avx;rm -rf"}; });
}

TEST_CASE("--driver on a win-64 target is read against the Windows driver column") {
    envlock::TargetOverrides o;
    o.driver = "525.60.13";
    o.platform = "win-64";
    CHECK(envlock::apply_overrides({}, o, knowledge()).driver_cuda == "11.8");
    o.platform = "linux-64";
    CHECK(envlock::apply_overrides({}, o, knowledge()).driver_cuda == "12.0");
}

// conda's __osx is the macOS version (conda/plugins/virtual_packages/osx.py reads mac_ver(),
// which reads this plist's ProductVersion).
TEST_CASE("on a Mac the target's macOS version comes from SystemVersion.plist") {
    FakeMachine m;
    m.file("System/Library/CoreServices/SystemVersion.plist",
           "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n\t<key>ProductName</key>\n\t<string>macOS</string>\n"
           "\t<key>ProductVersion</key>\n\t<string>13.6.1</string>\n</dict>\n</plist>\n");
    auto roots = m.roots();
    roots.sysname = "Darwin";
    roots.machine = "arm64";
    auto t = envlock::detect_target(roots, knowledge());
    CHECK(t.platform == "osx-arm64");
    CHECK(t.osx == "13.6.1");
    CHECK(envlock::parse_mac_product_version("<key>ProductName</key><string>macOS</string>").empty());
}

TEST_CASE("--kernel and --osx describe a linux or osx target; --platform of another OS family drops the host's kernel, glibc and macOS facts") {
    envlock::Target host;
    host.platform = "linux-64";
    host.kernel = "6.1.0-13-amd64";
    host.glibc = "2.36";
    envlock::TargetOverrides o;
    o.platform = "osx-arm64";
    o.osx = "13.6";
    auto mac = envlock::apply_overrides(host, o, knowledge());
    CHECK(mac.osx == "13.6");
    CHECK(mac.kernel.empty());
    CHECK(mac.glibc.empty());
    CHECK(has(mac.given, "osx"));
    envlock::TargetOverrides k;
    k.kernel = "4.18.0-513.el8.x86_64";
    CHECK(envlock::apply_overrides(host, k, knowledge()).kernel == "4.18.0-513.el8.x86_64");
    CHECK(envlock::apply_overrides(host, k, knowledge()).glibc == "2.36");
    k.kernel = "latest";
    CHECK_THROWS_AS(envlock::apply_overrides(host, k, knowledge()), envlock::InputError);
    envlock::TargetOverrides bad;
    bad.osx = "Sonoma";
    CHECK_THROWS_AS(envlock::apply_overrides(host, bad, knowledge()), envlock::InputError);
}
