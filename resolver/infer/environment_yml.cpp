// conda's environment.yml: channels, conda dependencies and the `pip:` list.
#include <yaml-cpp/yaml.h>

#include "resolver/specs/errors.hpp"
#include "resolver/infer/parts.hpp"

namespace envlock::infer {

namespace {

int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

[[noreturn]] void fail(const std::string& path, const YAML::Node& n, const std::string& what) {
    auto line = line_of(n);
    throw InputError(path + (line ? ":" + std::to_string(line) : "") + ": " + what);
}

}  // namespace

EnvironmentFile read_environment_yml(std::string_view text, const std::string& path) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        throw InputError(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
    }
    EnvironmentFile env;
    if (root.IsNull()) return env;
    if (!root.IsMap()) fail(path, root, "expected a map with channels: and dependencies:");
    if (auto channels = root["channels"]) {
        if (!channels.IsSequence()) fail(path, channels, "channels: expected a list");
        for (const auto& c : channels) {
            if (!c.IsScalar()) fail(path, c, "channels: expected channel names");
            env.channels.push_back(c.Scalar());
        }
    }
    if (auto deps = root["dependencies"]) {
        if (!deps.IsSequence()) fail(path, deps, "dependencies: expected a list");
        for (const auto& d : deps) {
            if (d.IsScalar()) {
                env.conda.push_back({d.Scalar(), "conda", {path, line_of(d)}});
                continue;
            }
            if (d.IsMap() && d["pip"]) {
                auto pip = d["pip"];
                if (!pip.IsSequence()) fail(path, pip, "pip: expected a list of requirements");
                for (const auto& p : pip) {
                    if (!p.IsScalar()) fail(path, p, "pip: expected a requirement string");
                    // Entries may carry pip options, exactly as a requirements.txt line.
                    auto items = read_requirements_txt(p.Scalar());
                    for (auto& item : items) {
                        item.line = line_of(p);
                        env.pip.push_back(item);
                    }
                }
                continue;
            }
            fail(path, d, "dependencies: expected a package spec or a pip: list");
        }
    }
    return env;
}

}  // namespace envlock::infer
