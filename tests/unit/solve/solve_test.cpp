#include <doctest/doctest.h>

#include <algorithm>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/solve/solve.hpp"
#include "tests/unit/solve/records.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

const std::string kTorchPage = "https://download.pytorch.org/whl/torch_stable.html";
const std::string kMmcvPage = "https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html";

IndexRecords conda_forge() {
    return {
        conda_record("python", "3.8.12", "h12debd9_0", {"__glibc >=2.17"}),
        conda_record("python", "3.9.7", "h12debd9_1", {"__glibc >=2.17"}),
        conda_record("gxx_linux-64", "9.4.0", "h0316aca_10"),
        conda_record("gxx_linux-64", "12.2.0", "h3a6d2e3_11"),
        conda_record("numpy", "1.19.5", "py38h18fd61f_1", {"python >=3.8,<3.9.0a0"}),
    };
}

IndexRecords nvidia() {
    return {
        conda_record("cuda-nvcc", "11.1.105", "0", {}, "nvidia"),
        conda_record("cuda-nvcc", "11.8.89", "0", {}, "nvidia"),
        conda_record("cuda-nvcc", "12.0.76", "0", {}, "nvidia"),
    };
}

IndexRecords pypi() {
    const std::string cp38 = "cp38-cp38-linux_x86_64";
    return {
        wheel_record("torch", "1.9.1+cu111", cp38, {"typing-extensions"}, kTorchPage),
        wheel_record("torch", "1.9.1+cu102", cp38, {"typing-extensions"}, kTorchPage),
        wheel_record("torch", "1.9.1", "cp38-cp38-manylinux1_x86_64", {"typing-extensions"}),
        wheel_record("torch", "2.0.1+cu118", cp38, {"typing-extensions"}, kTorchPage),
        wheel_record("torch", "2.7.1+cu126", "cp39-cp39-manylinux_2_28_x86_64", {"typing-extensions"}, kTorchPage),
        wheel_record("torch", "2.7.1+cu128", "cp39-cp39-manylinux_2_28_x86_64", {"typing-extensions"}, kTorchPage),
        wheel_record("torchvision", "0.10.1+cu111", cp38, {"torch==1.9.1", "numpy"}, kTorchPage),
        wheel_record("torchvision", "0.10.1+cu102", cp38, {"torch==1.9.1", "numpy"}, kTorchPage),
        wheel_record("typing-extensions", "4.5.0", "py3-none-any"),
        wheel_record("mmcv-full", "1.4.0", cp38, {"addict", "numpy", "yapf"}, kMmcvPage),
        wheel_record("addict", "2.4.0", "py3-none-any"),
        wheel_record("yapf", "0.40.1", "py3-none-any"),
        wheel_record("yapf", "0.40.2", "py3-none-any"),
        wheel_record("numpy", "1.19.5", "cp38-cp38-manylinux2010_x86_64"),
        wheel_record("numpy", "1.24.4", "cp38-cp38-manylinux_2_17_x86_64"),
    };
}

SolveInput input_for(Target target, std::vector<SpecRequirement> reqs, bool cuda_extensions = false) {
    SolveInput in;
    in.spec.name = "spec-test";
    in.spec.python = "3.8";
    in.spec.requirements = std::move(reqs);
    if (cuda_extensions) in.spec.extensions.push_back({"ops", "ops", "python setup.py develop", "ops", {}, true});
    in.targets.push_back({"default", std::move(target)});
    in.knowledge = knowledge::load_builtin();
    in.channels = {{"nvidia", nvidia()}, {"conda-forge", conda_forge()}};
    in.pypi = pypi();
    return in;
}

const LockedPackage* find(const Lock& lock, const std::string& name) {
    for (const auto& p : lock.packages)
        if (p.name == name) return &p;
    return nullptr;
}

}  // namespace

TEST_CASE("an RTX 3090 gets the cu111 build of torch 1.9.1, not cu102 whose SASS stops at sm_70") {
    auto out = solve(input_for(linux_machine("470.82.01", "11.4", {rtx3090()}), {pypi_req("torch==1.9.1", 3)}));
    REQUIRE_MESSAGE(out.solved, out.explanation);
    REQUIRE(find(out.lock, "torch"));
    CHECK(find(out.lock, "torch")->version == "1.9.1+cu111");
    REQUIRE(find(out.lock, "torch")->cuda);
    CHECK(find(out.lock, "torch")->cuda->runtime == "11.1");
}

TEST_CASE("a cu102 pin on an RTX 3090 is refused, naming the build's arch list against the GPU") {
    auto out = solve(input_for(linux_machine("470.82.01", "11.4", {rtx3090()}), {pypi_req("torch==1.9.1+cu102", 7)}));
    CHECK_FALSE(out.solved);
    CHECK(out.explanation.find("torch==1.9.1+cu102") != std::string::npos);
    CHECK(out.explanation.find("docs/install.md:7") != std::string::npos);
    CHECK(out.explanation.find("sm_86") != std::string::npos);
    CHECK(out.explanation.find("sm_70") != std::string::npos);
    CHECK(out.explanation.find("no PTX") != std::string::npos);
}

TEST_CASE("torch 1.9.1 on an H100 is unsatisfiable: no sm_90 kernel in any of its builds") {
    auto out = solve(input_for(linux_machine("535.104.05", "12.2", {h100()}), {pypi_req("torch==1.9.1", 3)}));
    CHECK_FALSE(out.solved);
    CHECK(out.explanation.find("sm_90") != std::string::npos);
    CHECK(out.explanation.find("loosen torch==1.9.1") != std::string::npos);
}

TEST_CASE("a driver too old for CUDA 11.1 rules the cu111 build out") {
    auto out = solve(input_for(linux_machine("440.33.01", "10.2", {rtx3090()}), {pypi_req("torch==1.9.1+cu111")}));
    CHECK_FALSE(out.solved);
    CHECK(out.explanation.find("a driver that runs CUDA 11.1") != std::string::npos);
    CHECK(out.explanation.find("440.33.01") != std::string::npos);
}

TEST_CASE("a target with neither a GPU nor a driver takes a CUDA build, which runs on its CPU, and the lock warns") {
    // As pip and uv install it on a laptop or a CPU node: torch imports there with no device.
    auto out = solve(input_for(linux_machine("", "", {}), {pypi_req("torch==1.9.1+cu111")}));
    REQUIRE_MESSAGE(out.solved, out.explanation);
    CHECK(find(out.lock, "torch")->version == "1.9.1+cu111");
    REQUIRE(out.lock.warnings.size() == 1);
    CHECK(out.lock.warnings[0].id == "torch-without-gpu");
}

TEST_CASE("a GPU without a driver refuses a CUDA build: the GPU is there, CUDA cannot reach it") {
    auto out = solve(input_for(linux_machine("", "", {rtx3090()}), {pypi_req("torch==1.9.1+cu111")}));
    CHECK_FALSE(out.solved);
    CHECK(out.explanation.find("no NVIDIA driver") != std::string::npos);
}

TEST_CASE("an RTX 4090 runs torch 1.9.1+cu111 through sm_86 SASS; the ops build 8.6 with nvcc 11.1, not the system 12.0") {
    Target t = linux_machine("525.60.13", "12.0", {rtx4090()});
    t.toolkits.push_back({"/usr/local/cuda-12.0", "12.0", {}});
    auto out = solve(input_for(t, {pypi_req("torch==1.9.1")}, true));
    REQUIRE_MESSAGE(out.solved, out.explanation);
    CHECK(find(out.lock, "torch")->version == "1.9.1+cu111");
    CHECK(out.lock.toolchain.nvcc.rfind("11.1", 0) == 0);
    CHECK(out.lock.toolchain.nvcc_from == "conda:cuda-nvcc");
    CHECK(out.lock.toolchain.cuda_arch_list == "8.6");
    CHECK(std::stoi(out.lock.toolchain.gcc) <= 10);
}

TEST_CASE("a system toolkit of torch's CUDA is preferred over a conda one, with a gcc nvcc accepts") {
    Target t = linux_machine("470.82.01", "11.4", {rtx3090()});
    t.toolkits.push_back({"/usr/local/cuda-11.1", "11.1", {}});
    t.compilers.push_back({"gcc", "/usr/bin/gcc-9", "9.4.0"});
    auto out = solve(input_for(t, {pypi_req("torch==1.9.1")}, true));
    REQUIRE_MESSAGE(out.solved, out.explanation);
    CHECK(out.lock.toolchain.nvcc_from == "system:/usr/local/cuda-11.1");
    CHECK(out.lock.toolchain.gcc_from == "system:/usr/bin/gcc-9");
    CHECK(out.lock.toolchain.cuda_arch_list == "8.6");
}

TEST_CASE("mmcv-full from the cu111/torch1.9.0 page pulls the cu111 torch and yapf 0.40.1 by advisory") {
    auto out = solve(input_for(linux_machine("470.82.01", "11.4", {rtx3090()}),
                               {pypi_req("torch==1.9.1"), pypi_req("mmcv-full==1.4.0")}));
    REQUIRE_MESSAGE(out.solved, out.explanation);
    CHECK(find(out.lock, "torch")->version == "1.9.1+cu111");
    REQUIRE(find(out.lock, "yapf"));
    CHECK(find(out.lock, "yapf")->version == "0.40.1");
    bool recorded = std::any_of(out.lock.decisions.begin(), out.lock.decisions.end(),
                                [](const LockedDecision& d) { return d.excluded.find("yapf 0.40.2") != std::string::npos; });
    CHECK(recorded);
}

TEST_CASE("opting out of an advisory lets its combination through") {
    auto in = input_for(linux_machine("470.82.01", "11.4", {rtx3090()}), {pypi_req("mmcv-full==1.4.0"), pypi_req("torch==1.9.1")});
    for (const auto& adv : knowledge::advisories(in.knowledge))
        if (adv.id.find("yapf") != std::string::npos) in.spec.allow_advisories.push_back(adv.id);
    auto out = solve(in);
    REQUIRE_MESSAGE(out.solved, out.explanation);
    CHECK(find(out.lock, "yapf")->version == "0.40.2");
}

TEST_CASE("torchvision+cu111 is paired with torch+cu111, never with the cu102 build") {
    auto out = solve(input_for(linux_machine("470.82.01", "11.4", {rtx3090()}), {pypi_req("torchvision==0.10.1")}));
    REQUIRE_MESSAGE(out.solved, out.explanation);
    CHECK(find(out.lock, "torchvision")->version == "0.10.1+cu111");
    CHECK(find(out.lock, "torch")->version == "1.9.1+cu111");
}

TEST_CASE("numpy asked from conda and from pip gives one numpy") {
    auto out = solve(input_for(linux_machine("470.82.01", "11.4", {rtx3090()}),
                               {conda_req("numpy 1.19.*"), pypi_req("numpy==1.19.5")}));
    REQUIRE_MESSAGE(out.solved, out.explanation);
    int numpys = 0;
    for (const auto& p : out.lock.packages)
        if (p.name == "numpy") ++numpys;
    CHECK(numpys == 1);
    CHECK(find(out.lock, "numpy")->kind == Ecosystem::conda);
}

TEST_CASE("the Python loop picks the newest minor the spec allows") {
    auto in = input_for(linux_machine("", "", {}), {pypi_req("typing-extensions")});
    in.spec.python = "";
    auto minors = python_minors_to_try(in);
    REQUIRE(minors.size() == 2);
    CHECK(minors[0] == "3.9");
    CHECK(minors[1] == "3.8");
}

TEST_CASE("the same input gives the same lock, byte for byte") {
    auto in = input_for(linux_machine("470.82.01", "11.4", {rtx3090()}), {pypi_req("torch==1.9.1"), pypi_req("mmcv-full==1.4.0")});
    auto a = solve(in);
    auto b = solve(in);
    REQUIRE(a.solved);
    CHECK(write_lock(a.lock) == write_lock(b.lock));
}

TEST_CASE("a written lock reads back to the same bytes") {
    auto out = solve(input_for(linux_machine("470.82.01", "11.4", {rtx3090()}), {pypi_req("torch==1.9.1")}));
    REQUIRE(out.solved);
    std::string text = write_lock(out.lock);
    Lock back = read_lock(text, "envlock.yaml");
    CHECK(write_lock(back) == text);
}

TEST_CASE("of one build offered as .conda and .tar.bz2, the .conda is locked (conda and mamba prefer the .conda format)") {
    // No snapshot channel lists one build in both formats, so the pair is made from one record.
    auto in = input_for(linux_machine("470.82.01", "11.4", {rtx3090()}), {conda_req("numpy 1.19.*")});
    auto& forge = in.channels[1].records;
    IndexRecord tarball = forge.back();   // numpy-1.19.5-py38h18fd61f_1.tar.bz2
    IndexRecord conda = tarball;
    conda.filename = "numpy-1.19.5-py38h18fd61f_1.conda";
    conda.url = "https://conda.anaconda.org/conda-forge/linux-64/" + conda.filename;
    forge.push_back(conda);   // listed after the .tar.bz2: file order does not decide
    auto out = solve(in);
    REQUIRE_MESSAGE(out.solved, out.explanation);
    REQUIRE(find(out.lock, "numpy"));
    CHECK(find(out.lock, "numpy")->url == conda.url);
}
