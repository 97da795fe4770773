// The whole job on every built-in recipe, as a user runs it on the demo mirror (tests/mirror,
// one build shared by every case, reached through the mirrors file it writes and nothing else):
// resolve -> install -> verify -> run an import -> doctor healthy -> `install --repair` changes
// nothing -> the env removed and installed again from the warm cache, offline.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/mirror/mirror.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

struct Journey {
    fs::path dir;       // the mirror, the HTTP cache and one folder per recipe
    std::string mirrors_file;
};

const Journey& journey() {
    static Journey j = [] {
        Journey out;
        out.dir = scratch_dir("journey");
        envlock::mirror::MirrorOptions options;
        std::error_code ec;
        if (fs::is_directory(ENVLOCK_SHARED_DIR "/facts", ec)) options.shared_dir = ENVLOCK_SHARED_DIR;
        envlock::mirror::build_mirror((out.dir / "mirror").string(), options);
        out.mirrors_file = (out.dir / "mirror" / "mirrors.yaml").string();
        return out;
    }();
    return j;
}

// Every command of the journey sees the mirror through ENVLOCK_MIRRORS only, and builds the env
// as `envlock run` does whatever CUDA_HOME the machine running the suite has.
RunResult envlock_cmd(std::vector<std::string> args) {
    return run_envlock(args, {"ENVLOCK_MIRRORS=" + journey().mirrors_file});
}

std::string said(const RunResult& r) { return "stdout:\n" + r.out + "\nstderr:\n" + r.err; }

// The recipe's journey; `imports` is what `envlock run` imports in the env.
void walk(const std::string& recipe, const std::string& imports) {
    const fs::path work = journey().dir / recipe;
    const std::string lock = (work / "envlock.yaml").string();
    const std::string prefix = (work / "env").string();
    const std::string cache = (journey().dir / "cache").string();

    auto r = envlock_cmd({"resolve", recipe, "-o", lock, "--gpu", "RTX 3090", "--driver", "470.82.01", "--cache-dir", cache});
    REQUIRE_MESSAGE(r.exit_code == 0, "resolve " << recipe << "\n" << said(r));

    r = envlock_cmd({"install", lock, "--prefix", prefix, "--cache-dir", cache});
    REQUIRE_MESSAGE(r.exit_code == 0, "install " << recipe << "\n" << said(r));

    // verify: no failed check, and none passed that a stand-in cannot support (the locked nvcc
    // compiles nothing: its check is skipped, saying so). The probe is the demo's (it compiles).
    r = envlock_cmd({"verify", lock, "--prefix", prefix, "--no-probe", "--json"});
    CHECK_MESSAGE(r.exit_code == 0, "verify " << recipe << "\n" << said(r));
    auto report = nlohmann::json::parse(r.out, nullptr, false);
    REQUIRE_MESSAGE(report.is_object(), said(r));
    for (const auto& c : report["checks"]) {
        std::string name = c["check"], status = c["status"], what = c["what"];
        CHECK_MESSAGE(status != "failed", recipe << ": " << name << ": " << what);
        if (name == "nvcc" || name == "nvcc-torch") CHECK_MESSAGE(status == "skipped", recipe << ": " << name << ": " << what);
        if (name == "nvcc" && status == "skipped" && what.find("builds no CUDA") == std::string::npos)
            CHECK_MESSAGE(what.find("stand-in") != std::string::npos, recipe << ": " << what);
    }

    r = envlock_cmd({"run", "--prefix", prefix, "--lock", lock, "--", "python", "-c", "import " + imports + "; print('imported')"});
    CHECK_MESSAGE(r.exit_code == 0, "run import " << imports << "\n" << said(r));
    CHECK(r.out.find("imported") != std::string::npos);

    r = envlock_cmd({"doctor", "--prefix", prefix, "--lock", lock, "--no-code", "--json"});
    CHECK_MESSAGE(r.exit_code == 0, "doctor " << recipe << "\n" << said(r));

    r = envlock_cmd({"install", lock, "--prefix", prefix, "--cache-dir", cache, "--repair", "--json"});
    REQUIRE_MESSAGE(r.exit_code == 0, "install --repair " << recipe << "\n" << said(r));
    auto repair = nlohmann::json::parse(r.out, nullptr, false);
    REQUIRE_MESSAGE(repair.is_object(), said(r));
    CHECK_MESSAGE(repair["changed"] == false, "--repair of a fresh env changed it: " << r.out);
    CHECK(repair["add"].empty());
    CHECK(repair["remove"].empty());
    CHECK(repair["repair"]["restored"].empty());
    CHECK(repair["repair"]["removed-foreign"].empty());

    // Removed and installed again: everything comes from the warm package cache (--offline
    // fails on anything it would have to fetch), and the env imports again.
    fs::remove_all(prefix);
    r = envlock_cmd({"install", lock, "--prefix", prefix, "--cache-dir", cache, "--offline"});
    REQUIRE_MESSAGE(r.exit_code == 0, "reinstall from the warm cache " << recipe << "\n" << said(r));
    r = envlock_cmd({"run", "--prefix", prefix, "--lock", lock, "--", "python", "-c", "import " + imports + "; print('imported')"});
    CHECK_MESSAGE(r.exit_code == 0, "run import after reinstall " << imports << "\n" << said(r));
}

}  // namespace

// The cases below are the built-in recipes, each with what its env must import. Five of them lock
// sdists or git sources (an editable one, one in a subfolder of its repository), which install
// builds with the env's python and the host's real setuptools under the stand-ins' metadata.
const std::vector<std::string> kRecipes = {"BEVFormer", "Deformable-DETR", "EchoFusion", "Mask2Former", "detectron2", "mmdetection3d"};

TEST_CASE("every built-in recipe has a journey below") {
    std::set<std::string> found;
    for (const auto& e : fs::directory_iterator(ENVLOCK_SOURCE_DIR "/examples"))
        if (fs::exists(e.path() / "recipe.yaml")) found.insert(e.path().filename().string());
    CHECK(found == std::set<std::string>(kRecipes.begin(), kRecipes.end()));
}

TEST_CASE("journey: BEVFormer (torch 1.9.1+cu111 wheels, mmcv-full, mmdet3d from git, sdists)") {
    walk("BEVFormer", "torch, mmcv, mmdet, mmdet3d");
}

TEST_CASE("journey: Deformable-DETR (conda pytorch 1.10.0 with conda's cuda-nvcc 11.1)") {
    walk("Deformable-DETR", "torch, torchvision, numpy, scipy");
}

TEST_CASE("journey: EchoFusion (mmdet3d 0.17.3 from git, RADIal's DBReader and pypcd from git)") {
    walk("EchoFusion", "torch, mmcv, mmdet3d");
}

TEST_CASE("journey: Mask2Former (detectron2 v0.6, panopticapi and cityscapesScripts from git)") {
    walk("Mask2Former", "torch, detectron2");
}

TEST_CASE("journey: detectron2") { walk("detectron2", "torch"); }

TEST_CASE("journey: mmdetection3d") { walk("mmdetection3d", "torch, mmcv, mmdet"); }
