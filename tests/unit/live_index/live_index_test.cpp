// envlock resolve against a loopback index with the live PyPI's behaviour (tests/fixtures/live-index,
// recorded by scripts/record_live_index.py): no advertised core metadata, sidecars for some files
// only, Range support, wheels of tens of MB. What a resolve may cost there is asserted in bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "tests/support/live_index_server.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

const std::string kTarget = "platform: linux-64\nglibc: \"2.28\"\ncpu-flags: [sse4_2, avx, avx2, fma]\n";
// The same machine with one GPU whose driver runs CUDA 12.4, as plain-PyPI torch 2.1.2 (CUDA 12.1) needs.
const std::string kGpuTarget = kTarget + "driver: \"550.54.15\"\ndriver-cuda: \"12.4\"\ngpus:\n  - {name: \"NVIDIA GeForce RTX 4090\", sm: sm_89}\n";

struct Resolve {
    fs::path dir;
    RunResult run;
    std::string lock;
};

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

std::string read(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// Resolves `requirements` for python 3.10 on x86_64 manylinux_2_28 against the index, into
// `lock_name` under `dir` (a new lock name: no earlier lock or resolve memo short-cuts the run).
Resolve resolve(const LiveIndexServer& index, const fs::path& dir, const std::vector<std::string>& requirements,
                const std::string& lock_name = "envlock.yaml", const std::string& target = kTarget, const std::string& cache = "cache") {
    std::string spec = "spec:\n  name: live\n  python: \"3.10\"\n  indexes: [\"" + index.index_url() + "\"]\n  requirements:\n";
    for (const auto& r : requirements) spec += "    - {pypi: \"" + r + "\"}\n";
    write(dir / "spec.yaml", spec);
    write(dir / "target.yaml", target);
    Resolve out;
    out.dir = dir;
    out.run = run_envlock({"resolve", (dir / "spec.yaml").string(), "-o", (dir / lock_name).string(), "--target",
                           (dir / "target.yaml").string(), "--cache-dir", (dir / cache).string()});
    out.lock = read(dir / lock_name);
    return out;
}

bool locks(const std::string& lock, const std::string& name, const std::string& version) {
    return lock.find("name: \"" + name + "\"\n    version: \"" + version + "\"") != std::string::npos;
}

const std::vector<std::string> kFour{"requests", "numba==0.58.1", "numpy<2", "yapf==0.40.1"};

}  // namespace

TEST_CASE("live index: the four-requirement spec reads metadata by ranges, only from wheels the target installs") {
    LiveIndexServer index;
    auto r = resolve(index, scratch_dir("live-four"), kFour);
    INFO(r.run.err);
    REQUIRE(r.run.exit_code == 0);
    CHECK(locks(r.lock, "numba", "0.58.1"));
    CHECK(locks(r.lock, "numpy", "1.26.4"));
    CHECK(locks(r.lock, "yapf", "0.40.1"));
    // Every wheel whose bytes were read is the one of its version that python 3.10 on x86_64
    // manylinux installs best: never a macOS, aarch64 or other-Python wheel.
    auto recorded = index.recorded_files();
    for (const auto& f : index.files_read()) CHECK_MESSAGE(recorded.count(f), f);
    // Each wheel declares over 32 MB: one whole download would break the bound.
    for (const auto& s : index.served())
        if (s.path.rfind("/files/", 0) == 0 && s.status < 300) CHECK_MESSAGE(s.bytes < (1u << 20), s.path);
    MESSAGE("bytes served: " << index.bytes_served() << " in " << index.served().size() << " answers; " << r.run.out);
    CHECK(index.bytes_served() < (std::uint64_t(12) << 20));
}

TEST_CASE("live index: a warm resolve reads no metadata over the network again") {
    LiveIndexServer index;
    fs::path dir = scratch_dir("live-warm");
    auto cold = resolve(index, dir, kFour);
    REQUIRE(cold.run.exit_code == 0);
    index.clear();
    auto warm = resolve(index, dir, kFour, "again.yaml");
    INFO(warm.run.err);
    REQUIRE(warm.run.exit_code == 0);
    CHECK(index.files_read().empty());
    for (const auto& s : index.served()) CHECK_MESSAGE(s.path.rfind("/files/", 0) != 0, s.path);
    CHECK(warm.lock.substr(warm.lock.find("packages:")) == cold.lock.substr(cold.lock.find("packages:")));
}

TEST_CASE("live index: a server that refuses ranges gives its sidecars, else whole files, said in the notes") {
    LiveIndexServer index({.padding = 64 * 1024, .ranges = false});
    auto r = resolve(index, scratch_dir("live-noranges"), {"yapf==0.40.1", "requests"});
    INFO(r.run.err);
    REQUIRE(r.run.exit_code == 0);
    bool sidecar_used = false, whole_read = false;
    for (const auto& s : index.served()) {
        if (s.path.size() > 9 && s.path.compare(s.path.size() - 9, 9, ".metadata") == 0 && s.status == 200) sidecar_used = true;
        if (s.path.rfind("/files/", 0) == 0 && s.path.find(".whl.metadata") == std::string::npos && s.status == 200 && s.range.empty()) {
            whole_read = true;
            // A file with a sidecar is never downloaded whole.
            CHECK_FALSE(index.has_sidecar(s.path.substr(7)));
        }
    }
    CHECK(sidecar_used);
    CHECK(whole_read);
    CHECK(r.run.err.find("refuses range requests") != std::string::npos);
}

TEST_CASE("live index: the torch spec costs under 2 MB and reads no other platform's or Python's wheel") {
    // Issue #28's torch spec: 53 GB and the OOM killer before metadata was read by ranges from
    // the wheel the target installs. Its pages and METADATA reads now fit in 2 MB, although every
    // wheel served declares over 32 MB and torch's own page lists every platform's wheels.
    LiveIndexServer index;
    auto r = resolve(index, scratch_dir("live-torch"),
                     {"torch==2.1.2", "torchvision==0.16.2", "numpy<2", "numba==0.58.1", "yapf==0.40.1", "mmengine==0.10.3"},
                     "envlock.yaml", kGpuTarget);
    INFO(r.run.err);
    REQUIRE(r.run.exit_code == 0);
    CHECK(locks(r.lock, "torch", "2.1.2"));
    CHECK(locks(r.lock, "nvidia-cudnn-cu12", "8.9.2.26"));
    CHECK(locks(r.lock, "mmengine", "0.10.3"));
    auto recorded = index.recorded_files();
    for (const auto& f : index.files_read()) {
        CHECK_MESSAGE(recorded.count(f), f);
        CHECK_MESSAGE(f.find("macosx") == std::string::npos, f);
        CHECK_MESSAGE(f.find("aarch64") == std::string::npos, f);
        CHECK_MESSAGE(f.find("win_amd64") == std::string::npos, f);
    }
    for (const auto& s : index.served())
        if (s.path.rfind("/files/", 0) == 0 && s.status < 300) CHECK_MESSAGE(s.bytes < (1u << 20), s.path);
    // Each page once, however many rounds the solve took; the rest is metadata reads.
    std::uint64_t page_bytes = 0, file_bytes = 0;
    std::set<std::string> pages;
    for (const auto& s : index.served()) {
        if (s.path.rfind("/simple/", 0) == 0) CHECK_MESSAGE(pages.insert(s.path).second, "fetched twice: " << s.path);
        (s.path.rfind("/simple/", 0) == 0 ? page_bytes : file_bytes) += s.bytes;
    }
    MESSAGE("bytes served: " << index.bytes_served() << " in " << index.served().size() << " answers; pages " << page_bytes
                             << ", metadata reads " << file_bytes);
    CHECK(file_bytes < (std::uint64_t(2) << 20));
    CHECK(page_bytes + file_bytes == index.bytes_served());
}

TEST_CASE("live index: the lock does not depend on the order the answers arrive in") {
    // The closure asks for each page and metadata read as soon as it is known to be needed, so
    // the answers come back in whatever order the server sends them. What is decided from them
    // (which versions a window reaches, which are ruled out) is decided again when what it
    // depends on arrives: the same index gives the same lock, byte for byte, in any order.
    LiveIndexServer index;
    fs::path dir = scratch_dir("live-order");
    const std::vector<std::string> spec{"torch==2.1.2", "torchvision==0.16.2", "numpy<2", "numba==0.58.1", "yapf==0.40.1",
                                        "mmengine==0.10.3"};
    std::string first;
    std::vector<std::vector<std::string>> orders;
    for (std::uint32_t seed : {0u, 1u, 2u, 3u}) {
        index.clear();
        index.set_delays(seed, seed == 0 ? 0 : 60);   // each answer held back 0-60 ms, per seed
        auto r = resolve(index, dir, spec, "lock-" + std::to_string(seed) + ".yaml", kGpuTarget, "cache-" + std::to_string(seed));
        INFO("seed " << seed << ": " << r.run.err);
        REQUIRE(r.run.exit_code == 0);
        if (seed == 0) first = r.lock;
        CHECK(r.lock == first);
        orders.emplace_back();
        for (const auto& s : index.served()) orders.back().push_back(s.path + " " + s.range);
    }
    index.set_delays(0, 0);
    // The delays did change the order the requests were answered in, and not what was asked.
    CHECK(orders[1] != orders[2]);
    CHECK(orders[2] != orders[3]);
    for (auto& order : orders) std::sort(order.begin(), order.end());
    for (std::size_t k = 1; k < orders.size(); ++k) CHECK(orders[k] == orders[0]);
}
