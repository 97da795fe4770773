// envlock resolve against a loopback index with the live PyPI's behaviour (tests/fixtures/live-index,
// recorded by scripts/record_live_index.py): no advertised core metadata, sidecars for some files
// only, Range support, wheels of tens of MB. What a resolve may cost there is asserted in bytes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/live_index_server.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

const char* kTarget = "platform: linux-64\nglibc: \"2.28\"\ncpu-flags: [sse4_2, avx, avx2, fma]\n";

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
                const std::string& lock_name = "envlock.yaml") {
    std::string spec = "spec:\n  name: live\n  python: \"3.10\"\n  indexes: [\"" + index.index_url() + "\"]\n  requirements:\n";
    for (const auto& r : requirements) spec += "    - {pypi: \"" + r + "\"}\n";
    write(dir / "spec.yaml", spec);
    write(dir / "target.yaml", kTarget);
    Resolve out;
    out.dir = dir;
    out.run = run_envlock({"resolve", (dir / "spec.yaml").string(), "-o", (dir / lock_name).string(), "--target",
                           (dir / "target.yaml").string(), "--cache-dir", (dir / "cache").string()});
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
