// The holes the 2026-11 audit left open after its 21 rows were corrected (issue 15): CUDA
// 13.1-13.4, the CUDA build of the plain PyPI torch wheel for 2.1-2.13, the torch 2.6/2.7 and
// mmdet 2.26-2.28 rows. Each case names where the value comes from; where no primary source was
// reachable the row says so, and the case checks that the answer is "unknown", not a guess.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"
#include "tests/support/run_envlock.hpp"

namespace kb = envlock::knowledge;
using envlock::test::run_envlock;

namespace {
const kb::Knowledge& builtin() {
    static const kb::Knowledge k = kb::load_builtin();
    return k;
}
bool has_int(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
const std::string kBeforeHoles = "00b95f6295d41db430c97186f2243c77453ba0413a83dc81293bfdf3aa1ae9c5";
}  // namespace

// ---------------------------------------------------------------- CUDA 13.x

TEST_CASE("newest host compilers of CUDA 13.1, 13.2, 13.3 (the Gentoo ebuilds that check the shipped host_config.h)") {
    CHECK(kb::newest_gcc_major(builtin(), "13.1") == 15);
    CHECK(kb::newest_clang_major(builtin(), "13.1") == 20);
    CHECK(kb::newest_gcc_major(builtin(), "13.2") == 15);
    CHECK(kb::newest_clang_major(builtin(), "13.2") == 21);
    CHECK(kb::newest_gcc_major(builtin(), "13.3") == 15);
    CHECK(kb::newest_clang_major(builtin(), "13.3.1") == 21);
    auto row = kb::host_compiler_limit(builtin(), "13.2");
    REQUIRE(row);
    CHECK_FALSE(row->unverified);
    CHECK(contains(row->source, "nvidia-cuda-toolkit-13.2.1.ebuild"));
}

TEST_CASE("nvcc 13.1-13.3 build what 13.0 builds; 13.4 adds Rubin's sm_107 (LLVM's MIN_VER table)") {
    auto base = kb::nvcc_sm_targets(builtin(), "13.0");
    for (const char* v : {"13.1", "13.2", "13.3"}) CHECK_MESSAGE(kb::nvcc_sm_targets(builtin(), v) == base, v);
    auto t134 = kb::nvcc_sm_targets(builtin(), "13.4");
    CHECK(has_int(t134, 107));
    CHECK(has_int(t134, 120));
    CHECK_FALSE(has_int(t134, 70));   // Volta left in 13.0
    CHECK_FALSE(has_int(kb::nvcc_sm_targets(builtin(), "13.3"), 107));
    const auto* row = kb::nvcc_targets_row(builtin(), "13.4");
    REQUIRE(row);
    CHECK(std::find(row->sm.begin(), row->sm.end(), "sm_107a") != row->sm.end());
    CHECK(contains(row->source, "CUDA_134"));
}

TEST_CASE("CUDA 13.3 ships with driver 610.43.02 (its runfile names; the 13.3 notes' Table 3)") {
    CHECK(kb::min_driver_for_cuda(builtin(), "13.3") == "610.43.02");
    CHECK(kb::min_driver_for_cuda(builtin(), "13.3.1") == "610.43.02");
    CHECK_FALSE(kb::min_driver_for_cuda(builtin(), "13.3", true));   // no Windows driver bundled since 13.1
    CHECK(kb::driver_max_cuda(builtin(), "610.43.02") == "13.3");
    CHECK(kb::driver_max_cuda(builtin(), "605.0") == "13.2");
}

TEST_CASE("CUDA 13.4's driver is recorded as unknown, not guessed; minor-version compatibility still answers") {
    CHECK_FALSE(kb::min_driver_for_cuda(builtin(), "13.4"));
    auto unknown = kb::unknown_driver_rows(builtin(), "13.4");
    REQUIRE(unknown.size() == 2);   // 13.4.1 (GA) and 13.4.2 (Update 1)
    CHECK(unknown.front()->linux_driver.empty());
    CHECK(contains(unknown.front()->why, "R615"));
    CHECK(kb::unknown_driver_rows(builtin(), "13.3").empty());
    // A driver newer than every known one is placed at the newest known toolkit, no further.
    CHECK(kb::driver_max_cuda(builtin(), "616.41") == "13.3");
    CHECK(kb::unknown_driver_rows_after(builtin(), "13.3").size() == 2);
    CHECK(kb::driver_runs_cuda(builtin(), "616.41", "13.4"));          // 13.x on >= 580
    CHECK_FALSE(kb::driver_runs_cuda_fully(builtin(), "616.41", "13.4"));
}

TEST_CASE("a knowledge file row without a driver must say unknown and why (schema)") {
    CHECK_THROWS(kb::load_texts({{"user.yaml", "cuda_drivers:\n- cuda: 14.0.0\n  source: my notes\n"}}));
    CHECK_THROWS(kb::load_texts({{"user.yaml", "cuda_drivers:\n- cuda: 14.0.0\n  linux: 700.1\n  unknown: true\n  why: x\n  source: my notes\n"}}));
    auto k = kb::load_texts({{"user.yaml", "cuda_drivers:\n- cuda: 14.0.0\n  unknown: true\n  why: not released yet\n  source: none\n"}});
    CHECK(kb::unknown_driver_rows(k, "14.0").size() == 1);
}

// ---------------------------------------------------------------- torch

TEST_CASE("the plain PyPI torch wheel is CUDA 12.1 for 2.1-2.4, 12.4 for 2.5-2.6, 12.6 for 2.7, 12.8 for 2.8-2.10, 13.0 for 2.11-2.13 (pytorch/test-infra release matrix)") {
    struct Row { const char* version; const char* variant; };
    for (Row r : {Row{"2.1.2", "cu121"}, Row{"2.3.1", "cu121"}, Row{"2.4.0", "cu121"}, Row{"2.4.1", "cu121"}, Row{"2.5.0", "cu124"},
                  Row{"2.5.1", "cu124"}, Row{"2.6.0", "cu124"}, Row{"2.7.0", "cu126"}, Row{"2.7.1", "cu126"}, Row{"2.8.0", "cu128"},
                  Row{"2.9.1", "cu128"}, Row{"2.10.0", "cu128"}, Row{"2.11.0", "cu130"}, Row{"2.12.0", "cu130"}, Row{"2.13.0", "cu130"},
                  Row{"2.14.0", "cu132"}}) {
        auto rel = kb::torch_release(builtin(), r.version);
        REQUIRE_MESSAGE(rel, r.version);
        CHECK_MESSAGE(rel->pypi_default == r.variant, r.version);
        // Each default is one of the release's own pip variants.
        CHECK_MESSAGE(std::find(rel->variants.begin(), rel->variants.end(), rel->pypi_default) != rel->variants.end(), r.version);
    }
    CHECK(contains(kb::torch_release(builtin(), "2.8.0")->pypi_default_source, "pytorch/test-infra@21480431"));
}

TEST_CASE("a series query (torch 2.7) answers with its newest patch release and names the others") {
    auto rel = kb::torch_release(builtin(), "2.7");
    REQUIRE(rel);
    CHECK(rel->version == "2.7.1");
    CHECK(kb::torch_series_releases(builtin(), "2.7") == std::vector<std::string>{"2.7.0", "2.7.1"});
    CHECK(kb::torch_release(builtin(), "2.7.0")->version == "2.7.0");
    CHECK_FALSE(kb::torch_release(builtin(), "2.99"));
}

TEST_CASE("torch 2.6 cu118/cu126 and 2.7 cu118 arch lists stay unverified: their wheels are on the PyTorch index only") {
    for (auto [v, variant] : {std::pair{"2.6.0", "cu118"}, std::pair{"2.6.0", "cu126"}, std::pair{"2.7.1", "cu118"}}) {
        const auto* row = kb::torch_arch_row(builtin(), v, variant, "pip");
        REQUIRE_MESSAGE(row, v, " ", variant);
        CHECK(row->unverified);
        CHECK(contains(row->why, "no primary source reachable"));
    }
    auto cu118 = kb::torch_arch_list(builtin(), "2.7.1", "cu118", "pip");
    REQUIRE(cu118);
    CHECK(has_int(cu118->sass, 37));
    CHECK_FALSE(kb::arch_list_runs_on(*cu118, 120));   // an RTX 5090 needs cu128
}

TEST_CASE("the PyPI builds of torch 2.5-2.9 are sourced by their own wheels: CUDA from the runtime pin, arch list by cuobjdump") {
    // scripts/read_torch_wheels.py read each wheel; the rows name the file read.
    struct Read {
        const char* version;
        const char* cuda;
        const char* wheel;
    };
    for (auto r : {Read{"2.5.1", "cu124", "torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl"},
                   Read{"2.6.0", "cu124", "torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl"},
                   Read{"2.7.1", "cu126", "torch-2.7.1-cp311-cp311-manylinux_2_28_x86_64.whl"},
                   Read{"2.8.0", "cu128", "torch-2.8.0-cp311-cp311-manylinux_2_28_x86_64.whl"},
                   Read{"2.9.1", "cu128", "torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl"}}) {
        CAPTURE(r.version);
        auto rel = kb::torch_release(builtin(), r.version);
        REQUIRE(rel);
        CHECK(rel->pypi_default == r.cuda);
        CHECK(contains(rel->pypi_default_source, r.wheel));
        const auto* row = kb::torch_arch_row(builtin(), r.version, r.cuda, "pip");
        REQUIRE(row);
        CHECK_FALSE(row->unverified);
        CHECK(contains(row->source, r.wheel));
    }
    // The 2.6 cu124 wheel (sm_50 .. sm_90, no PTX) runs on an H100 and not on an RTX 5090.
    auto cu124 = kb::torch_arch_list(builtin(), "2.6.0", "cu124", "pip");
    REQUIRE(cu124);
    CHECK(kb::arch_list_runs_on(*cu124, 90));
    CHECK_FALSE(kb::arch_list_runs_on(*cu124, 120));
}

// ---------------------------------------------------------------- OpenMMLab

TEST_CASE("mmdet 2.26-2.28 accept mmcv-full 1.3.17 up to 1.8.0 inclusive (unverified copies of the 2.x __init__.py)") {
    auto req = kb::gate_requirements(builtin(), "mmdet", "2.28.2");
    CHECK(std::find(req.begin(), req.end(), "mmcv-full>=1.3.17,<=1.8.0") != req.end());
    for (const auto& g : kb::gates(builtin()))
        if (g.package == "mmdet" && g.version_spec == ">=2.26.0,<3.0.0rc0") {
            CHECK(g.unverified);
            CHECK(contains(g.why, "could not be read"));
        }
}

// ---------------------------------------------------------------- history

TEST_CASE("the knowledge version moved: a lock made before the holes were filled is told which of its rows changed") {
    auto since = kb::changes_since(builtin(), kBeforeHoles);
    REQUIRE(since);
    auto row = [&](const std::string& name) {
        return std::find_if(since->begin(), since->end(), [&](const kb::KnowledgeChange& c) { return c.row == name; }) != since->end();
    };
    CHECK(row("cuda_drivers cuda=13.4.1"));
    CHECK(row("host_compilers cuda=13.2"));
    CHECK(row("nvcc_targets cuda=13.4"));
    CHECK(row("torch_releases version=2.8.0"));
    CHECK(row("gates mmdet>=2.26.0,<3.0.0rc0 mmcv-full"));
    for (const auto& c : *since) CHECK_MESSAGE(!c.source.empty(), c.row);

    envlock::Lock lock;
    lock.knowledge_version = kBeforeHoles;
    envlock::LockedPackage torch;
    torch.name = "torch";
    torch.version = "2.8.0";
    lock.packages.push_back(torch);
    auto report = kb::knowledge_change_report(builtin(), lock);
    CHECK(contains(report, "torch_releases version=2.8.0: pypi-default: null -> cu128"));
    CHECK_FALSE(contains(report, "host_compilers cuda=13.2"));   // not about this lock
}

// ---------------------------------------------------------------- the CLI

TEST_CASE("inspect torch 2.7 and inspect cuda 12.8 answer from sourced rows") {
    auto t = run_envlock({"inspect", "torch", "2.7"});
    CHECK(t.exit_code == 0);
    CHECK(contains(t.out, "2.7.1"));
    CHECK(contains(t.out, "plain PyPI wheel:      cu126"));
    CHECK(contains(t.out, "pytorch/test-infra@bad60f65"));
    CHECK(contains(t.out, "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120"));   // cu128 (CorridorKey's get_arch_list)
    auto c = run_envlock({"inspect", "cuda", "12.8"});
    CHECK(c.exit_code == 0);
    CHECK(contains(c.out, "570.26 (12.8 GA)"));
    CHECK(contains(c.out, "newest gcc:            14"));
    CHECK(contains(c.out, "newest clang:          19"));
    CHECK(contains(c.out, "Table 3"));
    CHECK(contains(c.out, "nvidia-cuda-toolkit-12.8.1-r1.ebuild"));
}

TEST_CASE("inspect cuda 13.4 says its driver is unknown (no source); inspect driver 616.41 says 13.4 may run") {
    auto c = run_envlock({"inspect", "cuda", "13.4"});
    CHECK(c.exit_code == 0);
    CHECK(contains(c.out, "min driver (linux):    unknown (no source)"));
    CHECK(contains(c.out, "sm_107"));
    auto j = nlohmann::json::parse(run_envlock({"inspect", "cuda", "13.4", "--json"}).out);
    CHECK(j["min-driver"]["linux"].is_null());
    CHECK(j["min-driver"]["unknown"]["releases"] == nlohmann::json::array({"13.4.1", "13.4.2"}));
    auto d = run_envlock({"inspect", "driver", "616.41"});
    CHECK(contains(d.out, "max CUDA:              13.3"));
    CHECK(contains(d.out, "CUDA 13.4:"));
    CHECK(contains(d.out, "unknown (no source)"));
    auto old = run_envlock({"inspect", "driver", "595.71.05"});
    CHECK_FALSE(contains(old.out, "CUDA 13.4:"));   // 13.3 is known and newer: no claim about 13.4
}

// Read from the wheels themselves (PyPI, 2026-11): the CUDA 13 `nvidia-cuda-nvcc` wheels hold a
// whole nvcc under nvidia/cu13/bin; the cu11/cu12 ones hold only ptxas, so they are no nvcc.
TEST_CASE("nvcc from PyPI: nvidia-cuda-nvcc 13.x holds a compiler, the -cu11/-cu12 wheels do not") {
    CHECK(kb::pypi_nvcc_home("nvidia-cuda-nvcc", "13.2.86") == "nvidia/cu13");
    CHECK(kb::pypi_nvcc_home("nvidia-cuda-nvcc", "13.0.48") == "nvidia/cu13");
    CHECK(kb::pypi_nvcc_home("nvidia-cuda-nvcc-cu12", "12.8.93").empty());
    CHECK(kb::pypi_nvcc_home("nvidia-cuda-nvcc-cu11", "11.8.89").empty());
    CHECK(kb::pypi_nvcc_home("nvidia-cuda-nvcc", "12.9.86").empty());
    CHECK(kb::pypi_nvcc_home("nvidia-cuda-nvrtc", "13.2.78").empty());
}
