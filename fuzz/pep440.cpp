// PEP 440 versions and specifiers (resolver/specs/pep440): Version::parse and SpecifierSet::parse
// on the whole input, then on its first line (a version) against the rest (a specifier set).
// Properties: a version printed and re-parsed compares equal and prints the same; a specifier
// set printed and re-parsed prints the same and contains the same versions.
#include "fuzz/fuzz.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep440.hpp"

using namespace envlock;
using envlock::fuzz::property;

namespace {

void check_version(const pep440::Version& v) {
    std::string printed = v.str();
    auto back = pep440::Version::try_parse(printed);
    property(back.has_value(), "Version::parse(v.str()) parses", printed);
    property(*back == v, "Version::parse(v.str()) == v", printed, back->str());
    property(back->str() == printed, "Version::parse(v.str()).str() == v.str()", printed, back->str());
    property(v.public_version() <= v, "public_version() <= v", printed, v.public_version().str());
    (void)v.base_version();
}

std::optional<pep440::SpecifierSet> check_set(std::string_view text) {
    pep440::SpecifierSet set;
    try {
        set = pep440::SpecifierSet::parse(text);
    } catch (const Error&) {
        return std::nullopt;
    }
    std::string printed = set.str();
    pep440::SpecifierSet back;
    try {
        back = pep440::SpecifierSet::parse(printed);
    } catch (const Error& e) {
        fuzz::violated("SpecifierSet::parse(s.str()) parses", printed, e.what());
    }
    property(back.str() == printed, "SpecifierSet::parse(s.str()).str() == s.str()", printed, back.str());
    return set;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto input = fuzz::text(data, size);
    if (auto v = pep440::Version::try_parse(input)) check_version(*v);
    try {
        (void)pep440::Version::parse(input);
    } catch (const Error&) {
    }
    check_set(input);

    auto [first, rest] = fuzz::split_first_line(input);
    auto v = pep440::Version::try_parse(first);
    auto set = check_set(rest);
    if (v && set) {
        check_version(*v);
        bool in = set->contains(*v);
        auto back = pep440::SpecifierSet::parse(set->str());
        property(back.contains(*v) == in, "a re-parsed specifier set contains the same versions", set->str(), v->str());
        (void)set->contains(*v, true);
        (void)set->filter({*v, v->public_version(), v->base_version()});
    }
    return 0;
}
