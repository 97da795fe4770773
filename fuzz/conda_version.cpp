// Conda versions and version specs (resolver/specs/conda_version): Version::parse and
// VersionSpec::parse on the input, then its first line (a version) against the rest (a spec),
// and glob_match of the two. Properties: a version printed and re-parsed compares equal and
// prints the same; a version spec printed and re-parsed prints the same and contains the same
// versions.
#include "fuzz/fuzz.hpp"
#include "resolver/specs/conda_version.hpp"
#include "resolver/specs/errors.hpp"

using namespace envlock;
using envlock::fuzz::property;

namespace {

void check_version(const conda::Version& v) {
    auto back = conda::Version::try_parse(v.str());
    property(back.has_value(), "conda Version::parse(v.str()) parses", v.str());
    property(back->compare(v) == 0 && v.compare(*back) == 0, "conda Version::parse(v.str()) == v", v.str(), back->str());
    property(back->str() == v.str(), "conda Version::parse(v.str()).str() == v.str()", v.str(), back->str());
    property(v.starts_with(v), "a version starts with itself", v.str());
}

std::optional<conda::VersionSpec> check_spec(std::string_view text) {
    conda::VersionSpec spec;
    try {
        spec = conda::VersionSpec::parse(text);
    } catch (const Error&) {
        return std::nullopt;
    }
    conda::VersionSpec back;
    try {
        back = conda::VersionSpec::parse(spec.str());
    } catch (const Error& e) {
        fuzz::violated("VersionSpec::parse(s.str()) parses", spec.str(), e.what());
    }
    property(back.str() == spec.str(), "VersionSpec::parse(s.str()).str() == s.str()", spec.str(), back.str());
    (void)spec.is_exact();
    return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto input = fuzz::text(data, size);
    if (auto v = conda::Version::try_parse(input)) check_version(*v);
    check_spec(input);

    auto [first, rest] = fuzz::split_first_line(input);
    auto v = conda::Version::try_parse(first);
    auto spec = check_spec(rest);
    if (v && spec) {
        check_version(*v);
        bool in = spec->contains(*v);
        property(conda::VersionSpec::parse(spec->str()).contains(*v) == in,
                 "a re-parsed version spec contains the same versions", spec->str(), v->str());
        if (auto w = conda::Version::try_parse(rest)) {
            int c = v->compare(*w);
            property((c < 0) == (w->compare(*v) > 0) && (c == 0) == (w->compare(*v) == 0),
                     "conda version order is antisymmetric", v->str(), w->str());
            (void)v->starts_with(*w);
        }
    }
    (void)conda::glob_match(first, rest);
    return 0;
}
