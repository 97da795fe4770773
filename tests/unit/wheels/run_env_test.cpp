// `envlock run` / `envlock shell-hook`: the env's PATH and markers, the locked toolkit and
// compiler, the lock's arch list, and the packages' etc/conda/activate.d scripts (conda's
// activation order: sorted by file name).
#include <doctest/doctest.h>

#include <algorithm>

#include "install/run_env.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

using namespace envlock;
using namespace envlock::install;
using namespace envlock::test;

namespace {

// A conda-shaped prefix with two activation scripts and conda's per-env variables.
void conda_prefix(const fs::path& p) {
    fs::create_directories(p / "conda-meta");
    write_text(p / "conda-meta/history", "");
    write_text(p / "conda-meta/state", "{\"env_vars\": {\"FROM_STATE\": \"yes\"}}");
    write_text(p / "bin/hello", "#!/bin/sh\necho env-hello\n", true);
    write_text(p / "etc/conda/activate.d/20-second.sh", "export ORDER=\"$ORDER second\"\n");
    write_text(p / "etc/conda/activate.d/10-first.sh", "export ORDER=\"first\"\nexport FROM_ACTIVATE=1\n");
}

Lock toolchain_lock() {
    Lock lock;
    lock.toolchain.gcc = "12";
    lock.toolchain.gcc_from = "system:/usr/bin/gcc-12";
    lock.toolchain.cuda_arch_list = "8.6";
    lock.spec.env["FORCE_CUDA"] = "1";
    return lock;
}

std::map<std::string, std::string> as_map(const RunEnvironment& e) {
    return std::map<std::string, std::string>(e.set.begin(), e.set.end());
}

}  // namespace

TEST_CASE("run environment of a conda prefix: PATH first, CONDA_PREFIX, conda's env vars, lock toolchain, activate.d in order") {
    TempDir t;
    conda_prefix(t.path / "env");
    Lock lock = toolchain_lock();
    std::map<std::string, std::string> parent = {{"PATH", "/old/env/bin:/usr/bin:/bin"}, {"VIRTUAL_ENV", "/old/env"}, {"PYTHONHOME", "/x"}};
    auto env = run_environment(t.str("env"), &lock, parent);
    auto vars = as_map(env);
    CHECK(vars["PATH"] == t.str("env/bin") + ":/usr/bin:/bin");   // the previously active env's bin is dropped
    CHECK(vars["CONDA_PREFIX"] == t.str("env"));
    CHECK(vars["TORCH_CUDA_ARCH_LIST"] == "8.6");
    CHECK(vars["CUDAARCHS"] == "86-real");   // the same list for CMake and torch-free builds
    CHECK(vars["FORCE_CUDA"] == "1");
    CHECK(vars["FROM_STATE"] == "yes");
    if (fs::exists("/usr/bin/gcc-12") && fs::exists("/usr/bin/g++-12")) {
        CHECK(vars["CC"] == "/usr/bin/gcc-12");
        CHECK(vars["CXX"] == "/usr/bin/g++-12");
        CHECK(vars["NVCC_CCBIN"] == "/usr/bin/g++-12");
    }
    CHECK(std::find(env.unset.begin(), env.unset.end(), "VIRTUAL_ENV") != env.unset.end());
    CHECK(std::find(env.unset.begin(), env.unset.end(), "PYTHONHOME") != env.unset.end());
    CHECK(env.activate_scripts == std::vector<std::string>{t.str("env/etc/conda/activate.d/10-first.sh"),
                                                          t.str("env/etc/conda/activate.d/20-second.sh")});
}

TEST_CASE("CUDAARCHS from TORCH_CUDA_ARCH_LIST: X.Y is SASS only (XY-real), X.Y+PTX is SASS and PTX (XY), as CMake's CUDA_ARCHITECTURES spells them") {
    // https://cmake.org/cmake/help/latest/envvar/CUDAARCHS.html, prop_tgt/CUDA_ARCHITECTURES
    CHECK(cmake_cuda_archs("8.6;9.0+PTX") == "86-real;90");
    CHECK(cmake_cuda_archs("7.5 8.0,8.6") == "75-real;80-real;86-real");
    CHECK(cmake_cuda_archs("12.0+PTX") == "120");
    CHECK_THROWS_AS(cmake_cuda_archs("sm_86"), InputError);
}

TEST_CASE("envlock run executes in the env and shell-hook prints the same as shell code") {
    TempDir t;
    conda_prefix(t.path / "env");
    auto r = run_envlock({"run", "--prefix", t.str("env"), "--", "sh", "-c", "hello; echo \"$ORDER|$FROM_ACTIVATE|$CONDA_PREFIX\""});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out == "env-hello\nfirst second|1|" + t.str("env") + "\n");
    // The command's own exit code comes back; an unknown command is 127.
    CHECK(run_envlock({"run", "--prefix", t.str("env"), "--", "sh", "-c", "exit 7"}).exit_code == 7);
    CHECK(run_envlock({"run", "--prefix", t.str("env"), "--", "no-such-command-xyz"}).exit_code == 127);

    auto hook = run_envlock({"shell-hook", "--prefix", t.str("env")});
    REQUIRE(hook.exit_code == 0);
    write_text(t.path / "hook.sh", hook.out);
    r = sh(". " + t.str("hook.sh") + " && hello && echo \"$ORDER|$CONDA_PREFIX\"");
    CHECK(r.out == "env-hello\nfirst second|" + t.str("env") + "\n");
    CHECK(run_envlock({"run", "--prefix", t.str("nothing-here"), "--", "true"}).exit_code == 2);
}

TEST_CASE("a venv prefix gets VIRTUAL_ENV, and its python is the one on PATH") {
    TempDir t;
    create_venv(t.str("env"), debian_base());
    auto r = run_envlock({"run", "--prefix", t.str("env"), "--", "python", "-c", "import os, sys; print(sys.prefix == os.environ['VIRTUAL_ENV'])"});
    CHECK_MESSAGE(r.out == "True\n", r.err);
}

TEST_CASE("CUDA_HOME is the locked toolkit: the prefix for conda's cuda-nvcc, a system toolkit of the locked release") {
    TempDir t;
    conda_prefix(t.path / "env");
    Lock lock;
    lock.toolchain.nvcc = "12.1";
    lock.toolchain.nvcc_from = "conda:cuda-nvcc";
    CHECK(as_map(run_environment(t.str("env"), &lock, {}))["CUDA_HOME"] == t.str("env"));
    // A release this machine does not have: not set, and said why.
    lock.toolchain.nvcc = "9.0";
    lock.toolchain.nvcc_from = "system:/usr/local/cuda-9.0";
    auto env = run_environment(t.str("env"), &lock, {});
    CHECK(as_map(env).count("CUDA_HOME") == 0);
    REQUIRE(env.notes.size() == 1);
    CHECK(env.notes[0].find("CUDA 9.0") != std::string::npos);
    if (!fs::exists("/usr/local/cuda/bin/nvcc")) {
        MESSAGE("no nvcc in /usr/local/cuda: the system-toolkit case is skipped");
        return;
    }
    auto v = run_program({"/usr/local/cuda/bin/nvcc", "--version"});
    auto pos = v.out.find("release ");
    REQUIRE(pos != std::string::npos);
    std::string release = v.out.substr(pos + 8, v.out.find(',', pos) - pos - 8);
    lock.toolchain.nvcc = release;
    lock.toolchain.nvcc_from = "system:/usr/local/cuda-" + release;
    std::string home = as_map(run_environment(t.str("env"), &lock, {}))["CUDA_HOME"];
    CHECK(fs::exists(home + "/bin/nvcc"));
    CHECK(as_map(run_environment(t.str("env"), &lock, {}))["PATH"].find(home + "/bin") != std::string::npos);
}

TEST_CASE("run --prefix reads the lock the prefix was installed from (.envlock/lock.yaml) for the toolchain") {
    TempDir t;
    conda_prefix(t.path / "env");
    Lock lock = toolchain_lock();
    lock.content_hash = "sha256:" + std::string(64, '0');
    lock.targets.push_back({"default", {}});
    lock.targets[0].target.platform = "linux-64";
    write_text(t.path / "env/.envlock/lock.yaml", write_lock(lock));
    auto r = run_envlock({"run", "--prefix", t.str("env"), "--", "sh", "-c", "echo \"$TORCH_CUDA_ARCH_LIST $FORCE_CUDA\""});
    CHECK_MESSAGE(r.out == "8.6 1\n", r.err);
}
