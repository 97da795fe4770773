#include "resolver/infer/recipe.hpp"

#include <algorithm>
#include <cctype>

#include <yaml-cpp/yaml.h>

#include "resolver/specs/errors.hpp"
#include "resolver/lock/spec_io.hpp"

namespace envlock {

namespace recipes {
// Generated from examples/*/recipe.yaml by cmake/embed.cmake: (file name, contents).
std::vector<std::pair<std::string_view, std::string_view>> embedded_recipes();
}  // namespace recipes

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

[[noreturn]] void fail(std::string_view file, const YAML::Node& at, const std::string& what) {
    std::string where(file);
    if (at.Mark().line >= 0) where += ":" + std::to_string(at.Mark().line + 1);
    throw InputError(where + ": " + what);
}

std::string required(std::string_view file, const YAML::Node& root, const char* key) {
    auto n = root[key];
    if (!n) fail(file, root, std::string("missing '") + key + "'");
    if (!n.IsScalar() || n.Scalar().empty()) fail(file, n, std::string(key) + ": expected a non-empty string");
    return n.Scalar();
}

std::string optional(std::string_view file, const YAML::Node& root, const char* key) {
    auto n = root[key];
    if (!n) return {};
    if (!n.IsScalar()) fail(file, n, std::string(key) + ": expected a string");
    return n.Scalar();
}

}  // namespace

Recipe recipe_from_yaml_text(std::string_view text, std::string_view file) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        throw InputError(std::string(file) + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
    }
    if (!root.IsMap()) fail(file, root, "expected a map with recipe:, repo:, rev: and spec:");
    for (auto it = root.begin(); it != root.end(); ++it) {
        static const std::vector<std::string> keys = {"recipe", "repo", "rev", "ref", "expected", "spec"};
        auto key = it->first.Scalar();
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
            fail(file, it->first, "unknown key '" + key + "' (expected one of: recipe, repo, rev, ref, expected, spec)");
    }
    Recipe r;
    r.name = required(file, root, "recipe");
    r.repo = required(file, root, "repo");
    r.rev = required(file, root, "rev");
    r.ref = optional(file, root, "ref");
    if (auto e = root["expected"]) {
        if (!e.IsMap()) fail(file, e, "expected: expected a map of name: what the lock should hold");
        for (auto it = e.begin(); it != e.end(); ++it) {
            if (!it->second.IsScalar()) fail(file, it->second, "expected." + it->first.Scalar() + ": expected a string");
            r.expected.emplace_back(it->first.Scalar(), it->second.Scalar());
        }
    }
    if (!root["spec"]) fail(file, root, "missing 'spec'");
    r.spec = spec_from_yaml(root["spec"], file);
    if (r.spec.name.empty()) r.spec.name = r.name;
    return r;
}

namespace {

// The `recipe:` line's value, read without parsing the YAML (it names the file in messages
// and lets load_recipe parse only the one asked for); "" when there is none.
std::string recipe_name_in(std::string_view text) {
    auto at = text.find("\nrecipe: ");
    if (text.rfind("recipe: ", 0) == 0) at = 0; else if (at != std::string_view::npos) ++at;
    if (at == std::string_view::npos) return "";
    auto start = at + 8;
    auto end = text.find_first_of(" \n#", start);
    return std::string(text.substr(start, end - start));
}

Recipe parse_embedded(std::string_view file, std::string_view text) {
    std::string name = recipe_name_in(text);
    std::string label = "examples/" + (name.empty() ? std::string() : name + "/") + std::string(file);
    return recipe_from_yaml_text(text, label);
}

}  // namespace

std::vector<Recipe> embedded_recipes() {
    std::vector<Recipe> out;
    for (const auto& [file, text] : recipes::embedded_recipes()) out.push_back(parse_embedded(file, text));
    std::sort(out.begin(), out.end(), [](const Recipe& a, const Recipe& b) { return lower(a.name) < lower(b.name); });
    return out;
}

std::optional<Recipe> load_recipe(std::string_view name) {
    for (const auto& [file, text] : recipes::embedded_recipes()) {
        if (lower(recipe_name_in(text)) != lower(name)) continue;
        Recipe r = parse_embedded(file, text);
        if (lower(r.name) == lower(name)) return r;
    }
    return std::nullopt;
}

}  // namespace envlock
