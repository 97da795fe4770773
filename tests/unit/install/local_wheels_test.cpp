// A lock resolved from a find-links folder of local wheels (Debian's /usr/share/python-wheels:
// pip and setuptools): resolve records the sha256 of the local files it chose, so the lock its
// own reader validates installs, and pip inside the env manages what envlock installed.
#include <doctest/doctest.h>

#include "tests/unit/install/install_fixture.hpp"
#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

TEST_CASE("a find-links folder of local wheels: the lock has their sha256, installs, and pip in the env lists, checks "
          "and uninstalls them") {
    const fs::path wheels = "/usr/share/python-wheels";
    bool have = false;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(wheels, ec))
        have = have || e.path().filename().string().rfind("setuptools-", 0) == 0;
    if (!have) {
        MESSAGE("skipped: no setuptools wheel in /usr/share/python-wheels (python3-setuptools-whl)");
        return;
    }
    fs::path work = make_temp_dir("local-wheels");
    fs::create_directories(work / "index/simple");
    HttpServer empty_index((work / "index").string());   // no project on it: everything comes from the folder
    std::string python = run_program({"/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"}).out;
    python.pop_back();
    write_file(work / "spec.yaml", "spec:\n  name: local-wheels\n  python: \"" + python + "\"\n  indexes: [" + empty_index.url() +
                                       "/simple]\n  find-links: [file://" + wheels.string() + "]\n  requirements: [pip, setuptools]\n");
    write_file(work / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    auto r = run_envlock({"resolve", (work / "spec.yaml").string(), "--target", (work / "target.yaml").string(), "-o",
                          (work / "envlock.yaml").string(), "--cache-dir", (work / "cache").string()});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::string lock = read_bytes(work / "envlock.yaml");
    for (const auto& e : fs::directory_iterator(wheels)) {
        if (lock.find(e.path().filename().string()) == std::string::npos) continue;
        CHECK(lock.find("sha256: \"" + mirror::sha256_hex_of(read_bytes(e.path())) + "\"") != std::string::npos);
    }
    CHECK(run_envlock({"check", (work / "envlock.yaml").string()}).exit_code == 0);

    fs::path env = work / "env";
    r = run_envlock({"install", (work / "envlock.yaml").string(), "--prefix", env.string(), "--cache-dir", (work / "cache").string()});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::string pip = (env / "bin/python").string();
    auto list = run_program({pip, "-m", "pip", "list", "--disable-pip-version-check"});
    CHECK(list.out.find("pip ") != std::string::npos);
    CHECK(list.out.find("setuptools ") != std::string::npos);
    auto check = run_program({pip, "-m", "pip", "check", "--disable-pip-version-check"});
    CHECK_MESSAGE(check.exit_code == 0, check.out << check.err);
    auto uninstall = run_program({pip, "-m", "pip", "uninstall", "-y", "--disable-pip-version-check", "setuptools"});
    CHECK_MESSAGE(uninstall.exit_code == 0, uninstall.out << uninstall.err);
    CHECK(run_program({pip, "-m", "pip", "list", "--disable-pip-version-check"}).out.find("setuptools ") == std::string::npos);
}
