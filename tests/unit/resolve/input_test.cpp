// Nothing the user asked for is lost on the way in (issue 14): every requirement is accounted
// for before the solve, over the demo mirror behind a local server. Exit codes as DESIGN.md
// "Errors and safety": 1 no such package or version, 2 unreadable input, 3 unreachable.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>

#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

const std::string kTarget3090 = target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4");

struct Run {
    RunResult run;
    fs::path dir;
    bool wrote() const { return fs::exists(dir / "envlock.yaml"); }
    std::string lock() const { return read_file(dir / "envlock.yaml"); }
};

// `extra` flags go first; a --mirror in them replaces the fixture's rule for the same prefix
// (a prefix given twice is bad input).
RunResult resolve_replacing(std::vector<std::string> args, const fs::path& dir, const std::vector<std::string>& extra) {
    std::vector<std::string> all{"resolve"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), extra.begin(), extra.end());
    auto prefix_of = [](const std::string& rule) { return rule.substr(0, rule.find('=')); };
    std::vector<std::string> replaced;
    for (size_t i = 0; i + 1 < extra.size(); ++i)
        if (extra[i] == "--mirror") replaced.push_back(prefix_of(extra[i + 1]));
    auto flags = mirror_flags(dir / "cache");
    for (size_t i = 0; i < flags.size(); ++i) {
        if (flags[i] == "--mirror" && i + 1 < flags.size() &&
            std::find(replaced.begin(), replaced.end(), prefix_of(flags[i + 1])) != replaced.end()) {
            ++i;
            continue;
        }
        all.push_back(flags[i]);
    }
    return run_envlock(all);
}

Run resolve_spec_text(const std::string& tag, const std::string& body, std::vector<std::string> extra = {}) {
    Run r;
    r.dir = temp_dir(tag);
    write_file(r.dir / "spec.yaml", "spec:\n  name: input\n" + body);
    write_file(r.dir / "target.yaml", kTarget3090);
    r.run = resolve_replacing({(r.dir / "spec.yaml").string(), "--target", (r.dir / "target.yaml").string()}, r.dir, extra);
    return r;
}

// A checkout holding only the given files.
Run resolve_checkout(const std::string& tag, const std::vector<std::pair<std::string, std::string>>& files,
                     std::vector<std::string> extra = {}) {
    Run r;
    r.dir = temp_dir(tag);
    for (const auto& [path, text] : files) write_file(r.dir / "repo" / path, text);
    write_file(r.dir / "target.yaml", kTarget3090);
    std::vector<std::string> args{(r.dir / "repo").string(), "-o", (r.dir / "envlock.yaml").string(), "--target",
                                  (r.dir / "target.yaml").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    r.run = resolve_with(args, r.dir);
    return r;
}

const char* kPy38 = "  python: \"3.8\"\n  requirements:\n    - {conda: python=3.8}\n";

}  // namespace

TEST_CASE("a typo in requirements.txt is exit 1 naming the file:line and the nearest name, and no lock is written") {
    // The README names the Python (without one, resolve refuses before fetching anything).
    auto r = resolve_checkout("typo", {{"requirements.txt", "numpy==1.19.5\nscikit-imagee==0.19.3\n"},
                                       {"README.md", "# x\n\n```bash\nconda create -n x python=3.8 -y\npip install -r requirements.txt\n```\n"}});
    CHECK(r.run.exit_code == 1);
    CHECK(r.run.err.find("requirements.txt:2: scikit-imagee==0.19.3: no index offers scikit-imagee") != std::string::npos);
    CHECK(r.run.err.find("did you mean scikit-image") != std::string::npos);
    CHECK(r.run.err.find("--allow-missing scikit-imagee") != std::string::npos);
    CHECK_FALSE(r.wrote());
}

TEST_CASE("a name no index has, in either ecosystem, is exit 1 naming it") {
    auto pypi = resolve_spec_text("nopypi", std::string(kPy38) + "    - {pypi: nonexistent-pkg, from: \"notes.md:3\"}\n");
    CHECK(pypi.run.exit_code == 1);
    CHECK(pypi.run.err.find("notes.md:3: nonexistent-pkg: no index offers nonexistent-pkg") != std::string::npos);
    CHECK_FALSE(pypi.wrote());

    auto conda = resolve_spec_text("noconda", std::string(kPy38) + "    - {conda: nonexistent-pkg}\n");
    CHECK(conda.run.exit_code == 1);
    CHECK(conda.run.err.find("nonexistent-pkg: no index offers nonexistent-pkg") != std::string::npos);
    CHECK_FALSE(conda.wrote());
}

TEST_CASE("a version no index has is exit 1 listing the versions there are, nearest first") {
    auto r = resolve_spec_text("nover", std::string(kPy38) + "    - {pypi: numpy==1.19.50}\n");
    CHECK(r.run.exit_code == 1);
    CHECK(r.run.err.find("numpy==1.19.50: no version of numpy matches (there are 1.19.5") != std::string::npos);
    CHECK_FALSE(r.wrote());
}

TEST_CASE("a plain-string requirement that parses in neither ecosystem is exit 2 with its line") {
    auto r = resolve_spec_text("plain", "  requirements:\n    - \"torch=>1.9\"\n");
    CHECK(r.run.exit_code == 2);
    CHECK(r.run.err.find("spec.yaml:4") != std::string::npos);
    CHECK_FALSE(r.wrote());
}

TEST_CASE("an unreadable line of a requirements file is exit 2 naming file:line, not a note and a smaller lock") {
    auto r = resolve_checkout("unreadable", {{"requirements.txt", "numpy==1.19.5\ntorch=>1.9\n"}});
    CHECK(r.run.exit_code == 2);
    CHECK(r.run.err.find("requirements.txt:2: \"torch=>1.9\": not a requirement envlock can read") != std::string::npos);
    CHECK_FALSE(r.wrote());
}

TEST_CASE("a PyPI mirror folder that does not exist is exit 3 naming the folder") {
    auto r = resolve_spec_text("nofolder", std::string(kPy38) + "    - {pypi: yapf==0.40.1}\n",
                               {"--mirror", "https://pypi.org/simple=file:///nonexistent/envlock-pypi/simple"});
    CHECK(r.run.exit_code == 3);
    INFO(r.run.err);
    CHECK(r.run.err.find("no such folder /nonexistent/envlock-pypi/simple") != std::string::npos);
    CHECK_FALSE(r.wrote());
}

TEST_CASE("a simple page that is not HTML is exit 2 naming the page, not 'no files'") {
    fs::path index = temp_dir("garbage-index");
    write_file(index / "simple" / "yapf" / "index.html", "garbage garbage garbage\x01\x02 not an index\n");
    auto r = resolve_spec_text("garbage", std::string(kPy38) + "    - {pypi: yapf==0.40.1}\n  indexes: [file://" +
                                              (index / "simple").string() + "]\n");
    CHECK(r.run.exit_code == 2);
    CHECK(r.run.err.find("yapf/: expected a PEP 503 simple page") != std::string::npos);
    CHECK_FALSE(r.wrote());
}

TEST_CASE("--allow-missing NAME goes on without it, says so, and is remembered in the spec; a name the spec lacks is a typo") {
    std::string body = std::string(kPy38) + "    - {pypi: yapf==0.40.1}\n    - {pypi: scikit-imagee==0.19.3, from: \"requirements.txt:2\"}\n";
    auto r = resolve_spec_text("allow", body, {"--allow-missing", "scikit-imagee"});
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    CHECK(r.run.err.find("requirements.txt:2: scikit-imagee==0.19.3: nothing offers it; going on without it") != std::string::npos);
    std::string lock = r.lock();
    CHECK(lock.find("allow-missing: [scikit-imagee]") != std::string::npos);
    CHECK(lock.find("scikit-imagee==0.19.3") != std::string::npos);   // the spec keeps what was asked
    CHECK(locked_version(lock, "yapf") == "0.40.1");
    auto ok = run_envlock({"check", (r.dir / "envlock.yaml").string()});
    CHECK_MESSAGE(ok.exit_code == 0, (ok.out + ok.err));

    auto typo = resolve_spec_text("allowtypo", body, {"--allow-missing", "scikit-imagee", "--allow-missing", "yapff"});
    CHECK(typo.run.exit_code == 2);
    CHECK(typo.run.err.find("--allow-missing yapff: the spec has no requirement of that name (did you mean yapf?)") != std::string::npos);
}

// --- git sources (issue 14, item 2 and 3) ------------------------------------------------------

TEST_CASE("a git source whose remote cannot be reached is not lockable: exit 3 naming it, no 'rev: HEAD' lock") {
    auto r = resolve_spec_text("gitgone", std::string(kPy38) +
                                              "  sources:\n    - {name: ghost, git: https://github.com/nobody/envlock-ghost, rev: v1.0}\n",
                               {"--mirror", "https://github.com/nobody/envlock-ghost=/nonexistent/envlock-ghost"});
    CHECK(r.run.exit_code == 3);
    CHECK(r.run.err.find("git sources that cannot be locked") != std::string::npos);
    CHECK(r.run.err.find("ghost: https://github.com/nobody/envlock-ghost") != std::string::npos);
    CHECK_FALSE(r.wrote());
}

TEST_CASE("a git source is known by the distribution name its setup.py declares, with the requirements its requirements/runtime.txt lists") {
    auto r = resolve_spec_text("gitname", std::string(kPy38) +
                                              "    - {pypi: \"torch>=1.8,<2\"}\n"
                                              "  find-links: [https://download.pytorch.org/whl/torch_stable.html]\n"
                                              "  sources:\n    - {name: mmdetection3d, git: https://github.com/open-mmlab/mmdetection3d, rev: v0.17.1}\n"
                                              "  extensions:\n    - {name: mmdet3d-ops, in: mmdetection3d, build: python setup.py install, "
                                              "import: mmdet3d.ops.voxel.voxel_layer, cuda: true}\n");
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    std::string lock = r.lock();
    CHECK(locked_version(lock, "mmdet3d") == "0.17.1");                 // mmdetection3d's setup.py: name='mmdet3d'
    for (const char* dep : {"nuscenes-devkit", "lyft-dataset-sdk", "plyfile", "tensorboard"}) {
        CAPTURE(dep);
        CHECK(lock.find("    name: \"" + std::string(dep) + "\"") != std::string::npos);
    }
    // The knowledge base's gates and advisories on mmdet3d 0.17 now apply: mmcv-full 1.3.8-1.4.0
    // is required, and its ops need torch < 1.11 (advisory mmdet3d-thc-torch-1.11).
    CHECK(!locked_version(lock, "mmcv-full").empty());
    std::string torch = locked_version(lock, "torch");
    CAPTURE(torch);
    REQUIRE(torch.rfind("1.", 0) == 0);
    CHECK(std::stoi(torch.substr(2, torch.find('.', 2) - 2)) < 11);
}

// --- conda channels (item 4) ---------------------------------------------------------------------

TEST_CASE("channels: [defaults] is conda's pkgs/main then pkgs/r (conda/base/constants.py DEFAULT_CHANNELS_UNIX)") {
    auto r = resolve_spec_text("defaults", "  python: \"3.8\"\n  channels: [defaults]\n  requirements:\n    - {conda: python=3.8}\n"
                                           "    - {conda: numpy=1.19}\n");
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    std::string lock = r.lock();
    CHECK(lock.find("repo.anaconda.com/pkgs/main/linux-64/numpy-1.19.2") != std::string::npos);
    CHECK(lock.find("conda.anaconda.org/conda-forge") == std::string::npos);
}

TEST_CASE("channel::package searches that channel too, though the spec does not list it (conda's Solver._prepare)") {
    auto r = resolve_spec_text("chanpkg", "  python: \"3.8\"\n  channels: [defaults]\n  requirements:\n    - {conda: python=3.8}\n"
                                          "    - {conda: \"intel::intel-aikit-modin\"}\n");
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    CHECK(r.lock().find("conda.anaconda.org/intel/noarch/intel-aikit-modin-") != std::string::npos);
}

// Every built-in recipe resolves on the demo mirror for the README's RTX 3090 (driver 470) and
// an RTX 4090 (driver 525), and its lock passes `check`. EchoFusion's `-c pytorch -c conda-forge`
// puts conda-forge's jpeg 9e above defaults' 9b, which torchvision 0.10.1 needs (jpeg <=9b): it
// resolves under the flexible channel priority its documented `conda install` ran with (conda's
// default), which the recipe says. Nothing the product writes or prints cites ../shared.
TEST_CASE("every built-in recipe resolves on the demo mirror for an RTX 3090 and an RTX 4090, and passes check") {
    const std::vector<std::pair<std::string, std::string>> machines = {
        {"3090", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4")},
        {"4090", target_yaml("NVIDIA GeForce RTX 4090", "sm_89", "525.60.13", "12.0")}};
    for (std::string recipe : {"BEVFormer", "Mask2Former", "mmdetection3d", "Deformable-DETR", "detectron2", "EchoFusion"}) {
        for (const auto& [tag, target] : machines) {
            CAPTURE(recipe);
            CAPTURE(tag);
            fs::path dir = temp_dir("recipe-" + recipe + tag);
            write_file(dir / "target.yaml", target);
            auto run = resolve_with({recipe, "-o", (dir / "envlock.yaml").string(), "--target", (dir / "target.yaml").string()}, dir);
            CHECK_MESSAGE(run.exit_code == 0, run.err);
            CHECK(run.out.find("shared/") == std::string::npos);
            CHECK(run.err.find("shared/") == std::string::npos);
            if (run.exit_code != 0) continue;
            CHECK(read_file(dir / "envlock.yaml").find("shared/") == std::string::npos);
            auto check = run_envlock({"check", (dir / "envlock.yaml").string()});
            CHECK_MESSAGE(check.exit_code == 0, (check.out + check.err));
            if (recipe == "EchoFusion") {
                CHECK(check.out.find("channel priority flexible") != std::string::npos);
                CHECK(locked_version(read_file(dir / "envlock.yaml"), "jpeg") == "9b");
            }
        }
    }
}

// --- check proves the lock (item 6) ------------------------------------------------------------

namespace {

Run bevformer_lock(const std::string& tag) {
    Run r;
    r.dir = temp_dir(tag);
    write_file(r.dir / "target.yaml", kTarget3090);
    r.run = resolve_with({"BEVFormer", "-o", (r.dir / "envlock.yaml").string(), "--target", (r.dir / "target.yaml").string()}, r.dir);
    return r;
}

RunResult check_text(const Run& r, const std::string& text) {
    write_file(r.dir / "edited.yaml", text);
    return run_envlock({"check", (r.dir / "edited.yaml").string()});
}

}  // namespace

TEST_CASE("check fails naming the package when a version is edited, an entry deleted, or the lock truncated at a package") {
    auto r = bevformer_lock("checkpkgs");
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    std::string lock = r.lock();
    REQUIRE(run_envlock({"check", (r.dir / "envlock.yaml").string()}).exit_code == 0);

    std::string edited = lock;
    auto at = edited.find("    name: \"numba\"\n    version: \"0.48.0\"");
    REQUIRE(at != std::string::npos);
    edited.replace(edited.find("0.48.0", at), 6, "0.58.0");
    auto version = check_text(r, edited);
    CHECK(version.exit_code == 1);
    CHECK(version.out.find("numba 0.58.0: the entry says numba 0.58.0 but its URL is numba-0.48.0") != std::string::npos);

    // Deleting the torch entry: what needs it, and the spec line that asked for it, say so.
    auto start = lock.find("  - pypi: ");
    for (auto p = start; p != std::string::npos; p = lock.find("  - ", p + 1)) {
        auto next = lock.find("\n  - ", p + 1);
        std::string entry = lock.substr(p, next == std::string::npos ? std::string::npos : next + 1 - p);
        if (entry.find("    name: \"torch\"\n") == std::string::npos) continue;
        std::string without = lock;
        without.erase(p, entry.size());
        auto deleted = check_text(r, without);
        CHECK(deleted.exit_code == 1);
        CHECK(deleted.out.find("torch==1.9.1+cu111 (docs/install.md:15): no package of the lock provides torch") != std::string::npos);
        break;
    }

    // Truncated after some package: everything below it is gone.
    auto cut = lock.find("\n  - ", lock.find("\npackages:") + 200);
    REQUIRE(cut != std::string::npos);
    auto truncated = check_text(r, lock.substr(0, cut + 1));
    CHECK(truncated.exit_code == 1);
    CHECK(truncated.out.find("no package of the lock provides") != std::string::npos);
}

TEST_CASE("check fails when a file the spec was inferred from changed; resolve reads the checkout again") {
    Run r;
    r.dir = temp_dir("checkdocs");
    write_file(r.dir / "repo" / "README.md", "```bash\nconda create -n x python=3.8\npip install -r requirements.txt\n```\n");
    write_file(r.dir / "repo" / "requirements.txt", "yapf==0.40.1\n");
    write_file(r.dir / "target.yaml", kTarget3090);
    r.run = resolve_with({(r.dir / "repo").string(), "--target", (r.dir / "target.yaml").string()}, r.dir);
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    fs::path lock = r.dir / "repo" / "envlock.yaml";
    CHECK(read_file(lock).find("inferred-from-sha256:") != std::string::npos);
    CHECK(run_envlock({"check", lock.string()}).exit_code == 0);

    write_file(r.dir / "repo" / "requirements.txt", "yapf==0.40.0\n");
    auto stale = run_envlock({"check", lock.string()});
    CHECK(stale.exit_code == 1);
    CHECK(stale.out.find("requirements.txt: changed since the spec was inferred from it") != std::string::npos);

    auto again = resolve_with({(r.dir / "repo").string()}, r.dir);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(again.err.find("requirements.txt changed since the lock was made") != std::string::npos);
    CHECK(locked_version(read_file(lock), "yapf") == "0.40.0");
    CHECK(run_envlock({"check", lock.string()}).exit_code == 0);
}

TEST_CASE("a target file is validated as strictly as the flags: driver \"not a version\" is exit 2 with its line") {
    fs::path dir = temp_dir("badtarget");
    std::string t = kTarget3090;
    t.replace(t.find("470.82.01"), 9, "not a version");
    write_file(dir / "target.yaml", t);
    write_file(dir / "spec.yaml", std::string("spec:\n  name: t\n") + kPy38);
    auto r = resolve_with({(dir / "spec.yaml").string(), "--target", (dir / "target.yaml").string()}, dir);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("target.yaml:4: driver: expected a version such as 525.60.13, got 'not a version'") != std::string::npos);
}

TEST_CASE("--update with a name the lock does not have is exit 2 listing close names") {
    auto r = bevformer_lock("updtypo");
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    auto typo = resolve_with({(r.dir / "envlock.yaml").string(), "--update", "torhc"}, r.dir);
    CHECK(typo.exit_code == 2);
    CHECK(typo.err.find("--update torhc: the lock has no package of that name (did you mean torch") != std::string::npos);
}

// --- sdists (item 3) -----------------------------------------------------------------------------

TEST_CASE("an sdist whose PKG-INFO lists no Requires-Dist brings the requirements its setup.py declares (fvcore, mmcv-full)") {
    auto r = resolve_spec_text("sdists", std::string(kPy38) + "    - {pypi: fvcore}\n    - {pypi: mmcv-full==1.4.0}\n");
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    std::string lock = r.lock();
    for (const char* dep : {"yacs", "termcolor", "tabulate", "yapf", "addict", "opencv-python"}) {
        CAPTURE(dep);
        CHECK(lock.find("    name: \"" + std::string(dep) + "\"") != std::string::npos);
    }
    CHECK(lock.find("depends-unknown") == std::string::npos);
    CHECK(r.run.err.find("sdist without core metadata") == std::string::npos);
}

TEST_CASE("-v lists each sdist downloaded whole to read its requirements, once; without -v it is not a note") {
    auto r = resolve_spec_text("sdists-v", std::string(kPy38) + "    - {pypi: fvcore}\n", {"-v"});
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    const std::string line = "downloaded the whole of ";
    auto at = r.run.err.find(line);
    REQUIRE_MESSAGE(at != std::string::npos, r.run.err);
    auto end = r.run.err.find('\n', at);
    std::string said = r.run.err.substr(at, end - at);
    CHECK(said.find(".tar.gz") != std::string::npos);
    CHECK(said.find("an sdist without core metadata") != std::string::npos);
    CHECK(r.run.err.find("note: " + line) == std::string::npos);
}

namespace {

// A git repository at `dir` with one commit tagged `tag` holding `files` (git on PATH, as the
// demo mirror's own repositories need).
void make_git_repo(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& files, const std::string& tag) {
    for (const auto& [path, text] : files) write_file(dir / path, text);
    std::string d = dir.string();
    std::string cmd = "git -C '" + d + "' init -q && git -C '" + d + "' add -A && git -C '" + d +
                      "' -c user.name=envlock -c user.email=envlock@localhost commit -q -m init && git -C '" + d + "' tag " + tag;
    REQUIRE(std::system(cmd.c_str()) == 0);
}

}  // namespace

TEST_CASE("git sources whose requirements stay unknown are marked per package in the lock, and resolve warns once naming them") {
    // install_requires computed at run time from a file no static reading follows (Deliver 3).
    const std::string dynamic = "from setuptools import setup\n\ndef reqs():\n    return open('deps.in').read().split()\n\n"
                                "setup(name='{NAME}', version='{VERSION}', install_requires=reqs())\n";
    fs::path dir = temp_dir("depsunknown");
    std::vector<std::string> mirrors;
    for (auto [name, version] : {std::pair<std::string, std::string>{"dynreq", "0.1"}, {"dynother", "0.2"}}) {
        std::string setup = dynamic;
        setup.replace(setup.find("{NAME}"), 6, name);
        setup.replace(setup.find("{VERSION}"), 9, version);
        make_git_repo(dir / "git" / name, {{"setup.py", setup}, {"deps.in", "numpy\n"}}, "v" + version);
        mirrors.insert(mirrors.end(), {"--mirror", "https://github.com/envlock-test/" + name + "=" + (dir / "git" / name).string()});
    }
    auto r = resolve_spec_text("depsunknown", std::string(kPy38) +
                                                  "  sources:\n"
                                                  "    - {name: dynreq, git: https://github.com/envlock-test/dynreq, rev: v0.1}\n"
                                                  "    - {name: dynother, git: https://github.com/envlock-test/dynother, rev: v0.2}\n",
                               mirrors);
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    std::string lock = r.lock();
    for (const char* name : {"dynreq", "dynother"}) {
        CAPTURE(name);
        auto at = lock.find("    name: \"" + std::string(name) + "\"\n");
        REQUIRE(at != std::string::npos);
        auto end = lock.find("\n  - ", at);
        auto flag = lock.find("    depends-unknown: true", at);
        CHECK((flag != std::string::npos && flag < end));
    }
    CHECK(lock.find("    name: \"python\"\n") != std::string::npos);
    // One warning line naming both, not one per package or per target.
    auto first = r.run.err.find("requirements unknown for ");
    REQUIRE(first != std::string::npos);
    CHECK(r.run.err.find("requirements unknown for ", first + 1) == std::string::npos);
    std::string line = r.run.err.substr(first, r.run.err.find('\n', first) - first);
    CHECK(line.find("dynreq 0.1") != std::string::npos);
    CHECK(line.find("dynother 0.2") != std::string::npos);
    auto check = run_envlock({"check", (r.dir / "envlock.yaml").string()});
    CHECK_MESSAGE(check.exit_code == 0, (check.out + check.err));
}

// --- placeholders (item 5) -------------------------------------------------------------------

TEST_CASE("spconv-cuxxx is a choice the solver makes: the spconv build for the CUDA of the torch it locks, never the literal name") {
    const std::string body = "  python: \"3.8\"\n  find-links: [https://download.pytorch.org/whl/torch_stable.html]\n"
                             "  requirements:\n    - {conda: python=3.8}\n    - {pypi: TORCH, from: README.md:3}\n"
                             "    - {pypi: spconv-cuxxx, from: README.md:4}\n";
    auto spec = [&](const std::string& torch) {
        std::string b = body;
        b.replace(b.find("TORCH"), 5, torch);
        return b;
    };
    // RTX 3090 (sm_86): torch 1.9.1's cu111 build, so spconv-cu111.
    auto ampere = resolve_spec_text("phampere", spec("torch==1.9.1"));
    REQUIRE_MESSAGE(ampere.run.exit_code == 0, ampere.run.err);
    std::string lock = ampere.lock();
    CHECK(locked_version(lock, "torch") == "1.9.1+cu111");
    CHECK(locked_version(lock, "spconv-cu111") == "2.1.21");
    CHECK(locked_version(lock, "cumm-cu111") == "0.2.9");
    CHECK(lock.find("name: \"spconv-cu102\"") == std::string::npos);
    CHECK(lock.find("name: \"spconv-cu113\"") == std::string::npos);
    CHECK(lock.find("name: \"spconv-cuxxx\"") == std::string::npos);
    auto check = run_envlock({"check", (ampere.dir / "envlock.yaml").string()});
    CHECK_MESSAGE(check.exit_code == 0, (check.out + check.err));

    // A driver that runs CUDA 10.2 at most: torch 1.9.1's cu102 build, so spconv-cu102.
    Run pascal;
    pascal.dir = temp_dir("phpascal");
    write_file(pascal.dir / "spec.yaml", "spec:\n  name: input\n" + spec("torch==1.9.1"));
    write_file(pascal.dir / "target.yaml", target_yaml("NVIDIA GeForce GTX 1080 Ti", "sm_61", "440.33.01", "10.2"));
    pascal.run = resolve_replacing({(pascal.dir / "spec.yaml").string(), "--target", (pascal.dir / "target.yaml").string()}, pascal.dir, {});
    REQUIRE_MESSAGE(pascal.run.exit_code == 0, pascal.run.err);
    CHECK(locked_version(pascal.lock(), "spconv-cu102") == "2.1.21");
    CHECK(pascal.lock().find("name: \"spconv-cu111\"") == std::string::npos);
}

TEST_CASE("a placeholder no index can fill is exit 1 naming it and its line") {
    auto r = resolve_spec_text("phnone", std::string(kPy38) + "    - {pypi: nosuchproj-cuxxx, from: README.md:7}\n");
    CHECK(r.run.exit_code == 1);
    CHECK(r.run.err.find("README.md:7: nosuchproj-cuxxx") != std::string::npos);
    CHECK_FALSE(r.wrote());
}

TEST_CASE("PyPI requirements whose Python no interpreter here meets is exit 1 before any index is read, saying how to name one") {
    auto r = resolve_spec_text("nopython", "  python: \">=3.99\"\n  requirements:\n    - {pypi: numpy==1.19.5}\n");
    CHECK(r.run.exit_code == 1);
    CHECK(r.run.err.find("its PyPI requirements need a Python, and the spec asks for python >=3.99") != std::string::npos);
    CHECK(r.run.err.find("`envlock resolve --python X.Y`, or write X.Y to .python-version") != std::string::npos);
    CHECK(r.run.err.find("Fetched") == std::string::npos);
    CHECK_FALSE(r.wrote());
}
