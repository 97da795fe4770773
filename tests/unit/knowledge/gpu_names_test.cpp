// GPU names (issue 19, item 5): the table covers NVIDIA's data-centre, workstation and GeForce
// GPUs from Maxwell to Blackwell, each row sourced; names match as users type them and drivers
// report them; an unknown name gets the nearest known ones; sm_XY works for anything else.
// The architecture cases cite the page each compute capability was read from:
//   https://developer.nvidia.com/cuda-gpus (7.5 and up) and
//   https://developer.nvidia.com/cuda-legacy-gpus (7.2 and down).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "resolver/knowledge/knowledge.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

namespace kb = envlock::knowledge;
using envlock::test::run_envlock;
using nlohmann::json;
using CC = std::pair<int, int>;

namespace {

const kb::Knowledge& builtin() {
    static const kb::Knowledge k = kb::load_builtin();
    return k;
}

std::optional<CC> cc(std::string_view name) { return kb::gpu_compute_capability(builtin(), name); }

std::string row_name(std::string_view name) {
    const kb::GpuRow* row = kb::find_gpu(builtin(), name);
    return row ? row->name : "";
}

bool offers(const std::vector<std::string>& near, const std::string& name) {
    return std::find(near.begin(), near.end(), name) != near.end();
}

}  // namespace

TEST_CASE("Maxwell: cuda-legacy-gpus rows 5.0, 5.2 and 5.3") {
    CHECK(cc("GeForce GTX 750 Ti") == CC{5, 0});
    CHECK(cc("Quadro K2200") == CC{5, 0});
    CHECK(cc("Tesla M40") == CC{5, 2});
    CHECK(cc("Tesla M60") == CC{5, 2});
    CHECK(cc("GeForce GTX 980 Ti") == CC{5, 2});
    CHECK(cc("GeForce GTX TITAN X") == CC{5, 2});
    CHECK(cc("Quadro M6000 24GB") == CC{5, 2});
    CHECK(cc("Jetson Nano") == CC{5, 3});
}

TEST_CASE("Pascal: cuda-legacy-gpus rows 6.0, 6.1 and 6.2") {
    CHECK(cc("Tesla P100") == CC{6, 0});
    CHECK(cc("Quadro GP100") == CC{6, 0});
    CHECK(cc("Tesla P40") == CC{6, 1});
    CHECK(cc("Quadro P5000") == CC{6, 1});
    CHECK(cc("NVIDIA TITAN Xp") == CC{6, 1});
    CHECK(cc("GeForce GTX 1070 Ti") == CC{6, 1});
    CHECK(cc("Jetson TX2") == CC{6, 2});
}

TEST_CASE("the Pascal TITAN X (6.1) and the Maxwell GTX TITAN X (5.2) are told apart as the legacy page does") {
    // The driver reports the Pascal card as "NVIDIA TITAN X (Pascal)".
    CHECK(cc("NVIDIA TITAN X (Pascal)") == CC{6, 1});
    CHECK(cc("GeForce GTX TITAN X") == CC{5, 2});
}

TEST_CASE("Volta: cuda-legacy-gpus rows 7.0 and 7.2") {
    CHECK(cc("NVIDIA V100") == CC{7, 0});
    CHECK(cc("Quadro GV100") == CC{7, 0});
    CHECK(cc("NVIDIA TITAN V") == CC{7, 0});
    CHECK(cc("Jetson AGX Xavier") == CC{7, 2});
    CHECK(cc("Jetson Xavier NX") == CC{7, 2});
}

TEST_CASE("Turing 7.5: rows past the retrievable part of cuda-gpus come from copies and stay marked unverified") {
    CHECK(cc("NVIDIA T4") == CC{7, 5});
    for (const char* name : {"NVIDIA TITAN RTX", "Quadro RTX 8000", "NVIDIA T1000", "GeForce RTX 2080 Ti", "GeForce RTX 2060"}) {
        CAPTURE(name);
        const kb::GpuRow* row = kb::find_gpu(builtin(), name);
        REQUIRE(row != nullptr);
        CHECK(CC{row->major, row->minor} == CC{7, 5});
        CHECK(row->unverified);
        CHECK(!row->why.empty());
    }
}

TEST_CASE("Ampere: cuda-gpus rows 8.0, 8.6 and 8.7") {
    CHECK(cc("NVIDIA A100") == CC{8, 0});
    CHECK(cc("NVIDIA A30") == CC{8, 0});
    CHECK(cc("NVIDIA A10") == CC{8, 6});
    CHECK(cc("NVIDIA A2") == CC{8, 6});
    CHECK(cc("NVIDIA RTX A6000") == CC{8, 6});
    CHECK(cc("NVIDIA RTX A2000") == CC{8, 6});
    CHECK(cc("GeForce RTX 3090") == CC{8, 6});
    CHECK(cc("Jetson AGX Orin") == CC{8, 7});
    CHECK(cc("Jetson Orin Nano") == CC{8, 7});
}

TEST_CASE("the GPUs the issue named: A10G (not on NVIDIA's page, so unverified), RTX 3060, TITAN RTX") {
    const kb::GpuRow* a10g = kb::find_gpu(builtin(), "NVIDIA A10G");
    REQUIRE(a10g != nullptr);
    CHECK(CC{a10g->major, a10g->minor} == CC{8, 6});
    CHECK(a10g->unverified);
    CHECK(a10g->why.find("not on developer.nvidia.com/cuda-gpus") != std::string::npos);
    CHECK(cc("NVIDIA GeForce RTX 3060") == CC{8, 6});
    CHECK(cc("NVIDIA TITAN RTX") == CC{7, 5});
}

TEST_CASE("Ada: cuda-gpus row 8.9") {
    CHECK(cc("NVIDIA L4") == CC{8, 9});
    CHECK(cc("NVIDIA L40S") == CC{8, 9});
    CHECK(cc("NVIDIA RTX 4000 SFF Ada") == CC{8, 9});
    CHECK(cc("GeForce RTX 4060 Ti") == CC{8, 9});
    CHECK(cc("GeForce RTX 4050") == CC{8, 9});
}

TEST_CASE("Hopper: cuda-gpus row 9.0") {
    CHECK(cc("NVIDIA H100") == CC{9, 0});
    CHECK(cc("NVIDIA H200") == CC{9, 0});
    CHECK(cc("NVIDIA GH200") == CC{9, 0});
}

TEST_CASE("Blackwell: cuda-gpus rows 10.0, 10.3, 11.0, 12.0 and 12.1") {
    CHECK(cc("NVIDIA B200") == CC{10, 0});
    CHECK(cc("NVIDIA GB200") == CC{10, 0});
    CHECK(cc("NVIDIA GB300") == CC{10, 3});
    CHECK(cc("Jetson T4000") == CC{11, 0});
    CHECK(cc("Jetson T5000") == CC{11, 0});
    CHECK(cc("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition") == CC{12, 0});
    CHECK(cc("NVIDIA RTX PRO 2000 Blackwell") == CC{12, 0});
    CHECK(cc("GeForce RTX 5050") == CC{12, 0});
    CHECK(cc("NVIDIA GB10") == CC{12, 1});
}

TEST_CASE("every row is sourced, cites NVIDIA's pages unless marked unverified, and covers 5.0 through 12.1") {
    std::set<int> sms;
    for (const auto& row : builtin().gpus) {
        CAPTURE(row.name);
        CHECK(!row.source.empty());
        if (row.unverified) CHECK(!row.why.empty());
        sms.insert(row.major * 10 + row.minor);
    }
    for (int sm : {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121}) CHECK(sms.count(sm) == 1);
    int from_nvidia = 0;
    for (const auto& row : builtin().gpus)
        if (row.source.rfind("https://developer.nvidia.com/cuda-", 0) == 0) ++from_nvidia;
    CHECK(from_nvidia >= 120);
}

TEST_CASE("each row's own name finds that row: exact matching is unambiguous") {
    for (const auto& row : builtin().gpus) {
        CAPTURE(row.name);
        CHECK(kb::find_gpu(builtin(), row.name) == &row);
    }
}

TEST_CASE("names match with or without NVIDIA, GeForce or Tesla, in any case and spacing") {
    CHECK(row_name("RTX 4090") == "GeForce RTX 4090");
    CHECK(row_name("NVIDIA GeForce RTX 4090") == "GeForce RTX 4090");
    CHECK(row_name("geforce rtx 4090") == "GeForce RTX 4090");
    CHECK(row_name("RTX4090") == "GeForce RTX 4090");
    CHECK(row_name("Tesla T4") == "NVIDIA T4");
    CHECK(row_name("T4") == "NVIDIA T4");
    CHECK(row_name("P100") == "Tesla P100");
    CHECK(row_name("nvidia a10g") == "NVIDIA A10G");
}

TEST_CASE("names as drivers report them: memory, form factor and edition suffixes") {
    CHECK(row_name("NVIDIA A100-SXM4-80GB") == "NVIDIA A100");
    CHECK(row_name("NVIDIA A100-PCIE-40GB") == "NVIDIA A100");
    CHECK(row_name("NVIDIA A100 80GB PCIe") == "NVIDIA A100");
    CHECK(row_name("Tesla V100-SXM2-16GB") == "NVIDIA V100");
    CHECK(row_name("Tesla V100-PCIE-32GB") == "NVIDIA V100");
    CHECK(row_name("NVIDIA H100 80GB HBM3") == "NVIDIA H100");
    CHECK(row_name("NVIDIA H100 PCIe") == "NVIDIA H100");
    CHECK(row_name("NVIDIA H100 NVL") == "NVIDIA H100");
    CHECK(row_name("NVIDIA GH200 480GB") == "NVIDIA GH200");
    CHECK(row_name("NVIDIA RTX 6000 Ada Generation") == "NVIDIA RTX 6000 Ada");
    CHECK(row_name("NVIDIA GeForce RTX 3060 Laptop GPU") == "GeForce RTX 3060");
    CHECK(row_name("NVIDIA GeForce RTX 3050 4GB Laptop GPU") == "");   // no RTX 3050 row: the page's 8.6 row is cut there
    CHECK(row_name("Quadro M6000 24GB") == "Quadro M6000 24GB");         // a product of its own on the legacy page
    CHECK(row_name("Quadro M6000 12GB") == "Quadro M6000");
}

TEST_CASE("Ti and SUPER are other products: never matched by the shorter name") {
    CHECK(row_name("NVIDIA GeForce RTX 3090 Ti") == "GeForce RTX 3090 Ti");
    CHECK(row_name("NVIDIA GeForce RTX 5070 Ti") == "GeForce RTX 5070 Ti");
    CHECK(row_name("GeForce RTX 4080 SUPER").empty());
    CHECK(row_name("GeForce RTX 2080 SUPER").empty());
    CHECK(row_name("GeForce GTX 1660 Ti").empty());
    CHECK(row_name("NVIDIA GeForce RTX 3090") == "GeForce RTX 3090");
    CHECK(row_name("RTX PRO 6000 Blackwell").empty());   // three products share the prefix
    CHECK(row_name("RTX 6000").empty());                 // Quadro RTX 6000 (7.5) or RTX 6000 Ada (8.9)
}

TEST_CASE("an unknown name gets the nearest known names") {
    const auto& k = builtin();
    CHECK(kb::gpu_names_near(k, "RTX 3090 Tii").front() == "GeForce RTX 3090 Ti");   // a known name, then a typo
    CHECK(kb::gpu_names_near(k, "RTX 3060 Tii").front() == "GeForce RTX 3060");
    CHECK(offers(kb::gpu_names_near(k, "Tesla V100S-PCIE-32GB"), "NVIDIA V100"));
    CHECK(kb::gpu_names_near(k, "3090").front() == "GeForce RTX 3090");
    CHECK(offers(kb::gpu_names_near(k, "3090"), "GeForce RTX 3090 Ti"));
    CHECK(offers(kb::gpu_names_near(k, "NVIDIA A6000"), "NVIDIA RTX A6000"));
    CHECK(offers(kb::gpu_names_near(k, "RTX PRO 6000 Blackwell"), "NVIDIA RTX PRO 6000 Blackwell Server Edition"));
    CHECK(offers(kb::gpu_names_near(k, "GeForce RTX 4080 SUPER"), "GeForce RTX 4080"));
    CHECK(kb::gpu_names_near(k, "Voodoo 3").empty());
    CHECK(kb::unknown_gpu_message(k, "RTX 3090 Tii").find("did you mean 'GeForce RTX 3090 Ti'") != std::string::npos);
    CHECK(kb::unknown_gpu_message(k, "Voodoo 3") == "unknown GPU 'Voodoo 3'");
}

TEST_CASE("sm_XY passes through for any GPU, known or not") {
    CHECK(cc("sm_86") == CC{8, 6});
    CHECK(cc("sm_100") == CC{10, 0});
    CHECK(cc("sm_121") == CC{12, 1});
    auto r = run_envlock({"inspect", "gpu", "sm_75", "--json"});
    CHECK(r.exit_code == 0);
    CHECK(json::parse(r.out)["sm"] == "sm_75");
    auto d = run_envlock({"detect", "--gpu", "sm_89", "--driver", "525.60.13", "--json"});
    REQUIRE(d.exit_code == 0);
    CHECK(json::parse(d.out)["gpus"][0]["sm"] == "sm_89");
}

TEST_CASE("inspect gpu: a known driver name answers, an unknown one exits 2 with did-you-mean") {
    auto ok = run_envlock({"inspect", "gpu", "NVIDIA A10G"});
    CHECK(ok.exit_code == 0);
    CHECK(ok.out.find("sm_86") != std::string::npos);
    auto bad = run_envlock({"inspect", "gpu", "RTX 3090 Tii"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("did you mean 'GeForce RTX 3090 Ti'") != std::string::npos);
}

TEST_CASE("--gpu with an unknown name exits 2 with did-you-mean and the sm_XY way out") {
    auto r = run_envlock({"detect", "--gpu", "TITAN RXT"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("did you mean 'NVIDIA TITAN RTX'") != std::string::npos);
    CHECK(r.err.find("sm_86") != std::string::npos);
}

TEST_CASE("a target file's GPU given by name only gets its sm; an unknown name exits 2 naming the file") {
    auto dir = envlock::test::scratch_dir("gpu-names");
    std::ofstream(dir / "good.yaml") << "gpus:\n- name: NVIDIA A100-SXM4-80GB\n";
    std::ofstream(dir / "bad.yaml") << "gpus:\n- name: NVIDIA A100-SXM4-80GB\n- name: GeForce RTX 3060 Tii\n";
    auto good = run_envlock({"detect", "--target", (dir / "good.yaml").string(), "--json"});
    auto bad = run_envlock({"detect", "--target", (dir / "bad.yaml").string()});
    std::filesystem::remove_all(dir);
    REQUIRE(good.exit_code == 0);
    CHECK(json::parse(good.out)["gpus"][0]["sm"] == "sm_80");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("bad.yaml: gpus[1]") != std::string::npos);
    CHECK(bad.err.find("did you mean 'GeForce RTX 3060 Ti'") == std::string::npos);   // no 3060 Ti row
    CHECK(bad.err.find("'GeForce RTX 3060'") != std::string::npos);
}
