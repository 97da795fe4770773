// What doctor reads of compiled modules and of the machine that builds them: the GPU code of a
// CUDA fat binary (built by nvcc 13.0 for real), the torch symbols an extension imports against
// what the installed torch exports (the dynamic linker is the oracle), the nvcc and host compiler
// extensions build with, CPU flags and WSL (knowledge: target_warnings), and what the code uses.
#include <doctest/doctest.h>

#include <unistd.h>

#include "install/elf.hpp"
#include "resolver/infer/code_uses.hpp"
#include "resolver/knowledge/detect.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/unit/doctor/doctor_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

const knowledge::Knowledge& K() {
    static knowledge::Knowledge k = knowledge::load_builtin();
    return k;
}

std::string system_nvcc() {
    for (const char* p : {"/usr/local/cuda/bin/nvcc", "/usr/local/cuda-13.0/bin/nvcc"})
        if (::access(p, X_OK) == 0) return p;
    return "";
}

// A torch wheel's files: torch/version.py with its CUDA, and `libs` under torch/lib.
WheelSpec torch_wheel(const std::string& version, const std::string& cuda, std::map<std::string, std::string> libs = {}) {
    WheelSpec w{"torch", version, {}, {{"torch/__init__.py", ""}, {"torch/version.py", "__version__ = '" + version + "'\ncuda = " +
                                                                                      (cuda.empty() ? "None" : "'" + cuda + "'") + "\n"}}, {}};
    for (auto& [name, bytes] : libs) {
        w.files["torch/lib/" + name] = bytes;
        w.modes["torch/lib/" + name] = 0100755;
    }
    return w;
}

// A script that answers `nvcc --version` as the toolkit of `release` does.
void fake_nvcc(const fs::path& bin, const std::string& release) {
    write_text(bin / "nvcc",
               "#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, release " + release + ", V" +
                   release + ".0'\n",
               true);
}

void fake_compiler(const fs::path& dir, const std::string& name, const std::string& version) {
    write_text(dir / name,
               "#!/bin/sh\ncase \"$1\" in\n  -dumpfullversion|-dumpversion) echo " + version + " ;;\n  --version) echo \"" + name +
                   " (Fake GCC) " + version + "\" ;;\n  *) exit 1 ;;\nesac\n",
               true);
}

}  // namespace

TEST_CASE("a CUDA fat binary's headers give its sm list: nvcc 13.0 builds sm_75 and sm_86 + compute_86, doctor reads them back") {
    std::string nvcc = system_nvcc();
    if (nvcc.empty()) {
        MESSAGE("skipped: no nvcc (/usr/local/cuda/bin/nvcc) on this machine to build a real fat binary");
        return;
    }
    TempDir d;
    write_text(d.path / "k.cu", "__global__ void add(float* x) { x[threadIdx.x] += 1.0f; }\n"
                                "extern \"C\" void launch(float* x) { add<<<1, 32>>>(x); }\n");
    auto r = sh("cd " + d.str() + " && " + nvcc + " -shared -Xcompiler -fPIC -gencode arch=compute_75,code=sm_75 "
                "-gencode 'arch=compute_86,code=[sm_86,compute_86]' k.cu -o k.so 2>&1");
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    auto archs = install::elf_fatbin_archs(d.str("k.so"));
    REQUIRE(archs);
    CHECK(archs->sass == std::vector<int>{75, 86});
    CHECK(archs->ptx == std::vector<int>{86});

    // In a venv beside a cu130 torch: a GPU its code cannot run on is named; PTX 8.6 JITs on newer ones.
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {torch_wheel("2.9.0+cu130", "13.0"),
                           {"myops", "1.0", {}, {{"myops/__init__.py", ""}, {"myops/_ext.so", read_text(d.path / "k.so")}}, {{"myops/_ext.so", 0100755}}}});
    auto scan = install::scan_prefix(p.root());
    REQUIRE(scan.extensions.size() == 1);
    CHECK(scan.extensions[0].cudart == "");   // nvcc's default: the runtime linked in statically
    CHECK(scan.extensions[0].fatbin);
    auto m = quiet_machine();
    m.target.gpus = {{"Tesla V100-SXM2-16GB", 7, 0}, {"NVIDIA GeForce RTX 5090", 12, 0}};
    auto rep = install::diagnose(scan, m, K());
    const auto* f = find_check(rep, "extension-gpu");
    REQUIRE_MESSAGE(f, describe(rep));
    CHECK(f->what == "lib/python3.8/site-packages/myops/_ext.so has no code for sm_70 (Tesla V100-SXM2-16GB)");
    CHECK(f->why.find("sm_75 sm_86 compute_86") != std::string::npos);
    CHECK(f->fix.find("TORCH_CUDA_ARCH_LIST=\"7.0\"") == 0);
    int gpu_findings = 0;
    for (const auto& x : rep.findings) gpu_findings += x.check == "extension-gpu";
    CHECK(gpu_findings == 1);   // sm_120 runs compute_86 through the driver's JIT
}

TEST_CASE("fat binary parsing stops at damage and skips padding between fat binaries") {
    auto entry = [](int kind, int arch, std::string payload) {
        std::string h(64, '\0');
        h[0] = static_cast<char>(kind);
        h[4] = 64;
        uint64_t n = payload.size();
        for (int i = 0; i < 8; ++i) h[8 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
        h[28] = static_cast<char>(arch);
        return h + payload;
    };
    auto fatbin = [](const std::string& entries) {
        std::string h = {'\x50', '\xed', '\x55', '\xba', 1, 0, 16, 0};
        uint64_t n = entries.size();
        for (int i = 0; i < 8; ++i) h.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
        return h + entries;
    };
    std::string a = fatbin(entry(2, 70, std::string(16, 'x')) + entry(1, 80, std::string(8, 'p')));
    std::string b = fatbin(entry(2, 90, std::string(24, 'y')));
    auto both = install::parse_fatbin(a + std::string(8, '\0') + b);
    CHECK(both.sass == std::vector<int>{70, 90});
    CHECK(both.ptx == std::vector<int>{80});
    auto cut = install::parse_fatbin(a.substr(0, a.size() - 4));   // its size says more than is there
    CHECK(cut.sass.empty());
    CHECK(install::parse_fatbin("not a fat binary at all").sass.empty());
}

TEST_CASE("an extension built against another torch: the torch symbols it imports that the installed torch does not export") {
    // libc10.so as torch A shipped it (two functions) and as torch B ships it (one was removed);
    // the extension was built against A.
    TempDir d;
    write_text(d.path / "a/c10.cpp", "namespace c10 { int kept(int x) { return x + 1; } int removed_later(int x) { return x * 2; } }\n");
    write_text(d.path / "b/c10.cpp", "namespace c10 { int kept(int x) { return x + 1; } }\n");
    write_text(d.path / "ext.cpp", "namespace c10 { int kept(int); int removed_later(int); }\n"
                                   "extern \"C\" int ext_call(int x) { return c10::kept(x) + c10::removed_later(x); }\n");
    auto r = sh("cd " + d.str() + " && g++ -shared -fPIC -o a/libc10.so -Wl,-soname,libc10.so a/c10.cpp && "
                "g++ -shared -fPIC -o b/libc10.so -Wl,-soname,libc10.so b/c10.cpp && "
                "g++ -shared -fPIC -o ext.so ext.cpp -La -lc10 2>&1");
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    auto syms = install::elf_dynamic_symbols(d.str("ext.so"));
    REQUIRE(syms);
    CHECK(std::count(syms->undefined.begin(), syms->undefined.end(), "_ZN3c1013removed_laterEi") == 1);
    CHECK(install::torch_symbol("_ZN3c1013removed_laterEi"));
    CHECK(install::torch_symbol("_ZNK2at6Tensor4sizeEl"));
    CHECK(install::torch_symbol("_ZTVN5torch8autograd4NodeE"));
    CHECK_FALSE(install::torch_symbol("_ZNSt6vectorIiSaIiEE9push_backERKi"));
    CHECK_FALSE(install::torch_symbol("PyLong_FromLong"));
    CHECK(install::demangle("_ZN3c1013removed_laterEi") == "c10::removed_later(int)");

    std::string ext = read_text(d.path / "ext.so");
    auto install_with = [&](const std::string& lib_dir, Prefix& p) {
        p.make_venv();
        pip_install(p.site(), {torch_wheel("1.13.1+cpu", "", {{"libc10.so", read_text(d.path / lib_dir / "libc10.so")}}),
                               {"myops", "0.1", {}, {{"myops/__init__.py", ""}, {"myops/_ext.so", ext}}, {{"myops/_ext.so", 0100755}}}});
    };
    Prefix built_against;
    install_with("a", built_against);
    auto ok = install::diagnose(install::scan_prefix(built_against.root()), quiet_machine(), K());
    CHECK_MESSAGE(ok.findings.empty(), describe(ok));

    Prefix upgraded;
    install_with("b", upgraded);
    auto scan = install::scan_prefix(upgraded.root());
    REQUIRE(scan.extensions.size() == 1);
    CHECK(scan.extensions[0].torch_checked);
    CHECK(scan.extensions[0].torch_symbols == 2);
    CHECK(scan.extensions[0].missing_torch_symbols == std::vector<std::string>{"_ZN3c1013removed_laterEi"});
    auto rep = install::diagnose(scan, quiet_machine(), K());
    const auto* f = find_check(rep, "extension-torch");
    REQUIRE_MESSAGE(f, describe(rep));
    CHECK(f->what.find("myops/_ext.so needs 1 of its 2 torch symbols that torch 1.13.1+cpu does not export, first c10::removed_later(int)") !=
          std::string::npos);
    CHECK(f->why.find("undefined symbol: _ZN3c1013removed_laterEi") != std::string::npos);
    CHECK(f->fix.find("--force-reinstall --no-deps --no-build-isolation \"myops==0.1\"") != std::string::npos);

    // The oracle: the dynamic linker refuses the module for the same symbol.
    auto load = run_program({kDebianPython, "-c",
                             "import ctypes, os, sys\nctypes.CDLL(sys.argv[1] + '/torch/lib/libc10.so', mode=ctypes.RTLD_GLOBAL)\n"
                             "ctypes.CDLL(sys.argv[1] + '/myops/_ext.so', mode=os.RTLD_NOW)\n",
                             upgraded.site()});
    CHECK(load.exit_code != 0);
    CHECK_MESSAGE(load.err.find("undefined symbol: _ZN3c1013removed_laterEi") != std::string::npos, load.err);
}

TEST_CASE("the real libtorch: Debian's libc10 exports what its headers declare, read from its dynamic symbol table") {
    const char* lib = "/usr/lib/x86_64-linux-gnu/libc10.so";
    if (!fs::exists(lib)) {
        MESSAGE("skipped: Debian's libtorch-dev (libc10.so) is not installed");
        return;
    }
    auto syms = install::elf_dynamic_symbols(fs::canonical(lib).string());
    REQUIRE(syms);
    CHECK(syms->defined.size() > 300);
    CHECK(std::count(syms->defined.begin(), syms->defined.end(), "_ZN3c106detail14torchCheckFailEPKcS2_jS2_") == 1);
    // binutils agrees on the count of defined functions and objects it exports.
    auto nm = sh(std::string("nm -D --defined-only ") + lib + " | wc -l");
    if (nm.exit_code == 0) CHECK(std::stoul(nm.out) >= syms->defined.size() - 5);

    // An extension linked against Debian's torch 1.13 libraries, one symbol of which that torch
    // never had; a venv whose torch/lib links to the real libraries (as a wheel ships them).
    TempDir d;
    write_text(d.path / "ext.cpp",
               "namespace c10 { namespace detail { [[noreturn]] void torchCheckFail(const char*, const char*, unsigned, const char*); } "
               "void envlock_not_in_torch(); }\n"
               "extern \"C\" void ext_call(int x) { if (x) c10::detail::torchCheckFail(\"f\", \"file\", 1u, \"msg\"); c10::envlock_not_in_torch(); }\n");
    auto r = sh("cd " + d.str() + " && g++ -shared -fPIC -o ext.so ext.cpp /usr/lib/x86_64-linux-gnu/libc10.so 2>&1");
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    auto needed = install::elf_needed(d.str("ext.so"));
    REQUIRE(needed);
    std::string soname;
    for (const auto& n : *needed)
        if (n.rfind("libc10.so", 0) == 0) soname = n;
    REQUIRE(!soname.empty());   // libc10.so.1.13 on Debian 12
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {torch_wheel("1.13.0", ""), {"myops", "0.1", {}, {{"myops/__init__.py", ""}, {"myops/_ext.so", read_text(d.path / "ext.so")}}, {{"myops/_ext.so", 0100755}}}});
    fs::create_directories(p.site() + "/torch/lib");
    fs::create_symlink(fs::canonical(lib), p.site() + "/torch/lib/" + soname);
    if (fs::exists("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"))   // 120 MB: its symbol table is read, not the rest
        fs::create_symlink(fs::canonical("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"), p.site() + "/torch/lib/libtorch_cpu.so");
    auto scan = install::scan_prefix(p.root());
    auto it = std::find_if(scan.extensions.begin(), scan.extensions.end(), [](const install::CompiledExtension& e) { return e.dist == "myops"; });
    REQUIRE(it != scan.extensions.end());
    const auto& x = *it;
    CHECK(x.torch_checked);
    CHECK(x.torch_symbols == 2);
    CHECK(x.missing_torch_symbols == std::vector<std::string>{"_ZN3c1020envlock_not_in_torchEv"});
    CHECK(x.torch_lib_dir == p.site() + "/torch/lib");
}

TEST_CASE("nvcc vs torch's CUDA: the env's own conda nvcc, else nvcc on PATH, is what extensions build with") {
    Prefix p;
    conda_python(p, "3.8.18");
    fake_nvcc(p.dir.path / "bin", "11.3");
    p.python = "3.8";
    pip_install(p.site(), {torch_wheel("1.10.2+cu102", "10.2")});
    auto m = quiet_machine();
    auto r = doctor_of(p, m);
    const auto* f = find_check(r, "cuda-home");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->what == "extensions build with CUDA 11.3 at " + p.root() + " (the env's own nvcc, first on PATH once the env is active), torch 1.10.2+cu102 has CUDA 10.2");
    CHECK(f->severity == install::Severity::error);

    Prefix venv;
    venv.make_venv();
    pip_install(venv.site(), {torch_wheel("2.1.2+cu118", "11.8")});
    TempDir tk;
    fake_nvcc(tk.path / "bin", "12.4");
    m.path_nvcc = tk.str("bin/nvcc");
    auto r2 = doctor_of(venv, m);
    const auto* g = find_check(r2, "cuda-home");
    REQUIRE_MESSAGE(g, describe(r2));
    CHECK(g->what.find("CUDA 12.4 at " + tk.str() + " (nvcc on PATH)") != std::string::npos);
    CHECK(r2.build_nvcc == "CUDA 12.4 at " + tk.str() + " (nvcc on PATH)");
    m.path_nvcc.clear();
    m.cuda_home_set = true;
    m.cuda_home = tk.str();
    m.cuda_home_version = "11.8";
    CHECK(find_check(doctor_of(venv, m), "cuda-home") == nullptr);   // CUDA_HOME wins over PATH
}

TEST_CASE("gcc vs nvcc: verify's host-compiler rule, and the accepted compiler that is here") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {torch_wheel("1.9.1+cu111", "11.1")});
    TempDir bin, usr_local;
    fake_compiler(bin.path, "gcc", "12.2.0");
    fake_compiler(bin.path, "g++", "12.2.0");
    auto m = quiet_machine();
    m.cuda_home_set = true;
    m.cuda_home = "/opt/cuda-11.1";
    m.cuda_home_version = "11.1";
    m.env = {{"PATH", bin.str()}};
    auto r = doctor_of(p, m);
    const auto* f = find_check(r, "host-compiler");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->what.find(bin.str("g++") + " 12.2.0 (the default on PATH) is newer than nvcc 11.1 accepts gcc 10 or older") == 0);
    CHECK(f->why.find("unsupported GNU version") != std::string::npos);
    CHECK(f->fix.find("install a gcc 10 or older") == 0);
    CHECK(f->severity == install::Severity::warning);   // nothing says this env builds extensions
    install::CodeUses code;
    code.dir = "/src/ops";
    code.uses = {{"cuda-extensions", "setup.py:3"}};
    auto built = install::diagnose(install::scan_prefix(p.root()), m, K(), nullptr, "", nullptr, &code);
    REQUIRE(find_check(built, "host-compiler"));
    CHECK(find_check(built, "host-compiler")->severity == install::Severity::error);

    fake_compiler(bin.path, "gcc-10", "10.4.0");
    fake_compiler(bin.path, "g++-10", "10.4.0");
    DetectRoots roots;
    roots.path_env = bin.str();
    roots.usr_local = usr_local.str();
    m.target.compilers = detect_target(roots, K()).compilers;
    auto r2 = doctor_of(p, m);
    const auto* g = find_check(r2, "host-compiler");
    REQUIRE_MESSAGE(g, describe(r2));
    CHECK(g->fix.find("export CC=" + bin.str("gcc-10") + " CXX=" + bin.str("g++-10") + " NVCC_CCBIN=" + bin.str("g++-10")) == 0);
}

TEST_CASE("CPU flags and WSL against the installed binaries (knowledge: target_warnings)") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {torch_wheel("1.10.0+cu111", "11.1")});
    auto m = quiet_machine();
    m.target.cpu_flags = {"sse4_2", "popcnt"};
    auto r = doctor_of(p, m);
    const auto* avx = find_check(r, "target:torch-cpu-without-avx");
    REQUIRE_MESSAGE(avx, describe(r));
    CHECK(avx->severity == install::Severity::error);
    CHECK(avx->what == "torch 1.10.0+cu111 on a CPU without avx");
    CHECK(avx->why.find("Illegal instruction") != std::string::npos);
    CHECK(avx->why.find("pytorch/pytorch/issues/37577") != std::string::npos);

    m.target.cpu_flags = {"sse4_2", "avx", "avx2"};
    m.target.wsl = true;
    m.target.gpus = {{"NVIDIA GeForce RTX 3090", 8, 6}, {"NVIDIA GeForce RTX 3090", 8, 6}};
    m.target.driver_version = "535.104.05";
    m.target.driver_cuda = "12.2";
    auto r2 = doctor_of(p, m);
    CHECK(find_check(r2, "target:torch-cpu-without-avx") == nullptr);
    const auto* nccl = find_check(r2, "target:torch-bundled-nccl-wsl-multi-gpu");
    REQUIRE_MESSAGE(nccl, describe(r2));
    CHECK(nccl->what == "torch 1.10.0+cu111 on WSL, 2 GPUs");
    CHECK(nccl->severity == install::Severity::warning);
    m.target.gpus.pop_back();
    CHECK(find_check(doctor_of(p, m), "target:torch-bundled-nccl-wsl-multi-gpu") == nullptr);   // one GPU is fine
}

TEST_CASE("what the code uses: SyncBatchNorm, numpy's removed aliases, torch's tensorboard, numba.cuda, CUDA extensions") {
    TempDir code;
    write_text(code.path / "configs/model.py", "norm_cfg = dict(type='SyncBN', requires_grad=True)\n");
    write_text(code.path / "tools/train.py", "import numpy as np\n# x = np.float(3)  (a comment does not count)\ny = np.float32(1)\nz = np.float(2)\n");
    write_text(code.path / "setup.py", "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n");
    write_text(code.path / "build/lib/ignored.py", "from numba import cuda\n");
    auto uses = code_uses(code.str());
    CHECK(uses["code-uses:torch.nn.SyncBatchNorm"] == "configs/model.py:1");
    CHECK(uses["code-uses:numpy.float-aliases"] == "tools/train.py:4");
    CHECK(uses["cuda-extensions"] == "setup.py:1");
    CHECK(uses.count("numba-cuda") == 0);   // build/ is not the code
    CHECK(uses.count("code-uses:torch.utils.tensorboard") == 0);
    CHECK_THROWS_AS(code_uses(code.str("nope")), InputError);
}

TEST_CASE("advisories whose needs: depend on the code: torch < 1.6's SyncBatchNorm, numpy >= 1.24's aliases") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {torch_wheel("1.4.0", "10.1"), {"numpy", "1.24.4", {}, {}, {}}});
    install::CodeUses code;
    code.dir = "/src/paper";
    code.uses = {{"code-uses:torch.nn.SyncBatchNorm", "configs/model.py:1"}, {"code-uses:numpy.float-aliases", "tools/train.py:4"}};
    auto scan = install::scan_prefix(p.root());
    auto without = install::diagnose(scan, quiet_machine(), K());
    CHECK(find_check(without, "advisory:torch-syncbn-uneven-batches") == nullptr);   // no code read: no claim
    CHECK(find_check(without, "advisory:numpy-1.24-removed-aliases") == nullptr);
    auto r = install::diagnose(scan, quiet_machine(), K(), nullptr, "", nullptr, &code);
    const auto* sync = find_check(r, "advisory:torch-syncbn-uneven-batches");
    REQUIRE_MESSAGE(sync, describe(r));
    CHECK(sync->what == "torch 1.4.0 with code using torch.nn.SyncBatchNorm (configs/model.py:1)");
    CHECK(sync->why.find("detectron2") != std::string::npos);
    CHECK(sync->fix.find("-m pip install \"torch>=1.6\"") != std::string::npos);
    const auto* np = find_check(r, "advisory:numpy-1.24-removed-aliases");
    REQUIRE_MESSAGE(np, describe(r));
    CHECK(np->what == "numpy 1.24.4 with code using numpy.float-aliases (tools/train.py:4)");
    CHECK(r.code_dir == "/src/paper");
}

TEST_CASE("`envlock doctor --code DIR`: the code's uses are read and shown, and the advisories they enable are raised") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {torch_wheel("1.5.1", "10.2")});
    TempDir code;
    write_text(code.path / "tools/train.py", "import torch\nmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n");
    auto r = run_envlock({"doctor", "--prefix", p.root(), "--code", code.str(), "--json"});
    CHECK_MESSAGE(r.exit_code == 1, r.out << r.err);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["code"] == code.str());
    CHECK(j["code-uses"]["code-uses:torch.nn.SyncBatchNorm"] == "tools/train.py:2");
    bool raised = false;
    for (const auto& f : j["findings"]) raised |= f["check"] == "advisory:torch-syncbn-uneven-batches";
    CHECK(raised);
    auto text = run_envlock({"doctor", "--prefix", p.root(), "--code", code.str()});
    CHECK(text.out.find("code: " + code.str() + " (--code); uses code-uses:torch.nn.SyncBatchNorm at tools/train.py:2\n") != std::string::npos);
    auto none = run_envlock({"doctor", "--prefix", p.root(), "--code", code.str(), "--no-code", "--json"});
    CHECK(nlohmann::json::parse(none.out).contains("code") == false);
    auto missing = run_envlock({"doctor", "--prefix", p.root(), "--code", code.str("nope")});
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find(code.str("nope")) != std::string::npos);
}
