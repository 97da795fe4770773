// Prefixes that envlock itself installed from real .conda packages (the install tests' channel:
// archives in the CEP 34 layout behind a loopback HTTP server, installed by install_lock), then
// broken the way users break them; doctor names the breakage and shows what `envlock install
// --repair` would do, which is the same plan `install --repair --dry-run` prints.
#include "tests/unit/install/install_fixture.hpp"

#include "install/doctor.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

const knowledge::Knowledge& K() {
    static knowledge::Knowledge k = knowledge::load_builtin();
    return k;
}

install::DoctorMachine machine() {
    install::DoctorMachine m;
    m.target.platform = "linux-64";
    m.nofile_soft = m.nofile_hard = 65536;
    return m;
}

std::string described(const install::DoctorReport& r) {
    std::string s;
    for (const auto& f : r.findings) s += install::severity_name(f.severity) + " [" + f.check + "] " + f.what + " | fix: " + f.fix + "\n";
    return s;
}

const install::Finding* finding(const install::DoctorReport& r, const std::string& check) {
    for (const auto& f : r.findings)
        if (f.check == check) return &f;
    return nullptr;
}

// defaults' split as the 2018 defaults index has it: numpy is a thin package pinning the
// numpy-base build that holds the code and the egg-info.
PkgSpec numpy_base(const std::string& version) {
    PkgSpec p = package("numpy-base", version, "py38hdc34a94_0");
    p.depends = {"python >=3.8,<3.9.0a0"};
    p.files.push_back(file("lib/python3.8/site-packages/numpy/__init__.py", "__version__ = '" + version + "'\n"));
    p.files.push_back(file("lib/python3.8/site-packages/numpy-" + version + "-py3.8.egg-info/PKG-INFO",
                           "Metadata-Version: 1.2\nName: numpy\nVersion: " + version + "\n"));
    return p;
}

PkgSpec numpy_thin(const std::string& version) {
    PkgSpec p = package("numpy", version, "py38h7e9f1db_0");
    p.depends = {"numpy-base " + version + " py38hdc34a94_0", "python >=3.8,<3.9.0a0"};
    return p;
}

struct Installed {
    Channel channel{"doctor"};
    fs::path root = make_temp_dir("doctor-prefix");
    fs::path prefix = root / "env", cache = root / "cache";
    LockedPackage python = channel.add(python_pkg());
    ~Installed() {
        std::error_code ec;
        fs::remove_all(root, ec);
        fs::remove_all(channel.dir, ec);
    }
    Lock lock(const std::string& numpy, const std::string& base) {
        return make_lock({python, channel.add(numpy_thin(numpy)), channel.add(numpy_base(base))});
    }
    void install(const Lock& l) { install::install_lock(l, options_for(prefix, cache)); }
    install::DoctorReport doctor(const Lock* l = nullptr) {
        auto scan = install::scan_prefix(prefix.string());
        std::optional<install::RepairPreview> repair;
        if (l) repair = install::repair_preview(*l, prefix.string());
        return install::diagnose(scan, machine(), K(), l, l ? "envlock.yaml" : "", repair ? &*repair : nullptr);
    }
};

}  // namespace

TEST_CASE("an env envlock installed from .conda packages reads as conda's, and is healthy") {
    Installed env;
    Lock good = env.lock("1.19.5", "1.19.5");
    env.install(good);
    auto scan = install::scan_prefix(env.prefix.string());
    CHECK(scan.conda);
    CHECK(scan.conda_records.size() == 3);
    CHECK(scan.python_version == "3.8.18");
    REQUIRE(scan.dists.size() == 1);
    CHECK(scan.dists[0].name == "numpy");
    CHECK(scan.dists[0].conda_record == "numpy-base");   // conda owns the egg-info
    auto r = env.doctor(&good);
    CHECK_MESSAGE(r.findings.empty(), described(r));
    REQUIRE(r.repair);
    CHECK(r.repair->refused.empty());
    CHECK(r.repair->plan.plan.add.empty());
    CHECK(r.repair->plan.damage.empty());
    CHECK(r.repair->plan.foreign.empty());
    CHECK(r.exit_code() == 0);
}

TEST_CASE("numpy and numpy-base out of step, installed so by envlock: named, with conda's fix, or --repair's plan with the lock") {
    Installed env;
    Lock good = env.lock("1.19.5", "1.19.5");
    env.install(good);
    Lock skewed = env.lock("1.19.5", "1.20.3");   // numpy's record still pins numpy-base 1.19.5
    env.install(skewed);
    auto r = env.doctor();
    const auto* split = finding(r, "split-package");
    REQUIRE_MESSAGE(split, described(r));
    CHECK(split->what == "conda numpy 1.19.5 but numpy-base 1.20.3");
    CHECK(split->fix == "conda install -p " + env.prefix.string() + " \"numpy=1.19.5\" \"numpy-base=1.19.5\"");
    const auto* dep = finding(r, "requirement");
    REQUIRE_MESSAGE(dep, described(r));
    CHECK(dep->what == "conda numpy 1.19.5 depends on numpy-base 1.19.5 py38hdc34a94_0, but numpy-base 1.20.3 is installed");

    // With the lock the env was meant to be: drift, and --repair's own plan.
    auto with_lock = env.doctor(&good);
    REQUIRE(with_lock.drift);
    CHECK(with_lock.drift->changed == std::vector<std::string>{"numpy-base 1.19.5 -> 1.20.3"});
    REQUIRE(with_lock.repair);
    const auto& plan = with_lock.repair->plan.plan;
    REQUIRE(plan.add.size() == 1);
    CHECK(plan.add[0].name == "numpy-base");
    CHECK(plan.add[0].version == "1.19.5");
    REQUIRE(plan.remove.size() == 1);
    CHECK(plan.remove[0].version == "1.20.3");
    CHECK(finding(with_lock, "split-package")->fix == "envlock install envlock.yaml --repair --prefix " + env.prefix.string());

    // The plan is what --repair then does.
    auto o = options_for(env.prefix, env.cache);
    o.repair = true;
    auto done = install::install_lock(good, o);
    CHECK(done.plan.add.size() == 1);
    CHECK(env.doctor(&good).findings.empty());
}

TEST_CASE("a deleted file and a pip-installed distribution over an envlock env: --repair's plan restores one and removes the other") {
    Installed env;
    Lock good = env.lock("1.19.5", "1.19.5");
    env.install(good);
    fs::remove(env.prefix / "lib/python3.8/site-packages/numpy/__init__.py");
    // Debian's pip puts a wheel into the env's site-packages, as `pip install` in the env would.
    TempDir wheels;
    std::string whl = (wheels.path / "tqdm-4.64.1-py3-none-any.whl").string();
    make_wheel(whl, {{"tqdm/__init__.py", "__version__ = '4.64.1'\n"},
                     {"tqdm-4.64.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: tqdm\nVersion: 4.64.1\n"},
                     {"tqdm-4.64.1.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: envlock-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
                     {"tqdm-4.64.1.dist-info/RECORD", ""}},
               "", {});
    auto pip = run_program({kDebianPython, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile", "--disable-pip-version-check",
                            "--target", (env.prefix / "lib/python3.8/site-packages").string(), whl});
    REQUIRE_MESSAGE(pip.exit_code == 0, pip.out << pip.err);

    auto r = env.doctor(&good);
    REQUIRE(r.drift);
    CHECK(r.drift->added == std::vector<std::string>{"tqdm 4.64.1"});
    const auto* files = finding(r, "lock-files");
    REQUIRE_MESSAGE(files, described(r));
    CHECK(files->what == "1 installed file(s) missing or modified: lib/python3.8/site-packages/numpy/__init__.py (missing)");
    REQUIRE(r.repair);
    CHECK(r.repair->plan.damage == std::vector<std::string>{"lib/python3.8/site-packages/numpy/__init__.py (missing)"});
    REQUIRE(r.repair->plan.foreign.size() == 1);
    CHECK(r.repair->plan.foreign[0].find("tqdm-4.64.1.dist-info: a Python distribution the lock does not have") != std::string::npos);
    CHECK(std::count(r.repair->plan.removed_foreign.begin(), r.repair->plan.removed_foreign.end(),
                     "lib/python3.8/site-packages/tqdm/__init__.py") == 1);

    // The CLI: doctor prints the plan; install --repair --dry-run prints the same lines and changes nothing.
    fs::path lock_file = env.root / "envlock.yaml";
    write_bytes(lock_file, write_lock(good));
    auto out = run_envlock({"doctor", "--prefix", env.prefix.string(), "--lock", lock_file.string(), "--no-code"});
    CHECK(out.exit_code == 1);
    CHECK_MESSAGE(out.out.find("`envlock install --repair` would:\n") != std::string::npos, out.out);
    CHECK(out.out.find("  restore   lib/python3.8/site-packages/numpy/__init__.py (missing)\n") != std::string::npos);
    CHECK(out.out.find("  remove    lib/python3.8/site-packages/tqdm-4.64.1.dist-info: a Python distribution the lock does not have") !=
          std::string::npos);
    auto dry = run_envlock({"install", lock_file.string(), "--prefix", env.prefix.string(), "--repair", "--dry-run"});
    CHECK_MESSAGE(dry.exit_code == 0, dry.out << dry.err);
    std::string counts = "would restore 1 files, remove " + std::to_string(r.repair->plan.removed_foreign.size()) + " foreign files\n";
    CHECK_MESSAGE(dry.out.find(counts) != std::string::npos, dry.out);
    CHECK(dry.out.find("  restore lib/python3.8/site-packages/numpy/__init__.py (missing)\n") != std::string::npos);
    CHECK(fs::exists(env.prefix / "lib/python3.8/site-packages/tqdm/__init__.py"));   // nothing changed

    // A prefix envlock did not make: --repair refuses, and doctor says what to do instead.
    TempDir other;
    fs::create_directories(other.path / "conda-meta");
    fs::create_directories(other.path / "lib/python3.8/site-packages");
    auto preview = install::repair_preview(good, other.str());
    CHECK(preview.refused.find("has no .envlock/state.json") != std::string::npos);
}
