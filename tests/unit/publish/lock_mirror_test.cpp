// `envlock mirror`: the BEVFormer lock, resolved on the demo mirror (tests/mirror), copied into a
// folder of its own; then installed with that folder as the only source (the demo mirror moved
// away, --offline, a fresh cache), as a cluster node without internet installs it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fetch/mirrors.hpp"
#include "fetch/pypi_readers.hpp"
#include "fetch/url.hpp"
#include "install/link.hpp"
#include "publish/index_pages.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/mirror/mirror.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

using namespace envlock;
using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_file(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

std::string said(const RunResult& r) { return "stdout:\n" + r.out + "\nstderr:\n" + r.err; }

// The demo mirror, the BEVFormer lock resolved on it, and that lock mirrored once into `mirror`.
struct Fixture {
    fs::path dir, demo, lock, mirror, cache;
    std::string demo_mirrors;
};

const Fixture& fixture() {
    static Fixture f = [] {
        Fixture x;
        x.dir = scratch_dir("lock-mirror");
        x.demo = x.dir / "demo";
        envlock::mirror::MirrorOptions options;
        std::error_code ec;
        if (fs::is_directory(ENVLOCK_SHARED_DIR "/facts", ec)) options.shared_dir = ENVLOCK_SHARED_DIR;
        envlock::mirror::build_mirror(x.demo.string(), options);
        x.demo_mirrors = (x.demo / "mirrors.yaml").string();
        x.lock = x.dir / "bev" / "envlock.yaml";
        x.cache = x.dir / "cache";
        auto r = run_envlock({"resolve", "BEVFormer", "-o", x.lock.string(), "--gpu", "RTX 3090", "--driver", "470.82.01",
                              "--cache-dir", x.cache.string()},
                             {"ENVLOCK_MIRRORS=" + x.demo_mirrors});
        REQUIRE_MESSAGE(r.exit_code == 0, said(r));
        x.mirror = x.dir / "mirror";
        r = run_envlock({"mirror", x.lock.string(), x.mirror.string(), "--cache-dir", x.cache.string()},
                        {"ENVLOCK_MIRRORS=" + x.demo_mirrors});
        REQUIRE_MESSAGE(r.exit_code == 0, said(r));
        return x;
    }();
    return f;
}

Lock bev_lock() { return read_lock(read_file(fixture().lock), fixture().lock.string()); }

const LockedPackage& package(const Lock& lock, const std::string& name) {
    for (const auto& p : lock.packages)
        if (p.name == name) return p;
    FAIL("the lock has no " << name);
    throw;
}

// Every file under a folder, relative, with the state file and pages left out when asked.
std::set<std::string> files_under(const fs::path& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) out.insert(e.path().lexically_relative(dir).generic_string());
    return out;
}

// The demo mirror out of reach while `body` runs: the mirror folder must be all there is.
template <typename F>
void without_demo_mirror(F body) {
    fs::path aside = fixture().demo;
    aside += ".aside";
    fs::rename(fixture().demo, aside);
    try {
        body();
    } catch (...) {
        fs::rename(aside, fixture().demo);
        throw;
    }
    fs::rename(aside, fixture().demo);
}

// A copy of the mirror folder sharing its files' inodes (files are only ever replaced by rename).
fs::path linked_copy(const fs::path& from, const std::string& tag) {
    fs::path to = scratch_dir(tag) / "mirror";
    fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::create_hard_links | fs::copy_options::copy_symlinks);
    return to;
}

}  // namespace

TEST_CASE("mirror path: a URL's file lies under its host and its decoded path") {
    CHECK(publish::mirror_path("https://pypi.org/simple/six/") == "pypi.org/simple/six/");
    CHECK(publish::mirror_path("https://download.pytorch.org/whl/cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl#sha256=ab") ==
          "download.pytorch.org/whl/cu111/torch-1.9.1+cu111-cp38-cp38-linux_x86_64.whl");
    CHECK(publish::mirror_path("https://user:token@mirror.example:8443/ch/linux-64/x-1-0.conda?raw=1") ==
          "mirror.example:8443/ch/linux-64/x-1-0.conda");
    CHECK(publish::mirror_path("file:///srv/wheels/a-1-py3-none-any.whl") == "file/srv/wheels/a-1-py3-none-any.whl");
    CHECK_THROWS_AS(publish::mirror_path("https://evil.example/a/%2E%2E/%2E%2E/etc/passwd"), InputError);
    CHECK_THROWS_AS(publish::mirror_path("https://evil.example/a//b.whl"), InputError);
    CHECK(publish::url_origin("https://user:pw@pypi.org/simple/six/") == "https://pypi.org");
}

TEST_CASE("index pages: one page per channel subdir, project and find-links page, noarch always there, the same bytes each time") {
    publish::MirroredFile conda;
    conda.kind = Ecosystem::conda;
    conda.url = "https://conda.anaconda.org/conda-forge/linux-64/zlib-1.2.13-h0.conda";
    conda.path = publish::mirror_path(conda.url);
    conda.channel = "https://conda.anaconda.org/conda-forge";
    conda.subdir = "linux-64";
    conda.record = {{"name", "zlib"}, {"version", "1.2.13"}, {"build", "h0"}};
    publish::MirroredFile wheel;
    wheel.kind = Ecosystem::pypi;
    wheel.url = "https://files.pythonhosted.org/packages/ab/cd/six-1.16.0-py2.py3-none-any.whl";
    wheel.path = publish::mirror_path(wheel.url);
    wheel.name = "six";
    wheel.version = "1.16.0";
    wheel.sha256 = std::string(64, 'a');
    wheel.channel = "https://pypi.org/simple/six/";
    wheel.metadata_sha256 = std::string(64, 'b');
    wheel.requires_python = ">=2.7, !=3.0.*";
    publish::MirroredFile torch = wheel;
    torch.url = "https://download.pytorch.org/whl/cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl";
    torch.path = publish::mirror_path(torch.url);
    torch.channel = "https://download.pytorch.org/whl/torch_stable.html";
    torch.find_links = true;
    auto pages = publish::index_pages({wheel, conda, torch});
    std::vector<std::string> paths;
    for (const auto& p : pages) paths.push_back(p.path);
    CHECK(paths == std::vector<std::string>{"conda.anaconda.org/conda-forge/linux-64/repodata.json",
                                            "conda.anaconda.org/conda-forge/noarch/repodata.json",
                                            "download.pytorch.org/whl/torch_stable.html",
                                            "pypi.org/simple/index.html",
                                            "pypi.org/simple/index.json",
                                            "pypi.org/simple/six/index.html",
                                            "pypi.org/simple/six/index.json"});
    auto repodata = nlohmann::json::parse(pages[0].text);
    CHECK(repodata["packages.conda"]["zlib-1.2.13-h0.conda"]["name"] == "zlib");
    CHECK(repodata["packages"].empty());
    CHECK(nlohmann::json::parse(pages[1].text)["info"]["subdir"] == "noarch");
    CHECK(pages[2].text.find("href=\"cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl#sha256=") != std::string::npos);
    CHECK(pages[5].text.find("href=\"../../../files.pythonhosted.org/packages/ab/cd/six-1.16.0-py2.py3-none-any.whl#sha256=") !=
          std::string::npos);
    CHECK(pages[5].text.find("data-requires-python=\"&gt;=2.7, !=3.0.*\"") != std::string::npos);
    auto records = fetch::parse_simple_html(pages[5].text, "https://mirror.example/pypi.org/simple/six/", "six");
    REQUIRE(records.size() == 1);
    CHECK(records[0].url == "https://mirror.example/files.pythonhosted.org/packages/ab/cd/six-1.16.0-py2.py3-none-any.whl");
    CHECK(records[0].metadata_url == records[0].url + ".metadata");
    auto again = publish::index_pages({torch, conda, wheel});
    for (size_t i = 0; i < pages.size(); ++i) CHECK(again[i].text == pages[i].text);
}

TEST_CASE("the mirror holds every file of the lock, each matching the lock's sha256, and a mirrors file for every origin") {
    const auto& f = fixture();
    Lock lock = bev_lock();
    std::set<std::string> origins;
    for (const auto& p : lock.packages) {
        origins.insert(publish::url_origin(p.url));
        if (p.kind == Ecosystem::source) {
            fs::path repo = f.mirror / publish::mirror_path(p.url);
            auto r = run_program({"git", "--git-dir=" + repo.string(), "cat-file", "-e", p.rev + "^{commit}"});
            CHECK_MESSAGE(r.exit_code == 0, p.name << " " << p.rev << " is not in " << repo);
            CHECK(fs::exists(repo / "info" / "refs"));   // served by a static server too (git's dumb protocol)
            continue;
        }
        fs::path file = f.mirror / publish::mirror_path(p.url);
        REQUIRE_MESSAGE(fs::is_regular_file(file), p.name << ": " << file);
        CHECK_MESSAGE(install::sha256_of_file(file) == p.sha256, p.name);
    }
    auto rules = fetch::read_mirrors_file((f.mirror / "mirrors.yaml").string());
    std::set<std::string> mapped;
    for (const auto& r : rules) {
        mapped.insert(r.from);
        CHECK(fetch::is_file_url(r.to));
        CHECK(fs::is_directory(fetch::file_url_path(r.to)));
    }
    CHECK(mapped == origins);
}

TEST_CASE("conda packages: a channel per original channel, repodata.json holding the packages' own index.json records") {
    const auto& f = fixture();
    Lock lock = bev_lock();
    const auto& python = package(lock, "python");
    fs::path channel = f.mirror / publish::mirror_path(python.channel);
    auto repodata = nlohmann::json::parse(read_file(channel / python.subdir / "repodata.json"));
    std::string name = python.url.substr(python.url.rfind('/') + 1);
    bool conda_format = name.size() > 6 && name.substr(name.size() - 6) == ".conda";
    const auto& record = repodata[conda_format ? "packages.conda" : "packages"][name];
    REQUIRE(record.is_object());
    CHECK(record["name"] == "python");
    CHECK(record["version"] == python.version);
    CHECK(record["build"] == python.build);
    CHECK(record["sha256"] == python.sha256);
    CHECK(record["md5"] == python.md5);
    CHECK(record["size"] == python.size);
    CHECK(record["depends"].size() == python.depends.size());
    CHECK(repodata["info"]["subdir"] == python.subdir);
    // Only what the locks need: one record per locked package of that channel and subdir.
    size_t locked = 0;
    for (const auto& p : lock.packages)
        if (p.kind == Ecosystem::conda && p.channel == python.channel && p.subdir == python.subdir) ++locked;
    CHECK(repodata["packages"].size() + repodata["packages.conda"].size() == locked);
    CHECK(fs::exists(channel / "noarch" / "repodata.json"));
}

TEST_CASE("wheels and sdists: PEP 503 and PEP 691 pages with PEP 658 metadata, read back by envlock's own readers") {
    const auto& f = fixture();
    Lock lock = bev_lock();
    const auto& six = package(lock, "six");
    REQUIRE(six.channel.back() == '/');
    fs::path page = (f.mirror / publish::mirror_path(six.channel)).parent_path();   // ".../simple/six/" names the folder
    std::string page_url = fetch::path_to_file_url(page.string()) + "/";
    auto html = fetch::parse_simple_html(read_file(page / "index.html"), page_url, "six");
    REQUIRE(html.size() == 1);
    CHECK(html[0].sha256 == six.sha256);
    CHECK(html[0].version == six.version);
    REQUIRE(!html[0].metadata_url.empty());
    // The advertised metadata is the wheel's own METADATA, with the sha256 the page gives.
    fs::path wheel = f.mirror / publish::mirror_path(six.url);
    std::string metadata = read_file(wheel.string() + ".metadata");
    CHECK(metadata.find("Name: six") != std::string::npos);
    CHECK(read_file(page / "index.html").find("data-core-metadata=\"sha256=" + sha256_hex(metadata) + "\"") != std::string::npos);
    auto json = fetch::parse_simple_json(read_file(page / "index.json"), page_url, "six");
    REQUIRE(json.size() == 1);
    CHECK(json[0].sha256 == six.sha256);
    CHECK(json[0].url == html[0].url);
    CHECK(fs::exists(fetch::file_url_path(json[0].url)));
    // The index's root lists the project.
    CHECK(read_file(page.parent_path() / "index.html").find("href=\"six/\"") != std::string::npos);
    // An sdist is listed too (no metadata file: its PKG-INFO is not a wheel's METADATA).
    const auto& future = package(lock, "future");
    fs::path sdist_page = (f.mirror / publish::mirror_path(future.channel)).parent_path();
    auto sdists = fetch::parse_simple_html(read_file(sdist_page / "index.html"), fetch::path_to_file_url(sdist_page.string()) + "/", "future");
    REQUIRE(sdists.size() == 1);
    CHECK(sdists[0].sha256 == future.sha256);
    CHECK(sdists[0].metadata_url.empty());
}

TEST_CASE("find-links pages list the files that came from them, with relative links that resolve inside the mirror") {
    const auto& f = fixture();
    Lock lock = bev_lock();
    const auto& torch = package(lock, "torch");
    const auto& mmcv = package(lock, "mmcv-full");
    for (const auto* p : {&torch, &mmcv}) {
        fs::path page = f.mirror / publish::mirror_path(p->channel);
        if (p->channel.back() == '/') page /= "index.html";
        REQUIRE_MESSAGE(fs::is_regular_file(page), page);
        auto records = fetch::parse_find_links(read_file(page), fetch::path_to_file_url(page.string()), p->name);
        REQUIRE(records.size() == 1);
        CHECK(records[0].sha256 == p->sha256);
        CHECK(records[0].version == p->version);
        CHECK(fs::is_regular_file(fetch::file_url_path(records[0].url)));
    }
}

TEST_CASE("install --offline with the mirror folder as the only source: the BEVFormer env is complete") {
    const auto& f = fixture();
    fs::path work = scratch_dir("lock-mirror-install");
    fs::path prefix = work / "env";
    without_demo_mirror([&] {
        auto r = run_envlock({"install", f.lock.string(), "--prefix", prefix.string(), "--cache-dir", (work / "cache").string(),
                              "--offline", "--mirrors-file", (f.mirror / "mirrors.yaml").string()});
        REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    });
    Lock lock = bev_lock();
    int conda = 0;
    for (const auto& e : fs::directory_iterator(prefix / "conda-meta"))
        if (e.path().extension() == ".json") ++conda;
    CHECK(conda == std::count_if(lock.packages.begin(), lock.packages.end(), [](const auto& p) { return p.kind == Ecosystem::conda; }));
    fs::path site = prefix / "lib" / "python3.8" / "site-packages";
    CHECK(fs::exists(site / "torch-1.9.1+cu111.dist-info" / "RECORD"));
    CHECK(fs::exists(site / "mmcv_full-1.4.0.dist-info" / "RECORD"));
    CHECK(fs::exists(prefix / "src" / "mmdet3d"));
    auto head = run_program({"git", "-C", (prefix / "src" / "mmdet3d").string(), "rev-parse", "HEAD"});
    CHECK(head.out.substr(0, 40) == package(lock, "mmdet3d").rev);
    auto r = run_envlock({"run", "--prefix", prefix.string(), "--lock", f.lock.string(), "--offline", "--", "python", "-c",
                          "import torch, mmcv, mmdet, mmdet3d; print('imported')"});
    CHECK_MESSAGE(r.exit_code == 0, said(r));
    CHECK(r.out.find("imported") != std::string::npos);
}

TEST_CASE("--base-url: the folder served by a static HTTP server installs the lock, git sources by git's dumb protocol") {
    const auto& f = fixture();
    fs::path mirror = linked_copy(f.mirror, "lock-mirror-http");
    HttpServer server(mirror.string());
    auto r = run_envlock({"mirror", f.lock.string(), mirror.string(), "--cache-dir", f.cache.string(), "--base-url", server.url() + "/", "-q"},
                         {"ENVLOCK_MIRRORS=" + f.demo_mirrors});
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    CHECK(read_file(mirror / "mirrors.yaml").find("https://pypi.org: " + server.url() + "/pypi.org\n") != std::string::npos);
    fs::path work = scratch_dir("lock-mirror-http-install");
    without_demo_mirror([&] {
        r = run_envlock({"install", f.lock.string(), "--prefix", (work / "env").string(), "--cache-dir", (work / "cache").string(),
                         "--mirrors-file", (mirror / "mirrors.yaml").string()});
    });
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    Lock lock = bev_lock();
    const auto& torch = package(lock, "torch");
    CHECK(!server.requests_for("/" + publish::mirror_path(torch.url)).empty());
    const auto& mmdet3d = package(lock, "mmdet3d");
    CHECK(!server.requests_for("/" + publish::mirror_path(mmdet3d.url) + "/info/refs").empty());
    auto head = run_program({"git", "-C", (work / "env" / "src" / "mmdet3d").string(), "rev-parse", "HEAD"});
    CHECK(head.out.substr(0, 40) == mmdet3d.rev);
}

TEST_CASE("a file missing from the mirror: install --offline fails naming the file, its package and its lock line (exit 3)") {
    const auto& f = fixture();
    fs::path mirror = linked_copy(f.mirror, "lock-mirror-missing");
    Lock lock = bev_lock();
    const auto& six = package(lock, "six");
    fs::remove(mirror / publish::mirror_path(six.url));
    fs::path work = scratch_dir("lock-mirror-missing-install");
    RunResult r;
    without_demo_mirror([&] {
        r = run_envlock({"install", f.lock.string(), "--prefix", (work / "env").string(), "--cache-dir", (work / "cache").string(),
                         "--offline", "--mirrors-file", (mirror / "mirrors.yaml").string()});
    });
    CHECK(r.exit_code == 3);
    std::string file = six.url.substr(six.url.rfind('/') + 1);
    CHECK_MESSAGE(r.err.find(file) != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find(f.lock.string() + ":" + std::to_string(six.line) + ": six " + six.version) != std::string::npos, r.err);
    CHECK(!fs::exists(work / "env" / "conda-meta"));
}

TEST_CASE("without a mirror for a file, --offline names it and fetches nothing") {
    const auto& f = fixture();
    fs::path work = scratch_dir("lock-mirror-no-rule");
    // Only the conda channel is mapped: the wheels have no local source.
    write_file(work / "mirrors.yaml", "mirrors:\n  https://conda.anaconda.org: " + (f.mirror / "conda.anaconda.org").string() + "\n");
    auto r = run_envlock({"install", f.lock.string(), "--prefix", (work / "env").string(), "--cache-dir", (work / "cache").string(),
                          "--offline", "--mirrors-file", (work / "mirrors.yaml").string()});
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.err.find("offline, and these files are not downloaded (nor in a local mirror)") != std::string::npos, r.err);
    CHECK(r.err.find("https://pypi.org/pypi/packages/six/") != std::string::npos);
}

TEST_CASE("a corrupted source file is refused by its sha256: nothing of it reaches the mirror") {
    const auto& f = fixture();
    fs::path demo = linked_copy(f.demo, "lock-mirror-corrupt");
    Lock lock = bev_lock();
    const auto& six = package(lock, "six");
    // six's file in the copy of the demo mirror: replaced (not written through the shared inode).
    fs::path source = demo / "pypi" / "packages" / "six" / six.url.substr(six.url.rfind('/') + 1);
    REQUIRE(fs::exists(source));
    std::string bytes = read_file(source);
    bytes[bytes.size() / 2] ^= 0x20;
    fs::remove(source);
    write_file(source, bytes);
    fs::path work = scratch_dir("lock-mirror-corrupt-run");
    auto r = run_envlock({"mirror", f.lock.string(), (work / "mirror").string(), "--cache-dir", (work / "cache").string()},
                         {"ENVLOCK_MIRRORS=" + (demo / "mirrors.yaml").string()});
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.err.find("sha256") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find(f.lock.string() + ":" + std::to_string(six.line) + ": six") != std::string::npos, r.err);
    CHECK(!fs::exists(work / "mirror" / publish::mirror_path(six.url)));
}

TEST_CASE("a cached file damaged since it was verified is fetched again, never copied into the mirror") {
    const auto& f = fixture();
    fs::path work = scratch_dir("lock-mirror-damaged-cache");
    fs::path cache = work / "cache";
    Lock lock = bev_lock();
    const auto& six = package(lock, "six");
    auto r = run_envlock({"mirror", f.lock.string(), (work / "a").string(), "--cache-dir", cache.string()},
                         {"ENVLOCK_MIRRORS=" + f.demo_mirrors});
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    fs::path cached = cache / "pkgs" / six.sha256 / six.url.substr(six.url.rfind('/') + 1);
    REQUIRE(fs::exists(cached));
    fs::remove(cached);   // not through the inode the first mirror folder shares
    write_file(cached, "damaged");
    r = run_envlock({"mirror", f.lock.string(), (work / "b").string(), "--cache-dir", cache.string()}, {"ENVLOCK_MIRRORS=" + f.demo_mirrors});
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    CHECK(install::sha256_of_file(work / "b" / publish::mirror_path(six.url)) == six.sha256);
    CHECK(install::sha256_of_file(cached) == six.sha256);
}

TEST_CASE("--offline clones a git source only from a local folder: one the mirrors file does not map is named") {
    const auto& f = fixture();
    fs::path work = scratch_dir("lock-mirror-git-offline");
    std::string rules = "mirrors:\n";
    for (const auto& host : {"conda.anaconda.org", "download.openmmlab.com", "download.pytorch.org", "pypi.org"})
        rules += "  https://" + std::string(host) + ": " + fetch::path_to_file_url((f.mirror / host).string()) + "\n";
    write_file(work / "mirrors.yaml", rules);   // everything but github.com
    auto r = run_envlock({"install", f.lock.string(), "--prefix", (work / "env").string(), "--cache-dir", (work / "cache").string(),
                          "--offline", "--mirrors-file", (work / "mirrors.yaml").string()});
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.err.find("offline, and the git source https://github.com/") != std::string::npos, r.err);
    CHECK(!fs::exists(work / "env" / "conda-meta"));
}

TEST_CASE("--with-builds: the built wheels of the lock's sources, keyed as install keys them, spare a node the compile") {
    const auto& f = fixture();
    fs::path work = scratch_dir("lock-mirror-builds");
    // A machine that built the sources once (its cache holds <cache>/built/<key>) ... into the
    // prefix every node uses (the demo's stand-in nvcc cannot run, so the key names its path
    // in the env instead of its --version; a real nvcc's key is the same under any prefix).
    const fs::path prefix = work / "env";
    auto r = run_envlock({"install", f.lock.string(), "--prefix", prefix.string(), "--cache-dir", (work / "cache").string()},
                         {"ENVLOCK_MIRRORS=" + f.demo_mirrors});
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    fs::remove_all(prefix);
    r = run_envlock({"mirror", f.lock.string(), (work / "mirror").string(), "--cache-dir", (work / "cache").string(), "--with-builds", "--json"},
                    {"ENVLOCK_MIRRORS=" + f.demo_mirrors});
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    auto summary = nlohmann::json::parse(r.out);
    CHECK(summary["builds-missing"].empty());
    Lock lock = bev_lock();
    const auto& mmdet3d = package(lock, "mmdet3d");
    bool found = false;
    for (const auto& e : fs::directory_iterator(work / "mirror" / "built")) {
        std::string key = read_file(e.path() / "key.txt");
        if (key.rfind("source: git " + mmdet3d.url + " " + mmdet3d.rev, 0) == 0) found = true;
        CHECK(fs::is_directory(e.path() / "tree"));
    }
    CHECK(found);
    CHECK(summary["builds"].get<size_t>() == static_cast<size_t>(std::distance(fs::directory_iterator(work / "mirror" / "built"), fs::directory_iterator())));
    // ... and a node that takes them into its cache links them instead of building.
    fs::create_directories(work / "node-cache");
    fs::copy(work / "mirror" / "built", work / "node-cache" / "built", fs::copy_options::recursive);
    without_demo_mirror([&] {
        r = run_envlock({"-v", "install", f.lock.string(), "--prefix", prefix.string(), "--cache-dir", (work / "node-cache").string(),
                         "--offline", "--mirrors-file", (work / "mirror" / "mirrors.yaml").string()});
    });
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    CHECK_MESSAGE(r.err.find("linked mmdet3d " + mmdet3d.version + " built before") != std::string::npos, r.err);
    CHECK(r.err.find("built mmdet3d") == std::string::npos);
}

TEST_CASE("a re-run adds what a new lock needs and removes nothing; --prune removes what no given lock needs") {
    const auto& f = fixture();
    fs::path work = scratch_dir("lock-mirror-prune");
    // A second, small lock on the same demo mirror: conda python and one wheel.
    write_file(work / "small" / "spec.yaml",
               "spec:\n  name: small\n  channels: [conda-forge]\n  requirements:\n    - {conda: python=3.8}\n    - {pypi: six==1.16.0}\n"
               "    - {pypi: yapf==0.40.1}\n");
    auto r = run_envlock({"resolve", (work / "small" / "spec.yaml").string(), "-o", (work / "small" / "envlock.yaml").string(), "--gpu",
                          "RTX 3090", "--driver", "470.82.01", "--cache-dir", f.cache.string()},
                         {"ENVLOCK_MIRRORS=" + f.demo_mirrors});
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    const std::string small = (work / "small" / "envlock.yaml").string();
    fs::path mirror = linked_copy(f.mirror, "lock-mirror-prune-dir");
    const auto before = files_under(mirror);
    // The same lock again: nothing to copy, and every page the same bytes.
    r = run_envlock({"mirror", f.lock.string(), mirror.string(), "--cache-dir", f.cache.string(), "--json"},
                    {"ENVLOCK_MIRRORS=" + f.demo_mirrors});
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    auto again = nlohmann::json::parse(r.out);
    CHECK(again["files-added"] == 0);
    CHECK(again["git-added"] == 0);
    for (const auto& p : before)
        if (p.size() > 5 && (p.substr(p.size() - 5) == ".html" || p.substr(p.size() - 5) == ".json"))
            CHECK_MESSAGE(read_file(mirror / p) == read_file(f.mirror / p), p);

    r = run_envlock({"mirror", small, mirror.string(), "--cache-dir", f.cache.string(), "--json"}, {"ENVLOCK_MIRRORS=" + f.demo_mirrors});
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    auto added = nlohmann::json::parse(r.out);
    const auto after = files_under(mirror);
    CHECK(std::includes(after.begin(), after.end(), before.begin(), before.end()));   // nothing removed
    Lock small_lock = read_lock(read_file(small), small);
    const auto& yapf = package(small_lock, "yapf");
    CHECK(fs::exists(mirror / publish::mirror_path(yapf.url)));
    CHECK(added["files-added"].get<int>() >= 1);
    // The pages list both locks' files: BEVFormer's yapf 0.40.1 and the small lock's.
    fs::path yapf_page = (mirror / publish::mirror_path(yapf.channel)).parent_path() / "index.html";
    auto listed = fetch::parse_simple_html(read_file(yapf_page), fetch::path_to_file_url(yapf_page.parent_path().string()) + "/");
    CHECK(std::any_of(listed.begin(), listed.end(), [&](const auto& x) { return x.sha256 == yapf.sha256; }));

    r = run_envlock({"mirror", small, mirror.string(), "--cache-dir", f.cache.string(), "--prune", "--json"},
                    {"ENVLOCK_MIRRORS=" + f.demo_mirrors});
    REQUIRE_MESSAGE(r.exit_code == 0, said(r));
    auto pruned = nlohmann::json::parse(r.out);
    CHECK(pruned["files-added"] == 0);
    CHECK(pruned["removed"].get<int>() > 0);
    Lock lock = bev_lock();
    CHECK(!fs::exists(mirror / publish::mirror_path(package(lock, "torch").url)));
    CHECK(!fs::exists(mirror / publish::mirror_path(package(lock, "mmdet3d").url)));   // its repository
    for (const auto& p : small_lock.packages) CHECK_MESSAGE(fs::exists(mirror / publish::mirror_path(p.url)), p.name);
    // The conda channel lists only the small lock's records now.
    const auto& python = package(small_lock, "python");
    auto repodata = nlohmann::json::parse(read_file(mirror / publish::mirror_path(python.channel) / python.subdir / "repodata.json"));
    size_t conda = std::count_if(small_lock.packages.begin(), small_lock.packages.end(), [&](const auto& p) {
        return p.kind == Ecosystem::conda && p.subdir == python.subdir;
    });
    CHECK(repodata["packages"].size() + repodata["packages.conda"].size() == conda);
    // The original folder (sharing inodes with this copy) is untouched.
    CHECK(fs::exists(f.mirror / publish::mirror_path(package(lock, "torch").url)));
}

TEST_CASE("pip installs a wheel from the mirror's simple index (file://), checking the sha256 the page gives") {
    const auto& f = fixture();
    auto pip = run_program({"/usr/bin/python3", "-m", "pip", "--version"});
    if (pip.exit_code != 0) {
        MESSAGE("skipped: Debian's pip (python3-pip) is not installed");
        return;
    }
    Lock lock = bev_lock();
    const auto& six = package(lock, "six");
    fs::path index = (f.mirror / publish::mirror_path(six.channel)).parent_path().parent_path();   // ".../simple"
    fs::path work = scratch_dir("lock-mirror-pip");
    auto r = run_program({"/usr/bin/python3", "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--disable-pip-version-check",
                          "--isolated", "--only-binary", ":all:", "-d", work.string(), "--index-url",
                          fetch::path_to_file_url(index.string()), "six==" + six.version},
                         {"PIP_CONFIG_FILE=/dev/null"});   // no machine or user configuration: this index only
    REQUIRE_MESSAGE(r.exit_code == 0, "stdout:\n" << r.out << "\nstderr:\n" << r.err);
    CHECK(install::sha256_of_file(work / six.url.substr(six.url.rfind('/') + 1)) == six.sha256);
}
