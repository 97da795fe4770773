#pragma once
// YAML -> JSON with YAML's core-schema scalar types (plain scalars become numbers, booleans
// or null; quoted ones stay strings), remembering the line each JSON pointer came from, so a
// schema violation found on the JSON can be reported at its YAML line.
#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace envlock {

using JsonLines = std::map<std::string, int>;   // JSON pointer -> 1-based line

nlohmann::json yaml_to_json(const YAML::Node& node, const std::string& pointer = "", JsonLines* lines = nullptr);

// The line of the deepest prefix of `pointer` that has one; 0 when none does.
int line_of(const JsonLines& lines, std::string pointer);

}  // namespace envlock
