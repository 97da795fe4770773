// fuzz_seeds DIR: writes the seeds that the tests build in code rather than keep as files,
// made by the real writers (write_lock, target_to_yaml/json, libarchive): DIR/lock/*.yaml,
// DIR/target/*, DIR/page_records/* (what follows the key in a page-records file), DIR/extract/* (a .tar.bz2 and a .conda package, a wheel-like zip, a tar.gz
// with a symlink and a hardlink). scripts/fuzz.sh runs it before seeding those corpora.
#include <archive.h>
#include <archive_entry.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fetch/page_cache.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/lock/target_io.hpp"

using namespace envlock;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
}

Target sample_target() {
    Target t;
    t.platform = "linux-64";
    t.kernel = "6.1.0-13-amd64";
    t.glibc = "2.36";
    t.cpu_model = "AMD EPYC 7763";
    t.cpu_flags = {"sse4_2", "avx", "avx2", "fma"};
    t.cores = 8;
    t.memory_bytes = 34359738368ull;
    t.driver_version = "535.104.05";
    t.driver_cuda = "12.2";
    t.gpus = {{"NVIDIA GeForce RTX 3090", 8, 6}, {"Tesla V100-SXM2-16GB", 7, 0}};
    t.compilers = {{"gcc", "/usr/bin/gcc-9", "9.4.0"}, {"g++", "/usr/bin/g++-12", "12.2.0"}};
    t.toolkits = {{"/usr/local/cuda-11.1", "11.1.105", {"compute_35", "compute_86"}}};
    return t;
}

Lock sample_lock() {
    Lock lock;
    lock.spec.name = "demo";
    lock.spec.inferred_from = {"docs/install.md"};
    lock.spec.python = "3.8";
    lock.spec.channels = {"pytorch", "conda-forge"};
    lock.spec.indexes = {"https://pypi.example/simple"};
    lock.spec.find_links = {"https://download.example/whl/torch_stable.html"};
    lock.spec.requirements = {{"torch==1.9.1", "pypi", {"docs/install.md", 14}},
                              {"cudatoolkit 11.1.*", "conda", {"docs/install.md", 12}},
                              {"numpy>=1.19,<1.20; python_version < \"3.9\"", "", {"requirements.txt", 3}}};
    lock.spec.sources = {{"mmdet3d", "https://github.com/open-mmlab/mmdetection3d", "v0.17.1", {"docs/install.md", 30},
                          "pip install -v -e ."}};
    lock.spec.extensions = {{"mmdet3d-ops", "mmdetection3d", "python setup.py develop", "mmdet3d.ops", {"setup.py", 40}, true}};
    lock.spec.env = {{"TORCH_CUDA_ARCH_LIST", "8.6"}};
    lock.spec.notes = {{"alternative", "pip install torch==1.10.0", "commented out in the docs", {"README.md", 9}}};
    lock.targets = {{"default", sample_target()}};
    lock.knowledge_version = "2026.11";
    lock.content_hash = lock_content_hash(lock.spec, lock.targets, lock.knowledge_version);
    lock.checkout = "..";
    lock.inferred_sha256 = {{"docs/install.md", std::string(64, 'c')}};
    lock.toolchain = {"11.1", "system:/usr/local/cuda-11.1", "9", "system:/usr/bin/gcc-9", "8.6", {"nvcc 11.1 takes gcc <= 10"}};
    LockedPackage torch;
    torch.kind = Ecosystem::pypi;
    torch.url = "https://download.example/whl/cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl";
    torch.name = "torch";
    torch.version = "1.9.1+cu111";
    torch.build = "cp38-cp38-linux_x86_64";
    torch.sha256 = std::string(64, 'a');
    torch.size = 2041604096;
    torch.channel = "https://download.example/whl/torch_stable.html";
    torch.depends = {"typing-extensions"};
    torch.cuda = LockedCuda{"11.1", {37, 50, 60, 70, 75, 80, 86}, {86}};
    torch.requested_by = {"docs/install.md:14"};
    LockedPackage python;
    python.kind = Ecosystem::conda;
    python.url = "https://conda.example/conda-forge/linux-64/python-3.8.18-hd12c33a_0_cpython.conda";
    python.name = "python";
    python.version = "3.8.18";
    python.build = "hd12c33a_0_cpython";
    python.sha256 = std::string(64, 'b');
    python.md5 = std::string(32, 'd');
    python.channel = "https://conda.example/conda-forge";
    python.subdir = "linux-64";
    python.depends = {"libgcc-ng >=12", "openssl >=3.1.3,<4.0a0"};
    LockedPackage mmdet3d;
    mmdet3d.kind = Ecosystem::source;
    mmdet3d.url = "https://github.com/open-mmlab/mmdetection3d";
    mmdet3d.name = "mmdet3d";
    mmdet3d.version = "0.17.1";
    mmdet3d.rev = "v0.17.1";
    mmdet3d.depends_unknown = true;
    lock.packages = {mmdet3d, python, torch};
    lock.decisions = {{"yapf-0.40.2-mmcv", "yapf 0.40.2", "mmcv's config reader breaks on yapf 0.40.2"}};
    return lock;
}

struct Member {
    std::string path, content;
    unsigned type = AE_IFREG;
    std::string symlink, hardlink;
};

// `format`: "pax", "zip"; `filter`: "none", "bzip2", "gzip", "zstd".
std::string archive_bytes(const std::vector<Member>& members, const std::string& format, const std::string& filter) {
    std::string out;
    struct archive* a = archive_write_new();
    if (format == "zip") archive_write_set_format_zip(a);
    else archive_write_set_format_pax_restricted(a);
    if (filter == "bzip2") archive_write_add_filter_bzip2(a);
    if (filter == "gzip") archive_write_add_filter_gzip(a);
    if (filter == "zstd") archive_write_add_filter_zstd(a);
    archive_write_set_bytes_in_last_block(a, 1);
    archive_write_open(
        a, &out, nullptr,
        [](struct archive*, void* client, const void* buf, size_t n) -> la_ssize_t {
            static_cast<std::string*>(client)->append(static_cast<const char*>(buf), n);
            return static_cast<la_ssize_t>(n);
        },
        nullptr);
    for (const auto& m : members) {
        archive_entry* e = archive_entry_new();
        archive_entry_set_pathname(e, m.path.c_str());
        archive_entry_set_filetype(e, m.type);
        archive_entry_set_perm(e, m.type == AE_IFDIR ? 0755 : 0644);
        if (!m.symlink.empty()) archive_entry_set_symlink(e, m.symlink.c_str());
        if (!m.hardlink.empty()) archive_entry_set_hardlink(e, m.hardlink.c_str());
        bool body = m.type == AE_IFREG && m.hardlink.empty();
        archive_entry_set_size(e, body ? static_cast<la_int64_t>(m.content.size()) : 0);
        archive_write_header(a, e);
        if (body && !m.content.empty()) archive_write_data(a, m.content.data(), m.content.size());
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
        return 2;
    }
    fs::path dir = argv[1];
    Lock lock = sample_lock();
    write(dir / "lock" / "full.yaml", write_lock(lock));
    lock.packages.resize(1);
    lock.decisions.clear();
    lock.toolchain = {};
    write(dir / "lock" / "small.yaml", write_lock(lock));

    Target t = sample_target();
    write(dir / "target" / "full.yaml", target_to_yaml(t));
    write(dir / "target" / "full.json", target_to_json(t).dump(2));
    write(dir / "target" / "small.yaml", "platform: linux-64\nglibc: 2.31\ndriver-cuda: 12.0\ngpus: [{sm: sm_86}]\n");

    {
        // The part of a page-records file after its key: the count and the records (the fuzz
        // target frames it with its own key and build id).
        const fetch::PageKey key{"simple-html", "https://pypi.org/simple/torch/", "torch", "http {id}"};
        IndexRecord r;
        r.ecosystem = Ecosystem::pypi;
        r.name = "torch";
        r.version = "1.9.1+cu111";
        r.filename = "torch-1.9.1+cu111-cp38-cp38-linux_x86_64.whl";
        r.url = "https://download.pytorch.org/whl/cu111/" + r.filename;
        r.sha256 = std::string(64, 'a');
        r.requires_python = ">=3.6.2";
        r.depends = {"typing-extensions"};
        r.depends_known = false;
        std::string head = fetch::page_records_bytes(key, {});
        std::size_t at = head.size() - 16;
        for (std::size_t n : {0, 1, 3}) {
            std::string bytes = fetch::page_records_bytes(key, IndexRecords(n, r));
            write(dir / "page_records" / (std::to_string(n) + ".bin"), bytes.substr(at, bytes.size() - at - 8));
        }
    }

    std::vector<Member> info = {{"info/index.json", R"({"name": "demo", "version": "1.0", "build": "0", "build_number": 0, "depends": []})"},
                                {"info/paths.json", R"({"paths": [{"_path": "bin/demo", "path_type": "hardlink", "size_in_bytes": 5}], "paths_version": 1})"}};
    std::vector<Member> pkg = {{"bin", "", AE_IFDIR},
                               {"bin/demo", "demo\n"},
                               {"lib/libdemo.so.1", "\x7f" "ELF"},
                               {"lib/libdemo.so", "", AE_IFREG, "", ""},
                               {"share/demo/link", "", AE_IFLNK, "../../bin/demo", ""}};
    pkg[3] = {"lib/libdemo.so", "", AE_IFLNK, "libdemo.so.1", ""};
    std::vector<Member> both = info;
    both.insert(both.end(), pkg.begin(), pkg.end());
    write(dir / "extract" / "demo-1.0-0.tar.bz2", archive_bytes(both, "pax", "bzip2"));
    write(dir / "extract" / "demo-1.0-0.conda",
          archive_bytes({{"metadata.json", R"({"conda_pkg_format_version": 2})"},
                         {"info-demo-1.0-0.tar.zst", archive_bytes(info, "pax", "zstd")},
                         {"pkg-demo-1.0-0.tar.zst", archive_bytes(pkg, "pax", "zstd")}},
                        "zip", "none"));
    write(dir / "extract" / "demo-1.0-py3-none-any.whl",
          archive_bytes({{"demo/__init__.py", "x = 1\n"},
                         {"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"},
                         {"demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
                         {"demo-1.0.dist-info/RECORD", "demo/__init__.py,,\n"}},
                        "zip", "none"));
    write(dir / "extract" / "links.tar.gz",
          archive_bytes({{"a", "", AE_IFDIR}, {"a/f", "body"}, {"a/hard", "", AE_IFREG, "", "a/f"}, {"a/sym", "", AE_IFLNK, "f", ""}},
                        "pax", "gzip"));
    return 0;
}
