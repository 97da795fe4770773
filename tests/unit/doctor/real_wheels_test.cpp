// Real wheels from the package index pip is configured with (`pip download` in scripts/setup.sh), installed by
// Debian's pip into a venv's site-packages: numba 0.56.4 over mmdet3d's numba==0.48.0, and yapf
// 0.40.2 beside mmcv-full 1.4.0 (mmdet3d and mmcv-full publish no wheels on PyPI: they are built
// here with their real Requires-Dist). `pip check` over the same site-packages is the oracle.
// Without them (no index pip can reach at setup), the tests say so and skip.
#include <doctest/doctest.h>

#include <cstdlib>

#include "tests/unit/doctor/doctor_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

// The wheel scripts/setup.sh fetched with `pip download` into the build directory's
// test-wheels/ (tests talk to loopback only, so they never download); "" when it is not there.
std::string downloaded(const std::string& requirement, std::string& why) {
    const char* env = std::getenv("ENVLOCK_TEST_WHEELS");
    fs::path dir = env && *env ? fs::path(env) : fs::current_path() / "test-wheels";
    std::string name = requirement.substr(0, requirement.find('='));
    std::string version = requirement.substr(requirement.rfind('=') + 1);
    std::error_code ec;
    if (fs::is_directory(dir, ec))
        for (const auto& e : fs::directory_iterator(dir))
            if (e.path().filename().string().rfind(name + "-" + version + "-", 0) == 0) return e.path().string();
    why = "no " + name + " " + version + " wheel in " + dir.string() +
          " (scripts/setup.sh fetches it with pip download where pip's index is reachable)";
    return "";
}

void pip_install_files(const std::string& site, const std::vector<std::string>& wheels) {
    std::vector<std::string> argv = {kDebianPython, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile",
                                     "--disable-pip-version-check", "--target", site, "--only-binary=:all:", "--python-version", "3.8",
                                     "--implementation", "cp", "--platform", "manylinux2014_x86_64"};
    argv.insert(argv.end(), wheels.begin(), wheels.end());
    auto r = run_program(argv);
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
}

// `pip check` sees the site-packages through PYTHONPATH (beside the system's own packages).
std::string pip_check(const std::string& site) {
    auto r = run_program({"env", "PYTHONPATH=" + site, kDebianPython, "-m", "pip", "check", "--disable-pip-version-check"});
    std::string out = r.out + r.err;
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

TEST_CASE("real numba 0.56.4 wheel over mmdet3d 0.17.1's numba==0.48.0: named as pip check names it") {
    std::string why;
    std::string numba = downloaded("numba==0.56.4", why);
    if (numba.empty()) {
        MESSAGE("skipped: " << why);
        return;
    }
    Prefix p;
    p.make_venv();
    // mmdet3d 0.17.1's requirements/runtime.txt pins numba==0.48.0 (open-mmlab/mmdetection3d@v0.17.1).
    pip_install(p.site(), {{"mmdet3d", "0.17.1", {"numba==0.48.0", "lyft_dataset_sdk", "networkx>=2.2,<2.3", "nuscenes-devkit",
                                                   "plyfile", "scikit-image", "tensorboard", "trimesh<2.35.40"}, {}, {}}});
    pip_install_files(p.site(), {numba});
    auto scan = install::scan_prefix(p.root());
    std::set<std::string> names;
    for (const auto& d : scan.dists) names.insert(d.normalized);
    CHECK(names.count("numba"));
    auto r = doctor_of(p);
    const install::Finding* f = nullptr;
    for (const auto& x : r.findings)
        if (x.check == "requirement" && x.what.find("requires numba==0.48.0") != std::string::npos) f = &x;
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->what == "mmdet3d 0.17.1 requires numba==0.48.0, but numba 0.56.4 is installed");
    CHECK(f->fix.find("-m pip install \"numba==0.48.0\"") != std::string::npos);
    // numba's own Requires-Dist (llvmlite, numpy) are unmet too, as --no-deps left them.
    std::string check = pip_check(p.site());
    CHECK_MESSAGE(check.find("mmdet3d 0.17.1 has requirement numba==0.48.0, but you have numba 0.56.4") != std::string::npos, check);
    for (const auto& x : r.findings) {
        if (x.check != "requirement") continue;
        std::string dist = x.what.substr(0, x.what.find(' '));
        for (auto& c : dist) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        CHECK_MESSAGE(check.find(dist + " ") != std::string::npos, x.what << " is not in pip check's output:\n" << check);
    }
}

TEST_CASE("real yapf 0.40.2 wheel beside mmcv-full 1.4.0: the knowledge base's advisory, with the yapf==0.40.1 fix") {
    std::string why;
    std::string yapf = downloaded("yapf==0.40.2", why);
    if (yapf.empty()) {
        MESSAGE("skipped: " << why);
        return;
    }
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {{"mmcv-full", "1.4.0", {"addict", "numpy", "packaging", "Pillow", "pyyaml", "yapf"}, {}, {}}});
    pip_install_files(p.site(), {yapf});
    auto r = doctor_of(p);
    const auto* f = find_check(r, "advisory:yapf-0.40.2-mmcv-full-config");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->what == "yapf 0.40.2 with mmcv-full 1.4.0");
    CHECK(f->fix.find("-m pip install \"yapf==0.40.1\"") != std::string::npos);
    CHECK(f->why.find("FormatCode() got an unexpected keyword argument 'verify'") != std::string::npos);
}
