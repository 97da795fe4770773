#pragma once
// Target <-> YAML/JSON, the form `envlock detect` prints and `--target FILE` reads back
// (round trip: detect > t.yaml; detect --target t.yaml gives the same target). Keys:
//   platform, kernel, osx (macOS version), wsl, glibc, cpu-model, cpu-flags, cores, memory-bytes, driver, driver-cuda,
//   gpus: [{name, sm}], compilers: [{kind, path, version}], cuda-toolkits: [{path, version, gpu-archs}]
// Absent values are null (no driver, no glibc); a GPU of unknown capability has sm: null.
#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "resolver/lock/target.hpp"

namespace envlock {

nlohmann::json target_to_json(const Target& t);
std::string target_to_yaml(const Target& t);

// Parses YAML or JSON (JSON is YAML). InputError "FILE:LINE: what was expected" on bad input;
// unknown keys are errors too, so a typo does not silently drop a fact.
Target target_from_text(const std::string& text, const std::string& filename);
// A target mapping inside a larger file (a lock's targets): errors name that file's lines.
Target target_from_yaml(const YAML::Node& node, const std::string& filename);

}  // namespace envlock
