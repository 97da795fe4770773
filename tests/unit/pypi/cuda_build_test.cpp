// What CUDA a build was made for, read from conda build strings and openmmlab page paths by
// hand-written matchers (issue 21: a std::regex search per record was most of reading builds).
// The regular expressions they stand for are the oracle: std::regex and the matchers must read
// every build string of the snapshots' repodata and every link of their index pages alike.
#include <doctest/doctest.h>

#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "resolver/specs/cuda_build.hpp"

using envlock::CudaBuild;
using envlock::cuda_variant_pinned_by;
using envlock::Ecosystem;
using envlock::IndexRecord;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The reading as the regular expressions give it (cuda_build.cpp before issue 21).
std::optional<CudaBuild> by_regex(const IndexRecord& record) {
    CudaBuild build;
    std::smatch m;
    if (record.ecosystem == Ecosystem::conda) {
        static const std::regex cuda_re("cuda([0-9]+)\\.([0-9]+)");
        static const std::regex variant_re("(^|[^a-z0-9])cu([0-9]{2,3})([^0-9]|$)");
        if (std::regex_search(record.build, m, cuda_re)) build.runtime = m[1].str() + "." + m[2].str();
        else if (std::regex_search(record.build, m, variant_re)) build.runtime = *envlock::cuda_runtime_of_variant("cu" + m[2].str());
        else return std::nullopt;
        build.variant = envlock::variant_of_cuda_runtime(build.runtime);
        return build;
    }
    static const std::regex page_re("/(cu[0-9]{2,3})/torch([0-9]+)\\.([0-9]+)");
    for (const std::string* where : {&record.index, &record.url})
        if (std::regex_search(*where, m, page_re)) {
            build.variant = m[1].str();
            build.runtime = *envlock::cuda_runtime_of_variant(build.variant);
            build.torch_series = m[2].str() + "." + m[3].str();
            return build;
        }
    return std::nullopt;
}

void check_alike(const IndexRecord& r) {
    auto ours = envlock::cuda_build_of(r);
    auto oracle = by_regex(r);
    CAPTURE(r.build);
    CAPTURE(r.index);
    REQUIRE(ours.has_value() == oracle.has_value());
    if (!ours) return;
    CHECK(ours->runtime == oracle->runtime);
    CHECK(ours->variant == oracle->variant);
    CHECK(ours->torch_series == oracle->torch_series);
}

// Texts at the edges of each expression: digits too few or too many, no boundary, no dot.
const std::vector<std::string> kEdges = {
    "", "cu", "cuda", "cuda11", "cuda11.", "cuda.1", "cuda11.1", "cudacuda11.1", "xcuda10.2_0", "py38_cu111", "py38_cu11",
    "py38_cu1", "py38_cu1111", "acu111", "Acu111", "1cu111", "_cu111x", "cu111", "cu92_0", "cu111cu102", "cu1111_cu102",
    "/cu111/torch1.9.0/index.html", "/cu11/torch1.9/", "/cu1/torch1.9/", "/cu1111/torch1.9/", "/cu111/torch1./",
    "/cu111/torch.9/", "/cu111/torch1.9", "/cu111/torch", "/cu111", "/cu111/torch1.9/cu102/torch1.8.0", "/cu1/cu111/torch1.10.0"};

}  // namespace

TEST_CASE("conda build strings: the matchers read every snapshot build as cuda([0-9]+)\\.([0-9]+) then cuXY(Z) at a word boundary do") {
    const std::string snapshots = std::string(ENVLOCK_SHARED_DIR) + "/snapshots";
    std::size_t builds = 0;
    for (const char* file : {"/rattler-pytorch-channel/linux-64/repodata.json", "/mamba-tests-conda-forge-numpy/conda-forge-numpy-linux-64.json",
                             "/conda-tests-defaults-2013-2018/repodata_r_linux-64.json"}) {
        auto doc = nlohmann::json::parse(slurp(snapshots + file));
        for (const char* table : {"packages", "packages.conda"}) {
            if (!doc.contains(table)) continue;
            for (const auto& [name, rec] : doc[table].items()) {
                IndexRecord r;
                r.ecosystem = Ecosystem::conda;
                r.build = rec.value("build", "");
                check_alike(r);
                ++builds;
            }
        }
    }
    for (const auto& text : kEdges) {
        IndexRecord r;
        r.ecosystem = Ecosystem::conda;
        r.build = text;
        check_alike(r);
    }
    CHECK(builds > 1000);
}

TEST_CASE("openmmlab page paths: the matchers read every snapshot link as /(cu[0-9]{2,3})/torch([0-9]+)\\.([0-9]+) does") {
    const std::string snapshots = std::string(ENVLOCK_SHARED_DIR) + "/snapshots";
    std::size_t links = 0;
    static const std::regex href("href=\"([^\"]*)\"");
    for (const char* file : {"/poetry-fixture-openmmlab-mmcv-index/mmcv_torch_releases.html", "/pytorch-torch_stable-html-2021-03/torch_stable.html"}) {
        std::string html = slurp(snapshots + file);
        for (std::sregex_iterator it(html.begin(), html.end(), href), end; it != end; ++it) {
            IndexRecord r;
            r.ecosystem = Ecosystem::pypi;
            r.version = "1.0";
            r.url = (*it)[1].str();
            r.index = "https://download.openmmlab.com/mmcv/dist/" + r.url;
            check_alike(r);
            r.index.clear();
            check_alike(r);
            ++links;
        }
    }
    for (const auto& text : kEdges) {
        IndexRecord r;
        r.ecosystem = Ecosystem::pypi;
        r.version = "1.0";
        r.index = text;
        check_alike(r);
    }
    CHECK(links > 1000);
}

// A plain PyPI torch wheel names its CUDA in its own requirements (METADATA Requires-Dist lines
// as the live index's wheels carry them): the primary source where the knowledge base has no row.
TEST_CASE("the CUDA a plain torch wheel pins: nvidia-cuda-runtime-cuXX==, nvidia-cuda-runtime==, cuda-toolkit[...]==") {
    // torch 2.9.1 (Linux x86_64 wheel's METADATA)
    CHECK(cuda_variant_pinned_by({"filelock", "nvidia-cuda-nvrtc-cu12==12.8.93; platform_system == \"Linux\"",
                                  "nvidia-cuda-runtime-cu12==12.8.90; platform_system == \"Linux\" and platform_machine == \"x86_64\""}) ==
          "cu128");
    // torch 2.15.0: CUDA 13 through NVIDIA's meta-package
    CHECK(cuda_variant_pinned_by({"cuda-toolkit[cublas,cudart,cufft,cufile,cupti,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.2.2; "
                                  "platform_system == \"Linux\"",
                                  "nvidia-cudnn-cu13==9.26.0.51; platform_system == \"Linux\""}) == "cu132");
    CHECK(cuda_variant_pinned_by({"nvidia_cuda_runtime==13.0.96"}) == "cu130");
    CHECK(cuda_variant_pinned_by({"nvidia-cuda-runtime-cu11==11.7.99"}) == "cu117");
    // No pin, a range, or another NVIDIA library: nothing said.
    CHECK(cuda_variant_pinned_by({"numpy", "nvidia-cudnn-cu12==8.9.2.26"}).empty());
    CHECK(cuda_variant_pinned_by({"nvidia-cuda-runtime-cu12>=12.1"}).empty());
    CHECK(cuda_variant_pinned_by({}).empty());
}
