// `envlock install` end to end: a lock resolved by `envlock resolve` from the demo mirror
// (tests/mirror: real .conda/.tar.bz2 archives with placeholders and entry points) behind a
// local server, installed, re-installed, dry-run, repaired; and the flags' bad-input paths.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/install/install_fixture.hpp"
#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

// A conda-only environment from the demo mirror's conda-forge: python, numpy built for it,
// and pip (noarch: python, with entry points).
const fs::path& demo_lock() {
    static fs::path lock = [] {
        fs::path dir = temp_dir("install-demo");
        write_file(dir / "spec.yaml",
                   "spec:\n  name: conda-demo\n  channels: [conda-forge]\n  requirements:\n"
                   "    - {conda: python=3.8}\n    - {conda: numpy=1.19.5}\n    - {conda: pip}\n");
        write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
        auto r = resolve_with({(dir / "spec.yaml").string(), "--target", (dir / "target.yaml").string()}, dir);
        REQUIRE_MESSAGE(r.exit_code == 0, r.err);
        return dir / "envlock.yaml";
    }();
    return lock;
}

std::vector<std::string> install_args(const fs::path& lock, const fs::path& prefix, const fs::path& cache,
                                      std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"install", lock.string(), "--prefix", prefix.string(), "--cache-dir", cache.string()};
    auto mirrors = mirror_flags(cache);
    for (size_t i = 2; i < mirrors.size(); ++i) args.push_back(mirrors[i]);   // the --mirror pairs
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

}  // namespace

TEST_CASE("a demo-mirror lock installs: conda-meta records, replaced placeholders (text and binary), runnable entry points") {
    fs::path work = make_temp_dir("cli-demo");
    fs::path prefix = work / "env", cache = work / "cache";
    auto r = run_envlock(install_args(demo_lock(), prefix, cache));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("+ python 3.8") != std::string::npos);
    CHECK(r.out.find("+ numpy 1.19.5") != std::string::npos);
    CHECK(fs::exists(prefix / "conda-meta/history"));
    int records = 0;
    for (const auto& e : fs::directory_iterator(prefix / "conda-meta"))
        if (e.path().extension() == ".json") {
            ++records;
            auto j = nlohmann::json::parse(read_bytes(e.path()));
            CHECK(e.path().filename().string() ==
                  j["name"].get<std::string>() + "-" + j["version"].get<std::string>() + "-" + j["build"].get<std::string>() + ".json");
            CHECK(j["url"].get<std::string>().rfind("https://conda.anaconda.org/conda-forge/", 0) == 0);
        }
    CHECK(records >= 5);
    // The mirror's python carries a text placeholder in its script and a binary one in libpython.
    std::string python_script;
    for (const auto& e : fs::directory_iterator(prefix / "bin"))
        if (e.path().filename().string().rfind("python3.8", 0) == 0) python_script = read_bytes(e.path());
    CHECK(python_script.find("# prefix: " + prefix.string() + "\n") != std::string::npos);
    for (const auto& e : fs::directory_iterator(prefix / "lib"))
        if (e.path().filename().string().rfind("libpython3.8", 0) == 0) {
            std::string bin = read_bytes(e.path());
            CHECK(bin.find(prefix.string() + "/lib" + std::string(1, '\0')) != std::string::npos);
            CHECK(bin.find("_placehold") == std::string::npos);
        }
    REQUIRE(fs::exists(prefix / "bin/pip"));
    CHECK(read_bytes(prefix / "bin/pip").rfind("#!" + prefix.string() + "/bin/python3.8\n", 0) == 0);
    CHECK(verify_prefix(prefix).empty());

    auto again = run_envlock(install_args(demo_lock(), prefix, cache, {"--offline"}));
    CHECK(again.exit_code == 0);
    CHECK(again.out.find("is up to date") != std::string::npos);
}

TEST_CASE("the default prefix is .envlock/<target> beside the lock; --dry-run prints the plan and writes nothing") {
    fs::path work = make_temp_dir("cli-default");
    fs::copy_file(demo_lock(), work / "envlock.yaml");
    fs::path cache = work / "cache";
    std::vector<std::string> args{"install", (work / "envlock.yaml").string(), "--cache-dir", cache.string(), "--dry-run"};
    auto dry = run_envlock(args);
    REQUIRE_MESSAGE(dry.exit_code == 0, dry.err);
    CHECK(dry.out.find("plan for " + (work / ".envlock/default").string()) != std::string::npos);
    CHECK(dry.out.find("would install") != std::string::npos);
    CHECK(!fs::exists(work / ".envlock"));
    CHECK(!fs::exists(cache));
}

TEST_CASE("install flags: an unknown --target or --link-mode is bad input (exit 2), a missing lock too") {
    fs::path work = make_temp_dir("cli-flags");
    auto t = run_envlock({"install", demo_lock().string(), "--target", "lab-h100", "--prefix", (work / "p").string()});
    CHECK(t.exit_code == 2);
    CHECK(t.err.find("--target lab-h100: the lock has no such target (it has default)") != std::string::npos);
    auto m = run_envlock({"install", demo_lock().string(), "--link-mode", "reflinkish", "--prefix", (work / "p").string()});
    CHECK(m.exit_code == 2);
    CHECK(m.err.find("--link-mode") != std::string::npos);
    auto missing = run_envlock({"install", (work / "nope.yaml").string()});
    CHECK(missing.exit_code == 2);
    CHECK(!fs::exists(work / "p"));
}

TEST_CASE("offline with an empty cache names what is missing and exits 3") {
    fs::path work = make_temp_dir("cli-offline");
    auto r = run_envlock(install_args(demo_lock(), work / "env", work / "cache", {"--offline"}));
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("offline, and these files are not downloaded") != std::string::npos);
    CHECK(!fs::exists(work / "env"));
}

TEST_CASE("--link-mode copy gives files of their own; --repair afterwards says there is nothing to repair") {
    fs::path work = make_temp_dir("cli-copy");
    fs::path prefix = work / "env", cache = work / "cache";
    auto r = run_envlock(install_args(demo_lock(), prefix, cache, {"--link-mode", "copy", "--quiet"}));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.empty());
    for (const auto& e : fs::recursive_directory_iterator(prefix))
        if (e.is_regular_file() && !e.is_symlink()) CHECK(fs::hard_link_count(e.path()) == 1);
    auto repair = run_envlock(install_args(demo_lock(), prefix, cache, {"--repair"}));
    CHECK(repair.exit_code == 0);
    CHECK(repair.out.find("nothing to repair") != std::string::npos);
}
