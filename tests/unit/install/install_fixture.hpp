#pragma once
// Real conda packages for the installer's tests: .conda and .tar.bz2 archives written with
// libarchive in the layout CEP 34/35 describe (info/index.json, paths.json with text and
// binary placeholders, link.json entry points), served by a real HTTP server on 127.0.0.1,
// and locks naming them with their real sha256/md5/size.
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fetch/files.hpp"
#include "install/install.hpp"
#include "install/repair.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/mirror/archive.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

namespace envlock::test {

namespace fs = std::filesystem;

// doctest's matcher for a message that contains `text`.
inline doctest::Contains has(const std::string& text) { return doctest::Contains(text.c_str()); }

// conda-build's padded host prefix, as real packages carry it for binary replacement.
inline std::string long_placeholder() {
    std::string p = "/home/conda/feedstock_root/build_artifacts/pkg_1622505600000/_h_env";
    while (p.size() + 10 <= 255) p += "_placehold";
    return p;
}
inline std::string text_placeholder() { return std::string("/opt/anaconda1") + "anaconda2" + "anaconda3"; }

struct PkgFile {
    std::string path;
    std::string content;
    int mode = 0644;
    std::string placeholder;   // "" none
    bool binary = false;
    std::string symlink_to;    // non-empty: a symlink
};

inline PkgFile file(std::string path, std::string content, int mode = 0644) {
    PkgFile f;
    f.path = std::move(path);
    f.content = std::move(content);
    f.mode = mode;
    return f;
}
inline PkgFile patched(std::string path, std::string content, std::string placeholder, bool binary, int mode = 0644) {
    PkgFile f = file(std::move(path), std::move(content), mode);
    f.placeholder = std::move(placeholder);
    f.binary = binary;
    return f;
}
inline PkgFile symlink(std::string path, std::string target) {
    PkgFile f = file(std::move(path), "", 0777);
    f.symlink_to = std::move(target);
    return f;
}

struct PkgSpec {
    std::string name, version, build = "h0_0";
    std::string noarch;        // "", "python", "generic"
    std::vector<std::string> depends;
    std::vector<PkgFile> files;
    std::vector<std::string> entry_points;
    std::string ext = ".conda";
    std::string subdir = "linux-64";
    std::string filename() const { return name + "-" + version + "-" + build + ext; }
};

inline PkgSpec package(std::string name, std::string version, std::string build) {
    PkgSpec p;
    p.name = std::move(name);
    p.version = std::move(version);
    p.build = std::move(build);
    return p;
}

inline std::string build_conda(const PkgSpec& s) {
    using nlohmann::ordered_json;
    using mirror::ArchiveMember;
    std::vector<ArchiveMember> pkg, info;
    ordered_json paths = ordered_json::array();
    std::string has_prefix;
    for (const auto& f : s.files) {
        ArchiveMember m{f.path, f.symlink_to.empty() ? f.content : "", f.symlink_to.empty() ? f.mode : 0777, f.symlink_to};
        pkg.push_back(m);
        ordered_json e;
        e["_path"] = f.path;
        if (!f.placeholder.empty()) {
            e["file_mode"] = f.binary ? "binary" : "text";
            e["prefix_placeholder"] = f.placeholder;
            has_prefix += f.placeholder + " " + (f.binary ? "binary " : "text ") + f.path + "\n";
        }
        e["path_type"] = f.symlink_to.empty() ? "hardlink" : "softlink";
        std::string bytes = f.content;
        e["sha256"] = mirror::sha256_hex_of(bytes);
        e["size_in_bytes"] = bytes.size();
        paths.push_back(e);
    }
    ordered_json index;
    index["build"] = s.build;
    index["build_number"] = 0;
    index["depends"] = s.depends;
    index["license"] = "MIT";
    index["name"] = s.name;
    if (!s.noarch.empty()) index["noarch"] = s.noarch;
    index["subdir"] = s.subdir;
    index["timestamp"] = 1622505600000;
    index["version"] = s.version;
    info.push_back({"info/index.json", index.dump(2), 0644, ""});
    info.push_back({"info/paths.json", ordered_json{{"paths", paths}, {"paths_version", 1}}.dump(2), 0644, ""});
    if (!has_prefix.empty()) info.push_back({"info/has_prefix", has_prefix, 0644, ""});
    if (s.noarch == "python") {
        ordered_json link{{"noarch", {{"type", "python"}}}, {"package_metadata_version", 1}};
        if (!s.entry_points.empty()) link["noarch"]["entry_points"] = s.entry_points;
        info.push_back({"info/link.json", link.dump(2), 0644, ""});
    }
    if (s.ext == ".tar.bz2") {
        std::vector<ArchiveMember> all = info;
        all.insert(all.end(), pkg.begin(), pkg.end());
        return mirror::write_tar(all, mirror::TarFilter::bzip2);
    }
    std::string stem = s.name + "-" + s.version + "-" + s.build;
    return mirror::write_zip({{"metadata.json", "{\"conda_pkg_format_version\": 2}", 0644, ""},
                              {"pkg-" + stem + ".tar.zst", mirror::write_tar(pkg, mirror::TarFilter::zstd), 0644, ""},
                              {"info-" + stem + ".tar.zst", mirror::write_tar(info, mirror::TarFilter::zstd), 0644, ""}},
                             true);
}

inline fs::path make_temp_dir(const std::string& tag) {
    return scratch_dir("install-" + tag);
}

inline void write_bytes(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
}

inline std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// A python stand-in: a shell script (text placeholder) that runs the system's python with the
// prefix's site-packages on the path, so entry points and imports can be run for real.
inline PkgSpec python_pkg(const std::string& version = "3.8.18") {
    std::string mm = version.substr(0, version.rfind('.'));
    PkgSpec p = package("python", version, "h1_0_cpython");
    // The site-packages beside the script (CPython finds its prefix from its executable), so a
    // source built in install's stage imports the stage's packages; the placeholder stays in a comment.
    std::string script = "#!/bin/sh\n# stand-in for CPython " + version + " in " + text_placeholder() +
                         "\nhere=$(cd \"$(dirname \"$0\")/..\" && pwd)\nPYTHONPATH=\"$here/lib/python" + mm +
                         "/site-packages\" exec /usr/bin/python3 \"$@\"\n";
    p.files.push_back(patched("bin/python" + mm, script, text_placeholder(), false, 0755));
    p.files.push_back(symlink("bin/python", "python" + mm));
    p.files.push_back(file("lib/python" + mm + "/os.py", "# stand-in\n"));
    return p;
}

// A compiled library: a text .pc file and an ELF-like binary, both carrying the placeholder.
inline PkgSpec native_pkg(const std::string& name, const std::string& version, std::vector<std::string> depends = {}) {
    PkgSpec p = package(name, version, "h2_0");
    p.depends = std::move(depends);
    std::string binary = std::string("\x7f" "ELF", 4) + std::string(12, '\0') + long_placeholder() + "/lib" + std::string(1, '\0') +
                         "rpath=" + long_placeholder() + "/lib:" + long_placeholder() + "/lib64" + std::string(1, '\0') + "tail";
    p.files.push_back(patched("lib/lib" + name + ".so." + version, binary, long_placeholder(), true, 0755));
    p.files.push_back(symlink("lib/lib" + name + ".so", "lib" + name + ".so." + version));
    p.files.push_back(patched("lib/pkgconfig/" + name + ".pc",
                              "prefix=" + text_placeholder() + "\nlibdir=${prefix}/lib\nVersion: " + version + "\n",
                              text_placeholder(), false));
    p.files.push_back(file("share/" + name + "/README", name + " " + version + "\n"));
    return p;
}

// A noarch: python package with a module and a console entry point.
inline PkgSpec noarch_pkg(const std::string& name, const std::string& version) {
    PkgSpec p = package(name, version, "pyhd8ed1ab_0");
    p.noarch = "python";
    p.depends = {"python >=3.6"};
    p.subdir = "noarch";
    p.files.push_back(file("site-packages/" + name + "/__init__.py",
                           "__version__ = \"" + version + "\"\n\ndef main():\n    print('" + name + " " + version +
                               " says hello')\n    return 0\n"));
    p.files.push_back(file("site-packages/" + name + "/util.py", "X = 1\n"));
    p.files.push_back(file("site-packages/" + name + "-" + version + ".dist-info/METADATA",
                           "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"));
    p.files.push_back(file("site-packages/" + name + "-" + version + ".dist-info/INSTALLER", "conda\n"));
    p.entry_points = {name + " = " + name + ":main"};
    return p;
}

// A folder of packages behind a real HTTP server, and locks over them.
struct Channel {
    fs::path dir;
    std::unique_ptr<HttpServer> server;
    std::map<std::string, std::string> bytes;   // filename -> archive

    explicit Channel(const std::string& tag) : dir(make_temp_dir(tag)) {
        fs::create_directories(dir / "ch" / "linux-64");
        server = std::make_unique<HttpServer>(dir.string());
    }

    LockedPackage add(const PkgSpec& s) {
        std::string b = build_conda(s);
        bytes[s.filename()] = b;
        write_bytes(dir / "ch" / s.subdir / s.filename(), b);
        LockedPackage p;
        p.kind = Ecosystem::conda;
        p.url = server->url() + "/ch/" + s.subdir + "/" + s.filename();
        p.name = s.name;
        p.version = s.version;
        p.build = s.build;
        p.sha256 = mirror::sha256_hex_of(b);
        p.md5 = mirror::md5_hex(b);
        p.size = b.size();
        p.channel = server->url() + "/ch";
        p.subdir = s.subdir;
        p.depends = s.depends;
        return p;
    }
};

inline Lock make_lock(std::vector<LockedPackage> packages) {
    Lock lock;
    lock.spec.name = "install-test";
    SpecRequirement python;
    python.text = "python 3.8.*";
    python.ecosystem = "conda";
    lock.spec.requirements.push_back(python);
    Target t;
    t.platform = "linux-64";
    lock.targets.push_back({"default", t});
    std::sort(packages.begin(), packages.end(), [](const LockedPackage& a, const LockedPackage& b) { return a.name < b.name; });
    lock.packages = std::move(packages);
    lock.content_hash = lock_content_hash(lock.spec, lock.targets, "test");
    lock.knowledge_version = "test";
    return lock;
}

inline install::InstallOptions options_for(const fs::path& prefix, const fs::path& cache) {
    install::InstallOptions o;
    o.prefix = prefix;
    o.fetch.cache_dir = cache;
    o.fetch.transport.retries = 0;
    o.fetch.transport.jobs = 4;
    o.command = "envlock install (test)";
    return o;
}

// Every file the state records is there with its recorded size and hash.
inline std::vector<install::Damage> verify_prefix(const fs::path& prefix) {
    auto state = install::read_state(prefix);
    if (!state) return {install::Damage{0, ".envlock/state.json", "missing"}};
    return install::find_damage(prefix, state->packages, 2);
}

inline std::set<std::string> installed_ids(const fs::path& prefix) {
    std::set<std::string> ids;
    if (auto s = install::read_state(prefix))
        for (const auto& p : s->packages) ids.insert(p.id);
    return ids;
}

inline std::set<std::string> lock_ids(const Lock& lock) {
    std::set<std::string> ids;
    for (const auto& p : lock.packages) ids.insert(install::package_id(p));
    return ids;
}

// Every regular file and link under `root` with its bytes (links: "-> target").
inline std::map<std::string, std::string> snapshot(const fs::path& root) {
    std::map<std::string, std::string> out;
    std::error_code ec;
    if (!fs::exists(root, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::string rel = it->path().lexically_relative(root).generic_string();
        if (it->is_symlink()) out[rel] = "-> " + fs::read_symlink(it->path()).string();
        else if (it->is_regular_file()) out[rel] = read_bytes(it->path());
    }
    return out;
}

}  // namespace envlock::test
