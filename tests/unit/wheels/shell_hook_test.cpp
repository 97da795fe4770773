// shell-hook in real shells: two environments activated in turn in one shell leave nothing of the
// first (its bin on PATH, its CUDA_HOME, TORCH_CUDA_ARCH_LIST, CUDAARCHS), and envlock_deactivate
// puts back what was there before, in bash (posix) and fish. --json gives the same variables.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "install/run_env.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

using namespace envlock;
using namespace envlock::install;
using namespace envlock::test;

namespace {

// A conda-shaped prefix whose kept lock (.envlock/lock.yaml, as install writes it) sets
// CUDA_HOME through the spec's env and an arch list through the toolchain, when `cuda`.
void env_prefix(const fs::path& p, bool cuda) {
    fs::create_directories(p / "conda-meta");
    write_text(p / "conda-meta/history", "");
    write_text(p / "bin/which-env", "#!/bin/sh\necho " + p.filename().string() + "\n", true);
    Lock lock;
    lock.content_hash = "sha256:" + std::string(64, '0');
    lock.spec.name = p.filename().string();
    lock.targets.push_back({"default", {}});
    lock.targets[0].target.platform = "linux-64";
    if (cuda) {
        lock.spec.env["CUDA_HOME"] = "/opt/cuda-of-" + p.filename().string();
        lock.toolchain.cuda_arch_list = "8.6";
    }
    write_text(p / ".envlock/lock.yaml", write_lock(lock));
}

bool has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("shell-hook under bash: a second env keeps nothing of the first, and deactivate restores the shell as it was") {
    TempDir t;
    env_prefix(t.path / "first", true);
    env_prefix(t.path / "second", false);
    std::string hook = "\"$(" ENVLOCK_BINARY " shell-hook --shell bash --prefix ";
    std::string script =
        "export PATH=/usr/bin:/bin; export CC=/usr/bin/cc-of-the-user; unset CUDA_HOME TORCH_CUDA_ARCH_LIST CUDAARCHS\n"
        "eval " + hook + t.str("first") + ")\"\n"
        "echo \"1|$(which-env)|$CUDA_HOME|$TORCH_CUDA_ARCH_LIST|$CUDAARCHS|$CONDA_PREFIX\"\n"
        "eval " + hook + t.str("second") + ")\"\n"
        "echo \"2|$(which-env)|${CUDA_HOME-unset}|${TORCH_CUDA_ARCH_LIST-unset}|${CUDAARCHS-unset}|$CONDA_PREFIX|$PATH\"\n"
        // Every variable and function of the shell (but the -c script's own text): none names the first env.
        "echo \"left of the first: $( (declare -p; declare -f) | grep -v BASH_EXECUTION_STRING | grep -c -e first)\"\n"
        "envlock_deactivate\n"
        "echo \"3|${CONDA_PREFIX-unset}|$PATH|$CC|$(command -v envlock_deactivate || echo gone)\"\n";
    auto r = run_program({"bash", "--norc", "--noprofile", "-c", script});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(has(r.out, "1|first|/opt/cuda-of-first|8.6|86-real|" + t.str("first") + "\n"));
    CHECK(has(r.out, "2|second|unset|unset|unset|" + t.str("second") + "|" + t.str("second") + "/bin:/usr/bin:/bin\n"));
    CHECK(has(r.out, "left of the first: 0\n"));
    CHECK(has(r.out, "3|unset|/usr/bin:/bin|/usr/bin/cc-of-the-user|gone\n"));
}

TEST_CASE("shell-hook under fish: the same, with PATH as fish's list") {
    if (run_program({"fish", "--version"}).exit_code != 0) {
        MESSAGE("fish is not installed (scripts/setup.sh installs it); skipped");
        return;
    }
    TempDir t;
    env_prefix(t.path / "first", true);
    env_prefix(t.path / "second", false);
    std::string hook = ENVLOCK_BINARY " shell-hook --shell fish --prefix ";
    std::string script =
        "set -gx PATH /usr/bin /bin; set -e CUDA_HOME; set -e TORCH_CUDA_ARCH_LIST; set -e CUDAARCHS\n" +
        hook + t.str("first") + " | source\n"
        "echo \"1|\"(which-env)\"|$CUDA_HOME|$TORCH_CUDA_ARCH_LIST|$CUDAARCHS\"\n" +
        hook + t.str("second") + " | source\n"
        // Every variable and function of the shell: none names the first env.
        "echo \"left of the first: \"(count (begin; set; functions -a | while read -l f; functions $f; end; end | string match -e -r -- '" +
        t.str("first") + "|cuda-of-first'))\n"
        "set -q CUDA_HOME; or set CUDA_HOME unset; set -q TORCH_CUDA_ARCH_LIST; or set TORCH_CUDA_ARCH_LIST unset; set -q CUDAARCHS; or set CUDAARCHS unset\n"
        "echo \"2|\"(which-env)\"|$CUDA_HOME|$TORCH_CUDA_ARCH_LIST|$CUDAARCHS|\"(string join : $PATH)\n"
        "set -e CUDA_HOME; set -e TORCH_CUDA_ARCH_LIST; set -e CUDAARCHS\n"
        "envlock_deactivate\n"
        "set -q CONDA_PREFIX; or set CONDA_PREFIX unset\n"
        "echo \"3|$CONDA_PREFIX|\"(string join : $PATH)\n";
    auto r = run_program({"fish", "--no-config", "-c", script});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CAPTURE(r.out);
    CHECK(has(r.out, "1|first|/opt/cuda-of-first|8.6|86-real\n"));
    CHECK(has(r.out, "2|second|unset|unset|unset|" + t.str("second") + "/bin:/usr/bin:/bin\n"));
    CHECK(has(r.out, "left of the first: 0\n"));
    CHECK(has(r.out, "3|unset|/usr/bin:/bin\n"));
}

TEST_CASE("shell-hook --json lists the variables as pixi's does; an unknown --shell is exit 2 naming the ones there are") {
    TempDir t;
    env_prefix(t.path / "first", true);
    auto r = run_envlock({"shell-hook", "--json", "--prefix", t.str("first")});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["environment-variables"]["CUDA_HOME"] == "/opt/cuda-of-first");
    CHECK(j["environment-variables"]["CONDA_PREFIX"] == t.str("first"));
    CHECK(j["prefix"] == t.str("first"));
    auto bad = run_envlock({"shell-hook", "--shell", "tcsh", "--prefix", t.str("first")});
    CHECK(bad.exit_code == 2);
    CHECK(has(bad.err, "expected bash, zsh, fish or posix"));
}
