// PEP 508 requirements and markers (resolver/specs/pep508): Requirement::parse and
// Marker::parse on the input, each evaluated against a CPython 3.8 linux-64 target.
// Properties: a requirement (a marker) printed and re-parsed prints the same and applies
// (evaluates) the same.
#include "fuzz/fuzz.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep508.hpp"

using namespace envlock;
using envlock::fuzz::property;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const auto env = pep508::MarkerEnv::for_target("3.8", "linux-64");
    auto input = fuzz::text(data, size);
    try {
        auto r = pep508::Requirement::parse(input);
        std::string printed = r.str();
        pep508::Requirement back;
        try {
            back = pep508::Requirement::parse(printed);
        } catch (const Error& e) {
            fuzz::violated("Requirement::parse(r.str()) parses", printed, e.what());
        }
        property(back.str() == printed, "Requirement::parse(r.str()).str() == r.str()", printed, back.str());
        property(back.normalized_name == r.normalized_name, "re-parsed requirement keeps its name", printed, back.name);
        property(back.applies(env) == r.applies(env), "re-parsed requirement applies alike", printed);
        property(back.applies(env, {"cv"}) == r.applies(env, {"cv"}), "re-parsed requirement applies alike (extra)", printed);
        (void)r.to_json().dump();
    } catch (const Error&) {
    }
    try {
        auto m = pep508::Marker::parse(input);
        std::string printed = m.str();
        pep508::Marker back;
        try {
            back = pep508::Marker::parse(printed);
        } catch (const Error& e) {
            fuzz::violated("Marker::parse(m.str()) parses", printed, e.what());
        }
        property(back.str() == printed, "Marker::parse(m.str()).str() == m.str()", printed, back.str());
        property(back.evaluate(env) == m.evaluate(env), "re-parsed marker evaluates alike", printed);
    } catch (const Error&) {
    }
    (void)pep508::normalize_name(input);
    return 0;
}
