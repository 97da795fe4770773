// A conda prefix from a lock (install/transaction.hpp, install/conda_link.hpp): files hardlinked
// from the cache, prefix placeholders replaced (text; binary with its length kept, CEP 34),
// noarch: python relocated with runnable entry points (CEP 20), conda-meta records with
// PrefixRecord's fields and conda-meta/history (CEP 32); upgrades, removals, --repair.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "install/prefix_replace.hpp"
#include "tests/unit/install/install_fixture.hpp"

using namespace envlock;
using namespace envlock::test;
using nlohmann::json;

namespace {

struct World {
    Channel ch;
    fs::path root = make_temp_dir("prefix");
    fs::path prefix = root / "env";
    fs::path cache = root / "cache";
    std::vector<std::string> said;
    explicit World(const std::string& tag) : ch(tag) {}
    install::InstallResult install(const Lock& lock, bool repair = false) {
        auto o = options_for(prefix, cache);
        o.repair = repair;
        o.say = o.step = [this](const std::string& s) { said.push_back(s); };
        return install::install_lock(lock, o);
    }
};

ino_t inode(const fs::path& p) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    return st.st_ino;
}

}  // namespace

TEST_CASE("a conda lock installs: hardlinks from the cache, prefix replaced in text and binary files, links re-created") {
    World w("prefix-basic");
    auto python = w.ch.add(python_pkg());
    auto zlib = w.ch.add(native_pkg("zlib", "1.2.13"));
    Lock lock = make_lock({python, zlib});
    auto r = w.install(lock);
    CHECK(r.changed);
    CHECK(r.plan.add.size() == 2);
    CHECK(verify_prefix(w.prefix).empty());
    CHECK(installed_ids(w.prefix) == lock_ids(lock));

    const std::string prefix = w.prefix.string();
    // Text: every placeholder replaced, length free.
    CHECK(read_bytes(w.prefix / "lib/pkgconfig/zlib.pc") == "prefix=" + prefix + "\nlibdir=${prefix}/lib\nVersion: 1.2.13\n");
    // Binary: same length, the C strings rewritten and NUL padded (two occurrences in one string).
    std::string original = native_pkg("zlib", "1.2.13").files[0].content;
    std::string bin = read_bytes(w.prefix / "lib/libzlib.so.1.2.13");
    CHECK(bin.size() == original.size());
    CHECK(bin.find(long_placeholder()) == std::string::npos);
    CHECK(bin.find(std::string(1, '\0') + prefix + "/lib" + std::string(1, '\0')) != std::string::npos);
    CHECK(bin.find("rpath=" + prefix + "/lib:" + prefix + "/lib64" + std::string(1, '\0')) != std::string::npos);
    CHECK(bin.substr(bin.size() - 4) == "tail");
    // Unpatched files are hardlinks of the cache's; patched ones are private copies.
    auto entry = install::cache_entry(w.cache, zlib);
    CHECK(inode(w.prefix / "share/zlib/README") == inode(entry.tree() / "share/zlib/README"));
    CHECK(inode(w.prefix / "lib/pkgconfig/zlib.pc") != inode(entry.tree() / "lib/pkgconfig/zlib.pc"));
    CHECK(fs::is_symlink(w.prefix / "lib/libzlib.so"));
    CHECK(fs::read_symlink(w.prefix / "lib/libzlib.so") == "libzlib.so.1.2.13");
    CHECK((fs::status(w.prefix / "lib/libzlib.so.1.2.13").permissions() & fs::perms::owner_exec) != fs::perms::none);
    // The interpreter stand-in runs, with the prefix written into it.
    auto run = run_program({(w.prefix / "bin/python").string(), "-c", "print('ok')"});
    CHECK(run.out == "ok\n");
    CHECK(fs::exists(w.prefix / ".envlock/lock.yaml"));
}

TEST_CASE("conda-meta: one record per package with PrefixRecord's fields, named name-version-build.json, and a history") {
    World w("prefix-meta");
    auto python = w.ch.add(python_pkg());
    auto zlib = w.ch.add(native_pkg("zlib", "1.2.13", {"python >=3.8"}));
    Lock lock = make_lock({python, zlib});
    w.install(lock);
    fs::path rec_file = w.prefix / "conda-meta/zlib-1.2.13-h2_0.json";
    REQUIRE(fs::exists(rec_file));
    json rec = json::parse(read_bytes(rec_file));
    for (const char* key : {"name", "version", "build", "build_number", "channel", "subdir", "fn", "url", "md5", "sha256",
                            "size", "depends", "constrains", "files", "paths_data", "link", "requested_spec"})
        CHECK_MESSAGE(rec.contains(key), key);
    CHECK(rec["url"] == zlib.url);
    CHECK(rec["sha256"] == zlib.sha256);
    CHECK(rec["md5"] == zlib.md5);
    CHECK(rec["fn"] == "zlib-1.2.13-h2_0.conda");
    CHECK(rec["depends"] == json::array({"python >=3.8"}));
    CHECK(rec["link"]["type"] == 1);
    CHECK(rec["paths_data"]["paths_version"] == 1);
    std::set<std::string> files(rec["files"].begin(), rec["files"].end());
    CHECK(files == std::set<std::string>{"lib/libzlib.so.1.2.13", "lib/libzlib.so", "lib/pkgconfig/zlib.pc", "share/zlib/README"});
    for (const auto& p : rec["paths_data"]["paths"]) {
        if (p["_path"] == "lib/libzlib.so.1.2.13") {
            CHECK(p["file_mode"] == "binary");
            CHECK(p["prefix_placeholder"] == long_placeholder());
            CHECK(p["sha256_in_prefix"] == install::sha256_of_file(w.prefix / "lib/libzlib.so.1.2.13"));
            CHECK(p["sha256_in_prefix"] != p["sha256"]);
        }
        if (p["_path"] == "lib/libzlib.so") CHECK(p["path_type"] == "softlink");
    }
    json py = json::parse(read_bytes(w.prefix / "conda-meta/python-3.8.18-h1_0_cpython.json"));
    CHECK(py["requested_spec"] == "python 3.8.*");
    std::string history = read_bytes(w.prefix / "conda-meta/history");
    CHECK(history.rfind("==> ", 0) == 0);
    CHECK(history.find("# cmd: envlock install (test)") != std::string::npos);
    CHECK(history.find("+ch/linux-64::zlib-1.2.13-h2_0\n") != std::string::npos);
    CHECK(history.find("# conda version") == std::string::npos);   // conda would refuse a newer one
}

TEST_CASE("noarch: python goes to the python's site-packages, python-scripts to bin, and its entry point runs") {
    World w("prefix-noarch");
    auto python = w.ch.add(python_pkg());
    auto hello = w.ch.add(noarch_pkg("hello", "1.0"));
    Lock lock = make_lock({python, hello});
    w.install(lock);
    CHECK(fs::exists(w.prefix / "lib/python3.8/site-packages/hello/__init__.py"));
    CHECK(!fs::exists(w.prefix / "site-packages"));
    std::string script = read_bytes(w.prefix / "bin/hello");
    CHECK(script.rfind("#!" + w.prefix.string() + "/bin/python3.8\n", 0) == 0);
    CHECK(script.find("from hello import main") != std::string::npos);
    auto run = run_program({(w.prefix / "bin/hello").string()});
    CHECK(run.exit_code == 0);
    CHECK(run.out == "hello 1.0 says hello\n");
    json rec = json::parse(read_bytes(w.prefix / "conda-meta/hello-1.0-pyhd8ed1ab_0.json"));
    bool entry_point = false;
    for (const auto& p : rec["paths_data"]["paths"])
        if (p["_path"] == "bin/hello") entry_point = p["path_type"] == "unix_python_entry_point";
    CHECK(entry_point);
    CHECK(rec["noarch"] == "python");
}

TEST_CASE("--compile: noarch: python .py files get bytecode from the env's python, recorded as pyc_file paths (conda's default)") {
    World w("prefix-compile");
    auto python = w.ch.add(python_pkg());
    auto hello = w.ch.add(noarch_pkg("hello", "1.0"));
    Lock lock = make_lock({python, hello});
    auto o = options_for(w.prefix, w.cache);
    o.compile = true;
    install::install_lock(lock, o);
    std::vector<std::string> pycs;
    for (const auto& e : fs::directory_iterator(w.prefix / "lib/python3.8/site-packages/hello/__pycache__"))
        pycs.push_back(e.path().filename().string());
    std::sort(pycs.begin(), pycs.end());
    REQUIRE(pycs.size() == 2);
    CHECK(pycs[0].rfind("__init__.cpython-", 0) == 0);
    CHECK(pycs[1].rfind("util.cpython-", 0) == 0);
    // The .pyc names the installed file, not the stage it was compiled in.
    std::string pyc = read_bytes(w.prefix / "lib/python3.8/site-packages/hello/__pycache__" / pycs[1]);
    CHECK(pyc.find((w.prefix / "lib/python3.8/site-packages/hello/util.py").string()) != std::string::npos);
    CHECK(pyc.find(".envlock-staging") == std::string::npos);
    json rec = json::parse(read_bytes(w.prefix / "conda-meta/hello-1.0-pyhd8ed1ab_0.json"));
    int recorded = 0;
    for (const auto& p : rec["paths_data"]["paths"])
        if (p["path_type"] == "pyc_file") {
            ++recorded;
            CHECK(std::find(rec["files"].begin(), rec["files"].end(), p["_path"]) != rec["files"].end());
        }
    CHECK(recorded == 2);
    CHECK(verify_prefix(w.prefix).empty());
    // Without --compile nothing is compiled: bytecode only on request, as for wheels.
    World plain("prefix-nocompile");
    auto python2 = plain.ch.add(python_pkg());
    auto hello2 = plain.ch.add(noarch_pkg("hello", "1.0"));
    plain.install(make_lock({python2, hello2}));
    CHECK(!fs::exists(plain.prefix / "lib/python3.8/site-packages/hello/__pycache__"));
}

TEST_CASE("an update removes what the new lock drops (with the __pycache__ of its .py), adds and replaces, keeps the rest untouched") {
    World w("prefix-update");
    auto python = w.ch.add(python_pkg());
    auto zlib = w.ch.add(native_pkg("zlib", "1.2.13"));
    auto hello = w.ch.add(noarch_pkg("hello", "1.0"));
    auto old_xz = w.ch.add(native_pkg("xz", "5.2.5"));
    w.install(make_lock({python, zlib, hello, old_xz}));
    // Python wrote bytecode next to the package at run time.
    write_bytes(w.prefix / "lib/python3.8/site-packages/hello/__pycache__/util.cpython-38.pyc", "bytecode");
    write_bytes(w.prefix / "user-notes.txt", "mine");
    ino_t zlib_inode = inode(w.prefix / "share/zlib/README");

    auto new_xz = w.ch.add(native_pkg("xz", "5.4.0"));
    Lock next = make_lock({python, zlib, new_xz});
    auto r = w.install(next);
    CHECK(r.changed);
    CHECK(installed_ids(w.prefix) == lock_ids(next));
    CHECK(!fs::exists(w.prefix / "lib/python3.8/site-packages/hello"));
    CHECK(!fs::exists(w.prefix / "bin/hello"));
    CHECK(!fs::exists(w.prefix / "conda-meta/hello-1.0-pyhd8ed1ab_0.json"));
    CHECK(!fs::exists(w.prefix / "lib/libxz.so.5.2.5"));
    CHECK(fs::exists(w.prefix / "lib/libxz.so.5.4.0"));
    CHECK(read_bytes(w.prefix / "user-notes.txt") == "mine");
    CHECK(inode(w.prefix / "share/zlib/README") == zlib_inode);
    CHECK(verify_prefix(w.prefix).empty());
    std::string history = read_bytes(w.prefix / "conda-meta/history");
    CHECK(history.find("-ch/noarch::hello-1.0-pyhd8ed1ab_0") != std::string::npos);
    CHECK(history.find("+ch/linux-64::xz-5.4.0-h2_0") != std::string::npos);
    // Nothing is left beside the prefix but the `.envlock/` folder of its lock file.
    auto names_in = [](const fs::path& dir) {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    };
    CHECK(names_in(w.root) == std::vector<std::string>{".envlock", "cache", "env"});
    CHECK(names_in(w.root / ".envlock") == std::vector<std::string>{".env.envlock-lock", ".gitignore"});
    // Installing the same lock again changes nothing.
    auto again = w.install(next);
    CHECK(!again.changed);
    CHECK(again.plan.keep == 3);
}

TEST_CASE("a tampered artifact stops the install with a hash error and leaves the prefix exactly as it was") {
    World w("prefix-tamper");
    auto python = w.ch.add(python_pkg());
    auto zlib = w.ch.add(native_pkg("zlib", "1.2.13"));
    w.install(make_lock({python, zlib}));
    auto before = snapshot(w.prefix);
    auto xz = w.ch.add(native_pkg("xz", "5.4.0"));
    std::string fn = "xz-5.4.0-h2_0.conda";
    std::string evil = w.ch.bytes[fn];
    evil[100] ^= 1;
    write_bytes(w.ch.dir / "ch/linux-64" / fn, evil);
    CHECK_THROWS_WITH_AS(w.install(make_lock({python, zlib, xz})), has("sha256 mismatch for " + xz.url), EnvironmentError);
    CHECK(snapshot(w.prefix) == before);
    CHECK(!fs::exists(w.root / ".envlock/.env.envlock-staging"));
    CHECK(!fs::exists(w.root / ".envlock/.env.envlock-journal"));
}

TEST_CASE("a prefix longer than a binary placeholder is refused before anything is touched") {
    World w("prefix-long");
    auto zlib = w.ch.add(native_pkg("zlib", "1.2.13"));
    fs::path deep = w.root / std::string(100, 'p') / std::string(100, 'q') / std::string(60, 'r');
    auto o = options_for(deep, w.cache);
    CHECK_THROWS_WITH_AS(install::install_lock(make_lock({zlib}), o), has("Choose a shorter --prefix"), InputError);
    CHECK(!fs::exists(deep));
}

TEST_CASE("a directory that envlock did not make is not taken over") {
    World w("prefix-foreign-dir");
    write_bytes(w.prefix / "important.txt", "data");
    auto zlib = w.ch.add(native_pkg("zlib", "1.2.13"));
    CHECK_THROWS_WITH_AS(w.install(make_lock({zlib})), has("was not made by envlock"), InputError);
    CHECK(read_bytes(w.prefix / "important.txt") == "data");
}

TEST_CASE("--repair restores a deleted and an edited file, removes a pip-installed numpy over the locked one, and touches nothing else") {
    World w("prefix-repair");
    auto python = w.ch.add(python_pkg());
    PkgSpec numpy_spec = package("numpy", "1.19.5", "py38h0_0");
    numpy_spec.files = {file("lib/python3.8/site-packages/numpy/__init__.py", "__version__ = '1.19.5'\n"),
                        file("lib/python3.8/site-packages/numpy/core.py", "def f():\n    return 1\n"),
                        file("lib/python3.8/site-packages/numpy-1.19.5.dist-info/METADATA", "Name: numpy\nVersion: 1.19.5\n")};
    auto numpy = w.ch.add(numpy_spec);
    auto zlib = w.ch.add(native_pkg("zlib", "1.2.13"));
    Lock lock = make_lock({python, numpy, zlib});
    w.install(lock);
    const fs::path sp = w.prefix / "lib/python3.8/site-packages";
    ino_t untouched = inode(w.prefix / "share/zlib/README");
    ino_t untouched_py = inode(sp / "numpy/__init__.py");

    // The damage: a deleted file, a file edited in place (through the hardlink: the cache is
    // edited too), and what `pip install numpy==1.26` leaves: its own files and dist-info.
    fs::remove(w.prefix / "lib/pkgconfig/zlib.pc");
    { std::ofstream(sp / "numpy/core.py", std::ios::app) << "# edited\n"; }
    write_bytes(sp / "numpy/_pip_only.py", "shadow = True\n");
    write_bytes(sp / "numpy-1.26.0.dist-info/METADATA", "Name: numpy\nVersion: 1.26.0\n");
    write_bytes(sp / "numpy-1.26.0.dist-info/INSTALLER", "pip\n");
    write_bytes(sp / "numpy-1.26.0.dist-info/RECORD",
                "numpy/_pip_only.py,sha256=x,14\nnumpy/__init__.py,sha256=y,20\nnumpy-1.26.0.dist-info/METADATA,,\n"
                "numpy-1.26.0.dist-info/RECORD,,\n../../../bin/f2py,,\n../../../../../outside.txt,,\n");
    write_bytes(w.prefix / "bin/f2py", "#!/bin/sh\n");
    write_bytes(sp / "distutils-precedence.pth", "import os\n");
    write_bytes(w.prefix / "share/my-data/notes.txt", "user data\n");
    write_bytes(w.root / "outside.txt", "must survive\n");

    auto r = w.install(lock, /*repair=*/true);
    CHECK(r.changed);
    std::sort(r.restored.begin(), r.restored.end());
    CHECK(r.restored == std::vector<std::string>{"lib/pkgconfig/zlib.pc", "lib/python3.8/site-packages/numpy/core.py"});
    std::set<std::string> removed(r.removed_foreign.begin(), r.removed_foreign.end());
    CHECK(removed == std::set<std::string>{"bin/f2py", "lib/python3.8/site-packages/distutils-precedence.pth",
                                           "lib/python3.8/site-packages/numpy-1.26.0.dist-info/INSTALLER",
                                           "lib/python3.8/site-packages/numpy-1.26.0.dist-info/METADATA",
                                           "lib/python3.8/site-packages/numpy-1.26.0.dist-info/RECORD",
                                           "lib/python3.8/site-packages/numpy/_pip_only.py"});
    CHECK(verify_prefix(w.prefix).empty());
    CHECK(read_bytes(sp / "numpy/core.py") == "def f():\n    return 1\n");
    CHECK(read_bytes(w.prefix / "share/my-data/notes.txt") == "user data\n");
    CHECK(read_bytes(w.root / "outside.txt") == "must survive\n");
    CHECK(r.unknown_kept == 1);
    // Everything else is the very same file as before.
    CHECK(inode(w.prefix / "share/zlib/README") == untouched);
    CHECK(inode(sp / "numpy/__init__.py") == untouched_py);
    // The cache was repaired too, so the next environment gets the real file.
    CHECK(install::check_tree(install::cache_entry(w.cache, numpy), true));
    // A second repair finds nothing.
    auto again = w.install(lock, true);
    CHECK(!again.changed);
}

TEST_CASE("--dry-run plans without fetching, locking or writing") {
    World w("prefix-dry");
    auto python = w.ch.add(python_pkg());
    auto o = options_for(w.prefix, w.cache);
    o.dry_run = true;
    auto r = install::install_lock(make_lock({python}), o);
    CHECK(r.plan.add.size() == 1);
    CHECK(!r.changed);
    CHECK(!fs::exists(w.prefix));
    CHECK(!fs::exists(w.cache));
    CHECK(w.ch.server->requests().empty());
}

TEST_CASE("an interrupted install found later is rolled back: a half-built stage and its journal go, the prefix stays") {
    World w("prefix-recover");
    auto python = w.ch.add(python_pkg());
    Lock lock = make_lock({python});
    w.install(lock);
    auto before = snapshot(w.prefix);
    write_bytes(w.root / ".envlock/.env.envlock-staging/bin/half", "partial");
    write_bytes(w.root / ".envlock/.env.envlock-journal", R"({"envlock-journal": 1, "generation": "0123456789abcdef"})");
    auto r = w.install(lock);
    REQUIRE(r.recovered.size() == 1);
    CHECK(r.recovered[0].find("rolled back an interrupted install") != std::string::npos);
    CHECK(!fs::exists(w.root / ".envlock/.env.envlock-staging"));
    CHECK(!fs::exists(w.root / ".envlock/.env.envlock-journal"));
    CHECK(snapshot(w.prefix) == before);
}

TEST_CASE("binary prefix replacement keeps the length and pads each C string with NULs (conda's binary_replace)") {
    std::string ph = "/placeholder/prefix/padded_______";
    std::string data = std::string("x\0", 2) + ph + "/lib:" + ph + "/bin" + std::string(1, '\0') + "y" + ph;
    std::string out = install::replace_binary_prefix(data, ph, "/new");
    CHECK(out.size() == data.size());
    CHECK(out == std::string("x\0", 2) + "/new/lib:/new/bin" + std::string(1 + 2 * (ph.size() - 4), '\0') + "y" + ph);
    CHECK_THROWS_AS(install::replace_binary_prefix(data, ph, std::string(ph.size() + 1, 'p')), InputError);
}

TEST_CASE("shebangs: over 127 bytes or with a space, python gets the /bin/sh trick, other interpreters /usr/bin/env") {
    std::string long_prefix = "/opt/" + std::string(130, 'l');
    std::string py = install::replace_text_prefix("#!/opt/anaconda1anaconda2anaconda3/bin/python3.8\nimport sys\n",
                                                  text_placeholder(), long_prefix);
    CHECK(py == "#!/bin/sh\n'''exec' \"" + long_prefix + "/bin/python3.8\" \"$0\" \"$@\" #'''\nimport sys\n");
    std::string perl = install::replace_text_prefix("#!/opt/anaconda1anaconda2anaconda3/bin/perl -w\nprint 1;\n",
                                                    text_placeholder(), long_prefix);
    CHECK(perl == "#!/usr/bin/env perl -w\nprint 1;\n");
    std::string spaced = install::replace_text_prefix("#!/opt/anaconda1anaconda2anaconda3/bin/python\n", text_placeholder(), "/my envs/x");
    CHECK(spaced == "#!/bin/sh\n'''exec' \"/my envs/x/bin/python\" \"$0\" \"$@\" #'''\n");
    std::string short_one = install::replace_text_prefix("#!/opt/anaconda1anaconda2anaconda3/bin/python\n", text_placeholder(), "/e");
    CHECK(short_one == "#!/e/bin/python\n");
    // The /bin/sh trick really runs the interpreter it names.
    fs::path dir = make_temp_dir("shebang");
    write_bytes(dir / "s", install::python_shebang("/usr/bin/python3") + "import sys\nprint(sys.argv[1])\n");
    fs::permissions(dir / "s", fs::perms(0755));
    CHECK(run_program({(dir / "s").string(), "arg"}).out == "arg\n");
}

TEST_CASE("the prefix's helper files live in the .envlock folder beside it, which git ignores (#30)") {
    World w("prefix-helpers-git");
    REQUIRE(test::run_program({"git", "init", "-q", w.root.string()}).exit_code == 0);
    w.install(make_lock({w.ch.add(python_pkg())}));
    CHECK(fs::exists(w.root / ".envlock/.env.envlock-lock"));
    CHECK(read_bytes(w.root / ".envlock/.gitignore") == "*\n");
    // git sees the prefix the user chose (and the cache), never a lock, journal or stage file.
    auto status = test::run_program({"git", "-C", w.root.string(), "status", "--porcelain", "--untracked-files=all"});
    REQUIRE(status.exit_code == 0);
    CAPTURE(status.out);
    CHECK(status.out.find(".envlock-") == std::string::npos);
    CHECK(status.out.find(" .envlock/") == std::string::npos);
    CHECK(status.out.find(" env/") != std::string::npos);
}
