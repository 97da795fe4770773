// Build step: converts the knowledge YAML files to JSON and validates each against the
// knowledge schema, so the binary embeds data it can parse quickly and that is known good.
// Usage: envlock_knowledge_to_json SCHEMA OUT_DIR FILE.yaml...
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "resolver/lock/json_schema.hpp"
#include "resolver/lock/yaml_json.hpp"

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: envlock_knowledge_to_json SCHEMA OUT_DIR FILE.yaml...\n";
        return 2;
    }
    std::ifstream schema_in(argv[1]);
    std::stringstream schema_text;
    schema_text << schema_in.rdbuf();
    auto schema = nlohmann::json::parse(schema_text.str());
    for (int i = 3; i < argc; ++i) {
        std::filesystem::path input(argv[i]);
        envlock::JsonLines lines;
        nlohmann::json doc;
        try {
            doc = envlock::yaml_to_json(YAML::LoadFile(input.string()), "", &lines);
        } catch (const YAML::Exception& e) {
            std::cerr << input.string() << ":" << e.mark.line + 1 << ": not valid YAML: " << e.msg << "\n";
            return 1;
        }
        auto violations = envlock::validate(schema, doc);
        if (!violations.empty()) {
            const auto& v = violations.front();
            std::cerr << input.string() << ":" << envlock::line_of(lines, v.path) << ": " << v.path << ": " << v.message << "\n";
            return 1;
        }
        std::filesystem::path out = std::filesystem::path(argv[2]) / (input.filename().string() + ".json");
        std::ofstream(out.string() + ".tmp") << doc.dump();
        std::filesystem::rename(out.string() + ".tmp", out);
    }
    return 0;
}
