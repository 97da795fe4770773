// Clobbering (#32): a wheel never overwrites a file that a conda package (or the venv) of the
// lock installed, whatever path inside `<name>.data/` it takes; the refusal names both
// packages and leaves the prefix as it was. Between two wheels the later one in the lock wins
// with a warning, as pip's installs in a row do. And the no-op check compares owners: a file
// a kept package lists but a removed one wrote last is put back, so "up to date" never hides
// an overwritten file. Real archives on a loopback server, installed by the real installers.
#include <doctest/doctest.h>

#include "tests/unit/install/install_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

// A wheel whose members are `files` (name -> content), with its dist-info and a RECORD that
// lists every member with its real hash: the installer's own checks pass, so only the
// clobbering rule can stop it.
LockedPackage add_wheel(Channel& ch, const std::string& name, const std::string& version,
                        const std::map<std::string, std::string>& files) {
    std::string dist = name + "-" + version + ".dist-info/";
    std::vector<mirror::ArchiveMember> m;
    for (const auto& [path, text] : files) m.push_back({path, text, 0644, ""});
    m.push_back({dist + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n", 0644, ""});
    m.push_back({dist + "WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n", 0644, ""});
    std::string record;
    for (const auto& f : m) record += f.path + "," + mirror::record_digest(f.content) + "," + std::to_string(f.content.size()) + "\n";
    m.push_back({dist + "RECORD", record + dist + "RECORD,,\n", 0644, ""});
    std::string bytes = mirror::write_zip(m, false);
    std::string file = name + "-" + version + "-py3-none-any.whl";
    write_bytes(ch.dir / "pypi" / file, bytes);
    LockedPackage p;
    p.kind = Ecosystem::pypi;
    p.url = ch.server->url() + "/pypi/" + file;
    p.name = name;
    p.version = version;
    p.build = "py3-none-any";
    p.sha256 = mirror::sha256_hex_of(bytes);
    p.size = bytes.size();
    p.channel = ch.server->url() + "/pypi/simple";
    return p;
}

Lock as_file(const Lock& lock, const fs::path& path) {
    write_bytes(path, write_lock(lock));
    return read_lock(read_bytes(path), path.string());
}

struct Installed {
    install::InstallResult result;
    std::vector<std::string> said;
    bool said_text(const std::string& text) const {
        return std::any_of(said.begin(), said.end(), [&](const std::string& s) { return s.find(text) != std::string::npos; });
    }
};

Installed install_into(const Lock& lock, const fs::path& lock_file, const fs::path& prefix, const fs::path& cache) {
    install::InstallOptions o = options_for(prefix, cache);
    o.lock_file = lock_file.string();
    install::use_default_installers(o);
    Installed out;
    o.say = [&](const std::string& s) { out.said.push_back(s); };
    out.result = install::install_lock(lock, o);
    return out;
}

const std::string kHostile = "#!/bin/sh\necho owned\n";

}  // namespace

TEST_CASE("clobbering: a wheel whose .data/data/bin/python would replace the conda python is refused, naming both; "
          "the prefix is untouched") {
    Channel ch("clobber-python");
    fs::path work = make_temp_dir("clobber-python-work");
    auto python = ch.add(python_pkg());
    Lock clean = as_file(make_lock({python}), work / "clean.yaml");
    install_into(clean, work / "clean.yaml", work / "env", work / "cache");
    const auto before = snapshot(work / "env");

    auto evil = add_wheel(ch, "evil", "1.0", {{"evil-1.0.data/data/bin/python", kHostile}, {"evil/__init__.py", ""}});
    Lock hostile = as_file(make_lock({python, evil}), work / "hostile.yaml");
    try {
        install_into(hostile, work / "hostile.yaml", work / "env", work / "cache");
        FAIL("the hostile wheel installed");
    } catch (const InputError& e) {
        const std::string what = e.what();
        CHECK_MESSAGE(what.find("bin/python") != std::string::npos, what);
        CHECK_MESSAGE(what.find("evil 1.0") != std::string::npos, what);
        CHECK_MESSAGE(what.find("python 3.8.18") != std::string::npos, what);
        CHECK_MESSAGE(what.find((work / "hostile.yaml").string() + ":") != std::string::npos, what);   // lock lines of both
    }
    CHECK(snapshot(work / "env") == before);
    CHECK(verify_prefix(work / "env").empty());
}

TEST_CASE("clobbering: any .data/ scheme and any other conda package's file is guarded (share/, include/, a fresh prefix)") {
    Channel ch("clobber-share");
    fs::path work = make_temp_dir("clobber-share-work");
    auto python = ch.add(python_pkg());
    auto zlib = ch.add(native_pkg("zlib", "1.2.13"));
    // share/zlib/README through .data/data; and the headers scheme onto nothing of conda's is fine.
    auto evil = add_wheel(ch, "evil", "1.0", {{"evil-1.0.data/data/share/zlib/README", "replaced\n"}});
    Lock hostile = as_file(make_lock({python, zlib, evil}), work / "hostile.yaml");
    CHECK_THROWS_WITH_AS(install_into(hostile, work / "hostile.yaml", work / "env", work / "cache"),
                         doctest::Contains("would overwrite share/zlib/README, which the conda package"), InputError);
    CHECK_FALSE(fs::exists(work / "env"));   // nothing was there, nothing is left
    auto fine = add_wheel(ch, "fine", "1.0", {{"fine-1.0.data/data/share/fine/notes.txt", "mine\n"}});
    Lock ok = as_file(make_lock({python, zlib, fine}), work / "ok.yaml");
    install_into(ok, work / "ok.yaml", work / "env", work / "cache");
    CHECK(read_bytes(work / "env/share/fine/notes.txt") == "mine\n");
    CHECK(verify_prefix(work / "env").empty());
}

TEST_CASE("clobbering between two wheels: a warning and the later wheel in the lock wins, on every run") {
    Channel ch("clobber-wheels");
    fs::path work = make_temp_dir("clobber-wheels-work");
    auto python = ch.add(python_pkg());
    const std::string site = "lib/python3.8/site-packages/";
    auto first = add_wheel(ch, "alpha", "1.0", {{"shared/__init__.py", "WHO = 'alpha'\n"}});
    auto second = add_wheel(ch, "beta", "1.0", {{"shared/__init__.py", "WHO = 'beta'\n"}});
    Lock both = as_file(make_lock({python, first, second}), work / "both.yaml");
    for (const char* env : {"env1", "env2"}) {
        auto r = install_into(both, work / "both.yaml", work / env, work / "cache");
        CHECK(r.said_text("warning: beta overwrites " + site + "shared/__init__.py, which alpha installed too"));
        CHECK(read_bytes(work / env / (site + "shared/__init__.py")) == "WHO = 'beta'\n");
    }
}

TEST_CASE("the no-op check compares owners: removing the wheel that overwrote a kept package's file puts that file back, "
          "and only then is the prefix up to date") {
    Channel ch("clobber-owner");
    fs::path work = make_temp_dir("clobber-owner-work");
    auto python = ch.add(python_pkg());
    const std::string path = "lib/python3.8/site-packages/shared/__init__.py";
    auto alpha = add_wheel(ch, "alpha", "1.0", {{"shared/__init__.py", "WHO = 'alpha'\n"}});
    auto beta = add_wheel(ch, "beta", "1.0", {{"shared/__init__.py", "WHO = 'beta'\n"}});
    Lock both = as_file(make_lock({python, alpha, beta}), work / "both.yaml");
    install_into(both, work / "both.yaml", work / "env", work / "cache");
    REQUIRE(read_bytes(work / "env" / path) == "WHO = 'beta'\n");

    // beta goes; alpha stays and lists the file beta wrote last.
    Lock only_alpha = as_file(make_lock({python, alpha}), work / "alpha.yaml");
    auto r = install_into(only_alpha, work / "alpha.yaml", work / "env", work / "cache");
    CHECK(r.result.changed);
    CHECK(r.said_text("restored " + path + " (left by beta 1.0, which goes)"));
    CHECK(read_bytes(work / "env" / path) == "WHO = 'alpha'\n");
    CHECK(verify_prefix(work / "env").empty());
    auto again = install_into(only_alpha, work / "alpha.yaml", work / "env", work / "cache");
    CHECK_FALSE(again.result.changed);
    CHECK(again.result.plan.add.empty());
}

TEST_CASE("the no-op check compares owners: a prefix where a kept wheel wrote over a conda file (an earlier envlock "
          "allowed it) is never 'up to date'") {
    Channel ch("clobber-legacy");
    fs::path work = make_temp_dir("clobber-legacy-work");
    auto python = ch.add(python_pkg());
    auto evil = add_wheel(ch, "evil", "1.0", {{"evil/__init__.py", ""}});
    Lock lock = as_file(make_lock({python, evil}), work / "lock.yaml");
    install_into(lock, work / "lock.yaml", work / "env", work / "cache");
    // What an earlier envlock recorded after such an install: the wheel last, listing bin/python3.8.
    auto state = install::read_state(work / "env");
    REQUIRE(state);
    for (auto& p : state->packages)
        if (p.name == "evil") p.files.push_back({"bin/python3.8", mirror::sha256_hex_of(kHostile), kHostile.size(), ""});
    std::rotate(state->packages.begin(), std::find_if(state->packages.begin(), state->packages.end(),
                                                      [](const install::InstalledPackage& p) { return p.name == "evil"; }) + 1,
                state->packages.end());
    REQUIRE(state->packages.back().name == "evil");
    write_bytes(work / "env" / install::kStateFile, install::state_json(*state));
    CHECK_THROWS_WITH_AS(install_into(lock, work / "lock.yaml", work / "env", work / "cache"),
                         doctest::Contains("would overwrite bin/python3.8, which the conda package"), InputError);
}
