// A user's own small repo, as uv takes it: PyPI requirements and nothing else become a virtual
// environment on a Python chosen in uv's order (--python, .python-version, requires-python over
// the interpreters this machine has, newest first), recorded in the lock with where it came from;
// `check` passes on what resolve wrote; appending a requirement and resolving again adds it.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "install/python_env.hpp"
#include "resolver/specs/conda_version.hpp"
#include "tests/unit/resolve/resolve_fixture.hpp"

namespace fs = std::filesystem;
using namespace envlock;
using namespace envlock::test;

namespace {

// The newest minor of the interpreters `envlock resolve` finds here (it searches the same dirs).
std::string newest_host_minor(const std::string& at_least = "0") {
    std::string best;
    for (const auto& b : install::find_interpreters(install::default_interpreter_dirs())) {
        std::string mm = b.version.substr(0, b.version.find('.', b.version.find('.') + 1));
        auto v = conda::Version::parse(mm);
        if (v < conda::Version::parse(at_least)) continue;
        if (best.empty() || conda::Version::parse(best) < v) best = mm;
    }
    return best;
}

// The `python:` block of a lock: version and from.
std::string lock_python(const std::string& lock, const char* field = "version") {
    auto at = lock.find("\npython:\n");
    if (at == std::string::npos) return "";
    auto key = lock.find(std::string("  ") + field + ": ", at);
    if (key == std::string::npos || key > lock.find("\n", lock.find("\n", at + 9) + 1) + 200) return "";
    auto begin = key + 4 + std::string(field).size();
    std::string v = lock.substr(begin, lock.find('\n', begin) - begin);
    if (!v.empty() && v.front() == '"') v = v.substr(1, v.size() - 2);
    return v;
}

RunResult resolve_dir(const fs::path& dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{dir.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return resolve_with(args, dir);
}

}  // namespace

TEST_CASE("own repo: requirements.txt alone locks a venv on the newest Python here, check passes, an appended requirement is added") {
    std::string newest = newest_host_minor("3.7");
    if (newest.empty()) {
        MESSAGE("no CPython >= 3.7 on this machine; skipped");
        return;
    }
    fs::path dir = temp_dir("own-repo");
    write_file(dir / "requirements.txt", "requests\nclick>=8\n");
    auto first = resolve_dir(dir);
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    std::string lock = read_file(dir / "envlock.yaml");
    CHECK(lock_python(lock) == newest);
    CHECK(lock_python(lock, "from").find("the newest Python on this machine") != std::string::npos);
    CHECK(locked_version(lock, "requests") == "2.31.0");
    CHECK(locked_version(lock, "click") == "8.0.4");
    CHECK(lock.find("conda.anaconda.org") == std::string::npos);   // no conda python asked for
    auto check = run_envlock({"check", (dir / "envlock.yaml").string()});
    CHECK_MESSAGE(check.exit_code == 0, (check.out + check.err));

    // attrs lists extras nobody asks for (one of them asks attrs[tests] of itself): not requirements.
    write_file(dir / "requirements.txt", "requests\nclick>=8\nattrs\n");
    auto second = resolve_dir(dir);
    REQUIRE_MESSAGE(second.exit_code == 0, second.err);
    CHECK(second.out.find("lock unchanged") == std::string::npos);
    lock = read_file(dir / "envlock.yaml");
    CHECK(locked_version(lock, "attrs") == "23.2.0");
    CHECK(locked_version(lock, "hypothesis").empty());
    CHECK(lock_python(lock) == newest);
    check = run_envlock({"check", (dir / "envlock.yaml").string()});
    CHECK_MESSAGE(check.exit_code == 0, (check.out + check.err));
}

TEST_CASE("own repo: --python X.Y is the venv's Python, remembered in the spec, and a re-resolve without it keeps it") {
    fs::path dir = temp_dir("own-python-flag");
    write_file(dir / "requirements.txt", "click>=8\n");
    auto r = resolve_dir(dir, {"--python", "3.9"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::string lock = read_file(dir / "envlock.yaml");
    CHECK(lock_python(lock) == "3.9");
    CHECK(lock_python(lock, "from") == "--python");
    CHECK(lock.find("python-from: --python") != std::string::npos);
    CHECK(run_envlock({"check", (dir / "envlock.yaml").string()}).exit_code == 0);

    auto again = resolve_dir(dir);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(lock_python(read_file(dir / "envlock.yaml")) == "3.9");

    auto bad = resolve_dir(dir, {"--python", "three"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--python three: expected a version such as 3.12") != std::string::npos);
}

TEST_CASE("own repo: .python-version comes before requires-python, which constrains the venv's Python and asks no conda channel") {
    fs::path dir = temp_dir("own-python-version");
    write_file(dir / "requirements.txt", "click>=8\n");
    write_file(dir / "setup.cfg", "[metadata]\nname = mine\n\n[options]\npython_requires = >=3.7\n");
    write_file(dir / ".python-version", "# the interpreter\n3.10\n");
    auto r = resolve_dir(dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::string lock = read_file(dir / "envlock.yaml");
    CHECK(lock_python(lock) == "3.10");
    CHECK(lock_python(lock, "from") == ".python-version:2");
    CHECK(lock.find("{any: python>=3.7, from: setup.cfg:5}") != std::string::npos);
    CHECK(lock.find("conda.anaconda.org") == std::string::npos);
    CHECK(run_envlock({"check", (dir / "envlock.yaml").string()}).exit_code == 0);
}

TEST_CASE("own repo: a requires-python no interpreter here satisfies is refused before any index is read, naming it") {
    fs::path dir = temp_dir("own-python-none");
    write_file(dir / "requirements.txt", "click>=8\n");
    write_file(dir / "setup.cfg", "[metadata]\nname = mine\n\n[options]\npython_requires = >=3.99\n");
    auto r = resolve_dir(dir);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("its PyPI requirements need a Python, and the spec asks for python>=3.99 (setup.cfg:5)") != std::string::npos);
    CHECK(r.err.find("--python X.Y") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "envlock.yaml"));
}

// --- inputs never silently ignored --------------------------------------------------------------

TEST_CASE("own repo: a lock whose spec came from a spec file says so when the folder is resolved again, and reads that file again") {
    fs::path dir = temp_dir("own-spec-file");
    write_file(dir / "requirements.txt", "click>=8\n");
    write_file(dir / "spec.yaml", "spec:\n  name: mine\n  inferred-from: [requirements.txt]\n  python: \"3.9\"\n"
                                  "  requirements:\n    - {pypi: click>=8, from: requirements.txt:1}\n");
    auto first = resolve_with({(dir / "spec.yaml").string()}, dir);
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    CHECK(read_file(dir / "envlock.yaml").find("spec-file: \"spec.yaml\"") != std::string::npos);

    write_file(dir / "spec.yaml", read_file(dir / "spec.yaml") + "    - {pypi: attrs}\n");
    auto again = resolve_dir(dir);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(again.err.find("the spec comes from spec.yaml (the lock's spec-file), read again") != std::string::npos);
    CHECK(locked_version(read_file(dir / "envlock.yaml"), "attrs") == "23.2.0");
}

TEST_CASE("own repo: a file the checkout did not have (.python-version) is read on the next resolve") {
    fs::path dir = temp_dir("own-new-file");
    write_file(dir / "requirements.txt", "click>=8\n");
    REQUIRE(resolve_dir(dir, {"--python", "3.8"}).exit_code == 0);
    // --python was remembered; a .python-version the user adds later is a file of the checkout
    // the spec was not read from: it is seen (and --python, remembered, still decides).
    write_file(dir / ".python-version", "3.10\n");
    auto again = resolve_dir(dir);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(again.err.find(".python-version changed since the lock was made") != std::string::npos);
    CHECK(read_file(dir / "envlock.yaml").find(".python-version") != std::string::npos);
}

TEST_CASE("own repo: README prose outside its install section does not fail check, and 'lock unchanged' means untouched bytes") {
    fs::path dir = temp_dir("own-prose");
    write_file(dir / "README.md", "# Mine\n\n## Install\n\n```bash\npip install 'click>=8'\n```\n");
    REQUIRE(resolve_dir(dir, {"--python", "3.9"}).exit_code == 0);
    REQUIRE(read_file(dir / "envlock.yaml").find("  README.md: ") != std::string::npos);   // a file the spec was read from
    write_file(dir / "README.md", "# Mine\n\nA tool that does one thing well.\n\n## Install\n\n```bash\npip install 'click>=8'\n```\n");
    auto check = run_envlock({"check", (dir / "envlock.yaml").string()});
    CHECK_MESSAGE(check.exit_code == 0, (check.out + check.err));

    auto rewritten = resolve_dir(dir);   // the requirement's line moved: the lock says so
    REQUIRE_MESSAGE(rewritten.exit_code == 0, rewritten.err);
    CHECK(rewritten.out.find("lock unchanged") == std::string::npos);
    std::string bytes = read_file(dir / "envlock.yaml");
    CHECK(bytes.find("README.md:8") != std::string::npos);
    auto same = resolve_dir(dir);
    REQUIRE_MESSAGE(same.exit_code == 0, same.err);
    CHECK(same.out.find("lock unchanged") != std::string::npos);
    CHECK(read_file(dir / "envlock.yaml") == bytes);

    // A change to what is installed is a change: check names the file.
    write_file(dir / "README.md", "# Mine\n\nA tool that does one thing well.\n\n## Install\n\n```bash\npip install 'click>=8' attrs\n```\n");
    auto stale = run_envlock({"check", (dir / "envlock.yaml").string()});
    CHECK(stale.exit_code == 1);
    CHECK(stale.out.find("README.md: changed since the spec was inferred from it") != std::string::npos);
}

// --- the lock found upward; run brings the env to its lock ----------------------------------------

namespace {

RunResult envlock_in(const fs::path& cwd, const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    std::string cmd = "cd '" + cwd.string() + "' && exec '" ENVLOCK_BINARY "'";
    for (const auto& a : args) cmd += " '" + a + "'";
    std::vector<std::string> argv{"env"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {"sh", "-c", cmd});
    return run_program(argv);
}

// What `run` needs to install from the demo mirror: the mirror rules and a cache of its own.
std::vector<std::string> run_env_vars(const fs::path& dir) {
    auto flags = mirror_flags(dir / "cache");
    std::string rules;
    for (size_t i = 0; i + 1 < flags.size(); ++i)
        if (flags[i] == "--mirror") rules += (rules.empty() ? "" : ";") + flags[i + 1];
    return {"ENVLOCK_MIRRORS=" + rules, "XDG_CACHE_HOME=" + (dir / "xdg-cache").string()};
}

}  // namespace

TEST_CASE("own repo: check, run and install find envlock.yaml from a subfolder; run installs what the env lacks; --frozen, --locked; no host pip") {
    std::string newest = newest_host_minor("3.7");
    if (newest.empty()) {
        MESSAGE("no CPython >= 3.7 on this machine; skipped");
        return;
    }
    fs::path dir = temp_dir("own-run");
    write_file(dir / "requirements.txt", "click>=8\n");
    fs::create_directories(dir / "src" / "deep");
    REQUIRE(resolve_dir(dir).exit_code == 0);
    auto vars = run_env_vars(dir);

    auto check = envlock_in(dir / "src" / "deep", {"check"});
    CHECK_MESSAGE(check.exit_code == 0, (check.out + check.err));
    CHECK(check.out.find("../../envlock.yaml: ok") != std::string::npos);

    // No install yet: run installs first, then runs.
    auto first = envlock_in(dir / "src", {"run", "--", "python", "-c", "import click; print(click.__version__)"}, vars);
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    CHECK(first.out == "8.0.4\n");
    CHECK(fs::exists(dir / ".envlock" / "default" / "pyvenv.cfg"));

    // The lock gains attrs: --frozen runs the env as it is, a plain run brings it to the lock.
    write_file(dir / "requirements.txt", "click>=8\nattrs\n");
    REQUIRE(resolve_dir(dir).exit_code == 0);
    auto frozen = envlock_in(dir / "src", {"run", "--frozen", "--", "python", "-c", "import attrs"}, vars);
    CHECK(frozen.exit_code == 1);
    auto synced = envlock_in(dir / "src", {"run", "--", "python", "-c", "import attrs"}, vars);
    CHECK_MESSAGE(synced.exit_code == 0, synced.err);
    CHECK(synced.err.find("installed 1") != std::string::npos);

    // requirements.txt moves on without a resolve: --locked refuses, a plain run says so and runs.
    write_file(dir / "requirements.txt", "click>=8\nattrs\ntabulate\n");
    auto locked = envlock_in(dir / "src", {"run", "--locked", "--", "python", "-c", "pass"}, vars);
    CHECK(locked.exit_code == 1);
    CHECK(locked.err.find("envlock.yaml is out of date (requirements.txt changed since the spec was read from it)") != std::string::npos);
    auto noted = envlock_in(dir / "src", {"run", "--", "python", "-c", "pass"}, vars);
    CHECK(noted.exit_code == 0);
    CHECK(noted.err.find("is out of date") != std::string::npos);

    // The venv has no pip: the host's would install into another Python.
    auto pip = envlock_in(dir / "src", {"run", "--", "pip", "--version"}, vars);
    CHECK(pip.exit_code == 127);
    CHECK(pip.err.find("has no pip") != std::string::npos);
    CHECK(pip.err.find("envlock install --seed") != std::string::npos);

    // install --seed gives the venv a pip of its own (as `uv venv --seed`), which run then takes.
    bool wheel_here = false;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/usr/share/python-wheels", ec))
        if (e.path().filename().string().rfind("pip-", 0) == 0) wheel_here = true;
    if (!wheel_here) {
        MESSAGE("no pip wheel in /usr/share/python-wheels (Debian's python3-pip-whl); --seed not tried");
        return;
    }
    auto seed = envlock_in(dir / "src", {"install", "--seed"}, vars);
    REQUIRE_MESSAGE(seed.exit_code == 0, seed.err);
    CHECK(seed.err.find("seeded pip ") != std::string::npos);
    auto own_pip = envlock_in(dir / "src", {"run", "--frozen", "--", "pip", "--version"}, vars);
    CHECK_MESSAGE(own_pip.exit_code == 0, own_pip.err);
    CHECK(own_pip.out.find((dir / ".envlock" / "default").string()) != std::string::npos);
    // Seeded pip is no package of the lock: the env is still the lock's, and a second seed has nothing to do.
    auto again = envlock_in(dir / "src", {"install", "--seed"}, vars);
    CHECK(again.exit_code == 0);
    CHECK(again.err.find("seeded") == std::string::npos);
}

// --- the lock holds only facts that decide the solve ----------------------------------------------

TEST_CASE("own repo: two machines that differ in every host fact lock a pure-PyPI spec to the same bytes, with none of them in it") {
    fs::path dir = temp_dir("own-hosts");
    write_file(dir / "requirements.txt", "requests\nclick>=8\n");
    // An H100 workstation with compilers and a toolkit; a bare WSL box on an older glibc.
    write_file(dir / "big.yaml", "platform: linux-64\nkernel: \"6.1.0\"\nglibc: \"2.36\"\nwsl: false\n"
                                 "cpu-flags: [avx, avx2, avx512f, fma, sse4_2]\ndriver: \"550.54.14\"\ndriver-cuda: \"12.4\"\n"
                                 "gpus:\n  - {name: \"NVIDIA H100 80GB HBM3\", sm: sm_90}\n"
                                 "compilers:\n  - {kind: gcc, path: /usr/bin/gcc, version: \"12.2.0\"}\n"
                                 "  - {kind: clang, path: /usr/bin/clang, version: \"14.0.6\"}\n"
                                 "cuda-toolkits:\n  - {path: /usr/local/cuda-12.1, version: \"12.1\", gpu-archs: [compute_90]}\n");
    write_file(dir / "bare.yaml", "platform: linux-64\nkernel: \"5.15.90.1-microsoft-standard-WSL2\"\nglibc: \"2.31\"\nwsl: true\ncpu-flags: [sse4_2]\n");
    auto with = resolve_dir(dir, {"--python", "3.11", "--target", (dir / "big.yaml").string(), "-o", (dir / "with.yaml").string()});
    REQUIRE_MESSAGE(with.exit_code == 0, with.err);
    auto without = resolve_dir(dir, {"--python", "3.11", "--target", (dir / "bare.yaml").string(), "-o", (dir / "without.yaml").string()});
    REQUIRE_MESSAGE(without.exit_code == 0, without.err);
    std::string a = read_file(dir / "with.yaml");
    CHECK(a == read_file(dir / "without.yaml"));
    for (const char* host_fact : {"12.2.0", "14.0.6", "cuda-12.1", "sm_90", "H100", "550.54", "avx", "glibc:", "\"2.31\"", "wsl:", "kernel:", "toolchain:"})
        CHECK_MESSAGE(a.find(host_fact) == std::string::npos, (std::string(host_fact) + " in:\n" + a));
    CHECK(a.find("left-out: [compilers, cpu-flags, cuda-toolkits, driver, glibc, gpus, wsl]") != std::string::npos);
    auto check = run_envlock({"check", (dir / "with.yaml").string()});
    CHECK_MESSAGE(check.exit_code == 0, (check.out + check.err));

    // Resolved again here, the left-out facts are this machine's for the solve, and left out
    // again: the file is untouched.
    auto again = resolve_dir(dir, {"--python", "3.11", "-o", (dir / "with.yaml").string()});
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(read_file(dir / "with.yaml") == a);
    CHECK(again.out.find("lock unchanged") != std::string::npos);
}

TEST_CASE("own repo: the same pure-PyPI spec resolved with and without compilers, nvcc and a GPU on PATH gives identical bytes") {
    fs::path dir = temp_dir("own-path");
    write_file(dir / "requirements.txt", "requests\nclick>=8\n");
    // A toolbox as detect finds it on PATH and CUDA_HOME: gcc, clang, nvcc, nvidia-smi.
    fs::path tools = dir / "tools";
    auto program = [&](const std::string& name, const std::string& body) {
        write_file(tools / "bin" / name, "#!/bin/sh\n" + body + "\n");
        fs::permissions(tools / "bin" / name, fs::perms::owner_all, fs::perm_options::add);
    };
    program("gcc", "[ \"$1\" = -dumpfullversion ] && echo 13.2.0");
    program("clang", "echo 'clang version 17.0.6'");
    program("nvcc", "echo 'Cuda compilation tools, release 12.4, V12.4.131'");
    program("nvidia-smi", "case \"$1\" in --query-gpu=name,compute_cap) echo 'NVIDIA H100 80GB HBM3, 9.0';; --query-gpu=driver_version) echo 550.54.14;; *) echo 'CUDA Version: 12.4';; esac");
    fs::create_directories(dir / "empty");
    std::vector<std::string> base{dir.string(), "--python", "3.11"};
    auto flags = mirror_flags(dir / "cache");
    auto resolve_in = [&](const std::string& out, const std::vector<std::string>& env) {
        std::vector<std::string> args{"resolve"};
        args.insert(args.end(), base.begin(), base.end());
        args.insert(args.end(), {"-o", (dir / out).string()});
        args.insert(args.end(), flags.begin(), flags.end());
        return run_envlock(args, env);
    };
    auto with = resolve_in("with.yaml", {"PATH=" + (tools / "bin").string() + ":/usr/bin:/bin", "CUDA_HOME=" + tools.string()});
    REQUIRE_MESSAGE(with.exit_code == 0, with.err);
    auto without = resolve_in("without.yaml", {"PATH=" + (dir / "empty").string(), "CUDA_HOME="});
    REQUIRE_MESSAGE(without.exit_code == 0, without.err);
    std::string a = read_file(dir / "with.yaml");
    CHECK(a == read_file(dir / "without.yaml"));
    CHECK(a.find("13.2.0") == std::string::npos);
    CHECK(a.find("12.4") == std::string::npos);
}

TEST_CASE("own repo: a PyPI lock with a platform wheel keeps glibc, which decides which wheels install, and leaves out the rest") {
    fs::path dir = temp_dir("own-glibc");
    write_file(dir / "requirements.txt", "numpy\n");
    write_file(dir / "t.yaml", "platform: linux-64\nglibc: \"2.36\"\ncpu-flags: [avx, avx2]\n"
                               "compilers:\n  - {kind: gcc, path: /usr/bin/gcc, version: \"12.2.0\"}\n");
    auto r = resolve_dir(dir, {"--python", "3.9", "--target", (dir / "t.yaml").string()});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::string lock = read_file(dir / "envlock.yaml");
    CHECK(lock.find("manylinux") != std::string::npos);
    CHECK_MESSAGE(lock.find("glibc: 2.36\n") != std::string::npos, (lock));
    CHECK(lock.find("left-out: [compilers, cpu-flags, cuda-toolkits, driver, gpus, wsl]") != std::string::npos);
}

// --- export: hashes for the Python and platform pip runs on ------------------------------------

TEST_CASE("own repo: export --format requirements lists every file's hash of each locked release, or those --python X.Y installs") {
    fs::path dir = temp_dir("own-export");
    write_file(dir / "requirements.txt", "numpy\n");
    auto r = resolve_dir(dir, {"--python", "3.9"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::string lock = read_file(dir / "envlock.yaml");
    auto sha_at = lock.find("sha256: \"", lock.find("name: \"numpy\""));
    REQUIRE(sha_at != std::string::npos);
    std::string locked = lock.substr(sha_at + 9, 64);
    auto flags = mirror_flags(dir / "cache");
    auto export_with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args{"export", "--format", "requirements", (dir / "envlock.yaml").string()};
        args.insert(args.end(), extra.begin(), extra.end());
        args.insert(args.end(), flags.begin(), flags.end());
        return run_envlock(args);
    };
    auto hashes_of = [](const std::string& text) {
        size_t n = 0;
        for (auto at = text.find("--hash=sha256:"); at != std::string::npos; at = text.find("--hash=sha256:", at + 1)) ++n;
        return n;
    };
    auto every = export_with({});
    REQUIRE_MESSAGE(every.exit_code == 0, every.err);
    CHECK(every.out.find("# Valid for any Python and platform the locked releases have a file for") != std::string::npos);
    CHECK(hashes_of(every.out) >= 4);   // numpy's cp39 … cp312 wheels
    CHECK(every.out.find("--hash=sha256:" + locked) != std::string::npos);

    auto py311 = export_with({"--python", "3.11"});
    REQUIRE_MESSAGE(py311.exit_code == 0, py311.err);
    CHECK(py311.out.find("# Valid for Python 3.11 on linux-64") != std::string::npos);
    CHECK(hashes_of(py311.out) >= 1);
    CHECK(hashes_of(py311.out) < hashes_of(every.out));
    CHECK(py311.out.find(locked) == std::string::npos);   // the cp39 wheel is not what 3.11 installs

    auto only = export_with({"--locked-only"});
    REQUIRE_MESSAGE(only.exit_code == 0, only.err);
    CHECK(hashes_of(only.out) == 1);
    CHECK(only.out.find("# Valid for Python 3.9") != std::string::npos);
    auto none = export_with({"--python", "2.7"});
    CHECK(none.exit_code == 1);
    CHECK(none.err.find("has no file for Python 2.7") != std::string::npos);
}

// --- the small ones -------------------------------------------------------------------------------

TEST_CASE("own repo: an empty folder is nothing to lock (exit 2, no lock written); envlock alone lists the commands") {
    fs::path dir = temp_dir("own-empty");
    fs::create_directories(dir);
    auto r = resolve_dir(dir);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("nothing to lock here") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "envlock.yaml"));

    // Under --json the failure is a JSON object on stdout as well.
    auto json = resolve_dir(dir, {"--json"});
    CHECK(json.exit_code == 2);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["exit-code"] == 2);
    CHECK(j["error"].get<std::string>().find("nothing to lock here") != std::string::npos);

    auto bare = run_envlock({});
    CHECK(bare.exit_code == 2);
    for (const char* command : {"resolve", "install", "run", "check", "shell-hook", "info", "cache"})
        CHECK_MESSAGE(bare.out.find(command) != std::string::npos, command);
}

TEST_CASE("own repo: envlock info names the cache and this machine; cache dir, prune and clean act on that folder") {
    fs::path dir = temp_dir("own-cache");
    write_file(dir / "cache" / "pages" / "x.records", "derived");
    write_file(dir / "cache" / "pkgs" / "kept.whl", "a package");
    auto info = run_envlock({"info", "--cache-dir", (dir / "cache").string()});
    REQUIRE_MESSAGE(info.exit_code == 0, info.err);
    CHECK(info.out.find("cache:     " + (dir / "cache").string() + " (2 files") != std::string::npos);
    CHECK(info.out.find("platform:  linux-64") != std::string::npos);
    auto where = run_envlock({"cache", "--cache-dir", (dir / "cache").string(), "dir"});
    CHECK(where.out == (dir / "cache").string() + "\n");
    auto prune = run_envlock({"cache", "--cache-dir", (dir / "cache").string(), "prune"});
    CHECK(prune.exit_code == 0);
    CHECK_FALSE(fs::exists(dir / "cache" / "pages"));
    CHECK(fs::exists(dir / "cache" / "pkgs" / "kept.whl"));
    auto clean = run_envlock({"cache", "--cache-dir", (dir / "cache").string(), "clean"});
    CHECK(clean.exit_code == 0);
    CHECK(clean.out.find("removed 1 files") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "cache"));
}
