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
            const std::string text = read_bytes(e.path());
            auto j = nlohmann::json::parse(text);
            // Written as json's dump(2) writes it: sorted keys, two-space indent, nothing else.
            CHECK(j.dump(2) + "\n" == text);
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

TEST_CASE("install names each package once, then says as uv does how many, how long, and how many came from the cache (#30)") {
    fs::path work = make_temp_dir("cli-summary");
    fs::path cache = work / "cache";
    auto first = run_envlock(install_args(demo_lock(), work / "a", cache));
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    const std::string all = first.out + first.err;
    auto count = [](const std::string& text, const std::string& what) {
        size_t n = 0;
        for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
        return n;
    };
    CHECK(count(all, "numpy") == 1);
    CHECK(count(all, "python 3.8") == 1);
    auto line = first.out.substr(first.out.find("installed "));
    CAPTURE(line);
    CHECK(line.find(", removed 0, kept 0 packages in ") != std::string::npos);
    CHECK(line.find(" downloaded, 0 from the cache)") != std::string::npos);
    // A second prefix over the same cache downloads nothing.
    auto second = run_envlock(install_args(demo_lock(), work / "b", cache));
    REQUIRE_MESSAGE(second.exit_code == 0, second.err);
    CHECK(second.out.find("(0 downloaded, ") != std::string::npos);
    CHECK(second.out.find(" from the cache)") != std::string::npos);
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

TEST_CASE("install --json prints the plan with the lock's names and kinds, and nothing else on stdout (issue 19)") {
    fs::path work = make_temp_dir("cli-json");
    fs::copy_file(demo_lock(), work / "envlock.yaml");
    auto dry = run_envlock({"install", (work / "envlock.yaml").string(), "--cache-dir", (work / "cache").string(), "--dry-run", "--json"});
    REQUIRE_MESSAGE(dry.exit_code == 0, dry.err);
    auto j = nlohmann::json::parse(dry.out);
    CHECK(j["prefix"] == (work / ".envlock/default").string());
    CHECK(j["dry-run"] == true);
    CHECK(j["changed"] == false);
    REQUIRE(j["add"].is_array());
    CHECK_FALSE(j["add"].empty());
    for (const auto& p : j["add"]) {
        CHECK(p["name"].is_string());
        CHECK(p["kind"].is_string());
    }
    CHECK(!fs::exists(work / ".envlock"));
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

TEST_CASE("a mixed conda + PyPI demo-mirror lock: conda python, wheels on it, an entry point that runs, and --repair of delete/edit/foreign numpy") {
    // Issue 16's first and fifth "done when": resolved by `envlock resolve` against the demo
    // mirror (real .conda and wheel archives behind a local server), installed by the binary.
    fs::path work = make_temp_dir("cli-mixed");
    write_file(work / "spec.yaml",
               "spec:\n  name: mixed-demo\n  channels: [conda-forge]\n  requirements:\n"
               "    - {conda: python=3.8}\n    - {conda: numpy=1.19.5}\n    - {pypi: yapf==0.40.1}\n");
    write_file(work / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    auto resolved = resolve_with({(work / "spec.yaml").string(), "--target", (work / "target.yaml").string()}, work);
    REQUIRE_MESSAGE(resolved.exit_code == 0, resolved.err);
    const fs::path lock = work / "envlock.yaml", prefix = work / "env", cache = work / "cache";
    const std::string lock_text = read_bytes(lock);
    REQUIRE(lock_text.find("- pypi:") != std::string::npos);
    REQUIRE(lock_text.find("- conda:") != std::string::npos);

    auto r = run_envlock(install_args(lock, prefix, cache));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("+ python 3.8") != std::string::npos);
    CHECK(r.out.find("+ yapf 0.40.1 (pypi)") != std::string::npos);
    const fs::path sp = prefix / "lib/python3.8/site-packages";
    // The wheel went into the conda python's site-packages, with a RECORD of installed paths.
    REQUIRE(fs::exists(sp / "yapf-0.40.1.dist-info/RECORD"));
    const std::string record = read_bytes(sp / "yapf-0.40.1.dist-info/RECORD");
    CHECK(record.find("yapf/__init__.py,sha256=") != std::string::npos);
    CHECK(record.find("../../../bin/yapf,sha256=") != std::string::npos);
    CHECK(read_bytes(sp / "yapf-0.40.1.dist-info/INSTALLER") == "envlock\n");
    // Its console script names the env's python and runs, inside and outside `envlock run`.
    REQUIRE(fs::exists(prefix / "bin/yapf"));
    CHECK(read_bytes(prefix / "bin/yapf").rfind("#!" + prefix.string() + "/bin/python3.8\n", 0) == 0);
    auto ran = run_program({(prefix / "bin/yapf").string()});
    CHECK_MESSAGE(ran.exit_code == 0, ran.err);
    CHECK(ran.out == "yapf from yapf 0.40.1\n");
    auto in_env = run_envlock({"run", "--prefix", prefix.string(), "--", "yapf"});
    CHECK_MESSAGE(in_env.exit_code == 0, in_env.err);
    CHECK(in_env.out == "yapf from yapf 0.40.1\n");
    CHECK(verify_prefix(prefix).empty());

    // The damage: a wheel's file deleted, a conda file edited in place (through its hardlink,
    // so the cache is edited too), and a pip-installed numpy over the locked conda one.
    const std::string numpy_init = read_bytes(sp / "numpy/__init__.py");
    fs::remove(sp / "yapf/__init__.py");
    { std::ofstream(sp / "numpy/__init__.py", std::ios::app) << "raise ImportError('edited')\n"; }
    write_bytes(sp / "numpy/_pip_only.py", "shadow = True\n");
    write_bytes(sp / "numpy-1.26.4.dist-info/METADATA", "Metadata-Version: 2.1\nName: numpy\nVersion: 1.26.4\n");
    write_bytes(sp / "numpy-1.26.4.dist-info/INSTALLER", "pip\n");
    write_bytes(sp / "numpy-1.26.4.dist-info/RECORD",
                "numpy/_pip_only.py,,\nnumpy/__init__.py,,\nnumpy-1.26.4.dist-info/METADATA,,\n"
                "numpy-1.26.4.dist-info/INSTALLER,,\nnumpy-1.26.4.dist-info/RECORD,,\n");
    write_bytes(work / "user-notes.txt", "mine\n");
    auto before = snapshot(prefix);

    auto repaired = run_envlock(install_args(lock, prefix, cache, {"--repair", "--offline"}));
    REQUIRE_MESSAGE(repaired.exit_code == 0, repaired.err);
    CHECK(repaired.err.find("restored lib/python3.8/site-packages/yapf/__init__.py") != std::string::npos);
    CHECK(repaired.err.find("restored lib/python3.8/site-packages/numpy/__init__.py") != std::string::npos);
    CHECK(repaired.out.find("repaired: 2 files restored, 4 foreign files removed") != std::string::npos);
    CHECK(verify_prefix(prefix).empty());
    CHECK(read_bytes(sp / "numpy/__init__.py") == numpy_init);
    CHECK(!fs::exists(sp / "numpy/_pip_only.py"));
    CHECK(!fs::exists(sp / "numpy-1.26.4.dist-info"));
    CHECK(read_bytes(work / "user-notes.txt") == "mine\n");
    // Touches only those: every other file is as it was.
    auto after = snapshot(prefix);
    for (const auto& [path, content] : before) {
        if (path.rfind("lib/python3.8/site-packages/numpy", 0) == 0 || path.rfind("lib/python3.8/site-packages/yapf/", 0) == 0 ||
            path.rfind("conda-meta/history", 0) == 0 || path.rfind(".envlock/", 0) == 0)
            continue;
        CAPTURE(path);
        CHECK(after.count(path) == 1);
        if (after.count(path)) CHECK(after[path] == content);
    }
    auto again = run_program({(prefix / "bin/yapf").string()});
    CHECK(again.out == "yapf from yapf 0.40.1\n");
}
