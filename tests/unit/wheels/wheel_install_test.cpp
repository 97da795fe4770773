// Wheels per the binary distribution format spec (packaging.python.org, "Binary distribution
// format"; PEP 427), RECORD per "Recording installed projects" (PEP 376/627), direct_url.json per
// PEP 610. The oracles are Debian's `python3 -m installer` and pip, run for real.
#include <algorithm>
#include <doctest/doctest.h>

#include "install/wheel_install.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

using namespace envlock;
using namespace envlock::install;
using namespace envlock::test;

namespace {

// RECORD rows of every dist in `prefix`, minus INSTALLER (the installer writes none).
std::set<std::string> record_rows(const fs::path& prefix, const std::string& version) {
    std::set<std::string> out;
    fs::path sp = prefix / ("lib/python" + version + "/site-packages");
    for (const auto& e : fs::directory_iterator(sp)) {
        if (e.path().extension() != ".dist-info") continue;
        for (const auto& row : parse_record(read_text(e.path() / "RECORD"), "RECORD"))
            if (!row.path.ends_with("/INSTALLER")) out.insert(row.path + "," + row.hash + "," + row.size);
    }
    return out;
}

PythonLayout new_venv(const fs::path& prefix) {
    create_venv(prefix.string(), debian_base());
    return venv_layout(prefix.string(), fixture_wheels().python_version);
}

}  // namespace

TEST_CASE("pip-built wheels install to the tree and RECORD python3 -m installer produces (binary distribution format)") {
    const auto& w = fixture_wheels();
    TempDir t;
    fs::path prefix = t.path / "env";

    // The oracle, at the same prefix so that shebangs are comparable: Debian's venv + installer.
    auto r = run_program({kDebianPython, "-m", "venv", "--without-pip", prefix.string()});
    REQUIRE(r.exit_code == 0);
    for (const auto& whl : {w.fix_pkg, w.ns_pkg}) {
        r = run_program({(prefix / "bin/python").string(), "-m", "installer", "--no-compile-bytecode", whl},
                        {"PYTHONPATH=/usr/lib/python3/dist-packages"});
        REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    }
    fs::rename(prefix, t.path / "oracle");

    PythonLayout layout = new_venv(prefix);
    WheelOptions opt;
    opt.requested = false;   // python -m installer writes no REQUESTED
    for (const auto& whl : {w.fix_pkg, w.ns_pkg}) install_wheel(whl, layout, opt);

    // pypa/installer 0.6 puts headers in include/pythonX.Y/<wheel file's name>; envlock follows
    // pip and uv in a venv (include/site/pythonX.Y/<project name>). Everything else is equal.
    auto map_headers = [&](std::string s) {
        std::string from = "include/python" + w.python_version + "/fix_pkg/", to = "include/site/python" + w.python_version + "/fix-pkg/";
        if (auto p = s.find(from); p != std::string::npos) s.replace(p, from.size(), to);
        return s;
    };
    std::set<std::string> oracle_rows, oracle_files;
    for (const auto& row : record_rows(t.path / "oracle", w.python_version)) oracle_rows.insert(map_headers(row));
    CHECK(record_rows(prefix, w.python_version) == oracle_rows);

    for (const auto& f : tree(t.path / "oracle"))
        if (f.rfind("bin/activate", 0) != 0 && f.rfind("bin/Activate", 0) != 0) oracle_files.insert(map_headers(f));
    std::set<std::string> ours;
    for (const auto& f : tree(prefix))
        if (!f.ends_with("/INSTALLER") && f != ".gitignore") ours.insert(f);
    CHECK(ours == oracle_files);
    for (const auto& f : std::vector<std::string>{"bin/fix-hello", "bin/fix-gui", "bin/fix-legacy", "lib/python" + w.python_version + "/site-packages/fixpkg/cli.py"})
        CHECK(read_text(prefix / f) == read_text(t.path / "oracle" / f));
}

TEST_CASE("entry points, #!python scripts and the C extension run from the env (binary distribution format: Rewrite #!python)") {
    const auto& w = fixture_wheels();
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    auto installed = install_wheel(w.fix_pkg, layout, {});
    install_wheel(w.ns_pkg, layout, {});
    CHECK(installed.name == "fix-pkg");
    CHECK(installed.version == "1.2.0");
    CHECK(installed.dist_info == "lib/python" + w.python_version + "/site-packages/fix_pkg-1.2.0.dist-info");

    auto r = run_program({t.str("env/bin/fix-hello")});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "hello from fixpkg\n");
    CHECK(read_text(t.path / "env/bin/fix-legacy").rfind("#!" + t.str("env/bin/python") + "\n", 0) == 0);
    CHECK(run_program({t.str("env/bin/fix-legacy")}).out == "legacy script\n");
    CHECK(run_program({t.str("env/bin/fix-shell")}).out == "shell script\n");
    r = run_program({t.str("env/bin/python"), "-c", "import fixpkg, nsroot.alpha; print(fixpkg.add(2, 3), nsroot.alpha.X)"});
    CHECK(r.out == "5 1\n");
    CHECK(read_text(t.path / ("env/" + installed.dist_info + "/INSTALLER")) == "envlock\n");
    CHECK(fs::exists(t.path / ("env/" + installed.dist_info + "/REQUESTED")));
    CHECK_FALSE(fs::exists(t.path / ("env/" + installed.dist_info + "/direct_url.json")));
    // Every file written is reported (with its hash) for the transaction, RECORD included.
    std::set<std::string> reported;
    for (const auto& f : installed.files) reported.insert(f.path);
    CHECK(reported.count("bin/fix-hello"));
    CHECK(reported.count("share/fixpkg/notes.txt"));
    CHECK(reported.count(installed.dist_info + "/RECORD"));
    CHECK(check_record(layout, installed.dist_info).empty());
}

TEST_CASE("Debian's pip inside the env lists, shows, checks and uninstalls what envlock installed; Debian's own wheels import") {
    const auto& w = fixture_wheels();
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    for (const auto& e : fs::directory_iterator("/usr/share/python-wheels")) {
        auto got = install_wheel(e.path().string(), layout, {});
        CHECK(check_record(layout, got.dist_info).empty());
    }
    install_wheel(w.fix_pkg, layout, {});
    install_wheel(w.ns_pkg, layout, {});
    std::string py = t.str("env/bin/python");

    // setuptools before pip: importing pip first trips setuptools' distutils shim on Debian's
    // python, in a venv Debian's own `python3 -m venv` makes just the same.
    auto r = run_program({py, "-c", "import setuptools, pkg_resources, pip; print('ok')"});
    CHECK_MESSAGE(r.out == "ok\n", r.err);
    r = run_program({py, "-m", "pip", "list", "--format=freeze"});
    CHECK(r.out.find("fix-pkg==1.2.0") != std::string::npos);
    CHECK(r.out.find("nsroot.alpha==0.1") != std::string::npos);
    CHECK(r.out.find("pip==") != std::string::npos);
    CHECK(run_program({py, "-m", "pip", "check"}).exit_code == 0);
    r = run_program({py, "-m", "pip", "show", "-f", "fix-pkg"});
    CHECK(r.out.find("../../../bin/fix-hello") != std::string::npos);
    CHECK(r.out.find("fixpkg/_speed.cpython-") != std::string::npos);
    // The pip launcher envlock wrote runs pip.
    CHECK(run_program({t.str("env/bin/pip"), "--version"}).exit_code == 0);

    r = run_program({py, "-m", "pip", "uninstall", "-y", "fix-pkg"});
    CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
    for (const auto& f : tree(t.path / "env"))
        CHECK_MESSAGE(f.find("fix") == std::string::npos, f << " left behind by pip uninstall");
}

TEST_CASE("--compile writes bytecode for the installed .py files and lists it in RECORD with empty hash (Recording installed projects)") {
    const auto& w = fixture_wheels();
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    WheelOptions opt;
    opt.compile = true;
    auto got = install_wheel(w.fix_pkg, layout, opt);
    std::string tag = "cpython-" + std::string(w.python_version).erase(1, 1);
    std::string pyc = "lib/python" + w.python_version + "/site-packages/fixpkg/__pycache__/cli." + tag + ".pyc";
    CHECK(fs::exists(t.path / "env" / pyc));
    CHECK(read_text(t.path / ("env/" + got.dist_info + "/RECORD")).find("fixpkg/__pycache__/cli." + tag + ".pyc,,\n") != std::string::npos);
    // Without --compile: no bytecode at all.
    TempDir t2;
    PythonLayout l2 = new_venv(t2.path / "env");
    install_wheel(w.fix_pkg, l2, {});
    CHECK_FALSE(fs::exists(t2.path / "env" / pyc));
    CHECK_FALSE(fs::exists(t2.path / ("env/lib/python" + w.python_version + "/site-packages/fixpkg/__pycache__")));
}

TEST_CASE("a staged install writes only under the stage while its files name the final prefix") {
    const auto& w = fixture_wheels();
    TempDir t;
    PythonLayout layout = venv_layout(t.str("final"), w.python_version);
    WheelOptions opt;
    opt.stage = t.str("stage");
    auto got = install_wheel(w.fix_pkg, layout, opt);
    CHECK_FALSE(fs::exists(t.path / "final"));
    CHECK(read_text(t.path / "stage/bin/fix-hello").rfind("#!" + t.str("final/bin/python") + "\n", 0) == 0);
    CHECK(fs::exists(t.path / ("stage/" + got.dist_info + "/RECORD")));
    CHECK(got.replaced.empty());
    // A file already in the stage (another package's) is replaced, not written through, and reported.
    TempDir t2;
    write_text(t2.path / "stage/bin/fix-hello", "#!/bin/sh\necho other package\n", true);
    fs::create_hard_link(t2.path / "stage/bin/fix-hello", t2.path / "live-copy");   // the live prefix's inode
    opt.stage = t2.str("stage");
    got = install_wheel(w.fix_pkg, venv_layout(t2.str("final"), w.python_version), opt);
    CHECK(got.replaced == std::vector<std::string>{"bin/fix-hello"});
    CHECK(read_text(t2.path / "live-copy") == "#!/bin/sh\necho other package\n");
}

TEST_CASE("direct_url.json is written for a direct URL install only, credentials stripped (PEP 610)") {
    const auto& w = fixture_wheels();
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    WheelOptions opt;
    DirectUrl archive;
    archive.url = "https://user:secret@example.org/fix_pkg-1.2.0.whl";
    archive.archive_sha256 = std::string(64, 'a');
    opt.direct_url = archive;
    auto got = install_wheel(w.fix_pkg, layout, opt);
    std::string j = read_text(t.path / ("env/" + got.dist_info + "/direct_url.json"));
    CHECK(j == "{\"archive_info\":{\"hash\":\"sha256=" + std::string(64, 'a') + "\",\"hashes\":{\"sha256\":\"" +
                   std::string(64, 'a') + "\"}},\"url\":\"https://example.org/fix_pkg-1.2.0.whl\"}");
    DirectUrl vcs;
    vcs.url = "git@github.com:o/r.git";
    vcs.vcs = "git";
    vcs.commit_id = std::string(40, 'f');
    vcs.requested_revision = "v1";
    CHECK(direct_url_json(vcs) ==
          "{\"url\":\"git@github.com:o/r.git\",\"vcs_info\":{\"commit_id\":\"" + std::string(40, 'f') +
              "\",\"requested_revision\":\"v1\",\"vcs\":\"git\"}}");
    // pip reads it back: freeze shows the URL form.
    auto r = run_program({kDebianPython, "-m", "pip", "--python", t.str("env/bin/python"), "freeze"});
    CHECK(r.out.find("fix-pkg @ https://example.org/fix_pkg-1.2.0.whl") != std::string::npos);
}

TEST_CASE("a member that does not match RECORD is refused and nothing is left behind (binary distribution format: installers MUST verify)") {
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    auto before = tree(t.path / "env");
    auto files = demo_wheel_files();
    files["demo/extra.py"] = "print('tampered')\n";
    // Tamper: a RECORD whose hash for demo/__init__.py is off by one character.
    auto good = demo_wheel_files();
    make_wheel(t.str("good.whl"), good);
    std::string good_record;
    {
        auto r = run_program({"unzip", "-p", t.str("good.whl"), "demo-1.0.dist-info/RECORD"});
        good_record = r.out;
    }
    std::string bad_record = good_record;
    auto pos = bad_record.find("demo/__init__.py,sha256=");
    REQUIRE(pos != std::string::npos);
    bad_record[pos + 24] = bad_record[pos + 24] == 'A' ? 'B' : 'A';
    make_wheel(t.str("bad.whl"), good, bad_record);
    CHECK_THROWS_WITH_AS(install_wheel(t.str("bad.whl"), layout, {}),
                         doctest::Contains("demo/__init__.py does not match its sha256"), InputError);
    // A file the RECORD does not list.
    make_wheel(t.str("unlisted.whl"), files, good_record);
    CHECK_THROWS_WITH_AS(install_wheel(t.str("unlisted.whl"), layout, {}), doctest::Contains("is not listed in"), InputError);
    CHECK(tree(t.path / "env") == before);
}

TEST_CASE("members with '..', absolute paths or links, and unknown .data keys are refused before anything is written") {
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    auto before = tree(t.path / "env");
    struct Case {
        std::string name, member, why;
        int mode = 0100644;
    };
    for (const auto& c : {Case{"dotdot", "demo/../../../../escape.py", "'..'"},
                          Case{"absolute", "/tmp/envlock-escape.py", "absolute"},
                          Case{"symlink", "demo/link", "symbolic link", 0120777},
                          Case{"datakey", "demo-1.0.data/config/x.cfg", "purelib,platlib,headers,scripts,data"}}) {
        CAPTURE(c.name);
        auto files = demo_wheel_files();
        files[c.member] = c.mode == 0120777 ? "/etc/passwd" : "x = 1\n";
        make_wheel(t.str(c.name + ".whl"), files, "", {{c.member, c.mode}});
        CHECK_THROWS_WITH_AS(install_wheel(t.str(c.name + ".whl"), layout, {}), doctest::Contains(c.why.c_str()), InputError);
    }
    CHECK(tree(t.path / "env") == before);
    CHECK_FALSE(fs::exists("/tmp/envlock-escape.py"));
}

TEST_CASE("a member that expands beyond its declared size is refused (zip bomb)") {
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    auto files = demo_wheel_files();
    std::string big(1 << 20, 'z');
    files["demo/big.bin"] = big;
    // RECORD, the local header and the central directory all declare 100 bytes for 1 MiB of data.
    std::string record;
    for (const auto& [name, content] : files)
        if (!name.ends_with("/RECORD"))
            record += name + "," + record_hash_from_hex(sha256_hex(content)) + "," + (name == "demo/big.bin" ? "100" : std::to_string(content.size())) + "\n";
    record += "demo-1.0.dist-info/RECORD,,\n";
    make_wheel(t.str("bomb.whl"), files, record);
    auto r = run_program({kDebianPython, "-c",
        "import struct, sys\n"
        "p = sys.argv[1]; b = bytearray(open(p, 'rb').read())\n"
        "name = b'demo/big.bin'\n"
        "for sig, size_at, name_len_at, name_at in ((b'PK\\x01\\x02', 24, 28, 46), (b'PK\\x03\\x04', 22, 26, 30)):\n"
        "    i = b.find(sig)\n"
        "    while i >= 0:\n"
        "        n = struct.unpack_from('<H', b, i + name_len_at)[0]\n"
        "        if bytes(b[i + name_at:i + name_at + n]) == name: struct.pack_into('<I', b, i + size_at, 100)\n"
        "        i = b.find(sig, i + 4)\n"
        "open(p, 'wb').write(b)\n",
        t.str("bomb.whl")});
    REQUIRE(r.exit_code == 0);
    CHECK_THROWS_WITH_AS(install_wheel(t.str("bomb.whl"), layout, {}), doctest::Contains("expands beyond the 100 bytes"), InputError);
    CHECK_FALSE(fs::exists(t.path / ("env/lib/python" + fixture_wheels().python_version + "/site-packages/demo")));
}

TEST_CASE("an entry point named like the interpreter is refused; Wheel-Version 2 is refused (binary distribution format)") {
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    auto files = demo_wheel_files();
    files["demo-1.0.dist-info/entry_points.txt"] = "[console_scripts]\npython = demo:main\n";
    make_wheel(t.str("ep.whl"), files);
    CHECK_THROWS_WITH_AS(install_wheel(t.str("ep.whl"), layout, {}), doctest::Contains("interpreter"), InputError);
    files = demo_wheel_files();
    files["demo-1.0.dist-info/WHEEL"] = "Wheel-Version: 2.0\nRoot-Is-Purelib: true\n";
    make_wheel(t.str("v2.whl"), files);
    CHECK_THROWS_WITH_AS(install_wheel(t.str("v2.whl"), layout, {}), doctest::Contains("Wheel-Version 2.0"), InputError);
    CHECK(run_program({t.str("env/bin/python"), "-c", "print(1)"}).out == "1\n");
}

TEST_CASE("a prefix longer than a shebang may be, or with a space, gets the /bin/sh launcher, and it runs (Linux: 127 bytes)") {
    const auto& w = fixture_wheels();
    TempDir t;
    fs::path prefix = t.path / std::string(60, 'p') / std::string(60, 'q') / "env";
    PythonLayout layout = new_venv(prefix);
    install_wheel(w.fix_pkg, layout, {});
    CHECK(read_text(prefix / "bin/fix-hello").rfind("#!/bin/sh\n'''exec' ", 0) == 0);
    CHECK(read_text(prefix / "bin/fix-legacy").rfind("#!/bin/sh\n'''exec' ", 0) == 0);
    CHECK(run_program({(prefix / "bin/fix-hello").string()}).out == "hello from fixpkg\n");
    CHECK(run_program({(prefix / "bin/fix-legacy").string()}).out == "legacy script\n");
    // A space in the prefix: the kernel would split the "#!" line there.
    fs::path spaced = t.path / "with space" / "env";
    install_wheel(w.fix_pkg, new_venv(spaced), {});
    CHECK(read_text(spaced / "bin/fix-hello").rfind("#!/bin/sh\n'''exec' '" + spaced.string() + "/bin/python' ", 0) == 0);
    CHECK(run_program({(spaced / "bin/fix-hello").string()}).out == "hello from fixpkg\n");
}

TEST_CASE("uninstall removes what RECORD lists, its bytecode and emptied directories, never a path outside the prefix") {
    const auto& w = fixture_wheels();
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    auto before = tree(t.path / "env");
    WheelOptions opt;
    opt.compile = true;
    auto got = install_wheel(w.fix_pkg, layout, opt);
    auto dists = installed_dists(layout);
    REQUIRE(dists.size() == 1);
    CHECK(dists[0].name == "fix-pkg");
    CHECK(dists[0].installer == "envlock");

    // A RECORD row that leads out of the prefix (a hostile or broken RECORD).
    write_text(t.path / "victim.txt", "keep me\n");
    fs::path record = t.path / "env" / got.dist_info / "RECORD";
    write_text(record, read_text(record) + "../../../../victim.txt,,\n");
    auto u = uninstall_dist(layout, got.dist_info);
    CHECK(u.refused == std::vector<std::string>{"../../../../victim.txt"});
    CHECK(fs::exists(t.path / "victim.txt"));
    CHECK(tree(t.path / "env") == before);
}

TEST_CASE("check_record names deleted and edited files (for --repair)") {
    const auto& w = fixture_wheels();
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    auto got = install_wheel(w.fix_pkg, layout, {});
    fs::remove(t.path / "env/bin/fix-hello");
    write_text(t.path / ("env/lib/python" + w.python_version + "/site-packages/fixpkg/cli.py"), "def main(): return 1\n");
    write_text(t.path / "env/share/fixpkg/notes.txt", "NOTES\n");   // same size, other bytes
    auto problems = check_record(layout, got.dist_info);
    std::map<std::string, std::string> by_path;
    for (const auto& p : problems) by_path[p.path] = p.what;
    CHECK(by_path.size() == 3);
    CHECK(by_path["bin/fix-hello"] == "missing");
    CHECK(by_path["lib/python" + w.python_version + "/site-packages/fixpkg/cli.py"].rfind("modified", 0) == 0);
    CHECK(by_path["share/fixpkg/notes.txt"] == "modified (sha256 differs from RECORD)");
}

TEST_CASE("RECORD: csv quoting, sorted rows, urlsafe base64 sha256 without padding (Recording installed projects)") {
    auto rows = parse_record("b.py,sha256=x,1\r\n\"a,b.py\",,\n\"q\"\"uote\",,\n", "RECORD");
    REQUIRE(rows.size() == 3);
    CHECK(rows[1].path == "a,b.py");
    CHECK(rows[2].path == "q\"uote");
    CHECK(write_record(rows) == "\"a,b.py\",,\nb.py,sha256=x,1\n\"q\"\"uote\",,\n");
    // sha256 of the empty string, as pip writes it for REQUESTED.
    std::string empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    CHECK(record_hash_from_hex(empty) == "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
    CHECK(hex_from_record_hash("sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU") == empty);
    CHECK_FALSE(hex_from_record_hash("md5=abc").has_value());
    CHECK_THROWS_AS(parse_record("\"open,,\n", "RECORD"), InputError);
}

TEST_CASE("from the lock: REQUESTED when the spec asked for it, direct_url.json only for files no index offered") {
    LockedPackage p;
    p.kind = Ecosystem::pypi;
    p.url = "https://download.pytorch.org/whl/cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl";
    p.sha256 = std::string(64, 'e');
    p.channel = "https://download.pytorch.org/whl/torch_stable.html";
    CHECK_FALSE(direct_url_for(p).has_value());
    p.channel.clear();
    REQUIRE(direct_url_for(p).has_value());
    CHECK(direct_url_for(p)->archive_sha256 == std::string(64, 'e'));
    CHECK(requested_by_spec(p));   // nobody recorded: the spec's default
    p.requested_by = {"mmcv-full 1.4.0: requires torch"};
    CHECK_FALSE(requested_by_spec(p));
    p.requested_by.push_back("spec: torch==1.9.1+cu111 (docs/install.md:15)");
    CHECK(requested_by_spec(p));
}

TEST_CASE("an unpacked wheel (a cache tree) installs by hard links to the same RECORD as the archive; a wrong size is refused") {
    const auto& w = fixture_wheels();
    TempDir t;
    REQUIRE(run_program({"unzip", "-q", w.fix_pkg, "-d", t.str("tree")}).exit_code == 0);
    PythonLayout from_archive = new_venv(t.path / "a");
    install_wheel(w.fix_pkg, from_archive, {});
    fs::rename(t.path / "a", t.path / "archive-env");
    PythonLayout from_tree = new_venv(t.path / "a");
    auto got = install_wheel(t.str("tree"), from_tree, {});
    CHECK(record_rows(t.path / "a", w.python_version) == record_rows(t.path / "archive-env", w.python_version));
    std::string cli = "lib/python" + w.python_version + "/site-packages/fixpkg/cli.py";
    CHECK(fs::equivalent(t.path / "a" / cli, t.path / "tree/fixpkg/cli.py"));   // a link, not a copy
    CHECK_FALSE(fs::equivalent(t.path / "a/bin/fix-legacy", t.path / ("tree/fix_pkg-1.2.0.data/scripts/fix-legacy")));
    CHECK(run_program({t.str("a/bin/fix-hello")}).out == "hello from fixpkg\n");
    CHECK(check_record(from_tree, got.dist_info).empty());

    TempDir t2;
    PythonLayout l2 = new_venv(t2.path / "env");
    write_text(t.path / "tree/fixpkg/cli.py", "def main(): pass\n");   // a cache tree someone edited
    CHECK_THROWS_WITH_AS(install_wheel(t.str("tree"), l2, {}), doctest::Contains("fixpkg/cli.py does not match its sha256"), InputError);
}

TEST_CASE("a stale RECORD size on a member whose hash matches is a warning and the wheel installs, as pip and uv install "
          "torch 1.12.1's wheels (their METADATA row); a member whose hash differs is still refused") {
    TempDir t;
    auto files = demo_wheel_files();
    files["demo-1.0.dist-info/METADATA"] = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nSummary: a longer METADATA than RECORD says\n";
    // The size torch's wheel builder left in RECORD before METADATA was rewritten: hash right, size stale.
    std::string record;
    for (const auto& [name, content] : files)
        if (!name.ends_with("/RECORD"))
            record += name + "," + record_hash_from_hex(sha256_hex(content)) + "," +
                      std::to_string(name.ends_with("/METADATA") ? content.size() - 40 : content.size()) + "\n";
    record += "demo-1.0.dist-info/RECORD,,\n";
    make_wheel(t.str("demo-1.0-py3-none-any.whl"), files, record);

    PythonLayout layout = new_venv(t.path / "env");
    auto got = install_wheel(t.str("demo-1.0-py3-none-any.whl"), layout, {});
    REQUIRE(got.warnings.size() == 1);
    CHECK(got.warnings[0].find("demo-1.0.dist-info/METADATA") != std::string::npos);
    CHECK(check_record(layout, got.dist_info).empty());   // the installed RECORD has the true sizes
    CHECK(run_program({t.str("env/bin/python"), "-c", "import demo; print(demo.VALUE)"}).out == "42\n");

    // The same wheel unpacked (a cache tree): the stale row's hash is checked instead of its size.
    REQUIRE(run_program({"unzip", "-q", t.str("demo-1.0-py3-none-any.whl"), "-d", t.str("tree")}).exit_code == 0);
    PythonLayout from_tree = new_venv(t.path / "env2");
    CHECK(install_wheel(t.str("tree"), from_tree, {}).warnings.size() == 1);
    // torchaudio 0.12.1's real wheel: its METADATA was edited after the build, so RECORD gives
    // another size AND another hash for it. pip and uv install it; the wheel's own sha256 (pinned
    // by the lock) protects its bytes, and METADATA is no code: a warning, the true hash recorded.
    const std::string edited = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nSummary: a LONGER METADATA than RECORD says\n";
    write_text(t.path / "tree/demo-1.0.dist-info/METADATA", edited);
    PythonLayout third = new_venv(t.path / "env3");
    auto edited_tree = install_wheel(t.str("tree"), third, {});
    CHECK(std::any_of(edited_tree.warnings.begin(), edited_tree.warnings.end(),
                      [](const std::string& w) { return w.find("another sha256 for demo-1.0.dist-info/METADATA") != std::string::npos; }));
    CHECK(check_record(third, edited_tree.dist_info).empty());
    files["demo-1.0.dist-info/METADATA"] = edited;
    make_wheel(t.str("meta-1.0-py3-none-any.whl"), files, record);
    CHECK_NOTHROW(install_wheel(t.str("meta-1.0-py3-none-any.whl"), new_venv(t.path / "env4"), {}));

    // Code is another matter: a payload member whose bytes are not RECORD's is refused, in an
    // archive and in an unpacked tree.
    files["demo/__init__.py"] = "VALUE = 43\n";
    make_wheel(t.str("bad-1.0-py3-none-any.whl"), files, record);
    CHECK_THROWS_WITH_AS(install_wheel(t.str("bad-1.0-py3-none-any.whl"), new_venv(t.path / "env5"), {}),
                         doctest::Contains("demo/__init__.py does not match its sha256"), InputError);
}

TEST_CASE("two members or two entry points that would write one file are refused") {
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    auto files = demo_wheel_files();
    files["demo-1.0.data/purelib/demo/__init__.py"] = "VALUE = 0\n";   // the root has demo/__init__.py too
    make_wheel(t.str("twice.whl"), files);
    CHECK_THROWS_WITH_AS(install_wheel(t.str("twice.whl"), layout, {}), doctest::Contains("two members install to"), InputError);
    files = demo_wheel_files();
    files["demo-1.0.dist-info/entry_points.txt"] = "[console_scripts]\ndemo = demo:main\n[gui_scripts]\ndemo = demo:gui\n";
    make_wheel(t.str("ep2.whl"), files);
    CHECK_THROWS_WITH_AS(install_wheel(t.str("ep2.whl"), layout, {}), doctest::Contains("declared twice"), InputError);
}

TEST_CASE("RECORD hashes of other strong algorithms are verified too; md5 is refused (binary distribution format: sha256 or better)") {
    TempDir t;
    PythonLayout layout = new_venv(t.path / "env");
    auto files = demo_wheel_files();
    auto r = run_program({kDebianPython, "-c",
        "import base64, hashlib, sys\n"
        "for algo in ('sha512', 'blake2b', 'md5'):\n"
        "    print(algo + '=' + base64.urlsafe_b64encode(hashlib.new(algo, b'VALUE = 42\\n').digest()).rstrip(b'=').decode())\n"});
    REQUIRE(r.exit_code == 0);
    auto lines = std::vector<std::string>();
    for (size_t pos = 0; pos < r.out.size();) {
        size_t nl = r.out.find('\n', pos);
        lines.push_back(r.out.substr(pos, nl - pos));
        pos = nl + 1;
    }
    REQUIRE(lines.size() == 3);
    auto record_with = [&](const std::string& hash) {
        std::string rec;
        for (const auto& [name, content] : files)
            if (!name.ends_with("/RECORD"))
                rec += name + "," + (name == "demo/__init__.py" ? hash : record_hash_from_hex(sha256_hex(content))) + "," +
                       std::to_string(content.size()) + "\n";
        return rec + "demo-1.0.dist-info/RECORD,,\n";
    };
    make_wheel(t.str("sha512.whl"), files, record_with(lines[0]));
    auto got = install_wheel(t.str("sha512.whl"), layout, {});
    CHECK(check_record(layout, got.dist_info).empty());   // the installed RECORD says sha256
    make_wheel(t.str("blake2b.whl"), files, record_with(lines[1]));
    CHECK_NOTHROW(install_wheel(t.str("blake2b.whl"), layout, {}));
    std::string bad = lines[0];
    bad[10] = bad[10] == 'A' ? 'B' : 'A';
    make_wheel(t.str("bad512.whl"), files, record_with(bad));
    CHECK_THROWS_WITH_AS(install_wheel(t.str("bad512.whl"), layout, {}), doctest::Contains("does not match its sha512"), InputError);
    make_wheel(t.str("md5.whl"), files, record_with(lines[2]));
    CHECK_THROWS_WITH_AS(install_wheel(t.str("md5.whl"), layout, {}), doctest::Contains("sha256 or stronger"), InputError);
}
