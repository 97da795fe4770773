// Declarative packaging metadata: pyproject.toml ([project], [build-system]) and setup.cfg
// ([options] install_requires, python_requires, [options.extras_require]).
#include <sstream>

#include <toml++/toml.h>

#include "resolver/specs/errors.hpp"
#include "resolver/infer/parts.hpp"

namespace envlock::infer {

namespace {

std::string trim(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) return {};
    auto e = s.find_last_not_of(" \t\r");
    return std::string(s.substr(b, e - b + 1));
}

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

void strings_of(const toml::node* n, const std::string& path, std::vector<SpecRequirement>& into) {
    if (!n || !n->is_array()) return;
    for (const auto& item : *n->as_array())
        if (auto s = item.value<std::string>()) into.push_back({*s, "pypi", {path, line_of(item)}});
}

}  // namespace

PackageInfo read_pyproject(std::string_view text, const std::string& path) {
    PackageInfo info;
    toml::table doc;
    try {
        doc = toml::parse(text, path);
    } catch (const toml::parse_error& e) {
        throw InputError(path + ":" + std::to_string(e.source().begin.line) + ": not valid TOML: " +
                         std::string(e.description()));
    }
    if (auto* project = doc["project"].as_table()) {
        if (auto n = (*project)["name"].value<std::string>()) info.name = *n;
        strings_of((*project)["dependencies"].node(), path, info.install_requires);
        // PEP 621: dependencies listed in `dynamic` come from the build backend instead.
        bool dynamic = false;
        if (auto* d = (*project)["dynamic"].as_array())
            for (const auto& item : *d)
                if (item.value<std::string>() == std::string("dependencies")) dynamic = true;
        info.declares = !dynamic;
        // setuptools' [tool.setuptools.dynamic] dependencies = {file = [...]}.
        if (dynamic) {
            auto files = doc["tool"]["setuptools"]["dynamic"]["dependencies"]["file"];
            if (auto one = files.value<std::string>()) info.requirement_files.push_back({*one, 0});
            if (auto* many = files.as_array())
                for (const auto& f : *many)
                    if (auto v = f.value<std::string>()) info.requirement_files.push_back({*v, 0});
            if (!info.requirement_files.empty()) info.declares = true;
        }
        if (auto* py = (*project)["requires-python"].node(); py && py->is_string()) {
            info.python_requires = *py->value<std::string>();
            info.python_from = {path, line_of(*py)};
        }
        if (auto* optional = (*project)["optional-dependencies"].as_table()) {
            for (const auto& [group, list] : *optional) {
                std::vector<SpecRequirement> reqs;
                strings_of(&list, path, reqs);
                for (auto& r : reqs)
                    info.extras.push_back({"extra", r.text,
                                           "optional-dependencies." + std::string(group.str()) +
                                               ", not installed by default",
                                           r.from});
            }
        }
    }
    strings_of(doc["build-system"]["requires"].node(), path, info.build_requires);
    return info;
}

PackageInfo read_setup_cfg(std::string_view text, const std::string& path) {
    PackageInfo info;
    std::istringstream in{std::string(text)};
    std::string raw;
    std::string section;
    std::string key;   // key whose value continues on indented lines
    int number = 0;
    auto take = [&](const std::string& k, const std::string& value, int line) {
        if (value.empty() || value[0] == '#' || value[0] == ';') return;
        if (section == "options" || section == "metadata") info.declares = true;
        if (section == "options" && k == "install_requires") {
            info.install_requires.push_back({value, "pypi", {path, line}});
        } else if (section == "options" && k == "setup_requires") {
            info.build_requires.push_back({value, "pypi", {path, line}});
        } else if (section == "options" && k == "python_requires") {
            info.python_requires = value;
            info.python_from = {path, line};
        } else if (section == "options.extras_require") {
            info.extras.push_back({"extra", value, "extras_require['" + k + "'], not installed by default", {path, line}});
        } else if (section == "metadata" && k == "name") {
            info.name = value;
        }
    };
    while (std::getline(in, raw)) {
        ++number;
        if (!raw.empty() && raw.back() == '\r') raw.pop_back();
        auto t = trim(raw);
        if (t.empty() || t[0] == '#' || t[0] == ';') continue;
        bool indented = raw[0] == ' ' || raw[0] == '\t';
        if (indented && !key.empty()) {
            take(key, t, number);
            continue;
        }
        if (t.front() == '[' && t.back() == ']') {
            section = trim(t.substr(1, t.size() - 2));
            key.clear();
            continue;
        }
        auto eq = t.find_first_of("=:");
        if (eq == std::string::npos) continue;
        key = trim(t.substr(0, eq));
        take(key, trim(t.substr(eq + 1)), number);
    }
    return info;
}

}  // namespace envlock::infer
