#include <doctest/doctest.h>

#include "resolver/lock/diff.hpp"

using namespace envlock;

namespace {
LockedPackage pkg(Ecosystem kind, std::string name, std::string version, std::string build = "") {
    LockedPackage p;
    p.kind = kind;
    p.name = std::move(name);
    p.version = std::move(version);
    p.build = std::move(build);
    p.url = "https://example.invalid/" + p.name + "-" + p.version + "-" + p.build;
    return p;
}
}  // namespace

TEST_CASE("an unchanged lock has an empty diff") {
    Lock a;
    a.packages = {pkg(Ecosystem::pypi, "numpy", "1.19.5")};
    CHECK(diff_locks(a, a).empty());
    CHECK(describe(diff_locks(a, a)).empty());
}

TEST_CASE("PyPI versions move by PEP 440 order, not text order (1.10.1 is newer than 1.7.3)") {
    Lock a, b;
    a.packages = {pkg(Ecosystem::pypi, "scipy", "1.7.3")};
    b.packages = {pkg(Ecosystem::pypi, "SciPy", "1.10.1")};   // same project: PEP 503 names
    auto d = diff_locks(a, b);
    REQUIRE(d.packages.size() == 1);
    CHECK(d.packages[0].kind == PackageChange::Kind::upgraded);
    CHECK(describe(d) == std::vector<std::string>{"Updated SciPy 1.7.3 -> 1.10.1"});
    auto back = diff_locks(b, a);
    CHECK(back.packages[0].kind == PackageChange::Kind::downgraded);
}

TEST_CASE("conda versions move by conda's VersionOrder") {
    Lock a, b;
    a.packages = {pkg(Ecosystem::conda, "pytorch", "1.10.0", "py3.8_cuda11.3_cudnn8.2.0_0")};
    b.packages = {pkg(Ecosystem::conda, "pytorch", "1.9.1", "py3.8_cuda11.1_cudnn8.0.5_0")};
    auto d = diff_locks(a, b);
    REQUIRE(d.packages.size() == 1);
    CHECK(d.packages[0].kind == PackageChange::Kind::downgraded);
}

TEST_CASE("the same version in another build is a rebuild, shown with both builds") {
    Lock a, b;
    a.packages = {pkg(Ecosystem::conda, "torchvision", "0.8.2", "py37_cpu")};
    b.packages = {pkg(Ecosystem::conda, "torchvision", "0.8.2", "py37_cu110")};
    auto lines = describe(diff_locks(a, b));
    CHECK(lines == std::vector<std::string>{"Rebuilt torchvision 0.8.2 py37_cpu -> 0.8.2 py37_cu110"});
}

TEST_CASE("added and removed packages, and a conda package is not the PyPI one of the same name") {
    Lock a, b;
    a.packages = {pkg(Ecosystem::conda, "numpy", "1.19.5", "py38h_0"), pkg(Ecosystem::pypi, "tqdm", "4.62.0")};
    b.packages = {pkg(Ecosystem::pypi, "numpy", "1.19.5"), pkg(Ecosystem::pypi, "yapf", "0.40.1")};
    auto lines = describe(diff_locks(a, b));
    CHECK(lines == std::vector<std::string>{"Added numpy 1.19.5", "Added yapf 0.40.1", "Removed numpy 1.19.5",
                                            "Removed tqdm 4.62.0"});
}

TEST_CASE("toolchain changes are listed after the packages") {
    Lock a, b;
    a.toolchain.nvcc = "11.1";
    b.toolchain.nvcc = "11.3";
    b.toolchain.cuda_arch_list = "8.6";
    auto lines = describe(diff_locks(a, b));
    CHECK(lines == std::vector<std::string>{"Toolchain nvcc 11.1 -> 11.3", "Toolchain cuda-arch-list (none) -> 8.6"});
}
