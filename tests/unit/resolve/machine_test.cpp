// `envlock resolve BEVFormer` against machines it does not fit, end to end over the demo mirror:
// the solve issue's "Done when" for a driver too old (names the upgrade) and for target warnings
// the lock records and `resolve` prints (a CPU without AVX, WSL with several GPUs).
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

struct Resolved {
    RunResult run;
    std::string lock;
    fs::path dir;
};

Resolved resolve_bevformer(const std::string& tag, std::vector<std::string> machine) {
    Resolved r;
    r.dir = temp_dir(tag);
    std::vector<std::string> args{"BEVFormer", "-o", (r.dir / "envlock.yaml").string()};
    args.insert(args.end(), machine.begin(), machine.end());
    r.run = resolve_with(args, r.dir);
    if (fs::exists(r.dir / "envlock.yaml")) r.lock = read_file(r.dir / "envlock.yaml");
    return r;
}

}  // namespace

// CUDA 11.1 GA shipped with driver 455.23; 11.x minor-version compatibility starts at 450.80.02
// (docs.nvidia.com/deploy/cuda-compatibility, tables 2 and 3, resolver/knowledge/cuda_driver.yaml).
TEST_CASE("BEVFormer on an RTX 3090 with driver 440.33.01: exit 1, and the message names the driver upgrade with both versions") {
    auto r = resolve_bevformer("bevdrv", {"--gpu", "RTX 3090", "--driver", "440.33.01", "--cpu-flags", "avx,avx2"});
    CHECK(r.run.exit_code == 1);
    CHECK(r.lock.empty());
    CAPTURE(r.run.err);
    CHECK(r.run.err.find("upgrade the NVIDIA driver: driver 440.33.01 runs CUDA <= 10.2; torch 1.9.1+cu111 (pypi) needs >= 455.23 (CUDA 11.1 GA)"
                         " or >= 450.80.02 with CUDA 11.x minor-version compatibility") != std::string::npos);
    CHECK(r.run.err.find("torch==1.9.1+cu111 (docs/install.md:15)") != std::string::npos);
    std::size_t lines = std::count(r.run.err.begin(), r.run.err.end(), '\n');
    CHECK(lines <= 40);
}

TEST_CASE("a CPU without AVX: the lock is written, records the torch warning with its source, and resolve prints it") {
    auto r = resolve_bevformer("bevnoavx", {"--gpu", "RTX 3090", "--driver", "470.82.01", "--cpu-flags", "sse,sse2,sse4_1,sse4_2"});
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    CHECK(r.run.err.find("warning: target default: Illegal instruction") != std::string::npos);
    CHECK(r.run.err.find("https://github.com/pytorch/pytorch/issues/37577") != std::string::npos);
    CHECK(r.lock.find("warnings:\n  - id: \"torch-cpu-without-avx\"\n    target: \"default\"") != std::string::npos);
    // The lock with its warning is a lock `check` accepts (schemas/envlock.schema.json allows it).
    auto check = run_envlock({"check", (r.dir / "envlock.yaml").string()});
    std::string said = check.out + check.err;
    CHECK_MESSAGE(check.exit_code == 0, said);
    CHECK(check.err.find("torch-cpu-without-avx") != std::string::npos);
}

TEST_CASE("the same machine with AVX gets the same packages and no warning") {
    auto with = resolve_bevformer("bevavx", {"--gpu", "RTX 3090", "--driver", "470.82.01", "--cpu-flags", "sse4_2,avx,avx2,fma"});
    REQUIRE_MESSAGE(with.run.exit_code == 0, with.run.err);
    CHECK(with.run.err.find("warning: target") == std::string::npos);
    CHECK(with.lock.find("\nwarnings:") == std::string::npos);
    auto without = resolve_bevformer("bevnoavx2", {"--gpu", "RTX 3090", "--driver", "470.82.01", "--cpu-flags", "sse4_2"});
    REQUIRE_MESSAGE(without.run.exit_code == 0, without.run.err);
    auto packages = [](const std::string& lock) { return lock.substr(lock.find("\npackages:"), lock.find("\ndecisions:") - lock.find("\npackages:")); };
    CHECK(packages(with.lock) == packages(without.lock));
}

TEST_CASE("WSL with two GPUs: torch 1.9.1 bundles an NCCL older than 2.11.4, which is warned about; one GPU is not") {
    auto dir = temp_dir("bevwsl");
    std::string target = "platform: linux-64\nwsl: true\nglibc: \"2.35\"\ncpu-flags: [sse4_2, avx, avx2, fma]\n"
                         "driver: \"470.82.01\"\ndriver-cuda: \"11.4\"\n"
                         "gpus:\n  - {name: \"NVIDIA GeForce RTX 3090\", sm: sm_86}\n  - {name: \"NVIDIA GeForce RTX 3090\", sm: sm_86}\n"
                         "compilers:\n  - {kind: gcc, path: /usr/bin/gcc, version: \"12.2.0\"}\n";
    write_file(dir / "two.yaml", target);
    auto two = resolve_with({"BEVFormer", "-o", (dir / "two" / "envlock.yaml").string(), "--target", (dir / "two.yaml").string()}, dir);
    REQUIRE_MESSAGE(two.exit_code == 0, two.err);
    CHECK(two.err.find("[torch-bundled-nccl-wsl-multi-gpu]") != std::string::npos);
    CHECK(two.err.find("https://docs.nvidia.com/deeplearning/nccl/release-notes/rel_2-10-3.html") != std::string::npos);

    std::string one_gpu = target;
    one_gpu.erase(one_gpu.find("  - {name", one_gpu.find("  - {name") + 1), std::string("  - {name: \"NVIDIA GeForce RTX 3090\", sm: sm_86}\n").size());
    write_file(dir / "one.yaml", one_gpu);
    auto one = resolve_with({"BEVFormer", "-o", (dir / "one" / "envlock.yaml").string(), "--target", (dir / "one.yaml").string()}, dir);
    REQUIRE_MESSAGE(one.exit_code == 0, one.err);
    CHECK(one.err.find("nccl") == std::string::npos);
}

// Deliver 3b: the blamed pins loosened one step at a time, each pulled back to the release
// nearest its pin. torch 2.0.0+cu118 is the oldest build whose arch list carries sm_90
// (resolver/knowledge/torch.yaml, pytorch/builder release/2.0 build_cuda.sh); mmdet3d
// 1.0.0rc1 is the first release past the THC advisory (mmdet3d-thc-torch-1.11), and its
// gates (mmcv-full>=1.4.8,<=1.5.0, numba==0.53.0: facts/mmcv.yaml) move the pins beside it.
TEST_CASE("BEVFormer on an H100: exit 1 with the nearest working set, on one screen, and that set resolves on the H100") {
    auto r = resolve_bevformer("bevh100set", {"--gpu", "H100", "--driver", "535.104.05", "--cpu-flags", "avx,avx2"});
    CHECK(r.run.exit_code == 1);
    CHECK(r.lock.empty());
    CAPTURE(r.run.err);
    CHECK(std::count(r.run.err.begin(), r.run.err.end(), '\n') <= 40);
    CHECK(r.run.err.find("the nearest working set on this machine") != std::string::npos);
    CHECK(r.run.err.find("torch==1.9.1+cu111 (docs/install.md:15) -> torch 2.0.0+cu118") != std::string::npos);
    CHECK(r.run.err.find("torchvision==0.10.1+cu111 (docs/install.md:15) -> torchvision 0.15.1+cu118") != std::string::npos);
    CHECK(r.run.err.find("(docs/install.md:41) -> mmdet3d 1.0.0rc1") != std::string::npos);
    CHECK(r.run.err.find("mmcv-full==1.4.0 (docs/install.md:27) -> mmcv-full 1.4.8 (pypi), built from its sdist") != std::string::npos);
    CHECK(r.run.err.find("numba==0.48.0 (docs/install.md:47) -> numba 0.53.0") != std::string::npos);
    CHECK(r.run.err.find("mmdet==2.14.0 (docs/install.md:33) -> mmdet 2.19.0") != std::string::npos);

    // The set it names is a lock: the recipe's spec with those pins resolves on the same H100.
    auto spec = run_envlock({"spec", "BEVFormer"});
    REQUIRE(spec.exit_code == 0);
    std::string s = spec.out;
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"torch==1.9.1+cu111", "torch==2.0.0"}, {"torchvision==0.10.1+cu111", "torchvision==0.15.1"},
             {"torchaudio==0.9.1", "torchaudio==2.0.1"}, {"{pypi: mmcv-full==1.4.0", "{pypi: mmcv-full==1.4.8"},
             {"mmdet==2.14.0", "mmdet==2.19.0"}, {"mmsegmentation==0.14.1", "mmsegmentation==0.20.0"},
             {"numba==0.48.0", "numba==0.53.0"}, {"\"mmcv-full>=1.3.8,<=1.4.0\"", "mmcv-full==1.4.8"},
             {"\"mmdet>=2.14.0,<=3.0.0\"", "mmdet==2.19.0"}, {"\"mmsegmentation>=0.14.1,<=1.0.0\"", "mmsegmentation==0.20.0"}}) {
        auto at = s.find(from);
        REQUIRE_MESSAGE(at != std::string::npos, from);
        s.replace(at, from.size(), to);
    }
    auto src = s.find("    - {name: mmdet3d, git:");
    REQUIRE(src != std::string::npos);
    s.erase(src, s.find('\n', src) + 1 - src);
    s.insert(s.find("  sources:"), "    - {pypi: mmdet3d==1.0.0rc1, from: docs/install.md:41}\n");
    auto dir = temp_dir("bevh100fixed");
    write_file(dir / "spec.yaml", s);
    auto fixed = resolve_with({(dir / "spec.yaml").string(), "--gpu", "H100", "--driver", "535.104.05", "--cpu-flags", "avx,avx2"}, dir);
    REQUIRE_MESSAGE(fixed.exit_code == 0, fixed.err);
    auto lock = read_file(dir / "envlock.yaml");
    CHECK(locked_version(lock, "torch") == "2.0.0+cu118");
    CHECK(locked_version(lock, "mmdet3d") == "1.0.0rc1");
    CHECK(lock.find("cuda-arch-list: \"9.0\"") != std::string::npos);
}
