#pragma once
// Writers of the wire formats: conda channels (repodata.json + .zst), the PyPI simple
// index (PEP 503 HTML, PEP 691 JSON, PEP 658 metadata files) and JSON API, the
// download.pytorch.org-like find-links page and per-variant indexes, and the
// openmmlab-like mmcv pages. Each builds the artifacts it publishes and returns how many.
#include <string>
#include <vector>

#include "tests/mirror/model.hpp"
#include "tests/mirror/python_tables.hpp"

namespace envlock::mirror {

int write_conda_channels(const std::string& root, const std::vector<CondaRecord>& records);
int write_pypi(const std::string& root, const std::vector<Published>& dists);
int write_torch_find_links(const std::string& root, const std::vector<Published>& wheels);
int write_mmcv_pages(const std::string& root, const std::vector<Published>& wheels);

// PEP 440 ordering, enough for the mirror's versions (release, pre, post, dev, local).
bool pep440_less(const std::string& a, const std::string& b);

}  // namespace envlock::mirror
