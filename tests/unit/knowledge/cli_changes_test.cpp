// `check` on a lock made with older facts names the knowledge rows that changed about it;
// `inspect changes` lists every changed row with its source.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

using envlock::test::run_envlock;
using nlohmann::json;

TEST_CASE("inspect changes lists every changed row with its source") {
    auto all = run_envlock({"inspect", "changes"});
    REQUIRE(all.exit_code == 0);
    CHECK(all.out.find("host_compilers cuda=12.3: gcc_max: 13 -> 12") != std::string::npos);
    auto j = json::parse(run_envlock({"inspect", "changes", "--json"}).out);
    REQUIRE(j.is_array());
    for (const auto& c : j) CHECK(!c["source"].get<std::string>().empty());
    auto bad = run_envlock({"inspect", "changes", "0000000000"});
    CHECK(bad.exit_code == 2);
}

TEST_CASE("check on a lock made with the old facts: out of date, naming the rows that changed about it") {
    auto k = envlock::knowledge::load_builtin();
    REQUIRE(!k.changes.empty());
    envlock::Lock lock;
    lock.spec.name = "old";
    lock.spec.requirements.push_back({"mmcv-full==1.4.0", "pypi", {"docs/install.md", 24}});
    envlock::Target t;
    t.platform = "linux-64";
    t.glibc = "2.31";
    t.driver_version = "545.23.06";
    t.driver_cuda = "12.3";
    t.gpus.push_back({"NVIDIA GeForce RTX 4090", 8, 9});
    lock.targets.push_back({"default", t});
    lock.knowledge_version = k.changes.front().replaces;
    lock.content_hash = envlock::lock_content_hash(lock.spec, lock.targets, lock.knowledge_version);
    lock.toolchain.nvcc = "12.3";
    lock.toolchain.gcc = "13";
    envlock::LockedPackage p;
    p.kind = envlock::Ecosystem::pypi;
    p.url = "https://example.invalid/mmcv_full-1.4.0.tar.gz";
    p.name = "mmcv-full";
    p.version = "1.4.0";
    p.sha256 = std::string(64, 'a');
    lock.packages.push_back(p);
    auto dir = envlock::test::scratch_dir("oldfacts");
    std::ofstream(dir / "envlock.yaml") << envlock::write_lock(lock);
    auto r = run_envlock({"check", (dir / "envlock.yaml").string()});
    auto j = run_envlock({"check", (dir / "envlock.yaml").string(), "--json"});
    std::filesystem::remove_all(dir);
    CHECK(j.exit_code == 1);
    auto verdict = json::parse(j.out);
    CHECK(verdict["ok"] == false);
    CHECK(verdict["reason"].get<std::string>().find("the knowledge base changed") == 0);
    auto rows = verdict["knowledge-changes"];
    CHECK(std::find(rows.begin(), rows.end(), "host_compilers cuda=12.3: gcc_max: 13 -> 12") != rows.end());
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("the knowledge base changed (" + lock.knowledge_version) != std::string::npos);
    CHECK(r.out.find("host_compilers cuda=12.3: gcc_max: 13 -> 12") != std::string::npos);
    CHECK(r.out.find("advisories id=yapf-0.40.2-mmcv-full-config") != std::string::npos);
    CHECK(r.out.find("run `envlock resolve` again") != std::string::npos);
}
