// Virtual environments (PEP 405) on a base interpreter of the locked version, as uv lays them out.
#include <doctest/doctest.h>

#include "install/python_env.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

using namespace envlock;
using namespace envlock::install;
using namespace envlock::test;

TEST_CASE("a venv on Debian's python: pyvenv.cfg home, bin/python links, sys.prefix is the env (PEP 405)") {
    TempDir t;
    auto base = debian_base();
    CHECK(base.implementation == "CPython");
    CHECK(base.version.rfind(fixture_wheels().python_version + ".", 0) == 0);
    create_venv(t.str("env"), base);
    CHECK(fs::read_symlink(t.path / "env/bin/python") == fs::path(base.executable));
    CHECK(fs::read_symlink(t.path / ("env/bin/python" + fixture_wheels().python_version)) == "python");
    CHECK(fs::read_symlink(t.path / "env/bin/python3") == "python");
    CHECK(fs::read_symlink(t.path / "env/lib64") == "lib");
    std::string cfg = read_text(t.path / "env/pyvenv.cfg");
    CHECK(cfg.rfind("home = " + fs::path(base.executable).parent_path().string() + "\n", 0) == 0);
    CHECK(cfg.find("include-system-site-packages = false\n") != std::string::npos);
    auto r = run_program({t.str("env/bin/python"), "-c", "import sys, sysconfig; print(sys.prefix); print(sys.base_prefix); print(sysconfig.get_path('purelib'))"});
    CHECK(r.out == t.str("env") + "\n/usr\n" + venv_layout(t.str("env"), fixture_wheels().python_version).purelib + "\n");
    // Creating it again on the same base keeps what is installed.
    write_text(t.path / ("env/lib/python" + fixture_wheels().python_version + "/site-packages/keep.py"), "");
    create_venv(t.str("env"), base);
    CHECK(fs::exists(t.path / ("env/lib/python" + fixture_wheels().python_version + "/site-packages/keep.py")));
}

TEST_CASE("no interpreter of the locked version: an environment error naming the version and what was found") {
    try {
        find_interpreter("2.6", {"/usr/bin"});
        FAIL("expected an error");
    } catch (const EnvironmentError& e) {
        std::string m = e.what();
        CHECK(m.find("Python 2.6") != std::string::npos);
        CHECK(m.find("/usr/bin") != std::string::npos);
        CHECK(m.find(fixture_wheels().python_version + ".") != std::string::npos);   // what was found instead
    }
    CHECK(find_interpreter(debian_base().version, {"/usr/bin"}).executable == debian_base().executable);
}

// uv keeps each interpreter's answer in its cache and asks again when the executable changes
// (uv-python's interpreter cache, keyed by path and modification time); envlock does the same.
TEST_CASE("the interpreter probe cache: an answer is reused while the executable is unchanged, asked again after a change") {
    TempDir t;
    fs::create_directories(t.path / "bin");
    const auto base = debian_base();
    const std::string exe = "bin/python" + fixture_wheels().python_version;
    fs::copy_file(base.executable, t.path / exe);   // a real CPython we may touch
    const std::string cache = t.str("cache/interpreters");
    auto first = find_interpreters({t.str("bin")}, cache);
    REQUIRE(first.size() == 1);
    CHECK(first[0].version == base.version);
    CHECK(first[0].executable == t.str(exe));
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(cache)) entries.push_back(e.path());
    REQUIRE(entries.size() == 1);

    // Reused: an answer edited in the cache is what the next scan returns (no python started).
    std::string text = read_text(entries[0]);
    size_t at = text.find("\n" + base.version + "\n");
    REQUIRE(at != std::string::npos);
    write_text(entries[0], text.substr(0, at) + "\n3.99.0\n" + text.substr(at + base.version.size() + 2));
    CHECK(find_interpreters({t.str("bin")}, cache)[0].version == "3.99.0");

    // A changed executable (an upgrade replaces it: new times) is asked again.
    fs::last_write_time(t.path / exe, fs::last_write_time(t.path / exe) + std::chrono::seconds(5));
    CHECK(find_interpreters({t.str("bin")}, cache)[0].version == base.version);

    // A torn entry is asked again too, and rewritten.
    write_text(entries[0], "envlock interpreter probe 1\nexe ");
    CHECK(find_interpreters({t.str("bin")}, cache)[0].version == base.version);
    CHECK(read_text(entries[0]).find("\n" + base.version + "\n") != std::string::npos);
}

TEST_CASE("the locked python: the conda python's version, else the spec's, else the cpXY tags of the wheels") {
    Lock lock;
    LockedPackage wheel;
    wheel.kind = Ecosystem::pypi;
    wheel.name = "torch";
    wheel.url = "https://download.pytorch.org/whl/cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl";
    lock.packages.push_back(wheel);
    CHECK(locked_python(lock) == "3.8");
    lock.spec.requirements.push_back({"python=3.8.10", "conda", {}});
    CHECK(locked_python(lock) == "3.8.10");
    lock.spec.python = "3.8";
    CHECK(locked_python(lock) == "3.8");
    LockedPackage py;
    py.kind = Ecosystem::conda;
    py.name = "python";
    py.version = "3.8.18";
    lock.packages.push_back(py);
    CHECK(locked_python(lock) == "3.8.18");
}

TEST_CASE("install schemes: venv like pip and uv, conda prefix like posix_prefix with CEP 17's site-packages") {
    auto v = venv_layout("/e", "3.8.18");
    CHECK(v.purelib == "/e/lib/python3.8/site-packages");
    CHECK(v.scripts == "/e/bin");
    CHECK(v.headers == "/e/include/site/python3.8");
    CHECK(v.interpreter == "/e/bin/python");
    auto c = conda_layout("/e", "3.7");
    CHECK(c.headers == "/e/include/python3.7m");
    CHECK(conda_layout("/e", "3.13", "lib/python3.13t/site-packages").purelib == "/e/lib/python3.13t/site-packages");
    CHECK_THROWS_AS(conda_layout("/e", "3.13", "../outside"), InputError);
}
