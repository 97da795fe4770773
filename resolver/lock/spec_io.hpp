#pragma once
// The Spec's YAML form (the `spec:` block of envlock.yaml, hand-editable) and its JSON form
// (`envlock spec --json`). Writing is deterministic: the same Spec gives the same bytes.
// Reading validates and names file:line and the path of the bad entry, e.g.
//   envlock.yaml:12: spec.requirements[3]: expected a string or a map with pypi:/conda:/any:
//
// A requirement is a plain string (either ecosystem, no provenance) or a one-entry map
// {pypi: TEXT} / {conda: TEXT} / {any: TEXT} with an optional `from: "file:line"`.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "resolver/lock/spec.hpp"

namespace envlock {

// The package directory of a source inside its repository, from its documented install
// command ("cd DBReader && pip install ." -> "DBReader"); "" for the repository's root.
std::string source_project_dir(const SpecSource& s);
// "docs/install.md:14"; "https://github.com/o/r/blob/v1/docs/install.md#L14" for an upstream file;
// "docs/install.md" when the line is unknown; "" when there is no file.
std::string format_provenance(const Provenance& p);
// Inverse of format_provenance: a trailing ":<digits>" is the line, or "#L<digits>" after a URL.
Provenance parse_provenance(std::string_view text);

// Why a requirement's text does not parse in its ecosystem (PEP 508 for pypi, MatchSpec for
// conda, either for ""); nullopt when it does. Reading a spec refuses such entries.
std::optional<std::string> requirement_problem(const SpecRequirement& r);

// Whether `value` is one of conda's channel_priority settings: strict, flexible, disabled.
bool valid_channel_priority(std::string_view value);

// Emits the spec as one YAML map (the value of `spec:`) into an emitter the caller owns.
void emit_spec(YAML::Emitter& out, const Spec& spec);
// The same map as a node (flow styles kept). yaml-cpp nodes drop quoting, so emitting the node
// writes `python: 3.8` where emit_spec writes `python: "3.8"`: write files with emit_spec.
YAML::Node spec_to_yaml(const Spec& spec);
// The map alone, as text ending in a newline.
std::string spec_to_yaml_text(const Spec& spec);

// `node` is the spec map; `file` names the document for messages ("envlock.yaml").
// Throws InputError with file:line on anything malformed.
Spec spec_from_yaml(const YAML::Node& node, std::string_view file);
// Parses text that is either a bare spec map or a document with a top-level `spec:` key
// (an envlock.yaml or a recipe). Syntax errors are InputErrors with the line.
Spec spec_from_yaml_text(std::string_view text, std::string_view file);

nlohmann::json spec_to_json(const Spec& spec);
Spec spec_from_json(const nlohmann::json& j, std::string_view file);

}  // namespace envlock
