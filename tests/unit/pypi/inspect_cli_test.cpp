// `envlock inspect version|match|requirement|wheel`, run as a user would.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_envlock.hpp"

using envlock::test::run_envlock;

namespace {
int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

TEST_CASE("inspect version prints the relation with the inputs as given") {
    auto r = run_envlock({"inspect", "version", "1.0-1", "1.0.post1"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "1.0-1 == 1.0.post1\n");
    CHECK(run_envlock({"inspect", "version", "1.0rc1", "1.0"}).out == "1.0rc1 < 1.0\n");
    CHECK(run_envlock({"inspect", "version", "1!0.1", "2.0"}).out == "1!0.1 > 2.0\n");
    CHECK(run_envlock({"inspect", "version", "1.9.0+cu111", "1.9.0"}).out == "1.9.0+cu111 > 1.9.0\n");
}

TEST_CASE("inspect match: the acceptance cases and the exit status") {
    auto m = run_envlock({"inspect", "match", "==1.9.0", "1.9.0+cu111"});
    CHECK(m.exit_code == 0);
    CHECK(m.out == "match\n");
    auto n = run_envlock({"inspect", "match", "<1.20", "1.20.0rc1"});
    CHECK(n.exit_code == 1);
    CHECK(n.out == "no match\n");
    CHECK(run_envlock({"inspect", "match", "==1.9.0+cu102", "1.9.0+cu111"}).out == "no match\n");
    CHECK(run_envlock({"inspect", "match", ">1.7", "1.7.post1"}).exit_code == 1);
    CHECK(run_envlock({"inspect", "match", "torch>=1.8,<1.10", "1.9.1+cu111"}).out == "match\n");
}

TEST_CASE("inspect match explains a pre-release refused by the pre-release rule, and --pre admits it") {
    auto r = run_envlock({"inspect", "match", ">=1.0", "2.0rc1"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("pre-release") != std::string::npos);
    auto p = run_envlock({"inspect", "match", "--pre", ">=1.0", "2.0rc1"});
    CHECK(p.exit_code == 0);
    CHECK(p.out == "match\n");
}

TEST_CASE("inspect requirement prints JSON, and whether the marker applies to a target") {
    auto r = run_envlock({"inspect", "requirement", "Mmcv_Full[all]>=1.3.8; python_version < '3.9' and sys_platform == 'linux'"});
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["name"] == "Mmcv_Full");
    CHECK(j["normalized-name"] == "mmcv-full");
    CHECK(j["extras"] == nlohmann::json::array({"all"}));
    CHECK(j["specifier"] == ">=1.3.8");
    CHECK(j["marker"] == "python_version < \"3.9\" and sys_platform == \"linux\"");
    CHECK_FALSE(j.contains("marker-applies"));

    auto on38 = nlohmann::json::parse(run_envlock({"inspect", "requirement", "x; python_version < '3.9'", "--python", "3.8",
                                                   "--platform", "linux-64"}).out);
    CHECK(on38["marker-applies"] == true);
    auto on310 = nlohmann::json::parse(run_envlock({"inspect", "requirement", "x; python_version < '3.9'", "--python", "3.10"}).out);
    CHECK(on310["marker-applies"] == false);
    auto win = nlohmann::json::parse(
        run_envlock({"inspect", "requirement", "pywin32; sys_platform == 'win32'", "--python", "3.8", "--platform", "win-64"}).out);
    CHECK(win["marker-applies"] == true);
    auto extra = nlohmann::json::parse(
        run_envlock({"inspect", "requirement", "x; extra == 'cv'", "--python", "3.8", "--extra", "cv"}).out);
    CHECK(extra["marker-applies"] == true);
    auto url = nlohmann::json::parse(run_envlock({"inspect", "requirement", "mmdet3d @ git+https://github.com/open-mmlab/mmdetection3d@v0.17.1"}).out);
    CHECK(url["url"] == "git+https://github.com/open-mmlab/mmdetection3d@v0.17.1");
}

TEST_CASE("inspect wheel prints name, version, build tag and expanded tags") {
    auto r = run_envlock({"inspect", "wheel", "torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl"});
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["name"] == "torch");
    CHECK(j["version"] == "1.9.1+cu111");
    CHECK(j["build-tag"] == "");
    CHECK(j["tags"] == nlohmann::json::array({"cp38-cp38-linux_x86_64"}));
    CHECK_FALSE(j.contains("compatible"));
    auto six = nlohmann::json::parse(run_envlock({"inspect", "wheel", "six-1.16.0-py2.py3-none-any.whl"}).out);
    CHECK(six["tags"] == nlohmann::json::array({"py2-none-any", "py3-none-any"}));
    auto fits = nlohmann::json::parse(run_envlock({"inspect", "wheel", "torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl",
                                                   "--python", "3.8", "--platform", "linux-64", "--glibc", "2.31"}).out);
    CHECK(fits["compatible"] == true);
    auto misfit = nlohmann::json::parse(
        run_envlock({"inspect", "wheel", "torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl", "--python", "3.9"}).out);
    CHECK(misfit["compatible"] == false);
    CHECK(misfit["tag-rank"].is_null());
}

TEST_CASE("bad input: exit 2 and one line naming what was expected and where") {
    struct Case { std::vector<std::string> args; const char* needle; };
    for (const auto& c : {Case{{"inspect", "version", "1.0x", "2"}, "column 4"},
                          Case{{"inspect", "match", ">=1.0,,<2", "1.5"}, "column 7"},
                          Case{{"inspect", "match", ">=1.0", "one"}, "invalid PEP 440 version 'one'"},
                          Case{{"inspect", "requirement", "torch 1.9"}, "column 7"},
                          Case{{"inspect", "requirement", "x; python_version < '3.9'", "--python", "3.8", "--platform", "amiga"},
                               "unknown platform 'amiga'"},
                          Case{{"inspect", "requirement", "x", "--platform", "linux-64"}, "--python"},
                          Case{{"inspect", "wheel", "torch-1.9.1.tar.gz"}, ".whl"},
                          Case{{"inspect", "wheel", "x-1.0-py3-none-any.whl", "--python", "3.8", "--glibc", "new"}, "glibc"}}) {
        CAPTURE(c.args[2]);
        auto r = run_envlock(c.args);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(lines(r.err) == 1);
        CHECK_MESSAGE(r.err.find(c.needle) != std::string::npos, r.err);
    }
}

TEST_CASE("inspect version --conda uses conda's VersionOrder") {
    auto r = run_envlock({"inspect", "version", "--conda", "1.0a1", "1.0"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "1.0a1 < 1.0\n");
    CHECK(run_envlock({"inspect", "version", "--conda", "1.0", "1.0.0"}).out == "1.0 == 1.0.0\n");
    CHECK(run_envlock({"inspect", "version", "--conda", "1.1dev1", "1.1a1"}).out == "1.1dev1 < 1.1a1\n");
    CHECK(run_envlock({"inspect", "version", "--conda", "1!1.0", "2.0"}).out == "1!1.0 > 2.0\n");
}

TEST_CASE("inspect match --conda: MatchSpecs against versions and dist strings") {
    auto r = run_envlock({"inspect", "match", "--conda", "pytorch 1.9.* *cuda11.1*", "pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "match\n");
    auto other_cuda = run_envlock({"inspect", "match", "--conda", "pytorch 1.9.* *cuda11.1*", "pytorch-1.9.0-py3.8_cuda10.2_cudnn7.6.5_0"});
    CHECK(other_cuda.exit_code == 1);
    CHECK(other_cuda.out == "no match\n");
    CHECK(run_envlock({"inspect", "match", "--conda", "pytorch 1.9.* *cuda11.1*", "torchvision-1.9.0-py3.8_cuda11.1_0"}).exit_code == 1);
    CHECK(run_envlock({"inspect", "match", "--conda", "numpy >=1.19,<1.20.0a0", "1.19.5"}).out == "match\n");
    CHECK(run_envlock({"inspect", "match", "--conda", "numpy >=1.19,<1.20.0a0", "1.20.0rc1"}).out == "no match\n");
    CHECK(run_envlock({"inspect", "match", "--conda", "python 3.8.*", "3.8.18"}).out == "match\n");
    CHECK(run_envlock({"inspect", "match", "--conda", "cudatoolkit >=11.1,<11.2", "11.2.0"}).out == "no match\n");
}

TEST_CASE("inspect --conda: bad input is exit 2 with one line") {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"inspect", "version", "--conda", "1.0..", "2"},
             {"inspect", "match", "--conda", "numpy[", "1.0"},
             {"inspect", "match", "--conda", "numpy", "numpy-1.0"}}) {
        CAPTURE(args[3]);
        auto r = run_envlock(args);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(lines(r.err) == 1);
    }
}
