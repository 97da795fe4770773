#pragma once
// The Python side of the mirror: PyPI projects, download.pytorch.org-like torch wheels
// and openmmlab-like mmcv wheels, as PyDist values with the path each file is published at.
#include <string>
#include <vector>

#include "tests/mirror/model.hpp"

namespace envlock::mirror {

struct Published {
    PyDist dist;
    std::string path;  // where the file lives, relative to the mirror root
};

// PyPI projects (files under pypi/packages/<project>/).
std::vector<Published> pypi_dists(const Tables& tables);

// torch/torchvision/torchaudio wheels under whl/<variant>/ (torchaudio before 0.10 under whl/).
std::vector<Published> torch_wheels(const Tables& tables);

// mmcv-full / mmcv wheels under mmcv/dist/<cuXXX|cpu>/torch<X.Y.0>/.
std::vector<Published> mmcv_wheels(const Tables& tables);

// "cp36"… for a Python 3 minor; the ABI tag has the "m" suffix before 3.8.
std::string cp_tag(int minor);
std::string abi_tag(int minor);

// The DSL the built-in PyPI table is written in, exposed for its tests:
//   Project version kind requires-python :: requirement | requirement …
// kind: py3 | py2.py3 | cpAA-cpBB[@platform] | abi3:cpAA[@platform] | tag:<full tag> | sdist.
// Throws InputError naming the line when a line does not parse.
std::vector<PyDist> parse_pypi_table(const std::string& text, const std::string& source);

}  // namespace envlock::mirror
