// The Python half as the transaction calls it (install/python_steps.hpp over transaction.hpp):
// a venv for a PyPI-only lock, a wheel from the cache's archive or tree into the stage, a git
// source built in the stage. Goes to tests/unit/wheels/ once branch `install` is on main.
#include <doctest/doctest.h>

#include "install/python_steps.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

using namespace envlock;
using namespace envlock::install;
using namespace envlock::test;

namespace {

Lock pypi_only_lock(const std::string& version) {
    Lock lock;
    lock.spec.python = version;
    return lock;
}

}  // namespace

TEST_CASE("venv_maker: a venv in the stage on a base interpreter of the locked version, and where packages go") {
    TempDir t;
    PythonStepOptions o;
    o.interpreter_dirs = {"/usr/bin"};
    auto r = venv_maker(o)(pypi_only_lock(fixture_wheels().python_version), t.path / "stage", t.path / "prefix");
    CHECK(r.python.major_minor == fixture_wheels().python_version);
    CHECK(r.python.site_packages == "lib/python" + fixture_wheels().python_version + "/site-packages");
    CHECK(r.package.kind == "venv");
    CHECK(fs::exists(t.path / "stage/pyvenv.cfg"));
    bool has_python_link = false;
    for (const auto& f : r.package.files)
        if (f.path == "bin/python") has_python_link = !f.link_target.empty();
    CHECK(has_python_link);
    CHECK_THROWS_WITH_AS(venv_maker(o)(pypi_only_lock("2.6"), t.path / "s2", t.path / "p2"), doctest::Contains("Python 2.6"), EnvironmentError);
}

TEST_CASE("wheel_installer: from the cache's archive into the stage, the final prefix in shebangs, every file reported") {
    const auto& w = fixture_wheels();
    TempDir t;
    PythonStepOptions o;
    o.interpreter_dirs = {"/usr/bin"};
    Lock lock = pypi_only_lock(w.python_version);
    auto venv = venv_maker(o)(lock, t.path / "stage", t.path / "prefix");
    LockedPackage pkg;
    pkg.kind = Ecosystem::pypi;
    pkg.name = "fix-pkg";
    pkg.version = "1.2.0";
    pkg.url = "https://example.org/" + fs::path(w.fix_pkg).filename().string();
    pkg.sha256 = digest_file(w.fix_pkg).sha256;
    CacheEntry entry;
    entry.filename = fs::path(w.fix_pkg).filename().string();
    entry.dir = t.path / "cache";
    fs::create_directories(entry.dir);
    fs::copy_file(w.fix_pkg, entry.archive());
    PackageContext ctx{lock, pkg, t.path / "stage", t.path / "prefix", &entry, LinkMode::hardlink, venv.python, {}};
    InstalledPackage got = wheel_installer(o)(ctx);
    CHECK(got.kind == "pypi");
    CHECK(got.id == package_id(pkg));
    std::set<std::string> paths;
    for (const auto& f : got.files) paths.insert(f.path);
    CHECK(paths.count("bin/fix-hello"));
    CHECK(read_text(t.path / "stage/bin/fix-hello").rfind("#!" + t.str("prefix/bin/python") + "\n", 0) == 0);
    CHECK_FALSE(fs::exists(t.path / "prefix"));
    fs::rename(t.path / "stage", t.path / "prefix");   // the swap
    CHECK(run_program({t.str("prefix/bin/fix-hello")}).out == "hello from fixpkg\n");
    // A direct URL (no index offered it): direct_url.json with the archive's hash.
    CHECK(read_text(t.path / ("prefix/lib/python" + w.python_version + "/site-packages/fix_pkg-1.2.0.dist-info/direct_url.json"))
              .find(pkg.sha256) != std::string::npos);
}
