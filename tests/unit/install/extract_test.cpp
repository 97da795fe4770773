// Safe extraction (install/extract.hpp): real archives from cph (conda-package-handling) and
// libarchive, and the malicious corpus of issue 20 (traversal, absolute paths, symlink and
// hardlink escapes, device files, duplicates, lying sizes, zip bombs). The rule checked each
// time: the archive is refused, and nothing is written outside the target directory.
#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>
#include <sys/sysmacros.h>

#include <cstdlib>
#include <cstring>

#include "tests/unit/install/install_fixture.hpp"

using namespace envlock;
using namespace envlock::test;
using install::extract_archive;
using install::extract_conda_package;
using install::ExtractLimits;
using mirror::ArchiveMember;

namespace {

// A tar with members libarchive's own writer accepts but a package must never contain.
struct RawMember {
    std::string path;
    std::string content;
    unsigned type = AE_IFREG;
    std::string symlink, hardlink;
};

RawMember reg(std::string path, std::string content) { return {std::move(path), std::move(content), AE_IFREG, "", ""}; }
RawMember dir(std::string path) { return {std::move(path), "", AE_IFDIR, "", ""}; }
RawMember sym(std::string path, std::string to) { return {std::move(path), "", AE_IFLNK, std::move(to), ""}; }
RawMember hard(std::string path, std::string to) { return {std::move(path), "", AE_IFREG, "", std::move(to)}; }
RawMember special(std::string path, unsigned type) { return {std::move(path), "", type, "", ""}; }

std::string raw_tar(const std::vector<RawMember>& members) {
    std::string out;
    struct archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_set_bytes_in_last_block(a, 1);
    archive_write_open(
        a, &out, nullptr,
        [](struct archive*, void* client, const void* buf, size_t n) -> la_ssize_t {
            static_cast<std::string*>(client)->append(static_cast<const char*>(buf), n);
            return static_cast<la_ssize_t>(n);
        },
        nullptr);
    for (const auto& m : members) {
        archive_entry* e = archive_entry_new();
        archive_entry_set_pathname(e, m.path.c_str());
        archive_entry_set_filetype(e, m.type);
        archive_entry_set_perm(e, 0644);
        if (!m.symlink.empty()) archive_entry_set_symlink(e, m.symlink.c_str());
        if (!m.hardlink.empty()) archive_entry_set_hardlink(e, m.hardlink.c_str());
        archive_entry_set_size(e, m.type == AE_IFREG && m.hardlink.empty() ? static_cast<la_int64_t>(m.content.size()) : 0);
        if (m.type == AE_IFCHR) archive_entry_set_rdev(e, makedev(1, 3));
        archive_write_header(a, e);
        if (!m.content.empty() && m.hardlink.empty()) archive_write_data(a, m.content.data(), m.content.size());
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    return out;
}

struct Sandbox {
    fs::path root = make_temp_dir("extract");
    fs::path dest = root / "inside" / "dest";
    fs::path outside = root / "outside";
    Sandbox() { fs::create_directories(outside); }
    ~Sandbox() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
    fs::path put(const std::string& name, const std::string& bytes) {
        write_bytes(root / name, bytes);
        return root / name;
    }
    // Nothing but the archives themselves exists outside dest.
    void nothing_escaped() const {
        CHECK(fs::is_empty(outside));
        CHECK(!fs::exists(dest));
        for (const auto& e : fs::directory_iterator(root / "inside")) FAIL("left behind: " << e.path());
    }
};

std::string refusal(const fs::path& archive, const fs::path& dest, const ExtractLimits& limits = {}) {
    try {
        extract_archive(archive, dest, limits);
    } catch (const envlock::InputError& e) {
        return e.what();
    }
    return "";
}

bool have_cph() { return std::system("cph --help >/dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("a .conda and a .tar.bz2 made by cph extract to the same tree as cph x (CEP 35)") {
    if (!have_cph()) {
        MESSAGE("skipped: cph (Debian conda-package-handling) is not installed");
        return;
    }
    Sandbox s;
    fs::path src = s.root / "src";
    write_bytes(src / "info/index.json", R"({"name": "demo", "version": "1.0", "build": "h0_0", "build_number": 0, "depends": [], "subdir": "linux-64"})");
    write_bytes(src / "info/paths.json", R"({"paths": [], "paths_version": 1})");
    write_bytes(src / "lib/libdemo.so.1", std::string("\x7f" "ELF\0\0binary", 12));
    write_bytes(src / "bin/demo", "#!/bin/sh\necho demo\n");
    fs::permissions(src / "bin/demo", fs::perms(0755));
    fs::create_symlink("libdemo.so.1", src / "lib/libdemo.so");
    write_bytes(src / "share/demo/nested/deep/file.txt", std::string(100000, 'x'));
    for (const char* ext : {".conda", ".tar.bz2"}) {
        CAPTURE(ext);
        std::string name = std::string("demo-1.0-h0_0") + ext;
        std::string cmd = "cd " + s.root.string() + " && cph create src " + name + " --out-folder " + s.root.string() +
                          " >/dev/null 2>&1";
        REQUIRE(std::system(cmd.c_str()) == 0);
        fs::path ours = s.root / (std::string("ours") + ext), theirs = s.root / (std::string("theirs") + ext);
        extract_conda_package(s.root / name, ours);
        fs::create_directories(theirs);
        REQUIRE(std::system(("cph x " + (s.root / name).string() + " --dest " + theirs.string() + " >/dev/null 2>&1").c_str()) == 0);
        // cph x puts the tree in a folder named after the package.
        fs::path theirs_tree = fs::exists(theirs / "demo-1.0-h0_0") ? theirs / "demo-1.0-h0_0" : theirs;
        CHECK(snapshot(ours) == snapshot(theirs_tree));
        CHECK(snapshot(ours) == snapshot(src));
        CHECK((fs::status(ours / "bin/demo").permissions() & fs::perms::owner_exec) != fs::perms::none);
    }
}

TEST_CASE("members with '..' or an absolute path are refused, and nothing lands outside") {
    for (std::string bad : {"../../outside/x", "a/../../outside/x", "/tmp/envlock-abs-member", "a\\..\\..\\x"}) {
        CAPTURE(bad);
        Sandbox s;
        auto archive = s.put("bad.tar", raw_tar({reg("ok.txt", "fine"), reg(bad, "gotcha")}));
        CHECK(refusal(archive, s.dest).find("unsafe archive bad.tar: member " + bad) != std::string::npos);
        s.nothing_escaped();
        CHECK(!fs::exists("/tmp/envlock-abs-member"));
    }
}

TEST_CASE("a symlink out of the target is refused: absolute, '..' past the root, or through a chain of links") {
    std::vector<std::vector<RawMember>> cases = {
        {sym("evil", "/etc")},
        {sym("lib/evil", "../../outside")},
        // Each link alone stays inside; followed together they leave it.
        {sym("d/up", ".."), sym("d/s", "up/..")},
        {sym("s2", "d/s1/.."), sym("d/s1", "..")},
    };
    for (const auto& members : cases) {
        CAPTURE(members.back().path);
        Sandbox s;
        auto archive = s.put("links.tar", raw_tar(members));
        CHECK(refusal(archive, s.dest).find("symbolic link") != std::string::npos);
        s.nothing_escaped();
    }
}

TEST_CASE("nothing is written through a symlink member, even one pointing inside") {
    Sandbox s;
    auto archive = s.put("through.tar", raw_tar({dir("sub/"), sym("a", "sub"), reg("a/x", "data")}));
    CHECK(refusal(archive, s.dest).find("below the symbolic link a") != std::string::npos);
    s.nothing_escaped();
}

TEST_CASE("a hardlink to /etc/passwd, or to anything but an earlier member, is refused") {
    for (std::string target : {"/etc/passwd", "../../etc/passwd", "not-yet-there"}) {
        CAPTURE(target);
        Sandbox s;
        auto archive = s.put("hard.tar", raw_tar({hard("h", target), reg("not-yet-there", "x")}));
        CHECK(refusal(archive, s.dest).find("member h: hard link to " + target) != std::string::npos);
        s.nothing_escaped();
    }
    Sandbox ok;
    auto archive = ok.put("hard-ok.tar", raw_tar({reg("a", "same bytes"), hard("b", "a")}));
    extract_archive(archive, ok.dest);
    CHECK(read_bytes(ok.dest / "b") == "same bytes");
}

TEST_CASE("device files and FIFOs are refused") {
    for (unsigned type : {unsigned(AE_IFCHR), unsigned(AE_IFIFO), unsigned(AE_IFBLK)}) {
        Sandbox s;
        auto archive = s.put("dev.tar", raw_tar({special("dev/null", type)}));
        CHECK(refusal(archive, s.dest).find("device, FIFO or socket") != std::string::npos);
        s.nothing_escaped();
    }
}

TEST_CASE("a member that appears twice is refused (the second would silently win)") {
    Sandbox s;
    auto archive = s.put("dup.tar", raw_tar({reg("lib/x.py", "print(1)"), reg("lib/x.py", "import os; os.system('...')")}));
    CHECK(refusal(archive, s.dest).find("appears twice") != std::string::npos);
    s.nothing_escaped();
    Sandbox z;
    auto zip = z.put("dup.whl", mirror::write_zip({{"m.py", "1", 0644, ""}, {"m.py", "2", 0644, ""}}, false));
    CHECK(refusal(zip, z.dest).find("appears twice") != std::string::npos);
}

TEST_CASE("zip bombs: past the size cap, or more bytes than a member declares") {
    SUBCASE("an honest member larger than the cap") {
        Sandbox s;
        auto zip = s.put("bomb.whl", mirror::write_zip({{"zeros.bin", std::string(8 << 20, '\0'), 0644, ""}}, false));
        CHECK(fs::file_size(zip) < 100000);
        CHECK(refusal(zip, s.dest, {1 << 20}).find("past the archive's limit") != std::string::npos);
        s.nothing_escaped();
    }
    SUBCASE("the default cap is 200 times the archive, at least 256 MiB") {
        Sandbox s;
        auto zip = s.put("big.whl", mirror::write_zip({{"zeros.bin", std::string((256u << 20) + 1, '\0'), 0644, ""}}, false));
        CHECK(refusal(zip, s.dest).find("limit of 268435456 bytes") != std::string::npos);
        s.nothing_escaped();
    }
    SUBCASE("a member whose declared size lies") {
        Sandbox s;
        std::string bytes = mirror::write_zip({{"liar.bin", std::string(1 << 20, 'a'), 0644, ""}}, false);
        // Rewrite the uncompressed size in the local header (offset 22) and the central
        // directory (offset 24) from 1 MiB to 1 KiB.
        auto patch = [&](const std::string& sig, size_t offset) {
            size_t at = bytes.find(sig);
            REQUIRE(at != std::string::npos);
            uint32_t v = 1024;
            std::memcpy(&bytes[at + offset], &v, 4);
        };
        patch(std::string("PK\x03\x04", 4), 22);
        patch(std::string("PK\x01\x02", 4), 24);
        auto zip = s.put("liar.whl", bytes);
        std::string why = refusal(zip, s.dest);
        CHECK(!why.empty());
        s.nothing_escaped();
    }
}

TEST_CASE("a .conda needs metadata.json version 2 and both inner tarballs; an unknown version is refused") {
    Sandbox s;
    std::string info = mirror::write_tar({{"info/index.json", "{}", 0644, ""}}, mirror::TarFilter::zstd);
    std::string pkg = mirror::write_tar({{"lib/x", "x", 0644, ""}}, mirror::TarFilter::zstd);
    auto v3 = s.put("p-1-0.conda", mirror::write_zip({{"metadata.json", R"({"conda_pkg_format_version": 3})", 0644, ""},
                                                      {"info-p-1-0.tar.zst", info, 0644, ""},
                                                      {"pkg-p-1-0.tar.zst", pkg, 0644, ""}},
                                                     true));
    CHECK_THROWS_WITH_AS(extract_conda_package(v3, s.dest), has("conda_pkg_format_version 2"), InputError);
    auto no_pkg = s.put("q-1-0.conda", mirror::write_zip({{"metadata.json", R"({"conda_pkg_format_version": 2})", 0644, ""},
                                                          {"info-q-1-0.tar.zst", info, 0644, ""}},
                                                         true));
    CHECK_THROWS_WITH_AS(extract_conda_package(no_pkg, s.dest), has("pkg-*.tar.zst"), InputError);
    CHECK(!fs::exists(s.dest));
    // An inner tarball is held to the same rules as any archive.
    std::string evil = mirror::write_tar({{"../escape", "x", 0644, ""}}, mirror::TarFilter::zstd);
    auto bad = s.put("r-1-0.conda", mirror::write_zip({{"metadata.json", R"({"conda_pkg_format_version": 2})", 0644, ""},
                                                       {"info-r-1-0.tar.zst", info, 0644, ""},
                                                       {"pkg-r-1-0.tar.zst", evil, 0644, ""}},
                                                      true));
    CHECK_THROWS_WITH_AS(extract_conda_package(bad, s.dest), has("member ../escape: '..'"), InputError);
    s.nothing_escaped();
}

TEST_CASE("read_archive_member reads one member of a wheel without extracting") {
    Sandbox s;
    auto whl = s.put("demo-1.0-py3-none-any.whl",
                     mirror::write_zip({{"demo/__init__.py", "", 0644, ""}, {"demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n", 0644, ""}}, false));
    CHECK(install::read_archive_member(whl, "demo-1.0.dist-info/WHEEL") == std::optional<std::string>("Wheel-Version: 1.0\n"));
    CHECK(!install::read_archive_member(whl, "missing"));
    CHECK(!fs::exists(s.dest));
}

TEST_CASE("a member path too long for a file system is 'unsafe archive: path too long (N bytes)' naming the archive, "
          "not the OS's error with the whole path (#32)") {
    std::string deep;
    while (deep.size() < 6000) deep += "dddddddddd/";
    deep += "x.py";
    const std::string long_name = std::string(300, 'n') + ".py";
    for (const auto& [bad, shown] : {std::pair<std::string, std::string>{deep, "(" + std::to_string(deep.size()) + " bytes)"},
                                     {"pkg/" + long_name, "(" + std::to_string(4 + long_name.size()) + " bytes, one name of 303)"}}) {
        Sandbox s;
        for (const char* name : {"evil-1.0-h0_0.tar.bz2", "evil-1.0-py3-none-any.whl"}) {
            CAPTURE(name);
            auto archive = std::string(name).ends_with(".whl")
                               ? s.put(name, mirror::write_zip({{"ok.txt", "fine", 0644, ""}, {bad, "gotcha", 0644, ""}}, false))
                               : s.put(name, mirror::write_tar({{"ok.txt", "fine", 0644, ""}, {bad, "gotcha", 0644, ""}},
                                                               mirror::TarFilter::bzip2));
            const std::string why = refusal(archive, s.dest);
            CHECK_MESSAGE(why.rfind("unsafe archive: path too long " + shown + " in " + name + ": ", 0) == 0, why);
            CHECK(why.size() < 300);   // the path's start, not all of it
            CHECK(why.find("File name too long") == std::string::npos);
            s.nothing_escaped();
        }
    }
    // The longest paths real packages carry pass (a node_modules tree is about 250 bytes).
    Sandbox s;
    std::string fine;
    while (fine.size() < 2000) fine += "abcdefghijklmnopqrstuvwxyz/";
    fine += std::string(200, 'f');
    auto archive = s.put("fine.tar", raw_tar({reg(fine.substr(0, 2048), "ok")}));
    CHECK(refusal(archive, s.dest) == "");
}
