// PyPI JSON readers (fetch/pypi_readers): the JSON API (/pypi/NAME/json) and the PEP 691
// simple API, read for every project and for one. Property: the files read for one project
// are among those read for all. Files, not versions: a legacy sdist name is split into name
// and version at the project's name when it is known ("torch-2.0.0-c+38-x-1.0.0.tar.gz" is
// torch 2.0.0-c+38-x-1.0.0 for "torch", and the project "torch-2.0.0-c+38-x" 1.0.0 without),
// as pip splits it (pip/_internal/index/package_finder.py, _extract_version_from_fragment).
#include "fetch/pypi_readers.hpp"
#include "fuzz/fuzz.hpp"
#include "resolver/specs/errors.hpp"

using namespace envlock;
using envlock::fuzz::property;

namespace {

void subset(const IndexRecords& some, const IndexRecords& all, const char* what) {
    for (const auto& r : some) {
        bool found = false;
        for (const auto& a : all) found = found || (a.url == r.url && a.filename == r.filename && a.sha256 == r.sha256);
        property(found, what, r.url, r.version);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto input = fuzz::text(data, size);
    try {
        auto all = fetch::parse_pypi_json(input, "https://pypi.example/pypi/torch/json");
        auto one = fetch::parse_pypi_json(input, "https://pypi.example/pypi/torch/json", "torch");
        subset(one, all, "parse_pypi_json(project) reads a subset of parse_pypi_json()");
    } catch (const Error&) {
    }
    try {
        auto all = fetch::parse_simple_json(input, "https://pypi.example/simple/torch/");
        auto one = fetch::parse_simple_json(input, "https://pypi.example/simple/torch/", "torch");
        subset(one, all, "parse_simple_json(project) reads a subset of parse_simple_json()");
    } catch (const Error&) {
    }
    return 0;
}
