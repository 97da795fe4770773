// Lazy candidates (DESIGN.md "Meeting the real index"): a project's versions are read in
// windows bounded by what the requirements on it allow, newest first, ordered by what the page
// alone tells (Requires-Python, tags, yanked), and widened in rounds only where a solve reached
// an unread version. The lock is the one the complete problem gives (`--all-versions`), byte
// for byte, on small PyPI indexes shaped like the cases the live index showed, served on
// loopback as PEP 503 pages with PEP 658 metadata files; and on every built-in recipe of the
// demo mirror.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "resolver/lock/sha256.hpp"
#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

struct Release {
    std::string project, version;
    std::vector<std::string> requires_dist;
    std::string requires_python;
    std::string tags = "py3-none-any";
};

// A PEP 503 index: one page per project, each wheel with its metadata file (PEP 658), as
// files.pythonhosted.org lays them out. The wheels themselves are never fetched by a resolve.
void write_index(const fs::path& root, const std::vector<Release>& releases) {
    std::map<std::string, std::string> pages;
    for (const auto& r : releases) {
        std::string wheel = r.project + "-" + r.version + "-" + r.tags + ".whl";
        std::string metadata = "Metadata-Version: 2.1\nName: " + r.project + "\nVersion: " + r.version + "\n";
        if (!r.requires_python.empty()) metadata += "Requires-Python: " + r.requires_python + "\n";
        for (const auto& d : r.requires_dist) metadata += "Requires-Dist: " + d + "\n";
        write_file(root / "files" / (wheel + ".metadata"), metadata);
        std::string python = r.requires_python;
        for (std::string::size_type at; (at = python.find('>')) != std::string::npos;) python.replace(at, 1, "&gt;");
        for (std::string::size_type at; (at = python.find('<')) != std::string::npos;) python.replace(at, 1, "&lt;");
        pages[r.project] += "<a href=\"../../files/" + wheel + "#sha256=" + envlock::sha256_hex(wheel) + "\"" +
                            (python.empty() ? "" : " data-requires-python=\"" + python + "\"") + " data-dist-info-metadata=\"sha256=" +
                            envlock::sha256_hex(metadata) + "\">" + wheel + "</a><br/>\n";
    }
    for (const auto& [project, links] : pages)
        write_file(root / "simple" / project / "index.html", "<!DOCTYPE html>\n<html><body>\n" + links + "</body></html>\n");
}

struct Resolved {
    int exit_code = -1;
    std::string lock, err;
};

Resolved resolve_spec(const fs::path& dir, const std::string& index_url, const std::string& requirements,
                      const std::vector<std::string>& extra = {}) {
    write_file(dir / "spec.yaml", "name: lazy\npython: \"3.10\"\nindexes: [" + index_url + "]\nrequirements: [" + requirements + "]\n");
    std::vector<std::string> args{"resolve", (dir / "spec.yaml").string(), "-o", (dir / "envlock.yaml").string(),
                                  "--cache-dir", (dir / "cache").string(), "--platform", "linux-64", "--glibc", "2.31"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_envlock(args);
    Resolved out{r.exit_code, fs::exists(dir / "envlock.yaml") ? read_file(dir / "envlock.yaml") : "", r.err};
    return out;
}

// The metadata files a resolve asked the server for.
std::vector<std::string> metadata_read(const HttpServer& server) {
    std::vector<std::string> out;
    for (const auto& r : server.requests())
        if (r.path.size() > 9 && r.path.compare(r.path.size() - 9, 9, ".metadata") == 0) out.push_back(r.path.substr(r.path.rfind('/') + 1));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// Resolves lazily, then completely (a fresh cache each), and checks both give the same bytes.
Resolved lazy_equals_complete(const std::string& tag, const std::vector<Release>& releases, const std::string& requirements,
                              std::vector<std::string>* lazy_reads = nullptr) {
    fs::path dir = temp_dir("lazy-" + tag);
    write_index(dir / "index", releases);
    HttpServer server((dir / "index").string());
    auto lazy = resolve_spec(dir / "lazy", server.url() + "/simple", requirements);
    if (lazy_reads) *lazy_reads = metadata_read(server);
    auto complete = resolve_spec(dir / "complete", server.url() + "/simple", requirements, {"--all-versions"});
    CHECK(lazy.exit_code == complete.exit_code);
    CHECK(lazy.lock == complete.lock);
    return lazy;
}

std::vector<Release> many(const std::string& project, int first, int last, std::vector<std::string> requires_dist = {},
                          std::string requires_python = "") {
    std::vector<Release> out;
    for (int minor = first; minor <= last; ++minor)
        out.push_back({project, "1." + std::to_string(minor), requires_dist, requires_python});
    return out;
}

}  // namespace

TEST_CASE("an exact pin far below a project's newest releases is read directly (torch 2.1.2's nvidia-cudnn-cu12==8.9.2.26)") {
    std::vector<Release> releases = many("cudnn", 0, 69);
    releases.push_back({"torchlike", "2.1.2", {"cudnn==1.2"}});
    std::vector<std::string> reads;
    auto r = lazy_equals_complete("pin", releases, "torchlike==2.1.2", &reads);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(locked_version(r.lock, "cudnn") == "1.2");
    // The pin's one version, not the newest 20 (which left 1.2 out: a false "unsatisfiable").
    CHECK(reads == std::vector<std::string>{"cudnn-1.2-py3-none-any.whl.metadata", "torchlike-2.1.2-py3-none-any.whl.metadata"});
}

TEST_CASE("versions whose Requires-Python the target's Python fails are read last (numpy's newest all need 3.11 on python 3.10)") {
    std::vector<Release> releases = many("numpylike", 0, 9, {}, ">=3.8");
    auto newer = many("numpylike", 10, 40, {}, ">=3.11");
    releases.insert(releases.end(), newer.begin(), newer.end());
    releases.push_back({"scipylike", "1.11.3", {"numpylike>=1.3,<1.28"}, ">=3.9"});
    std::vector<std::string> reads;
    auto r = lazy_equals_complete("python", releases, "scipylike==1.11.3", &reads);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(locked_version(r.lock, "numpylike") == "1.9");
    CHECK(reads.size() <= 4);   // scipylike and the window of two that fit; none of the 31 that need 3.11
    CHECK(std::none_of(reads.begin(), reads.end(), [](const std::string& f) { return f.find("numpylike-1.2") != std::string::npos; }));
}

TEST_CASE("a window whose releases all fail widens (doubling) until one fits, and the answer is the complete problem's") {
    // The newest 7 releases need a project that has no such version; 1.2 is the newest that installs.
    std::vector<Release> releases = many("p", 0, 2);
    auto broken = many("p", 3, 9, {"z>=2"});
    releases.insert(releases.end(), broken.begin(), broken.end());
    releases.push_back({"z", "1.0", {}});
    auto r = lazy_equals_complete("widen", releases, "p");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(locked_version(r.lock, "p") == "1.2");
}

TEST_CASE("a newer release passed over for an unread version of its requirement is read further (the answer never depends on windows)") {
    // a 2.0 needs b<1.5; b's window for that is 1.4 and 1.3, both of which c==1.0 forbids. The
    // complete problem takes a 2.0 with b 1.2, not a 1.0: the window of b<1.5 has to grow.
    std::vector<Release> releases = many("b", 0, 9);
    releases.push_back({"a", "1.0", {}});
    releases.push_back({"a", "2.0", {"b<1.5"}});
    releases.push_back({"c", "1.0", {"b!=1.4,!=1.3"}});
    auto r = lazy_equals_complete("passed-over", releases, "a, c==1.0");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(locked_version(r.lock, "a") == "2.0");
    CHECK(locked_version(r.lock, "b") == "1.2");
}

TEST_CASE("the lines an extra turns on are read too (jupyter-events needs jsonschema[format-nongpl], which needs fqdn)") {
    // Not reading fqdn made the newest jupyter-events look unsatisfiable, and the book case went
    // back through hundreds of old jupyter releases to avoid it.
    std::vector<Release> releases{{"events", "0.4.0", {"schema>=3"}},
                                  {"events", "0.12.1", {"schema[format-nongpl]>=4.18"}},
                                  {"schema", "4.25.1", {"attrs", "fqdn ; extra == \"format-nongpl\"", "idna ; extra == \"format\""}},
                                  {"attrs", "25.4.0", {}},
                                  {"fqdn", "1.5.1", {}},
                                  {"idna", "3.10", {}}};
    std::vector<std::string> reads;
    auto r = lazy_equals_complete("extras", releases, "events", &reads);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(locked_version(r.lock, "events") == "0.12.1");
    CHECK(locked_version(r.lock, "fqdn") == "1.5.1");
    // Only the extra asked for: idna is another extra's.
    CHECK(std::none_of(reads.begin(), reads.end(), [](const std::string& f) { return f.rfind("idna-", 0) == 0; }));
}

TEST_CASE("a release's import gate is read like its Requires-Dist (mmdet 3.3.0 asserts mmcv>=2.0.0rc4,<2.2.0 and lists no mmcv)") {
    // Unread, mmcv made the openmmlab2 case of the live index "unsatisfiable": the solve enforces
    // the gate (knowledge base) on a project the closure never reached.
    std::vector<Release> releases{{"mmdet", "3.3.0", {"numpy"}},
                                  {"mmengine", "0.10.3", {"numpy"}},
                                  {"mmcv", "1.7.2", {}},
                                  {"mmcv", "2.1.0", {"mmengine>=0.3.0", "numpy"}},
                                  {"mmcv", "2.2.0", {"mmengine>=0.3.0", "numpy"}},
                                  {"numpy", "1.26.4", {}}};
    std::vector<std::string> reads;
    auto r = lazy_equals_complete("gate", releases, "mmdet==3.3.0, mmengine==0.10.3", &reads);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(locked_version(r.lock, "mmcv") == "2.1.0");
    CHECK(r.lock.find("requested-by: [\"mmdet 3.3.0: mmcv>=2.0.0rc4,<2.2.0\"]") != std::string::npos);
    CHECK(std::find(reads.begin(), reads.end(), "mmcv-2.1.0-py3-none-any.whl.metadata") != reads.end());
}

TEST_CASE("a name without a specifier reads its newest final releases, not the pre-releases above them (jupyterlab 4.7.0a2)") {
    // Reading the two alphas made the first solve take the stand-in and a second round read further.
    std::vector<Release> releases = many("lab", 0, 6);
    releases.push_back({"lab", "1.7.0a1", {}});
    releases.push_back({"lab", "1.7.0a2", {}});
    std::vector<std::string> reads;
    auto r = lazy_equals_complete("prerelease", releases, "lab", &reads);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(locked_version(r.lock, "lab") == "1.6");
    CHECK(reads == std::vector<std::string>{"lab-1.5-py3-none-any.whl.metadata", "lab-1.6-py3-none-any.whl.metadata"});
}

TEST_CASE("unsatisfiable is said only when no unread version could satisfy, and it is the complete problem's answer") {
    std::vector<Release> releases = many("q", 0, 30, {"r>=5"});
    releases.push_back({"r", "1.0", {}});
    auto r = lazy_equals_complete("unsat", releases, "q");
    CHECK(r.exit_code == 1);
    CHECK(r.lock.empty());
}

TEST_CASE("every built-in recipe on the demo mirror: the lazy lock is the complete problem's lock, byte for byte") {
    const auto target = target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4");
    for (const char* recipe : {"BEVFormer", "Deformable-DETR", "EchoFusion", "Mask2Former", "detectron2", "mmdetection3d"}) {
        CAPTURE(recipe);
        fs::path dir = temp_dir(std::string("lazy-recipe-") + recipe);
        write_file(dir / "target.yaml", target);
        auto lazy = resolve_with({recipe, "-o", (dir / "lazy" / "envlock.yaml").string(), "--target", (dir / "target.yaml").string()}, dir / "l");
        auto complete = resolve_with({recipe, "-o", (dir / "complete" / "envlock.yaml").string(), "--target",
                                      (dir / "target.yaml").string(), "--all-versions"},
                                     dir / "c");
        CHECK(lazy.exit_code == complete.exit_code);
        std::string a = fs::exists(dir / "lazy" / "envlock.yaml") ? read_file(dir / "lazy" / "envlock.yaml") : "";
        std::string b = fs::exists(dir / "complete" / "envlock.yaml") ? read_file(dir / "complete" / "envlock.yaml") : "";
        CHECK(a == b);
        MESSAGE(recipe << ": exit " << lazy.exit_code);
    }
}

TEST_CASE("what the spec alone can refuse is refused before anything is fetched") {
    fs::path dir = temp_dir("refuse-early");
    fs::create_directories(dir / "index");
    HttpServer server((dir / "index").string());
    auto run = [&](const std::string& name, const std::string& spec, const std::vector<std::string>& extra = {}) {
        write_file(dir / name / "spec.yaml", spec);
        std::vector<std::string> args{"resolve", (dir / name / "spec.yaml").string(), "--cache-dir", (dir / "cache").string(),
                                      "--platform", "linux-64", "--glibc", "2.31"};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_envlock(args);
    };
    std::string index = "indexes: [" + server.url() + "/simple]\n";
    SUBCASE("PyPI requirements whose Python no interpreter here meets (a venv spec's Python is chosen, #30)") {
        auto r = run("no-python", "name: x\npython: \">=3.99\"\n" + index + "requirements: [numpy]\n");
        CHECK(r.exit_code == 1);
        CHECK(r.err.find("its PyPI requirements need a Python, and the spec asks for python >=3.99") != std::string::npos);
    }
    SUBCASE("a requirement that reads as neither PEP 508 nor a conda MatchSpec") {
        auto r = run("malformed", "name: x\npython: \"3.10\"\n" + index + "requirements: [\"numpy>>=1,\"]\n");
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("numpy>>=1,") != std::string::npos);
    }
    SUBCASE("an unknown GPU name") {
        auto r = run("gpu", "name: x\npython: \"3.10\"\n" + index + "requirements: [numpy]\n", {"--gpu", "Voodoo 3"});
        CHECK(r.exit_code == 2);
        CHECK(r.err.find("unknown GPU 'Voodoo 3'") != std::string::npos);
    }
    CHECK(server.requests().empty());
}
