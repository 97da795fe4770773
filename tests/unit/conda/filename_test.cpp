// Conda dist names and package file names, split from the right.
#include <doctest/doctest.h>

#include <string>

#include "resolver/specs/conda_filename.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/errors.hpp"

using envlock::conda::DistName;
using envlock::conda::PackageFilename;

TEST_CASE("a dist name splits into name, version and build from the right") {
    DistName d = DistName::parse("pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0");
    CHECK(d.name == "pytorch");
    CHECK(d.version == "1.9.0");
    CHECK(d.build == "py3.8_cuda11.1_cudnn8.0.5_0");
    CHECK(d.str() == "pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0");

    DistName dashed = DistName::parse("ca-certificates-2021.10.8-ha878542_0");
    CHECK(dashed.name == "ca-certificates");
    CHECK(dashed.version == "2021.10.8");
    CHECK(dashed.build == "ha878542_0");

    DistName channel = DistName::parse("conda-forge::libgcc-ng-11.2.0-h1d223b6_11");
    CHECK(channel.name == "libgcc-ng");
    CHECK(channel.version == "11.2.0");
}

TEST_CASE("malformed dist names are rejected") {
    for (const char* bad : {"pytorch", "pytorch-1.9.0", "-1.0-0", "a--0", "a-1.0-", ""}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(DistName::parse(bad), envlock::InputError);
    }
}

TEST_CASE("package file names: .tar.bz2 and .conda, bare or at the end of a URL") {
    PackageFilename a = PackageFilename::parse("pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0.tar.bz2");
    CHECK(a.name == "pytorch");
    CHECK(a.version == "1.9.0");
    CHECK(a.build == "py3.8_cuda11.1_cudnn8.0.5_0");
    CHECK(a.extension == ".tar.bz2");
    CHECK(a.str() == "pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0.tar.bz2");

    PackageFilename b = PackageFilename::parse(
        "https://conda.anaconda.org/conda-forge/linux-64/python_abi-3.8-2_cp38.conda");
    CHECK(b.name == "python_abi");
    CHECK(b.version == "3.8");
    CHECK(b.build == "2_cp38");
    CHECK(b.extension == ".conda");

    CHECK(PackageFilename::is_package_filename("x-1-0.conda"));
    CHECK(PackageFilename::is_package_filename("x-1-0.tar.bz2"));
    CHECK_FALSE(PackageFilename::is_package_filename("x-1-0.whl"));
}

TEST_CASE("other extensions and malformed stems are rejected with the expected form") {
    try {
        PackageFilename::parse("torch-1.9.0-cp38-cp38-linux_x86_64.whl");
        FAIL("accepted a wheel");
    } catch (const envlock::InputError& e) {
        CHECK(std::string(e.what()) ==
              "invalid conda package file name 'torch-1.9.0-cp38-cp38-linux_x86_64.whl': expected "
              "name-version-build.tar.bz2 or name-version-build.conda");
    }
    CHECK_THROWS_AS(PackageFilename::parse("numpy-1.0.tar.bz2"), envlock::InputError);
    CHECK_THROWS_AS(PackageFilename::parse("numpy-1.0-0.tar.gz"), envlock::InputError);
    CHECK_THROWS_AS(PackageFilename::parse(".conda"), envlock::InputError);
}

// Found by fuzz/matchspec (issue 20): the spec "pytho<n-33.6.6-0.tar.bz2" parsed as a file name
// with the name "pytho<n", and its canonical form "pytho<n==33.6.6=0[fn=…]" did not parse.
// conda-build's names, versions and builds never hold MatchSpec syntax or spaces.
TEST_CASE("a file name whose parts hold MatchSpec characters or spaces is refused") {
    CHECK_THROWS_AS(PackageFilename::parse("pytho<n-33.6.6-0.tar.bz2"), envlock::InputError);
    CHECK_THROWS_AS(DistName::parse("numpy-1.19 5-py38_0"), envlock::InputError);
    CHECK_THROWS_AS(DistName::parse("numpy-1.19.5-py38[0]"), envlock::InputError);
    CHECK(DistName::parse("numpy-1!1.19.5-py38_0").version == "1!1.19.5");
    CHECK(PackageFilename::parse("_libgcc_mutex-0.1-conda_forge.tar.bz2").name == "_libgcc_mutex");
    CHECK_THROWS_AS(envlock::conda::MatchSpec::parse("pytho<n-33.6.6-0.tar.bz2"), envlock::InputError);
}
