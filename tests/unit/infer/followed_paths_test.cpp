// Install paths the docs point to instead of spelling out: scripts they run, Dockerfiles they
// build or link, sub-pages they link, and source builds of projects with CUDA ops. The
// fixtures are small repos written here, each reproducing one layout seen in paper repos.
#include <doctest/doctest.h>

#include <algorithm>

#include "fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

const SpecExtension* find_extension(const Spec& s, const std::string& in) {
    for (const auto& e : s.extensions)
        if (e.in == in) return &e;
    return nullptr;
}

bool read_from(const Spec& s, const std::string& file) {
    return std::find(s.inferred_from.begin(), s.inferred_from.end(), file) != s.inferred_from.end();
}

}  // namespace

TEST_CASE("a script the install section runs is read like a shell block, with its own lines") {
    FixtureRepo repo("occnet");
    repo.write("README.md",
               "# Occupancy\n\n## Installation\n\nEverything is set up by one script:\n\n```bash\nbash scripts/install_env.sh\n```\n");
    repo.write("scripts/install_env.sh",
               "#!/usr/bin/env bash\nset -e\nconda create -n occ python=3.8 -y\nconda activate occ\n"
               "pip install torch==1.10.1+cu113 torchvision==0.11.2+cu113 -f https://download.pytorch.org/whl/torch_stable.html\n"
               "pip install -r requirements.txt\n");
    repo.write("requirements.txt", "timm==0.4.12\n");
    auto spec = repo.infer();
    CHECK(spec.python == "3.8");
    auto* py = find_requirement(spec, "python=3.8");
    REQUIRE(py);
    CHECK(where(py->from) == "scripts/install_env.sh:3");
    auto* torch = find_requirement(spec, "torch==1.10.1+cu113");
    REQUIRE(torch);
    CHECK(where(torch->from) == "scripts/install_env.sh:5");
    CHECK(where(find_requirement(spec, "timm==0.4.12")->from) == "requirements.txt:1");
    CHECK(spec.find_links == std::vector<std::string>{"https://download.pytorch.org/whl/torch_stable.html"});
    CHECK(read_from(spec, "scripts/install_env.sh"));
}

TEST_CASE("a sourced script keeps its cd; a script run in a child shell does not") {
    FixtureRepo repo("twoshells");
    repo.write("README.md",
               "## Setup\n\n```bash\nsource tools/enter.sh\npip install -e .\nsh ../tools/other_env.sh\npip install -r requirements-base.txt\n```\n");
    repo.write("tools/enter.sh", "cd pkg\n");
    repo.write("tools/other_env.sh", "cd /tmp\n");
    repo.write("pkg/setup.py", "from setuptools import setup\nsetup(name='innerpkg', install_requires=['einops>=0.3'])\n");
    repo.write("pkg/requirements-base.txt", "scipy==1.7.3\n");
    auto spec = repo.infer();
    // `source` moved the shell into pkg/: `pip install -e .` installs pkg; the child shell's
    // `cd /tmp` did not come back, so the requirements file is pkg's.
    CHECK(find_requirement(spec, "einops>=0.3"));
    auto* scipy = find_requirement(spec, "scipy==1.7.3");
    REQUIRE(scipy);
    CHECK(where(scipy->from) == "pkg/requirements-base.txt:1");
}

TEST_CASE("scripts run outside the install steps (training, data) are not read") {
    FixtureRepo repo("trainer");
    repo.write("README.md", "## Training\n\n```bash\nbash tools/dist_train.sh configs/a.py 8\n```\n");
    repo.write("tools/dist_train.sh", "pip install wandb\npython -m torch.distributed.launch tools/train.py $@\n");
    auto spec = repo.infer();
    CHECK_FALSE(find_requirement(spec, "wandb"));
    CHECK_FALSE(read_from(spec, "tools/dist_train.sh"));
}

TEST_CASE("an ops folder's setup script is followed into each op it builds") {
    FixtureRepo repo("pointdet");
    repo.write("README.md", "## Install\n\n```bash\nbash setup.sh\n```\n");
    repo.write("setup.sh", "cd det/ops/nms\npython setup.py build_ext --inplace\ncd ../roi\npython setup.py build_ext --inplace\n");
    for (const char* op : {"nms", "roi"}) {
        std::string dir = std::string("det/ops/") + op;
        repo.write(dir + "/setup.py",
                   "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                   "setup(name='" + std::string(op) + "_cuda', ext_modules=[CUDAExtension('" + op + "_cuda', ['src/a.cu'])],\n"
                   "      cmdclass={'build_ext': BuildExtension})\n");
        repo.write(dir + "/src/a.cu", "// kernel\n");
    }
    auto spec = repo.infer();
    auto* nms = find_extension(spec, "det/ops/nms");
    auto* roi = find_extension(spec, "det/ops/roi");
    REQUIRE(nms);
    REQUIRE(roi);
    CHECK(nms->build == "python setup.py build_ext --inplace");
    CHECK(nms->cuda);
    CHECK(where(nms->from) == "setup.sh:2");
    CHECK(where(roi->from) == "setup.sh:4");
}

TEST_CASE("a script that finds its own folder (dirname of BASH_SOURCE or $0) builds the ops under it") {
    FixtureRepo repo("posetrack");
    repo.write("README.md", "## Build\n\n```bash\nbash tools/build_ops.sh\n```\n");
    repo.write("tools/build_ops.sh",
               "#!/bin/bash\nHERE=$( cd -- \"$( dirname -- \"${BASH_SOURCE[0]}\" )\" &> /dev/null && pwd )\n"
               "cd /tmp\ncd ${HERE}/raster && python -m pip install -e .\n"
               "TOOLS=$(dirname \"$0\")\ncd $TOOLS/grid\npython setup.py install\n");
    for (const char* op : {"raster", "grid"}) {
        std::string dir = std::string("tools/") + op;
        repo.write(dir + "/setup.py",
                   "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                   "setup(name='" + std::string(op) + "_ext', ext_modules=[CUDAExtension('" + op + "_ext', ['k.cu'])],\n"
                   "      cmdclass={'build_ext': BuildExtension})\n");
        repo.write(dir + "/k.cu", "// kernel\n");
    }
    auto spec = repo.infer();
    auto* raster = find_extension(spec, "tools/raster");
    auto* grid = find_extension(spec, "tools/grid");
    REQUIRE(raster);
    REQUIRE(grid);
    CHECK(where(raster->from) == "tools/build_ops.sh:4");   // the doc's own step, not a scan
    CHECK(raster->build == "pip install -e .");
    CHECK(where(grid->from) == "tools/build_ops.sh:7");
}

TEST_CASE("a placeholder for the checkout in a cd path is the checkout") {
    FixtureRepo repo("placeholders");
    repo.write("docs/INSTALL.md", "```bash\ncd ROOT_DIR/lib/ops/iou\npython setup.py build_ext --inplace\n```\n");
    repo.write("lib/ops/iou/setup.py",
               "from torch.utils.cpp_extension import CUDAExtension\nsetup(name='iou', ext_modules=[CUDAExtension('iou_cuda', ['k.cu'])])\n");
    auto spec = repo.infer();
    auto* ext = find_extension(spec, "lib/ops/iou");
    REQUIRE(ext);
    CHECK(where(ext->from) == "docs/INSTALL.md:3");
}

TEST_CASE("a Dockerfile the docs build: base image, RUN lines, build settings, the checkout in the image") {
    FixtureRepo repo("fusion");
    repo.write("README.md",
               "# Fusion\n\n## Environment\n\nWe use docker:\n\n```bash\ncd docker && docker build . -t fusion\n```\n");
    repo.write("docker/Dockerfile",
               "FROM nvidia/cuda:11.3.1-devel-ubuntu20.04\n"                                    // 1
               "ENV DEBIAN_FRONTEND=noninteractive\n"                                            // 2
               "ENV TORCH_CUDA_ARCH_LIST=\"7.0 8.0 8.6+PTX\"\n"                                   // 3
               "RUN apt-get update && apt-get install -y git libgl1 \\\n"                        // 4
               "    && rm -rf /var/lib/apt/lists/*\n"                                            // 5
               "# the toolchain\n"                                                               // 6
               "RUN conda install python=3.8\n"                                                  // 7
               "RUN pip install torch==1.10.1+cu113 -f https://download.pytorch.org/whl/torch_stable.html && \\\n"  // 8
               "    pip install mmcv-full==1.4.0 \\\n"                                           // 9
               "        -f https://download.openmmlab.com/mmcv/dist/cu113/torch1.10.0/index.html\n"  // 10
               "WORKDIR /src\n"                                                                  // 11
               "COPY . fusion\n"                                                                 // 12
               "WORKDIR /src/fusion\n"                                                           // 13
               "RUN pip install -r requirements.txt && python setup.py develop\n");             // 14
    repo.write("docker/requirements.txt", "pyquaternion==0.9.9\n");
    auto spec = repo.infer();
    CHECK(spec.python == "3.8");
    CHECK(where(find_requirement(spec, "python=3.8")->from) == "docker/Dockerfile:7");
    CHECK(where(find_requirement(spec, "torch==1.10.1+cu113")->from) == "docker/Dockerfile:8");
    CHECK(where(find_requirement(spec, "mmcv-full==1.4.0")->from) == "docker/Dockerfile:9");
    CHECK(spec.env.at("TORCH_CUDA_ARCH_LIST") == "7.0 8.0 8.6+PTX");
    CHECK(spec.env.count("DEBIAN_FRONTEND") == 0);
    auto* image = find_note(spec, "image", "nvidia/cuda:11.3.1-devel");
    REQUIRE(image);
    CHECK(image->why.find("CUDA 11.3 with nvcc") != std::string::npos);
    CHECK(where(image->from) == "docker/Dockerfile:1");
    CHECK(find_note(spec, "system", "git libgl1"));
    // COPY . fusion with context docker/: the image's /src/fusion is the docker/ folder
    CHECK(where(find_requirement(spec, "pyquaternion==0.9.9")->from) == "docker/requirements.txt:1");
    CHECK(read_from(spec, "docker/Dockerfile"));
}

TEST_CASE("a Dockerfile is the only install description: it is read, a clone in the image is a source") {
    FixtureRepo repo("posenet");
    repo.write("README.md", "# Pose\n\nSee the paper.\n");
    repo.write("Dockerfile",
               "FROM pytorch/pytorch:1.9.0-cuda11.1-cudnn8-devel\n"
               "RUN cd / && git clone https://github.com/facebookresearch/detectron2.git && \\\n"
               "    cd detectron2 && git checkout v0.6 && FORCE_CUDA=1 pip install -e .\n"
               "COPY . /workspace/posenet\n"
               "WORKDIR /workspace/posenet\n"
               "RUN pip install -r requirements.txt\n");
    repo.write("requirements.txt", "opencv-python==4.5.5.64\n");
    auto spec = repo.infer();
    CHECK(where(find_requirement(spec, "torch==1.9.0")->from) == "Dockerfile:1");
    CHECK(find_note(spec, "image", "pytorch/pytorch:1.9.0"));
    REQUIRE(spec.sources.size() == 1);
    CHECK(spec.sources[0].name == "detectron2");
    CHECK(spec.sources[0].rev == "v0.6");
    CHECK(where(spec.sources[0].from) == "Dockerfile:3");
    auto* d2 = find_extension(spec, "detectron2");
    REQUIRE(d2);
    CHECK(d2->import == "detectron2._C");
    CHECK(d2->cuda);
    CHECK(where(find_requirement(spec, "opencv-python==4.5.5.64")->from) == "requirements.txt:1");
}

TEST_CASE("a Dockerfile beside docs that pin their own torch is an alternative, not merged") {
    FixtureRepo repo("dual");
    repo.write("README.md",
               "## Install\n\n```bash\nconda create -n d python=3.9\npip install torch==2.0.1\n```\n\n"
               "A [Dockerfile](docker/Dockerfile) is provided too.\n");
    repo.write("docker/Dockerfile", "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\nRUN pip install torch==2.1.0\n");
    auto spec = repo.infer();
    CHECK(find_requirement(spec, "torch==2.0.1"));
    CHECK_FALSE(find_requirement(spec, "torch==2.1.0"));
    auto* alt = find_note(spec, "alternative", "torch==2.1.0");
    REQUIRE(alt);
    CHECK(where(alt->from) == "docker/Dockerfile:2");
}

TEST_CASE("a sub-page the README links for installing is read; other linked pages are not") {
    FixtureRepo repo("linked");
    repo.write("README.md",
               "# Linked\n\n* [Environment setup](docs/en/env.md)\n* [Data preparation](docs/en/data.md)\n");
    repo.write("docs/en/env.md", "```shell\npip install torch==1.12.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113\n```\n");
    repo.write("docs/en/data.md", "```shell\npip install gdown\n```\n");
    auto spec = repo.infer();
    auto* torch = find_requirement(spec, "torch==1.12.1+cu113");
    REQUIRE(torch);
    CHECK(where(torch->from) == "docs/en/env.md:2");
    CHECK_FALSE(find_requirement(spec, "gdown"));
}

TEST_CASE("commands joined by && over continuation lines keep the line each starts on") {
    FixtureRepo repo("chained");
    repo.write("INSTALL.md", "```bash\npip install numpy==1.21.6 && \\\n    pip install scipy==1.7.3\n```\n");
    auto spec = repo.infer();
    CHECK(where(find_requirement(spec, "numpy==1.21.6")->from) == "INSTALL.md:2");
    CHECK(where(find_requirement(spec, "scipy==1.7.3")->from) == "INSTALL.md:3");
}

TEST_CASE("mmcv built from a clone with MMCV_WITH_OPS=1 is an extension (mmcv-full ops)") {
    FixtureRepo repo("e2e");
    repo.write("docs/INSTALL.md",
               "```shell\ngit clone https://github.com/open-mmlab/mmcv.git\ncd mmcv\ngit checkout v1.6.0\n"
               "export MMCV_WITH_OPS=1\npip install -v -e .\n```\n");
    auto spec = repo.infer();
    REQUIRE(spec.sources.size() == 1);
    CHECK(spec.sources[0].rev == "v1.6.0");
    auto* ops = find_extension(spec, "mmcv");
    REQUIRE(ops);
    CHECK(ops->name == "mmcv-full");
    CHECK(ops->import == "mmcv._ext");
    CHECK(ops->build == "MMCV_WITH_OPS=1 pip install -v -e .");
    CHECK(ops->cuda);
    CHECK(where(ops->from) == "docs/INSTALL.md:6");
}

TEST_CASE("mmcv 1.x built without MMCV_WITH_OPS is the lite package: no extension") {
    FixtureRepo repo("lite");
    repo.write("INSTALL.md", "```shell\ngit clone -b v1.7.0 https://github.com/open-mmlab/mmcv.git\ncd mmcv\npip install -e .\n```\n");
    auto spec = repo.infer();
    CHECK(spec.extensions.empty());
}

TEST_CASE("apex with --cuda_ext and spconv from source are CUDA extension builds") {
    FixtureRepo repo("sparse");
    repo.write("INSTALL.md",
               "```bash\ngit clone https://github.com/NVIDIA/apex\ncd apex\n"
               "pip install -v --no-cache-dir --global-option=\"--cpp_ext\" --global-option=\"--cuda_ext\" ./\ncd ..\n"
               "git clone https://github.com/traveller59/spconv.git --recursive\ncd spconv && git checkout 7342772\n"
               "python setup.py bdist_wheel\n```\n");
    auto spec = repo.infer();
    auto* apex = find_extension(spec, "apex");
    REQUIRE(apex);
    CHECK(apex->build.find("--cuda_ext") != std::string::npos);
    CHECK(where(apex->from) == "INSTALL.md:4");
    auto* spconv = find_extension(spec, "spconv");
    REQUIRE(spconv);
    CHECK(spconv->build == "python setup.py bdist_wheel");
    CHECK(where(spconv->from) == "INSTALL.md:8");
}

TEST_CASE("apex without its CUDA options is pure Python: no extension") {
    FixtureRepo repo("apexpy");
    repo.write("INSTALL.md", "```bash\ngit clone https://github.com/NVIDIA/apex\ncd apex\npip install -v --no-cache-dir ./\n```\n");
    auto spec = repo.infer();
    CHECK(spec.extensions.empty());
}

TEST_CASE("a build script that keeps the checkout in a variable (DIR=$(pwd); cd $DIR/x) is followed") {
    FixtureRepo repo("varbuild");
    repo.write("README.md", "## Build the extensions\n\n```bash\nbash build_all.sh\n```\n");
    repo.write("build_all.sh", "DIR=$(pwd)\ncd $DIR/native/raster && pip install -e .\ncd ${DIR}\n");
    repo.write("native/raster/setup.py",
               "from torch.utils.cpp_extension import CUDAExtension\nsetup(name='raster', ext_modules=[CUDAExtension('raster._C', ['r.cu'])])\n");
    auto spec = repo.infer();
    auto* ext = find_extension(spec, "native/raster");
    REQUIRE(ext);
    CHECK(ext->build == "pip install -e .");
    CHECK(where(ext->from) == "build_all.sh:2");
}

TEST_CASE("`cd Repo/ext/x` after the shell moved into another clone means the checkout's ext/x") {
    FixtureRepo repo("OccRepo");
    repo.write("docs/install.md",
               "```shell\ngit clone https://github.com/open-mmlab/mmdetection3d.git\ncd mmdetection3d\npython setup.py install\n```\n\n"
               "```shell\ncd OccRepo/extensions/chamfer\npython setup.py install --user\n```\n");
    repo.write("extensions/chamfer/setup.py",
               "from torch.utils.cpp_extension import CUDAExtension\nsetup(name='chamfer', ext_modules=[CUDAExtension('chamfer', ['c.cu'])])\n");
    auto spec = repo.infer();
    auto* ext = find_extension(spec, "extensions/chamfer");
    REQUIRE(ext);
    CHECK(ext->build == "python setup.py install --user");
    CHECK(where(ext->from) == "docs/install.md:9");
}

TEST_CASE("`cd ~`, a clone of the repo itself and `cd Repo` land in the checkout") {
    FixtureRepo repo("HomeRepo");
    repo.write("docs/INSTALL.md",
               "```shell\ncd ~\ngit clone https://github.com/someone/HomeRepo.git\ncd HomeRepo\npip install -r requirements-extra.txt\n```\n");
    repo.write("requirements-extra.txt", "casadi==3.6.7\n");
    auto spec = repo.infer();
    auto* r = find_requirement(spec, "casadi==3.6.7");
    REQUIRE(r);
    CHECK(where(r->from) == "requirements-extra.txt:1");
    CHECK_FALSE(find_note(spec, "missing", "?"));
}

TEST_CASE("a submodule the checkout lacks (no --recursive) is a git source with the documented install") {
    FixtureRepo repo("dyngs");
    repo.write(".gitmodules",
               "[submodule \"submodules/knn\"]\n\tpath = submodules/knn\n\turl = https://gitlab.example.org/someone/knn.git\n"
               "[submodule \"submodules/raster\"]\n\tpath = submodules/raster\n\turl = https://github.com/someone/raster\n");
    repo.write("README.md", "## Setup\n\n```bash\ngit submodule update --init --recursive\npip install -e submodules/raster\npip install -e submodules/knn\n```\n");
    auto spec = repo.infer();
    REQUIRE(spec.sources.size() == 2);
    CHECK(spec.sources[0].git == "https://github.com/someone/raster");
    CHECK(spec.sources[0].install == "pip install -e .");
    CHECK(where(spec.sources[0].from) == "README.md:5");
    CHECK(spec.sources[1].git == "https://gitlab.example.org/someone/knn");
    CHECK(find_note(spec, "submodule", "submodules/raster"));
    CHECK_FALSE(find_note(spec, "ignored", "submodules/knn"));
}
