#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/infer/infer.hpp"
#include "resolver/infer/recipe.hpp"
#include "resolver/lock/spec_io.hpp"

namespace envlock::cli {

namespace {

// The repo's name is its directory's name ("BEVFormer"), also for "." or a trailing slash.
std::string repo_name(const std::filesystem::path& root) {
    auto p = std::filesystem::absolute(root).lexically_normal();
    auto name = p.filename().string();
    if (name.empty()) name = p.parent_path().filename().string();
    return name;
}

}  // namespace

void add_spec(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("spec", "Print the spec inferred from a repo checkout, with provenance");
    auto path = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("path", *path, "Repo checkout to read (README, docs, requirements, setup.py, environment.yml), or a recipe name")
        ->required();
    cmd->add_flag("--json", *json, "Print JSON instead of YAML");
    cmd->callback([path, json, &exit_code] {
        Spec spec;
        std::error_code ec;
        if (!std::filesystem::exists(*path, ec)) {
            // Not a checkout: a recipe of that name (envlock spec BEVFormer) shows its spec.
            auto recipe = load_recipe(*path);
            if (!recipe) {
                std::string names;
                for (const auto& r : embedded_recipes()) names += (names.empty() ? "" : ", ") + r.name;
                throw InputError(*path + ": no such directory, and no recipe of that name (recipes: " + names + ")");
            }
            spec = recipe->spec;
            if (!*json)
                std::cerr << "envlock: recipe " << recipe->name << ": " << recipe->repo << " at " << recipe->rev
                          << (recipe->ref.empty() ? "" : " (" + recipe->ref + ")") << "\n";
        } else {
            spec = infer_spec(collect_repo_files(*path), repo_name(*path));
        }
        if (*json) {
            std::cout << spec_to_json(spec).dump(2) << "\n";
        } else {
            YAML::Emitter out;
            out << YAML::BeginMap << YAML::Key << "spec" << YAML::Value;
            emit_spec(out, spec);
            out << YAML::EndMap;
            std::cout << out.c_str() << "\n";
            std::cerr << "envlock: " << spec.requirements.size() << " requirements, " << spec.sources.size()
                      << " sources, " << spec.extensions.size() << " extensions from "
                      << (spec.inferred_from.empty() ? std::string("no file") : std::to_string(spec.inferred_from.size()) + " file(s)")
                      << "; " << spec.notes.size() << " notes, " << spec.contradictions.size() << " contradictions\n";
        }
        exit_code = 0;
    });
}

}  // namespace envlock::cli
