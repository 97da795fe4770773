// The target reader (resolver/lock/target_io: target_from_text, YAML or JSON, what
// `--target FILE` reads). Property: a target read, printed (YAML, then JSON) and re-read
// prints the same.
#include "fuzz/fuzz.hpp"
#include "resolver/lock/target_io.hpp"
#include "resolver/specs/errors.hpp"

using namespace envlock;
using envlock::fuzz::property;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string input(fuzz::text(data, size));
    Target t;
    try {
        t = target_from_text(input, "target.yaml");
    } catch (const Error&) {
        return 0;
    }
    std::string yaml = target_to_yaml(t);
    Target back;
    try {
        back = target_from_text(yaml, "target.yaml");
    } catch (const Error& e) {
        fuzz::violated("a printed target reads back (YAML)", yaml, e.what());
    }
    property(target_to_yaml(back) == yaml, "target_to_yaml(target_from_text(y)) == y", yaml, target_to_yaml(back));
    std::string json = target_to_json(t).dump(2);
    Target from_json;
    try {
        from_json = target_from_text(json, "target.json");
    } catch (const Error& e) {
        fuzz::violated("a printed target reads back (JSON)", json, e.what());
    }
    property(target_to_json(from_json).dump(2) == json, "target_to_json(target_from_text(j)) == j", json,
             target_to_json(from_json).dump(2));
    return 0;
}
