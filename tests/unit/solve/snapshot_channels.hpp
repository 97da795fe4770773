#pragma once
// The real repodata of ../shared/snapshots served as conda channels by a local HTTP server:
// each snapshot file is linked (not copied) into a channel layout `<name>/<subdir>/repodata.json`
// in a temp folder, so conda's own test indexes (flat {filename: record} maps), mamba's numpy
// file, the conda-forge py39 subset and the real pytorch channel are channels a spec can name.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/http_server.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

namespace envlock::test {

inline std::filesystem::path snapshots_dir() {
    const char* env = std::getenv("ENVLOCK_SHARED_DIR");
    return std::filesystem::path(env ? env : ENVLOCK_SHARED_DIR) / "snapshots";
}

struct SnapshotChannels {
    std::filesystem::path dir;
    std::unique_ptr<HttpServer> server;
    std::string url(const std::string& channel) const { return server->url() + "/" + channel; }
};

inline const SnapshotChannels& snapshot_channels() {
    static SnapshotChannels s = [] {
        namespace fs = std::filesystem;
        SnapshotChannels c;
        c.dir = scratch_dir("snapshot-channels");
        const fs::path snap = snapshots_dir();
        struct Link { const char* channel; const char* subdir; const char* file; };
        const Link links[] = {
            {"pytorch", "linux-64", "rattler-pytorch-channel/linux-64/repodata.json"},
            {"conda-forge-py39", "linux-64", "conda-subchannel-demo-conda-forge-py39/linux-64/repodata.json"},
            {"conda-forge-py39", "noarch", "conda-subchannel-demo-conda-forge-py39/noarch/repodata.json"},
            {"mamba-numpy", "linux-64", "mamba-tests-conda-forge-numpy/conda-forge-numpy-linux-64.json"},
            {"conda-index", "linux-64", "conda-tests-defaults-2013-2018/index.json"},
            {"conda-index2", "linux-64", "conda-tests-defaults-2013-2018/index2.json"},
            {"conda-index4", "linux-64", "conda-tests-defaults-2013-2018/index4.json"},
            {"conda-r", "linux-64", "conda-tests-defaults-2013-2018/repodata_r_linux-64.json"},
            {"conda-main", "noarch", "conda-tests-defaults-2013-2018/repodata_main_noarch.json"},
        };
        for (const auto& l : links) {
            fs::path to = c.dir / l.channel / l.subdir / "repodata.json";
            fs::create_directories(to.parent_path());
            fs::create_symlink(snap / l.file, to);
        }
        // A channel without a subdir answers an empty index, as a real channel's empty subdir does.
        for (const auto& l : links)
            for (const char* subdir : {"linux-64", "noarch"}) {
                fs::path p = c.dir / l.channel / subdir / "repodata.json";
                if (!fs::exists(p)) std::ofstream(p) << "{\"info\": {\"subdir\": \"" << subdir << "\"}, \"packages\": {}}";
            }
        c.server = std::make_unique<HttpServer>(c.dir.string());
        return c;
    }();
    return s;
}

}  // namespace envlock::test
