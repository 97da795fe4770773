#pragma once
// envlock's test and demo mirror: a tree in the real wire formats of the deep-learning
// stack (conda channels, a PyPI simple index + JSON API, download.pytorch.org- and
// download.openmmlab.com-like find-links pages, a git source repository), with tiny real
// archives and real digests. Every version fact comes from ../shared/facts (or its
// compiled-in copy); SOURCES.md in the tree says where each table came from.
//
// Layout under the root (all links relative, so the tree works at any http://host:port/
// and as file://):
//   conda/{pytorch,nvidia,conda-forge,main}/{linux-64,noarch}/repodata.json(.zst) + packages
//   pypi/simple/index.{html,json}, pypi/simple/<project>/index.{html,json}   (PEP 503 / PEP 691)
//   pypi/pypi/<project>/json, pypi/pypi/<project>/<version>/json             (JSON API)
//   pypi/packages/<project>/<file> (+ <wheel>.metadata, PEP 658)
//   whl/torch_stable.html, whl/<variant>/<file>, whl/<variant>/<project>/index.{html,json}
//   mmcv/dist/<cuXXX|cpu>/torch<X.Y.0>/index.html + wheels
//   git/mmdetection3d (git repository, tags v0.17.0 … per facts), git/boxops (CUDA without torch), stand-ins
//   SOURCES.md, index.html
#include <string>
#include <vector>

namespace envlock::mirror {

struct MirrorOptions {
    std::string shared_dir;                  // ../shared; empty or absent: built-in tables only
    bool layer_real_pytorch_channel = true;  // snapshots/rattler-pytorch-channel when present
    bool with_git_repo = true;               // git/mmdetection3d (needs git on PATH)
};

struct MirrorInfo {
    std::string root;
    std::vector<std::string> sources;  // "table: origin", one per table (also in SOURCES.md)
    int conda_packages = 0, pypi_files = 0, torch_wheels = 0, mmcv_wheels = 0;
    std::vector<std::string> git_tags;
    bool real_pytorch_channel = false;   // the snapshot's records were layered in
    int closure_fillers = 0;             // conda stand-ins added for otherwise missing names
};

// Builds the whole tree into out_dir, replacing what was there. The tree is assembled in
// a sibling staging folder and renamed into place, so out_dir is never half-written.
// Deterministic: the same inputs give byte-identical files (and git commit ids).
MirrorInfo build_mirror(const std::string& out_dir, const MirrorOptions& options);

}  // namespace envlock::mirror
