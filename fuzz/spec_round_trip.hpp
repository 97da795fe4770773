#pragma once
// The spec round trip of issue 20: a spec inferred, printed and re-read is equal. Equal is
// checked on the printed forms (YAML, then JSON): printing is deterministic, so two specs that
// print alike are alike in everything the lock keeps.
#include <string>

#include "fuzz/fuzz.hpp"
#include "resolver/infer/infer.hpp"
#include "resolver/lock/spec_io.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::fuzz {

inline void check_spec_round_trip(const Spec& spec) {
    std::string yaml = spec_to_yaml_text(spec);
    Spec back;
    try {
        back = spec_from_yaml_text(yaml, "envlock.yaml");
    } catch (const Error& e) {
        violated("an inferred spec printed as YAML reads back", yaml, e.what());
    }
    std::string again = spec_to_yaml_text(back);
    property(again == yaml, "spec_to_yaml_text(spec_from_yaml_text(y)) == y", yaml, again);
    std::string json = spec_to_json(spec).dump();
    Spec from_json;
    try {
        from_json = spec_from_json(nlohmann::json::parse(json), "spec.json");
    } catch (const Error& e) {
        violated("an inferred spec printed as JSON reads back", json, e.what());
    }
    std::string json_again = spec_to_json(from_json).dump();
    property(json_again == json, "spec_to_json(spec_from_json(j)) == j", json, json_again);
}

// A checkout holding one file, `path` with `text`, inferred; bad input (Error) is the
// documented answer, anything else must round-trip.
inline void check_inferred_checkout(const std::string& path, const std::string& text) {
    RepoFiles repo;
    repo.files[path] = text;
    Spec spec;
    try {
        spec = infer_spec(repo, "repo");
    } catch (const Error&) {
        return;
    }
    check_spec_round_trip(spec);
}

}  // namespace envlock::fuzz
