#pragma once
// One demo mirror (tests/mirror) behind a real HTTP server on 127.0.0.1, built once per test
// binary, and `envlock resolve` run against it the way a user behind a mirror would: the
// spec names the real index URLs, --mirror maps them to the local server.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/mirror/mirror.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

namespace envlock::test {

struct MirrorServer {
    std::filesystem::path dir;
    std::unique_ptr<HttpServer> server;
};

inline std::string shared_dir_if_present() {
    std::error_code ec;
    return std::filesystem::is_directory(ENVLOCK_SHARED_DIR "/facts", ec) ? std::string(ENVLOCK_SHARED_DIR) : std::string();
}

inline const MirrorServer& mirror_server() {
    static MirrorServer m = [] {
        MirrorServer s;
        s.dir = scratch_dir("resolve-mirror");
        mirror::MirrorOptions options;
        options.shared_dir = shared_dir_if_present();
        mirror::build_mirror((s.dir / "m").string(), options);
        s.server = std::make_unique<HttpServer>((s.dir / "m").string());
        return s;
    }();
    return m;
}

inline std::filesystem::path temp_dir(const std::string& tag) {
    return scratch_dir("resolve-" + tag);
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// The flags that send every real index URL to the local mirror.
inline std::vector<std::string> mirror_flags(const std::filesystem::path& cache) {
    const auto& m = mirror_server();
    std::string s = m.server->url();
    std::string git = (m.dir / "m" / "git").string();
    return {"--cache-dir", cache.string(),
            "--mirror", "https://conda.anaconda.org=" + s + "/conda",
            "--mirror", "https://repo.anaconda.com/pkgs=" + s + "/pkgs",
            "--mirror", "https://pypi.org/simple=" + s + "/pypi/simple",
            "--mirror", "https://pypi.org/pypi/packages=" + s + "/pypi/packages",
            "--mirror", "https://download.pytorch.org/whl=" + s + "/whl",
            "--mirror", "https://download.openmmlab.com/mmcv=" + s + "/mmcv",
            "--mirror", "https://github.com/open-mmlab/mmdetection3d=" + git + "/mmdetection3d",
            "--mirror", "https://github.com/facebookresearch/detectron2=" + git + "/detectron2",
            "--mirror", "https://github.com/cocodataset/panopticapi=" + git + "/panopticapi",
            "--mirror", "https://github.com/mcordts/cityscapesScripts=" + git + "/cityscapesScripts",
            "--mirror", "https://github.com/valeoai/RADIal=" + git + "/RADIal",
            "--mirror", "https://github.com/klintan/pypcd=" + git + "/pypcd"};
}

// A target file as `envlock detect` writes it.
inline std::string target_yaml(const std::string& gpu_name, const std::string& sm, const std::string& driver,
                               const std::string& driver_cuda, const std::string& toolkit_version = "") {
    std::string t = "platform: linux-64\nglibc: \"2.31\"\ncpu-flags: [sse4_2, avx, avx2, fma]\n";
    t += "driver: \"" + driver + "\"\ndriver-cuda: \"" + driver_cuda + "\"\n";
    t += "gpus:\n  - {name: \"" + gpu_name + "\", sm: " + sm + "}\n";
    t += "compilers:\n  - {kind: gcc, path: /usr/bin/gcc, version: \"12.2.0\"}\n";
    if (!toolkit_version.empty())
        t += "cuda-toolkits:\n  - {path: /usr/local/cuda-" + toolkit_version + ", version: \"" + toolkit_version + "\", gpu-archs: []}\n";
    return t;
}

inline RunResult resolve_with(const std::vector<std::string>& args, const std::filesystem::path& work) {
    std::vector<std::string> all{"resolve"};
    all.insert(all.end(), args.begin(), args.end());
    auto flags = mirror_flags(work / "cache");
    all.insert(all.end(), flags.begin(), flags.end());
    return run_envlock(all);
}

// The `name: X\n    version: "V"` pair of a package in a lock, as text.
inline std::string locked_version(const std::string& lock, const std::string& name) {
    auto at = lock.find("    name: \"" + name + "\"\n    version: \"");
    if (at == std::string::npos) return "";
    at = lock.find("version: \"", at) + 10;
    return lock.substr(at, lock.find('"', at) - at);
}

}  // namespace envlock::test
