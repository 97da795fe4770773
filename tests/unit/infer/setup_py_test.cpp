// setup.py, setup.cfg and pyproject.toml read without running anything.
#include <doctest/doctest.h>

#include "resolver/specs/errors.hpp"
#include "resolver/infer/parts.hpp"
#include "resolver/infer/python.hpp"

using namespace envlock;
using namespace envlock::infer;

TEST_CASE("python reader: strings, lists, dicts and implicit concatenation") {
    auto m = read_python("A = ['x', \"y\" 'z', r'\\d']\nB = {'k': ['v']}\n");
    REQUIRE(m.assignments.count("A"));
    auto items = string_items(m.assignments.at("A"), m);
    REQUIRE(items.size() == 3);
    CHECK(items[1].first == "yz");
    CHECK(items[2].first == "\\d");
    CHECK(m.assignments.at("B").entry("k") != nullptr);
}

TEST_CASE("python reader: names and + resolve through assignments") {
    auto m = read_python("base = ['a']\nextra = ['b']\nsetup(install_requires=base + extra + ['c'])\n");
    REQUIRE(m.calls.size() == 1);
    auto* r = m.calls[0].keyword("install_requires");
    REQUIRE(r);
    auto items = string_items(*r, m);
    REQUIRE(items.size() == 3);
    CHECK(items[2].first == "c");
}

TEST_CASE("python reader: comments, triple-quoted strings and line numbers") {
    auto m = read_python("'''doc\nstring'''\n# setup(name='no')\nsetup(\n    name='yes',  # comment\n)\n");
    REQUIRE(m.calls.size() == 1);
    CHECK(m.calls[0].line == 4);
    CHECK(m.calls[0].keyword("name")->text == "yes");
}

TEST_CASE("python reader: expressions it cannot evaluate are skipped, calls inside still found") {
    auto m = read_python("x = CUDAExtension('a', ['a.cu']) if cond else CppExtension('a', ['a.cpp'])\n");
    CHECK(m.calls.size() == 2);
}

TEST_CASE("setup.py: install_requires, python_requires, extras_require with provenance") {
    auto info = read_setup_py(
        "from setuptools import setup\n"
        "setup(\n"
        "    name='detectron2',\n"
        "    python_requires='>=3.6',\n"
        "    install_requires=[\n"
        "        'Pillow>=7.1',\n"
        "        \"fvcore>=0.1.5,<0.1.6\",\n"
        "        \"dataclasses; python_version<'3.7'\",\n"
        "    ],\n"
        "    extras_require={'dev': ['flake8==3.8.1']},\n"
        ")\n",
        "setup.py");
    CHECK(info.name == "detectron2");
    CHECK(info.python_requires == ">=3.6");
    CHECK(info.python_from.line == 4);
    REQUIRE(info.install_requires.size() == 3);
    CHECK(info.install_requires[1].text == "fvcore>=0.1.5,<0.1.6");
    CHECK(info.install_requires[1].from.line == 7);
    REQUIRE(info.extras.size() == 1);
    CHECK(info.extras[0].text == "flake8==3.8.1");
    CHECK(info.extras[0].why.find("'dev'") != std::string::npos);
}

TEST_CASE("setup.py: install_requires read from a requirements file names that file") {
    auto info = read_setup_py(
        "def parse_requirements(fname='requirements.txt'):\n    return []\n"
        "setup(name='mmdet3d', install_requires=parse_requirements('requirements/runtime.txt'))\n",
        "setup.py");
    REQUIRE(info.requirement_files.size() == 1);
    CHECK(info.requirement_files[0].first == "requirements/runtime.txt");
    CHECK(info.requirement_files[0].second == 3);
}

TEST_CASE("setup.py: a CUDAExtension bound to a name (Deformable-DETR's ops)") {
    auto info = read_setup_py(
        "import torch\n"
        "from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension\n"
        "def get_extensions():\n"
        "    extension = CppExtension\n"
        "    if torch.cuda.is_available() and CUDA_HOME is not None:\n"
        "        extension = CUDAExtension\n"
        "    ext_modules = [\n"
        "        extension(\n"
        "            \"MultiScaleDeformableAttention\",\n"
        "            sources,\n"
        "        )\n"
        "    ]\n"
        "    return ext_modules\n"
        "setup(name='MultiScaleDeformableAttention', ext_modules=get_extensions(),\n"
        "      cmdclass={'build_ext': torch.utils.cpp_extension.BuildExtension})\n",
        "models/ops/setup.py");
    CHECK(info.cuda);
    REQUIRE(info.extensions.size() == 1);
    CHECK(info.extensions[0].module == "MultiScaleDeformableAttention");
    CHECK(info.extension_line == 8);
}

TEST_CASE("setup.py: mmdetection3d's make_cuda_ext(name=, module=) helper gives dotted modules") {
    auto info = read_setup_py(
        "from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension\n"
        "def make_cuda_ext(name, module, sources, sources_cuda=[]):\n"
        "    extension = CUDAExtension\n"
        "    return extension(name='{}.{}'.format(module, name), sources=sources)\n"
        "setup(name='mmdet3d', ext_modules=[\n"
        "    make_cuda_ext(name='iou3d_cuda', module='mmdet3d.ops.iou3d', sources=['src/iou3d.cpp']),\n"
        "    make_cuda_ext(name='knn_ext', module='mmdet3d.ops.knn', sources=['src/knn.cpp']),\n"
        "])\n",
        "setup.py");
    REQUIRE(info.extensions.size() == 2);
    CHECK(info.extensions[0].module == "mmdet3d.ops.iou3d.iou3d_cuda");
    CHECK(info.extensions[1].module == "mmdet3d.ops.knn.knn_ext");
    CHECK(info.cuda);
}

TEST_CASE("setup.py: a CppExtension alone is not a CUDA build") {
    auto info = read_setup_py(
        "from torch.utils.cpp_extension import CppExtension, BuildExtension\n"
        "setup(ext_modules=[CppExtension('fastops', ['fastops.cpp'])])\n",
        "setup.py");
    REQUIRE(info.extensions.size() == 1);
    CHECK_FALSE(info.cuda);
}

TEST_CASE("setup.py: plain setuptools packages have no extensions") {
    auto info = read_setup_py("from setuptools import setup, Extension\nsetup(name='x', ext_modules=[Extension('c', ['c.c'])])\n",
                              "setup.py");
    CHECK(info.extensions.empty());
}

TEST_CASE("setup.cfg: install_requires over continuation lines, python_requires, extras") {
    auto info = read_setup_cfg(
        "[metadata]\nname = evaluator\n\n[options]\npython_requires = >=3.7\ninstall_requires =\n"
        "    numpy>=1.18\n    treelib\n\n[options.extras_require]\ntest =\n    pytest\n",
        "setup.cfg");
    CHECK(info.name == "evaluator");
    CHECK(info.python_requires == ">=3.7");
    CHECK(info.python_from.line == 5);
    REQUIRE(info.install_requires.size() == 2);
    CHECK(info.install_requires[0].text == "numpy>=1.18");
    CHECK(info.install_requires[0].from.line == 7);
    REQUIRE(info.extras.size() == 1);
    CHECK(info.extras[0].text == "pytest");
}

TEST_CASE("pyproject.toml: [project] dependencies, requires-python, optional and build requirements") {
    auto info = read_pyproject(
        "[build-system]\nrequires = [\"setuptools>=42\", \"torch\"]\n\n[project]\nname = \"pkg\"\n"
        "requires-python = \">=3.8\"\ndependencies = [\n  \"numpy<1.20\",\n  \"einops\",\n]\n\n"
        "[project.optional-dependencies]\ndev = [\"pytest\"]\n",
        "pyproject.toml");
    CHECK(info.name == "pkg");
    CHECK(info.python_requires == ">=3.8");
    CHECK(info.python_from.line == 6);
    REQUIRE(info.install_requires.size() == 2);
    CHECK(info.install_requires[0].text == "numpy<1.20");
    CHECK(info.install_requires[0].from.line == 8);
    REQUIRE(info.build_requires.size() == 2);
    REQUIRE(info.extras.size() == 1);
    CHECK(info.extras[0].why.find("optional-dependencies.dev") == 0);
}

TEST_CASE("pyproject.toml: bad TOML is an InputError with file and line") {
    CHECK_THROWS_WITH_AS(read_pyproject("[project]\nname = \n", "pyproject.toml"),
                         doctest::Contains("pyproject.toml:2: not valid TOML"), InputError);
}

TEST_CASE("environment.yml: channels, conda dependencies and pip entries with lines") {
    auto env = read_environment_yml(
        "name: echofusion\nchannels:\n  - pytorch\n  - conda-forge\ndependencies:\n  - python=3.7\n"
        "  - cudatoolkit=11.1\n  - pip\n  - pip:\n    - numpy==1.20.0\n    - -r requirements.txt\n",
        "environment.yml");
    CHECK(env.channels == std::vector<std::string>{"pytorch", "conda-forge"});
    REQUIRE(env.conda.size() == 3);
    CHECK(env.conda[1].text == "cudatoolkit=11.1");
    CHECK(env.conda[1].from.line == 7);
    REQUIRE(env.pip.size() == 2);
    CHECK(env.pip[0].value == "numpy==1.20.0");
    CHECK(env.pip[0].line == 10);
    CHECK(env.pip[1].kind == PipItem::Kind::include);
}

TEST_CASE("environment.yml: a wrong shape names file and line") {
    CHECK_THROWS_WITH_AS(read_environment_yml("dependencies:\n  - {conda: x}\n", "environment.yml"),
                         "environment.yml:2: dependencies: expected a package spec or a pip: list", InputError);
    CHECK_THROWS_WITH_AS(read_environment_yml("channels: pytorch\n", "environment.yml"),
                         "environment.yml:1: channels: expected a list", InputError);
}

TEST_CASE("setup.py: an extension list returned directly (Deformable-DETR's `return [extension(...)]`)") {
    auto info = read_setup_py(
        "from torch.utils.cpp_extension import CppExtension, CUDAExtension\n"
        "def get_extensions():\n"
        "    extension = CppExtension\n"
        "    if cond:\n"
        "        extension = CUDAExtension\n"
        "    return [extension(\n"
        "        \"MultiScaleDeformableAttention\",\n"
        "        sources,\n"
        "    )]\n"
        "setup(name='MultiScaleDeformableAttention', ext_modules=get_extensions())\n",
        "models/ops/setup.py");
    REQUIRE(info.extensions.size() == 1);
    CHECK(info.extensions[0].module == "MultiScaleDeformableAttention");
    CHECK(info.extensions[0].line == 6);
    CHECK(info.cuda);
}

TEST_CASE("python reader: keywords are not called or subscripted") {
    auto m = read_python("def f():\n    return (g(1))\nx = 'a' in ['a']\n");
    bool saw_g = false;
    for (const auto& c : m.calls) saw_g = saw_g || c.text == "g";
    CHECK(saw_g);
    for (const auto& c : m.calls) CHECK(c.text != "return");
}

// Found by fuzz/setup_py (issue 20, session 5): CUDAExtension('', ...) became an extension
// without a name, which the spec reader refuses. An empty string names no module.
TEST_CASE("setup.py: an extension whose name is empty is no extension") {
    auto info = read_setup_py(
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "setup(ext_modules=[CUDAExtension('', ['a.cu']), CUDAExtension('ops', ['b.cu'])])\n",
        "setup.py");
    REQUIRE(info.extensions.size() == 1);
    CHECK(info.extensions[0].module == "ops");
}
