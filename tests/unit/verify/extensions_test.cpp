// `envlock verify --build-extensions` for real: a small C++ extension of our own built against
// Debian's torch (python3-torch + libtorch-dev) in a venv that sees it, imported afterwards; the
// demo mirror's mmdet3d stand-in with its torch CUDA op, which a CPU-only torch cannot build, and
// verify's explanation of it (the torch-free CUDA extension that does build: cuda_extension_test).
// Skipped with a message without Debian's torch.
#include "install/verify.hpp"
#include "resolver/lock/lock.hpp"
#include "install/run_env.hpp"
#include "resolver/knowledge/detect.hpp"
#include "tests/mirror/git_repo.hpp"
#include "tests/mirror/model.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/unit/verify/verify_fixture.hpp"

#include <nlohmann/json.hpp>

using namespace envlock;
using namespace envlock::test;

namespace {

const char* kSetupPy = R"PY(# A one-op C++ extension for envlock's verify tests.
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name='scaleop',
    version='0.1',
    ext_modules=[CppExtension('scaleop', ['scaleop.cpp'])],
    cmdclass={'build_ext': BuildExtension},
)
)PY";

const char* kScaleOp = R"CPP(// scaleop: multiplies a tensor by a factor (envlock verify test fixture).
#include <torch/extension.h>

torch::Tensor scale(const torch::Tensor& x, double factor) { return x * factor; }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale", &scale, "x * factor"); }
)CPP";

// A venv on Debian's python that sees its dist-packages (torch among them).
bool make_venv(const fs::path& prefix) {
    auto r = run_process({"/usr/bin/python3", "-m", "venv", "--system-site-packages", "--without-pip", prefix.string()}, 120);
    return r.exit_code == 0;
}

}  // namespace

TEST_CASE("verify --build-extensions: a C++ extension builds against Debian's torch and imports; a stale build/ and .so go first") {
    if (!debian_torch_importable()) {
        MESSAGE("skipped: Debian's python3-torch (with libtorch-dev) is not importable by /usr/bin/python3");
        return;
    }
    TempDir root;
    fs::path prefix = root.path / "env", checkout = root.path / "checkout";
    REQUIRE(make_venv(prefix));
    write_text(checkout / "scaleop/setup.py", kSetupPy);
    write_text(checkout / "scaleop/scaleop.cpp", kScaleOp);
    // What another compiler left behind: objects in build/ and an in-place module that would
    // shadow the new one (facts row 41).
    write_text(checkout / "scaleop/build/temp.linux-x86_64-cpython-311/scaleop.o", "object built by another compiler");
    write_text(checkout / "scaleop/scaleop.cpython-311-x86_64-linux-gnu.so", "not an ELF file: left by an older build");
    write_text(checkout / "scaleop/scaleop.egg-info/PKG-INFO", "Name: scaleop\n");

    Lock lock;
    lock.spec.name = "scaleop-demo";
    lock.spec.extensions.push_back({"scaleop", "scaleop", "python setup.py develop", "scaleop", {}, false});
    NamedTarget t;
    t.name = "default";
    t.target.platform = "linux-64";
    lock.targets.push_back(t);
    lock.knowledge_version = builtin_knowledge().version;
    lock.content_hash = lock_content_hash(lock.spec, lock.targets, lock.knowledge_version);
    fs::path lock_file = checkout / "envlock.yaml";
    write_text(lock_file, write_lock(lock));

    auto r = run_envlock({"verify", lock_file.string(), "--prefix", prefix.string(), "--build-extensions", "--json"});
    INFO(r.out, r.err);
    auto j = nlohmann::json::parse(r.out);
    const nlohmann::json* build = nullptr;
    const nlohmann::json* import = nullptr;
    for (const auto& c : j["checks"]) {
        if (c["check"] == "build scaleop") build = &c;
        if (c["check"] == "import scaleop") import = &c;
    }
    REQUIRE(build);
    CHECK((*build)["status"] == "passed");
    CHECK((*build)["what"].get<std::string>().find("removed stale build/, scaleop.cpython-311-x86_64-linux-gnu.so, scaleop.egg-info/") != std::string::npos);
    REQUIRE(import);
    CHECK((*import)["status"] == "passed");
    CHECK(r.exit_code == 0);
    // build/ was removed and made anew: the object there now is the compiler's, not the stale one.
    fs::path object = checkout / "scaleop/build/temp.linux-x86_64-cpython-311/scaleop.o";
    CHECK((!fs::exists(object) || read_text(object) != "object built by another compiler"));
    // The build log kept in the prefix shows the environment verify set.
    std::string log = read_text((*build)["log"].get<std::string>());
    CHECK(log.find("# MAX_JOBS=") != std::string::npos);
    // The module really works.
    auto run = run_process({(prefix / "bin/python").string(), "-c", "import torch, scaleop; print(scaleop.scale(torch.ones(3), 2.5).sum().item())"}, 120);
    CHECK(run.out.find("7.5") != std::string::npos);
}

TEST_CASE("the demo mirror's CUDA op with the system nvcc: Debian's CPU-only torch does not allow it, and verify says why") {
    if (!debian_torch_importable() || system_nvcc().empty()) {
        MESSAGE("skipped: needs Debian's python3-torch and nvcc at /usr/local/cuda");
        return;
    }
    TempDir root;
    fs::path prefix = root.path / "env", checkout = root.path / "checkout";
    REQUIRE(make_venv(prefix));
    mirror::Mmdet3dRelease release;
    release.version = "0.17.1";
    release.mmcv_min = "1.3.8";
    release.mmcv_max = "1.4.0";
    for (const auto& [path, content] : mirror::mmdet3d_tree(release)) write_text(checkout / "mmdetection3d" / path, content);

    Lock lock;
    lock.spec.name = "mmdet3d-demo";
    lock.spec.env["FORCE_CUDA"] = "1";   // the repo's switch to its CUDAExtension
    lock.spec.extensions.push_back({"mmdet3d-ops", "mmdetection3d", "python setup.py develop", "mmdet3d.ops.voxel.voxel_layer", {}, true});
    lock.toolchain.nvcc = "13.0";
    lock.toolchain.nvcc_from = "system:/usr/local/cuda";
    lock.toolchain.cuda_arch_list = "8.6";
    NamedTarget t;
    t.name = "default";
    t.target.platform = "linux-64";
    lock.targets.push_back(t);

    install::VerifyInputs in;
    in.machine = detect_target(DetectRoots::host(), builtin_knowledge());
    in.env = install::current_environment();
    in.prefix = prefix.string();
    in.lock_dir = checkout.string();
    in.probe = false;
    in.build_extensions = true;
    auto report = install::verify_lock(lock, in, builtin_knowledge());
    CHECK(report.toolchain.torch_version.rfind("1.13", 0) == 0);
    CHECK(report.toolchain.torch_cuda.empty());
    const auto* nvcc = find_check(report, "nvcc");
    REQUIRE(nvcc);
    CHECK(nvcc->status == install::CheckStatus::passed);
    const auto* torch = find_check(report, "nvcc-torch");
    REQUIRE(torch);
    CHECK(torch->status == install::CheckStatus::failed);
    CHECK(torch->what.find("CPU-only build") != std::string::npos);
    const auto* build = find_check(report, "build mmdet3d-ops");
    REQUIRE(build);
    INFO(read_text(build->log));
    CHECK(build->status == install::CheckStatus::failed);
    REQUIRE_FALSE(build->explained.empty());
    CHECK(build->explained.front().id == "cpu-torch-cuda-extension");
    CHECK(report.exit_code() == 1);
}
