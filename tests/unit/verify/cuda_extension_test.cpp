// A CUDA extension that does not link torch, built for real by `envlock verify --build-extensions`
// with the system nvcc 13.0: the demo mirror's `boxops` (a CPython module whose setup.py sends its
// .cu to nvcc, one -gencode per entry of CMake's CUDAARCHS, cudart linked statically). And the
// conda side of the nvcc check: a prefix holding its own nvcc (conda cuda-nvcc's layout) wins over
// the system toolkit. Tests that need nvcc skip with a message where /usr/local/cuda has none.
#include <nlohmann/json.hpp>

#include "install/elf.hpp"
#include "install/run_env.hpp"
#include "install/verify.hpp"
#include "resolver/knowledge/detect.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/mirror/git_repo.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/unit/verify/verify_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

// A venv of Debian's python with its own pip and setuptools, and no torch in sight: boxops needs
// none, and a CPU-only torch would (rightly) fail verify's nvcc-torch check.
bool make_plain_venv(const fs::path& prefix) {
    return run_process({"/usr/bin/python3", "-m", "venv", prefix.string()}, 300).exit_code == 0;
}

Gpu gpu(int major, int minor) {
    Gpu g;
    g.sm_major = major;
    g.sm_minor = minor;
    return g;
}

// The demo lock: boxops from the mirror's git repository, built with the system toolkit of CUDA
// 13.0 for the target's GPUs.
Lock boxops_lock(const std::vector<Gpu>& gpus, const std::string& arch_list) {
    Lock lock = verify_lock_with("13.0", "system:/usr/local/cuda");
    lock.spec.name = "boxops-demo";
    lock.spec.extensions.push_back({"boxops", "boxops", "python setup.py develop", "boxops", {}, true});
    lock.targets.front().target.gpus = gpus;
    lock.toolchain.cuda_arch_list = arch_list;
    lock.knowledge_version = builtin_knowledge().version;
    lock.content_hash = lock_content_hash(lock.spec, lock.targets, lock.knowledge_version);
    return lock;
}

const nlohmann::json* json_check(const nlohmann::json& report, const std::string& name) {
    for (const auto& c : report["checks"])
        if (c["check"] == name) return &c;
    return nullptr;
}

// A prefix laid out as conda's cuda-nvcc lays one out (bin/nvcc beside bin/nvcc.profile, whose
// TOP is bin/.., with nvvm/ and targets/ under the prefix), its files linked to the system toolkit's.
void conda_shaped_nvcc(const fs::path& prefix, const fs::path& toolkit) {
    fs::create_directories(prefix / "bin");
    for (const auto& e : fs::directory_iterator(toolkit / "bin")) fs::create_symlink(e.path(), prefix / "bin" / e.path().filename());
    for (const char* dir : {"nvvm", "targets"})
        if (fs::exists(toolkit / dir)) fs::create_directory_symlink(fs::canonical(toolkit / dir), prefix / dir);
}

}  // namespace

TEST_CASE("the demo mirror's boxops (CUDA, no torch) builds with the system nvcc 13.0 for the lock's sm list, imports, and --record says so") {
    if (system_nvcc().empty()) {
        MESSAGE("skipped: no nvcc at /usr/local/cuda on this machine");
        return;
    }
    TempDir root;
    fs::path prefix = root.path / "env", checkout = root.path / "checkout";
    REQUIRE(make_plain_venv(prefix));
    mirror::make_boxops_repo((checkout / "boxops").string());
    // What a build by another nvcc left: objects in build/ and an in-place module that would be
    // imported instead of the new one if it stayed.
    write_text(checkout / "boxops/build/temp.linux-x86_64-cpython-311/src/nms_kernel.o", "object of another nvcc");
    write_text(checkout / "boxops/boxops/_nms.cpython-311-x86_64-linux-gnu.so", "not an ELF file: left by an older build");

    Lock lock = boxops_lock({gpu(8, 6), gpu(9, 0)}, "8.6;9.0+PTX");
    fs::path lock_file = checkout / "envlock.yaml";
    std::string lock_text = write_lock(lock);
    write_text(lock_file, lock_text);

    auto r = run_envlock({"verify", lock_file.string(), "--prefix", prefix.string(), "--build-extensions", "--no-probe", "--record", "--json"});
    INFO(r.out, r.err);
    auto j = nlohmann::json::parse(r.out);
    CHECK(r.exit_code == 0);
    for (const auto& c : j["checks"]) CHECK_MESSAGE(c["status"] != "failed", c.dump());
    CHECK(j["toolchain"]["nvcc"] == "/usr/local/cuda/bin/nvcc");
    CHECK(j["toolchain"]["cuda"] == "13.0");
    CHECK(j["toolchain"]["torch"] == "");   // nothing here links torch
    const auto* torch = json_check(j, "nvcc-torch");
    REQUIRE(torch);
    CHECK((*torch)["status"] == "skipped");
    const auto* arch = json_check(j, "gpu-arch");
    REQUIRE(arch);
    CHECK((*arch)["status"] == "passed");
    const auto* build = json_check(j, "build boxops");
    REQUIRE(build);
    CHECK((*build)["status"] == "passed");
    CHECK((*build)["what"].get<std::string>().find("removed stale build/, boxops/_nms.cpython-311-x86_64-linux-gnu.so") != std::string::npos);
    const auto* import = json_check(j, "import boxops");
    REQUIRE(import);
    CHECK((*import)["status"] == "passed");

    // The build went through the system nvcc with one -gencode per locked arch and the chosen host compiler.
    std::string log = read_text((*build)["log"].get<std::string>());
    std::string cxx = j["toolchain"]["cxx"].get<std::string>();
    CHECK(log.find("# CUDAARCHS=86-real;90\n") != std::string::npos);
    CHECK(log.find("# NVCC_CCBIN=" + cxx + "\n") != std::string::npos);
    CHECK(log.find("/usr/local/cuda/bin/nvcc -c src/nms_kernel.cu") != std::string::npos);
    CHECK(log.find("-gencode=arch=compute_86,code=[sm_86]") != std::string::npos);
    CHECK(log.find("-gencode=arch=compute_90,code=[sm_90,compute_90]") != std::string::npos);

    // The module is what nvcc 13.0 made for sm_86 and sm_90: its runtime and arch list, read in the env.
    auto run = run_process({(prefix / "bin/python").string(), "-c",
                            "import boxops\nprint(boxops.runtime_version(), list(boxops.compiled_archs()), boxops.device_count())\n"
                            "boxes = [(0, 0, 10, 10), (1, 1, 10, 10), (20, 20, 30, 30)]\n"
                            "if boxops.device_count():\n    print('gpu', boxops.nms(boxes, 0.5) == boxops.nms_reference(boxes, 0.5))\n"
                            "else:\n    try:\n        boxops.nms(boxes, 0.5)\n    except RuntimeError as e:\n        print('no gpu:', e)\n"},
                           120);
    INFO(run.out);
    CHECK(run.out.rfind("13000 [860, 900] ", 0) == 0);
    CHECK((run.out.find("gpu True") != std::string::npos || run.out.find("no gpu: no CUDA device") != std::string::npos));
    // cudart is inside the module, not a library the loader must find.
    auto needed = install::elf_needed((checkout / "boxops/boxops/_nms.cpython-311-x86_64-linux-gnu.so").string());
    REQUIRE(needed);
    for (const auto& n : *needed) CHECK(n.find("libcudart") == std::string::npos);

    // --record: the verified block names the nvcc, the host compiler and the sm list it built with.
    std::string after = read_text(lock_file);
    CHECK(after.rfind(lock_text, 0) == 0);
    Lock back = read_lock(after, lock_file.string());
    REQUIRE(back.verified);
    CHECK(back.verified->result == "passed");
    CHECK(back.verified->nvcc.rfind("13.0.", 0) == 0);
    CHECK(back.verified->nvcc_path == "/usr/local/cuda/bin/nvcc");
    CHECK(back.verified->host_compiler.rfind(cxx + " ", 0) == 0);
    CHECK(back.verified->sm == std::vector<std::string>{"sm_86", "sm_90"});
    CHECK(back.content_hash == lock_content_hash(back.spec, back.targets, back.knowledge_version));
}

TEST_CASE("boxops for a Volta target: nvcc 13.0 has no compute_70, and both the gpu-arch check and the build say so") {
    if (system_nvcc().empty()) {
        MESSAGE("skipped: no nvcc at /usr/local/cuda on this machine");
        return;
    }
    TempDir root;
    fs::path prefix = root.path / "env", checkout = root.path / "checkout";
    REQUIRE(make_plain_venv(prefix));
    for (const auto& [path, content] : mirror::boxops_tree()) write_text(checkout / "boxops" / path, content);
    Lock lock = boxops_lock({gpu(7, 0)}, "7.0");

    install::VerifyInputs in;
    in.machine = detect_target(DetectRoots::host(), builtin_knowledge());
    in.machine.gpus.clear();   // the lock's target decides, whatever this machine has
    in.env = install::current_environment();
    in.prefix = prefix.string();
    in.lock_dir = checkout.string();
    in.probe = false;
    in.build_extensions = true;
    auto report = install::verify_lock(lock, in, builtin_knowledge());
    const auto* arch = find_check(report, "gpu-arch");
    REQUIRE(arch);
    CHECK(arch->status == install::CheckStatus::failed);
    CHECK(arch->what.find("sm_70") != std::string::npos);
    const auto* build = find_check(report, "build boxops");
    REQUIRE(build);
    INFO(read_text(build->log));
    CHECK(build->status == install::CheckStatus::failed);
    REQUIRE_FALSE(build->explained.empty());
    CHECK(build->explained.front().id == "unsupported-gpu-architecture");
    CHECK(build->explained.front().line.find("compute_70") != std::string::npos);
    CHECK(find_check(report, "import boxops") == nullptr);   // nothing built, nothing imported
    CHECK(report.exit_code() == 1);
}

TEST_CASE("nvcc from conda: the prefix's bin/nvcc is chosen over the system toolkit, its release checked, and the probe built with it") {
    if (system_nvcc().empty()) {
        MESSAGE("skipped: no nvcc at /usr/local/cuda on this machine (the conda-shaped prefix links to it)");
        return;
    }
    TempDir root;
    fs::path prefix = root.path / "env";
    conda_shaped_nvcc(prefix, fs::path(system_nvcc()).parent_path().parent_path());
    install::VerifyInputs in;
    in.machine = detect_target(DetectRoots::host(), builtin_knowledge());
    in.env = install::current_environment();
    in.prefix = prefix.string();

    SUBCASE("the locked release: passed, and the probe compiles through the prefix's nvcc") {
        Lock lock = verify_lock_with("13.0", "conda:cuda-nvcc");
        lock.targets.front().target.gpus = {gpu(8, 6)};
        in.machine.gpus.clear();
        auto report = install::verify_lock(lock, in, builtin_knowledge());
        const auto* nvcc = find_check(report, "nvcc");
        REQUIRE(nvcc);
        CHECK(nvcc->status == install::CheckStatus::passed);
        CHECK(nvcc->what.find("nvcc 13.0.") == 0);
        CHECK(report.toolchain.nvcc == (prefix / "bin/nvcc").string());
        CHECK(report.toolchain.cuda_home == prefix.string());
        const auto* probe = find_check(report, "probe");
        REQUIRE(probe);
        INFO(read_text(probe->log));
        CHECK(probe->status == install::CheckStatus::passed);
        CHECK(read_text(probe->log).rfind("# $ " + (prefix / "bin/nvcc").string() + " ", 0) == 0);
    }
    SUBCASE("another release locked: failed, naming what the prefix's nvcc is, and `envlock install` as the fix") {
        Lock lock = verify_lock_with("12.4.131", "conda:cuda-nvcc");
        in.probe = false;
        auto report = install::verify_lock(lock, in, builtin_knowledge());
        const auto* nvcc = find_check(report, "nvcc");
        REQUIRE(nvcc);
        CHECK(nvcc->status == install::CheckStatus::failed);
        CHECK(nvcc->what == "nvcc 12.4.131 (locked: conda:cuda-nvcc) is not on this machine");
        CHECK(nvcc->cause.find("CUDA 13.0.") != std::string::npos);
        CHECK(nvcc->cause.find(" at " + prefix.string()) != std::string::npos);
        CHECK(nvcc->fix.find("`envlock install`") != std::string::npos);
        CHECK(nvcc->fix.find("cuda-nvcc 12.4.131 at <prefix>/bin/nvcc") != std::string::npos);
    }
    SUBCASE("no nvcc in the prefix: the system's of the same release serves, and the line says the prefix lacks it") {
        fs::remove(prefix / "bin/nvcc");
        Lock lock = verify_lock_with("13.0", "conda:cuda-nvcc");
        in.probe = false;
        auto report = install::verify_lock(lock, in, builtin_knowledge());
        const auto* nvcc = find_check(report, "nvcc");
        REQUIRE(nvcc);
        CHECK(nvcc->status == install::CheckStatus::passed);
        CHECK(nvcc->what.find("the prefix has no bin/nvcc (the locked cuda-nvcc is not installed in it)") != std::string::npos);
        CHECK(report.toolchain.nvcc != (prefix / "bin/nvcc").string());
    }
}

namespace {

// conda-meta/cuda-nvcc-11.1.105-0.json listing `files`, and bin/nvcc as a script that exits 1
// (what the demo mirror's stand-in ships), with the stand-in marker when `marked`.
void conda_nvcc_record(const fs::path& prefix, bool marked, bool lists_nvcc) {
    nlohmann::json files = nlohmann::json::array({"lib/libcuda_nvcc.so"});
    if (lists_nvcc) files.push_back("bin/nvcc");
    if (marked) files.push_back("share/envlock-stand-in/cuda-nvcc/ENVLOCK-STAND-IN");
    fs::create_directories(prefix / "conda-meta");
    fs::create_directories(prefix / "bin");
    std::ofstream(prefix / "conda-meta/cuda-nvcc-11.1.105-0.json")
        << nlohmann::json{{"name", "cuda-nvcc"}, {"version", "11.1.105"}, {"build", "0"}, {"depends", nlohmann::json::array()}, {"files", files}}.dump(2);
    std::ofstream(prefix / "bin/nvcc") << "#!/bin/sh\necho \"nvcc: a stand-in for cuda-nvcc 11.1.105 made by envlock-mirror; it compiles nothing\" >&2\nexit 1\n";
    fs::permissions(prefix / "bin/nvcc", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
}

}  // namespace

TEST_CASE("nvcc from conda: found where the installed package put it, and the truth told when it cannot compile") {
    TempDir root;
    fs::path prefix = root.path / "env";
    install::VerifyInputs in;
    in.machine = detect_target(DetectRoots::host(), builtin_knowledge());
    in.machine.gpus.clear();
    in.env = install::current_environment();
    in.prefix = prefix.string();
    in.probe = false;
    Lock lock = verify_lock_with("11.1.105", "conda:cuda-nvcc");
    lock.targets.front().target.gpus = {gpu(8, 6)};

    SUBCASE("a stand-in (the demo mirror's): skipped with that reason, never passed; the probe compiles with a real toolkit here") {
        conda_nvcc_record(prefix, /*marked=*/true, /*lists_nvcc=*/true);
        in.probe = !system_nvcc().empty();
        auto report = install::verify_lock(lock, in, builtin_knowledge());
        const auto* nvcc = find_check(report, "nvcc");
        REQUIRE(nvcc);
        CHECK(nvcc->status == install::CheckStatus::skipped);
        CHECK(nvcc->what.find("the locked cuda-nvcc 11.1.105 in the prefix is a stand-in (conda-meta/cuda-nvcc-11.1.105-0.json lists ENVLOCK-STAND-IN)") == 0);
        const auto* torch = find_check(report, "nvcc-torch");
        REQUIRE(torch);
        CHECK(torch->status == install::CheckStatus::skipped);
        CHECK(report.toolchain.stand_in == "cuda-nvcc 11.1.105 (conda-meta/cuda-nvcc-11.1.105-0.json)");
        if (system_nvcc().empty()) {
            MESSAGE("no nvcc at /usr/local/cuda: the stand-in's probe is not compiled here");
            return;
        }
        CHECK(nvcc->what.find("the probe compiles with CUDA 13.0") != std::string::npos);
        CHECK(report.toolchain.nvcc == system_nvcc());
        const auto* probe = find_check(report, "probe");
        REQUIRE(probe);
        INFO(read_text(probe->log));
        CHECK(probe->status == install::CheckStatus::passed);
        CHECK(probe->what.find("for sm_86") != std::string::npos);
        CHECK(report.exit_code() == 0);
    }
    SUBCASE("installed but not runnable, and not marked: failed, saying it does not run and what it printed") {
        conda_nvcc_record(prefix, /*marked=*/false, /*lists_nvcc=*/true);
        auto report = install::verify_lock(lock, in, builtin_knowledge());
        const auto* nvcc = find_check(report, "nvcc");
        REQUIRE(nvcc);
        CHECK(nvcc->status == install::CheckStatus::failed);
        CHECK(nvcc->cause.find((prefix / "bin/nvcc").string() + " (from cuda-nvcc 11.1.105 (conda-meta/cuda-nvcc-11.1.105-0.json)) does not run: "
                               "`nvcc --version` exited 1 (nvcc: a stand-in") == 0);
        CHECK(nvcc->fix.find("`envlock install --repair`") == 0);
        CHECK(nvcc->fix.find("`envlock install`), which puts") == std::string::npos);   // it is installed: no "install it"
    }
    SUBCASE("installed, but its files list no nvcc: failed, with --repair (not a second install) as the fix") {
        conda_nvcc_record(prefix, /*marked=*/false, /*lists_nvcc=*/false);
        fs::remove(prefix / "bin/nvcc");
        auto report = install::verify_lock(lock, in, builtin_knowledge());
        const auto* nvcc = find_check(report, "nvcc");
        REQUIRE(nvcc);
        CHECK(nvcc->status == install::CheckStatus::failed);
        CHECK(nvcc->cause.find("the locked cuda-nvcc 11.1.105 (conda-meta/cuda-nvcc-11.1.105-0.json) is installed, but no installed file is bin/nvcc") == 0);
        CHECK(nvcc->fix.find("`envlock install --repair` puts back") == 0);
    }
}
