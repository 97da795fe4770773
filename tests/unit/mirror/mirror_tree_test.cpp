// The built tree: every index entry points at a real archive with the digests it claims,
// and the facts the scenarios rely on are there.
#include <doctest/doctest.h>
#include <zstd.h>

#include <map>
#include <regex>
#include <set>

#include "fetch/mirrors.hpp"
#include "tests/mirror/archive.hpp"
#include "tests/mirror/publish.hpp"
#include "tests/unit/mirror/mirror_fixture.hpp"

using namespace envlock::mirror;
using namespace envlock::mirror::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Channel folders under the mirror root: anaconda.org-style channels under conda/, the
// `defaults` channels where repo.anaconda.com has them (pkgs/main, pkgs/r).
const char* kChannels[] = {"conda/pytorch", "conda/nvidia", "conda/conda-forge", "pkgs/main", "pkgs/r"};

// Every record of every channel and subdir: (channel/subdir, filename, record).
std::vector<std::tuple<std::string, std::string, json>> all_records(const fs::path& root) {
    std::vector<std::tuple<std::string, std::string, json>> out;
    for (const char* ch : kChannels)
        for (const char* sd : {"linux-64", "noarch"}) {
            auto doc = read_json(root / ch / sd / "repodata.json");
            for (const char* key : {"packages", "packages.conda"})
                for (auto it = doc[key].begin(); it != doc[key].end(); ++it)
                    out.emplace_back(std::string(ch) + "/" + sd, it.key(), it.value());
        }
    return out;
}

const json* find_record(const fs::path& root, const std::string& channel_subdir, const std::string& filename) {
    static std::map<std::string, json> cache;
    std::string key = (root / channel_subdir).string();
    if (!cache.count(key)) cache[key] = read_json(root / channel_subdir / "repodata.json");
    const json& doc = cache[key];
    for (const char* k : {"packages", "packages.conda"})
        if (doc[k].contains(filename)) return &doc[k][filename];
    return nullptr;
}

std::vector<std::string> hrefs(const std::string& html) {
    std::vector<std::string> out;
    static const std::regex re("href=\"([^\"]+)\"");
    for (std::sregex_iterator it(html.begin(), html.end(), re), end; it != end; ++it) out.push_back((*it)[1]);
    return out;
}

std::string url_unescape(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

// Resolves each href of a find-links page against the page's folder; checks the file's
// sha256 against the fragment. Returns the file names listed.
std::set<std::string> check_find_links(const fs::path& page) {
    std::set<std::string> names;
    for (const auto& h : hrefs(read_file(page))) {
        auto hash = h.find("#sha256=");
        REQUIRE(hash != std::string::npos);
        fs::path file = (page.parent_path() / url_unescape(h.substr(0, hash))).lexically_normal();
        INFO(file.string());
        REQUIRE(fs::exists(file));
        CHECK(sha256_hex_of(read_file(file)) == h.substr(hash + 8));
        names.insert(file.filename().string());
    }
    return names;
}

void check_every_conda_archive(const fs::path& root) {
    auto records = all_records(root);
    REQUIRE(records.size() > 500);
    for (const auto& [where, fn, rec] : records) {
        INFO(where << "/" << fn);
        std::string bytes = read_file(root / where / fn);
        REQUIRE(bytes.size() == rec["size"].get<size_t>());
        CHECK(sha256_hex_of(bytes) == rec["sha256"]);
        CHECK(md5_hex(bytes) == rec["md5"]);
    }
}

// Names some record depends on that no record provides (virtual packages aside).
std::set<std::string> conda_missing(const fs::path& root) {
    std::set<std::string> have, missing;
    auto records = all_records(root);
    for (const auto& [w, f, rec] : records) have.insert(rec["name"].get<std::string>());
    for (const auto& [w, f, rec] : records)
        for (const auto& d : rec["depends"]) {
            std::string name = d.get<std::string>().substr(0, d.get<std::string>().find(' '));
            if (name.rfind("__", 0) != 0 && !have.count(name)) missing.insert(name);
        }
    return missing;
}

}  // namespace

TEST_CASE("every conda archive in the built-in mirror matches the size, sha256 and md5 its repodata gives") {
    check_every_conda_archive(builtin_mirror().dir);
}

TEST_CASE("every conda archive of the mirror from ../shared matches its repodata") {
    if (!shared_mirror()) {
        MESSAGE("skipped: ../shared is absent (set ENVLOCK_SHARED_DIR)");
        return;
    }
    check_every_conda_archive(shared_mirror()->dir);
}

TEST_CASE("repodata.json.zst decompresses to repodata.json") {
    fs::path base = builtin_mirror().dir / "conda" / "conda-forge" / "linux-64" / "repodata.json";
    std::string plain = read_file(base), packed = read_file(base.string() + ".zst");
    std::string out(plain.size(), '\0');
    size_t n = ZSTD_decompress(out.data(), out.size(), packed.data(), packed.size());
    REQUIRE_FALSE(ZSTD_isError(n));
    CHECK(out == plain);
    CHECK(json::parse(plain)["info"]["subdir"] == "linux-64");
}

TEST_CASE("every conda dependency name is provided by some record of the mirror") {
    CHECK(conda_missing(builtin_mirror().dir).empty());
    CHECK(builtin_mirror().info.closure_fillers == 0);
    if (shared_mirror()) {
        auto missing = conda_missing(shared_mirror()->dir);
        CHECK(missing.empty());
        MESSAGE("closure fillers with the real pytorch channel: " << shared_mirror()->info.closure_fillers);
    }
}

TEST_CASE("the pytorch channel has the real build-string shapes and dependency shapes") {
    for (const BuiltMirror* m : {&builtin_mirror(), shared_mirror()}) {
        if (!m) continue;
        INFO(m->dir.string());
        auto* cuda = find_record(m->dir, "conda/pytorch/linux-64", "pytorch-1.9.1-py3.8_cuda11.1_cudnn8.0.5_0.tar.bz2");
        REQUIRE(cuda);
        std::vector<std::string> deps = (*cuda)["depends"];
        CHECK(std::find(deps.begin(), deps.end(), "cudatoolkit >=11.1,<11.2") != deps.end());
        CHECK(std::find(deps.begin(), deps.end(), "python >=3.8,<3.9.0a0") != deps.end());
        CHECK(find_record(m->dir, "conda/pytorch/linux-64", "pytorch-1.9.1-py3.8_cpu_0.tar.bz2"));
        auto* tv = find_record(m->dir, "conda/pytorch/linux-64", "torchvision-0.10.1-py38_cu111.tar.bz2");
        REQUIRE(tv);
        deps = (*tv)["depends"].get<std::vector<std::string>>();
        CHECK(std::find(deps.begin(), deps.end(), "pytorch 1.9.1") != deps.end());
        auto* mutex = find_record(m->dir, "conda/pytorch/noarch", "pytorch-mutex-1.0-cpu.tar.bz2");
        REQUIRE(mutex);
        CHECK((*mutex)["track_features"] == "pytorch-mutex");
    }
}

TEST_CASE("the real pytorch channel records keep their fields but get the mirror's archive digests") {
    if (!shared_mirror()) {
        MESSAGE("skipped: ../shared is absent (set ENVLOCK_SHARED_DIR)");
        return;
    }
    CHECK(shared_mirror()->info.real_pytorch_channel);
    auto* r = find_record(shared_mirror()->dir, "conda/pytorch/linux-64", "pytorch-1.9.1-py3.8_cuda11.1_cudnn8.0.5_0.tar.bz2");
    REQUIRE(r);
    CHECK((*r)["timestamp"] == 1631637658219LL);
    CHECK((*r)["sha256"] != "d5d59f968a435217bb1475325d0f7f62cb2b68290e10414837dc4b6e2c073dca");  // the real 1.5 GB file's
    auto* c = find_record(shared_mirror()->dir, "conda/pytorch/linux-64", "pytorch-2.1.0-py3.10_cuda12.1_cudnn8.9.2_0.tar.bz2");
    REQUIRE(c);
    CHECK((*c)["constrains"][0] == "cpuonly <0");
}

TEST_CASE("CUDA toolkits, nvcc, cuda-version and compilers are in their channels' naming") {
    const fs::path& root = builtin_mirror().dir;
    std::set<std::string> names_versions;
    for (const auto& [where, fn, rec] : all_records(root))
        names_versions.insert(where + " " + rec["name"].get<std::string>() + " " + rec["version"].get<std::string>());
    for (const char* expect :
         {"conda/conda-forge/linux-64 cudatoolkit 10.1.243", "conda/conda-forge/linux-64 cudatoolkit 11.1.1", "conda/conda-forge/linux-64 cudatoolkit 11.8.0",
          "conda/nvidia/linux-64 cuda-nvcc 11.1.105", "conda/nvidia/linux-64 cuda-nvcc 11.8.89", "conda/nvidia/linux-64 cuda-nvcc 12.1.105",
          "conda/conda-forge/noarch cuda-version 11.1", "conda/conda-forge/linux-64 gcc_linux-64 7.5.0", "conda/conda-forge/linux-64 gxx_linux-64 9.5.0",
          "conda/conda-forge/linux-64 gcc 10.4.0", "conda/conda-forge/linux-64 gxx 13.2.0", "pkgs/main/linux-64 numpy-base 1.19.2",
          "conda/conda-forge/linux-64 python 3.6.15", "conda/conda-forge/linux-64 python 3.10.13", "conda/conda-forge/linux-64 python_abi 3.8",
          "conda/conda-forge/linux-64 numba 0.48.0", "conda/conda-forge/linux-64 llvmlite 0.31.0", "conda/conda-forge/noarch pip 23.3.1"}) {
        CHECK_MESSAGE(names_versions.count(expect), expect);
    }
    auto records = all_records(root);
    bool cuda_constraint = false, glibc = false, track = false;
    for (const auto& [where, fn, rec] : records) {
        for (const auto& c : rec.value("constrains", json::array())) cuda_constraint |= c.get<std::string>().rfind("__cuda", 0) == 0;
        for (const auto& d : rec["depends"]) glibc |= d.get<std::string>().rfind("__glibc >=2.17", 0) == 0;
        track |= rec.contains("track_features");
    }
    CHECK(cuda_constraint);
    CHECK(glibc);
    CHECK(track);
}

TEST_CASE("torch_stable.html lists torch/torchvision/torchaudio wheels per the torch table, with working relative links") {
    auto names = check_find_links(builtin_mirror().dir / "whl" / "torch_stable.html");
    for (const char* py : {"cp36-cp36m", "cp37-cp37m", "cp38-cp38", "cp39-cp39"}) {
        CHECK(names.count(std::string("torch-1.9.1+cu111-") + py + "-linux_x86_64.whl"));
        CHECK(names.count(std::string("torch-1.9.1+cu102-") + py + "-linux_x86_64.whl"));
        CHECK(names.count(std::string("torchvision-0.10.1+cu111-") + py + "-linux_x86_64.whl"));
        CHECK(names.count(std::string("torchaudio-0.9.1-") + py + "-linux_x86_64.whl"));
    }
    CHECK_FALSE(names.count("torch-1.9.1+cu111-cp310-cp310-linux_x86_64.whl"));
    CHECK_FALSE(names.count("torch-1.9.1+cu113-cp38-cp38-linux_x86_64.whl"));
    CHECK(names.count("torch-2.0.1+cu118-cp311-cp311-linux_x86_64.whl"));
    CHECK(names.count("torch-2.7.0+cu128-cp313-cp313-manylinux_2_28_x86_64.whl"));
    CHECK(names.count("torch-2.6.0+cu126-cp39-cp39-manylinux_2_28_x86_64.whl"));
    CHECK_FALSE(names.count("torch-2.7.0+cu121-cp310-cp310-manylinux_2_28_x86_64.whl"));
    std::string page = read_file(builtin_mirror().dir / "whl" / "torch_stable.html");
    CHECK(page.find("<a href=\"cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl#sha256=") != std::string::npos);
}

TEST_CASE("torchvision 0.10.1's METADATA pins torch==1.9.1 and needs numpy and pillow") {
    auto file = builtin_mirror().dir / "whl" / "cu111" / "torchvision-0.10.1+cu111-cp38-cp38-linux_x86_64.whl";
    std::string metadata;
    for (const auto& m : read_archive(read_file(file)))
        if (m.path.ends_with(".dist-info/METADATA")) metadata = m.content;
    CHECK(metadata.find("Requires-Dist: torch==1.9.1\n") != std::string::npos);
    CHECK(metadata.find("Requires-Dist: numpy\n") != std::string::npos);
    CHECK(metadata.find("Requires-Dist: pillow>=5.3.0\n") != std::string::npos);
}

TEST_CASE("the per-variant index whl/cu111/torch/ is a PEP 503 page whose links resolve") {
    fs::path page = builtin_mirror().dir / "whl" / "cu111" / "torch" / "index.html";
    auto names = check_find_links(page);
    CHECK(names.count("torch-1.9.1+cu111-cp38-cp38-linux_x86_64.whl"));
    CHECK(read_json(builtin_mirror().dir / "whl" / "cu111" / "torch" / "index.json")["name"] == "torch");
}

TEST_CASE("the openmmlab page cu111/torch1.9.0 lists mmcv-full 1.4.0 for cp36-cp39 with links like the real one") {
    fs::path page = builtin_mirror().dir / "mmcv" / "dist" / "cu111" / "torch1.9.0" / "index.html";
    auto names = check_find_links(page);
    for (const char* py : {"cp36-cp36m", "cp37-cp37m", "cp38-cp38", "cp39-cp39"})
        CHECK(names.count(std::string("mmcv_full-1.4.0-") + py + "-manylinux1_x86_64.whl"));
    CHECK(names.count("mmcv_full-1.3.18-cp38-cp38-manylinux1_x86_64.whl"));
    CHECK_FALSE(names.count("mmcv_full-1.3.8-cp38-cp38-manylinux1_x86_64.whl"));
    CHECK(read_file(page).rfind("<a href=\"../torch1.9.0/mmcv_full-", 0) == 0);
}

TEST_CASE("the mmcv pages from ../shared cover every Linux row of the facts' matrix") {
    if (!shared_mirror()) {
        MESSAGE("skipped: ../shared is absent (set ENVLOCK_SHARED_DIR)");
        return;
    }
    fs::path dist = shared_mirror()->dir / "mmcv" / "dist";
    CHECK(fs::exists(dist / "cu102" / "torch1.6.0" / "index.html"));
    CHECK(fs::exists(dist / "cpu" / "torch1.13.0" / "index.html"));
    auto names = check_find_links(dist / "cu118" / "torch2.0.0" / "index.html");
    CHECK(names.count("mmcv-2.1.0-cp38-cp38-manylinux1_x86_64.whl"));
}

TEST_CASE("the PyPI simple index serves PEP 503 and PEP 691 for yapf with 0.40.1 and 0.40.2") {
    fs::path dir = builtin_mirror().dir / "pypi" / "simple" / "yapf";
    auto j = read_json(dir / "index.json");
    CHECK(j["meta"]["api-version"] == "1.1");
    std::vector<std::string> versions = j["versions"];
    CHECK(std::find(versions.begin(), versions.end(), "0.40.1") != versions.end());
    CHECK(versions.back() == "0.40.2");  // newest 0.40.x, and versions are in PEP 440 order
    for (const auto& f : j["files"]) {
        fs::path file = (dir / url_unescape(f["url"].get<std::string>())).lexically_normal();
        INFO(file.string());
        std::string bytes = read_file(file);
        CHECK(sha256_hex_of(bytes) == f["hashes"]["sha256"]);
        CHECK(bytes.size() == f["size"].get<size_t>());
        std::string meta = read_file(file.string() + ".metadata");
        CHECK(sha256_hex_of(meta) == f["core-metadata"]["sha256"]);
    }
    std::string html = read_file(dir / "index.html");
    CHECK(html.find("data-requires-python=\"&gt;=3.7\"") != std::string::npos);
    CHECK(html.find("data-dist-info-metadata=\"sha256=") != std::string::npos);
    CHECK(read_file(builtin_mirror().dir / "pypi" / "simple" / "index.html").find("<a href=\"yapf/\">yapf</a>") !=
          std::string::npos);
}

TEST_CASE("the JSON API gives the newest release's info and per-version requires_dist") {
    fs::path api = builtin_mirror().dir / "pypi" / "pypi";
    CHECK(read_json(api / "yapf" / "json")["info"]["version"] == "0.40.2");
    auto mmdet = read_json(api / "mmdet" / "2.14.0" / "json");
    std::vector<std::string> reqs = mmdet["info"]["requires_dist"];
    CHECK(std::find(reqs.begin(), reqs.end(), "terminaltables") != reqs.end());
    CHECK(std::find(reqs.begin(), reqs.end(), "pycocotools; platform_system == \"Linux\"") != reqs.end());
    auto setuptools = read_json(api / "setuptools" / "json");
    CHECK(setuptools["releases"].contains("59.5.0"));
    CHECK(setuptools["releases"].contains("69.5.1"));
    auto numba = read_json(api / "numba" / "0.48.0" / "json");
    reqs = numba["info"]["requires_dist"].get<std::vector<std::string>>();
    CHECK(std::find(reqs.begin(), reqs.end(), "llvmlite>=0.31.0dev0,<0.32.0") != reqs.end());
    auto url = numba["urls"][0]["url"].get<std::string>();
    CHECK(fs::exists((api / "numba" / "0.48.0" / url_unescape(url)).lexically_normal()));
    CHECK(read_json(api / "mmcv-full" / "json")["info"]["requires_dist"].is_null());  // sdist-only on PyPI
}

TEST_CASE("every requirement of every published wheel names a project the mirror serves") {
    const fs::path& root = builtin_mirror().dir;
    std::set<std::string> projects;
    auto index = read_json(root / "pypi" / "simple" / "index.json");
    for (const auto& p : index["projects"]) projects.insert(p["name"]);
    for (const char* p : {"torch", "torchvision", "torchaudio", "mmcv-full", "mmcv"}) projects.insert(p);
    std::set<std::string> missing;
    for (const auto& entry : fs::recursive_directory_iterator(root / "pypi" / "packages")) {
        if (entry.path().extension() != ".metadata") continue;
        std::string meta = read_file(entry.path());
        static const std::regex req(R"(Requires-Dist: ([A-Za-z0-9._-]+)([^\n]*))");
        for (std::sregex_iterator it(meta.begin(), meta.end(), req), end; it != end; ++it) {
            std::string marker = (*it)[2];
            // Requirements that only apply elsewhere (Windows, macOS, Python 2, extras) are not needed here.
            if (std::regex_search(marker, std::regex(R"(Windows|win32|darwin|Darwin|python_version < "3"|extra ==)"))) continue;
            std::string name = normalize_project((*it)[1]);
            if (!projects.count(name)) missing.insert(name + " (from " + entry.path().filename().string() + ")");
        }
    }
    for (const auto& m : missing) MESSAGE("missing: " << m);
    CHECK(missing.empty());
}

TEST_CASE("the git repository has the mmdet3d tags with the facts' pins and a CUDA extension") {
    fs::path repo = builtin_mirror().dir / "git" / "mmdetection3d";
    REQUIRE(fs::exists(repo / ".git"));
    auto tags = builtin_mirror().info.git_tags;
    CHECK(std::find(tags.begin(), tags.end(), "v0.17.1") != tags.end());
    CHECK(std::find(tags.begin(), tags.end(), "v0.17.3") != tags.end());
    auto show = [&](const std::string& what) {
        std::string cmd = "git -C '" + repo.string() + "' show " + what + " 2>/dev/null";
        std::string out;
        FILE* p = popen(cmd.c_str(), "r");
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        pclose(p);
        return out;
    };
    std::string runtime = show("v0.17.1:requirements/runtime.txt");
    CHECK(runtime.find("numba==0.48.0\n") != std::string::npos);
    CHECK(runtime.find("numpy<1.20.0\n") != std::string::npos);
    CHECK(show("v0.17.1:requirements/mminstall.txt").find("mmcv-full>=1.3.8,<=1.4.0") != std::string::npos);
    CHECK(show("v0.17.1:mmdet3d/__init__.py").find("mmcv_maximum_version = '1.4.0'") != std::string::npos);
    CHECK(show("v0.17.3:mmdet3d/__init__.py").find("mmcv_maximum_version = '1.5.0'") != std::string::npos);
    CHECK(show("v0.17.3:mmdet3d/version.py").find("__version__ = '0.17.3'") != std::string::npos);
    CHECK(show("v0.17.1:setup.py").find("CUDAExtension") != std::string::npos);
    CHECK(show("v0.17.1:mmdet3d/ops/voxel/src/voxelization_cuda.cu").find("__global__") != std::string::npos);
}

TEST_CASE("git/boxops is a CUDA extension without torch: setup.py sends the .cu to nvcc, -gencode from CUDAARCHS, cudart static") {
    fs::path repo = builtin_mirror().dir / "git" / "boxops";
    REQUIRE(fs::exists(repo / ".git"));
    std::string cmd = "git -C '" + repo.string() + "' show v0.1.0:setup.py 2>/dev/null";
    std::string setup;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) setup.append(buf, n);
    pclose(p);
    CHECK(setup.find("import torch") == std::string::npos);
    CHECK(setup.find("CUDAARCHS") != std::string::npos);
    CHECK(setup.find("'cudart_static'") != std::string::npos);
    CHECK(read_file(repo / "src/nms_kernel.cu").find("__global__") != std::string::npos);
}

TEST_CASE("SOURCES.md names where each table came from") {
    std::string s = read_file(builtin_mirror().dir / "SOURCES.md");
    CHECK(s.find("torch releases") != std::string::npos);
    CHECK(s.find("mmcv wheel matrix") != std::string::npos);
    CHECK(s.find("facts/torch.yaml") != std::string::npos);
    CHECK(s.find("Deviations from the real indexes") != std::string::npos);
    CHECK(builtin_mirror().info.sources.size() >= 5);
    if (shared_mirror()) {
        std::string t = read_file(shared_mirror()->dir / "SOURCES.md");
        CHECK(t.find("snapshots/rattler-pytorch-channel/linux-64/repodata.json") != std::string::npos);
    }
}

TEST_CASE("mirrors.yaml covers every git source the built-in recipes name, and every target is a folder of the tree") {
    const auto& m = builtin_mirror();
    auto rules = envlock::fetch::read_mirrors_file((m.dir / "mirrors.yaml").string());
    std::map<std::string, std::string> to;
    for (const auto& r : rules) to[r.from] = r.to;
    for (const char* from : {"https://conda.anaconda.org", "https://repo.anaconda.com/pkgs", "https://pypi.org/simple",
                             "https://download.pytorch.org/whl", "https://download.openmmlab.com/mmcv"})
        CHECK_MESSAGE(to.count(from), from);
    for (const auto& [from, target] : to) {
        INFO(from << " -> " << target);
        REQUIRE(target.rfind("file://", 0) == 0);
        CHECK(fs::is_directory(target.substr(7)));
    }
    // The git URLs of examples/*/recipe.yaml, as the recipes spell them.
    static const std::regex git_url(R"(git: (https://[^ ,}]+))");
    int sources = 0;
    for (const auto& e : fs::directory_iterator(ENVLOCK_SOURCE_DIR "/examples")) {
        std::string recipe = read_file(e.path() / "recipe.yaml");
        for (auto it = std::sregex_iterator(recipe.begin(), recipe.end(), git_url); it != std::sregex_iterator(); ++it) {
            ++sources;
            std::string url = (*it)[1];
            INFO(e.path().filename().string() << ": " << url);
            REQUIRE(to.count(url));
            CHECK(fs::is_directory(to[url].substr(7) + "/.git"));
        }
    }
    CHECK(sources >= 8);
}

TEST_CASE("pep440_less orders pre-releases, post-releases and local labels") {
    CHECK(pep440_less("0.40.1", "0.40.2"));
    CHECK(pep440_less("2.0.0rc4", "2.0.0"));
    CHECK(pep440_less("1.0.dev0", "1.0a1"));
    CHECK(pep440_less("0.1.5", "0.1.5.post20221221"));
    CHECK(pep440_less("1.9.1+cpu", "1.9.1+cu111"));
    CHECK_FALSE(pep440_less("1.10.0", "1.9.1"));
}
