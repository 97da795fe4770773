#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "resolver/specs/errors.hpp"
#include "resolver/lock/json_schema.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "tests/support/scratch.hpp"

namespace kb = envlock::knowledge;
namespace fs = std::filesystem;

namespace envlock::knowledge {
std::vector<std::pair<std::string_view, std::string_view>> embedded_files();  // generated
}

namespace {
const kb::Knowledge& builtin() {
    static const kb::Knowledge k = kb::load_builtin();
    return k;
}
bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }
std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
// YAML -> JSON the plain way (every scalar a string unless it parses as a number), independent
// of the loader, so the schema check here does not lean on the code under test.
nlohmann::json plain_json(const YAML::Node& n) {
    if (n.IsMap()) {
        nlohmann::json o = nlohmann::json::object();
        for (const auto& kv : n) o[kv.first.Scalar()] = plain_json(kv.second);
        return o;
    }
    if (n.IsSequence()) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& x : n) a.push_back(plain_json(x));
        return a;
    }
    if (n.IsNull()) return nullptr;
    const std::string& s = n.Scalar();
    if (n.Tag() != "!") {
        if (s == "true") return true;
        if (s == "false") return false;
        if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            return std::stoll(s);
    }
    return s;
}
}  // namespace

TEST_CASE("every knowledge file validates against schemas/knowledge.schema.json") {
    fs::path src = ENVLOCK_SOURCE_DIR;
    auto schema = nlohmann::json::parse(read(src / "schemas/knowledge.schema.json"));
    int files = 0;
    for (const auto& entry : fs::directory_iterator(src / "resolver/knowledge")) {
        if (entry.path().extension() != ".yaml") continue;
        ++files;
        auto doc = plain_json(YAML::LoadFile(entry.path().string()));
        auto v = envlock::validate(schema, doc);
        INFO(entry.path().filename().string() << ": " << envlock::describe(v));
        CHECK(v.empty());
    }
    CHECK(files >= 7);
}

TEST_CASE("every row of every table names a source") {
    const auto& k = builtin();
    for (const auto& r : k.cuda_drivers) CHECK(!r.source.empty());
    for (const auto& r : k.nvcc_targets) CHECK(!r.source.empty());
    for (const auto& r : k.gpus) CHECK(!r.source.empty());
    for (const auto& r : k.host_compilers) CHECK(!r.source.empty());
    for (const auto& r : k.torch_releases) CHECK(!r.source.empty());
    for (const auto& r : k.torch_arch_lists) CHECK(!r.source.empty());
    for (const auto& r : k.mmcv_wheels) CHECK(!r.source.empty());
    for (const auto& r : k.gates) CHECK(!r.source.empty());
    for (const auto& r : k.numba) CHECK(!r.source.empty());
    for (const auto& r : k.advisories) CHECK(!r.source.empty());
    CHECK(k.version.size() == 64);
}

TEST_CASE("rows the facts left unverified stay marked unverified") {
    const auto& k = builtin();
    const kb::GpuRow* ti = kb::find_gpu(k, "NVIDIA GeForce RTX 2080 Ti");
    REQUIRE(ti != nullptr);
    CHECK(ti->unverified);
    auto h102 = kb::host_compiler_limit(k, "10.2");
    REQUIRE(h102);
    CHECK(h102->unverified);
    CHECK_FALSE(kb::host_compiler_limit(k, "11.1")->unverified);
    const kb::CppExtensionRow* cpp = kb::torch_cpp_extension_row(k, "1.9.1");
    REQUIRE(cpp != nullptr);
    CHECK(cpp->unverified);
    CHECK(!k.unverified.empty());
}

// ---------------------------------------------------------------- arch rules

TEST_CASE("SASS runs on the same major with an equal or higher minor") {
    CHECK(kb::sass_runs_on(86, 86));
    CHECK(kb::sass_runs_on(86, 89));   // sm_86 code runs on an RTX 4090
    CHECK(kb::sass_runs_on(80, 86));
    CHECK_FALSE(kb::sass_runs_on(86, 90));   // not across majors
    CHECK_FALSE(kb::sass_runs_on(89, 86));   // not backwards
    CHECK_FALSE(kb::sass_runs_on(90, 100));
    CHECK(kb::sass_runs_on(120, 121));
}

TEST_CASE("PTX JITs forward to any newer GPU, never backward") {
    kb::ArchList ptx120{{75, 80, 86, 90, 100, 120}, {120}};
    CHECK(kb::arch_list_runs_on(ptx120, 120));
    CHECK(kb::arch_list_runs_on(ptx120, 121));
    CHECK(kb::arch_list_runs_on(ptx120, 130));   // a future GPU: only the PTX covers it
    CHECK_FALSE(kb::arch_list_runs_on(ptx120, 70));
    CHECK_FALSE(kb::arch_list_runs_on({{}, {120}}, 110));
    CHECK(kb::arch_list_runs_on({{}, {37}}, 61));
}

TEST_CASE("arch lists parse in TORCH_CUDA_ARCH_LIST syntax") {
    auto a = kb::parse_arch_list("3.7+PTX;5.0;6.0;6.1;7.0");
    CHECK(a.sass == std::vector<int>{37, 50, 60, 61, 70});
    CHECK(a.ptx == std::vector<int>{37});
    CHECK(kb::parse_arch_list("8.6 9.0 12.0+PTX").ptx == std::vector<int>{120});
    CHECK_THROWS_AS(kb::parse_arch_list("8.6;sm_90"), envlock::InputError);
    CHECK(kb::describe(a) == "sm_37 sm_50 sm_60 sm_61 sm_70 compute_37");
}

TEST_CASE("sm spellings") {
    CHECK(kb::parse_sm("sm_89") == 89);
    CHECK(kb::parse_sm("sm89") == 89);
    CHECK(kb::parse_sm("compute_120") == 120);
    CHECK(kb::parse_sm("8.9") == 89);
    CHECK(kb::parse_sm("12.0") == 120);
    CHECK(kb::parse_sm("sm_90a") == 90);
    CHECK_FALSE(kb::parse_sm("RTX 4090"));
    CHECK_FALSE(kb::parse_sm("8.10"));
    CHECK(kb::cc_name(120) == "12.0");
}

// ---------------------------------------------------------------- driver

TEST_CASE("a driver's newest CUDA is the newest toolkit whose own driver it meets") {
    const auto& k = builtin();
    CHECK(kb::driver_max_cuda(k, "525.60.13") == "12.0");
    CHECK(kb::driver_max_cuda(k, "535.104.05") == "12.2");
    CHECK(kb::driver_max_cuda(k, "470.82.01") == "11.4");
    CHECK(kb::driver_max_cuda(k, "455.23.05") == "11.1");
    CHECK(kb::driver_max_cuda(k, "580.95.05") == "13.0");
    CHECK_FALSE(kb::driver_max_cuda(k, "390.1"));
    CHECK_FALSE(kb::driver_max_cuda(k, "latest"));
}

TEST_CASE("minimum drivers per toolkit") {
    const auto& k = builtin();
    CHECK(kb::min_driver_for_cuda(k, "11.1") == "455.23");
    CHECK(kb::min_driver_for_cuda(k, "11.1.1") == "455.32");
    CHECK(kb::min_driver_for_cuda(k, "11.0") == "450.51.05");   // the RC row does not count
    CHECK(kb::min_driver_for_cuda(k, "12.0", true) == "527.41");
    CHECK_FALSE(kb::min_driver_for_cuda(k, "12.7"));
}

TEST_CASE("driver/CUDA pairs, with minor-version compatibility from CUDA 11 on") {
    const auto& k = builtin();
    CHECK(kb::driver_runs_cuda(k, "525.60.13", "12.0"));
    CHECK(kb::driver_runs_cuda(k, "525.60.13", "11.1"));
    CHECK(kb::driver_runs_cuda(k, "525.60.13", "12.4"));          // 12.x MVC from 525
    CHECK_FALSE(kb::driver_runs_cuda_fully(k, "525.60.13", "12.4"));
    CHECK(kb::driver_runs_cuda(k, "450.80.02", "11.8"));          // 11.x MVC from 450.80.02
    CHECK_FALSE(kb::driver_runs_cuda(k, "450.51.05", "11.1"));
    CHECK_FALSE(kb::driver_runs_cuda(k, "520.61.05", "12.0"));    // 12.x needs >= 525
    CHECK(kb::driver_runs_cuda(k, "440.33", "10.2"));
    CHECK_FALSE(kb::driver_runs_cuda(k, "418.39", "10.2"));       // no MVC before 11
    CHECK_FALSE(kb::driver_runs_cuda(k, "535.104.05", "13.0"));
    CHECK(kb::driver_runs_cuda(k, "580.65.06", "13.0"));
}

// ---------------------------------------------------------------- GPUs, nvcc, compilers

TEST_CASE("GPU names as nvidia-smi prints them resolve to compute capabilities") {
    const auto& k = builtin();
    using P = std::pair<int, int>;
    CHECK(kb::gpu_compute_capability(k, "RTX 4090") == P{8, 9});
    CHECK(kb::gpu_compute_capability(k, "NVIDIA GeForce RTX 4090") == P{8, 9});
    CHECK(kb::gpu_compute_capability(k, "sm_89") == P{8, 9});
    CHECK(kb::gpu_compute_capability(k, "NVIDIA GeForce RTX 3090") == P{8, 6});
    CHECK(kb::gpu_compute_capability(k, "NVIDIA A100-SXM4-80GB") == P{8, 0});
    CHECK(kb::gpu_compute_capability(k, "NVIDIA H100 80GB HBM3") == P{9, 0});
    CHECK(kb::gpu_compute_capability(k, "Tesla V100-SXM2-16GB") == P{7, 0});
    CHECK(kb::gpu_compute_capability(k, "NVIDIA GeForce GTX 1080 Ti") == P{6, 1});
    CHECK(kb::gpu_compute_capability(k, "NVIDIA L40S") == P{8, 9});
    CHECK(kb::gpu_compute_capability(k, "NVIDIA GeForce RTX 5090") == P{12, 0});
    CHECK_FALSE(kb::gpu_compute_capability(k, "Radeon RX 7900"));
    CHECK_FALSE(kb::gpu_compute_capability(k, ""));
}

TEST_CASE("nvcc targets per toolkit") {
    const auto& k = builtin();
    auto t111 = kb::nvcc_sm_targets(k, "11.1");
    CHECK(contains(t111, 86));
    CHECK_FALSE(contains(t111, 89));
    CHECK_FALSE(contains(kb::nvcc_sm_targets(k, "11.0"), 86));
    auto t130 = kb::nvcc_sm_targets(k, "13.0.88");
    CHECK(t130.front() == 75);
    CHECK(contains(t130, 120));
    CHECK_FALSE(contains(t130, 70));
    CHECK_FALSE(contains(kb::nvcc_sm_targets(k, "12.0"), 37));
    CHECK(kb::nvcc_sm_targets(k, "7.5").empty());
}

TEST_CASE("newest host compilers nvcc accepts") {
    const auto& k = builtin();
    CHECK(kb::newest_gcc_major(k, "11.1") == 10);
    CHECK(kb::newest_gcc_major(k, "11.1.105") == 10);
    CHECK(kb::newest_gcc_major(k, "12.0") == 12);
    CHECK(kb::newest_gcc_major(k, "13.0") == 15);
    CHECK(kb::newest_clang_major(k, "13.0") == 20);
    CHECK_FALSE(kb::newest_clang_major(k, "11.0"));
    CHECK_FALSE(kb::newest_gcc_major(k, "8.0"));
}

// ---------------------------------------------------------------- torch

TEST_CASE("torch 1.9.1 cu111 wheels carry SASS for sm_37..sm_86 and no PTX") {
    const auto& k = builtin();
    auto a = kb::torch_arch_list(k, "1.9.1", "cu111", "pip");
    REQUIRE(a);
    CHECK(a->sass == std::vector<int>{37, 50, 60, 70, 75, 80, 86});
    CHECK(a->ptx.empty());
    CHECK(kb::arch_list_runs_on(*a, 86));
    CHECK(kb::arch_list_runs_on(*a, 89));    // sm_86 SASS runs on the 4090
    CHECK_FALSE(kb::arch_list_runs_on(*a, 90));   // H100: no
    CHECK(kb::torch_arch_list(k, "1.9.1+cu111", "", "pip")->sass == a->sass);
}

TEST_CASE("torch cu102 wheels have no sm_8x, so an RTX 3090 cannot run them") {
    const auto& k = builtin();
    for (const char* v : {"1.9.1", "1.10.0", "1.12.1"}) {
        auto a = kb::torch_arch_list(k, v, "cu102", "pip");
        REQUIRE(a);
        for (int sm : a->sass) CHECK(sm < 80);
        CHECK_FALSE(kb::arch_list_runs_on(*a, 86));
    }
}

TEST_CASE("torch cu128 drops Pascal; 2.7 cu128 carries compute_120 PTX") {
    const auto& k = builtin();
    auto a = kb::torch_arch_list(k, "2.7.1", "cu128", "pip");
    REQUIRE(a);
    CHECK_FALSE(kb::arch_list_runs_on(*a, 61));   // GTX 1080 Ti
    CHECK(a->ptx == std::vector<int>{120});
    CHECK(kb::arch_list_runs_on(*a, 121));
}

TEST_CASE("conda torch builds have their own arch lists with compute_37 PTX") {
    const auto& k = builtin();
    auto a = kb::torch_arch_list(k, "1.9.1", "11.1", "conda");
    REQUIRE(a);
    CHECK(a->ptx == std::vector<int>{37});
    CHECK(contains(a->sass, 61));
    CHECK(kb::arch_list_runs_on(*a, 90));   // PTX JIT covers Hopper
    CHECK(kb::torch_arch_list(k, "1.9.1", "cpu", "pip")->sass.empty());
    CHECK_FALSE(kb::torch_arch_list(k, "1.9.1", "cu118", "pip"));
    CHECK_FALSE(kb::torch_arch_list(k, "1.1.0", "cu111", "pip"));
}

TEST_CASE("torch releases: Python range, variants, pairing") {
    const auto& k = builtin();
    auto r = kb::torch_release(k, "1.9.1+cu111");
    REQUIRE(r);
    CHECK(r->python_min == "3.6");
    CHECK(r->python_max == "3.9");
    CHECK(r->variants == std::vector<std::string>{"cu102", "cu111", "cpu"});
    CHECK(r->torchvision == "0.10.1");
    CHECK(r->torchaudio == "0.9.1");
    auto series = kb::torch_release(k, "2.1.2");
    REQUIRE(series);
    CHECK(series->version == "2.1.x");
    CHECK(series->variants_unverified);
    CHECK_FALSE(kb::torch_release(k, "0.4.1"));
}

TEST_CASE("torch 1.9's cpp_extension does not know arch 8.9; 2.0's does") {
    const auto& k = builtin();
    auto a19 = kb::torch_cpp_extension_archs(k, "1.9.1");
    CHECK(std::find(a19.begin(), a19.end(), "8.6") != a19.end());
    CHECK(std::find(a19.begin(), a19.end(), "8.9") == a19.end());
    auto a20 = kb::torch_cpp_extension_archs(k, "2.0.1");
    CHECK(std::find(a20.begin(), a20.end(), "8.9") != a20.end());
}

// ---------------------------------------------------------------- OpenMMLab, numba, advisories

TEST_CASE("mmcv-full 1.4.0 has a cu111/torch1.9 wheel page") {
    auto wheels = kb::mmcv_wheels(builtin(), "mmcv-full");
    auto it = std::find_if(wheels.begin(), wheels.end(), [](const kb::MmcvWheel& w) {
        return w.mmcv_version == "1.4.0" && w.cuda == "11.1" && w.torch == "1.9" && w.os == "Linux";
    });
    REQUIRE(it != wheels.end());
    CHECK(it->index_url == "https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html");
    for (const auto& w : kb::mmcv_wheels(builtin(), "mmcv")) CHECK(w.mmcv_version.rfind("2.", 0) == 0);
}

TEST_CASE("mmdet3d 0.17.1 gates mmcv-full, mmdet, mmseg and pins numba/numpy") {
    std::vector<std::string> reqs;
    for (const auto& g : kb::gates(builtin()))
        if (g.package == "mmdet3d" && g.version_spec == "==0.17.1") reqs.push_back(g.requires_spec);
    auto has = [&](const char* r) { return std::find(reqs.begin(), reqs.end(), r) != reqs.end(); };
    CHECK(has("mmcv-full>=1.3.8,<=1.4.0"));
    CHECK(has("mmdet>=2.14.0,<=3.0.0"));
    CHECK(has("mmsegmentation>=0.14.1,<=1.0.0"));
    CHECK(has("numba==0.48.0"));
    CHECK(has("numpy<1.20.0"));
}

TEST_CASE("numba releases carry their numpy/llvmlite/python ranges and CUDA limits") {
    const auto& k = builtin();
    auto n = kb::numba_release(k, "0.48.0");
    REQUIRE(n);
    CHECK(n->llvmlite == ">=0.31.0dev0,<0.32.0");
    CHECK(kb::numba_release(k, "0.54.1")->numpy == ">=1.17,<1.21");
    auto limits = kb::numba_cuda_limits(k);
    REQUIRE(!limits.empty());
    CHECK(limits.front().numba == "<0.53");
    CHECK(limits.front().cuda == ">=11.2");
}

TEST_CASE("advisories from the cases are present with their combination") {
    const auto& k = builtin();
    auto find = [&](const std::string& id) {
        for (const auto& a : kb::advisories(k)) if (a.id == id) return a;
        FAIL("no advisory " << id);
        return kb::Advisory{};
    };
    CHECK(find("yapf-0.40.2-mmcv-full-config").when == std::vector<std::string>{"yapf>=0.40.2", "mmcv-full<1.7.2"});
    CHECK(find("numba-cuda-nvvm70").needs == "numba-cuda, cuda>=11.2");
    CHECK(find("numpy-1.24-removed-aliases").when == std::vector<std::string>{"numpy>=1.24"});
    CHECK(find("setuptools-distutils-version-torch-tensorboard").when.size() == 3);
    CHECK(find("numba-0.48-numpy-1.20").fix.find("numpy<1.20.0") != std::string::npos);
}

// ---------------------------------------------------------------- user files

TEST_CASE("a user knowledge file adds and overrides rows, and changes the version") {
    auto k = kb::load_texts({{"site.yaml", R"(
gpus:
  - {name: "NVIDIA GeForce RTX 3080", cc: "8.6", source: "site inventory"}
  - {name: "GeForce RTX 4090", cc: "8.8", source: "deliberately wrong, to see the override"}
advisories:
  - id: yapf-0.40.2-mmcv-full-config
    when: ["yapf==0.40.2"]
    symptom: s
    fix: f
    source: site
)"}});
    CHECK(kb::gpu_compute_capability(k, "RTX 3080") == std::make_pair(8, 6));
    CHECK(kb::gpu_compute_capability(k, "RTX 4090") == std::make_pair(8, 8));
    int n = 0;
    for (const auto& a : kb::advisories(k))
        if (a.id == "yapf-0.40.2-mmcv-full-config") { ++n; CHECK(a.source == "site"); }
    CHECK(n == 1);
    CHECK(k.version != builtin().version);
    CHECK(k.files.back() == "site.yaml");
}

TEST_CASE("a bad user knowledge file is an InputError naming file, line and rule") {
    try {
        kb::load_texts({{"site.yaml", "gpus:\n  - name: RTX 9999\n    cc: 9.9.9\n    source: me\n"}});
        FAIL("expected InputError");
    } catch (const envlock::InputError& e) {
        std::string m = e.what();
        CHECK(m.find("site.yaml:3:") == 0);
        CHECK(m.find("/gpus/0/cc") != std::string::npos);
    }
    CHECK_THROWS_AS(kb::load_texts({{"x.yaml", "gpus: [\n"}}), envlock::InputError);
    CHECK_THROWS_AS(kb::load_texts({{"x.yaml", "gpu: []\n"}}), envlock::InputError);   // typo'd table
    CHECK_THROWS_AS(kb::load({"/nonexistent/knowledge.yaml"}), envlock::InputError);
}

TEST_CASE("cpp_extension's nvcc check: minor mismatch warns, major mismatch fails") {
    const auto& k = builtin();
    CHECK(kb::cpp_extension_cuda_check(k, "11.1", "11.1.105") == "ok");
    CHECK(kb::cpp_extension_cuda_check(k, "11.1", "11.3") == "warning");
    CHECK(kb::cpp_extension_cuda_check(k, "11.1", "12.1") == "error");
}

TEST_CASE("a knowledge folder lists its YAML files in name order") {
    auto dir = envlock::test::scratch_dir("knowledge-dir");
    std::ofstream(dir / "b.yaml") << "gpus: []\n";
    std::ofstream(dir / "a.yml") << "gpus: []\n";
    std::ofstream(dir / "notes.txt") << "x\n";
    auto files = kb::knowledge_files_in(dir.string());
    fs::remove_all(dir);
    REQUIRE(files.size() == 2);
    CHECK(fs::path(files[0]).filename() == "a.yml");
    CHECK(kb::knowledge_files_in("/nonexistent/dir").empty());
}

TEST_CASE("Windows drivers are placed by the Windows column") {
    const auto& k = builtin();
    CHECK(kb::driver_max_cuda(k, "527.41", true) == "12.0");
    CHECK(kb::driver_max_cuda(k, "527.41", false) == "12.0");
    CHECK(kb::driver_max_cuda(k, "456.38", true) == "11.1");
    CHECK(kb::driver_max_cuda(k, "456.38", false) == "11.1");
    CHECK(kb::driver_max_cuda(k, "525.60.13", true) == "11.8");   // below 12.0's Windows driver 527.41
}

// Issue 21: the embedded files (JSON made at build time) are read with simdjson, a user's files
// with yaml-cpp and nlohmann; JSON is YAML, so each embedded file given as a user file both ways
// must give the same rows, field for field, merged the same way.
TEST_CASE("the embedded JSON reader gives the rows the YAML reader gives for the same file") {
    int compared = 0;
    for (const auto& [name, text] : kb::embedded_files()) {
        if (name.size() < 10 || name.substr(name.size() - 10) != ".yaml.json") continue;
        CAPTURE(name);
        std::string stem(name.substr(0, name.size() - 5));
        kb::Knowledge by_simdjson = kb::load_texts({{"user-" + stem + ".json", std::string(text)}});
        kb::Knowledge by_yaml = kb::load_texts({{"user-" + stem, std::string(text)}});
        CHECK(by_simdjson.facts.size() == by_yaml.facts.size());
        for (auto& f : by_simdjson.facts) if (f.file == "user-" + stem + ".json") f.file = "user-" + stem;
        for (auto& u : by_simdjson.unverified) if (u.file == "user-" + stem + ".json") u.file = "user-" + stem;
        by_simdjson.files = by_yaml.files;
        by_simdjson.version = by_yaml.version;
        CHECK(by_simdjson == by_yaml);
        ++compared;
    }
    CHECK(compared >= 8);
}
