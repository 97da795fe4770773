#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "resolver/infer.hpp"
#include "resolver/spec_io.hpp"

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
    cmd->add_option("path", *path, "Repo checkout to read (README, docs, requirements, setup.py, environment.yml)")
        ->required();
    cmd->add_flag("--json", *json, "Print JSON instead of YAML");
    cmd->callback([path, json, &exit_code] {
        auto files = collect_repo_files(*path);
        auto spec = infer_spec(files, repo_name(*path));
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
