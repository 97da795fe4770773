// `envlock resolve`, `check` and `why` end to end over the demo mirror behind a local server:
// the acceptance scenarios of the solve issue and the recipe of the inference issue.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

const char* kTorchPage = "https://download.pytorch.org/whl/torch_stable.html";

std::string spec_file(const std::string& body) { return "spec:\n  name: scenario\n" + body; }

struct Resolved {
    RunResult run;
    std::string lock;
    fs::path dir;
};

Resolved resolve_spec(const std::string& tag, const std::string& spec, const std::string& target, std::vector<std::string> extra = {}) {
    Resolved r;
    r.dir = temp_dir(tag);
    write_file(r.dir / "spec.yaml", spec);
    write_file(r.dir / "target.yaml", target);
    std::vector<std::string> args{(r.dir / "spec.yaml").string(), "--target", (r.dir / "target.yaml").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    r.run = resolve_with(args, r.dir);
    if (fs::exists(r.dir / "envlock.yaml")) r.lock = read_file(r.dir / "envlock.yaml");
    return r;
}

Resolved resolve_bevformer(const std::string& tag, const std::string& target, std::vector<std::string> extra = {}) {
    Resolved r;
    r.dir = temp_dir(tag);
    write_file(r.dir / "target.yaml", target);
    std::vector<std::string> args{"BEVFormer", "-o", (r.dir / "envlock.yaml").string(), "--target", (r.dir / "target.yaml").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    r.run = resolve_with(args, r.dir);
    if (fs::exists(r.dir / "envlock.yaml")) r.lock = read_file(r.dir / "envlock.yaml");
    return r;
}

}  // namespace

TEST_CASE("BEVFormer on an RTX 3090 with driver 470.82: cu111 torch, mmcv-full from its cu111/torch1.9.0 page, yapf 0.40.1, nvcc 11.1 and gcc <= 10") {
    auto r = resolve_bevformer("bev3090", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    CHECK(locked_version(r.lock, "torch") == "1.9.1+cu111");
    CHECK(locked_version(r.lock, "torchvision") == "0.10.1+cu111");
    CHECK(locked_version(r.lock, "mmcv-full") == "1.4.0");
    CHECK(r.lock.find("mmcv/dist/cu111/torch1.9.0/mmcv_full-1.4.0-cp38") != std::string::npos);
    CHECK(locked_version(r.lock, "yapf") == "0.40.1");
    CHECK(r.lock.find("excluded: \"yapf 0.40.2") != std::string::npos);
    CHECK(locked_version(r.lock, "numpy") == "1.19.5");
    CHECK(locked_version(r.lock, "numba") == "0.48.0");
    CHECK(locked_version(r.lock, "mmdet3d") == "0.17.1");
    CHECK(r.lock.find("nvcc: \"11.1") != std::string::npos);
    CHECK(r.lock.find("cuda-arch-list: \"8.6\"") != std::string::npos);
    auto gcc_at = r.lock.find("  gcc: \"");
    REQUIRE(gcc_at != std::string::npos);
    CHECK(std::stoi(r.lock.substr(gcc_at + 8)) <= 10);
}

TEST_CASE("BEVFormer on an RTX 4090 with driver 525.60.13: solvable through sm_86 SASS, ops built as 8.6, the system nvcc 12.0 not taken") {
    auto r = resolve_bevformer("bev4090", target_yaml("NVIDIA GeForce RTX 4090", "sm_89", "525.60.13", "12.0", "12.0"));
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    CHECK(locked_version(r.lock, "torch") == "1.9.1+cu111");
    CHECK(r.lock.find("cuda-arch-list: \"8.6\"") != std::string::npos);
    CHECK(r.lock.find("nvcc-from: \"conda:cuda-nvcc\"") != std::string::npos);
    CHECK(r.lock.find("system nvcc 12.0 at /usr/local/cuda-12.0 not used") != std::string::npos);
}

TEST_CASE("BEVFormer on an H100 is unsatisfiable, and says that torch 1.9.1 has no sm_90 kernel") {
    auto r = resolve_bevformer("bevh100", target_yaml("NVIDIA H100 80GB HBM3", "sm_90", "535.104.05", "12.2"));
    CHECK(r.run.exit_code == 1);
    CHECK(r.lock.empty());
    CHECK(r.run.err.find("torch==1.9.1+cu111 (docs/install.md:15)") != std::string::npos);
    CHECK(r.run.err.find("sm_86 and no PTX") != std::string::npos);
    CHECK(r.run.err.find("sm_90") != std::string::npos);
    CHECK(r.run.err.find("What would help") != std::string::npos);
    // Provenance is the paper repo's file or an upstream URL, never the developers' ../shared.
    CHECK(r.run.err.find("shared/") == std::string::npos);
}

TEST_CASE("-v prints the full derivation of the H100 explanation: every candidate with every blocker (#30)") {
    std::string h100 = target_yaml("NVIDIA H100 80GB HBM3", "sm_90", "535.104.05", "12.2");
    auto screen = resolve_bevformer("bevh100screen", h100);
    auto full = resolve_bevformer("bevh100full", h100, {"-v"});
    REQUIRE(screen.run.exit_code == 1);
    REQUIRE(full.run.exit_code == 1);
    auto lines = [](const std::string& text) { return std::count(text.begin(), text.end(), '\n'); };
    CAPTURE(screen.run.err);
    CAPTURE(full.run.err);
    // One screen names each candidate's first blocker; the full derivation every one of them
    // (torch 1.9.1+cu111 also has no nvcc 11.1 arch for sm_90 to build extensions with), and
    // nothing cut.
    const std::string second = "; and needs an nvcc 11.1 arch that torch 1.9's cpp_extension accepts for every GPU";
    CHECK(screen.run.err.find("torch 1.9.1+cu111 (pypi) needs kernels for every GPU") != std::string::npos);
    CHECK(screen.run.err.find(second) == std::string::npos);
    CHECK(full.run.err.find(second) != std::string::npos);
    CHECK(lines(full.run.err) > lines(screen.run.err));
    CHECK(full.run.err.find("(--verbose") == std::string::npos);
}

TEST_CASE("a Mask2Former-like spec allowing torch>=1.9 on an H100 gets a build with sm_90, its nvcc and a gcc it accepts") {
    std::string spec = spec_file(std::string("  python: \"3.9\"\n  find-links: [") + kTorchPage + "]\n"
                                 "  requirements:\n    - {conda: python=3.9}\n    - {pypi: torch>=1.9}\n"
                                 "  extensions:\n    - {name: MultiScaleDeformableAttention, in: ops, build: sh make.sh, import: MultiScaleDeformableAttention, cuda: true}\n");
    auto r = resolve_spec("m2fh100", spec, target_yaml("NVIDIA H100 80GB HBM3", "sm_90", "535.104.05", "12.2"));
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    std::string torch = locked_version(r.lock, "torch");
    CAPTURE(torch);
    REQUIRE(torch.find("+cu") != std::string::npos);
    int cu = std::stoi(torch.substr(torch.find("+cu") + 3));
    CHECK(cu >= 118);
    CHECK(r.lock.find("cuda-arch-list: \"9.0\"") != std::string::npos);
    std::string runtime = cu >= 100 ? std::to_string(cu / 10) + "." + std::to_string(cu % 10) : "";
    CHECK(r.lock.find("nvcc: \"" + runtime) != std::string::npos);
}

TEST_CASE("a cu102 pin on an RTX 3090 is refused with the build's arch list; without the pin the cu111 build is chosen") {
    std::string target = target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4");
    std::string pinned = spec_file(std::string("  python: \"3.8\"\n  find-links: [") + kTorchPage + "]\n"
                                   "  requirements:\n    - {conda: python=3.8}\n    - {pypi: torch==1.8.1+cu102, from: \"INSTALL.md:4\"}\n");
    auto refused = resolve_spec("cu102", pinned, target);
    CHECK(refused.run.exit_code == 1);
    CHECK(refused.run.err.find("INSTALL.md:4") != std::string::npos);
    CHECK(refused.run.err.find("sm_37 sm_50 sm_60 sm_70 and no PTX") != std::string::npos);
    CHECK(refused.run.err.find("RTX 3090 sm_86") != std::string::npos);

    std::string open = spec_file(std::string("  python: \"3.8\"\n  find-links: [") + kTorchPage + "]\n"
                                 "  requirements:\n    - {conda: python=3.8}\n    - {pypi: torch==1.8.1}\n");
    auto chosen = resolve_spec("cu111", open, target);
    REQUIRE_MESSAGE(chosen.run.exit_code == 0, chosen.run.err);
    CHECK(locked_version(chosen.lock, "torch") == "1.8.1+cu111");
}

TEST_CASE("a GTX 1080 Ti with torch>=2.0 gets a variant covering sm_61, not a cu128 build that starts at sm_75") {
    std::string spec = spec_file(std::string("  python: \"3.9\"\n  find-links: [") + kTorchPage + "]\n"
                                 "  requirements:\n    - {conda: python=3.9}\n    - {pypi: torch>=2.0}\n");
    auto r = resolve_spec("1080ti", spec, target_yaml("NVIDIA GeForce GTX 1080 Ti", "sm_61", "570.86.15", "12.8"));
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    std::string torch = locked_version(r.lock, "torch");
    CAPTURE(torch);
    CHECK(torch.find("+cu128") == std::string::npos);
    CHECK(torch.find("+cu") != std::string::npos);
    CHECK(r.lock.find("machine:gpu") != std::string::npos);   // the cu128 build it ruled out is recorded
}

TEST_CASE("an EchoFusion-like spec whose numba 0.48 runs CUDA kernels gets CUDA 11.1, not 11.3") {
    std::string spec = spec_file("  python: \"3.8\"\n  channels: [pytorch, conda-forge, defaults]\n"
                                 "  requirements:\n    - {conda: python=3.8}\n    - {conda: \"pytorch>=1.9,<1.11\"}\n    - {pypi: numba==0.48.0}\n"
                                 "  sources:\n    - {name: mmdet3d, git: https://github.com/open-mmlab/mmdetection3d, rev: v0.17.3}\n");
    std::string target = target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4");
    auto with_numba_cuda = resolve_spec("echo", spec, target, {"--uses", "numba-cuda"});
    REQUIRE_MESSAGE(with_numba_cuda.run.exit_code == 0, with_numba_cuda.run.err);
    auto build_of = [](const std::string& lock) {
        auto at = lock.find("    name: \"pytorch\"");
        return at == std::string::npos ? std::string() : lock.substr(at, lock.find("build-number", at) - at);
    };
    CAPTURE(build_of(with_numba_cuda.lock));
    CHECK(build_of(with_numba_cuda.lock).find("cuda11.1") != std::string::npos);
    CHECK(locked_version(with_numba_cuda.lock, "mmdet3d") == "0.17.3");
    CHECK(with_numba_cuda.lock.find("numba-cuda-nvvm70") != std::string::npos);
    CHECK(with_numba_cuda.lock.find("uses: [numba-cuda]") != std::string::npos);   // kept for re-resolves and check

    auto without = resolve_spec("echo2", spec, target);
    REQUIRE_MESSAGE(without.run.exit_code == 0, without.run.err);
    CAPTURE(build_of(without.lock));
    CHECK(build_of(without.lock).find("cuda11.3") != std::string::npos);
}

TEST_CASE("numpy asked from conda and from pip gives one numpy") {
    std::string spec = spec_file("  python: \"3.8\"\n  channels: [conda-forge, defaults]\n"
                                 "  requirements:\n    - {conda: python=3.8}\n    - {conda: numpy=1.19}\n    - {pypi: numpy==1.19.5}\n");
    auto r = resolve_spec("numpy", spec, target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    size_t count = 0;
    for (size_t at = r.lock.find("name: \"numpy\""); at != std::string::npos; at = r.lock.find("name: \"numpy\"", at + 1)) ++count;
    CHECK(count == 1);
}

TEST_CASE("resolving twice gives the same bytes; check passes, then fails once the spec is edited") {
    auto first = resolve_bevformer("twice", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    REQUIRE_MESSAGE(first.run.exit_code == 0, first.run.err);
    auto again = resolve_with({(first.dir / "envlock.yaml").string()}, first.dir);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(read_file(first.dir / "envlock.yaml") == first.lock);

    auto ok = run_envlock({"check", (first.dir / "envlock.yaml").string()});
    CHECK(ok.exit_code == 0);
    std::string edited = first.lock;
    auto at = edited.find("numba==0.48.0");
    REQUIRE(at != std::string::npos);
    edited.replace(at, 13, "numba==0.49.0");
    write_file(first.dir / "envlock.yaml", edited);
    auto stale = run_envlock({"check", (first.dir / "envlock.yaml").string()});
    CHECK(stale.exit_code == 1);
    CHECK(stale.out.find("out of date") != std::string::npos);
}

TEST_CASE("a re-resolve keeps the commit the lock pinned a git source to, without asking the remote; --update asks again") {
    auto first = resolve_bevformer("gitpin", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    REQUIRE_MESSAGE(first.run.exit_code == 0, first.run.err);
    REQUIRE(first.lock.find("rev: \"v0.17.1\"") == std::string::npos);   // pinned to a commit, not the tag
    std::string lock = (first.dir / "envlock.yaml").string();
    // The remote is gone now: the mirror rule for it points nowhere.
    auto resolve_unreachable = [&](std::vector<std::string> args) {
        args.insert(args.begin(), "resolve");
        for (auto& flag : mirror_flags(first.dir / "cache")) {
            if (flag.rfind("https://github.com/open-mmlab/mmdetection3d=", 0) == 0)
                flag = "https://github.com/open-mmlab/mmdetection3d=/nonexistent/mmdetection3d";
            args.push_back(flag);
        }
        return run_envlock(args);
    };
    auto args = std::vector<std::string>{lock};
    auto again = resolve_unreachable(args);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(again.err.find("mmdet3d: could not reach") == std::string::npos);
    CHECK(read_file(first.dir / "envlock.yaml") == first.lock);

    // --update asks the remote again, and a source with no reachable commit is not lockable.
    args.insert(args.end(), {"--update", "mmdet3d"});
    auto update = resolve_unreachable(args);
    CHECK(update.exit_code == 3);
    CHECK(update.err.find("mmdet3d: https://github.com/open-mmlab/mmdetection3d") != std::string::npos);
    CHECK(read_file(first.dir / "envlock.yaml") == first.lock);
}

TEST_CASE("--allow-advisory lifts one advisory, is remembered in the spec, and an unknown id is bad input") {
    auto r = resolve_bevformer("allowadv", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    REQUIRE(locked_version(r.lock, "yapf") == "0.40.1");
    std::string lock = (r.dir / "envlock.yaml").string();
    // A locked version that is still valid stays: --update lets yapf move up to 0.40.2.
    auto allowed = resolve_with({lock, "--allow-advisory", "yapf-0.40.2-mmcv-full-config", "--update", "yapf"}, r.dir);
    REQUIRE_MESSAGE(allowed.exit_code == 0, allowed.err);
    std::string text = read_file(r.dir / "envlock.yaml");
    CHECK(locked_version(text, "yapf") == "0.40.2");
    CHECK(text.find("excluded: \"yapf 0.40.2") == std::string::npos);
    CHECK(text.find("allow-advisories: [yapf-0.40.2-mmcv-full-config]") != std::string::npos);
    // Remembered: a plain re-resolve keeps it.
    auto again = resolve_with({lock}, r.dir);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(read_file(r.dir / "envlock.yaml") == text);

    auto typo = resolve_with({lock, "--allow-advisory", "yapf-typo"}, r.dir);
    CHECK(typo.exit_code == 2);
    CHECK(typo.err.find("--allow-advisory yapf-typo: no advisory has that id") != std::string::npos);
    CHECK(read_file(r.dir / "envlock.yaml") == text);
}

TEST_CASE("why names the spec line, the machine facts and the advisory behind a package") {
    auto r = resolve_bevformer("why", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    auto torch = run_envlock({"why", "torch", (r.dir / "envlock.yaml").string()});
    CHECK(torch.exit_code == 0);
    CHECK(torch.out.find("torch 1.9.1+cu111") != std::string::npos);
    CHECK(torch.out.find("spec: torch==1.9.1+cu111 (docs/install.md:15)") != std::string::npos);
    CHECK(torch.out.find("SASS sm_37") != std::string::npos);
    auto yapf = run_envlock({"why", "yapf", (r.dir / "envlock.yaml").string()});
    CHECK(yapf.out.find("mmcv-full 1.4.0") != std::string::npos);
    CHECK(yapf.out.find("yapf 0.40.2") != std::string::npos);
    auto missing = run_envlock({"why", "tensorflow", (r.dir / "envlock.yaml").string()});
    CHECK(missing.exit_code == 1);
}

// Every key of a JSON document, with where it is ("why.ruled-out[0].id").
static void keys_of(const nlohmann::json& j, const std::string& at, std::vector<std::string>& out) {
    if (j.is_object())
        for (const auto& [k, v] : j.items()) {
            out.push_back(at + "." + k);
            keys_of(v, at + "." + k, out);
        }
    else if (j.is_array())
        for (size_t i = 0; i < j.size(); ++i) keys_of(j[i], at + "[" + std::to_string(i) + "]", out);
}

TEST_CASE("every --json output spells its keys as the lock does, kebab-case (why, index list, inspect) (#30)") {
    auto r = resolve_bevformer("jsonkeys", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    REQUIRE_MESSAGE(r.run.exit_code == 0, r.run.err);
    auto flags = mirror_flags(r.dir / "cache");
    std::vector<std::vector<std::string>> commands = {
        {"why", "torch", (r.dir / "envlock.yaml").string(), "--json"},
        {"inspect", "gpu", "H100", "--json"},
        {"inspect", "driver", "535.104.05", "--json"},
        {"inspect", "cuda", "11.1", "--json"},
        {"inspect", "torch", "1.9.1", "--json"},
        {"inspect", "wheel", "torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl", "--python", "3.8"},
        {"inspect", "requirement", "mmcv-full[all]>=1.3; python_version<'3.9'", "--python", "3.8"},
    };
    std::vector<std::string> list{"index", "list", "numpy", "--json"};
    list.insert(list.end(), flags.begin(), flags.end());
    commands.push_back(list);
    for (const auto& args : commands) {
        auto out = run_envlock(args);
        CAPTURE(args[0] + " " + args[1]);
        REQUIRE_MESSAGE(out.exit_code == 0, out.err);
        std::vector<std::string> keys;
        keys_of(nlohmann::json::parse(out.out), args[0] + " " + args[1], keys);
        CHECK(keys.size() > 3);
        for (const auto& k : keys) CHECK_MESSAGE(k.substr(k.rfind('.') + 1).find('_') == std::string::npos, k);
    }
}

TEST_CASE("a malformed spec is refused with its file and line, and nothing is written") {
    fs::path dir = temp_dir("bad");
    write_file(dir / "spec.yaml", "spec:\n  name: bad\n  requirements:\n    - {pypi: \"torch===\"}\n");
    write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    auto r = resolve_with({(dir / "spec.yaml").string(), "--target", (dir / "target.yaml").string()}, dir);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("spec.yaml:4") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "envlock.yaml"));
}

TEST_CASE("an unknown recipe or path is bad input naming the recipes there are") {
    auto r = run_envlock({"resolve", "NoSuchPaper"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("BEVFormer") != std::string::npos);
}
