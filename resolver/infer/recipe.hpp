#pragma once
// Recipes: a paper repo's environment written down once, by hand, from its documented install
// (examples/<Name>/recipe.yaml): where the repo lives, the commit the recipe was written for,
// the spec, and what the case says the lock should come to. The files are embedded in the
// binary at build time, so `envlock resolve BEVFormer` works from an installed envlock.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "resolver/lock/spec.hpp"

namespace envlock {

struct Recipe {
    std::string name;         // "BEVFormer"; looked up case-insensitively
    std::string repo;         // https://github.com/fundamentalvision/BEVFormer
    std::string rev;          // the commit the recipe was written for (what --clone checks out)
    std::string ref;          // a tag naming that commit, when there is one ("v0.6")
    std::vector<std::pair<std::string, std::string>> expected;   // what the lock should come to, in the file's order
    Spec spec;
};

// Reads and validates one recipe; errors are InputErrors naming file:line.
Recipe recipe_from_yaml_text(std::string_view text, std::string_view file);

// The recipes built into this binary, sorted by name.
std::vector<Recipe> embedded_recipes();
// The embedded recipe of that name (case-insensitive), if any.
std::optional<Recipe> load_recipe(std::string_view name);

}  // namespace envlock
