// Artifact file names: wheel (PEP 427) and sdist names (resolver/specs/wheel), conda dist
// names and package file names (resolver/specs/conda_filename), and the PyPI readers' own
// split (fetch/pypi_readers parse_dist_filename). Properties: a conda file name printed and
// re-parsed prints the same; a parsed wheel's normalized version is a PEP 440 version that
// prints as itself.
#include "fetch/pypi_readers.hpp"
#include "fuzz/fuzz.hpp"
#include "resolver/specs/conda_filename.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/wheel.hpp"

using namespace envlock;
using envlock::fuzz::property;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const auto tags = wheel::compatible_tags("3.8", "linux-64", "2.31");
    auto input = fuzz::text(data, size);
    try {
        auto w = wheel::WheelName::parse(input);
        auto v = pep440::Version::try_parse(w.version);
        property(v.has_value() && v->str() == w.version, "a wheel's version is normalized PEP 440", w.version);
        static const wheel::TagRanks ranks(tags);
        int rank = wheel::best_tag_rank(w, tags);
        property(ranks.best(w) == rank, "TagRanks::best(w) == best_tag_rank(w)", input);
    } catch (const Error&) {
    }
    (void)wheel::SdistName::try_parse(input);
    (void)wheel::url_decode(input);
    try {
        auto d = conda::DistName::parse(input);
        conda::DistName back;
        try {
            back = conda::DistName::parse(d.str());
        } catch (const Error& e) {
            fuzz::violated("DistName::parse(d.str()) parses", d.str(), e.what());
        }
        property(back.str() == d.str(), "DistName::parse(d.str()).str() == d.str()", d.str(), back.str());
    } catch (const Error&) {
    }
    (void)conda::PackageFilename::is_package_filename(input);
    try {
        auto p = conda::PackageFilename::parse(input);
        conda::PackageFilename back;
        try {
            back = conda::PackageFilename::parse(p.str());
        } catch (const Error& e) {
            fuzz::violated("PackageFilename::parse(p.str()) parses", p.str(), e.what());
        }
        property(back.str() == p.str(), "PackageFilename::parse(p.str()).str() == p.str()", p.str(), back.str());
    } catch (const Error&) {
    }
    auto [first, rest] = fuzz::split_first_line(input);
    (void)fetch::parse_dist_filename(first, rest);
    (void)fetch::parse_dist_filename(input);
    return 0;
}
