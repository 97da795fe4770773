// conda's OS virtual packages (conda/plugins/virtual_packages/{linux,osx,glibc}.py): __linux is
// the target's kernel release, __osx its macOS version, __glibc its C library. conda-forge's
// compiled packages depend on them (`__osx >=10.13` on every osx build since 2023, `__glibc
// >=2.17,<3.0.a0` on linux, `__linux >=4.18` on some). The lock keeps a linux target's kernel only
// where a chosen package depends on __linux's version (#30: no host fact nothing depends on).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/target.hpp"
#include "resolver/solve/solve.hpp"
#include "tests/unit/solve/records.hpp"
#include "tests/unit/solve/snapshot_channels.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

SolveInput conda_input(Target target, const IndexRecords& records, const std::string& requirement) {
    SolveInput in;
    in.spec.name = "os-virtuals";
    in.spec.requirements = {conda_req(requirement, 3)};
    in.targets.push_back({"default", std::move(target)});
    in.knowledge = knowledge::load_builtin();
    in.channels = {{"conda-forge", records}};
    return in;
}

Target linux_kernel(const std::string& kernel) {
    Target t = linux_machine("", "", {});
    t.kernel = kernel;
    return t;
}

Target mac(const std::string& platform, const std::string& version) {
    Target t;
    t.platform = platform;
    t.osx = version;
    return t;
}

IndexRecord osx_record(const std::string& name, const std::string& version, std::vector<std::string> depends, const std::string& subdir) {
    IndexRecord r = conda_record(name, version, "h1234567_0", std::move(depends));
    r.subdir = subdir;
    r.url = "https://conda.anaconda.org/conda-forge/" + subdir + "/" + r.filename;
    return r;
}

}  // namespace

TEST_CASE("__linux is conda's reading of the kernel release: its first three or four numbers (conda's linux plugin)") {
    CHECK(linux_version("5.15.0-91-generic") == "5.15.0");
    CHECK(linux_version("6.1.55.1-microsoft-standard-WSL2") == "6.1.55.1");
    CHECK(linux_version("4.18") == "4.18");
    CHECK(linux_version("3.10.0-1160.el7.x86_64") == "3.10.0");
    CHECK(linux_version("5") == "0");   // conda: no match gives version 0
    CHECK(linux_version("") == "");
}

TEST_CASE("a record that depends on __linux >=4.18 installs on a 5.15 kernel, and the lock keeps the kernel it depends on") {
    IndexRecords records = {conda_record("cuda-driver-dev", "12.4.127", "h5888daf_0", {"__linux >=4.18"})};
    auto out = solve(conda_input(linux_kernel("5.15.0"), records, "cuda-driver-dev"));
    REQUIRE_MESSAGE(out.solved, out.explanation);
    CHECK(out.lock.targets.at(0).target.kernel == "5.15.0");
    // The hash covers the kernel the lock keeps: `check` recomputes it from the lock's targets.
    CHECK(out.lock.content_hash == lock_content_hash(out.lock.spec, out.lock.targets, out.lock.knowledge_version));
}

TEST_CASE("a record that depends on __linux >=4.18 is refused on a 3.10 kernel, naming the kernel") {
    IndexRecords records = {conda_record("cuda-driver-dev", "12.4.127", "h5888daf_0", {"__linux >=4.18"})};
    auto out = solve(conda_input(linux_kernel("3.10.0"), records, "cuda-driver-dev"));
    CHECK_FALSE(out.solved);
    CHECK(out.explanation.find("__linux >=4.18; the target has kernel 3.10.0") != std::string::npos);
}

TEST_CASE("an unknown kernel is __linux 0 (conda's fallback): a bare __linux holds, a version of it is refused with how to give one") {
    IndexRecords bare = {conda_record("linux-only", "1.0", "0", {"__linux"})};
    auto ok = solve(conda_input(linux_kernel(""), bare, "linux-only"));
    CHECK_MESSAGE(ok.solved, ok.explanation);
    IndexRecords versioned = {conda_record("cuda-driver-dev", "12.4.127", "h5888daf_0", {"__linux >=4.18"})};
    auto out = solve(conda_input(linux_kernel(""), versioned, "cuda-driver-dev"));
    CHECK_FALSE(out.solved);
    CHECK(out.explanation.find("kernel not known (give --kernel") != std::string::npos);
}

TEST_CASE("a lock whose packages do not depend on __linux's version keeps no kernel: another machine locks the same bytes (#30)") {
    IndexRecords records = {conda_record("zlib", "1.2.13", "hd590300_5", {"__glibc >=2.17,<3.0.a0", "__linux"})};
    auto a = solve(conda_input(linux_kernel("5.15.0"), records, "zlib"));
    auto b = solve(conda_input(linux_kernel("6.8.0"), records, "zlib"));
    REQUIRE_MESSAGE(a.solved, a.explanation);
    REQUIRE_MESSAGE(b.solved, b.explanation);
    CHECK(a.lock.targets.at(0).target.kernel.empty());
    CHECK(write_lock(a.lock) == write_lock(b.lock));
}

TEST_CASE("__osx is the target's macOS version: __osx >=10.13 installs on macOS 13.6, is refused on 10.12, and needs a version to be known") {
    IndexRecords records = {osx_record("libcxx", "17.0.6", {"__osx >=10.13"}, "osx-64")};
    auto ok = solve(conda_input(mac("osx-64", "13.6"), records, "libcxx"));
    REQUIRE_MESSAGE(ok.solved, ok.explanation);
    CHECK(ok.lock.targets.at(0).target.osx == "13.6");
    auto old = solve(conda_input(mac("osx-64", "10.12"), records, "libcxx"));
    CHECK_FALSE(old.solved);
    CHECK(old.explanation.find("__osx >=10.13; the target has macOS 10.12") != std::string::npos);
    auto unknown = solve(conda_input(mac("osx-64", ""), records, "libcxx"));
    CHECK_FALSE(unknown.solved);
    CHECK(unknown.explanation.find("macOS version not known (give --osx") != std::string::npos);
}

// The real records: every record of the snapshot channels that depends on an OS virtual package
// (the pytorch channel's faiss/libfaiss/torchdistx-cc and conda-forge's libcxx on __glibc; none
// of them on __linux or __osx, whose cases are the fixtures above) is matched by the virtual
// packages of a target that meets it, and refused by one below.
TEST_CASE("snapshot records that depend on __glibc, __linux or __osx: each holds on a target that meets it and is refused below") {
    namespace fs = std::filesystem;
    const fs::path snap = snapshots_dir();
    const char* files[] = {"rattler-pytorch-channel/linux-64/repodata.json", "conda-subchannel-demo-conda-forge-py39/linux-64/repodata.json",
                           "conda-subchannel-demo-conda-forge-py39/noarch/repodata.json"};
    if (!fs::exists(snap / files[0])) {
        MESSAGE("skipped: no ../shared/snapshots");
        return;
    }
    size_t checked = 0;
    for (const char* file : files) {
        std::ifstream in(snap / file);
        std::stringstream text;
        text << in.rdbuf();
        auto doc = nlohmann::json::parse(text.str());
        for (const char* key : {"packages", "packages.conda"}) {
            if (!doc.contains(key)) continue;
            for (const auto& [filename, rec] : doc[key].items()) {
                std::vector<std::string> virtual_deps;
                for (const auto& d : rec.value("depends", nlohmann::json::array()))
                    if (auto s = d.get<std::string>(); s.rfind("__glibc", 0) == 0 || s.rfind("__linux", 0) == 0 || s.rfind("__osx", 0) == 0)
                        virtual_deps.push_back(s);
                if (virtual_deps.empty()) continue;
                CAPTURE(filename);
                // The record alone (its other dependencies left out): what the virtual packages decide.
                IndexRecords records = {conda_record(rec["name"], rec["version"], rec["build"], virtual_deps)};
                // A driver and GPU beside: the cu113/cu116 builds need them (their build strings).
                Target meets = linux_machine("535.104.05", "12.2", {rtx3090()});
                meets.kernel = "5.15.0";
                auto ok = solve(conda_input(meets, records, rec["name"].get<std::string>() + " " + rec["version"].get<std::string>()));
                CHECK_MESSAGE(ok.solved, ok.explanation);
                Target below = meets;
                below.kernel = "2.6.32";
                below.glibc = "2.12";
                auto refused = solve(conda_input(below, records, rec["name"].get<std::string>() + " " + rec["version"].get<std::string>()));
                CHECK_FALSE(refused.solved);
                CHECK(refused.explanation.find("the target has glibc 2.12") != std::string::npos);
                ++checked;
            }
        }
    }
    CHECK(checked == 20);
}
